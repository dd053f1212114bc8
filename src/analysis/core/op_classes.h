#pragma once
// What an operator or kernel does, from its name: matmul, convolution, fused attention, normalization,
// softmax, activation, element-wise, ... One letter per class, so that operator sequences become short
// strings that the fusion patterns (fusion_patterns.h) match. Host operators (aten::*) are looked up by
// exact name; kernels (CUDA, ROCm, MTIA, Triton, Ascend op types) by the rows of kernel_class_rules.h.
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/core/host_op_tree.h"
#include "model/trace.h"

namespace tuneprof {

// The letter of each class; kSkip marks views and metadata-only ops that sequences leave out.
namespace op_letter {
constexpr char kMatmul = 'M';
constexpr char kConv = 'C';
constexpr char kAttention = 'A';  // already fused: SDPA, flash, npu_fusion_attention
constexpr char kBatchNorm = 'B';
constexpr char kOtherNorm = 'Y';  // layer/group/rms norm as one op
constexpr char kSoftmax = 'S';
constexpr char kRelu = 'R';
constexpr char kGelu = 'G';
constexpr char kSilu = 'W';
constexpr char kSigmoid = 'H';
constexpr char kTanh = 'T';
constexpr char kMask = 'k';     // masked_fill, where, triu, tril
constexpr char kFactory = 'f';  // ones, zeros, full, arange: new tensors, e.g. an attention mask built in place
constexpr char kScale = 'x';    // mul, div
constexpr char kAdd = 'a';      // add, sub
constexpr char kDropout = 'd';
constexpr char kPow = 'p';     // pow, square
constexpr char kRsqrt = 'q';   // rsqrt, sqrt
constexpr char kReduce = 'r';  // mean, sum, max, norm
constexpr char kCast = 'c';    // to, _to_copy, Cast
constexpr char kNeg = 'n';
constexpr char kCat = 't';
constexpr char kSlice = 'l';  // slice, chunk, split, narrow
constexpr char kOtherElementwise = 'e';
constexpr char kCopy = 'y';  // memcpy, copy_, clone, contiguous
constexpr char kCommunication = 'z';
constexpr char kOther = 'o';
constexpr char kSkip = '\0';
}  // namespace op_letter

// The class letter of a host operator or kernel name.
char OpLetter(std::string_view name);

// OpLetter of one trace's event names, each distinct name classified once: names repeat on every step,
// and classifying one (a lower-cased copy searched for every keyword) took a quarter of `analyze`.
class OpLetters {
 public:
  explicit OpLetters(const Trace& trace) : trace_(trace), letters_(trace.strings().size(), kUnclassified) {}
  char Of(StringId name) {
    char& letter = letters_[name.value];
    if (letter == kUnclassified) letter = OpLetter(trace_.str(name));
    return letter;
  }

 private:
  static constexpr char kUnclassified = '\x7f';  // no class letter is DEL
  const Trace& trace_;
  std::vector<char> letters_;  // by StringId
};

// The class letter of each device kernel of one trace: its name's (kernel_class_rules.h), else the class
// of the operator that launched it (aten::mm -> matmul, ...), else kOther: unclassified, which callers
// keep apart and never count as memory-bound. A GEMM launched by a convolution is that convolution.
// A kernel's class from its own name's letter and its launching operator's (kOther: none).
char KernelLetterWithLauncher(char own, char launcher);

class KernelLetters {
 public:
  KernelLetters(const Trace& trace, const HostOpTree& tree);
  char Of(uint32_t event);

 private:
  static constexpr int kMaxLauncherDepth = 8;
  char LauncherLetter(uint32_t event);

  const Trace& trace_;
  const HostOpTree& tree_;
  OpLetters names_;
  std::vector<uint32_t> launcher_;  // LaunchingOps: by device event, the innermost host op around its launch
};

// Matmul, convolution and attention do many FLOPs per byte: their time is compute-bound work; every
// other class streams memory (element-wise, norms, softmax, copies).
bool IsComputeBoundLetter(char letter);

// Element-wise work that a compiler fuses into one kernel (torch.compile, Ascend fusion passes).
bool IsFusibleElementwiseLetter(char letter);

}  // namespace tuneprof
