# Writes OUTPUT, the list of the advisor's rules: every TUNEPROF_ADVISOR_RULE(Function, ...) that starts a
# line of a RULES_DIR/*.cc file (tests aside) becomes one entry (the function's name may be on the next line,
# as clang-format breaks it). Run at build time (src/CMakeLists.txt), so that a rule file added, edited or
# removed changes the list; OUTPUT is rewritten only when its text changes, so that nothing recompiles
# otherwise.
file(GLOB sources ${RULES_DIR}/*.cc)
list(FILTER sources EXCLUDE REGEX "_test\\.cc$")
list(SORT sources)
set(declarations "")
set(entries "")
foreach(source ${sources})
  file(READ ${source} text)
  string(REGEX MATCHALL "\nTUNEPROF_ADVISOR_RULE\\([ \t\r\n]*[A-Za-z0-9_]+" registrations "${text}")
  foreach(registration ${registrations})
    string(REGEX REPLACE ".*[( \t\r\n]([A-Za-z0-9_]+)$" "\\1" function "${registration}")
    string(APPEND declarations "extern const RuleRegistration kRuleRegistration${function};\n")
    string(APPEND entries "      &kRuleRegistration${function},\n")
  endforeach()
endforeach()
set(text "// Generated at build time by cmake/advisor_rules.cmake from the TUNEPROF_ADVISOR_RULE lines of
// src/analysis/advisor/rules/*.cc: every rule the advisor runs (rules.cc puts them in their run order).
#include \"analysis/advisor/rules/rules.h\"

namespace tuneprof {

${declarations}
std::span<const RuleRegistration* const> RegisteredRules() {
  static constexpr const RuleRegistration* kRules[] = {
${entries}  };
  return kRules;
}

}  // namespace tuneprof
")
set(old "")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUTPUT} "${text}")
endif()
