#pragma once
// For tests that hold a rule table and its documentation to each other: the rows a docs page gives
// under one heading, exactly as written.
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

namespace tuneprof {

// The text of docs/NAME in the source tree (empty when it cannot be read).
inline std::string ReadSourceDoc(std::string_view name) {
  std::ifstream in(std::string(TUNEPROF_SOURCE_DIR) + "/docs/" + std::string(name));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The table rows ("| `...") of the section `heading` ("## Kernel classes"), up to the next "## " heading.
inline std::set<std::string> DocumentedTableRows(const std::string& doc, std::string_view heading) {
  std::set<std::string> rows;
  const size_t start = doc.find("\n" + std::string(heading) + "\n");
  if (start == std::string::npos) return rows;
  const size_t end = doc.find("\n## ", start + 1);
  std::istringstream section(doc.substr(start, end == std::string::npos ? std::string::npos : end - start));
  for (std::string line; std::getline(section, line);) {
    if (line.starts_with("| `")) rows.insert(line);
  }
  return rows;
}

}  // namespace tuneprof
