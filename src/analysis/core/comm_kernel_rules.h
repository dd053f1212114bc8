#pragma once
// Which device kernels communicate, by name: one row per library or family of kernels, as data. Every row
// is listed in docs/advisor.md ("Communication kernels"), and a unit test checks the two agree.
//
// Most libraries name their kernels unambiguously (nccl*, cross_device_reduce_*); a few use bare verbs
// that ordinary kernels could also use (DeepEP's `dispatch` and `combine`). Those rows match only a
// templated function whose unqualified name is exactly the pattern and whose namespace, when it has one,
// is the library's: `deep_ep::intranode::dispatch<8, 768>` and `dispatch<...>` match,
// `at::native::dispatch<...>`, `deep_ep::layout::get_dispatch_layout<...>` and `dispatch_kernel` do not.
#include <cstdint>
#include <span>
#include <string_view>

namespace tuneprof {

enum class CommKernelMatch : uint8_t {
  kPrefix,         // the whole name starts with the pattern
  kContains,       // the whole name contains it
  kNameContains,   // the function name (before template arguments and the argument list) contains it
  kTemplatedHead,  // the unqualified function name is the pattern, followed by template arguments
};

// What a matching kernel does: moves data only, or computes and communicates in one kernel.
enum class CommKernelKind : uint8_t { kCommunication, kFusedComm };

struct CommKernelRule {
  std::string_view pattern;
  CommKernelMatch match;
  std::string_view scope;  // kTemplatedHead: the namespace a qualified name must hold ("" = any)
  CommKernelKind kind;
  std::string_view collective;  // "allreduce", "alltoall", ...; "" = read the type from the name
  std::string_view family;      // the library: "NCCL", "DeepEP", "vLLM/SGLang custom all-reduce", ...
  bool expert_parallel;         // expert-parallel token dispatch / combine (an all-to-all)
  bool one_collective;          // each kernel is one collective (false: sub-tasks of an operator listed apart)
  std::string_view source;      // where the names were taken from
};

// Every row, first match wins.
std::span<const CommKernelRule> CommKernelRules();

// The first row `name` matches, or nullptr for a kernel that does not communicate.
const CommKernelRule* MatchCommKernel(std::string_view name);

std::string_view CommKernelMatchName(CommKernelMatch match);

}  // namespace tuneprof
