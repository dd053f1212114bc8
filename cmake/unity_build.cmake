# Unity build for the sanitized build, and for the Makefile's release build (it passes -DTUNEPROF_UNITY=ON).
# Its compile steps were about half of a fresh clone's `make test` CPU; most of a translation unit's time
# is the front end on shared headers (ours, fmt, simdjson, GoogleTest), which a batch of files parses once.
# A plain configure of a release or developer build stays one file per translation unit (as the Makefile
# with UNITY=OFF), so that a file missing an include still fails there. Batches of 8 took the compile CPU
# (user + sys, one file per unit against batches, same machine) of the whole sanitized build, fuzz targets
# included, from 601 s to 362 s (-40 %). Batches of 16
# cut the test targets further (tp_io_tests: 9.1 s, 4.8 s at 8, 3.5 s at 16) but put more files together,
# whose file-local names must then differ too.
if(TUNEPROF_SANITIZE)
  set(unity_default ON)
else()
  set(unity_default OFF)
endif()
option(TUNEPROF_UNITY "Compile each target's sources in batches (unity build)" ${unity_default})
set(TUNEPROF_UNITY_BATCH_SIZE 8 CACHE STRING "Source files per unity batch")
if(TUNEPROF_UNITY)
  set(CMAKE_UNITY_BUILD ON)
  set(CMAKE_UNITY_BUILD_BATCH_SIZE ${TUNEPROF_UNITY_BATCH_SIZE})
endif()
