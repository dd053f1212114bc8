#include "analysis/advisor/aicpu_fallbacks.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace tuneprof {
namespace {

constexpr std::string_view kIndexPutTypes = "IndexPut|IndexPutV2|IndexPutWithSort";
constexpr std::string_view kIndexTypes = "Index|IndexByTensor";
constexpr std::string_view kMaskGuide =
    "the result's length depends on the mask's values: where the selected values are only reduced or combined "
    "further, multiply by the mask or use torch.where and reduce the whole tensor, which keeps shapes fixed";

using G = AiCpuGuide;
constexpr std::array kAiCpuGuides = std::to_array<G>({
    {kIndexPutTypes, AiCpuGuideWhen::kBoolInput, "x[mask] = v (index_put_ with a boolean mask)",
     "x.masked_fill_(mask, v) for a scalar v, torch.where(mask, v, x) for a tensor: the same values with fixed "
     "shapes"},
    {kIndexPutTypes, AiCpuGuideWhen::kNoBoolInput, "x[idx] = v (index_put_ with index tensors)",
     "x.index_copy_(dim, idx, v), or x.index_add_ for accumulate=True, where the indices address one dimension, "
     "int32 indices where they fit; x[mask] = v arrives here too once the mask is made indices: use masked_fill_ "
     "/ torch.where for it"},
    {"NonZero|NonZeroWithValue|NonZeroWithValueShape", AiCpuGuideWhen::kAlways,
     "nonzero, torch.where(cond) with one argument, x[mask]",
     "its result has a row per true value, a shape the host learns only by waiting for the device: keep the mask "
     "and compute with it (torch.where(mask, a, b), a * mask, masked_fill) so that shapes stay fixed and nothing "
     "waits"},
    {"MaskedSelect|MaskedSelectV2|MaskedSelectV3", AiCpuGuideWhen::kAlways, "torch.masked_select, x[mask]", kMaskGuide},
    {kIndexTypes, AiCpuGuideWhen::kBoolInput, "x[mask] (indexing with a boolean mask)", kMaskGuide},
    {kIndexTypes, AiCpuGuideWhen::kNoBoolInput, "x[idx] (indexing with index tensors)",
     "torch.index_select(x, dim, idx) or torch.gather where the indices address one dimension, int32 indices "
     "where they fit; x[mask] arrives here too once the mask is made indices (a NonZero before it): keep the "
     "mask instead"},
    {"ArgMin|ArgMax|ArgMinV2|ArgMaxV2|ArgMinD|ArgMaxD|ArgMinWithValue|ArgMaxWithValue", AiCpuGuideWhen::kInt64Values,
     "argmin / argmax (or max / min over a dim) of int64 values",
     "cast the values to int32 first where they fit (float32 below 2^24): the indices come out the same"},
    {"Unique|UniqueWithCounts|UniqueConsecutive|UniqueWithCountsAndSorting", AiCpuGuideWhen::kAlways,
     "torch.unique, unique_consecutive",
     "its result's length depends on the values, a shape the host waits for: where their range is known (class "
     "or token ids), count into a tensor of that size instead (torch.zeros(n).scatter_add_(0, x, ones))"},
});

bool TypeListed(std::string_view types, std::string_view type) {
  while (!types.empty()) {
    const size_t cut = types.find('|');
    if (types.substr(0, cut) == type) return true;
    types = cut == std::string_view::npos ? std::string_view() : types.substr(cut + 1);
  }
  return false;
}

bool GuideApplies(AiCpuGuideWhen when, std::string_view input_dtypes) {
  const std::vector<std::string_view> inputs = SplitDtypes(input_dtypes);
  const bool has_bool = std::find(inputs.begin(), inputs.end(), "BOOL") != inputs.end();
  switch (when) {
    case AiCpuGuideWhen::kAlways:
      return true;
    case AiCpuGuideWhen::kBoolInput:
      return has_bool;
    case AiCpuGuideWhen::kNoBoolInput:
      return !has_bool;
    case AiCpuGuideWhen::kInt64Values:
      return !inputs.empty() && (inputs.front() == "INT64" || inputs.front() == "DT_INT64");
  }
  return false;
}

// One dtype list's places into `places` (grown to fit), counting the call at each known dtype.
void CountPlaces(std::string_view list, std::vector<std::map<std::string_view, uint64_t>>* places) {
  const std::vector<std::string_view> dtypes = SplitDtypes(list);
  if (places->size() < dtypes.size()) places->resize(dtypes.size());
  for (size_t i = 0; i < dtypes.size(); ++i) {
    if (!UnknownDtype(dtypes[i])) ++(*places)[i][dtypes[i]];
  }
}

// The dtypes of `list` no AI Core call has at their place, worded for `kind` ("input" / "output").
void MissingAtPlaces(std::string_view list, const std::vector<std::map<std::string_view, uint64_t>>& places,
                     std::string_view kind, std::vector<std::string>* out) {
  const std::vector<std::string_view> dtypes = SplitDtypes(list);
  for (size_t i = 0; i < dtypes.size(); ++i) {
    if (UnknownDtype(dtypes[i]) || (i < places.size() && places[i].contains(dtypes[i]))) continue;
    out->push_back(dtypes.size() == 1
                       ? fmt::format("{} {} {}", dtypes[i].starts_with('I') ? "an" : "a", dtypes[i], kind)
                       : fmt::format("{} at {} {}", dtypes[i], kind, i + 1));
  }
}

// The places where two dtype lists hold the same known dtype.
size_t SamePlaces(std::string_view a, std::string_view b) {
  const std::vector<std::string_view> left = SplitDtypes(a), right = SplitDtypes(b);
  size_t same = 0;
  for (size_t i = 0; i < left.size() && i < right.size(); ++i) same += !UnknownDtype(left[i]) && left[i] == right[i];
  return same;
}

}  // namespace

bool IsAiCoreUnit(std::string_view core) {
  return core == "AI_CORE" || core == "AI_VECTOR_CORE" || core.starts_with("MIX_");
}

std::vector<std::string_view> SplitDtypes(std::string_view list) {
  std::vector<std::string_view> out;
  while (!list.empty()) {
    const size_t cut = list.find(';');
    out.push_back(list.substr(0, cut));
    list = cut == std::string_view::npos ? std::string_view() : list.substr(cut + 1);
  }
  return out;
}

bool UnknownDtype(std::string_view dtype) {
  return dtype.empty() || dtype == "N/A" || dtype == "UNDEFINED" || dtype == "NULL" || dtype.starts_with("FORMAT_");
}

std::span<const AiCpuGuide> AiCpuGuideTable() { return kAiCpuGuides; }

const AiCpuGuide* AiCpuGuideFor(std::string_view type, std::string_view input_dtypes) {
  for (const AiCpuGuide& row : kAiCpuGuides) {
    if (TypeListed(row.types, type) && GuideApplies(row.when, input_dtypes)) return &row;
  }
  return nullptr;
}

AiCoreDtypes::AiCoreDtypes(const Trace& trace) {
  for (const NpuOpRow& row : trace.kernel_details().rows) {
    if (!IsAiCoreUnit(trace.str(row.accelerator_core))) continue;
    OfType& of = by_type_[trace.str(row.type).empty() ? trace.str(row.name) : trace.str(row.type)];
    ++of.calls;
    CountPlaces(trace.str(row.input_data_types), &of.inputs);
    CountPlaces(trace.str(row.output_data_types), &of.outputs);
    ++of.signatures[{trace.str(row.input_data_types), trace.str(row.output_data_types)}];
  }
}

const AiCoreDtypes::OfType* AiCoreDtypes::Find(std::string_view type) const {
  const auto it = by_type_.find(type);
  return it == by_type_.end() ? nullptr : &it->second;
}

uint64_t AiCoreDtypes::Calls(std::string_view type) const {
  const OfType* of = Find(type);
  return of == nullptr ? 0 : of->calls;
}

uint64_t AiCoreDtypes::CallsWith(std::string_view type, bool output, size_t place, std::string_view dtype) const {
  const OfType* of = Find(type);
  if (of == nullptr) return 0;
  const auto& places = output ? of->outputs : of->inputs;
  if (place >= places.size()) return 0;
  const auto it = places[place].find(dtype);
  return it == places[place].end() ? 0 : it->second;
}

std::vector<std::string> AiCoreDtypes::Missing(std::string_view type, std::string_view inputs,
                                               std::string_view outputs) const {
  std::vector<std::string> missing;
  const OfType* of = Find(type);
  if (of == nullptr) return missing;
  MissingAtPlaces(inputs, of->inputs, "input", &missing);
  MissingAtPlaces(outputs, of->outputs, "output", &missing);
  return missing;
}

std::string AiCoreDtypes::Signatures(std::string_view type, size_t limit, std::string_view inputs,
                                     std::string_view outputs) const {
  const OfType* of = Find(type);
  if (of == nullptr) return {};
  std::vector<std::pair<std::pair<std::string_view, std::string_view>, uint64_t>> sorted(of->signatures.begin(),
                                                                                         of->signatures.end());
  std::vector<size_t> alike;  // per signature, its places with the call's dtype
  for (const auto& [signature, calls] : sorted) {
    alike.push_back(SamePlaces(signature.first, inputs) + SamePlaces(signature.second, outputs));
  }
  std::vector<size_t> order(sorted.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return alike[a] != alike[b] ? alike[a] > alike[b] : sorted[a].second > sorted[b].second;
  });
  std::vector<std::pair<std::pair<std::string_view, std::string_view>, uint64_t>> ranked;
  for (const size_t i : order) ranked.push_back(sorted[i]);
  sorted = std::move(ranked);
  std::string text;
  for (size_t i = 0; i < sorted.size() && i < limit; ++i) {
    text += fmt::format("{}{} x{}", i ? ", " : "", DtypeSignature(sorted[i].first.first, sorted[i].first.second),
                        sorted[i].second);
  }
  if (sorted.size() > limit) text += fmt::format(" and {} more", sorted.size() - limit);
  return text;
}

std::vector<std::pair<std::string_view, uint64_t>> AiCoreDtypes::InputsAt(std::string_view type, size_t place) const {
  const OfType* of = Find(type);
  if (of == nullptr || place >= of->inputs.size()) return {};
  std::vector<std::pair<std::string_view, uint64_t>> sorted(of->inputs[place].begin(), of->inputs[place].end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return sorted;
}

std::string DtypeSignature(std::string_view inputs, std::string_view outputs) {
  const auto known = [](std::string_view list) {
    for (const std::string_view dtype : SplitDtypes(list)) {
      if (!UnknownDtype(dtype)) return true;
    }
    return false;
  };
  if (!known(inputs) && !known(outputs)) return "dtypes not recorded";
  if (!known(outputs)) return std::string(inputs);
  return fmt::format("{} -> {}", known(inputs) ? inputs : "?", outputs);
}

}  // namespace tuneprof
