# Precompiled standard headers. Most of a translation unit's front-end time here is spent parsing the
# same standard library headers again (about a third of an ASan build); one precompiled header per
# target parses them once. Only standard headers go in, so a file that forgets an include of our own
# still fails to compile. TUNEPROF_PCH=OFF builds without (to check that every file includes the
# standard headers it uses).
option(TUNEPROF_PCH "Precompile the common standard headers of every target" ON)

set(TUNEPROF_PCH_HEADERS
  <algorithm> <array> <cstddef> <cstdint> <functional> <limits> <map> <memory> <optional>
  <string> <string_view> <unordered_map> <utility> <vector>)

# tuneprof_precompile(target [TEST] [EXTRA header...]): TEST adds GoogleTest's header, the heaviest one
# every test includes; EXTRA adds the third-party headers every file of the target includes.
function(tuneprof_precompile target)
  cmake_parse_arguments(P "TEST" "" "EXTRA" ${ARGN})
  if(NOT TUNEPROF_PCH)
    return()
  endif()
  set(headers ${TUNEPROF_PCH_HEADERS})
  if(P_TEST)
    list(APPEND headers <gtest/gtest.h>)
  endif()
  list(APPEND headers ${P_EXTRA})
  target_precompile_headers(${target} PRIVATE ${headers})
endfunction()
