# ASan + UBSan for the sanitized test build (TUNEPROF_SANITIZE) and the fuzz targets (TUNEPROF_BUILD_FUZZERS).
set(TUNEPROF_SAN_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
if(TUNEPROF_SANITIZE OR TUNEPROF_BUILD_FUZZERS)
  add_compile_options(${TUNEPROF_SAN_FLAGS})
  add_link_options(${TUNEPROF_SAN_FLAGS})
endif()
if(TUNEPROF_SANITIZE AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  # Line tables are all a sanitizer report needs to name file and line; full debug information makes the
  # objects and links of this build several times larger and slower.
  add_compile_options(-gline-tables-only)
endif()
