# Precompiled standard headers. Most of a clang translation unit's front-end time here is spent parsing
# the same standard library headers again (about a third of the sanitized build); one precompiled header
# per target parses them once (25-55 % less CPU per file). With GCC at -O3 the gain per file (about 10 %)
# is eaten by building one header per target, so it is on for clang only. Only standard headers (and a
# target's ubiquitous third-party ones) go in, so a file that forgets an include of our own still fails
# to compile; the GCC build checks that every file includes the standard headers it uses.
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  set(pch_default ON)
else()
  set(pch_default OFF)
endif()
option(TUNEPROF_PCH "Precompile the common standard headers of every target" ${pch_default})

set(TUNEPROF_PCH_HEADERS
  <algorithm> <array> <cstddef> <cstdint> <functional> <limits> <map> <memory> <optional>
  <string> <string_view> <unordered_map> <utility> <vector>)

# One header per kind (libraries; tests, which add GoogleTest's header, the heaviest one every test
# includes), built once and reused by every target of that kind: what a precompiled header depends on
# (language, sanitizers, PIC, optimization) is set for the whole build, and a target's own definitions
# only add macros, which clang accepts. One header per target was about 40 builds of 2 to 3 s in the
# sanitized build. A kind whose targets compile with an option that changes the header (OPTIONS, e.g. the
# fuzzed libraries' coverage instrumentation) gets an anchor of its own.
function(tuneprof_pch_anchor kind)
  cmake_parse_arguments(A "" "" "OPTIONS" ${ARGN})
  set(anchor tp_pch_${kind})
  if(TARGET ${anchor})
    return()
  endif()
  add_library(${anchor} OBJECT ${PROJECT_SOURCE_DIR}/cmake/pch_anchor.cc)
  target_compile_options(${anchor} PRIVATE ${A_OPTIONS})
  set(headers ${TUNEPROF_PCH_HEADERS})
  if(kind STREQUAL "test")
    list(APPEND headers <gtest/gtest.h>)
    target_link_libraries(${anchor} PRIVATE GTest::gtest)
  endif()
  target_precompile_headers(${anchor} PRIVATE ${headers})
endfunction()

# tuneprof_precompile(target [TEST]): the standard headers, and with TEST GoogleTest's.
function(tuneprof_precompile target)
  cmake_parse_arguments(P "TEST" "" "" ${ARGN})
  if(NOT TUNEPROF_PCH)
    return()
  endif()
  set(kind lib)
  if(P_TEST)
    set(kind test)
  endif()
  tuneprof_pch_anchor(${kind})
  target_precompile_headers(${target} REUSE_FROM tp_pch_${kind})
endfunction()
