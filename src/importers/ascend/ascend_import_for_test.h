#pragma once
// What the tests of the Ascend directory importer share: the corpus folder of msinsight's server samples,
// a rank directory imported (a failure is the test's), a metadata entry by key and the inventory's entries.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "importers/ascend/ascend_directory.h"
#include "model/trace.h"
#include "test_corpus.h"

namespace tuneprof::ascend_import {

inline const std::string kServerData =
    std::string(TUNEPROF_SHARED_DIR) + "/traces/ascend/msinsight/server/src/test/test_data/";

// The rank directory `dir` imported; an empty trace, and a failure of the calling test, when it does not.
inline Trace MustImport(const std::string& dir) {
  auto trace = ImportAscendDirectory(dir);
  EXPECT_TRUE(trace.ok()) << trace.status().message();
  if (!trace.ok()) return Trace();
  return std::move(trace).value();
}

// The metadata entry `key`; "<absent>" when the trace has none.
inline std::string Entry(const Trace& trace, std::string_view key) {
  for (const MetadataEntry& e : trace.metadata().entries) {
    if (e.key == key) return e.value;
  }
  return "<absent>";
}

// Expects the import's inventory to say of each file (a path below the rank directory, a table as
// "file:TABLE") what `said` gives for it.
inline void ExpectInventory(const Trace& trace,
                            std::initializer_list<std::pair<std::string_view, std::string_view>> said) {
  for (const auto& [file, what] : said) EXPECT_EQ(Entry(trace, "inventory." + std::string(file)), what) << file;
}

}  // namespace tuneprof::ascend_import
