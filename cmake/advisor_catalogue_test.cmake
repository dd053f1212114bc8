# The catalogue generator (advisor_catalogue.cmake) on small catalogues: a valid row's strings come out as
# byte-exact C++ literals and its enum names as enumerators; each broken row stops it with a message that
# names the row and the fault. Run as `cmake -DSOURCE_DIR=<src> -DWORK_DIR=<dir> -P` (ctest does).
cmake_minimum_required(VERSION 3.25)
set(generator ${CMAKE_CURRENT_LIST_DIR}/advisor_catalogue.cmake)
file(MAKE_DIRECTORY ${WORK_DIR})

# Runs the generator on a catalogue of one rule whose one finding is `finding` (JSON members); sets
# `rc_out`, `message_out` and `text_out` (the generated C++).
function(run_catalogue_generator finding rc_out message_out text_out)
  set(json ${WORK_DIR}/catalogue.json)
  set(output ${WORK_DIR}/catalogue.cc)
  file(REMOVE ${output})
  file(WRITE ${json} "{\"rules\": [{\"function\": \"RuleCase\", \"thresholds\": [\"a_pct\"], \"findings\": [{${finding}}]}]}")
  execute_process(COMMAND ${CMAKE_COMMAND} -DCATALOGUE=${json} -DOUTPUT=${output} -DSOURCE_DIR=${SOURCE_DIR}
                          -P ${generator}
                  RESULT_VARIABLE rc ERROR_VARIABLE message OUTPUT_QUIET)
  set(text "")
  if(EXISTS ${output})
    file(READ ${output} text)
  endif()
  set(${rc_out} "${rc}" PARENT_SCOPE)
  set(${message_out} "${message}" PARENT_SCOPE)
  set(${text_out} "${text}" PARENT_SCOPE)
endfunction()

# Fails unless `finding` stops the generator with a message matching `expected`.
function(expect_rejected finding expected)
  run_catalogue_generator("${finding}" rc message text)
  string(REGEX REPLACE "[ \n]+" " " message "${message}")  # as CMake wraps it
  if(rc EQUAL 0 OR NOT message MATCHES "${expected}")
    message(FATAL_ERROR "expected a failure matching '${expected}' for {${finding}}, got ${rc}: ${message}")
  endif()
endfunction()

# Fails unless the generated `text` holds `expected` verbatim.
function(expect_generated text expected)
  string(FIND "${text}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "expected the generated C++ to hold ${expected}:\n${text}")
  endif()
endfunction()

set(row "\"id\": \"family.case\", \"category\": \"communication\", \"saves_from\": \"host_wait\"")
run_catalogue_generator(
  "${row}, \"gain\": \"partly_unknown\", \"strategy\": \"say \\\"x\\\"; a\\\\b\\nnext\", \"apis\": \"one; two\""
  rc message text)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "a valid catalogue failed: ${message}")
endif()
expect_generated("${text}" ".category = FindingCategory::kCommunication,")
expect_generated("${text}" ".saves_from = TimePart::kHostWait,")
expect_generated("${text}" ".gain = GainKind::kPartlyUnknown,")
expect_generated("${text}" ".strategy = \"say \\\"x\\\"; a\\\\b\\nnext\",")
expect_generated("${text}" ".apis = {.any = true, .cuda = \"one; two\", .npu = \"one; two\", .cpu = \"one; two\"}")
expect_generated("${text}" ".ids = \"family.case\",\n     .thresholds = \"a_pct\",")

expect_rejected("\"id\": \"family.case\", \"category\": \"computer\", \"saves_from\": \"idle\""
                "rule 0 \\(RuleCase\\) finding 0 \\(family.case\\): \"category\": unknown FindingCategory \"computer\"")
expect_rejected("\"id\": \"family.case\", \"category\": \"compute\""
                "required field \"saves_from\" is missing")
expect_rejected("${row}, \"stratgy\": \"x\"" "unknown field \"stratgy\"")
expect_rejected("${row}, \"gain\": \"guessed\"" "unknown GainKind \"guessed\"")
expect_rejected("${row}, \"unit\": 3" "field \"unit\" is NUMBER, not STRING")
expect_rejected("${row}, \"apis\": {\"cuda\": \"x\", \"npu\": \"y\"}" "required field \"cpu\" is missing")
