#include "analysis/core/chip_inference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <unordered_map>

namespace tuneprof {
namespace {

// Tags outside this range are not architectures ("sm3" in a hash, "sm9999" in a shape).
constexpr int kLowestTag = 30;
constexpr int kHighestTag = 130;
// From this capability on, the evidence names the architecture rather than bounding it (see the header).
constexpr int kArchitectureNamed = 90;
constexpr size_t kMaxCandidatesNamed = 4;

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

int Capability(const HardwareProfile& profile) {
  return static_cast<int>(std::lround(*profile.compute_capability.value * 10));
}

std::string CapabilityText(int capability) { return fmt::format("{}.{}", capability / 10, capability % 10); }

std::string Quoted(const std::vector<const HardwareProfile*>& profiles, size_t first, std::string_view last_joint) {
  std::string out;
  const size_t count = std::min(profiles.size(), first + kMaxCandidatesNamed);
  for (size_t i = first; i < count; ++i) {
    out += i == first ? "" : (i + 1 == count ? std::string(last_joint) : ", ");
    out += "\"" + profiles[i]->name + "\"";
  }
  if (profiles.size() > count) out += fmt::format(" (+{} more)", profiles.size() - count);
  return out;
}

// The profile of the chips that split the AI Core into Cube and Vector cores, variant unknown.
constexpr std::string_view kAscend910bFamily = "Ascend 910B (variant unknown)";

std::vector<const HardwareProfile*> VariantProfiles(const HardwareProfile& family, const HardwareProfiles& profiles) {
  std::vector<const HardwareProfile*> variants;
  for (const std::string& name : family.variants) {
    if (const HardwareProfile* variant = profiles.FindByName(name)) variants.push_back(variant);
  }
  return variants;
}

}  // namespace

namespace {

// CUTLASS 2's kernel names carry the architecture after the library's name: "cutlass_80_tensorop_...".
int CutlassTag(std::string_view name) {
  constexpr std::string_view kCutlass = "cutlass_";
  int best = 0;
  for (size_t at = name.find(kCutlass); at != std::string_view::npos; at = name.find(kCutlass, at + 1)) {
    size_t end = at + kCutlass.size();
    int value = 0;
    while (end < name.size() && end - at - kCutlass.size() < 3 && std::isdigit(static_cast<unsigned char>(name[end]))) {
      value = value * 10 + (name[end] - '0');
      ++end;
    }
    const size_t digits = end - at - kCutlass.size();
    if (digits >= 2 && end < name.size() && name[end] == '_' && value >= kLowestTag && value <= kHighestTag) {
      best = std::max(best, value);
    }
  }
  return best;
}

}  // namespace

int KernelNameCapability(std::string_view name) {
  int best = CutlassTag(name);
  for (size_t i = 0; i + 2 < name.size(); ++i) {
    if ((name[i] != 's' && name[i] != 'S') || (name[i + 1] != 'm' && name[i + 1] != 'M')) continue;
    if (i > 0 && IsAlnum(name[i - 1])) continue;  // "gsm80", "xsm90": not a tag
    size_t end = i + 2;
    int value = 0;
    while (end < name.size() && end - i - 2 < 3 && std::isdigit(static_cast<unsigned char>(name[end]))) {
      value = value * 10 + (name[end] - '0');
      ++end;
    }
    const size_t digits = end - i - 2;
    // A tag ends the word or carries an arch suffix ("sm90a"); "sm900x" is not one.
    if (digits < 2 || (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end])))) continue;
    if (value >= kLowestTag && value <= kHighestTag) best = std::max(best, value);
  }
  return best;
}

ChipEvidence CollectChipEvidence(const Trace& trace) {
  ChipEvidence evidence;
  const EventTable& events = trace.events();
  std::unordered_map<uint32_t, int> tag_of;  // per kernel name: names repeat
  int tag = 0;
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events.kind[i] != EventKind::kKernel) continue;
    auto [it, inserted] = tag_of.try_emplace(events.name[i].value, 0);
    if (inserted) it->second = KernelNameCapability(trace.str(events.name[i]));
    if (it->second == 0) continue;
    if (it->second > tag) {
      tag = it->second;
      evidence.tagged_kernels = 0;
    }
    if (it->second == tag) ++evidence.tagged_kernels;
  }
  for (const KernelInfo& info : trace.kernels()) {
    if (info.cluster_blocks == kNoId || info.cluster_blocks <= 1) continue;
    ++evidence.cluster_kernels;
    if (info.max_active_clusters != kNoId && info.max_active_clusters > 0) {
      evidence.min_sms = std::max(evidence.min_sms, info.max_active_clusters * info.cluster_blocks);
    }
  }
  for (const Device& device : trace.devices()) {
    if (device.type != DeviceType::kGpu || device.num_sms == kNoId || device.num_sms <= 0) continue;
    evidence.device_sms = evidence.device_sms == 0 || evidence.device_sms == device.num_sms ? device.num_sms : -1;
  }
  evidence.device_sms = std::max<int64_t>(evidence.device_sms, 0);
  const int cluster_capability = evidence.cluster_kernels > 0 ? kArchitectureNamed : 0;
  evidence.from_tag = tag >= cluster_capability && tag > 0;
  evidence.min_capability = std::max(tag, cluster_capability);
  if (evidence.from_tag) {
    evidence.basis = fmt::format("sm{} kernels", tag);
    evidence.short_basis = evidence.basis;
  } else if (cluster_capability > 0) {
    evidence.short_basis = "thread-block clusters";
    evidence.basis = fmt::format("thread-block clusters in {} kernels (compute capability {} or newer)",
                                 evidence.cluster_kernels, CapabilityText(cluster_capability));
  }
  if (evidence.min_sms > 0) {
    evidence.basis += fmt::format(" and their maxActiveClusters x cluster size (at least {} SMs)", evidence.min_sms);
  }
  if (evidence.device_sms > 0 && evidence.min_capability > 0) {
    evidence.basis += fmt::format(" and the device table's {} SMs", evidence.device_sms);
  }
  return evidence;
}

bool IsAscendRun(const Trace& trace) {
  return trace.kernel_details().present || FactsOf(trace.metadata().format).ascend_profiler;
}

namespace {

// A run whose operators do not say their engine (Level0 writes N/A): the AI Core clock msprof sampled
// still names the family where only its variants run at that clock among the Ascend profiles.
HardwareSelection AssumeFamilyFromClock(const Trace& trace, const HardwareProfile& family,
                                        const HardwareProfiles& profiles) {
  HardwareSelection selection;
  selection.how = "the run does not name its chip: pass --hardware NAME (e.g. \"Ascend 910B2\")";
  const AscendVariantEvidence evidence = CollectAscendVariantEvidence(trace);
  if (evidence.clock_mhz == 0) return selection;
  const std::vector<const HardwareProfile*> variants = VariantProfiles(family, profiles);
  const auto runs_at_clock = [&](const HardwareProfile& p) {
    return p.clock_mhz.value && std::llround(*p.clock_mhz.value) == evidence.clock_mhz;
  };
  for (const HardwareProfile& other : profiles.profiles()) {
    const bool variant = std::find(variants.begin(), variants.end(), &other) != variants.end();
    if (other.kind == "npu" && !variant && runs_at_clock(other)) return selection;  // another chip's clock too
  }
  if (std::none_of(variants.begin(), variants.end(), [&](const HardwareProfile* v) { return runs_at_clock(*v); })) {
    return selection;
  }
  selection.profile = &family;
  selection.inferred = true;
  selection.label = family.name + " (assumed from the AI Core clock; pass --hardware to override)";
  selection.how = fmt::format(
      "assumed from the AI Core clock msprof sampled ({} MHz), which among the Ascend profiles only the 910B "
      "family runs at; variant unknown: pass --hardware with the chip ({}){}",
      evidence.clock_mhz, Quoted(variants, 0, " or "), AscendVariantHint(evidence, family, profiles));
  return selection;
}

}  // namespace

HardwareSelection InferAscendHardware(const Trace& trace, const HardwareProfiles& profiles, bool* ascend) {
  HardwareSelection selection;
  *ascend = IsAscendRun(trace);
  if (!*ascend) return selection;
  uint64_t vector_core_ops = 0;
  for (const NpuOpRow& row : trace.kernel_details().rows) {
    const std::string_view core = trace.str(row.accelerator_core);
    vector_core_ops += core == "AI_VECTOR_CORE" || core == "MIX_AIV" || core == "MIX_AIC";
  }
  const HardwareProfile* family = profiles.FindByName(kAscend910bFamily);
  if (family == nullptr) {
    selection.how = "the run does not name its chip: pass --hardware NAME (e.g. \"Ascend 910B2\")";
    return selection;
  }
  if (vector_core_ops == 0) return AssumeFamilyFromClock(trace, *family, profiles);
  selection.profile = family;
  selection.inferred = true;
  selection.label = family->name + " (assumed from operators on AI Vector cores; pass --hardware to override)";
  selection.how = fmt::format(
      "assumed from {} operators on separate AI Vector cores (Ascend 910B family or 910_93); variant unknown: "
      "pass --hardware with the chip ({}){}",
      vector_core_ops, Quoted(VariantProfiles(*family, profiles), 0, " or "),
      AscendVariantHint(CollectAscendVariantEvidence(trace), *family, profiles));
  return selection;
}

HardwareSelection InferHardware(const ChipEvidence& evidence, const HardwareProfiles& profiles) {
  HardwareSelection selection;
  if (evidence.min_capability == 0) {
    selection.how = "the trace does not name its device: pass --hardware NAME";
    return selection;
  }
  std::vector<const HardwareProfile*> candidates;
  for (const HardwareProfile* profile : profiles.GpuCandidates()) {
    if (Capability(*profile) < evidence.min_capability) continue;
    if (evidence.min_sms > 0 && profile->sm_count.value && *profile->sm_count.value < evidence.min_sms) continue;
    if (evidence.device_sms > 0 && profile->sm_count.value && *profile->sm_count.value != evidence.device_sms) {
      continue;
    }
    candidates.push_back(profile);
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const HardwareProfile* a, const HardwareProfile* b) { return Capability(*a) < Capability(*b); });
  const std::string bound = evidence.from_tag && evidence.min_capability >= kArchitectureNamed
                                ? "compute capability " + CapabilityText(evidence.min_capability)
                                : "compute capability " + CapabilityText(evidence.min_capability) + " or newer";
  if (candidates.empty()) {
    selection.how = fmt::format(
        "the trace does not name its device; its {} say {}, which no profile matches: pass "
        "--hardware NAME or --hardware-file FILE",
        evidence.basis, bound);
    return selection;
  }
  if (evidence.min_capability >= kArchitectureNamed) {
    const int oldest = Capability(*candidates.front());
    std::erase_if(candidates, [&](const HardwareProfile* p) { return Capability(*p) != oldest; });
    if (candidates.size() == 1) {
      selection.profile = candidates.front();
      selection.inferred = true;
      selection.how = fmt::format("inferred from {}; pass --hardware to override", evidence.basis);
      selection.label = fmt::format("{} (inferred from {}; pass --hardware to override)", selection.profile->name,
                                    evidence.short_basis);
      return selection;
    }
    auto chosen =
        std::find_if(candidates.begin(), candidates.end(), [](const HardwareProfile* p) { return p->arch_default; });
    if (chosen != candidates.end()) {
      std::rotate(candidates.begin(), chosen, chosen + 1);
      selection.profile = candidates.front();
      selection.inferred = true;
      selection.how =
          fmt::format("assumed from {}; compute capability {} could also be {}; pass --hardware to override",
                      evidence.basis, CapabilityText(oldest), Quoted(candidates, 1, " or "));
      selection.label = fmt::format("{} (assumed from {}; pass --hardware to override)", selection.profile->name,
                                    evidence.short_basis);
      return selection;
    }
  }
  selection.how = fmt::format("the trace does not name its device; its {} say {}: pass --hardware NAME ({})",
                              evidence.basis, bound, Quoted(candidates, 0, " or "));
  return selection;
}

std::string UnmatchedDeviceHow(std::string_view device_name, int64_t major, int64_t minor,
                               const HardwareProfiles& profiles, std::string_view vendor) {
  std::string how = "no profile for this device name";
  // A capability outside what any GPU reports (a garbled trace) is no hint at all.
  const bool known = major >= 0 && major <= 99 && minor >= 0 && minor <= 9;
  if (!known) return how + ": pass --hardware NAME or --hardware-file FILE";
  const int capability = static_cast<int>(major * 10 + minor);
  std::vector<const HardwareProfile*> closest;
  for (const HardwareProfile* profile : profiles.GpuCandidates(vendor)) {
    if (Capability(*profile) / 10 == major) closest.push_back(profile);
  }
  std::stable_sort(closest.begin(), closest.end(), [&](const HardwareProfile* a, const HardwareProfile* b) {
    return std::abs(Capability(*a) - capability) < std::abs(Capability(*b) - capability);
  });
  how += fmt::format(" ({}, compute capability {})", device_name, CapabilityText(capability));
  if (closest.empty()) return how + ": pass --hardware-file FILE with its peaks";
  return how + ": pass --hardware NAME (closest: " + Quoted(closest, 0, ", ") + ") or --hardware-file FILE";
}

std::string_view DeviceVendor(const Device& device, std::string_view name) {
  const bool amd = device.warp_size == 64 || name.starts_with("AMD ") || name.starts_with("gfx");
  return amd ? HardwareProfiles::kAmd : HardwareProfiles::kNvidia;
}

namespace {

// Whether a device reporting `bytes` of memory can be a part sold as `gb`: vendors print GB where the
// device reports GiB (a 192 GB MI300X reports 191.5 GiB), and the driver keeps some back.
bool MemoryFits(int64_t bytes, double gb) {
  const double reported = static_cast<double>(bytes);
  return reported >= 0.85 * gb * 1e9 && reported <= 1.02 * gb * 1073741824.0;
}

bool PropertiesMatch(const Device& device, std::string_view vendor, const HardwareProfile& profile) {
  if (profile.vendor != vendor || !profile.sm_count.value || !profile.compute_capability.value) return false;
  if (static_cast<int64_t>(*profile.sm_count.value) != device.num_sms) return false;
  if (Capability(profile) != device.compute_major * 10 + device.compute_minor) return false;
  return device.total_memory_bytes == kNoId || !profile.memory_gb.value ||
         MemoryFits(device.total_memory_bytes, *profile.memory_gb.value);
}

}  // namespace

HardwareSelection IdentifyFromProperties(const Trace& trace, const HardwareProfiles& profiles) {
  HardwareSelection selection;
  for (const Device& device : trace.devices()) {
    if (device.type != DeviceType::kGpu || !device.from_properties || device.num_sms <= 0) continue;
    if (device.compute_major < 0 || device.compute_major > 99 || device.compute_minor < 0 || device.compute_minor > 9) {
      continue;
    }
    const std::string_view vendor = DeviceVendor(device, trace.str(device.name));
    std::vector<const HardwareProfile*> matches;
    for (const HardwareProfile* profile : profiles.GpuCandidates(vendor)) {
      if (PropertiesMatch(device, vendor, *profile)) matches.push_back(profile);
    }
    if (matches.size() != 1) {
      // Kernel names prove nothing of an AMD chip, so the candidates are said here.
      if (vendor == HardwareProfiles::kAmd) {
        selection.how = matches.empty() ? UnmatchedDeviceHow("unnamed AMD device", device.compute_major,
                                                             device.compute_minor, profiles, vendor)
                                        : fmt::format(
                                              "the unnamed AMD device's properties ({} compute units) fit {}: "
                                              "pass --hardware NAME",
                                              device.num_sms, Quoted(matches, 0, " or "));
      }
      return selection;
    }
    const std::string basis =
        fmt::format("{} device properties: compute capability {}.{}, {} compute units{}", vendor, device.compute_major,
                    device.compute_minor, device.num_sms,
                    device.total_memory_bytes == kNoId
                        ? ""
                        : fmt::format(", {:.1f} GiB", static_cast<double>(device.total_memory_bytes) / 1073741824.0));
    selection.profile = matches.front();
    selection.inferred = true;
    selection.how = fmt::format("identified from the unnamed device's {}; pass --hardware to override", basis);
    selection.label = selection.profile->name + " (identified from device properties; pass --hardware to override)";
    return selection;
  }
  return selection;
}

namespace {

// A positive whole number from a metadata value ("24", "1800"); 0 otherwise.
int64_t StatedNumber(std::string_view text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && value > 0 && value < 1'000'000 ? value : 0;
}

// info.json's DeviceInfo entries ("msprof_info.device_<N>.<key>", ascend_msprof.h) and the NPU's memory size.
void AddStatedFigures(const Trace& trace, AscendVariantEvidence* evidence) {
  for (const MetadataEntry& entry : trace.metadata().entries) {
    if (!entry.key.starts_with("msprof_info.")) continue;
    if (entry.key.ends_with(".ai_core_num") && evidence->stated_cube_cores == 0) {
      evidence->stated_cube_cores = StatedNumber(entry.value);
    } else if (entry.key.ends_with(".aic_frequency") && evidence->stated_clock_mhz == 0) {
      evidence->stated_clock_mhz = StatedNumber(entry.value);
    }
  }
  for (const Device& device : trace.devices()) {
    if (device.type == DeviceType::kNpu && device.total_memory_bytes > 0) {
      evidence->memory_bytes = device.total_memory_bytes;
      break;
    }
  }
}

// A stated figure the profile's differs from (an unstated one, or a profile without it, differs from none).
bool Differs(int64_t stated, const SourcedValue& figure) {
  return stated > 0 && figure.value && std::llround(*figure.value) != stated;
}

}  // namespace

AscendVariantEvidence CollectAscendVariantEvidence(const Trace& trace) {
  AscendVariantEvidence evidence;
  const std::vector<Counter>& counters = trace.counters();
  std::vector<char> clock(counters.size(), 0);
  for (size_t i = 0; i < counters.size(); ++i) clock[i] = trace.str(counters[i].name) == "AI Core Freq/MHz";
  double highest = 0;
  for (const CounterSample& sample : trace.counter_samples()) {
    if (sample.counter < clock.size() && clock[sample.counter]) highest = std::max(highest, sample.value);
  }
  if (highest >= 1 && highest < 1e5) evidence.clock_mhz = std::llround(highest);
  // Operators that spread over the whole chip launch one block per core; the most common block dim of
  // each engine is taken as its core count only where the two agree with the family's 1 Cube : 2 Vector.
  std::unordered_map<int64_t, int64_t> cube, vector;
  for (const NpuOpRow& row : trace.kernel_details().rows) {
    if (row.block_dim <= 1 || row.block_dim > 1024) continue;
    const std::string_view core = trace.str(row.accelerator_core);
    if (core == "AI_CORE") ++cube[row.block_dim];
    if (core == "AI_VECTOR_CORE") ++vector[row.block_dim];
  }
  const auto modal = [](const std::unordered_map<int64_t, int64_t>& counts) {
    std::pair<int64_t, int64_t> best{0, 0};  // (count, block dim); ties go to the larger block dim
    for (const auto& [dim, count] : counts) best = std::max(best, std::pair<int64_t, int64_t>{count, dim});
    return best.second;
  };
  const int64_t cubes = modal(cube), vectors = modal(vector);
  if (cubes > 0 && vectors == 2 * cubes) {
    evidence.cube_cores = cubes;
    evidence.vector_cores = vectors;
  }
  AddStatedFigures(trace, &evidence);
  return evidence;
}

const HardwareProfile* AscendVariantFromStatedFigures(const AscendVariantEvidence& evidence,
                                                      const HardwareProfile& family, const HardwareProfiles& profiles,
                                                      std::string* basis) {
  if (evidence.stated_cube_cores == 0 && evidence.stated_clock_mhz == 0 && evidence.memory_bytes == 0) return nullptr;
  std::vector<const HardwareProfile*> variants = VariantProfiles(family, profiles);
  std::erase_if(variants, [&](const HardwareProfile* v) {
    return Differs(evidence.stated_cube_cores, v->cube_cores) || Differs(evidence.stated_clock_mhz, v->clock_mhz) ||
           (evidence.memory_bytes > 0 &&
            (!v->memory_gb.value || !MemoryFits(evidence.memory_bytes, *v->memory_gb.value)));
  });
  if (variants.size() != 1) return nullptr;
  std::string stated;
  if (evidence.stated_cube_cores > 0) stated = fmt::format("{} AI cores", evidence.stated_cube_cores);
  if (evidence.stated_clock_mhz > 0) {
    stated += fmt::format("{}AI Core clock {} MHz", stated.empty() ? "" : ", ", evidence.stated_clock_mhz);
  }
  basis->clear();
  if (!stated.empty()) *basis = "msprof's info.json (" + stated + ")";
  if (evidence.memory_bytes > 0) {
    *basis += fmt::format("{}the device memory size ({:.1f} GiB)", basis->empty() ? "" : " and ",
                          static_cast<double>(evidence.memory_bytes) / 1073741824.0);
  }
  return variants.front();
}

void SettleAscendVariant(const Trace& trace, const HardwareProfiles& profiles, HardwareSelection* selection) {
  if (selection->profile == nullptr || selection->profile->variants.empty()) return;
  std::string basis;
  const HardwareProfile* variant =
      AscendVariantFromStatedFigures(CollectAscendVariantEvidence(trace), *selection->profile, profiles, &basis);
  if (variant == nullptr) return;
  selection->profile = variant;
  selection->inferred = true;
  selection->how = "identified from " + basis + "; pass --hardware to override";
  selection->label = variant->name + " (identified from " + basis + "; pass --hardware to override)";
}

std::string AscendVariantHint(const AscendVariantEvidence& evidence, const HardwareProfile& family,
                              const HardwareProfiles& profiles) {
  if (evidence.clock_mhz == 0 && evidence.cube_cores == 0) return "";
  std::vector<const HardwareProfile*> variants = VariantProfiles(family, profiles);
  const size_t all = variants.size();
  std::erase_if(variants, [&](const HardwareProfile* v) {
    const bool clock_differs =
        evidence.clock_mhz > 0 && v->clock_mhz.value && std::llround(*v->clock_mhz.value) != evidence.clock_mhz;
    const bool cores_differ =
        evidence.cube_cores > 0 && v->cube_cores.value && std::llround(*v->cube_cores.value) != evidence.cube_cores;
    return clock_differs || cores_differ;
  });
  if (variants.empty() || variants.size() == all) return "";
  std::string basis;
  if (evidence.clock_mhz > 0) basis = fmt::format("AI Core clock {} MHz", evidence.clock_mhz);
  if (evidence.cube_cores > 0) {
    basis += fmt::format("{}operators launched on {} Cube / {} Vector cores", basis.empty() ? "" : ", ",
                         evidence.cube_cores, evidence.vector_cores);
  }
  return fmt::format("; likely {} ({})", Quoted(variants, 0, " or "), basis);
}

}  // namespace tuneprof
