#include "analysis/core/kernel_class_rules.h"

#include <array>
#include <utility>

#include "analysis/core/op_classes.h"

namespace tuneprof {
namespace {

constexpr KernelClassMatch kPrefix = KernelClassMatch::kPrefix;
constexpr KernelClassMatch kContains = KernelClassMatch::kContains;

// clang-format off
constexpr std::array kRules = std::to_array<KernelClassRule>({
    // Vendor rows: names whose words would mislead the generic rows below, or that hold none of them.
    {"cijk_", kContains, "AMD", op_letter::kMatmul, "rocBLAS and hipBLASLt Tensile GEMMs (Cijk_Alik_Bljk_..., Custom_Cijk_...)"},
    {"igemm_", kPrefix, "AMD", op_letter::kConv, "MIOpen implicit-GEMM convolutions (igemm_fwd_gtc_..., igemm_bwd_..., igemm_wrw_...)"},
    {"implicit_gemm", kContains, "AMD", op_letter::kConv, "MIOpen and Composable Kernel implicit-GEMM convolutions (gridwise_convolution_implicit_gemm_...)"},
    {"grouped_conv", kContains, "AMD", op_letter::kConv, "Composable Kernel grouped convolutions (kernel_grouped_conv_fwd_..., _bwd_data_...)"},
    {"fmoe", kContains, "AMD", op_letter::kMatmul, "aiter fused-MoE kernels (fmoe_*): the experts' grouped GEMMs"},
    {"fc-dtype_", kPrefix, "MTIA", op_letter::kMatmul, "MTIA fully-connected kernels (fc-dtype_Float, ...), launched by aten::mm / aten::addmm"},
    {"flex_attention", kContains, "Triton", op_letter::kAttention, "Inductor's flex attention template kernels"},
    {"triton_tem_fused_conv", kPrefix, "Triton", op_letter::kConv, "Inductor's convolution template kernels (triton_tem_fused_convolution_*)"},
    {"triton_tem_", kPrefix, "Triton", op_letter::kMatmul, "Inductor's other template kernels: the mm / addmm / bmm GEMM templates"},
    // Words most libraries use (NVIDIA, AMD, Ascend op types alike), first match wins, so "matmul"
    // beats "mul".
    {"nccl", kContains, "any", op_letter::kCommunication, "NCCL and RCCL kernels the communication table misses"},
    {"hcom", kContains, "any", op_letter::kCommunication, "HCCL operators (hcom_allReduce_, ...)"},
    {"allreduce", kContains, "any", op_letter::kCommunication, "all-reduce kernels"},
    {"allgather", kContains, "any", op_letter::kCommunication, "all-gather kernels"},
    {"reducescatter", kContains, "any", op_letter::kCommunication, "reduce-scatter kernels"},
    {"memcpy", kContains, "any", op_letter::kCopy, "copies written as kernels"},
    {"memset", kContains, "any", op_letter::kOtherElementwise, "fills written as kernels"},
    {"flash", kContains, "any", op_letter::kAttention, "FlashAttention kernels (flash_fwd_kernel, Ascend FlashAttentionScore)"},
    {"fmha", kContains, "any", op_letter::kAttention, "fused multi-head attention (cuDNN, TensorRT-LLM, Composable Kernel, aiter)"},
    {"attention", kContains, "any", op_letter::kAttention, "attention kernels and Ascend attention op types"},
    {"gemm", kContains, "any", op_letter::kMatmul, "GEMMs of cuBLAS, CUTLASS, Composable Kernel and others"},
    {"gemv", kContains, "any", op_letter::kMatmul, "matrix-vector products"},
    {"matmul", kContains, "any", op_letter::kMatmul, "matmuls (Ascend MatMulV2, BatchMatMul, GroupedMatmul, ...)"},
    {"cutlass", kContains, "any", op_letter::kMatmul, "NVIDIA CUTLASS kernels"},
    {"xmma", kContains, "any", op_letter::kMatmul, "NVIDIA cuBLAS / cuDNN xmma kernels"},
    {"nvjet", kContains, "any", op_letter::kMatmul, "NVIDIA cuBLAS nvjet GEMMs (Hopper, Blackwell)"},
    {"cublas", kContains, "any", op_letter::kMatmul, "NVIDIA cuBLAS kernels"},
    {"wgrad", kContains, "any", op_letter::kConv, "convolution weight gradients"},
    {"dgrad", kContains, "any", op_letter::kConv, "convolution data gradients"},
    {"conv", kContains, "any", op_letter::kConv, "convolutions (cuDNN, MIOpen, Ascend Conv2D, ...)"},
    {"softmax", kContains, "any", op_letter::kSoftmax, "softmax kernels"},
    {"batch_norm", kContains, "any", op_letter::kBatchNorm, "batch normalization"},
    {"batchnorm", kContains, "any", op_letter::kBatchNorm, "batch normalization (MIOpenBatchNorm..., ...)"},
    {"bn_fw", kContains, "any", op_letter::kBatchNorm, "cuDNN batch normalization forward"},
    {"bn_bw", kContains, "any", op_letter::kBatchNorm, "cuDNN batch normalization backward"},
    {"bntraining", kContains, "any", op_letter::kBatchNorm, "Ascend BNTraining op types"},
    {"bninfer", kContains, "any", op_letter::kBatchNorm, "Ascend BNInfer op types"},
    {"layer_norm", kContains, "any", op_letter::kOtherNorm, "layer normalization"},
    {"layernorm", kContains, "any", op_letter::kOtherNorm, "layer normalization (Ascend LayerNorm, ...)"},
    {"rmsnorm", kContains, "any", op_letter::kOtherNorm, "RMS normalization (Ascend RmsNorm, ...)"},
    {"rms_norm", kContains, "any", op_letter::kOtherNorm, "RMS normalization"},
    {"group_norm", kContains, "any", op_letter::kOtherNorm, "group normalization"},
    {"dropout", kContains, "any", op_letter::kDropout, "dropout"},
    {"relu", kContains, "any", op_letter::kRelu, "ReLU"},
    {"gelu", kContains, "any", op_letter::kGelu, "GELU"},
    {"silu", kContains, "any", op_letter::kSilu, "SiLU"},
    {"swish", kContains, "any", op_letter::kSilu, "Swish (SiLU)"},
    {"sigmoid", kContains, "any", op_letter::kSigmoid, "sigmoid"},
    {"tanh", kContains, "any", op_letter::kTanh, "tanh"},
    {"transdata", kContains, "any", op_letter::kCopy, "Ascend TransData layout changes"},
    {"transpose", kContains, "any", op_letter::kCopy, "transposes"},
    {"tensormove", kContains, "any", op_letter::kCopy, "Ascend TensorMove copies"},
    {"copy", kContains, "any", op_letter::kCopy, "copies"},
    {"cast", kContains, "any", op_letter::kCast, "dtype casts"},
    {"masked", kContains, "any", op_letter::kMask, "masking"},
    {"reduce", kContains, "any", op_letter::kReduce, "reductions"},
    {"elementwise", kContains, "any", op_letter::kOtherElementwise, "PyTorch's element-wise kernels"},
    {"mul", kContains, "any", op_letter::kScale, "multiplications"},
    {"div", kContains, "any", op_letter::kScale, "divisions"},
    {"add", kContains, "any", op_letter::kAdd, "additions"},
    {"sub", kContains, "any", op_letter::kAdd, "subtractions"},
    // Names no row above matches that still say what they do (met on the shared corpus).
    {"bmm_", kPrefix, "NVIDIA", op_letter::kMatmul, "TensorRT-LLM batched GEMMs (bmm_Bfloat16_..., bmm_MxE4m3_... on Blackwell)"},
    {"attn_fwd", kContains, "Triton", op_letter::kAttention, "Triton flash-attention forward kernels (attn_fwd, as ROCm's SDPA runs them)"},
    {"pool", kContains, "any", op_letter::kReduce, "pooling (max_pool_forward_nchw, adaptive_average_pool, Ascend MaxPoolWithArgmax, AvgPool)"},
    {"radixsort", kContains, "any", op_letter::kReduce, "CUB radix sorts (DeviceRadixSortOnesweepKernel, ...): memory-bound passes over the keys"},
    {"devicescan", kContains, "any", op_letter::kReduce, "CUB prefix scans (DeviceScanKernel)"},
    {"routing", kContains, "any", op_letter::kOtherElementwise, "MoE token routing (TensorRT-LLM moe::dev::routing histograms and offsets)"},
    {"rotary", kContains, "any", op_letter::kOtherElementwise, "rotary position embeddings (vllm::rotary_embedding_kernel, ...)"},
    {"quant", kContains, "any", op_letter::kCast, "quantization to FP8 / INT8 (vllm::scaled_fp8_quant_kernel, ...)"},
    {"topk", kContains, "any", op_letter::kReduce, "top-k selection (Ascend TopKV2, ...)"},
    {"nllloss", kContains, "any", op_letter::kReduce, "negative log-likelihood loss (Ascend NLLLoss, NLLLossGrad)"},
    // Family defaults: compiler kernels that name the kind of loop, not the operation.
    {"triton_poi_", kPrefix, "Triton", op_letter::kOtherElementwise, "Inductor's pointwise kernels: fused element-wise work"},
    {"triton_red_", kPrefix, "Triton", op_letter::kReduce, "Inductor's reduction kernels"},
    {"triton_per_", kPrefix, "Triton", op_letter::kReduce, "Inductor's persistent reduction kernels"},
});
// clang-format on

bool Matches(const KernelClassRule& rule, std::string_view lower_name) {
  return rule.match == kPrefix ? lower_name.starts_with(rule.pattern)
                               : lower_name.find(rule.pattern) != std::string_view::npos;
}

}  // namespace

std::span<const KernelClassRule> KernelClassRules() { return kRules; }

const KernelClassRule* MatchKernelClass(std::string_view lower_name) {
  for (const KernelClassRule& rule : kRules) {
    if (Matches(rule, lower_name)) return &rule;
  }
  return nullptr;
}

std::string_view KernelClassMatchName(KernelClassMatch match) { return match == kPrefix ? "prefix" : "contains"; }

std::string_view OpClassName(char letter) {
  // clang-format off
  static constexpr std::pair<char, std::string_view> kNames[] = {
      {op_letter::kMatmul, "matmul"}, {op_letter::kConv, "convolution"}, {op_letter::kAttention, "attention"},
      {op_letter::kBatchNorm, "batch norm"}, {op_letter::kOtherNorm, "norm"}, {op_letter::kSoftmax, "softmax"},
      {op_letter::kRelu, "relu"}, {op_letter::kGelu, "gelu"}, {op_letter::kSilu, "silu"},
      {op_letter::kSigmoid, "sigmoid"}, {op_letter::kTanh, "tanh"}, {op_letter::kMask, "mask"},
      {op_letter::kFactory, "factory"}, {op_letter::kScale, "scale"}, {op_letter::kAdd, "add"},
      {op_letter::kDropout, "dropout"}, {op_letter::kPow, "pow"}, {op_letter::kRsqrt, "rsqrt"},
      {op_letter::kReduce, "reduce"}, {op_letter::kCast, "cast"}, {op_letter::kNeg, "neg"}, {op_letter::kCat, "cat"},
      {op_letter::kSlice, "slice"}, {op_letter::kOtherElementwise, "element-wise"}, {op_letter::kCopy, "copy"},
      {op_letter::kCommunication, "communication"},
  };
  // clang-format on
  for (const auto& [class_letter, name] : kNames) {
    if (class_letter == letter) return name;
  }
  return "unclassified";
}

}  // namespace tuneprof
