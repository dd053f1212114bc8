# Compiles a text file into a target as `extern const char <symbol>[]` in namespace tuneprof, so that
# data shipped with tuneprof (data/hardware_profiles.json) needs no path at run time. The file is read
# at configure time; editing it re-runs the configure step.
function(tuneprof_embed_text target file symbol)
  file(READ ${file} content)
  set(delimiter "tp_embed")
  string(FIND "${content}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${file} contains the raw-string delimiter )${delimiter}\"")
  endif()
  get_filename_component(name ${file} NAME_WE)
  set(generated ${CMAKE_BINARY_DIR}/generated/embedded_${name}.cc)
  file(CONFIGURE OUTPUT ${generated} CONTENT
    "// Generated from ${file} by cmake/embed_text.cmake; do not edit.\nnamespace tuneprof {\nextern const char ${symbol}[];\nconst char ${symbol}[] = R\"${delimiter}(@content@)${delimiter}\";\n}  // namespace tuneprof\n"
    @ONLY)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
  target_sources(${target} PRIVATE ${generated})
endfunction()
