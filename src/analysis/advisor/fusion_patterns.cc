#include "analysis/advisor/fusion_patterns.h"

#include <algorithm>
#include <array>

#include "analysis/core/op_classes.h"

namespace tuneprof {
namespace {

constexpr size_t kMinChain = 3;
constexpr std::string_view kActivations = "RGWHT";

constexpr std::array kAttention = std::to_array<PatternElement>(
    {{"M", 1, 1, true, true}, {"xakf", 0, 4}, {"S", 1, 1}, {"d", 0, 1}, {"M", 1, 1, true, true}});
constexpr std::array kConvBnAct =
    std::to_array<PatternElement>({{"C", 1, 1, true, true}, {"B", 1, 1}, {kActivations, 0, 1}});
constexpr std::array kRmsNorm = std::to_array<PatternElement>(
    {{"c", 0, 1}, {"p", 1, 1}, {"r", 1, 1}, {"a", 0, 1}, {"q", 1, 1}, {"x", 1, 2}, {"c", 0, 1}});
constexpr std::array kLayerNorm = std::to_array<PatternElement>(
    {{"r", 1, 1}, {"a", 1, 1}, {"p", 1, 1}, {"r", 1, 1}, {"a", 0, 1}, {"q", 1, 1}, {"x", 1, 2}, {"a", 0, 1}});
constexpr std::array kSwiGlu =
    std::to_array<PatternElement>({{"l", 0, 2}, {"W", 1, 1}, {"M", 0, 1, false, false}, {"x", 1, 1}});
constexpr std::array kGeGlu = std::to_array<PatternElement>({{"l", 1, 2}, {"G", 1, 1}, {"x", 1, 1}});
constexpr std::array kRotary =
    std::to_array<PatternElement>({{"l", 1, 2}, {"n", 1, 1}, {"t", 1, 1}, {"x", 0, 2}, {"a", 0, 1}});
constexpr std::array kMatmulEpilogue =
    std::to_array<PatternElement>({{"M", 1, 1, true, true}, {"a", 0, 1}, {kActivations, 1, 1}});
constexpr std::array kBiasDropoutAdd = std::to_array<PatternElement>({{"a", 0, 1}, {"d", 1, 1}, {"a", 1, 1}});
constexpr std::array kCastChain = std::to_array<PatternElement>({{"c", 2, 8}});

constexpr std::array kLibrary = std::to_array<FusionPattern>({
    {"fusion.attention",
     "matmul -> [scale|mask, the mask built in place] -> softmax -> [dropout] -> matmul (standard attention)",
     kAttention, FusionGain::kEpilogue, FusionGain::kEpilogue},
    {"fusion.conv_bn_relu", "conv -> batch_norm -> [activation]", kConvBnAct, FusionGain::kEpilogue,
     FusionGain::kOnePass},
    {"fusion.rms_norm", "[cast] -> pow -> mean -> [add] -> rsqrt -> mul (RMSNorm written out)", kRmsNorm,
     FusionGain::kOnePass, FusionGain::kOnePass},
    {"fusion.layer_norm", "mean -> sub -> pow -> mean -> [add] -> rsqrt -> mul (LayerNorm written out)", kLayerNorm,
     FusionGain::kOnePass, FusionGain::kOnePass},
    {"fusion.swiglu", "[slice] -> silu -> [matmul] -> mul (SwiGLU)", kSwiGlu, FusionGain::kOnePass,
     FusionGain::kOnePass},
    {"fusion.geglu", "slice -> gelu -> mul (GeGLU)", kGeGlu, FusionGain::kOnePass, FusionGain::kOnePass},
    {"fusion.rotary", "slice -> neg -> cat -> [mul] -> [add] (rotary embedding written out)", kRotary,
     FusionGain::kOnePass, FusionGain::kOnePass},
    {"fusion.matmul_epilogue", "matmul -> [add] -> activation", kMatmulEpilogue, FusionGain::kEpilogue,
     FusionGain::kEpilogue},
    {"fusion.bias_dropout_add", "[add] -> dropout -> add (bias-dropout-residual)", kBiasDropoutAdd,
     FusionGain::kOnePass, FusionGain::kOnePass},
    {"fusion.cast_chain", "cast -> cast (dtype round trips)", kCastChain, FusionGain::kOnePass, FusionGain::kOnePass},
});

// Whether elements[k..] match letters from `pos`; on success *end is the position after the match.
bool MatchFrom(std::span<const PatternElement> elements, size_t k, const std::string& letters,
               const std::vector<bool>& used, size_t pos, size_t* end) {
  if (k == elements.size()) {
    *end = pos;
    return true;
  }
  const PatternElement& element = elements[k];
  size_t count = 0;
  while (count < element.max && pos + count < letters.size() && !used[pos + count] &&
         element.letters.find(letters[pos + count]) != std::string_view::npos) {
    ++count;
  }
  for (size_t take = count + 1; take-- > element.min;) {  // greedy, then shorter
    if (MatchFrom(elements, k + 1, letters, used, pos + take, end)) return true;
  }
  return false;
}

// Which positions of a match are members, and which of those are anchors.
void MemberRoles(std::span<const PatternElement> elements, const std::string& letters, size_t begin, size_t end,
                 std::vector<int>* role) {
  // Re-walk the match greedily element by element to label positions (MatchFrom found a valid split;
  // the labels only need each position's element, which letters make unambiguous for the library).
  role->assign(end - begin, 0);
  size_t pos = begin;
  for (const PatternElement& element : elements) {
    size_t count = 0;
    while (count < element.max && pos + count < end &&
           element.letters.find(letters[pos + count]) != std::string_view::npos) {
      ++count;
    }
    for (size_t i = 0; i < count; ++i) (*role)[pos - begin + i] = element.anchor ? 2 : (element.member ? 1 : 0);
    pos += count;
  }
}

void Measure(const FusionPattern* pattern, const OpSequence& sequence, bool training, PatternMatch* match) {
  std::vector<int> role(match->end - match->begin, 1);
  if (pattern) MemberRoles(pattern->elements, sequence.letters, match->begin, match->end, &role);
  const FusionGain gain = !pattern ? FusionGain::kOnePass : (training ? pattern->gain_in_training : pattern->gain);
  int64_t sum = 0, fused_sum = 0, longest = 0;
  for (size_t i = match->begin; i < match->end; ++i) {
    const int r = role[i - match->begin];
    if (r == 0) continue;
    sum += sequence.time_ns[i];
    if (r == 1) {
      fused_sum += sequence.time_ns[i];
      longest = std::max(longest, sequence.time_ns[i]);
    }
  }
  match->time_ns = sum;
  match->saved_ns = gain == FusionGain::kEpilogue ? fused_sum : fused_sum - longest;
}

void MatchElementwiseChains(const std::vector<OpSequence>& sequences, std::vector<std::vector<bool>>* used,
                            std::vector<PatternMatch>* matches) {
  for (size_t s = 0; s < sequences.size(); ++s) {
    const std::string& letters = sequences[s].letters;
    size_t begin = 0;
    while (begin < letters.size()) {
      size_t end = begin;
      while (end < letters.size() && !(*used)[s][end] && IsFusibleElementwiseLetter(letters[end])) ++end;
      if (end - begin >= kMinChain) {
        PatternMatch match{FusionLibrary().size(), s, begin, end, 0, 0};
        Measure(nullptr, sequences[s], false, &match);
        matches->push_back(match);
      }
      begin = std::max(end, begin + 1);
    }
  }
}

// The letters a non-empty match of `elements` can begin with: those of each leading element up to the
// first that must occur. A position holding any other letter can only match empty, which the matcher
// skips, so the search starts only where one of these stands.
std::array<bool, 256> PatternStartLetters(std::span<const PatternElement> elements) {
  std::array<bool, 256> starts{};
  for (const PatternElement& element : elements) {
    for (const char letter : element.letters) starts[static_cast<unsigned char>(letter)] = true;
    if (element.min > 0) break;
  }
  return starts;
}

void MatchLibraryPattern(size_t p, const std::vector<OpSequence>& sequences, bool training,
                         std::vector<std::vector<bool>>* used, std::vector<PatternMatch>* matches) {
  const std::array<bool, 256> starts = PatternStartLetters(kLibrary[p].elements);
  for (size_t s = 0; s < sequences.size(); ++s) {
    const std::string& letters = sequences[s].letters;
    std::vector<bool>& used_here = (*used)[s];
    for (size_t pos = 0; pos < letters.size(); ++pos) {
      if (!starts[static_cast<unsigned char>(letters[pos])] || used_here[pos]) continue;
      size_t end = 0;
      if (!MatchFrom(kLibrary[p].elements, 0, letters, used_here, pos, &end) || end == pos) continue;
      PatternMatch match{p, s, pos, end, 0, 0};
      Measure(&kLibrary[p], sequences[s], training, &match);
      matches->push_back(match);
      std::fill(used_here.begin() + static_cast<std::ptrdiff_t>(pos),
                used_here.begin() + static_cast<std::ptrdiff_t>(end), true);
      pos = end - 1;
    }
  }
}

}  // namespace

std::span<const FusionPattern> FusionLibrary() { return kLibrary; }

std::vector<PatternMatch> MatchFusionPatterns(const std::vector<OpSequence>& sequences, bool training) {
  std::vector<PatternMatch> matches;
  std::vector<std::vector<bool>> used;
  for (const OpSequence& sequence : sequences) used.emplace_back(sequence.letters.size(), false);
  for (size_t p = 0; p < kLibrary.size(); ++p) MatchLibraryPattern(p, sequences, training, &used, &matches);
  MatchElementwiseChains(sequences, &used, &matches);
  return matches;
}

}  // namespace tuneprof
