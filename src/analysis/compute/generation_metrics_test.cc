#include "analysis/compute/generation_metrics.h"

#include <gtest/gtest.h>

#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

TEST(GenerationMarkersTest, WildcardsMatchRunsAndLiteralsMatchExactly) {
  EXPECT_TRUE(MatchesMarker("request#*", "request#12"));
  EXPECT_TRUE(MatchesMarker("request#*", "request#"));
  EXPECT_FALSE(MatchesMarker("request#*", "my_request#1"));
  EXPECT_TRUE(MatchesMarker("decode_step", "decode_step"));
  EXPECT_FALSE(MatchesMarker("decode", "decoder"));  // a module range is not a decode step
  EXPECT_TRUE(MatchesMarker("*gen*step", "vllm.gen_token.step"));
  EXPECT_FALSE(MatchesMarker("*gen*step", "gen_step_1"));
  EXPECT_TRUE(MatchesMarker("*", ""));
}

TEST(GenerationMarkersTest, SpecReplacesOnlyTheMarkersItNames) {
  GenerationMarkers markers;
  std::string error;
  ASSERT_TRUE(ParseGenerationMarkers("prefill=context|ctx_*,decode=gen_step", &markers, &error)) << error;
  EXPECT_EQ(markers.prefill, (std::vector<std::string>{"context", "ctx_*"}));
  EXPECT_EQ(markers.decode, (std::vector<std::string>{"gen_step"}));
  EXPECT_EQ(markers.request, GenerationMarkers().request);
  EXPECT_TRUE(ParseGenerationMarkers("", &markers, &error));
  EXPECT_FALSE(ParseGenerationMarkers("prefil=x", &markers, &error));
  EXPECT_NE(error.find("prefil=x"), std::string::npos);
  EXPECT_FALSE(ParseGenerationMarkers("decode=", &markers, &error));
  EXPECT_FALSE(ParseGenerationMarkers("decode=a||b", &markers, &error));
}

// One request: a context phase of 4 ms then two generation steps of 1 and 2 ms.
Trace ServingTrace() {
  HandBuiltTrace t;
  t.Host(EventKind::kUserAnnotation, "req-0", Us(0), Us(10'000));
  t.Host(EventKind::kUserAnnotation, "context_phase", Us(500), Us(4'000));
  t.Host(EventKind::kUserAnnotation, "gen_step", Us(5'000), Us(1'000));
  t.Host(EventKind::kUserAnnotation, "gen_step", Us(6'500), Us(2'000));
  return t.Finish();
}

TEST(GenerationMetricsTest, CustomMarkerNamesGiveTtftAndTpot) {
  const Trace trace = ServingTrace();
  EXPECT_TRUE(ComputeGenerationMetrics(trace).empty());  // the defaults know none of these names
  GenerationMarkers markers;
  std::string error;
  ASSERT_TRUE(ParseGenerationMarkers("request=req-*,prefill=context_phase,decode=gen_step", &markers, &error));
  const GenerationMetrics g = ComputeGenerationMetrics(trace, markers);
  ASSERT_EQ(g.requests.size(), 1u);
  ASSERT_TRUE(g.requests[0].ttft_ns);
  EXPECT_EQ(*g.requests[0].ttft_ns, Us(4'500));  // end of the context phase - start of the request
  EXPECT_EQ(g.tpot_ns, (std::vector<double>{1e6, 2e6}));
  ASSERT_TRUE(g.decode_tokens_per_s);
  EXPECT_DOUBLE_EQ(*g.decode_tokens_per_s, 2 / 3e-3);
}

}  // namespace
}  // namespace tuneprof
