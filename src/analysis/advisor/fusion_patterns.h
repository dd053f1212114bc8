#pragma once
// The fusion-pattern library and its matcher. A pattern is a short sequence of operator classes
// (op_classes.h letters) with repetition bounds, e.g. standard attention = matmul, up to 3 scale/mask
// ops, softmax, optional dropout, matmul. Patterns are matched on the sequences of op_sequences.h in
// library order, leftmost first, and an operator belongs to at most one match. What is left as runs of
// 3 or more fusible element-wise operators becomes generic element-wise chains (-> torch.compile).
//
// Gain of one match, from the trace itself:
// - kEpilogue: the members that are not anchors (matmul/conv) fold into the anchor's kernel and cost
//   nothing more (attention's softmax and masking in FlashAttention, BatchNorm folded into an
//   inference convolution, a bias/activation epilogue of a GEMM);
// - kOnePass: the fused kernel makes one memory pass, costing about its longest member: saved = sum -
//   max (norm decompositions, SwiGLU, rotary, element-wise and cast chains; BatchNorm+ReLU in training,
//   where BatchNorm cannot fold into the convolution).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/advisor/op_sequences.h"

namespace tuneprof {

struct PatternElement {
  std::string_view letters;  // any of these classes
  uint8_t min = 1;
  uint8_t max = 1;
  bool anchor = false;  // the compute-bound op the others fuse into
  bool member = true;   // false: may sit inside the sequence but is not part of the fusion
};

enum class FusionGain : uint8_t { kEpilogue, kOnePass };

struct FusionPattern {
  std::string_view id;     // "fusion.attention"
  std::string_view shape;  // "matmul -> [scale|mask] -> softmax -> [dropout] -> matmul"
  std::span<const PatternElement> elements;
  FusionGain gain = FusionGain::kOnePass;
  FusionGain gain_in_training = FusionGain::kOnePass;
};

// The library, in matching priority (what its findings say is in their spec rows, rules/fusion.cc); the generic element-wise chain is not in it (see above).
std::span<const FusionPattern> FusionLibrary();
constexpr std::string_view kElementwiseChainId = "fusion.elementwise_chain";

struct PatternMatch {
  size_t pattern = 0;   // index into FusionLibrary(); FusionLibrary().size() for element-wise chains
  size_t sequence = 0;  // index into the sequences given
  size_t begin = 0;     // [begin, end) positions in the sequence
  size_t end = 0;
  int64_t time_ns = 0;   // the members' time
  int64_t saved_ns = 0;  // the gain model's estimate
};

// `training`: the trace runs a backward pass (BatchNorm uses batch statistics and cannot fold).
std::vector<PatternMatch> MatchFusionPatterns(const std::vector<OpSequence>& sequences, bool training);

}  // namespace tuneprof
