# Link with lld where it is installed (Debian's lld, scripts/install-deps): the sanitized build links
# two dozen test and fuzz executables of 100+ MB each, which took GNU ld over two minutes of the test
# run's fifteen. Other linkers are left as they are.
include(CheckLinkerFlag)
check_linker_flag(CXX "-fuse-ld=lld" TUNEPROF_LINKER_LLD)
if(TUNEPROF_LINKER_LLD)
  add_link_options(-fuse-ld=lld)
endif()
