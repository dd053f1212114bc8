#pragma once
// What the tests of the Ascend directory importer share: the corpus folder of msinsight's server samples,
// a rank directory imported (a failure is the test's), and a metadata entry by key.
#include <gtest/gtest.h>

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

}  // namespace tuneprof::ascend_import
