// host.gc_pause on hand-built Kineto steps (a long stretch with nothing running, between work).
#include <gtest/gtest.h>

#include <string>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof::rule_test {
namespace {

using finding_lookup::AdviseOneRank;

// Two operators 300 ms apart inside one step; with `gc` events recorded, or Python code running between.
Trace PausedStep(double pause_ms, bool gc_event = false, bool python_between = false) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1e6));
  t.Host(EventKind::kHostOp, "aten::mm", Us(10), Us(100));
  t.Host(EventKind::kPythonFunction, "main.py(10): train", Us(5), Us(900000));  // frames are not work
  t.Host(EventKind::kHostOp, "aten::add", Us(110 + pause_ms * 1000), Us(100));
  if (gc_event) t.Host(EventKind::kOther, "GC", Us(200), Us(5000));
  for (int i = 0; python_between && i < 10; ++i)
    t.Host(EventKind::kPythonFunction, "decode.py(3): read", Us(200 + i * 30000), Us(20));
  return t.Finish();
}

TEST(GcPause, ALongStretchWithNothingRunning) {
  const Trace trace = PausedStep(300);
  const AdvisorResult result = AdviseOneRank(trace);
  const Finding* f = Find(result, "host.gc_pause");
  ASSERT_NE(f, nullptr);
  ExpectNumbers(*f, {{"pauses", 1}, {"longest_pause_ms", 300}, {"longest_pause_step", 1}});
  EXPECT_NEAR(f->uncapped_gain_ns, 300e6, 1);
  EXPECT_EQ(f->strategy.find("torch_npu"), std::string::npos);
}

TEST(GcPause, QuietBelowTheThresholdOrWithRecordedGc) {
  EXPECT_EQ(Find(AdviseOneRank(PausedStep(150)), "host.gc_pause"), nullptr);
  EXPECT_EQ(Find(AdviseOneRank(PausedStep(300, true)), "host.gc_pause"), nullptr);
  EXPECT_EQ(Find(AdviseOneRank(PausedStep(300, false, true)), "host.gc_pause"), nullptr);
}

}  // namespace
}  // namespace tuneprof::rule_test
