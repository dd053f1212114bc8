#pragma once
// For tests that hold a rule table and its documentation to each other: the rows a docs page gives
// under one heading, exactly as written.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace tuneprof {

// The text of docs/NAME in the source tree (empty when it cannot be read).
inline std::string ReadSourceDoc(std::string_view name) {
  std::ifstream in(std::string(TUNEPROF_SOURCE_DIR) + "/docs/" + std::string(name));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The table rows ("| `...") of the section `heading` ("## Kernel classes"), up to the next line that
// starts with `next` ("## ": the next heading of that level or above).
inline std::set<std::string> DocumentedTableRows(const std::string& doc, std::string_view heading,
                                                 std::string_view next = "## ") {
  std::set<std::string> rows;
  const size_t start = doc.find("\n" + std::string(heading) + "\n");
  if (start == std::string::npos) return rows;
  const size_t end = doc.find("\n" + std::string(next), start + 1);
  std::istringstream section(doc.substr(start, end == std::string::npos ? std::string::npos : end - start));
  for (std::string line; std::getline(section, line);) {
    if (line.starts_with("| `")) rows.insert(line);
  }
  return rows;
}

// Expects the section `heading` of docs/`doc` (as DocumentedTableRows reads it) to hold exactly `rows`,
// the rows a table's entries should have there: each row one side lacks fails the calling test.
inline void ExpectDocumentedRows(std::string_view doc, std::string_view heading, const std::vector<std::string>& rows,
                                 std::string_view next = "## ") {
  const std::set<std::string> documented = DocumentedTableRows(ReadSourceDoc(doc), heading, next);
  ASSERT_FALSE(documented.empty()) << "docs/" << doc << " has no \"" << heading << "\" table";
  const std::set<std::string> table(rows.begin(), rows.end());
  for (const std::string& row : rows) {
    EXPECT_TRUE(documented.contains(row)) << "docs/" << doc << " lacks the row " << row;
  }
  for (const std::string& row : documented) EXPECT_TRUE(table.contains(row)) << "no table row for " << row;
}

}  // namespace tuneprof
