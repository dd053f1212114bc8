#pragma once
// What the rule tests share: the advisor run on one trace (or one rule alone), a finding by id, and its
// evidence by label.
#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/rules/rules.h"
#include "analysis/breakdown/time_breakdown.h"
#include "analysis/compute/compute_units.h"
#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof::finding_lookup {

// The advisor on one rank, `trace`, with its own breakdown and compute units and an unknown chip.
inline AdvisorResult AdviseOneRank(const Trace& trace, const AdvisorConfig& config = AdvisorConfig()) {
  const RankBreakdown breakdown = ComputeTimeBreakdown(trace);
  HardwareSelection hardware;
  hardware.how = "unknown in test";
  const RankComputeUnits compute = ComputeRankComputeUnits(trace, breakdown, hardware);
  return RunAdvisor({RankInputs{&trace, &breakdown, &compute, &hardware}}, config);
}

// The advisor on one rank with the default chip profiles. `units`: replaces the measured compute units
// (hand-built traces carry no PMU counters). `comm`: the rank's communication analysis, hand-filled where
// the trace cannot carry it.
inline AdvisorResult AdviseWith(const Trace& trace, const RankComputeUnits* units = nullptr,
                                const RankCommunication* comm = nullptr) {
  const RankBreakdown breakdown = ComputeTimeBreakdown(trace);
  const HardwareProfiles profiles;
  const HardwareSelection hardware = SelectHardware(trace, profiles, nullptr);
  const RankComputeUnits compute = units ? *units : ComputeRankComputeUnits(trace, breakdown, hardware);
  return RunAdvisor({RankInputs{&trace, &breakdown, &compute, &hardware, nullptr, comm}}, AdvisorConfig());
}

// The advisor on one rank measured against `profile` (nullptr: an unknown chip).
inline AdvisorResult AdviseOnChip(const Trace& trace, const HardwareProfile* profile = nullptr) {
  const RankBreakdown breakdown = ComputeTimeBreakdown(trace);
  HardwareSelection hardware;
  hardware.profile = profile;
  hardware.how = profile ? "--hardware" : "unknown in test";
  const RankComputeUnits compute = ComputeRankComputeUnits(trace, breakdown, hardware);
  return RunAdvisor({RankInputs{&trace, &breakdown, &compute, &hardware}}, AdvisorConfig());
}

// One rule run alone (no caps, no merge across rules) on evidence the test fills in, over two steps of
// 1000 us; its findings come back in an AdvisorResult, for Find.
struct RuleAlone {
  RankEvidence rank;
  RuleAlone() {
    rank.split.steps = 2;
    rank.split.step_ns = hand_built::Us(1000);
  }
  AdvisorResult Run(RuleFunction rule, const AdvisorConfig& config = AdvisorConfig()) const {
    AdvisorResult result;
    rule(rank, config, &result.findings);
    return result;
  }
};

// The finding `id`, nullptr when the advisor did not raise it.
inline const Finding* Find(const AdvisorResult& result, std::string_view id) {
  auto it = std::find_if(result.findings.begin(), result.findings.end(), [&](const Finding& f) { return f.id == id; });
  return it == result.findings.end() ? nullptr : &*it;
}

// A copy of the finding `id`, for a test that goes on reading it after the advice it came from is gone;
// nullopt, and a test failure, when the advisor did not raise it.
inline std::optional<Finding> FindRaised(const AdvisorResult& result, std::string_view id) {
  const Finding* f = Find(result, id);
  if (f == nullptr) {
    ADD_FAILURE() << "no finding " << id;
    return std::nullopt;
  }
  return *f;
}

// The evidence number labelled `label`; -1 when the finding has none.
inline double Number(const Finding& f, std::string_view label) {
  for (const Evidence& e : f.evidence) {
    if (e.label == label && e.number) return *e.number;
  }
  return -1;
}

// The evidence text labelled `label`; "?" when the finding has none.
inline std::string Text(const Finding& f, std::string_view label) {
  for (const Evidence& e : f.evidence) {
    if (e.label == label) return e.text;
  }
  return "?";
}

// Evidence numbers by label, as a test expects them.
using Numbers = std::initializer_list<std::pair<std::string_view, double>>;

// Expects each of `expected` among the evidence numbers of `f`; a missing label reads -1, as in Number.
inline void ExpectNumbers(const Finding& f, Numbers expected) {
  for (const auto& [label, value] : expected) EXPECT_DOUBLE_EQ(Number(f, label), value) << label;
}

// Expects the value of `f` and its evidence numbers.
inline void ExpectFinding(const Finding& f, double value, Numbers expected) {
  ASSERT_TRUE(f.value.has_value()) << f.id.view();
  EXPECT_DOUBLE_EQ(*f.value, value) << f.id.view();
  ExpectNumbers(f, expected);
}

// Expects the modules `f` names to be `modules` (path and share), in that order.
inline void ExpectModules(const Finding& f, Numbers modules) {
  ASSERT_EQ(f.modules.size(), modules.size()) << f.id.view();
  size_t i = 0;
  for (const auto& [path, share] : modules) {
    EXPECT_EQ(f.modules[i].path, path);
    EXPECT_DOUBLE_EQ(f.modules[i].share, share) << path;
    ++i;
  }
}

// Starts `t` with step 1 over [0, step_us) and one kernel `kernel` over [0, kernel_us): the work that the
// rules weigh the rest against.
inline void StepWithKernel(hand_built::HandBuiltTrace* t, double step_us, double kernel_us,
                           std::string_view kernel = "gemm") {
  t->Step(1, 0, hand_built::Us(step_us));
  t->Kernel(kernel, 0, hand_built::Us(kernel_us));
}

}  // namespace tuneprof::finding_lookup

// The rule tests' namespace: the helpers above and the hand-built trace in scope, so that each test file
// opens it instead of listing them.
namespace tuneprof::rule_test {
using finding_lookup::AdviseOnChip;
using finding_lookup::AdviseWith;
using finding_lookup::ExpectFinding;
using finding_lookup::ExpectModules;
using finding_lookup::ExpectNumbers;
using finding_lookup::Find;
using finding_lookup::FindRaised;
using finding_lookup::Number;
using finding_lookup::RuleAlone;
using finding_lookup::StepWithKernel;
using finding_lookup::Text;
using hand_built::HandBuiltTrace;
using hand_built::Us;
}  // namespace tuneprof::rule_test
