// msprof-analyze's schedule checks on the timeline's host API events, one rule each. Names are matched
// as trace_view writes them ("AscendCL@aclrtFree", "Node@launch") and as the db's CANN_API does (the
// part after '@': "aclrtFree", "launch"). Counts and times are over the whole trace, as msprof-analyze
// counts them; gains are per step.
//  - host.op_compile (Operator Dispatch): AscendCL@aclopCompileAndExecute calls >= op_compile_count:
//    operators compiled online. Gain: their time, from the host wait.
//  - communication.sync_batchnorm (SyncBatchNorm): events named *syncbatchnorm* > sync_batchnorm_count.
//    Gain: unknown (the cross-device statistics exchange is not separated).
//  - host.synchronize_stream (Synchronize Stream): the share of Node@launch calls directly followed (in
//    time order, among launches and synchronizes) by an aclrtSynchronizeStream* call above
//    sync_stream_co_occurrence_pct: every launch waits, as ASCEND_LAUNCH_BLOCKING=1 does. Gain: the host wait.
//  - host.gc (GC): "GC" events (torch_npu's gc_detect_threshold) >= gc_event_us. Gain: their time.
//  - memory.allocator_api (Memory Operator): aclMallocMemInner + aclrtFreePhysical + aclrtFree time above
//    memory_operator_ms: the caching allocator keeps going back to the driver. Gain: their time.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

// The API name without trace_view's "AscendCL@" / "Node@" level prefix.
std::string_view ApiName(std::string_view name) {
  const size_t at = name.find('@');
  return at == std::string_view::npos ? name : name.substr(at + 1);
}

bool ContainsNoCase(std::string_view text, std::string_view needle) {
  auto it = std::search(text.begin(), text.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != text.end();
}

struct CallTally {
  uint64_t count = 0;
  double total_ns = 0;
  double max_ns = 0;
  void Add(int64_t dur) {
    ++count;
    const double d = static_cast<double>(std::max<int64_t>(dur, 0));
    total_ns += d;
    max_ns = std::max(max_ns, d);
  }
};

// Calls of the API `api` (after the level prefix), interval events only.
template <typename Match>
CallTally TallyEvents(const Trace& trace, Match match) {
  CallTally tally;
  const EventTable& events = trace.events();
  // Each distinct name is matched once: names repeat on every step.
  std::vector<int8_t> matches(trace.strings().size(), -1);
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events.dur_ns[i] < 0) continue;
    int8_t& matched = matches[events.name[i].value];
    if (matched < 0) matched = match(trace.str(events.name[i])) ? 1 : 0;
    if (matched == 1) tally.Add(events.dur_ns[i]);
  }
  return tally;
}

// "<name>_calls", "<name>_us" and "<name>_us_per_step": the evidence of a rule about time in API calls.
void AddCallTimeNumbers(const RankEvidence& rank, std::string_view name, const CallTally& calls, Finding* f) {
  const std::string prefix(name);
  f->AddNumber(prefix + "_calls", static_cast<double>(calls.count), "count");
  f->AddNumber(prefix + "_us", calls.total_ns / 1e3, "us");
  f->AddNumber(prefix + "_us_per_step", PerStep(rank, calls.total_ns) / 1e3, "us");
}

}  // namespace

void RuleAscendOpCompile(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const CallTally calls =
      TallyEvents(*rank.trace, [](std::string_view name) { return ApiName(name) == "aclopCompileAndExecute"; });
  const double limit = config.Get(threshold::kOpCompileCount);
  if (calls.count == 0 || static_cast<double>(calls.count) < limit) return;
  Finding f = NewFinding("host.op_compile", rank, config);
  f.title = fmt::format("{} operators compiled online (aclopCompileAndExecute, {})", calls.count,
                        FormatDuration(calls.total_ns));
  f.value = static_cast<double>(calls.count);
  f.uncapped_gain_ns = PerStep(rank, calls.total_ns);
  AddCallTimeNumbers(rank, "compile", calls, &f);
  out->push_back(std::move(f));
}

void RuleSyncBatchNorm(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const CallTally calls =
      TallyEvents(*rank.trace, [](std::string_view name) { return ContainsNoCase(name, "syncbatchnorm"); });
  const double limit = config.Get(threshold::kSyncBatchNormCount);
  if (static_cast<double>(calls.count) <= limit) return;
  Finding f = NewFinding("communication.sync_batchnorm", rank, config);
  f.title = fmt::format("{} SyncBatchNorm events ({})", calls.count, FormatDuration(calls.total_ns));
  f.value = static_cast<double>(calls.count);
  f.AddNumber("syncbn_events", static_cast<double>(calls.count), "count");
  f.AddNumber("syncbn_us", calls.total_ns / 1e3, "us");
  out->push_back(std::move(f));
}

void RuleSynchronizeStream(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const Trace& trace = *rank.trace;
  const EventTable& events = trace.events();
  std::vector<std::pair<int64_t, bool>> calls;  // ts, is a synchronize
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events.dur_ns[i] < 0) continue;
    const std::string_view name = trace.str(events.name[i]);
    const std::string_view api = ApiName(name);
    if (name == "Node@launch" || name == "launch") {
      calls.emplace_back(events.ts_ns[i], false);
    } else if (api.starts_with("aclrtSynchronizeStream")) {
      calls.emplace_back(events.ts_ns[i], true);
    }
  }
  std::stable_sort(calls.begin(), calls.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  uint64_t launches = 0, syncs = 0, pairs = 0;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (!calls[i].second) {
      ++launches;
      continue;
    }
    ++syncs;
    pairs += i > 0 && !calls[i - 1].second;
  }
  if (launches == 0) return;
  const double ratio_pct = 100.0 * static_cast<double>(pairs) / static_cast<double>(launches);
  if (ratio_pct <= config.Get(threshold::kSyncStreamCoOccurrencePct)) return;
  Finding f = NewFinding("host.synchronize_stream", rank, config);
  f.title = fmt::format("{:.0f} % of launches are followed by a stream synchronize", ratio_pct);
  f.value = ratio_pct;
  f.uncapped_gain_ns = rank.split.part(TimePart::kHostWait);
  f.AddNumber("launches", static_cast<double>(launches), "count");
  f.AddNumber("synchronizes", static_cast<double>(syncs), "count");
  f.AddNumber("launch_then_synchronize", static_cast<double>(pairs), "count");
  f.AddNumber("host_wait_us_per_step", rank.split.part(TimePart::kHostWait) / 1e3, "us");
  out->push_back(std::move(f));
}

void RuleGarbageCollection(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const int64_t min_ns = static_cast<int64_t>(config.Get(threshold::kGcEventUs) * 1e3);
  const Trace& trace = *rank.trace;
  CallTally gc;
  const EventTable& events = trace.events();
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events.dur_ns[i] >= min_ns && trace.str(events.name[i]) == "GC") gc.Add(events.dur_ns[i]);
  }
  if (gc.count == 0) return;
  Finding f = NewFinding("host.gc", rank, config);
  f.title = fmt::format("{} Python garbage collections of at least {:.0f} us ({} in all)", gc.count,
                        config.Get(threshold::kGcEventUs), FormatDuration(gc.total_ns));
  f.value = static_cast<double>(gc.count);
  f.uncapped_gain_ns = PerStep(rank, gc.total_ns);
  f.AddNumber("gc_events", static_cast<double>(gc.count), "count");
  f.AddNumber("gc_us", gc.total_ns / 1e3, "us");
  f.AddNumber("longest_gc_us", gc.max_ns / 1e3, "us");
  out->push_back(std::move(f));
}

void RuleAllocatorApi(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const CallTally calls = TallyEvents(*rank.trace, [](std::string_view name) {
    const std::string_view api = ApiName(name);
    return api == "aclMallocMemInner" || api == "aclrtFreePhysical" || api == "aclrtFree";
  });
  const double limit_ns = config.Get(threshold::kMemoryOperatorMs) * 1e6;
  if (calls.count == 0 || calls.total_ns <= limit_ns) return;
  Finding f = NewFinding("memory.allocator_api", rank, config);
  f.title = fmt::format("{} device allocator calls take {}", calls.count, FormatDuration(calls.total_ns));
  f.value = calls.total_ns / 1e6;
  f.uncapped_gain_ns = PerStep(rank, calls.total_ns);
  AddCallTimeNumbers(rank, "allocator", calls, &f);
  out->push_back(std::move(f));
}

}  // namespace tuneprof
