// analysis.db's communication tables, read into the rank's communication tables as the
// communication.json and communication_matrix.json readers fill them.
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <utility>

#include "base/decimal.h"
#include "importers/ascend/ascend_db_reading.h"

namespace tuneprof::ascend_db {
namespace {

// analysis.db's Comm tables are communication.json / communication_matrix.json as rows (ms, MB, GB/s;
// start µs): CommAnalyzerTime one row per op, CommAnalyzerBandwidth one per (op, transport, packet
// size), CommAnalyzerMatrix one per (op key, link). The file's per-op ratios are not stored (they stay
// NaN); its "Total Op Info" entries are not stored either and are rebuilt per (step, section) as
// torch_npu builds them: sums of the ops' times and per-transport sizes / times, size distributions
// merged, no per-transport bandwidth or large-packet ratio.
struct CommOpKey {
  std::string step;
  bool p2p = false;
  std::string op;
  std::string group;
  auto operator<=>(const CommOpKey&) const = default;
};

struct CommTraffic {
  double size_mb = std::numeric_limits<double>::quiet_NaN();
  double time_ms = std::numeric_limits<double>::quiet_NaN();
  double bandwidth_gbps = std::numeric_limits<double>::quiet_NaN();
  double large_packet_ratio = std::numeric_limits<double>::quiet_NaN();
  std::map<double, std::pair<int64_t, double>> buckets;  // packet MB -> (count, transit ms)
};

using CommTrafficByOp = std::map<CommOpKey, std::map<std::string, CommTraffic>>;

bool IsP2p(std::string_view type) { return type == "p2p" || type == "P2P"; }

// The text of a column of a `SELECT *`; empty for a column the table lacks.
std::string_view TextAt(const SqliteStatement& r, int column) {
  return column < 0 ? std::string_view() : r.Text(column);
}

CommOpKey KeyAt(const SqliteStatement& r, int step, int type, int op, int group) {
  return CommOpKey{std::string(TextAt(r, step)), IsP2p(TextAt(r, type)), std::string(TextAt(r, op)),
                   std::string(TextAt(r, group))};
}

double Sum(double a, double b) { return std::isnan(a) ? b : std::isnan(b) ? a : a + b; }

// Packet counts add up to at most int64's maximum: a crafted count column can hold any int64, and the
// sum of two must be no undefined behaviour (a real count is far below it).
void AddPackets(int64_t* total, int64_t packets) {
  if (__builtin_add_overflow(*total, packets, total)) *total = std::numeric_limits<int64_t>::max();
}

Status ReadCommBandwidth(const SqliteFile& db, CommTrafficByOp* traffic) {
  const std::vector<std::string> columns = db.Columns("CommAnalyzerBandwidth");
  if (columns.empty()) return Status();
  auto at = [&](std::string_view name) { return ColumnIndex(columns, name); };
  const int op = at("hccl_op_name"), group = at("group_name"), transport = at("transport_type");
  const int size = at("transit_size"), time = at("transit_time"), bandwidth = at("bandwidth");
  const int ratio = at("large_packet_ratio"), packet = at("package_size"), count = at("count");
  const int duration = at("total_duration"), step = at("step"), type = at("type");
  return ForEachRow(db, "SELECT * FROM CommAnalyzerBandwidth", [&](const SqliteStatement& r) {
    const CommOpKey key = KeyAt(r, step, type, op, group);
    CommTraffic& t = (*traffic)[key][std::string(TextAt(r, transport))];
    t.size_mb = DoubleAt(r, size);
    t.time_ms = DoubleAt(r, time);
    t.bandwidth_gbps = DoubleAt(r, bandwidth);
    t.large_packet_ratio = DoubleAt(r, ratio);
    const int64_t packets = count < 0 ? 0 : r.OptionalInt(count).value_or(0);
    if (packets <= 0) return;  // the row a transport without packets still gets
    auto& bucket = t.buckets[DoubleAt(r, packet)];
    AddPackets(&bucket.first, packets);
    bucket.second += DoubleAt(r, duration);
  });
}

// Appends `traffic` to the tables as `op`'s range.
void AddTraffic(const std::map<std::string, CommTraffic>& traffic, SideTableBuilder* out, HcclOpTime* op) {
  CommunicationTables* tables = out->mutable_communication();
  op->first_traffic = static_cast<uint32_t>(tables->traffic.size());
  for (const auto& [transport, t] : traffic) {
    HcclTransportTraffic row;
    row.transport = out->Intern(transport);
    row.transit_size_mb = t.size_mb;
    row.transit_time_ms = t.time_ms;
    row.bandwidth_gbps = t.bandwidth_gbps;
    row.large_packet_ratio = t.large_packet_ratio;
    row.first_bucket = static_cast<uint32_t>(tables->buckets.size());
    for (const auto& [packet_mb, bucket] : t.buckets) {
      tables->buckets.push_back(HcclPacketBucket{packet_mb, bucket.first, bucket.second});
    }
    row.bucket_count = static_cast<uint32_t>(tables->buckets.size()) - row.first_bucket;
    tables->traffic.push_back(row);
  }
  op->traffic_count = static_cast<uint32_t>(tables->traffic.size()) - op->first_traffic;
}

// The "Total Op Info" of one (step, section): sums over its ops.
struct CommTotal {
  HcclOpTime time;
  std::map<std::string, CommTraffic> traffic;

  void Add(const HcclOpTime& op, const std::map<std::string, CommTraffic>* op_traffic) {
    time.elapse_ms = Sum(time.elapse_ms, op.elapse_ms);
    time.transit_ms = Sum(time.transit_ms, op.transit_ms);
    time.wait_ms = Sum(time.wait_ms, op.wait_ms);
    time.synchronization_ms = Sum(time.synchronization_ms, op.synchronization_ms);
    time.idle_ms = Sum(time.idle_ms, op.idle_ms);
    if (op_traffic == nullptr) return;
    for (const auto& [transport, t] : *op_traffic) {
      CommTraffic& total = traffic[transport];
      total.size_mb = Sum(total.size_mb, t.size_mb);
      total.time_ms = Sum(total.time_ms, t.time_ms);
      for (const auto& [packet_mb, bucket] : t.buckets) {
        AddPackets(&total.buckets[packet_mb].first, bucket.first);
        total.buckets[packet_mb].second += bucket.second;
      }
    }
  }
};

}  // namespace

Status ReadCommAnalyzer(const SqliteFile& db, SideTableBuilder* out) {
  const std::vector<std::string> columns = db.Columns("CommAnalyzerTime");
  if (columns.empty()) return Status();
  CommTrafficByOp traffic;
  if (Status s = ReadCommBandwidth(db, &traffic); !s.ok()) return s;
  auto at = [&](std::string_view name) { return ColumnIndex(columns, name); };
  const int op = at("hccl_op_name"), group = at("group_name"), start = at("start_timestamp");
  const int elapse = at("elapse_time"), transit = at("transit_time"), wait = at("wait_time");
  const int sync = at("synchronization_time"), idle = at("idle_time"), step = at("step"), type = at("type");
  std::map<std::pair<std::string, bool>, CommTotal> totals;  // (step, p2p)
  CommunicationTables* tables = out->mutable_communication();
  tables->ops_present = true;
  Status s = ForEachRow(db, "SELECT * FROM CommAnalyzerTime", [&](const SqliteStatement& r) {
    const CommOpKey key = KeyAt(r, step, type, op, group);
    HcclOpTime t;
    t.step = out->Intern(key.step);
    t.p2p = key.p2p;
    t.op_name = out->Intern(key.op);
    t.group = out->Intern(key.group);
    t.start_us = DoubleAt(r, start);
    t.elapse_ms = DoubleAt(r, elapse);
    t.transit_ms = DoubleAt(r, transit);
    t.wait_ms = DoubleAt(r, wait);
    t.synchronization_ms = DoubleAt(r, sync);
    t.idle_ms = DoubleAt(r, idle);
    auto it = traffic.find(key);
    if (it != traffic.end()) AddTraffic(it->second, out, &t);
    totals[{key.step, key.p2p}].Add(t, it == traffic.end() ? nullptr : &it->second);
    tables->ops.push_back(t);
  });
  if (!s.ok()) return s;
  for (auto& [section, total] : totals) {
    HcclOpTime t = total.time;
    t.step = out->Intern(section.first);
    t.p2p = section.second;
    t.total = true;
    t.op_name = out->Intern("Total Op Info");
    AddTraffic(total.traffic, out, &t);
    tables->ops.push_back(t);
  }
  return Status();
}

Status ReadCommMatrix(const SqliteFile& db, SideTableBuilder* out) {
  const std::vector<std::string> columns = db.Columns("CommAnalyzerMatrix");
  if (columns.empty()) return Status();
  auto at = [&](std::string_view name) { return ColumnIndex(columns, name); };
  const int key = at("hccl_op_name"), group = at("group_name"), src = at("src_rank"), dst = at("dst_rank");
  const int transport = at("transport_type"), size = at("transit_size"), time = at("transit_time");
  const int bandwidth = at("bandwidth"), step = at("step"), type = at("type"), op = at("op_name");
  CommunicationTables* tables = out->mutable_communication();
  tables->matrix_present = true;
  return ForEachRow(db, "SELECT * FROM CommAnalyzerMatrix", [&](const SqliteStatement& r) {
    HcclLink link;
    link.step = out->Intern(TextAt(r, step));
    link.p2p = IsP2p(TextAt(r, type));
    link.op_key = out->Intern(TextAt(r, key));
    link.group = out->Intern(TextAt(r, group));
    int64_t rank;
    if (ParseInt64(TextAt(r, src), &rank)) link.src_rank = rank;
    if (ParseInt64(TextAt(r, dst), &rank)) link.dst_rank = rank;
    link.transport = out->Intern(TextAt(r, transport));
    link.transit_size_mb = DoubleAt(r, size);
    link.transit_time_ms = DoubleAt(r, time);
    link.bandwidth_gbps = DoubleAt(r, bandwidth);
    link.op_name = out->Intern(TextAt(r, op));
    tables->links.push_back(link);
  });
}

}  // namespace tuneprof::ascend_db
