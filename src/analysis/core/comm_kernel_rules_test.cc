// The communication-kernel table: real kernel names of each family are communication, the ordinary
// kernels that share their words are not, and docs/advisor.md lists exactly the table's rows.
#include "analysis/core/comm_kernel_rules.h"

#include <gtest/gtest.h>
#include <fmt/format.h>

#include <string>
#include <vector>

#include "analysis/core/doc_table_for_test.h"
#include "analysis/core/device_work.h"

namespace tuneprof {
namespace {

std::optional<WorkClass> Kernel(std::string_view name) { return ClassifyDeviceWork(EventKind::kKernel, name); }

std::string_view FamilyOf(std::string_view name) {
  const CommKernelRule* rule = MatchCommKernel(name);
  return rule == nullptr ? "" : rule->family;
}

TEST(CommKernelRulesTest, DeepEpKernelsAreExpertParallelAllToAll) {
  for (std::string_view name : {
           "void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*, float*, int*)",
           "void deep_ep::internode::combine<false, 4, 2, 8, 128>(int4*, float*, int4 const*)",
           "void deep_ep::intranode::notify_dispatch<8>(int const*, int*, int const*, int*, int, int)",
           "void deep_ep::internode::cached_notify<4, 8>(int, int, int, void*, int const*)",
           "void deep_ep::intranode::cached_notify_combine<8>(void**, int*, int, int, int, int**, int)",
           "void deep_ep::internode_ll::dispatch<false, 3, 10, 7168>(void*, float*, int*)",
           "void primus_turbo::deep_ep::intranode::dispatch<8, 1024, true>(int4*)",
           "dispatch<3, 10, 7168>",  // as some exports shorten the name
           "combine<3, 10, 7168>(void*)",
           "void deep_ep::(anonymous namespace)::dispatch<8>(int4*)",
       }) {
    const CommKernelRule* rule = MatchCommKernel(name);
    ASSERT_NE(rule, nullptr) << name;
    EXPECT_EQ(rule->family, "DeepEP") << name;
    EXPECT_EQ(rule->collective, "alltoall") << name;
    EXPECT_TRUE(rule->expert_parallel) << name;
    EXPECT_EQ(Kernel(name), WorkClass::kCommunication) << name;
  }
}

TEST(CommKernelRulesTest, BareVerbsOfOrdinaryKernelsStayCompute) {
  for (std::string_view name : {
           "void deep_ep::layout::get_dispatch_layout<256, 32, 8>(long const*, int*, int*, int*, bool*, int)",
           "void at::native::dispatch<float>(float*)",
           "dispatch_kernel",
           "combine_kernel<float>",
           "void at::native::vectorized_elementwise_kernel<4, combine<float>>(int)",
           "moe_align_block_size_kernel",
           "void at::native::elementwise_kernel<128, 2, nccl_like_functor>",
           "void cutlass::Kernel<userbuffers_like>(Params)",
           "fused_moe_kernel",
           "void (anonymous namespace)::dispatch_kernel<float>(float*)",
           "void at::(anonymous namespace)::combine<float>(float*)",
           "void (anonymous namespace)::elementwise<nvshmem_like>(int)",
       }) {
    EXPECT_EQ(MatchCommKernel(name), nullptr) << name;
    EXPECT_EQ(Kernel(name), WorkClass::kCompute) << name;
  }
}

TEST(CommKernelRulesTest, CustomAllReduceAndLibraryKernels) {
  EXPECT_EQ(FamilyOf("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals)"),
            "vLLM/SGLang custom all-reduce");
  EXPECT_EQ(FamilyOf("void sglang::cross_device_reduce_2stage<__half, 4>(sglang::RankData*)"),
            "vLLM/SGLang custom all-reduce");
  EXPECT_EQ(FamilyOf("void tensorrt_llm::kernels::oneShotAllReduceKernel<__nv_bfloat16, 8, true>(AllReduceParams)"),
            "TensorRT-LLM custom all-reduce");
  EXPECT_EQ(FamilyOf("void tensorrt_llm::kernels::twoShotAllReduceKernel<float, 4>(AllReduceParams)"),
            "TensorRT-LLM custom all-reduce");
  EXPECT_EQ(FamilyOf("void mscclpp::allreduce8<__half>(__half*, mscclpp::DeviceHandle*)"), "MSCCL++");
  EXPECT_EQ(FamilyOf("nvshmemi_transfer_rma_kernel"), "NVSHMEM");
  EXPECT_EQ(FamilyOf("void userbuffers_fp16_sum_inplace_gpu_rw_ag<2>(int, int, int)"),
            "Transformer Engine userbuffers");
  EXPECT_EQ(FamilyOf("kuserbuffers_pushrecv(int, int, int*)"), "Transformer Engine userbuffers");
  EXPECT_EQ(FamilyOf("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"), "NCCL");
  EXPECT_EQ(FamilyOf("mscclKernel_Sum_float_LL128(int, int)"), "MSCCL");
  EXPECT_EQ(FamilyOf("void flashinfer::trtllm_allreduce_fusion::allreduce_fusion_kernel_oneshot_lamport<"
                     "(flashinfer::trtllm_allreduce_fusion::AllReduceFusionPattern)1, __nv_bfloat16, 8, false, false>"
                     "(flashinfer::trtllm_allreduce_fusion::AllReduceFusionParams<__nv_bfloat16>)"),
            "TensorRT-LLM / FlashInfer all-reduce fusion");
  EXPECT_EQ(FamilyOf("quickreduce::allreduce_prototype_twoshot<AllReduceTwoshot<__half, CodecQ4<__half,4>, true>, "
                     "__half>"),
            "vLLM/SGLang/AITER quick all-reduce (ROCm)");
  EXPECT_EQ(FamilyOf("void c10d::symmetric_memory::one_shot_all_reduce_kernel<float, 16>(float**, float*)"),
            "PyTorch symmetric memory all-reduce");
  EXPECT_EQ(FamilyOf("void c10d::symmetric_memory::multimem_one_shot_all_reduce_kernel<float, 16>(float*)"),
            "PyTorch symmetric memory all-reduce");
  // As PyTorch 2.x writes it in a real B200 trace: the anonymous namespace's parenthesis opens no argument list.
  EXPECT_EQ(FamilyOf("void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, "
                     "unsigned long, unsigned int**, unsigned long, unsigned long)"),
            "PyTorch symmetric memory all-reduce");
  EXPECT_EQ(Kernel("void vllm::cross_device_reduce_1stage<float, 2>(vllm::RankData*)"), WorkClass::kCommunication);
  EXPECT_EQ(Kernel("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"), WorkClass::kCommunication);
}

TEST(CommKernelRulesTest, AscendMc2OperatorsAreFusedComm) {
  for (std::string_view name : {"MatmulAllReduce", "aclnnMatmulAllReduce_MatmulAllReduce_MatmulAllReduce",
                                "AllGatherMatmul", "aclnnMatmulReduceScatter", "MoeDistributeDispatch",
                                "aclnnMoeDistributeDispatchV2_MoeDistributeDispatchV2", "MoeDistributeCombineV2"}) {
    const CommKernelRule* rule = MatchCommKernel(name);
    ASSERT_NE(rule, nullptr) << name;
    EXPECT_EQ(rule->family, "Ascend MC2") << name;
    EXPECT_EQ(rule->kind, CommKernelKind::kFusedComm) << name;
    EXPECT_EQ(Kernel(name), WorkClass::kFusedComm) << name;
  }
  EXPECT_TRUE(MatchCommKernel("MoeDistributeCombine")->expert_parallel);
  EXPECT_EQ(MatchCommKernel("AllGatherMatmul")->collective, "allgather");
  EXPECT_EQ(MatchCommKernel("MatMulV2"), nullptr);
  EXPECT_EQ(MatchCommKernel("GroupedMatmul"), nullptr);
}

TEST(CommKernelRulesTest, EveryRowHasAFamilyAndASource) {
  for (const CommKernelRule& rule : CommKernelRules()) {
    EXPECT_FALSE(rule.pattern.empty());
    EXPECT_FALSE(rule.family.empty()) << rule.pattern;
    EXPECT_FALSE(rule.source.empty()) << rule.pattern;
    EXPECT_TRUE(rule.match != CommKernelMatch::kTemplatedHead || !rule.scope.empty()) << rule.pattern;
  }
}

// The row docs/advisor.md gives a rule, exactly.
std::string DocRow(const CommKernelRule& rule) {
  return fmt::format("| `{}` | {} | {} | {} | {} | {} | {} | {} |", rule.pattern, CommKernelMatchName(rule.match),
                     rule.scope.empty() ? "—" : fmt::format("`{}`", rule.scope),
                     rule.kind == CommKernelKind::kFusedComm ? "fused comm" : "communication",
                     rule.collective.empty() ? "from the name" : rule.collective, rule.family,
                     rule.expert_parallel ? "yes" : "no", rule.source);
}

TEST(CommKernelRulesTest, DocsListEveryRowAndNoOther) {
  std::vector<std::string> rows;
  for (const CommKernelRule& rule : CommKernelRules()) rows.push_back(DocRow(rule));
  ExpectDocumentedRows("advisor.md", "## Communication kernels", rows);
}

}  // namespace
}  // namespace tuneprof
