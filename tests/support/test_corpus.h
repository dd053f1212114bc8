// Tests that read the shared real-trace corpus (public Kineto, torch_npu and Nsight Systems traces and
// the peers' reference outputs, kept beside the checkout) skip with one line when it is absent, so that
// a clean clone without it still runs every other test. TUNEPROF_SHARED_DIR holds `traces/` (the corpus)
// and `reference/` (the peers' expected outputs).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

// Skips the current test unless TUNEPROF_SHARED_DIR/<part> exists (part: "traces" or "reference").
#define TUNEPROF_REQUIRE_SHARED(part)                                                                     \
  do {                                                                                                    \
    const std::filesystem::path tuneprof_shared_part = std::filesystem::path(TUNEPROF_SHARED_DIR) / part; \
    if (!std::filesystem::is_directory(tuneprof_shared_part)) {                                           \
      GTEST_SKIP() << "the shared real-trace corpus is missing (" << tuneprof_shared_part.string()        \
                   << "); set TUNEPROF_CORPUS, the README lists its public sources";                      \
    }                                                                                                     \
  } while (0)

#define TUNEPROF_REQUIRE_CORPUS() TUNEPROF_REQUIRE_SHARED("traces")
