# One static library per layer (src/README.md): cli -> pipeline and report -> analysis -> model <- importers,
# all on base/io; inside analysis and report, one layer per folder.
#
# Each layer's headers are reachable only through an include root that holds a link to that layer's
# folder alone, and the root is a PUBLIC include directory of the layer's target. A layer can therefore
# include only the headers of the layers it links: a wrong-way include (model including analysis, say)
# fails to compile instead of slipping in.
#
#   tuneprof_layer(name [DIR sub/dir] [DEPS layers...] [LIBS libraries...] [TEST_DEPS layers...])
#
# builds src/<DIR> (default: src/<name>, subfolders included) into tp_<name>, and its *_test.cc files
# into tp_<name>_tests. TEST_DEPS are layers only those tests may use: a test that checks two outputs
# side by side, without the layer's own code depending on the other.
function(tuneprof_layer name)
  cmake_parse_arguments(L "" "DIR" "DEPS;LIBS;TEST_DEPS" ${ARGN})
  if(NOT L_DIR)
    set(L_DIR ${name})
  endif()
  set(dir ${PROJECT_SOURCE_DIR}/src/${L_DIR})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${dir}/*.cc)
  list(FILTER sources EXCLUDE REGEX "_(test|fuzzer|benchmark)\\.cc$")
  file(GLOB_RECURSE tests CONFIGURE_DEPENDS ${dir}/*_test.cc)

  add_library(tp_${name} STATIC ${sources})
  set(root ${CMAKE_BINARY_DIR}/include_roots/${name})
  file(MAKE_DIRECTORY ${root})
  cmake_path(GET L_DIR PARENT_PATH parent)
  if(parent)
    file(MAKE_DIRECTORY ${root}/${parent})
  endif()
  file(CREATE_LINK ${dir} ${root}/${L_DIR} SYMBOLIC)
  target_include_directories(tp_${name} PUBLIC ${root})
  target_link_libraries(tp_${name} PUBLIC ${L_DEPS} PRIVATE ${L_LIBS})
  target_compile_options(tp_${name} PRIVATE ${TUNEPROF_WARNINGS})
  tuneprof_precompile(tp_${name})

  if(TUNEPROF_BUILD_TESTS AND tests)
    add_executable(tp_${name}_tests ${tests})
    target_link_libraries(tp_${name}_tests PRIVATE tp_${name} ${L_TEST_DEPS} ${L_LIBS} GTest::gtest GTest::gtest_main)
    target_include_directories(tp_${name}_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
    tuneprof_precompile(tp_${name}_tests TEST)
    target_compile_definitions(tp_${name}_tests PRIVATE
      TUNEPROF_SHARED_DIR="${TUNEPROF_SHARED_VIEW}"
      TUNEPROF_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
    gtest_discover_tests(tp_${name}_tests PROPERTIES LABELS unit DISCOVERY_TIMEOUT 60)
  endif()
endfunction()
