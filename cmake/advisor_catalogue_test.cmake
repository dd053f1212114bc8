# The catalogue generator (advisor_catalogue.cmake) on small catalogues: a valid row's strings come out as
# byte-exact C++ literals and its enum names as enumerators; each broken row stops it with a message that
# names the row and the fault; a row's documentation (`doc`, `doc_with`) is checked and leaves the C++ as it
# is. Run as `cmake -DSOURCE_DIR=<src> -DWORK_DIR=<dir> -P` (ctest does).
cmake_minimum_required(VERSION 3.25)
set(generator ${CMAKE_CURRENT_LIST_DIR}/advisor_catalogue.cmake)
file(MAKE_DIRECTORY ${WORK_DIR})

# Runs the generator on a catalogue of one rule whose one finding is `finding` (JSON members), with the
# rule's own members followed by a fifth argument's (`"doc": {...}, `) where one is given; sets `rc_out`,
# `message_out` and `text_out` (the generated C++).
function(run_catalogue_generator finding rc_out message_out text_out)
  set(json ${WORK_DIR}/catalogue.json)
  set(output ${WORK_DIR}/catalogue.cc)
  file(REMOVE ${output})
  set(rule_members "")
  if(ARGC GREATER 4)
    set(rule_members "${ARGV4}")
  endif()
  file(WRITE ${json} "{\"rules\": [{\"function\": \"RuleCase\", \"thresholds\": [\"a_pct\"], ${rule_members}\"findings\": [{${finding}}]}]}")
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

# Fails unless `finding` (and a third argument's rule members) stops the generator with a message matching
# `expected`.
function(expect_rejected finding expected)
  run_catalogue_generator("${finding}" rc message text ${ARGN})
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

# The documentation fields (docs/advisor.md's Rules table): checked for their shape, absent from the C++.
set(doc "\"doc\": {\"fires_when\": \"x above `a_pct`\", \"estimated_gain\": \"its time\", \"peer\": \"-\"}")
run_catalogue_generator("${row}, \"strategy\": \"s\", ${doc}" rc message documented)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "a documented finding failed: ${message}")
endif()
run_catalogue_generator("${row}, \"strategy\": \"s\"" rc message undocumented)
if(NOT documented STREQUAL undocumented)
  message(FATAL_ERROR "a finding's \"doc\" changed the generated C++:\n${documented}")
endif()
run_catalogue_generator("${row}, \"doc_with\": \"family.other\"" rc message text)
run_catalogue_generator("${row}" rc2 message2 text "${doc}, ")
if(NOT rc EQUAL 0 OR NOT rc2 EQUAL 0)
  message(FATAL_ERROR "\"doc_with\" or a rule's \"doc\" failed: ${message} ${message2}")
endif()
expect_rejected("${row}, \"doc\": \"x\"" "finding 0 \\(family.case\\): \"doc\" is STRING, not")
expect_rejected("${row}, \"doc\": {\"fires_when\": \"x\", \"estimated_gain\": \"y\"}"
                "doc: required field \"peer\" is missing")
expect_rejected("${row}, \"doc\": {\"fires\": \"x\"}" "doc: unknown field \"fires\"")
expect_rejected("${row}, \"doc\": {\"fires_when\": \"x\", \"estimated_gain\": \"y\", \"peer\": 1}"
                "field \"peer\" is NUMBER, not STRING")
expect_rejected("${row}, \"doc_with\": \"other\"" "\"doc_with\" \"other\" is not family.name")
expect_rejected("${row}, ${doc}, \"doc_with\": \"family.other\"" "both \"doc\" and \"doc_with\"")
expect_rejected("${row}, ${doc}" "rule 0 \\(RuleCase\\) finding 0 \\(family.case\\): documented twice" "${doc}, ")
expect_rejected("${row}" "rule 0 \\(RuleCase\\) doc: unknown field \"peers\""
                "\"doc\": {\"fires_when\": \"x\", \"estimated_gain\": \"y\", \"peers\": \"z\"}, ")
