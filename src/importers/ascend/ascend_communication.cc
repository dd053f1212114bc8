#include "importers/ascend/ascend_communication.h"

#include <simdjson.h>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <system_error>
#include <utility>

#include "importers/ascend/communication_walker.h"
#include "io/byte_source.h"
#include "io/memory_source.h"

namespace tuneprof {
namespace {

namespace od = simdjson::ondemand;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::string_view kTotalOpInfo = "Total Op Info";

// ---- the figures checked against the steps

double Or0(double value) { return std::isfinite(value) ? value : 0.0; }

// How long step N lasted on the host (ProfilerStep#N) or on the device (step_trace_time's Stage + Bubble:
// Stage leaves out the pipeline's receive waits, which are ops of the step; else its Computing +
// Communication(Not Overlapped) + Free), the longer of the two; 0 where unknown.
double StepLengthNs(const Trace& trace, int64_t number) {
  int64_t longest = 0;
  for (const Step& step : trace.steps()) {
    if (step.number == number) longest = std::max(longest, step.end_ns - step.start_ns);
  }
  for (const ReportedStepTime& row : trace.reported_step_times()) {
    if (row.step != number) continue;
    int64_t stage = row.stage_ns;
    if (stage != kNoId && row.bubble_ns != kNoId && row.bubble_ns > 0) stage += row.bubble_ns;
    if (stage == kNoId) {
      stage = 0;
      for (int64_t part : {row.computing_ns, row.communication_not_overlapped_ns, row.free_ns}) {
        if (part != kNoId) stage += part;
      }
    }
    longest = std::max(longest, stage);
  }
  return static_cast<double>(longest);
}

// All the steps the trace knows, end to end: the bound for "step" (a run without a schedule) and for a
// step key the trace does not hold.
double AllStepsNs(const Trace& trace) {
  std::set<int64_t> numbers;
  for (const Step& step : trace.steps()) numbers.insert(step.number);
  for (const ReportedStepTime& row : trace.reported_step_times()) {
    if (row.step != kNoId) numbers.insert(row.step);
  }
  double total = 0;
  for (int64_t number : numbers) total += StepLengthNs(trace, number);
  return total;
}

// The length the ops of step `key` ("step50") must fit in; 0 where the trace knows no step.
double StepBoundNs(const Trace& trace, std::string_view key) {
  int64_t number = 0;
  if (key.starts_with("step")) {
    const std::string_view digits = key.substr(4);
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
    if (error == std::errc() && end == digits.data() + digits.size() && !digits.empty()) {
      const double length = StepLengthNs(trace, number);
      if (length > 0) return length;
    }
  }
  return AllStepsNs(trace);
}

// What an impossible step cannot tell: how its ops' time splits into transit, wait, synchronization and
// idle. Their start, elapse and per-transport sizes and transit times are other fields and stand.
void DropSplit(HcclOpTime* op) {
  op->split_dropped = true;
  for (double* field : {&op->transit_ms, &op->wait_ms, &op->synchronization_ms, &op->idle_ms, &op->wait_ratio,
                        &op->synchronization_ratio}) {
    *field = kNaN;
  }
}

// One HCCL group runs its ops one after another, so their wait and transit within a step cannot add up
// past the step. A file whose step does (a damaged or doctored file: 200,000 ops waiting 1,129 s in a
// 156 ms step) cannot hold that step's true split: it is dropped, not clamped to the step, which would
// report a wait no one measured, and a warning says so. The ops stay, with their sizes and bandwidths.
void DropSplitOfStepsTheirOpsOutlast(std::string_view origin, SideTableBuilder* out) {
  const Trace& trace = out->trace();
  CommunicationTables* tables = out->mutable_communication();
  std::map<std::pair<std::string_view, std::string_view>, double> busy_ms;  // (step, group) -> wait + transit
  std::set<std::string_view> steps;
  for (const HcclOpTime& op : tables->ops) {
    steps.insert(trace.str(op.step));
    if (!op.total) busy_ms[{trace.str(op.step), trace.str(op.group)}] += Or0(op.wait_ms) + Or0(op.transit_ms);
  }
  std::set<std::string_view> outlasting;
  std::string example;
  for (const auto& [key, ms] : busy_ms) {
    if (outlasting.contains(key.first)) continue;
    const double bound_ns = StepBoundNs(trace, key.first);
    if (bound_ns <= 0 || ms * 1e6 <= bound_ns) continue;
    outlasting.insert(key.first);
    if (example.empty()) {
      example = fmt::format("{}: group {} waits and transits {:.3f} ms in a {:.3f} ms step", key.first, key.second, ms,
                            bound_ns / 1e6);
    }
  }
  if (outlasting.empty()) return;
  // "Total Op Info" sums its section's ops: an entry, not an op, so it is not counted.
  size_t dropped_ops = 0;
  for (HcclOpTime& op : tables->ops) {
    if (!outlasting.contains(trace.str(op.step))) continue;
    DropSplit(&op);
    if (!op.total) ++dropped_ops;
  }
  out->Warn(
      fmt::format("{}: {} of its {} {} HCCL ops whose wait and transit add up past the step ({}); the transit, "
                  "wait, synchronization and idle times of {} {} are dropped, not clamped (unknown, left out "
                  "of every sum and ratio); their count, elapse, sizes and per-transport bandwidth are kept",
                  origin, outlasting.size(), steps.size(), steps.size() == 1 ? "step lists" : "steps list", example,
                  outlasting.size() == 1 ? "that step's" : "those steps'",
                  dropped_ops == 1 ? "1 op" : fmt::format("{} ops", dropped_ops)));
}

// A numeric field of an op or a link, by its key in the file.
struct NumberSlot {
  std::string_view key;
  double* field;
};

// One streaming pass over one file. Every error names the file and the key path where it happened.
class CommunicationReader {
 public:
  CommunicationReader(std::string_view origin, SideTableBuilder* out)
      : origin_(origin), out_(out), tables_(out->mutable_communication()) {}

  Status ReadOps(ByteSource* source) {
    tables_->ops_present = true;
    Status status =
        ForEachOp(source, [this](std::string_view step, bool p2p, std::string_view key, od::object& object) {
          return ReadOpFields(step, p2p, key, object, std::string(step) + "." + std::string(key));
        });
    if (status.ok()) DropSplitOfStepsTheirOpsOutlast(origin_, out_);
    return status;
  }

  Status ReadMatrix(ByteSource* source) {
    tables_->matrix_present = true;
    return ForEachOp(source, [this](std::string_view step, bool p2p, std::string_view key, od::object& links) {
      return ReadLinks(step, p2p, key, links);
    });
  }

  // One op's record, {"Communication Time Info": ..., "Communication Bandwidth Info": ...}, wherever it
  // was found (`where`, its key path for errors): cluster_communication.json holds the same records, one
  // per rank.
  Status ReadOp(std::string_view step, bool p2p, std::string_view key, od::object& object, const std::string& where) {
    tables_->ops_present = true;
    return ReadOpFields(step, p2p, key, object, where);
  }

  // After the last op: the check a whole file's ops get.
  void FinishOps() { DropSplitOfStepsTheirOpsOutlast(origin_, out_); }

 private:
  Status Fail(std::string_view where, simdjson::error_code error) const {
    return InvalidInput(std::string(origin_) + ": " + std::string(where) + ": " + simdjson::error_message(error));
  }

  // Both files share the outer levels {step: {"p2p"|"collective": {"<key>@<group>": value}}}: the
  // walker streams those, and each value (one op, a few kilobytes) is parsed on its own.
  template <typename Fn>
  Status ForEachOp(ByteSource* source, Fn on_op) {
    CommunicationWalker walker(source, origin_);
    return walker.Run(
        [&](std::string_view step, bool p2p, std::string_view key, simdjson::padded_string_view text) -> Status {
          const std::string where = std::string(step) + "." + std::string(key);
          od::document doc;
          od::object object;
          if (auto e = parser_.iterate(text).get(doc)) return Fail(where, e);
          if (auto e = doc.get_object().get(object)) return Fail(where, e);
          return on_op(step, p2p, key, object);
        });
  }

  // A number, or NaN for null; anything else is an error.
  Status Number(od::value value, std::string_view where, double* out) const {
    od::json_type type;
    if (auto e = value.type().get(type)) return Fail(where, e);
    if (type == od::json_type::null) {
      *out = kNaN;
      return Status();
    }
    if (auto e = value.get_double().get(*out)) return Fail(where, e);
    return Status();
  }

  // Calls visit(key, value) for each field of `object` in order, stopping at the first error; a field
  // that does not parse fails at `where`.
  template <typename Visit>
  Status ForEachField(od::object& object, std::string_view where, Visit visit) const {
    for (auto raw_field : object) {
      od::field field;
      std::string_view key;
      if (auto e = std::move(raw_field).get(field)) return Fail(where, e);
      if (auto e = field.unescaped_key().get(key)) return Fail(where, e);
      Status status = visit(key, field.value());
      if (!status.ok()) return status;
    }
    return Status();
  }

  // ForEachField over `value`, which must be an object.
  template <typename Visit>
  Status ForEachFieldOf(od::value value, std::string_view where, Visit visit) const {
    od::object object;
    if (auto e = value.get_object().get(object)) return Fail(where, e);
    return ForEachField(object, where, visit);
  }

  Status ReadOpFields(std::string_view step, bool p2p, std::string_view key, od::object& object,
                      const std::string& where) {
    HcclOpTime op;
    op.step = out_->Intern(step);
    op.p2p = p2p;
    op.total = key == kTotalOpInfo;
    const size_t at = key.find('@');
    op.op_name = out_->Intern(key.substr(0, at));
    op.group = out_->Intern(at == std::string_view::npos ? std::string_view() : key.substr(at + 1));
    op.first_traffic = static_cast<uint32_t>(tables_->traffic.size());
    Status status = ForEachField(object, where, [&](std::string_view part_key, od::value part) -> Status {
      if (part_key == "Communication Time Info") return ReadTimeInfo(part, where, &op);
      if (part_key == "Communication Bandwidth Info") return ReadBandwidthInfo(part, where);
      return Status();
    });
    if (!status.ok()) return status;
    op.traffic_count = static_cast<uint32_t>(tables_->traffic.size()) - op.first_traffic;
    tables_->ops.push_back(op);
    return Status();
  }

  Status ReadTimeInfo(od::value value, const std::string& where, HcclOpTime* op) {
    const NumberSlot slots[] = {
        {"Start Timestamp(us)", &op->start_us},
        {"Elapse Time(ms)", &op->elapse_ms},
        {"Transit Time(ms)", &op->transit_ms},
        {"Wait Time(ms)", &op->wait_ms},
        {"Synchronization Time(ms)", &op->synchronization_ms},
        {"Idle Time(ms)", &op->idle_ms},
        {"Wait Time Ratio", &op->wait_ratio},
        {"Synchronization Time Ratio", &op->synchronization_ratio},
    };
    return ReadNumbers(value, where + ".Communication Time Info", slots);
  }

  template <typename Slots>
  Status ReadNumbers(od::value value, const std::string& where, const Slots& slots, bool* has_distribution = nullptr) {
    return ForEachFieldOf(value, where, [&](std::string_view key, od::value item) -> Status {
      if (key == "Size Distribution" && has_distribution != nullptr) {
        Status status = ReadBuckets(item, where + "." + std::string(key));
        if (status.ok()) *has_distribution = true;
        return status;
      }
      for (const NumberSlot& slot : slots) {
        if (slot.key == key) return Number(item, where + "." + std::string(key), slot.field);
      }
      return Status();
    });
  }

  Status ReadBandwidthInfo(od::value value, const std::string& where) {
    const std::string here = where + ".Communication Bandwidth Info";
    return ForEachFieldOf(value, here, [&](std::string_view transport_key, od::value transport) -> Status {
      HcclTransportTraffic traffic;
      traffic.transport = out_->Intern(transport_key);
      traffic.first_bucket = static_cast<uint32_t>(tables_->buckets.size());
      const NumberSlot slots[] = {
          {"Transit Size(MB)", &traffic.transit_size_mb},
          {"Transit Time(ms)", &traffic.transit_time_ms},
          {"Bandwidth(GB/s)", &traffic.bandwidth_gbps},
          {"Large Packet Ratio", &traffic.large_packet_ratio},
      };
      bool has_distribution = false;
      Status status = ReadNumbers(transport, here + "." + std::string(transport_key), slots, &has_distribution);
      if (!status.ok()) return status;
      traffic.bucket_count = static_cast<uint32_t>(tables_->buckets.size()) - traffic.first_bucket;
      tables_->traffic.push_back(traffic);
      return Status();
    });
  }

  // {"<packet MB>": [count, transit ms], ...}
  Status ReadBuckets(od::value value, const std::string& where) {
    return ForEachFieldOf(value, where, [&](std::string_view key, od::value field) -> Status {
      HcclPacketBucket bucket;
      const std::string here = where + "." + std::string(key);
      if (!ParseDouble(key, &bucket.packet_mb))
        return InvalidInput(std::string(origin_) + ": " + here + ": not a size");
      od::array pair;
      if (auto e = field.get_array().get(pair)) return Fail(here, e);
      size_t index = 0;
      for (auto element : pair) {
        od::value item;
        if (auto e = std::move(element).get(item)) return Fail(here, e);
        double number = 0;
        Status status = Number(item, here, &number);
        if (!status.ok()) return status;
        if (index == 0) bucket.count = static_cast<int64_t>(std::llround(number));
        if (index == 1) bucket.transit_ms = number;
        ++index;
      }
      if (index != 2) return InvalidInput(std::string(origin_) + ": " + here + ": expected [count, transit ms]");
      tables_->buckets.push_back(bucket);
      return Status();
    });
  }

  static bool ParseDouble(std::string_view text, double* out) {
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *out);
    return error == std::errc() && end == text.data() + text.size();
  }

  static bool ParseRankPair(std::string_view text, int64_t* src, int64_t* dst) {
    const size_t dash = text.find('-');
    if (dash == std::string_view::npos) return false;
    const auto [end1, e1] = std::from_chars(text.data(), text.data() + dash, *src);
    const auto [end2, e2] = std::from_chars(text.data() + dash + 1, text.data() + text.size(), *dst);
    return e1 == std::errc() && e2 == std::errc() && end1 == text.data() + dash && end2 == text.data() + text.size();
  }

  Status ReadLinks(std::string_view step, bool p2p, std::string_view key, od::object& links) {
    const std::string where = std::string(step) + "." + std::string(key);
    const size_t at = key.find('@');
    const StringId step_id = out_->Intern(step);
    const StringId op_key = out_->Intern(key.substr(0, at));
    const StringId group = out_->Intern(at == std::string_view::npos ? std::string_view() : key.substr(at + 1));
    return ForEachField(links, where, [&](std::string_view pair, od::value value) -> Status {
      HcclLink link;
      link.step = step_id;
      link.p2p = p2p;
      link.op_key = op_key;
      link.group = group;
      const std::string here = where + "." + std::string(pair);
      if (!ParseRankPair(pair, &link.src_rank, &link.dst_rank)) {
        return InvalidInput(std::string(origin_) + ": " + here + ": not a \"<src>-<dst>\" rank pair");
      }
      Status status = ReadLink(value, here, &link);
      if (!status.ok()) return status;
      tables_->links.push_back(link);
      return Status();
    });
  }

  Status ReadLink(od::value value, const std::string& where, HcclLink* link) {
    const NumberSlot slots[] = {
        {"Transit Size(MB)", &link->transit_size_mb},
        {"Transit Time(ms)", &link->transit_time_ms},
        {"Bandwidth(GB/s)", &link->bandwidth_gbps},
    };
    return ForEachFieldOf(value, where, [&](std::string_view key, od::value item) -> Status {
      const std::string here = where + "." + std::string(key);
      if (key == "Transport Type" || key == "Op Name") {
        std::string_view text;
        if (auto e = item.get_string().get(text)) return Fail(here, e);
        (key == "Op Name" ? link->op_name : link->transport) = out_->Intern(text);
        return Status();
      }
      for (const NumberSlot& slot : slots) {
        if (slot.key == key) return Number(item, here, slot.field);
      }
      return Status();
    });
  }

  std::string_view origin_;
  SideTableBuilder* out_;
  CommunicationTables* tables_;
  od::parser parser_;
};

// HCCL's point-to-point ops by name: cluster_communication.json has no "p2p" / "collective" sections.
bool ClusterOpIsP2p(std::string_view op_name) {
  return op_name.starts_with("hcom_send") || op_name.starts_with("hcom_receive") ||
         op_name.starts_with("hcom_batchSendRecv");
}

// "(0, 1, 2)" -> {0, 1, 2}: the global ranks msprof-analyze keys a group by; empty when the key is not one.
std::vector<int64_t> ClusterGroupKeyRanks(std::string_view key) {
  std::vector<int64_t> ranks;
  if (key.size() < 2 || key.front() != '(' || key.back() != ')') return {};
  key = key.substr(1, key.size() - 2);
  while (!key.empty()) {
    while (!key.empty() && (key.front() == ' ' || key.front() == ',')) key.remove_prefix(1);
    if (key.empty()) break;
    int64_t rank = 0;
    const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), rank);
    if (error != std::errc() || rank < 0) return {};
    ranks.push_back(rank);
    key.remove_prefix(static_cast<size_t>(end - key.data()));
    if (!key.empty() && key.front() != ',' && key.front() != ' ') return {};
  }
  return ranks;
}

// One streaming pass over cluster_communication.json: each rank's records go to that rank's
// CommunicationReader, so that they are read exactly as its own communication.json would be.
class ClusterCommunicationReader {
 public:
  ClusterCommunicationReader(std::string_view origin, const RankBuilderFn& rank_out)
      : origin_(origin), rank_out_(rank_out) {}

  Result<ClusterCommunication> Read(ByteSource* source) {
    CommunicationWalker walker(source, origin_);
    Status status =
        walker.RunCluster([this](std::string_view group, std::string_view step, std::string_view key,
                                 simdjson::padded_string_view text) { return ReadOpOfRanks(group, step, key, text); });
    if (!status.ok()) return status;
    for (auto& [rank, reader] : readers_) reader->FinishOps();
    return std::move(result_);
  }

 private:
  Status Fail(std::string_view where, std::string_view cause) const {
    return InvalidInput(std::string(origin_) + ": " + std::string(where) + ": " + std::string(cause));
  }

  // The reader of `rank`'s ops; nullptr for a rank rank_out_ has no trace for.
  CommunicationReader* ReaderOf(int64_t rank) {
    auto it = readers_.find(rank);
    if (it != readers_.end()) return it->second.get();
    SideTableBuilder* out = rank_out_(rank);
    if (out == nullptr) {
      result_.unknown_ranks.insert(rank);
      return nullptr;
    }
    return readers_.emplace(rank, std::make_unique<CommunicationReader>(origin_, out)).first->second.get();
  }

  Status ReadOpOfRanks(std::string_view group, std::string_view step, std::string_view key,
                       simdjson::padded_string_view text) {
    const std::string where = std::string(group) + "." + std::string(step) + "." + std::string(key);
    const size_t at = key.find('@');
    const std::vector<int64_t> members = ClusterGroupKeyRanks(group);
    if (at != std::string_view::npos && !members.empty())
      result_.group_ranks[std::string(key.substr(at + 1))] = members;
    const bool p2p = ClusterOpIsP2p(key.substr(0, at));
    od::document doc;
    od::object ranks;
    if (auto e = parser_.iterate(text).get(doc)) return Fail(where, simdjson::error_message(e));
    if (auto e = doc.get_object().get(ranks)) return Fail(where, simdjson::error_message(e));
    for (auto raw_field : ranks) {
      od::field field;
      std::string_view rank_key;
      if (auto e = std::move(raw_field).get(field)) return Fail(where, simdjson::error_message(e));
      if (auto e = field.unescaped_key().get(rank_key)) return Fail(where, simdjson::error_message(e));
      const std::string here = where + "." + std::string(rank_key);
      int64_t rank = 0;
      const auto [end, error] = std::from_chars(rank_key.data(), rank_key.data() + rank_key.size(), rank);
      if (error != std::errc() || end != rank_key.data() + rank_key.size() || rank < 0) {
        return Fail(here, "not a rank id");
      }
      od::object record;
      if (auto e = field.value().get_object().get(record)) return Fail(here, simdjson::error_message(e));
      CommunicationReader* reader = ReaderOf(rank);
      if (reader == nullptr) continue;
      if (Status s = reader->ReadOp(step, p2p, key, record, here); !s.ok()) return s;
    }
    return Status();
  }

  std::string_view origin_;
  const RankBuilderFn& rank_out_;
  std::map<int64_t, std::unique_ptr<CommunicationReader>> readers_;
  ClusterCommunication result_;
  od::parser parser_;
};

bool Exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

template <typename ReadFn>
Status ReadFile(const std::string& path, SideTableBuilder* out, ReadFn read) {
  if (!Exists(path)) return Status();
  auto source = OpenByteSource(path);
  if (!source.ok()) return source.status();
  CommunicationReader reader(path, out);
  return read(&reader, source.value().get());
}

}  // namespace

Status ReadCommunicationJson(std::string_view json, std::string_view origin, SideTableBuilder* out) {
  MemorySource source(std::string(origin), json);
  CommunicationReader reader(origin, out);
  return reader.ReadOps(&source);
}

Status ReadCommunicationMatrixJson(std::string_view json, std::string_view origin, SideTableBuilder* out) {
  MemorySource source(std::string(origin), json);
  CommunicationReader reader(origin, out);
  return reader.ReadMatrix(&source);
}

Result<ClusterCommunication> ReadClusterCommunicationJson(std::string_view json, std::string_view origin,
                                                          const RankBuilderFn& rank_out) {
  MemorySource source(std::string(origin), json);
  ClusterCommunicationReader reader(origin, rank_out);
  return reader.Read(&source);
}

Result<ClusterCommunication> ReadClusterCommunicationFile(const std::string& path, const RankBuilderFn& rank_out) {
  auto source = OpenByteSource(path);
  if (!source.ok()) return source.status();
  ClusterCommunicationReader reader(path, rank_out);
  return reader.Read(source.value().get());
}

Status ReadCommunicationFile(const std::string& path, SideTableBuilder* out) {
  return ReadFile(path, out, [](CommunicationReader* r, ByteSource* source) { return r->ReadOps(source); });
}

Status ReadCommunicationMatrixFile(const std::string& path, SideTableBuilder* out) {
  return ReadFile(path, out, [](CommunicationReader* r, ByteSource* source) { return r->ReadMatrix(source); });
}

}  // namespace tuneprof
