// config.ascend_env (msprof-analyze Environment Variable check): torch_npu's profiler_metadata records
// the run's environment. Checked: PYTORCH_NPU_ALLOC_CONF without expandable_segments:True,
// ASCEND_LAUNCH_BLOCKING=1, ACLNN_CACHE_LIMIT unset or < 10000, HOST_CACHE_CAPACITY unset or 0,
// HCCL_ALGO set, ASCEND_GLOBAL_LOG_LEVEL set below 3, HCCL_RDMA_TC or HCCL_RDMA_SL set (msprof-analyze
// names them whenever set: a traffic class or service level that differs from the switch's PFC / DSCP
// configuration slows every RDMA transfer, and the trace cannot tell whether they match). Only fires when
// the trace carries ENV_VARIABLES.
// Gain: ASCEND_LAUNCH_BLOCKING=1 serializes every launch, so it costs the host-wait time; the others are
// not measurable from the trace (0, said so).
#include <fmt/format.h>

#include <cstdlib>
#include <optional>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

constexpr std::string_view kEnvPrefix = "profiler_metadata.ENV_VARIABLES.";

std::optional<std::string> EnvValue(const Trace& trace, std::string_view name) {
  for (const MetadataEntry& entry : trace.metadata().entries) {
    if (entry.key.size() == kEnvPrefix.size() + name.size() && entry.key.starts_with(kEnvPrefix) &&
        entry.key.ends_with(name)) {
      return entry.value;
    }
  }
  return std::nullopt;
}

bool HasEnvironment(const Trace& trace) {
  for (const MetadataEntry& entry : trace.metadata().entries) {
    if (entry.key.starts_with(kEnvPrefix)) return true;
  }
  return false;
}

double Number(const std::optional<std::string>& value) {
  return value && !value->empty() ? std::strtod(value->c_str(), nullptr) : 0;
}

// ASCEND_LAUNCH_BLOCKING=1: every launch waits for its operator.
bool LaunchBlocking(const Trace& trace) {
  const auto blocking = EnvValue(trace, "ASCEND_LAUNCH_BLOCKING");
  return blocking && *blocking == "1";
}

// What msprof-analyze would change in the environment: each problem with its fix.
struct EnvironmentAdvice {
  std::vector<std::string> problems, fixes;
  void Add(std::string problem, std::string fix) {
    problems.push_back(std::move(problem));
    fixes.push_back(std::move(fix));
  }
};

// The allocator, launch and operator-cache settings.
void CheckRuntimeSettings(const Trace& trace, EnvironmentAdvice* advice) {
  const auto alloc = EnvValue(trace, "PYTORCH_NPU_ALLOC_CONF");
  if (!alloc || alloc->find("expandable_segments:True") == std::string::npos) {
    advice->Add("PYTORCH_NPU_ALLOC_CONF lacks expandable_segments:True",
                "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True");
  }
  if (LaunchBlocking(trace)) {
    advice->Add("ASCEND_LAUNCH_BLOCKING=1 makes every launch synchronous", "unset ASCEND_LAUNCH_BLOCKING");
  }
  const auto cache = EnvValue(trace, "ACLNN_CACHE_LIMIT");
  if (!cache || cache->empty() || Number(cache) < 10000) {
    advice->Add("ACLNN_CACHE_LIMIT unset or below 10000", "export ACLNN_CACHE_LIMIT=100000");
  }
  const auto host_cache = EnvValue(trace, "HOST_CACHE_CAPACITY");
  if (!host_cache || host_cache->empty() || Number(host_cache) == 0) {
    advice->Add("HOST_CACHE_CAPACITY unset or 0", "export HOST_CACHE_CAPACITY=20");
  }
}

// The communication and logging settings.
void CheckHcclSettings(const Trace& trace, EnvironmentAdvice* advice) {
  const auto algo = EnvValue(trace, "HCCL_ALGO");
  if (algo && !algo->empty()) {
    advice->Add("HCCL_ALGO is set (" + *algo + "), overriding HCCL's algorithm choice", "unset HCCL_ALGO");
  }
  const auto rdma_tc = EnvValue(trace, "HCCL_RDMA_TC");
  if (rdma_tc && !rdma_tc->empty()) {
    advice->Add("HCCL_RDMA_TC is set (" + *rdma_tc +
                    "): the RoCE traffic class (DSCP x 4, default 132) must match the switch's DSCP setting",
                "check HCCL_RDMA_TC against the switch's DSCP-to-priority map, or unset it");
  }
  const auto rdma_sl = EnvValue(trace, "HCCL_RDMA_SL");
  if (rdma_sl && !rdma_sl->empty()) {
    advice->Add("HCCL_RDMA_SL is set (" + *rdma_sl +
                    "): the RDMA NIC priority (0-7, default 4) must equal the NIC's PFC priority",
                "check HCCL_RDMA_SL against the NIC's PFC priority, or unset it");
  }
  const auto log_level = EnvValue(trace, "ASCEND_GLOBAL_LOG_LEVEL");
  if (log_level && !log_level->empty() && Number(log_level) < 3) {
    advice->Add("ASCEND_GLOBAL_LOG_LEVEL=" + *log_level + " logs below ERROR level",
                "export ASCEND_GLOBAL_LOG_LEVEL=3");
  }
}

}  // namespace

void RuleAscendEnvironment(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const Trace& trace = *rank.trace;
  if (!HasEnvironment(trace)) return;
  EnvironmentAdvice advice;
  CheckRuntimeSettings(trace, &advice);
  CheckHcclSettings(trace, &advice);
  const std::vector<std::string>& problems = advice.problems;
  const std::vector<std::string>& fixes = advice.fixes;
  const bool launch_blocking = LaunchBlocking(trace);
  if (problems.empty()) return;
  Finding f = NewFinding("config.ascend_env", rank, config);
  f.title = fmt::format("{} environment settings slow the run down", problems.size());
  f.value = static_cast<double>(problems.size());
  f.uncapped_gain_ns = launch_blocking ? rank.split.part(TimePart::kHostWait) : 0;
  f.gain_model = launch_blocking ? "ASCEND_LAUNCH_BLOCKING=1: the host-wait time it causes; the rest unknown"
                                 : "unknown: the effect of these settings is not measurable from the trace";
  for (size_t i = 0; i < problems.size(); ++i) f.AddText(fmt::format("setting_{}", i + 1), problems[i]);
  f.apis.assign(fixes.begin(), fixes.end());
  out->push_back(std::move(f));
}

}  // namespace tuneprof
