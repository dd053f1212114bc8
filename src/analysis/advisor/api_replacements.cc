#include "analysis/advisor/api_replacements.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>

namespace tuneprof {
namespace {

constexpr std::string_view kMsprof = "msprof-analyze affinity API rules";
constexpr std::string_view kTuneprof = "tuneprof fusion patterns, versions from msprof-analyze's rules";

using S = ReplacementStep;
constexpr std::array kTransposeThenView =
    std::to_array<S>({{"permute|transpose"}, {"contiguous", 0, 1}, {"reshape|view"}});
constexpr std::array kViewThenTranspose =
    std::to_array<S>({{"reshape|view"}, {"contiguous", 0, 1}, {"permute|transpose"}});
constexpr std::array kGelu = std::to_array<S>({{"gelu"}});
constexpr std::array kMaskedSoftmax = std::to_array<S>({{"softmax|_softmax"}, {"mul", 0, 1}, {"masked_fill|add"}});
constexpr std::array kClipGradNorm = std::to_array<S>({{"add"}, {"reciprocal"}, {"mul"}});
constexpr std::array kGroupNormSilu = std::to_array<S>({{"group_norm"}, {"silu"}});
constexpr std::array kAddLayerNorm = std::to_array<S>({{"add"}, {"layer_norm"}});
constexpr std::array kMatmulAdd = std::to_array<S>({{"matmul"}, {"add"}});
constexpr std::array kMoePermute = std::to_array<S>({{"argsort"}, {"argsort"}, {"index_select"}});
constexpr std::array kMoeUnpermute = std::to_array<S>({{"index_select"}, {"mul"}, {"sum"}});

constexpr ApiReplacement Optimizer(std::string_view api, std::string_view step) {
  return {api, ReplacementMatch::kOptimizerStep, step, {}, "6.3.RC2", "1.11.0", kMsprof, ""};
}

constexpr std::array kTable = std::to_array<ApiReplacement>({
    Optimizer("torch_npu.optim.NpuFusedSGD", "SGD.step"),
    Optimizer("torch_npu.optim.NpuFusedAdam", "Adam.step"),
    Optimizer("torch_npu.optim.NpuFusedAdamW", "AdamW.step"),
    Optimizer("torch_npu.optim.NpuFusedAdadelta", "Adadelta.step"),
    Optimizer("torch_npu.optim.NpuFusedLamb", "Lamb.step"),
    Optimizer("torch_npu.optim.NpuFusedAdamP", "AdamP.step"),
    Optimizer("torch_npu.optim.NpuFusedBertAdam", "BertAdam.step"),
    Optimizer("torch_npu.optim.NpuFusedRMSprop", "RMSprop.step"),
    Optimizer("torch_npu.optim.NpuFusedRMSpropTF", "RMSpropTF.step"),
    {"torch_npu.npu_confusion_transpose", ReplacementMatch::kOpSequence,
     "permute/transpose -> [contiguous] -> reshape/view", kTransposeThenView, "6.3.RC2", "1.11.0", kMsprof, ""},
    {"torch_npu.npu_confusion_transpose", ReplacementMatch::kOpSequence,
     "reshape/view -> [contiguous] -> permute/transpose", kViewThenTranspose, "6.3.RC2", "1.11.0", kMsprof, ""},
    {"torch_npu.fast_gelu", ReplacementMatch::kOpSequence, "gelu", kGelu, "6.3.RC2", "1.11.0", kMsprof, ""},
    {"torch_npu.npu_scaled_masked_softmax", ReplacementMatch::kOpSequence, "softmax -> [mul] -> masked_fill/add",
     kMaskedSoftmax, "6.3.RC2", "1.11.0", kMsprof, ""},
    {"NpuFused* optimizer's clip_grad_norm_fused_(max_norm)", ReplacementMatch::kOpSequence,
     "add -> reciprocal -> mul (gradient clipping's scale)", kClipGradNorm, "6.3.RC2", "1.11.0", kMsprof, ""},
    {"torch_npu.npu_fusion_attention",
     ReplacementMatch::kOpSequence,
     "standard attention",
     {},
     "7.0.RC1",
     "1.11.0",
     kTuneprof,
     "fusion.attention"},
    {"torch_npu.npu_rotary_mul",
     ReplacementMatch::kOpSequence,
     "rotary embedding written out",
     {},
     "7.0.RC1",
     "1.11.0",
     kTuneprof,
     "fusion.rotary"},
    {"torch_npu.npu_rms_norm",
     ReplacementMatch::kOpSequence,
     "RMSNorm written out",
     {},
     "7.0.0",
     "1.11.0",
     kTuneprof,
     "fusion.rms_norm"},
    {"torch_npu.npu_swiglu",
     ReplacementMatch::kOpSequence,
     "SwiGLU gate",
     {},
     "7.0.0",
     "1.11.0",
     kTuneprof,
     "fusion.swiglu"},
    {"torch_npu.npu_geglu",
     ReplacementMatch::kOpSequence,
     "GeGLU gate",
     {},
     "8.0.RC1",
     "1.11.0",
     kTuneprof,
     "fusion.geglu"},
    {"torch_npu.npu_group_norm_silu", ReplacementMatch::kOpSequence, "group_norm -> silu", kGroupNormSilu, "8.0.RC1",
     "1.11.0", kMsprof, ""},
    {"torch_npu.npu_add_layer_norm", ReplacementMatch::kOpSequence, "add -> layer_norm", kAddLayerNorm, "8.0.RC1",
     "1.11.0", kMsprof, ""},
    {"mindspeed.ops.npu_matmul_add", ReplacementMatch::kOpSequence, "matmul -> add", kMatmulAdd, "8.0.RC3", "1.11.0",
     kMsprof, ""},
    {"mindspeed.ops.npu_moe_token_permute", ReplacementMatch::kOpSequence, "argsort -> argsort -> index_select",
     kMoePermute, "8.0.RC3", "1.11.0", kMsprof, ""},
    {"mindspeed.ops.npu_moe_token_unpermute", ReplacementMatch::kOpSequence, "index_select -> mul -> sum",
     kMoeUnpermute, "8.0.RC3", "1.11.0", kMsprof, ""},
});

struct VersionPart {
  bool numeric = false;
  int64_t number = 0;     // the number, or the trailing number of a word part ("RC2" -> 2)
  std::string_view word;  // a word part without its trailing number
};

VersionPart ParsePart(std::string_view part) {
  VersionPart p;
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
  if (ec == std::errc() && end == part.data() + part.size() && !part.empty()) return {true, value, {}};
  size_t digits = part.size();
  while (digits > 0 && part[digits - 1] >= '0' && part[digits - 1] <= '9') --digits;
  p.word = part.substr(0, digits);
  std::from_chars(part.data() + digits, part.data() + part.size(), p.number);
  return p;
}

int ComparePart(const VersionPart& a, const VersionPart& b) {
  if (a.numeric != b.numeric) return a.numeric ? 1 : -1;
  if (!a.numeric && a.word != b.word) return a.word < b.word ? -1 : 1;
  return a.number == b.number ? 0 : (a.number < b.number ? -1 : 1);
}

std::string_view NextPart(std::string_view* rest) {
  const size_t dot = rest->find('.');
  const std::string_view part = rest->substr(0, dot);
  *rest = dot == std::string_view::npos ? std::string_view() : rest->substr(dot + 1);
  return part;
}

}  // namespace

std::span<const ApiReplacement> ApiReplacementTable() { return kTable; }

const ApiReplacement* RowReportedBy(std::string_view pattern_id) {
  for (const ApiReplacement& row : kTable) {
    if (!row.reported_by.empty() && row.reported_by == pattern_id) return &row;
  }
  return nullptr;
}

RunVersions ReadRunVersions(const TraceMetadata& metadata) {
  RunVersions versions;
  for (const MetadataEntry& entry : metadata.entries) {
    std::string key = entry.key;
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (key.ends_with("torch_npu_version")) {
      versions.torch_npu = entry.value;
    } else if (key.ends_with("cann_version")) {
      versions.cann = entry.value;
    }
  }
  return versions;
}

std::optional<int> CompareVersions(std::string_view a, std::string_view b) {
  if (a.empty() || b.empty()) return std::nullopt;
  // A local build suffix ("2.1.0+cpu") names the same release.
  a = a.substr(0, a.find('+'));
  b = b.substr(0, b.find('+'));
  while (!a.empty() || !b.empty()) {
    const VersionPart pa = a.empty() ? VersionPart{true, 0, {}} : ParsePart(NextPart(&a));
    const VersionPart pb = b.empty() ? VersionPart{true, 0, {}} : ParsePart(NextPart(&b));
    if (const int c = ComparePart(pa, pb); c != 0) return c;
  }
  return 0;
}

std::string VersionState(const ApiReplacement& row, const RunVersions& run, bool* reached) {
  const std::optional<int> cann = CompareVersions(run.cann, row.min_cann);
  const std::optional<int> torch_npu = CompareVersions(run.torch_npu, row.min_torch_npu);
  *reached = cann.value_or(0) >= 0 && torch_npu.value_or(0) >= 0;
  if (cann && *cann < 0) return fmt::format("needs CANN >= {} (this run: {})", row.min_cann, run.cann);
  if (torch_npu && *torch_npu < 0)
    return fmt::format("needs torch_npu >= {} (this run: {})", row.min_torch_npu, run.torch_npu);
  if (cann && torch_npu) return fmt::format("available: CANN {}, torch_npu {}", run.cann, run.torch_npu);
  return fmt::format("needs CANN >= {}, torch_npu >= {}; this run does not record its {}", row.min_cann,
                     row.min_torch_npu,
                     cann        ? "torch_npu version"
                     : torch_npu ? "CANN version"
                                 : "versions");
}

}  // namespace tuneprof
