# The advisor's rule catalogue (src/analysis/advisor/rules/catalogue.json) as C++: one row per rule in run
# order (its function, the thresholds it reads, whether it reads the other ranks) and one spec row per
# finding id it emits. The JSON is read at configure time (editing it re-runs the configure step) and
# becomes constinit tables in a generated source, so nothing is parsed at run time.
#
#   tuneprof_advisor_catalogue(target catalogue.json)
#
# Enum fields are written by name: an enumerator without its leading k, in snake case (kComputeBound is
# "compute_bound"); the names are read from the enums' own declarations, so a new enumerator needs no
# change here. A row with an unknown name, an unknown or missing field, or a wrong type fails the configure
# step with a message naming the row, and so does a rule file defining a Rule<Name> without a row (it
# would never run). The rows' documentation, a `doc` object (a finding's, or a rule's for all its findings)
# and a finding's `doc_with`, is checked here for its shape only and stays out of the C++:
# scripts/advisor_rules_table.py writes docs/advisor.md's Rules table from it. Run alone, `cmake -DCATALOGUE=... -DOUTPUT=... -DSOURCE_DIR=<src> -P
# cmake/advisor_catalogue.cmake` writes OUTPUT from CATALOGUE the same way, without the rule files' check
# (advisor_catalogue_test.cmake runs it so).

if(CMAKE_SCRIPT_MODE_FILE)
  cmake_minimum_required(VERSION 3.25)  # the project's policies, for the functions below
endif()

# A finding id, "family.name", as a finding row and a `doc_with` write it.
set(TUNEPROF_CATALOGUE_ID_PATTERN "^[a-z_]+\\.[a-z0-9_]+$")

# Sets `out` to the snake-case names of `enum`'s enumerators in `header` (kCount, a size, left out).
function(tuneprof_catalogue_enum_names header enum out)
  file(READ ${header} text)
  string(REGEX MATCH "enum class ${enum}[^{]*{[^}]*}" body "${text}")
  if(NOT body)
    message(FATAL_ERROR "advisor catalogue: no `enum class ${enum}` in ${header}")
  endif()
  string(REGEX REPLACE "//[^\n]*" "" body "${body}")
  string(REGEX REPLACE "^[^{]*{" "" body "${body}")
  string(REGEX MATCHALL "k[A-Za-z0-9]+" enumerators "${body}")
  set(names "")
  foreach(enumerator IN LISTS enumerators)
    if(enumerator STREQUAL "kCount")
      continue()
    endif()
    string(REGEX REPLACE "([A-Z])" "_\\1" name "${enumerator}")
    string(TOLOWER "${name}" name)
    string(REGEX REPLACE "^k_" "" name "${name}")
    list(APPEND names "${name}")
  endforeach()
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

# Sets `out` to `value` as a C++ string literal, byte for byte.
function(tuneprof_catalogue_literal value out)
  string(REPLACE "\\" "\\\\" value "${value}")
  string(REPLACE "\"" "\\\"" value "${value}")
  string(REPLACE "\n" "\\n" value "${value}")
  string(REPLACE "\r" "\\r" value "${value}")
  string(REPLACE "\t" "\\t" value "${value}")
  set(${out} "\"${value}\"" PARENT_SCOPE)
endfunction()

# Stops the configure step with `message` about the row `where`.
function(tuneprof_catalogue_fail where message)
  message(FATAL_ERROR "advisor catalogue ${TUNEPROF_CATALOGUE_FILE}, ${where}: ${message}")
endfunction()

# Fails unless every key of the JSON object `json` is one of the `allowed` words.
function(tuneprof_catalogue_check_keys json where allowed)
  string(JSON count LENGTH "${json}")
  if(count EQUAL 0)
    return()
  endif()
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    string(JSON key MEMBER "${json}" ${i})
    if(NOT key IN_LIST allowed)
      string(REPLACE ";" ", " allowed_words "${allowed}")
      tuneprof_catalogue_fail("${where}" "unknown field \"${key}\" (fields: ${allowed_words})")
    endif()
  endforeach()
endfunction()

# Sets `out` to the field `key` of the JSON object `json` when it is of JSON type `type`, else to
# `default` when the field is absent and `default` is given; fails otherwise (a missing required field, or a
# field of another type).
function(tuneprof_catalogue_field json where key type out)
  string(JSON actual ERROR_VARIABLE missing TYPE "${json}" ${key})
  if(missing)
    if(ARGC LESS 6)
      tuneprof_catalogue_fail("${where}" "required field \"${key}\" is missing")
    endif()
    set(${out} "${ARGV5}" PARENT_SCOPE)
    return()
  endif()
  if(NOT actual STREQUAL type)
    tuneprof_catalogue_fail("${where}" "field \"${key}\" is ${actual}, not ${type}")
  endif()
  string(JSON value GET "${json}" ${key})
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

# Sets `out` to `Enum::kName` for the name the field `key` holds (`default` when it is absent).
function(tuneprof_catalogue_enum json where key enum default out)
  tuneprof_catalogue_field("${json}" "${where}" ${key} STRING name ${default})
  if(NOT name IN_LIST TUNEPROF_CATALOGUE_NAMES_${enum})
    string(REPLACE ";" ", " names "${TUNEPROF_CATALOGUE_NAMES_${enum}}")
    tuneprof_catalogue_fail("${where}" "\"${key}\": unknown ${enum} \"${name}\" (one of: ${names})")
  endif()
  string(REPLACE "_" ";" parts "${name}")
  set(enumerator "k")
  foreach(part IN LISTS parts)
    string(SUBSTRING "${part}" 0 1 head)
    string(SUBSTRING "${part}" 1 -1 tail)
    string(TOUPPER "${head}" head)
    string(APPEND enumerator "${head}${tail}")
  endforeach()
  set(${out} "${enum}::${enumerator}" PARENT_SCOPE)
endfunction()

# Sets `out` to the object the field `key` holds, failing with `shape` (what it should be) when it is not
# an object, or when it has a field other than `keys`.
function(tuneprof_catalogue_object json where key keys shape out)
  string(JSON type TYPE "${json}" ${key})
  if(NOT type STREQUAL "OBJECT")
    tuneprof_catalogue_fail("${where}" "\"${key}\" is ${type}${shape}")
  endif()
  string(JSON object GET "${json}" ${key})
  tuneprof_catalogue_check_keys("${object}" "${where} ${key}" "${keys}")
  set(${out} "${object}" PARENT_SCOPE)
endfunction()

# Sets `out` to the PlatformApis initializer of a finding's "apis": absent (the rule names them), one
# string for every platform, or an object with the three platforms'.
function(tuneprof_catalogue_apis json where out)
  string(JSON type ERROR_VARIABLE missing TYPE "${json}" apis)
  if(missing)
    set(${out} "{}" PARENT_SCOPE)
    return()
  endif()
  if(type STREQUAL "STRING")
    string(JSON all GET "${json}" apis)
    tuneprof_catalogue_literal("${all}" all)
    set(${out} "{.any = true, .cuda = ${all}, .npu = ${all}, .cpu = ${all}}" PARENT_SCOPE)
    return()
  endif()
  tuneprof_catalogue_object("${json}" "${where}" apis "cuda;npu;cpu"
    ": a string (every platform) or {cuda, npu, cpu}" apis)
  set(initializer "{.any = true")
  foreach(platform cuda npu cpu)
    tuneprof_catalogue_field("${apis}" "${where} apis" ${platform} STRING text)
    tuneprof_catalogue_literal("${text}" text)
    string(APPEND initializer ", .${platform} = ${text}")
  endforeach()
  set(${out} "${initializer}}" PARENT_SCOPE)
endfunction()

# Sets `out` to whether the JSON object `json` has the field `key`.
function(tuneprof_catalogue_has json key out)
  string(JSON type ERROR_VARIABLE missing TYPE "${json}" ${key})
  if(missing)
    set(${out} OFF PARENT_SCOPE)
  else()
    set(${out} ON PARENT_SCOPE)
  endif()
endfunction()

# Checks the "doc" of a finding or rule row when it has one: its row of docs/advisor.md's Rules table, the
# columns fires_when, estimated_gain and peer, each a string. Only scripts/advisor_rules_table.py reads it;
# nothing of it goes into the C++.
function(tuneprof_catalogue_doc json where)
  string(JSON type ERROR_VARIABLE missing TYPE "${json}" doc)
  if(missing)
    return()
  endif()
  tuneprof_catalogue_object("${json}" "${where}" doc "fires_when;estimated_gain;peer"
    ", not {fires_when, estimated_gain, peer}" doc)
  foreach(key fires_when estimated_gain peer)
    tuneprof_catalogue_field("${doc}" "${where} doc" ${key} STRING text)
  endforeach()
endfunction()

# Checks how a finding is documented: its own "doc", or "doc_with" the id whose row it joins, not both.
function(tuneprof_catalogue_finding_doc json where)
  tuneprof_catalogue_doc("${json}" "${where}")
  tuneprof_catalogue_has("${json}" doc_with has_doc_with)
  if(NOT has_doc_with)
    return()
  endif()
  tuneprof_catalogue_field("${json}" "${where}" doc_with STRING doc_with)
  if(NOT doc_with MATCHES "${TUNEPROF_CATALOGUE_ID_PATTERN}")
    tuneprof_catalogue_fail("${where}" "\"doc_with\" \"${doc_with}\" is not family.name")
  endif()
  tuneprof_catalogue_has("${json}" doc has_doc)
  if(has_doc)
    tuneprof_catalogue_fail("${where}" "both \"doc\" and \"doc_with\": one row documents it")
  endif()
endfunction()

# Sets `out` to one FindingSpec initializer and `id_out` to its id.
function(tuneprof_catalogue_finding json where out id_out)
  tuneprof_catalogue_check_keys("${json}" "${where}"
    "id;category;saves_from;metric;unit;threshold;gain;gain_model;strategy;apis;doc;doc_with")
  tuneprof_catalogue_field("${json}" "${where}" id STRING id)
  if(NOT id MATCHES "${TUNEPROF_CATALOGUE_ID_PATTERN}")
    tuneprof_catalogue_fail("${where}" "id \"${id}\" is not family.name")
  endif()
  set(where "${where} (${id})")
  tuneprof_catalogue_finding_doc("${json}" "${where}")
  tuneprof_catalogue_enum("${json}" "${where}" category FindingCategory "" category)
  tuneprof_catalogue_enum("${json}" "${where}" saves_from TimePart "" saves_from)
  tuneprof_catalogue_enum("${json}" "${where}" gain GainKind estimated gain)
  set(spec "    {.id = \"${id}\",\n     .category = ${category},\n     .saves_from = ${saves_from},\n")
  foreach(key metric unit threshold)
    tuneprof_catalogue_field("${json}" "${where}" ${key} STRING text "")
    tuneprof_catalogue_literal("${text}" text)
    string(APPEND spec "     .${key} = ${text},\n")
  endforeach()
  string(APPEND spec "     .gain = ${gain},\n")
  foreach(key gain_model strategy)
    tuneprof_catalogue_field("${json}" "${where}" ${key} STRING text "")
    tuneprof_catalogue_literal("${text}" text)
    string(APPEND spec "     .${key} = ${text},\n")
  endforeach()
  tuneprof_catalogue_apis("${json}" "${where}" apis)
  string(APPEND spec "     .apis = ${apis}},\n")
  set(${out} "${spec}" PARENT_SCOPE)
  set(${id_out} "${id}" PARENT_SCOPE)
endfunction()

# Sets `out` to the words of the JSON array of strings `key` (absent: none), space-separated.
function(tuneprof_catalogue_words json where key out)
  tuneprof_catalogue_field("${json}" "${where}" ${key} ARRAY array "[]")
  string(JSON count LENGTH "${array}")
  set(words "")
  if(count GREATER 0)
    math(EXPR last "${count} - 1")
    foreach(i RANGE ${last})
      string(JSON type TYPE "${array}" ${i})
      string(JSON word GET "${array}" ${i})
      if(NOT type STREQUAL "STRING" OR NOT word MATCHES "^[a-z0-9_]+$")
        tuneprof_catalogue_fail("${where}" "\"${key}\" holds \"${word}\", not a threshold key")
      endif()
      string(APPEND words " ${word}")
    endforeach()
  endif()
  string(STRIP "${words}" words)
  set(${out} "${words}" PARENT_SCOPE)
endfunction()

# Appends to the parent's `declarations`, `rules` and `findings` the C++ of one rule row.
function(tuneprof_catalogue_rule json where)
  tuneprof_catalogue_check_keys("${json}" "${where}" "function;thresholds;reads_other_ranks;doc;findings")
  tuneprof_catalogue_field("${json}" "${where}" function STRING function)
  if(NOT function MATCHES "^Rule[A-Za-z0-9]+$")
    tuneprof_catalogue_fail("${where}" "function \"${function}\" is not Rule<Name>")
  endif()
  set(where "${where} (${function})")
  tuneprof_catalogue_doc("${json}" "${where}")
  tuneprof_catalogue_has("${json}" doc rule_doc)
  tuneprof_catalogue_words("${json}" "${where}" thresholds thresholds)
  tuneprof_catalogue_field("${json}" "${where}" reads_other_ranks BOOLEAN reads_other_ranks OFF)
  if(reads_other_ranks)
    set(reads_other_ranks true)
  else()
    set(reads_other_ranks false)
  endif()
  tuneprof_catalogue_field("${json}" "${where}" findings ARRAY findings_json)
  string(JSON count LENGTH "${findings_json}")
  if(count EQUAL 0)
    tuneprof_catalogue_fail("${where}" "no findings")
  endif()
  math(EXPR last "${count} - 1")
  set(ids "")
  foreach(i RANGE ${last})
    string(JSON finding GET "${findings_json}" ${i})
    tuneprof_catalogue_finding("${finding}" "${where} finding ${i}" spec id)
    tuneprof_catalogue_has("${finding}" doc finding_doc)
    tuneprof_catalogue_has("${finding}" doc_with finding_doc_with)
    if(rule_doc AND (finding_doc OR finding_doc_with))
      tuneprof_catalogue_fail("${where} finding ${i} (${id})" "documented twice: its rule's \"doc\" holds its row")
    endif()
    string(APPEND findings "${spec}")
    string(APPEND ids " ${id}")
  endforeach()
  string(STRIP "${ids}" ids)
  string(APPEND declarations "void ${function}(const RankEvidence&, const AdvisorConfig&, std::vector<Finding>*);\n")
  string(APPEND rules "    {.run = ${function},\n     .ids = \"${ids}\",\n     .thresholds = \"${thresholds}\",\n"
                      "     .reads_other_ranks = ${reads_other_ranks}},\n")
  set(declarations "${declarations}" PARENT_SCOPE)
  set(rules "${rules}" PARENT_SCOPE)
  set(findings "${findings}" PARENT_SCOPE)
endfunction()

# Fails when a rule file in `rules_dir` defines a rule function that `functions` (the catalogue's) lacks:
# a rule without its row would never run.
function(tuneprof_catalogue_check_rule_files rules_dir functions)
  file(GLOB sources ${rules_dir}/*.cc)
  list(FILTER sources EXCLUDE REGEX "_test\\.cc$")
  foreach(source IN LISTS sources)
    file(STRINGS ${source} definitions REGEX "^void Rule[A-Za-z0-9]+\\(const RankEvidence&")
    foreach(definition IN LISTS definitions)
      string(REGEX MATCH "Rule[A-Za-z0-9]+" function "${definition}")
      if(NOT function IN_LIST functions)
        tuneprof_catalogue_fail("the rules" "${source} defines ${function}, which has no row: it would never run")
      endif()
    endforeach()
  endforeach()
endfunction()

# Writes the generated source to `output` from the C++ pieces of the rows (`functions`: the rules' names,
# a list), rewriting it only when its text changes, so that nothing recompiles otherwise.
function(tuneprof_catalogue_write output declarations findings rules functions)
  string(REPLACE ";" ", " functions "${functions}")
  set(text "// Generated at configure time by cmake/advisor_catalogue.cmake from
// src/analysis/advisor/rules/catalogue.json; do not edit.
#include <span>
#include <vector>

#include \"analysis/advisor/rules/finding_specs.h\"
#include \"analysis/advisor/rules/rules.h\"

namespace tuneprof {

${declarations}
namespace {

constinit const FindingSpec kCatalogueFindingRows[] = {
${findings}};

constinit const RuleSpec kCatalogueRuleRows[] = {
${rules}};

constinit const RuleFunction kCatalogueRuleFunctions[] = {${functions}};

}  // namespace

std::span<const RuleSpec> RuleCatalogue() { return kCatalogueRuleRows; }

std::span<const FindingSpec> FindingSpecs() { return kCatalogueFindingRows; }

std::span<const RuleFunction> AllRules() { return kCatalogueRuleFunctions; }

}  // namespace tuneprof
")
  set(old "")
  if(EXISTS ${output})
    file(READ ${output} old)
  endif()
  if(NOT old STREQUAL text)
    file(WRITE ${output} "${text}")
  endif()
endfunction()

# Writes `output`, the C++ of `catalogue`; with a fourth argument, a rules folder, first checks that its rule files define no rule the
# catalogue lacks.
function(tuneprof_generate_advisor_catalogue catalogue output source_dir)
  set(TUNEPROF_CATALOGUE_FILE ${catalogue})
  tuneprof_catalogue_enum_names(${source_dir}/analysis/advisor/finding.h FindingCategory
                                TUNEPROF_CATALOGUE_NAMES_FindingCategory)
  tuneprof_catalogue_enum_names(${source_dir}/analysis/advisor/finding.h TimePart TUNEPROF_CATALOGUE_NAMES_TimePart)
  tuneprof_catalogue_enum_names(${source_dir}/analysis/advisor/rules/finding_specs.h GainKind
                                TUNEPROF_CATALOGUE_NAMES_GainKind)
  file(READ ${catalogue} json)
  string(JSON type ERROR_VARIABLE invalid TYPE "${json}")
  if(invalid)
    tuneprof_catalogue_fail("the file" "not JSON: ${invalid}")
  endif()
  tuneprof_catalogue_check_keys("${json}" "the file" "about;rules")
  tuneprof_catalogue_field("${json}" "the file" rules ARRAY rules_json)
  string(JSON count LENGTH "${rules_json}")
  if(count EQUAL 0)
    tuneprof_catalogue_fail("the file" "no rules")
  endif()
  set(declarations "")
  set(rules "")
  set(findings "")
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    string(JSON rule GET "${rules_json}" ${i})
    tuneprof_catalogue_rule("${rule}" "rule ${i}")
  endforeach()
  string(REGEX MATCHALL "\\.run = [A-Za-z0-9]+" functions "${rules}")
  string(REPLACE ".run = " "" functions "${functions}")
  if(ARGC GREATER 3)
    tuneprof_catalogue_check_rule_files(${ARGV3} "${functions}")
  endif()
  tuneprof_catalogue_write(${output} "${declarations}" "${findings}" "${rules}" "${functions}")
endfunction()

# Generates the catalogue of `json` into `target`'s sources.
function(tuneprof_advisor_catalogue target json)
  set(output ${CMAKE_BINARY_DIR}/generated/advisor_catalogue.cc)
  tuneprof_generate_advisor_catalogue(${json} ${output} ${PROJECT_SOURCE_DIR}/src
                                      ${PROJECT_SOURCE_DIR}/src/analysis/advisor/rules)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${json}
               ${PROJECT_SOURCE_DIR}/src/analysis/advisor/finding.h
               ${PROJECT_SOURCE_DIR}/src/analysis/advisor/rules/finding_specs.h)
  target_sources(${target} PRIVATE ${output})
endfunction()

if(CMAKE_SCRIPT_MODE_FILE AND CATALOGUE)
  tuneprof_generate_advisor_catalogue(${CATALOGUE} ${OUTPUT} ${SOURCE_DIR})
endif()
