#pragma once
// The sections `tuneprof comm` renders, one file each by concern (comm_report_*.cc): what they share, and
// each section's text and JSON writer. Private to report/console; comm_report.h is the interface.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/comm/comm_cross_rank.h"
#include "base/json_writer.h"
#include "report/common/format.h"

namespace tuneprof::comm_sections {

// Above kRanksListedOneByOne ranks, the text shows per-rank sections and table rows only for the ranks
// that stand out (NotableRanks) and folds the verdict's reasons over ranks: a thousand alike lines hide
// the verdict.
class ShownRanks {
 public:
  explicit ShownRanks(const CommAnalysis& a) : all_(a.ranks.size() <= kRanksListedOneByOne) {
    if (!all_) notable_ = NotableRanks(a);
  }
  bool all() const { return all_; }
  bool Shows(int64_t rank) const { return all_ || std::binary_search(notable_.begin(), notable_.end(), rank); }
  const std::vector<int64_t>& notable() const { return notable_; }

 private:
  bool all_;
  std::vector<int64_t> notable_;
};

// The line that stands for the rows a table left out.
std::string LeftOut(size_t left_out, std::string_view indent);

// Megabytes (10^6) in the collectives table's MB column; empty when no collective of the row had a size.
std::string MegabytesCell(int64_t bytes, uint64_t known);

// ---- a rank's own section (comm_report_rank.cc)

void AppendCollectives(const RankCommunication& r, std::string* out);
std::string CommSummaryLine(const CommAnalysis& a, const RankCommunication& r);
void WriteCollective(JsonWriter* w, int64_t rank, const Collective& c);
void WriteRank(JsonWriter* w, const RankCommunication& r, const RankWait* wait, bool causes_known);

// ---- fused and expert-parallel kernels (comm_report_kernels.cc)

// The kernels that compute and communicate at once (Ascend MC2) of a rank, together.
struct FusedCommTotals {
  uint64_t count = 0;
  int64_t time_ns = 0;
  uint64_t with_bytes = 0;  // kernels whose message kernel_details' shapes give
  int64_t bytes = 0;
  int64_t time_with_bytes_ns = 0;
};

FusedCommTotals SumFusedComm(const RankCommunication& r);
void AppendFusedComm(const RankCommunication& r, std::string* out);
void WriteFusedComm(JsonWriter* w, const RankCommunication& r);
void AppendExpertParallel(const RankCommunication& r, std::string* out);
void WriteExpertParallel(JsonWriter* w, const RankCommunication& r);

// ---- torch_npu's HCCL figures (comm_report_ascend.cc)

void AppendAscend(const RankCommunication& r, std::string* out);
void AppendAscendVerdict(const CrossRankCommunication& x, std::string* out);
// Global ids (null where the group's numbering is unknown) and the group-local ids as the file writes them.
void WriteLinkEnds(JsonWriter* w, const AscendMatrixLink& link);
void WriteAscend(JsonWriter* w, const RankCommunication& r);

// ---- the cluster view (comm_report_cluster.cc)

// The split of comm_cross_rank.h over the run's cross-rank results.
BubbleSplit SplitBubble(const CommAnalysis& a, const RankCommunication& r);

// Below this a bubble prints as 0.000 ms: a few ns of rounding in torch_npu's step split, not a pipeline.
constexpr int64_t kShownBubbleNs = 500;

void AppendClusterView(const CommAnalysis& a, const ShownRanks& shown, std::string* out);
void WriteClusterView(JsonWriter* w, const CrossRankCommunication& x);

// ---- process groups and parallel domains (comm_report_groups.cc)

void AppendGroups(const CrossRankCommunication& x, std::string* out);
void AppendDomains(const CrossRankCommunication& x, std::string* out);
void WriteGroups(JsonWriter* w, const CrossRankCommunication& x);
void WriteDomains(JsonWriter* w, const CrossRankCommunication& x);

// ---- pipeline stages (comm_report_pipeline.cc)

void AppendPipeline(const std::optional<PipelineAnalysis>& p, std::string* out);
void WritePipeline(JsonWriter* w, const std::optional<PipelineAnalysis>& pipeline);

// ---- waits across ranks (comm_report_waits.cc)

void AppendRankWaits(const CommAnalysis& a, const ShownRanks& shown, std::string* out);
void WriteClocks(JsonWriter* w, const ClockAlignment& clocks);

}  // namespace tuneprof::comm_sections
