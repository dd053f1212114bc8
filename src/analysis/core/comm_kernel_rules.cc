#include "analysis/core/comm_kernel_rules.h"

#include <algorithm>
#include <array>

#include "base/enum_names.h"

namespace tuneprof {
namespace {

using enum CommKernelMatch;
using enum CommKernelKind;

// clang-format off
constexpr std::array kRules = {
    // NCCL, and RCCL which keeps its names ("ncclDevKernel_Generic" included): "ncclKernel_AllReduce_RING_LL_Sum_float(...)",
    // "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", sometimes behind "void ".
    CommKernelRule{"nccl", kPrefix, "", kCommunication, "", "NCCL", false, true, "NCCL and RCCL kernel names"},
    CommKernelRule{"ncclKernel", kContains, "", kCommunication, "", "NCCL", false, true, "NCCL kernel names"},
    CommKernelRule{"ncclDevKernel", kContains, "", kCommunication, "", "NCCL", false, true, "NCCL 2.19+ and RCCL kernel names"},
    CommKernelRule{"rccl", kPrefix, "", kCommunication, "", "RCCL", false, true, "RCCL kernel names"},
    // MSCCL++ before MSCCL, whose prefix its names share.
    CommKernelRule{"mscclpp", kNameContains, "", kCommunication, "", "MSCCL++", false, true, "microsoft/mscclpp (namespace mscclpp)"},
    CommKernelRule{"msccl", kPrefix, "", kCommunication, "", "MSCCL", false, true, "MSCCL kernel names (mscclKernel_*)"},
    // gloo's CUDA collectives ("gloo::cuda_..." kernels).
    CommKernelRule{"gloo", kPrefix, "", kCommunication, "", "gloo", false, true, "gloo CUDA kernels"},
    CommKernelRule{"gloo::", kContains, "", kCommunication, "", "gloo", false, true, "gloo CUDA kernels"},
    // Ascend: HCCL tasks (sub-tasks of an hcom_* operator, not collectives of their own) and the hcom_*
    // operators torch_npu records on the device.
    CommKernelRule{"hccl", kPrefix, "", kCommunication, "", "HCCL", false, false, "HCCL task names"},
    CommKernelRule{"Hccl", kPrefix, "", kCommunication, "", "HCCL", false, false, "HCCL task names"},
    CommKernelRule{"HCCL", kPrefix, "", kCommunication, "", "HCCL", false, false, "HCCL task names"},
    CommKernelRule{"hcom_", kPrefix, "", kCommunication, "", "HCCL", false, true, "torch_npu hcom_<op>_* operators"},
    // DeepEP's expert-parallel token exchange: namespaces deep_ep::intranode, ::internode, ::internode_ll
    // (also behind primus_turbo::); its layout kernel (get_dispatch_layout) computes and is left out.
    CommKernelRule{"dispatch", kTemplatedHead, "deep_ep", kCommunication, "alltoall", "DeepEP", true, true, "DeepEP csrc/kernels (intranode.cu, internode.cu, internode_ll.cu)"},
    CommKernelRule{"combine", kTemplatedHead, "deep_ep", kCommunication, "alltoall", "DeepEP", true, true, "DeepEP csrc/kernels (intranode.cu, internode.cu, internode_ll.cu)"},
    CommKernelRule{"notify_dispatch", kTemplatedHead, "deep_ep", kCommunication, "alltoall", "DeepEP", true, true, "DeepEP csrc/kernels (intranode.cu, internode.cu)"},
    CommKernelRule{"cached_notify", kTemplatedHead, "deep_ep", kCommunication, "alltoall", "DeepEP", true, true, "DeepEP csrc/kernels/internode.cu"},
    CommKernelRule{"cached_notify_dispatch", kTemplatedHead, "deep_ep", kCommunication, "alltoall", "DeepEP", true, true, "DeepEP csrc/kernels/intranode.cu"},
    CommKernelRule{"cached_notify_combine", kTemplatedHead, "deep_ep", kCommunication, "alltoall", "DeepEP", true, true, "DeepEP csrc/kernels/intranode.cu"},
    // One-process custom all-reduce over IPC buffers, beside NCCL.
    CommKernelRule{"cross_device_reduce", kNameContains, "", kCommunication, "allreduce", "vLLM/SGLang custom all-reduce", false, true, "vLLM csrc/custom_all_reduce.cuh (cross_device_reduce_1stage, _2stage); SGLang and AITER keep the names"},
    CommKernelRule{"oneShotAllReduce", kNameContains, "", kCommunication, "allreduce", "TensorRT-LLM custom all-reduce", false, true, "TensorRT-LLM kernels/customAllReduceKernels.cu (oneShotAllReduceKernel); SGLang's trt_reduce"},
    CommKernelRule{"twoShotAllReduce", kNameContains, "", kCommunication, "allreduce", "TensorRT-LLM custom all-reduce", false, true, "TensorRT-LLM kernels/customAllReduceKernels.cu (twoShotAllReduceKernel)"},
    // All-reduce fused with a residual add and RMSNorm: the exchange is nearly all of its time, so it is
    // communication (fused comm is for kernels that do a matmul's worth of compute).
    CommKernelRule{"allreduce_fusion_kernel", kNameContains, "", kCommunication, "allreduce", "TensorRT-LLM / FlashInfer all-reduce fusion", false, true, "TensorRT-LLM communicationKernels and FlashInfer trtllm_allreduce_fusion (allreduce_fusion_kernel_oneshot_lamport, _twoshot_sync)"},
    CommKernelRule{"allreduce_prototype", kNameContains, "", kCommunication, "allreduce", "vLLM/SGLang/AITER quick all-reduce (ROCm)", false, true, "vLLM csrc/quickreduce (quickreduce::allreduce_prototype_twoshot), kept by SGLang and AITER"},
    // PyTorch SymmetricMemory (torch/csrc/distributed/c10d/symm_mem) and the Triton kernels modelled on it.
    CommKernelRule{"one_shot_all_reduce", kNameContains, "", kCommunication, "allreduce", "PyTorch symmetric memory all-reduce", false, true, "PyTorch CUDASymmetricMemoryOps.cu (one_shot_all_reduce_kernel, multimem_one_shot_all_reduce_kernel); SGLang's Triton one_shot_all_reduce_kernel"},
    CommKernelRule{"two_shot_all_reduce", kNameContains, "", kCommunication, "allreduce", "PyTorch symmetric memory all-reduce", false, true, "PyTorch CUDASymmetricMemoryOps.cu (two_shot_all_reduce_kernel)"},
    CommKernelRule{"multimem_all_reduce", kNameContains, "", kCommunication, "allreduce", "PyTorch symmetric memory all-reduce", false, true, "PyTorch CUDASymmetricMemoryOps.cu (multimem_all_reduce_kernel)"},
    // Communication libraries whose kernels live in their own namespace or carry their prefix.
    CommKernelRule{"nvshmem", kNameContains, "", kCommunication, "", "NVSHMEM", false, true, "NVSHMEM device kernels (nvshmemi_*, nvshmemx_*)"},
    CommKernelRule{"userbuffers", kNameContains, "", kCommunication, "", "Transformer Engine userbuffers", false, true, "Transformer Engine comm_gemm_overlap/userbuffers/userbuffers.cu (userbuffers_fp16_sum_inplace_gpu_*, kuserbuffers_*)"},
    // Ascend MC2: one operator computes (matmul, token quantization) and communicates.
    CommKernelRule{"MatmulAllReduce", kNameContains, "", kFusedComm, "allreduce", "Ascend MC2", false, true, "CANN ops-transformer mc2 (aclnnMatmulAllReduce, MatmulAllReduceAddRmsNorm)"},
    CommKernelRule{"AllGatherMatmul", kNameContains, "", kFusedComm, "allgather", "Ascend MC2", false, true, "CANN ops-transformer mc2 (aclnnAllGatherMatmul)"},
    CommKernelRule{"MatmulReduceScatter", kNameContains, "", kFusedComm, "reducescatter", "Ascend MC2", false, true, "CANN ops-transformer mc2 (aclnnMatmulReduceScatter)"},
    CommKernelRule{"MoeDistributeDispatch", kNameContains, "", kFusedComm, "alltoall", "Ascend MC2", true, true, "CANN ops-transformer mc2 (aclnnMoeDistributeDispatch, V2)"},
    CommKernelRule{"MoeDistributeCombine", kNameContains, "", kFusedComm, "alltoall", "Ascend MC2", true, true, "CANN ops-transformer mc2 (aclnnMoeDistributeCombine, V2)"},
};
// clang-format on

constexpr std::string_view kAnonymousNamespace = "(anonymous namespace)";

// A qualified function name (return type included) is never this long; looking no further bounds the cost
// of a name of megabytes, classified once per analysis, to the rows that read the whole name.
constexpr size_t kFunctionNameLimit = 1024;

// Where the template arguments or the argument list open: the first '<' or '(' that does not open the
// "(anonymous namespace)" a qualified name may hold ("void (anonymous namespace)::kernel<float>(...)").
// npos when none opens within kFunctionNameLimit.
size_t OpeningOf(std::string_view name) {
  name = name.substr(0, kFunctionNameLimit);
  size_t from = 0;
  for (;;) {
    const size_t at = name.find_first_of("<(", from);
    if (at == std::string_view::npos || !name.substr(at).starts_with(kAnonymousNamespace)) return at;
    from = at + kAnonymousNamespace.size();
  }
}

// A kernel name taken apart once for every row.
struct KernelName {
  explicit KernelName(std::string_view name) : whole(name), opening(OpeningOf(name)) {
    function = name.substr(0, std::min(opening, kFunctionNameLimit));
  }
  std::string_view whole;
  size_t opening;             // OpeningOf(whole)
  std::string_view function;  // the text before the template arguments and argument list
};

// `void deep_ep::intranode::dispatch<8, 768>(int4*, ...)`: the unqualified name must be the pattern, with
// template arguments right after it, and a qualifier (if any) must hold the rule's namespace.
bool MatchesTemplatedHead(const CommKernelRule& rule, const KernelName& name) {
  if (name.opening == std::string_view::npos || name.whole[name.opening] != '<') return false;
  std::string_view head = name.function;
  // The return type ends at the last space before the qualified name, whose "(anonymous namespace)" holds one.
  const size_t space = head.substr(0, head.find(kAnonymousNamespace)).rfind(' ');
  if (space != std::string_view::npos) head.remove_prefix(space + 1);
  const size_t colons = head.rfind("::");
  const std::string_view unqualified = colons == std::string_view::npos ? head : head.substr(colons + 2);
  if (unqualified != rule.pattern) return false;
  if (colons == std::string_view::npos) return true;
  return head.substr(0, colons).find(rule.scope) != std::string_view::npos;
}

bool Matches(const CommKernelRule& rule, const KernelName& name) {
  switch (rule.match) {
    case kPrefix:
      return name.whole.starts_with(rule.pattern);
    case kContains:
      return name.whole.find(rule.pattern) != std::string_view::npos;
    case kNameContains:
      return name.function.find(rule.pattern) != std::string_view::npos;
    case kTemplatedHead:
      return MatchesTemplatedHead(rule, name);
  }
  return false;
}

}  // namespace

std::span<const CommKernelRule> CommKernelRules() { return kRules; }

const CommKernelRule* MatchCommKernel(std::string_view name) {
  const KernelName parsed(name);
  for (const CommKernelRule& rule : kRules) {
    if (Matches(rule, parsed)) return &rule;
  }
  return nullptr;
}

std::string_view CommKernelMatchName(CommKernelMatch match) {
  static constexpr std::array<std::string_view, 4> kNames = {"prefix", "contains", "name contains", "templated head"};
  return EnumName(match, kNames, "?");
}

}  // namespace tuneprof
