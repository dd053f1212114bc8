// fusion_patterns.h on hand-built operator sequences: which patterns match, where, and the gain model
// (epilogue: the non-anchor members' time; one pass: their sum minus the longest).
#include "analysis/advisor/fusion_patterns.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/advisor/rules/finding_specs.h"

namespace tuneprof {
namespace {

OpSequence Sequence(std::string letters, std::vector<int64_t> time_ns) {
  OpSequence sequence;
  sequence.letters = std::move(letters);
  sequence.time_ns = std::move(time_ns);
  sequence.events.resize(sequence.letters.size());
  for (uint32_t i = 0; i < sequence.events.size(); ++i) sequence.events[i] = i;
  return sequence;
}

std::string_view IdOf(const PatternMatch& match) {
  return match.pattern == FusionLibrary().size() ? kElementwiseChainId : FusionLibrary()[match.pattern].id;
}

std::vector<PatternMatch> Match(std::string letters, std::vector<int64_t> time_ns, bool training = false) {
  return MatchFusionPatterns({Sequence(std::move(letters), std::move(time_ns))}, training);
}

TEST(FusionPatterns, ConvBnReluInInferenceFoldsIntoTheConvolution) {
  const auto matches = Match("CBR", {100, 40, 20});
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_EQ(IdOf(matches[0]), "fusion.conv_bn_relu");
  EXPECT_EQ(matches[0].begin, 0u);
  EXPECT_EQ(matches[0].end, 3u);
  EXPECT_EQ(matches[0].time_ns, 160);
  EXPECT_EQ(matches[0].saved_ns, 60);  // BatchNorm and ReLU cost nothing more: 40 + 20
}

TEST(FusionPatterns, ConvBnReluInTrainingIsOnePass) {
  const auto matches = Match("CBR", {100, 40, 20}, /*training=*/true);
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_EQ(IdOf(matches[0]), "fusion.conv_bn_relu");
  EXPECT_EQ(matches[0].time_ns, 160);
  EXPECT_EQ(matches[0].saved_ns, 20);  // (40 + 20) - max(40, 20)
}

TEST(FusionPatterns, ConvBnWithoutActivationMatches) {
  const auto matches = Match("CBo", {100, 40, 7});
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_EQ(IdOf(matches[0]), "fusion.conv_bn_relu");
  EXPECT_EQ(matches[0].end, 2u);
  EXPECT_EQ(matches[0].time_ns, 140);
  EXPECT_EQ(matches[0].saved_ns, 40);
}

TEST(FusionPatterns, AttentionWithScaleMaskAndDropout) {
  // matmul, scale, mask, softmax, dropout, matmul
  const auto matches = Match("oMxkSdMo", {5, 100, 10, 20, 30, 40, 200, 5});
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_EQ(IdOf(matches[0]), "fusion.attention");
  EXPECT_EQ(matches[0].begin, 1u);
  EXPECT_EQ(matches[0].end, 7u);
  EXPECT_EQ(matches[0].time_ns, 400);   // the anchors' 300 included
  EXPECT_EQ(matches[0].saved_ns, 100);  // 10 + 20 + 30 + 40 fold into FlashAttention
}

TEST(FusionPatterns, AttentionWithoutOptionalMembers) {
  const auto matches = Match("MSM", {100, 30, 200});
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_EQ(IdOf(matches[0]), "fusion.attention");
  EXPECT_EQ(matches[0].time_ns, 330);
  EXPECT_EQ(matches[0].saved_ns, 30);
}

TEST(FusionPatterns, AttentionWithFourScaleOrMaskOpsButNotFive) {
  const auto four = Match("MxakfSM", {100, 1, 2, 3, 4, 30, 200});
  ASSERT_EQ(four.size(), 1u);
  EXPECT_EQ(IdOf(four[0]), "fusion.attention");
  EXPECT_EQ(four[0].saved_ns, 40);
  for (const PatternMatch& match : Match("MxaxkfSM", {100, 1, 2, 3, 4, 5, 30, 200})) {
    EXPECT_NE(IdOf(match), "fusion.attention");
  }
}

TEST(FusionPatterns, AttentionWithACausalMaskBuiltInPlace) {
  // q @ k^T, / sqrt(d), torch.ones -> triu -> masked_fill, softmax, @ v (compare_pairs.py's naive attention)
  const auto matches = Match("MxfkkSM", {100, 5, 1, 2, 8, 30, 200});
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_EQ(IdOf(matches[0]), "fusion.attention");
  EXPECT_EQ(matches[0].saved_ns, 46);
}

TEST(FusionPatterns, ElementwiseChainsNeedThreeOperators) {
  EXPECT_TRUE(Match("oxeo", {1, 10, 20, 1}).empty());
  const auto matches = Match("oxeno", {1, 10, 20, 5, 1});
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_EQ(IdOf(matches[0]), kElementwiseChainId);
  EXPECT_EQ(matches[0].begin, 1u);
  EXPECT_EQ(matches[0].end, 4u);
  EXPECT_EQ(matches[0].time_ns, 35);
  EXPECT_EQ(matches[0].saved_ns, 15);  // 35 - 20: one pass costs the longest member
}

TEST(FusionPatterns, AnInterruptingOperatorBreaksThePattern) {
  EXPECT_TRUE(Match("CoBR", {100, 1, 40, 20}).empty());
  EXPECT_TRUE(Match("MxoSM", {100, 10, 1, 30, 200}).empty());
  EXPECT_TRUE(Match("oxoeo", {1, 10, 1, 20, 1}).empty());
}

TEST(FusionPatterns, AnOperatorBelongsToOneMatch) {
  // Two attentions back to back share no matmul: M S M | M S M.
  const auto matches = Match("MSMMSM", {1, 2, 3, 4, 5, 6});
  ASSERT_EQ(matches.size(), 2u);
  EXPECT_EQ(matches[0].begin, 0u);
  EXPECT_EQ(matches[0].end, 3u);
  EXPECT_EQ(matches[1].begin, 3u);
  EXPECT_EQ(matches[1].end, 6u);
  EXPECT_EQ(matches[0].saved_ns + matches[1].saved_ns, 2 + 5);
}

TEST(FusionPatterns, MatchesAreFoundPerSequence) {
  const auto matches = MatchFusionPatterns({Sequence("CB", {10, 4}), Sequence("MSM", {1, 2, 3})}, false);
  ASSERT_EQ(matches.size(), 2u);
  EXPECT_EQ(IdOf(matches[0]), "fusion.attention");
  EXPECT_EQ(matches[0].sequence, 1u);
  EXPECT_EQ(IdOf(matches[1]), "fusion.conv_bn_relu");
  EXPECT_EQ(matches[1].sequence, 0u);
}

// What a pattern's finding says of its gain (its row, rules/fusion.cc) is how the pattern's match saves.
TEST(FusionLibrary, EachPatternsRowSaysHowItsMatchSaves) {
  for (const FusionPattern& pattern : FusionLibrary()) {
    const FindingSpec* row = FindingSpecOf(pattern.id);
    ASSERT_NE(row, nullptr) << pattern.id;
    EXPECT_EQ(row->gain_model.starts_with("one fused pass"), pattern.gain == FusionGain::kOnePass) << pattern.id;
  }
  ASSERT_NE(FindingSpecOf(kElementwiseChainId), nullptr);
}

}  // namespace
}  // namespace tuneprof
