// From the per-process sinks to ranks: host names, the collectives NCCL's ranges describe, the ranks'
// numbers and their finished traces.
#include <algorithm>

#include "importers/nsys/nsys_import_state.h"

namespace tuneprof::nsys_import {

RankSink* NsysImporter::RankWithHost(int64_t pid) {
  RankSink* sink = per_process_ ? (by_pid_.contains(pid) ? by_pid_[pid] : nullptr) : sinks_.front().get();
  return sink != nullptr && sink->host_pids.contains(pid) ? sink : nullptr;
}

Status NsysImporter::NameHosts() {
  if (HasRequired(kProcesses, {"globalPid", "name"})) {
    TP_ASSIGN_OR_RETURN(SqliteStatement row, db_.Prepare("SELECT globalPid, name FROM PROCESSES"));
    TP_RETURN_IF_ERROR(EachRow(row, [&] {
      if (row.SkipIllTyped({0})) return;
      const int64_t pid = ProcessOf(row.Int(0));
      if (RankSink* sink = RankWithHost(pid)) sink->builder.SetProcessName(ProcessKey{HostKey(pid)}, row.Text(1));
    }));
  }
  if (HasRequired(kThreadNames, {"nameId", "globalTid"})) {
    TP_ASSIGN_OR_RETURN(SqliteStatement row, db_.Prepare("SELECT globalTid, nameId FROM ThreadNames"));
    TP_RETURN_IF_ERROR(EachRow(row, [&] {
      if (row.SkipIllTyped({0})) return;
      const int64_t global_tid = row.Int(0);
      RankSink* sink = RankWithHost(ProcessOf(global_tid));
      if (sink == nullptr) return;
      sink->builder.SetThreadName(ProcessKey{HostKey(ProcessOf(global_tid))}, ProcessKey{ThreadOf(global_tid)},
                                  sink->builder.str(StringOf(*sink, row.OptionalInt(1))));
    }));
  }
  return Status::Ok();
}

void NsysImporter::TagCollectives(RankSink& sink) {
  TraceBuilder& builder = sink.builder;
  const EventTable& e = builder.partial().events();
  std::unordered_map<uint32_t, std::vector<uint32_t>> pytorch_ranges;  // host track -> "nccl:" ranges
  std::unordered_map<uint32_t, std::vector<uint32_t>> api_ranges;      // host track -> NCCL API ranges
  std::unordered_map<int64_t, uint32_t> launch;                        // correlation -> host call
  for (uint32_t i = 0; i < e.size(); ++i) {
    const bool range = e.kind[i] == EventKind::kHostOp || e.kind[i] == EventKind::kUserAnnotation;
    const std::string_view name = builder.str(e.name[i]);
    if (range && name.starts_with("nccl:")) {
      pytorch_ranges[e.track[i]].push_back(i);
    } else if (range && nsys::IsNcclApiRange(name)) {
      api_ranges[e.track[i]].push_back(i);
    } else if ((e.kind[i] == EventKind::kRuntime || e.kind[i] == EventKind::kDriver) && e.correlation[i] != kNoId) {
      launch.emplace(e.correlation[i], i);
    }
  }
  if (pytorch_ranges.empty() && sink.nccl_payloads.empty()) return;
  auto by_start = [&](uint32_t a, uint32_t b) { return e.ts_ns[a] < e.ts_ns[b]; };
  for (auto* ranges_by_thread : {&pytorch_ranges, &api_ranges}) {
    for (auto& [track, ranges] : *ranges_by_thread) std::stable_sort(ranges.begin(), ranges.end(), by_start);
  }
  std::unordered_map<std::string, int64_t> ranks_of_comm;
  for (const auto& [event, payload] : sink.nccl_payloads) {
    if (payload.ranks >= 1 && !payload.comm.empty()) ranks_of_comm[payload.comm] = payload.ranks;
  }
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (e.kind[i] != EventKind::kKernel || e.correlation[i] == kNoId) continue;
    if (builder.str(e.name[i]).find("nccl") == std::string_view::npos) continue;
    auto call = launch.find(e.correlation[i]);
    if (call == launch.end()) continue;
    const uint32_t thread = e.track[call->second];
    const int64_t at = e.ts_ns[call->second];
    CollectiveInfo info;
    info.event = i;
    bool tagged = false;
    if (auto on_thread = pytorch_ranges.find(thread); on_thread != pytorch_ranges.end()) {
      if (const size_t at_range = Innermost(e, on_thread->second, at); at_range != kNone) {
        std::string_view op = builder.str(e.name[on_thread->second[at_range]]).substr(5);
        info.collective = builder.Intern(op.substr(0, op.find_first_of(", ")));
        tagged = true;
      }
    }
    if (auto on_thread = api_ranges.find(thread); on_thread != api_ranges.end()) {
      tagged = SizeFromNcclRanges(sink, on_thread->second, Innermost(e, on_thread->second, at), ranks_of_comm, &info) ||
               tagged;
    }
    if (tagged) builder.AddCollectiveInfo(info);
  }
}

bool NsysImporter::SizeFromNcclRanges(RankSink& sink, const std::vector<uint32_t>& ranges, size_t at_range,
                                      const std::unordered_map<std::string, int64_t>& ranks_of_comm,
                                      CollectiveInfo* info) {
  if (at_range == kNone) return false;
  TraceBuilder& builder = sink.builder;
  const EventTable& e = builder.partial().events();
  const uint32_t range = ranges[at_range];
  std::vector<uint32_t> calls;
  bool whole_group = true;
  if (builder.str(e.name[range]) == "ncclGroupEnd") {
    whole_group = GroupCalls(builder, ranges, at_range, &calls);
    const bool sends =
        std::any_of(calls.begin(), calls.end(), [&](uint32_t c) { return builder.str(e.name[c]) == "ncclSend"; });
    if (sends) std::erase_if(calls, [&](uint32_t c) { return builder.str(e.name[c]) != "ncclSend"; });
  } else {
    calls.push_back(range);
  }
  if (calls.empty()) return false;
  // Unknown unless every call is sized, the whole group was found, and the group used one communicator:
  // a group over several launches one kernel per communicator, and which kernel is whose is not here.
  int64_t bytes = whole_group ? 0 : kNoId;
  std::string comm;
  for (uint32_t c : calls) {
    auto payload = sink.nccl_payloads.find(c);
    if (payload == sink.nccl_payloads.end() || payload->second.bytes < 0 ||
        (!comm.empty() && payload->second.comm != comm)) {
      bytes = kNoId;
      break;
    }
    if (bytes != kNoId) bytes += payload->second.bytes;
    if (comm.empty()) comm = payload->second.comm;
  }
  const std::string_view api = builder.str(e.name[calls.front()]).substr(4);  // "AllGather"
  if (info->collective.value == 0) {
    std::string word(api);
    std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::tolower(c); });
    info->collective = builder.Intern(word);
  }
  auto ranks = ranks_of_comm.find(comm);
  if (ranks != ranks_of_comm.end()) info->group_size = ranks->second;
  GroupFromCommunicator(sink, calls, info);
  if (bytes != kNoId && (api == "AllGather" || api == "ReduceScatter")) {
    bytes = info->group_size == kNoId ? kNoId : bytes * info->group_size;
  }
  info->bytes = bytes;
  return true;
}

void NsysImporter::GroupFromCommunicator(RankSink& sink, const std::vector<uint32_t>& calls, CollectiveInfo* info) {
  std::string comm;
  int64_t peer = -2;  // -2: none seen yet; -1: unknown or the calls disagree
  for (uint32_t c : calls) {
    auto payload = sink.nccl_payloads.find(c);
    if (payload == sink.nccl_payloads.end() || payload->second.comm.empty() ||
        (!comm.empty() && payload->second.comm != comm)) {
      return;
    }
    comm = payload->second.comm;
    peer = peer == -2 || peer == payload->second.peer ? payload->second.peer : -1;
  }
  TraceBuilder& builder = sink.builder;
  info->group_name = builder.Intern(comm);
  auto found = communicators_.find(comm);
  if (found == communicators_.end()) return;
  const std::string members = MembersText(found->second);
  if (members.empty()) return;
  info->group_ranks = builder.Intern(members);
  if (peer >= 0) {
    auto place = found->second.member.find(peer);
    // A peer that is the caller itself is a payload no NCCL call writes: no peer.
    const auto own = rank_of_sink_.find(&sink);
    if (place != found->second.member.end() && own != rank_of_sink_.end() && place->second != own->second) {
      info->peer_rank = place->second;
    }
  }
}

bool NsysImporter::GroupCalls(const TraceBuilder& builder, const std::vector<uint32_t>& ranges, size_t end,
                              std::vector<uint32_t>* calls) {
  const EventTable& e = builder.partial().events();
  int depth = 0;
  bool found = false;
  for (size_t p = end, walked = 0; p > 0 && walked < kMaxRangesWalked && !found; ++walked) {
    const std::string_view name = builder.str(e.name[ranges[--p]]);
    if (name == "ncclGroupEnd") {
      ++depth;
    } else if (name == "ncclGroupStart") {
      found = depth == 0;
      if (depth > 0) --depth;
    } else if (IsCollectiveCall(name)) {
      calls->push_back(ranges[p]);
    }
  }
  std::reverse(calls->begin(), calls->end());
  return found;
}

bool NsysImporter::IsCollectiveCall(std::string_view name) {
  for (std::string_view call : {"ncclAllReduce", "ncclAllGather", "ncclReduceScatter", "ncclBroadcast", "ncclReduce",
                                "ncclSend", "ncclRecv", "ncclAlltoAll", "ncclGather", "ncclScatter"}) {
    if (name == call) return true;
  }
  return false;
}

size_t NsysImporter::Innermost(const EventTable& e, const std::vector<uint32_t>& ranges, int64_t ts) {
  size_t after = static_cast<size_t>(
      std::upper_bound(ranges.begin(), ranges.end(), ts, [&](int64_t t, uint32_t r) { return t < e.ts_ns[r]; }) -
      ranges.begin());
  size_t best = kNone;
  for (size_t walked = 0; after > 0 && walked < kMaxRangesWalked; ++walked) {
    const size_t p = --after;
    if (e.end_ns(ranges[p]) < ts) continue;
    if (best == kNone || e.dur_ns[ranges[p]] < e.dur_ns[ranges[best]]) best = p;
  }
  return best;
}

void NsysImporter::WarnAboutSkippedRows(RankSink& sink) {
  if (sink.skipped_rows > 0) {
    sink.builder.Warn(fmt::format("{}: {} rows without a start or an end, or ending before they start, were skipped",
                                  db_.path(), sink.skipped_rows));
  }
  if (sink.dangling_strings > 0) {
    sink.builder.Warn(
        fmt::format("{}: {} names refer to StringIds rows that do not exist", db_.path(), sink.dangling_strings));
  }
}

void NsysImporter::AddGpus(RankSink& sink) {
  for (const GpuRow& gpu : gpus_) {
    if (per_process_ && !sink.devices.contains(gpu.device.id)) continue;
    Device d = gpu.device;
    d.name = sink.builder.Intern(gpu.name);
    sink.builder.AddDevice(d);
    // Peaks the model has no field for stay readable as producer settings (bandwidth is B/s, REAL).
    std::vector<MetadataEntry>& entries = sink.builder.mutable_metadata()->entries;
    if (gpu.memory_bandwidth) {
      entries.push_back(
          {fmt::format("nsys.gpu.{}.memory_bandwidth_bytes_per_s", d.id), std::to_string(*gpu.memory_bandwidth)});
    }
    if (gpu.clock_rate) {
      entries.push_back({fmt::format("nsys.gpu.{}.clock_rate_hz", d.id), std::to_string(*gpu.clock_rate)});
    }
    ++sink.rows_read;
  }
}

std::vector<int64_t> NsysImporter::NamedRanks() const {
  std::vector<int64_t> ranks;
  std::set<int64_t> seen;
  for (const auto& sink : sinks_) {
    if (sink->named_ranks.size() != 1 || !seen.insert(*sink->named_ranks.begin()).second) return {};
    ranks.push_back(*sink->named_ranks.begin());
  }
  return ranks;
}

void NsysImporter::NumberRank(RankSink& sink, size_t position, const std::vector<int64_t>& named) {
  TraceMetadata* meta = sink.builder.mutable_metadata();
  if (!per_process_) {
    if (sink.named_ranks.size() == 1) meta->distributed.rank = *sink.named_ranks.begin();
    tuneprof::SettleRank(meta);
    return;
  }
  meta->entries.push_back({"nsys.pid", std::to_string(sink.pid)});
  if (!named.empty()) {
    meta->distributed.rank = named[position];
    tuneprof::SettleRank(meta);
    meta->entries.push_back({"nsys.rank_source", "NVTX text naming the rank"});
    return;
  }
  // Said as a fact, not a warning: the export has nothing better, and a launcher that starts its
  // workers in rank order (torchrun loops over local ranks) gives them increasing pids.
  std::string pids;
  for (const auto& s : sinks_) pids += (pids.empty() ? "" : ", ") + std::to_string(s->pid);
  meta->rank = static_cast<int64_t>(position);
  meta->rank_source = RankSource::kDefault;
  meta->entries.push_back({"nsys.rank_source", fmt::format("process order: {} processes with device work (pids {}) "
                                                           "and no rank named in the export",
                                                           sinks_.size(), pids)});
}

Result<std::vector<Trace>> NsysImporter::FinishRanks() {
  if (rows_of_other_processes_ > 0) {
    Entry("nsys.rows_of_processes_without_device_work",
          fmt::format("{} (not read: each rank is a process that ran device work)", rows_of_other_processes_));
  }
  const std::vector<int64_t> named = per_process_ ? NamedRanks() : std::vector<int64_t>();
  // One export is one machine's capture: the GPUs it lists, or those its processes ran on.
  std::set<int64_t> gpus(device_ids_.begin(), device_ids_.end());
  for (const auto& sink : sinks_) gpus.insert(sink->devices.begin(), sink->devices.end());
  export_gpus_ = static_cast<int64_t>(gpus.size());
  if (per_process_) CollectCommunicators(named);
  std::vector<Trace> traces;
  for (size_t i = 0; i < sinks_.size(); ++i) traces.push_back(FinishRank(*sinks_[i], i, named));
  std::stable_sort(traces.begin(), traces.end(),
                   [](const Trace& a, const Trace& b) { return a.metadata().rank < b.metadata().rank; });
  return traces;
}

void NsysImporter::CollectCommunicators(const std::vector<int64_t>& named) {
  for (size_t i = 0; i < sinks_.size(); ++i) {
    const int64_t rank = named.empty() ? static_cast<int64_t>(i) : named[i];
    rank_of_sink_[sinks_[i].get()] = rank;
    for (const auto& [event, payload] : sinks_[i]->nccl_payloads) {
      if (payload.comm.empty() || payload.ranks < 1 || payload.rank < 0 || payload.rank >= payload.ranks) continue;
      Communicator& c = communicators_[payload.comm];
      if (c.ranks != -1 && c.ranks != payload.ranks) c.conflicting = true;
      c.ranks = payload.ranks;
      auto [place, added] = c.member.emplace(payload.rank, rank);
      if (!added && place->second != rank) c.conflicting = true;
    }
  }
}

std::string NsysImporter::MembersText(const Communicator& c) {
  if (c.conflicting || static_cast<int64_t>(c.member.size()) != c.ranks) return "";
  std::string text = "[";
  for (const auto& [place, rank] : c.member) text += fmt::format("{}{}", text.size() > 1 ? ", " : "", rank);
  return text + "]";
}

Trace NsysImporter::FinishRank(RankSink& sink, size_t position, const std::vector<int64_t>& named) {
  TraceMetadata* meta = sink.builder.mutable_metadata();
  meta->format = TraceFormat::kNsysSqlite;
  meta->file_bytes = file_bytes_;
  meta->content_bytes = file_bytes_;
  meta->entries = entries_;
  if (export_gpus_ > 0) meta->node_gpus = export_gpus_;
  // What the export as a whole lacks is said once, with the lowest pid's rank.
  if (position == 0) {
    for (const std::string& warning : warnings_) sink.builder.Warn(warning);
  }
  AddGpus(sink);
  TagCollectives(sink);
  if (sink.nccl_ranges > 0) {
    // Read by the communication-bandwidth check: sizes left out of an export are one re-export away.
    meta->entries.push_back(
        {std::string(kNcclPayloadsEntry),
         fmt::format("{} of this rank's {} NCCL API ranges carry a payload{}", sink.nccl_payloads.size(),
                     sink.nccl_ranges, nccl_sizes_registered_ ? "; NCCL registered message-size schemas" : "")});
  }
  WarnAboutSkippedRows(sink);
  meta->entry_count = sink.rows_read;
  NumberRank(sink, position, named);
  const nsys::RangeSteps steps = nsys::StepsFromRepeatingRanges(sink.builder.partial(), sink.nvtx_ranges);
  const size_t events_before = sink.builder.partial().events().size();
  Trace trace = sink.builder.Finish();
  if (trace.steps().empty() && !steps.steps.empty()) AddSteps(&trace, steps, events_before);
  return trace;
}

void NsysImporter::AddSteps(Trace* trace, const nsys::RangeSteps& steps, size_t events_before) {
  SideTableBuilder side(trace);
  const bool indices_hold = trace->events().size() == events_before;
  for (Step step : steps.steps) {
    if (!indices_hold) step.event = kNoIndex;
    side.AddStep(step);
  }
  side.AddMetadataEntry("nsys.steps", steps.source);
}

}  // namespace tuneprof::nsys_import
