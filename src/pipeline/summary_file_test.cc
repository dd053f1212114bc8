#include "pipeline/summary_file.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "base/interned_text.h"
#include "pipeline/summary_codec.h"

namespace tuneprof {
namespace {

// A summary with every kind of field set: strings, optionals both ways, nested vectors, enums, arrays.
SummaryFile Example() {
  SummaryFile file;
  file.source = "/runs/job/rank3.pt.trace.json.gz";
  file.settings = SummarySettings{"H100 SXM", "", "{\"exposed_communication_pct\": 5}"};
  file.warnings = {"/runs/job/rank3.pt.trace.json.gz: 2 'E' events without a matching 'B' dropped",
                   "/runs/job/rank3.pt.trace.json.gz: no rank in the trace (distributedInfo.rank) or its path; "
                   "assuming rank 0"};
  file.warning_ids = {{WarningId::kNoRank, 1}};
  file.starts = {1'700'000'000'123'456'789};
  RankSummary& rank = file.ranks.emplace_back();
  rank.breakdown_warnings = {"step 7 is incomplete",
                             "/runs/job/rank3: no device timeline; the step split is torch_npu's"};
  rank.breakdown_warning_ids = {{WarningId::kNoDeviceTimeline, 1}};
  rank.advice.advice.split.part_ns[static_cast<size_t>(TimePart::kPipelineBubble)] = 2.5e6;
  rank.advice.advice.split.part_ns[static_cast<size_t>(TimePart::kUnclassified)] = 1.25e6;
  rank.advice.advice.split.unclassified_share = 0.125;
  rank.advice.advice.split.part_ns[static_cast<size_t>(TimePart::kFusedComm)] = 0.75e6;
  rank.advice.advice.split.fused_comm_share = 0.0625;
  RankCommunication& comm = rank.comm;
  comm.rank = 3;
  comm.path = file.source;
  comm.link = CommLink{"nvlink", "H100 SXM", 450.0, "from the profile"};
  Collective c;
  c.event = 42;
  c.source = CollectiveSource::kHccl;
  c.type = CollectiveType::kReduceScatter;
  c.name = "hcom_reduceScatter__1";
  c.group_ranks = InternText("[0, 1, 2, 3]");
  c.bytes = 1 << 20;
  c.step = 7;
  c.busbw_gbps = 123.25;
  Collective send;
  send.type = CollectiveType::kSendRecv;
  send.direction = P2pDirection::kSend;
  send.peer = 3;
  comm.collectives = {c, send};
  comm.size_histogram = {1, 2, 3, 4, 5, 6};
  comm.exposed_share_of_wall = 0.125;
  comm.expert_parallel = {ExpertParallelStep{7, 5000, 12, 2300, 1100, 1200, 469762048, 0.46}};
  AscendCommOp op;
  op.op_name = "hcom_allReduce__1";
  op.transit_from_bandwidth = true;
  op.transports = {AscendTransport{"HCCS", 10, 1, 10.0, true, std::nullopt, 3, 1, 0.5, 20.0}};
  comm.ascend_ops = {op};
  comm.parallel_groups = {ParallelGroupInfo{"10652853832372142448", "dp", {0, 1, 2, 3}}};
  comm.lead_ins.resize(2);
  comm.lead_ins[1].causes = {400, 300, 200, 100, 0};
  comm.lead_ins[1].operators = {LeadOperator{"aten::embedding_backward", 400}};
  comm.step_work.host_apis = {NamedWork{"aten::mm", 4, 900, 300}};
  comm.step_work.device_ops = {NamedWork{"MatMulV2", 4, 800, 800}};
  RankAdvice& advice = rank.advice.advice;
  advice.rank = 3;
  advice.path = file.source;
  advice.split.steps = 9;
  advice.split.part_ns[static_cast<size_t>(TimePart::kData)] = 1.5;
  advice.utilizations = {UtilizationCheck{"compute_units", 65.0, 70.0, "pmu", "", "Cube", "pmu", std::nullopt, ""}};
  advice.dominant = Bottleneck::kCommunication;
  rank.advice.on_npu = true;
  Finding f;
  f.id = "communication.exposed";
  f.category = FindingCategory::kCommunication;
  f.saves_from = TimePart::kCommunication;
  f.uncapped_gain_ns = 1e6;
  f.AddNumber("exposed_us", 1000, "us");
  f.AddText("why", "no overlap");
  f.apis = {"--overlap-grad-reduce"};
  f.modules = {{"Model_0.Layer_*.Attention_*", 0.75}, {"Model_0.Head_0", 0.25}};
  rank.advice.findings = {RuleFinding{2, f}};
  rank.advice.moe.rank = 3;
  rank.advice.moe.calls = 2;
  rank.advice.moe.tokens = 300;
  rank.advice.moe.expert_tokens = {100, 200};
  rank.advice.moe.call_ns = {5'000, 6'000};
  rank.advice.moe.source = "record_shapes";
  // What the report reads (format version 2), its chip among the built-in profiles.
  auto profiles = HardwareProfiles::Builtin();
  file.profiles = std::make_shared<const HardwareProfiles>(std::move(*profiles));
  auto detail = std::make_unique<RankReportDetail>();
  detail->hardware.profile = file.profiles->FindByName("H100 SXM");
  detail->hardware.how = "--hardware";
  detail->breakdown.rank = 3;
  detail->breakdown.work_on = WorkSource::kCpu;
  StepBreakdown step;
  step.step = 7;
  step.wall_ns = 5'000'000;
  step.host.launch_latency = LatencySummary{1.5, 2.0, 9.0};
  detail->breakdown.steps = {step};
  detail->breakdown.devices = {DeviceTimeBreakdown{0, DeviceType::kNpu, 1, {step}, {}, step}};
  detail->kernels.source = KernelTableSource::kHostOps;
  KernelRow row;
  row.name = "aten::mm";
  row.work = WorkClass::kCommunication;
  row.stddev_ns = 0.25;
  detail->kernels.kernels = {row};
  ModuleRow attention;
  attention.path = "Model_0.Layer_1.Attention_1";
  attention.name = "Attention_1";
  attention.depth = 2;
  attention.backward_ns = 40;
  attention.layer_path = "Model_0.Layer_*.Attention_*";
  detail->modules.modules = {attention};
  detail->modules.layers = {
      LayerGroup{"Model_0.Layer_*.Attention_*", 2, 80, 40, 30, 50, "Model_0.Layer_1.Attention_1", 50}};
  detail->modules.has_nn_modules = true;
  OpFlopsRow mm;
  mm.name = "aten::mm";
  mm.roof.compute_bound = false;
  detail->flops.ops = {mm};
  detail->flops.mfu = 0.375;
  DeviceMemory device;
  device.device = "npu:1";
  device.fragmentation_ratio = 0.5;
  device.leak_suspects = {LeakSuspect{"aten::cat", {1, 2, 3}, 2}};
  device.reuse.strategy = "exact search";
  device.copies = {CopyTraffic{"H2D", 1, 2, 0, 3, 3, 0.6, 1, 0, std::nullopt, "", std::nullopt}};
  device.categories_at_peak = CategoryBytes{{1, 2, 3, 4, 5, 6, 7, 8}};
  SnapshotStrategy strategy;
  strategy.category = "activations";
  strategy.bytes = 5;
  strategy.holds_peak = true;
  device.category_strategies = {strategy};
  detail->memory.hardware = detail->hardware;
  detail->memory.devices = {device};
  detail->hta_shape = HtaRankShape{{"ProfilerStep#4", "ProfilerStep#5"}, true};
  HtaMemoryBwRow bw;
  bw.rank = 3;
  bw.name = "Memcpy HtoD";
  bw.memory_bw_gbps.p75 = 12.5;
  bw.memory_bw_gbps.has_std = true;
  detail->hta_memory_bw[2] = {bw};
  auto compute = std::make_unique<RankComputeUnits>();
  compute->hardware = "H100 SXM";
  compute->mfu = 0.25;
  compute->gpu_ids = {0, 1};
  compute->total.gpu.sm_active_ns = 12.5;
  compute->total.sampled.dram_bandwidth = 0.5;
  compute->ascend.present = true;
  compute->ascend.total.weighted[static_cast<size_t>(AscendRatio::kAivVec)] = 3.5;
  compute->ascend.total.seen[static_cast<size_t>(AscendRatio::kAivVec)] = true;
  AscendOpTypeUnits type;
  type.type = "MatMulV2";
  type.unit = "cube";
  type.bound = AscendBound::kVecMte;
  type.cores = {AscendCoreShare{"AI_CORE", 10}};
  compute->ascend.op_types = {type};
  compute->graphs.launches = 4;
  compute->graphs.replayed = {true, false};  // by event: the trace's, not kept
  compute->serving = ServingMetrics{2, 30, 1.5e6, std::nullopt, 100.0, std::nullopt, std::nullopt};
  compute->verdict.steps = {ComputeStepVerdict{7, 0.5, true, std::nullopt}};
  detail->compute = std::move(compute);
  rank.report = std::move(detail);
  return file;
}

// `bytes` (without a checksum) followed by the checksum the format defines (FNV-1a of the bytes before
// it, docs/summary-format.md).
std::string Sealed(std::string bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (const char c : bytes) hash = (hash ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((hash >> (8 * i)) & 0xFF));
  return bytes;
}

// A RankMoeLoad with every field empty: ten fixed-width integers and lengths.
constexpr size_t kEmptyMoeBytes = 10 * 8;

// An older summary of the one-rank `file`: its rank ends before the report (version 1) or before the
// expert-parallel steps, the MoE load, the pipeline bubble and the lead-ins (version 2), here written empty
// (one u64 count, ten u64 fields, one f64, one u64 count).
// An empty ModuleView: has_nn_modules, two 8-byte figures, two flags, two more 8-byte figures and two
// empty vectors.
constexpr size_t kEmptyModulesBytes = 1 + 2 * 8 + 2 + 2 * 8 + 2 * 8;

std::string AsVersion(SummaryFile file, int version) {
  file.warning_ids.clear();
  size_t findings = 0;
  for (RankSummary& rank : file.ranks) {
    for (RuleFinding& f : rank.advice.findings) f.finding.modules.clear();
    findings += rank.advice.findings.size();
    if (version < 3) {
      rank.comm.expert_parallel.clear();
      rank.advice.moe = RankMoeLoad{};
      rank.comm.lead_ins.clear();
    }
    if (rank.report && version < 4) rank.report->modules = ModuleView();
    if (rank.report) {
      for (DeviceMemory& device : rank.report->memory.devices) {
        device.categories_at_peak.reset();
        device.timeline_categories.clear();
        device.category_strategies.clear();
      }
    }
    if (version < 2) rank.report.reset();
    rank.breakdown_warning_ids.clear();
    rank.comm.step_work = RankStepWork();
    rank.advice.advice.split.part_ns[static_cast<size_t>(TimePart::kFusedComm)] = 0;
    rank.advice.advice.split.fused_comm_share = 0;
    for (AscendCommOp& op : rank.comm.ascend_ops) op.transit_from_bandwidth = false;
    for (Collective& c : rank.comm.collectives) {
      c.direction = P2pDirection::kUnknown;
      c.peer = kNoId;
    }
  }
  std::string bytes = EncodeSummaryFile(file);
  // The memory devices' empty categories (a count, then per device an absent flag and two empty vectors),
  // the findings' empty module lists and their count, the unclassified part and share, the p2p peers and
  // directions (version 5: a count and one u64 per finding, two f64, a count and one 8-byte field per
  // collective each); the empty modules (version 4); the empty steps' count, MoE load, bubble and
  // lead-ins' count (version 3); the absent report's flag; and the checksum.
  const size_t devices = version < 2 ? 0 : file.ranks.at(0).report->memory.devices.size();
  const size_t directions = 2 * (8 + 8 * file.ranks.at(0).comm.collectives.size());
  const size_t categories = 8 + devices * (1 + 8 + 8);
  // The rank's and the file's empty warning id lists (version 6), a count each, the rank's steps
  // (version 7), its empty step work (version 8: two counts), its empty list of transits taken from the
  // bandwidth info (version 9: a count) and its fused comm part and share (version 10: two f64).
  const size_t tail =
      2 * 8 + (version < 7 ? 8 : 0) + (version < 8 ? 2 * 8 : 0) + (version < 9 ? 8 : 0) + (version < 10 ? 2 * 8 : 0) +
      (version < 5 ? categories + directions + 2 * 8 + 8 + 8 * findings : 0) + (version < 4 ? kEmptyModulesBytes : 0) +
      (version < 3 ? 8 + kEmptyMoeBytes + 8 + 8 : 0) + (version < 2 ? 1 : 0);
  bytes.erase(bytes.size() - 8 - tail, tail + 8);
  bytes[17] = static_cast<char>(version);
  return Sealed(std::move(bytes));
}

std::string AsVersion1(SummaryFile file) { return AsVersion(std::move(file), 1); }

// A summary of the one-rank `file` as `version` wrote it, before the last `words` 8-byte fields of the rank's
// record were added: those words, which sit before the file's warning ids (written empty) and the checksum,
// are cut and the version byte set.
std::string WithoutRankTail(SummaryFile file, size_t words, int version) {
  file.warning_ids.clear();
  std::string bytes = EncodeSummaryFile(file);
  bytes.erase(bytes.size() - (words + 2) * 8, words * 8);
  bytes.resize(bytes.size() - 8);
  bytes[17] = static_cast<char>(version);
  return Sealed(std::move(bytes));
}

TEST(SummaryFileTest, RoundTripsEveryField) {
  const SummaryFile example = Example();
  const std::string bytes = EncodeSummaryFile(example);
  auto decoded = DecodeSummaryFile(bytes, "x.tps", example.profiles.get());
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(EncodeSummaryFile(*decoded), bytes);  // every field written is read back
  const RankSummary& rank = decoded->ranks.at(0);
  EXPECT_EQ(rank.comm.collectives.at(0).group_ranks, "[0, 1, 2, 3]");
  EXPECT_EQ(rank.advice.advice.split.part(TimePart::kPipelineBubble), 2.5e6);
  EXPECT_EQ(rank.advice.advice.split.part(TimePart::kUnclassified), 1.25e6);
  EXPECT_EQ(rank.advice.advice.split.unclassified_share, 0.125);
  EXPECT_EQ(rank.advice.advice.split.part(TimePart::kFusedComm), 0.75e6);  // version 10
  EXPECT_EQ(rank.advice.advice.split.fused_comm_share, 0.0625);
  EXPECT_EQ(rank.comm.collectives.at(0).group_ranks.data(), InternText("[0, 1, 2, 3]").data());  // pooled
  EXPECT_EQ(rank.comm.collectives.at(0).step, 7);
  EXPECT_FALSE(rank.comm.collectives.at(1).step.has_value());
  EXPECT_EQ(rank.comm.collectives.at(1).direction, P2pDirection::kSend);
  EXPECT_EQ(rank.comm.collectives.at(1).peer, 3);
  EXPECT_EQ(rank.comm.collectives.at(0).peer, kNoId);
  EXPECT_TRUE(rank.comm.ascend_ops.at(0).transit_from_bandwidth);  // version 9
  const DeviceMemory& memory = rank.report->memory.devices.at(0);  // version 5
  ASSERT_TRUE(memory.categories_at_peak.has_value());
  EXPECT_EQ(memory.categories_at_peak->bytes[7], 8);
  ASSERT_EQ(memory.category_strategies.size(), 1u);
  EXPECT_TRUE(memory.category_strategies[0].holds_peak);
  ASSERT_EQ(rank.comm.lead_ins.size(), 2u);
  EXPECT_EQ(rank.comm.lead_ins[1].causes[static_cast<size_t>(WaitCause::kHostPause)], 300);
  EXPECT_EQ(rank.comm.lead_ins[1].operators.at(0).name, "aten::embedding_backward");
  ASSERT_EQ(rank.comm.step_work.host_apis.size(), 1u);
  EXPECT_EQ(rank.comm.step_work.host_apis[0].name, "aten::mm");
  EXPECT_EQ(rank.comm.step_work.host_apis[0].self_ns, 300);
  ASSERT_EQ(rank.comm.step_work.device_ops.size(), 1u);
  EXPECT_EQ(rank.comm.step_work.device_ops[0].calls, 4u);
  EXPECT_EQ(rank.advice.findings.at(0).finding.evidence.at(1).text, "no overlap");
  ASSERT_EQ(rank.advice.findings.at(0).finding.modules.size(), 2u);
  EXPECT_EQ(rank.advice.findings.at(0).finding.modules[0].path, "Model_0.Layer_*.Attention_*");
  EXPECT_EQ(rank.advice.findings.at(0).finding.modules[1].share, 0.25);
  ASSERT_EQ(rank.comm.expert_parallel.size(), 1u);
  EXPECT_EQ(rank.comm.expert_parallel.at(0).bytes, 469762048);
  EXPECT_EQ(rank.advice.moe.expert_tokens, (std::vector<int64_t>{100, 200}));
  EXPECT_EQ(decoded->settings, Example().settings);
  EXPECT_EQ(decoded->starts, Example().starts);
  ASSERT_NE(rank.report, nullptr);
  EXPECT_EQ(rank.report->hardware.profile, example.profiles->FindByName("H100 SXM"));  // the run's own
  EXPECT_EQ(rank.report->memory.hardware.profile, rank.report->hardware.profile);
  EXPECT_EQ(rank.report->breakdown.steps.at(0).host.launch_latency->p95_ns, 9.0);
  EXPECT_EQ(rank.report->kernels.kernels.at(0).work, WorkClass::kCommunication);
  EXPECT_EQ(rank.report->flops.ops.at(0).roof.compute_bound, false);
  EXPECT_EQ(rank.report->memory.devices.at(0).leak_suspects.at(0).alive_bytes_at_step_end.at(2), 3);
  EXPECT_EQ(rank.report->hta_shape.step_names.at(1), "ProfilerStep#5");
  EXPECT_EQ(rank.report->hta_memory_bw[2].at(0).memory_bw_gbps.p75, 12.5);
  const RankComputeUnits& compute = *rank.report->compute;
  EXPECT_EQ(compute.ascend.total.weighted[static_cast<size_t>(AscendRatio::kAivVec)], 3.5);
  EXPECT_TRUE(compute.ascend.total.seen[static_cast<size_t>(AscendRatio::kAivVec)]);
  EXPECT_FALSE(compute.ascend.total.seen[0]);
  EXPECT_EQ(compute.ascend.op_types.at(0).unit, "cube");
  EXPECT_EQ(compute.ascend.op_types.at(0).bound, AscendBound::kVecMte);
  EXPECT_EQ(compute.graphs.launches, 4u);
  EXPECT_TRUE(compute.graphs.replayed.empty());
  EXPECT_EQ(compute.serving->decode_steps, 30u);
  EXPECT_EQ(compute.verdict.steps.at(0).bottleneck, true);
  EXPECT_TRUE(decoded->unknown_chip.empty());
}

TEST(SummaryFileTest, RoundTripsTheModules) {
  const SummaryFile example = Example();
  auto decoded = DecodeSummaryFile(EncodeSummaryFile(example), "x.tps", example.profiles.get());
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  const ModuleView& modules = decoded->ranks.at(0).report->modules;
  EXPECT_TRUE(modules.has_nn_modules);
  ASSERT_EQ(modules.modules.size(), 1u);
  EXPECT_EQ(modules.modules[0].layer_path, "Model_0.Layer_*.Attention_*");
  EXPECT_EQ(modules.modules[0].backward_ns, 40);
  ASSERT_EQ(modules.layers.size(), 1u);
  EXPECT_EQ(modules.layers[0].outlier_ns, 50);
}

TEST(SummaryFileTest, ReadsVersion4WithoutTheUnclassifiedPart) {
  const SummaryFile example = Example();
  auto decoded = DecodeSummaryFile(AsVersion(Example(), 4), "v4.tps", example.profiles.get());
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->version, 4u);
  EXPECT_EQ(decoded->ranks.at(0).advice.advice.split.part(TimePart::kUnclassified), 0);
  EXPECT_EQ(decoded->ranks.at(0).advice.advice.split.unclassified_share, 0);
  EXPECT_FALSE(decoded->ranks.at(0).report->modules.empty());
}

// A summary written when computing that no operators class sat in the memory-bound part reads with it in
// the unclassified part, as this build splits such a rank.
TEST(SummaryFileTest, UnclassedComputingOfOlderSummariesIsUnclassified) {
  SummaryFile example = Example();
  TimeSplit& split = example.ranks.at(0).advice.advice.split;
  split.compute_classes_known = false;
  split.part_ns[static_cast<size_t>(TimePart::kMemoryBound)] = 3e6;
  split.part_ns[static_cast<size_t>(TimePart::kComputeBound)] = 0;
  split.part_ns[static_cast<size_t>(TimePart::kUnclassified)] = 0;
  split.unclassified_share = 0;
  auto decoded = DecodeSummaryFile(EncodeSummaryFile(example), "old.tps", example.profiles.get());
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  const TimeSplit& read = decoded->ranks.at(0).advice.advice.split;
  EXPECT_EQ(read.part(TimePart::kUnclassified), 3e6);
  EXPECT_EQ(read.part(TimePart::kMemoryBound), 0);
  EXPECT_EQ(read.unclassified_share, 1);
}

TEST(SummaryFileTest, ReadsVersion3WithoutTheModules) {
  const SummaryFile example = Example();
  auto decoded = DecodeSummaryFile(AsVersion(Example(), 3), "v3.tps", example.profiles.get());
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->version, 3u);
  EXPECT_TRUE(decoded->ranks.at(0).report->modules.empty());
  EXPECT_EQ(decoded->ranks.at(0).comm.lead_ins.size(), 2u);
}

TEST(SummaryFileTest, ReadsVersion4WithoutTheP2pDirectionsOrFindingsModules) {
  const SummaryFile example = Example();
  auto decoded = DecodeSummaryFile(AsVersion(Example(), 4), "v4.tps", example.profiles.get());
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->version, 4u);
  EXPECT_FALSE(decoded->ranks.at(0).report->modules.empty());
  EXPECT_EQ(decoded->ranks.at(0).comm.collectives.at(1).direction, P2pDirection::kUnknown);
  ASSERT_EQ(decoded->ranks.at(0).advice.findings.size(), 1u);
  EXPECT_TRUE(decoded->ranks.at(0).advice.findings[0].finding.modules.empty());
}

// A chip the reading run's profiles lack (a summary made with another --hardware-file) is named, for the
// command to say so once it has compared the flags.
TEST(SummaryFileTest, RoundTripsTheWarningIds) {
  const SummaryFile example = Example();
  auto decoded = DecodeSummaryFile(EncodeSummaryFile(example), "x.tps", example.profiles.get());
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->warning_ids, example.warning_ids);
  EXPECT_EQ(decoded->ranks.at(0).breakdown_warning_ids, example.ranks.at(0).breakdown_warning_ids);
}

// Summaries before version 6 kept no ids: their warnings are told by the words the builds that wrote them
// used, so that they read as they always did.
TEST(SummaryFileTest, ReadsVersion5WarningsByTheirWords) {
  const SummaryFile example = Example();
  auto decoded = DecodeSummaryFile(AsVersion(Example(), 5), "v5.tps", example.profiles.get());
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->version, 5u);
  EXPECT_EQ(decoded->warnings, example.warnings);
  EXPECT_EQ(decoded->warning_ids, example.warning_ids);
  EXPECT_EQ(decoded->ranks.at(0).breakdown_warning_ids, example.ranks.at(0).breakdown_warning_ids);
}

// An id naming a line past the warnings is damage, however it is checksummed.
TEST(SummaryFileTest, AnIdPastItsLinesIsCorrupt) {
  SummaryFile example = Example();
  example.warning_ids = {{WarningId::kNoRank, 2}};
  auto decoded = DecodeSummaryFile(EncodeSummaryFile(example), "x.tps", example.profiles.get());
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.status().message().find("x.tps: summary is cut off or corrupt"), std::string::npos);
}

TEST(SummaryFileTest, AChipTheReaderLacksIsNamed) {
  auto decoded = DecodeSummaryFile(EncodeSummaryFile(Example()), "x.tps", nullptr);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->unknown_chip, "H100 SXM");
  EXPECT_EQ(decoded->ranks.at(0).report->hardware.profile, nullptr);
}

// Version 1 summaries (no report parts) are still read, with no report parts.
TEST(SummaryFileTest, ReadsVersion1) {
  const SummaryFile example = Example();
  auto decoded = DecodeSummaryFile(AsVersion1(Example()), "v1.tps", example.profiles.get());
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->version, 1u);
  EXPECT_EQ(decoded->ranks.at(0).report, nullptr);
  EXPECT_EQ(decoded->ranks.at(0).advice.findings.at(0).finding.evidence.at(1).text, "no overlap");
}

TEST(SummaryFileTest, ReadsVersion8WithoutTheTransitsFromBandwidth) {
  const SummaryFile example = Example();
  SummaryFile file = Example();
  for (RankSummary& rank : file.ranks) {
    for (AscendCommOp& op : rank.comm.ascend_ops) op.transit_from_bandwidth = false;
    rank.advice.advice.split.part_ns[static_cast<size_t>(TimePart::kFusedComm)] = 0;
    rank.advice.advice.split.fused_comm_share = 0;
  }
  // The one rank's empty version 9 list (a count) and its version 10 fused comm part and share (two f64).
  auto decoded = DecodeSummaryFile(WithoutRankTail(std::move(file), 3, 8), "v8.tps", example.profiles.get());
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->version, 8u);
  EXPECT_FALSE(decoded->ranks.at(0).comm.ascend_ops.at(0).transit_from_bandwidth);
}

// Before version 10 fused compute + communication kernels sat in the unclassified part: such a summary reads
// with that part as written and no fused comm part.
TEST(SummaryFileTest, ReadsVersion9WithoutTheFusedCommPart) {
  const SummaryFile example = Example();
  // The one rank's version 10 fused comm part and share (two f64).
  auto decoded = DecodeSummaryFile(WithoutRankTail(Example(), 2, 9), "v9.tps", example.profiles.get());
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->version, 9u);
  const TimeSplit& split = decoded->ranks.at(0).advice.advice.split;
  EXPECT_EQ(split.part(TimePart::kFusedComm), 0);
  EXPECT_EQ(split.fused_comm_share, 0);
  EXPECT_EQ(split.part(TimePart::kUnclassified), 1.25e6);
}

TEST(SummaryFileTest, ReadsVersion2WithoutTheVersion3Parts) {
  const SummaryFile example = Example();
  auto decoded = DecodeSummaryFile(AsVersion(Example(), 2), "v2.tps", example.profiles.get());
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->version, 2u);
  EXPECT_NE(decoded->ranks.at(0).report, nullptr);
  EXPECT_TRUE(decoded->ranks.at(0).comm.expert_parallel.empty());
  EXPECT_FALSE(decoded->ranks.at(0).advice.moe.found());
  EXPECT_TRUE(decoded->ranks.at(0).comm.lead_ins.empty());
}

TEST(SummaryFileTest, EveryCutIsAnErrorNamingTheFile) {
  const std::string bytes = EncodeSummaryFile(Example());
  for (size_t size = 0; size < bytes.size(); ++size) {
    auto decoded = DecodeSummaryFile(std::string_view(bytes).substr(0, size), "cut.tps");
    ASSERT_FALSE(decoded.ok()) << size;
    EXPECT_TRUE(decoded.status().message().starts_with("cut.tps: ")) << decoded.status().message();
  }
}

TEST(SummaryFileTest, FlippedBytesAreCaughtByTheChecksum) {
  const std::string bytes = EncodeSummaryFile(Example());
  for (size_t at = 17; at < bytes.size(); at += 7) {
    std::string flipped = bytes;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x5A);
    EXPECT_FALSE(DecodeSummaryFile(flipped, "f.tps").ok()) << at;
  }
}

// A hostile file can carry a valid checksum: random payloads behind a correct one are refused or read,
// never a crash, an enum out of range or an allocation of the counts they claim.
TEST(SummaryFileTest, HostilePayloadsWithAValidChecksumNeverCrash) {
  const std::string valid = EncodeSummaryFile(Example());
  std::mt19937_64 random(7);
  for (int round = 0; round < 2000; ++round) {
    std::string bytes = valid.substr(0, valid.size() - 8);
    for (int k = 0; k < 4; ++k) bytes[17 + random() % (bytes.size() - 17)] = static_cast<char>(random());
    auto decoded = DecodeSummaryFile(Sealed(bytes), "h.tps");
    if (!decoded.ok()) continue;
    for (const RankSummary& rank : decoded->ranks) {
      for (const RuleFinding& f : rank.advice.findings) {
        EXPECT_LT(static_cast<size_t>(f.finding.saves_from), static_cast<size_t>(TimePart::kCount));
      }
    }
  }
}

TEST(SummaryFileTest, OtherFilesAndVersionsAreNamed) {
  EXPECT_NE(DecodeSummaryFile("{\"traceEvents\": []}", "t.tps").status().message().find("not a tuneprof summary"),
            std::string::npos);
  std::string bytes = EncodeSummaryFile(Example());
  bytes[17] = 11;  // the version's low byte: damage, unless the checksum says these are the bytes written
  EXPECT_NE(DecodeSummaryFile(bytes, "v.tps").status().message().find("cut off or corrupt"), std::string::npos);
  bytes.resize(bytes.size() - 8);
  EXPECT_NE(DecodeSummaryFile(Sealed(bytes), "v.tps").status().message().find("version 11"), std::string::npos);
}

// The fields a summary holds are declared once (summary_fields.h); the layout they make is pinned here to
// the format version, so that a field added, dropped, moved or retyped, or an enum value added before its
// last, fails this test until kSummaryFormatVersion is raised (with the reader taught the older layout)
// and the new layout's digest pinned beside the new version.
TEST(SummaryFileTest, LayoutIsPinnedToTheVersion) {
  constexpr uint32_t kPinnedVersion = 10;
  constexpr uint64_t kPinnedDigest = 0xd19c54319624de4a;
  const std::string layout = SummaryLayout();
  const uint64_t digest = summary_format::Checksum(layout);
  EXPECT_EQ(kSummaryFormatVersion, kPinnedVersion);
  EXPECT_EQ(digest, kPinnedDigest) << "the summary layout changed: raise kSummaryFormatVersion, then pin 0x" << std::hex
                                   << digest << " to it\nlayout: " << layout;
}

}  // namespace
}  // namespace tuneprof
