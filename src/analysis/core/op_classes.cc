#include "analysis/core/op_classes.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <utility>

#include "analysis/core/comm_kernel_rules.h"
#include "analysis/core/kernel_class_rules.h"

namespace tuneprof {
namespace {

using Entry = std::pair<std::string_view, char>;

// aten operator names (without "aten::"), exact.
constexpr std::array kAtenOps = std::to_array<Entry>({
    {"mm", op_letter::kMatmul},
    {"bmm", op_letter::kMatmul},
    {"addmm", op_letter::kMatmul},
    {"matmul", op_letter::kMatmul},
    {"linear", op_letter::kMatmul},
    {"baddbmm", op_letter::kMatmul},
    {"addbmm", op_letter::kMatmul},
    {"einsum", op_letter::kMatmul},
    {"_addmm_activation", op_letter::kMatmul},
    {"conv1d", op_letter::kConv},
    {"conv2d", op_letter::kConv},
    {"conv3d", op_letter::kConv},
    {"convolution", op_letter::kConv},
    {"_convolution", op_letter::kConv},
    {"conv_transpose2d", op_letter::kConv},
    {"mkldnn_convolution", op_letter::kConv},
    {"cudnn_convolution", op_letter::kConv},
    {"miopen_convolution", op_letter::kConv},
    {"scaled_dot_product_attention", op_letter::kAttention},
    {"_scaled_dot_product_flash_attention", op_letter::kAttention},
    {"_scaled_dot_product_flash_attention_for_cpu", op_letter::kAttention},
    {"_scaled_dot_product_efficient_attention", op_letter::kAttention},
    {"_scaled_dot_product_cudnn_attention", op_letter::kAttention},
    {"_flash_attention_forward", op_letter::kAttention},
    {"batch_norm", op_letter::kBatchNorm},
    {"_batch_norm_impl_index", op_letter::kBatchNorm},
    {"native_batch_norm", op_letter::kBatchNorm},
    {"cudnn_batch_norm", op_letter::kBatchNorm},
    {"_native_batch_norm_legit", op_letter::kBatchNorm},
    {"_native_batch_norm_legit_no_training", op_letter::kBatchNorm},
    {"layer_norm", op_letter::kOtherNorm},
    {"native_layer_norm", op_letter::kOtherNorm},
    {"group_norm", op_letter::kOtherNorm},
    {"native_group_norm", op_letter::kOtherNorm},
    {"rms_norm", op_letter::kOtherNorm},
    {"_fused_rms_norm", op_letter::kOtherNorm},
    {"softmax", op_letter::kSoftmax},
    {"_softmax", op_letter::kSoftmax},
    {"log_softmax", op_letter::kSoftmax},
    {"_log_softmax", op_letter::kSoftmax},
    {"_safe_softmax", op_letter::kSoftmax},
    {"relu", op_letter::kRelu},
    {"relu_", op_letter::kRelu},
    {"threshold", op_letter::kRelu},
    {"leaky_relu", op_letter::kRelu},
    {"hardtanh", op_letter::kRelu},
    {"hardtanh_", op_letter::kRelu},
    {"gelu", op_letter::kGelu},
    {"silu", op_letter::kSilu},
    {"silu_", op_letter::kSilu},
    {"sigmoid", op_letter::kSigmoid},
    {"tanh", op_letter::kTanh},
    {"masked_fill", op_letter::kMask},
    {"masked_fill_", op_letter::kMask},
    {"where", op_letter::kMask},
    {"triu", op_letter::kMask},
    {"tril", op_letter::kMask},
    {"ones", op_letter::kFactory},
    {"zeros", op_letter::kFactory},
    {"full", op_letter::kFactory},
    {"arange", op_letter::kFactory},
    {"mul", op_letter::kScale},
    {"mul_", op_letter::kScale},
    {"div", op_letter::kScale},
    {"div_", op_letter::kScale},
    {"add", op_letter::kAdd},
    {"add_", op_letter::kAdd},
    {"sub", op_letter::kAdd},
    {"sub_", op_letter::kAdd},
    {"rsub", op_letter::kAdd},
    {"addcmul_", op_letter::kAdd},
    {"addcdiv_", op_letter::kAdd},
    {"dropout", op_letter::kDropout},
    {"native_dropout", op_letter::kDropout},
    {"bernoulli_", op_letter::kDropout},
    {"feature_dropout", op_letter::kDropout},
    {"pow", op_letter::kPow},
    {"square", op_letter::kPow},
    {"rsqrt", op_letter::kRsqrt},
    {"sqrt", op_letter::kRsqrt},
    {"mean", op_letter::kReduce},
    {"sum", op_letter::kReduce},
    {"max", op_letter::kReduce},
    {"amax", op_letter::kReduce},
    {"norm", op_letter::kReduce},
    {"linalg_vector_norm", op_letter::kReduce},
    {"var", op_letter::kReduce},
    {"argmax", op_letter::kReduce},
    {"to", op_letter::kCast},
    {"_to_copy", op_letter::kCast},
    {"type_as", op_letter::kCast},
    {"neg", op_letter::kNeg},
    {"cat", op_letter::kCat},
    {"slice", op_letter::kSlice},
    {"chunk", op_letter::kSlice},
    {"split", op_letter::kSlice},
    {"narrow", op_letter::kSlice},
    {"unbind", op_letter::kSlice},
    {"copy_", op_letter::kCopy},
    {"clone", op_letter::kCopy},
    {"contiguous", op_letter::kCopy},
    {"exp", op_letter::kOtherElementwise},
    {"fill_", op_letter::kOtherElementwise},
    {"zero_", op_letter::kOtherElementwise},
    {"zeros_like", op_letter::kOtherElementwise},
    {"ones_like", op_letter::kOtherElementwise},
    {"cos", op_letter::kOtherElementwise},
    {"sin", op_letter::kOtherElementwise},
    {"abs", op_letter::kOtherElementwise},
    {"clamp", op_letter::kOtherElementwise},
    {"clamp_", op_letter::kOtherElementwise},
    {"lerp_", op_letter::kOtherElementwise},
    {"log", op_letter::kOtherElementwise},
    {"reciprocal", op_letter::kOtherElementwise},
    {"embedding", op_letter::kOther},
    // Views and metadata: no data moves, so they neither cost time nor break a fusion.
    {"view", op_letter::kSkip},
    {"reshape", op_letter::kSkip},
    {"_unsafe_view", op_letter::kSkip},
    {"transpose", op_letter::kSkip},
    {"permute", op_letter::kSkip},
    {"t", op_letter::kSkip},
    {"expand", op_letter::kSkip},
    {"unsqueeze", op_letter::kSkip},
    {"squeeze", op_letter::kSkip},
    {"as_strided", op_letter::kSkip},
    {"select", op_letter::kSkip},
    {"detach", op_letter::kSkip},
    {"detach_", op_letter::kSkip},
    {"alias", op_letter::kSkip},
    {"flatten", op_letter::kSkip},
    {"empty", op_letter::kSkip},
    {"empty_strided", op_letter::kSkip},
    {"empty_like", op_letter::kSkip},
    {"resize_", op_letter::kSkip},
    {"lift_fresh", op_letter::kSkip},
    {"numpy_T", op_letter::kSkip},
    {"expand_as", op_letter::kSkip},
    {"view_as", op_letter::kSkip},
    {"result_type", op_letter::kSkip},
    {"is_nonzero", op_letter::kSkip},
    {"item", op_letter::kSkip},
    {"_local_scalar_dense", op_letter::kSkip},
});

std::string Lower(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

}  // namespace

char OpLetter(std::string_view name) {
  constexpr std::string_view kAten = "aten::";
  if (name.starts_with(kAten)) {
    name.remove_prefix(kAten.size());
    for (const auto& [op, letter] : kAtenOps) {
      if (op == name) return letter;
    }
    return op_letter::kOther;
  }
  // Communication kernels of every library (comm_kernel_rules.h), whose names the keywords below miss.
  if (MatchCommKernel(name) != nullptr) return op_letter::kCommunication;
  std::string lower = Lower(name);
  // PyTorch's element-wise kernels without dtype conversion are named gpu_kernel_impl_nocast: not a cast.
  for (size_t at = lower.find("nocast"); at != std::string::npos; at = lower.find("nocast", at)) lower.erase(at, 6);
  const KernelClassRule* rule = MatchKernelClass(lower);
  return rule != nullptr ? rule->letter : op_letter::kOther;
}

KernelLetters::KernelLetters(const Trace& trace, const HostOpTree& tree)
    : trace_(trace), tree_(tree), names_(trace), launcher_(LaunchingOps(trace, tree)) {}

char KernelLetters::LauncherLetter(uint32_t event) {
  if (event >= launcher_.size() || launcher_[event] == kNoIndex) return op_letter::kOther;
  uint32_t op = launcher_[event];
  // The innermost operator may be a wrapper the table does not know (a module's own op, a custom
  // op); the nearest enclosing one that has a class speaks for the kernel. Bounded: chains are short,
  // but a pathological nesting must not make this quadratic.
  for (int depth = 0; depth < kMaxLauncherDepth && op != kNoIndex; ++depth, op = tree_.parent_op[op]) {
    const char letter = names_.Of(trace_.events().name[op]);
    if (letter != op_letter::kOther && letter != op_letter::kSkip) return letter;
  }
  return op_letter::kOther;
}

char KernelLetters::Of(uint32_t event) {
  const char own = names_.Of(trace_.events().name[event]);
  if (own != op_letter::kOther && own != op_letter::kMatmul) return own;
  return KernelLetterWithLauncher(own, LauncherLetter(event));
}

char KernelLetterWithLauncher(char own, char launcher) {
  // Convolutions run as GEMMs on several libraries (MIOpen's Tensile kernels, cuDNN's implicit GEMMs):
  // a GEMM a convolution launched is that convolution's.
  if (own == op_letter::kMatmul) return launcher == op_letter::kConv ? op_letter::kConv : own;
  return own == op_letter::kOther ? launcher : own;
}

bool IsComputeBoundLetter(char letter) {
  return letter == op_letter::kMatmul || letter == op_letter::kConv || letter == op_letter::kAttention;
}

bool IsFusibleElementwiseLetter(char letter) {
  constexpr std::string_view kFusible = "xakdpqcnRGWHTe";
  return letter != op_letter::kSkip && kFusible.find(letter) != std::string_view::npos;
}

}  // namespace tuneprof
