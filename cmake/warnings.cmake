# Warnings for our own targets only (third-party headers come in as SYSTEM).
set(TUNEPROF_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wimplicit-fallthrough)
