#include "analysis/core/hardware_profile.h"

#include "analysis/core/chip_inference.h"
#include "analysis/core/json_document.h"

#include <simdjson.h>

#include <array>
#include <cctype>
#include <string>
#include <utility>

namespace tuneprof {

// data/hardware_profiles.json, written into a generated source file at build time.
extern const char kEmbeddedHardwareProfilesJson[];

namespace {

constexpr std::string_view kSchema = "tuneprof.hardware_profiles/1";

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

// Reads a profile file; the first error found names the profile and field.
class ProfileReader {
 public:
  explicit ProfileReader(std::string_view origin) : origin_(origin) {}

  Status Read(std::string_view json, std::vector<HardwareProfile>* out) {
    simdjson::dom::parser parser;
    TP_ASSIGN_OR_RETURN(simdjson::dom::element root, ParseJsonDocument(&parser, json, Source()));
    std::string_view schema;
    if (root["schema"].get(schema) || schema != kSchema) {
      return Fail("", "schema", "expected \"" + std::string(kSchema) + "\"");
    }
    simdjson::dom::array profiles;
    if (root["profiles"].get(profiles)) return Fail("", "profiles", "expected an array");
    for (simdjson::dom::element element : profiles) {
      HardwareProfile profile;
      if (Status status = ReadProfile(element, &profile); !status.ok()) return status;
      out->push_back(std::move(profile));
    }
    return Status::Ok();
  }

 private:
  std::string Source() const { return "hardware profiles " + std::string(origin_); }

  Status Fail(std::string_view profile, std::string_view field, std::string_view what) const {
    std::string message = Source();
    if (!profile.empty()) message += ": profile \"" + std::string(profile) + "\"";
    if (!field.empty()) message += ": " + std::string(field);
    return InvalidInput(message + ": " + std::string(what));
  }

  Status ReadProfile(simdjson::dom::element element, HardwareProfile* p) {
    std::string_view text;
    if (element["name"].get(text) || text.empty()) return Fail("", "name", "expected a non-empty string");
    p->name = text;
    if (!element["vendor"].get(text)) p->vendor = text;
    if (element["kind"].get(text)) return Fail(p->name, "kind", "expected a string");
    p->kind = text;
    simdjson::dom::array names;
    if (element["device_names"].get(names)) return Fail(p->name, "device_names", "expected an array");
    for (simdjson::dom::element name : names) {
      if (name.get(text)) return Fail(p->name, "device_names", "expected strings");
      p->device_names.emplace_back(text);
    }
    simdjson::dom::array variants;
    if (!element["variants"].get(variants)) {
      for (simdjson::dom::element variant : variants) {
        if (variant.get(text)) return Fail(p->name, "variants", "expected strings");
        p->variants.emplace_back(text);
      }
    }
    bool flag = false;
    if (!element["arch_default"].get(flag)) p->arch_default = flag;
    const std::array<std::pair<std::string_view, SourcedValue*>, 17> fields = {{
        {"peak_fp16_tflops", &p->peak_fp16_tflops},
        {"peak_bf16_tflops", &p->peak_bf16_tflops},
        {"peak_fp32_tflops", &p->peak_fp32_tflops},
        {"peak_int8_tops", &p->peak_int8_tops},
        {"memory_gb", &p->memory_gb},
        {"memory_gb_per_s", &p->memory_gb_per_s},
        {"core_read_path_gb_per_s", &p->core_read_path_gb_per_s},
        {"sm_count", &p->sm_count},
        {"max_threads_per_sm", &p->max_threads_per_sm},
        {"max_blocks_per_sm", &p->max_blocks_per_sm},
        {"registers_per_sm", &p->registers_per_sm},
        {"shared_memory_per_sm_kib", &p->shared_memory_per_sm_kib},
        {"compute_capability", &p->compute_capability},
        {"cube_cores", &p->cube_cores},
        {"vector_cores", &p->vector_cores},
        {"ai_cpu_cores", &p->ai_cpu_cores},
        {"clock_mhz", &p->clock_mhz},
    }};
    for (const auto& [key, value] : fields) {
      simdjson::dom::element field;
      if (element[key].get(field)) continue;  // absent: not applicable to this kind of chip
      TP_RETURN_IF_ERROR(ReadValue(p->name, key, field, value));
    }
    return ReadLinks(element, p);
  }

  Status ReadLinks(simdjson::dom::element element, HardwareProfile* p) {
    simdjson::dom::object links;
    if (element["links"].get(links)) return Fail(p->name, "links", "expected an object");
    for (auto [transport, field] : links) {
      LinkBandwidth link;
      link.transport = transport;
      TP_RETURN_IF_ERROR(ReadValue(p->name, "links." + link.transport, field, &link.gb_per_s));
      p->links.push_back(std::move(link));
    }
    return Status::Ok();
  }

  // {"value": number or null, "source": "...", "derived": bool, "unverified": bool}; the source is
  // required, known or not, so that a reader can tell "unknown" from "forgotten".
  Status ReadValue(std::string_view profile, std::string_view key, simdjson::dom::element field, SourcedValue* out) {
    std::string_view source;
    if (field["source"].get(source) || source.empty()) return Fail(profile, key, "every value needs a \"source\"");
    out->source = source;
    simdjson::dom::element value;
    if (field["value"].get(value)) return Fail(profile, key, "missing \"value\" (null when unknown)");
    if (!value.is_null()) {
      double number = 0;
      if (value.get(number) || number < 0) return Fail(profile, key, "\"value\" must be a non-negative number or null");
      out->value = number;
    }
    bool flag = false;
    if (!field["derived"].get(flag)) out->derived = flag;
    if (!field["unverified"].get(flag)) out->unverified = flag;
    return ReadRange(profile, key, field, out);
  }

  // "range": [low, high], optional: a family's figure across its variants.
  Status ReadRange(std::string_view profile, std::string_view key, simdjson::dom::element field, SourcedValue* out) {
    simdjson::dom::element element;
    if (field["range"].get(element)) return Status::Ok();
    simdjson::dom::array range;
    if (element.get(range)) return Fail(profile, key, "\"range\" must be [low, high] with 0 <= low <= high");
    double bounds[2] = {0, 0};
    size_t count = 0;
    for (simdjson::dom::element bound : range) {
      if (count == 2 || bound.get(bounds[count]) || bounds[count] < 0) break;
      ++count;
    }
    if (count != 2 || range.size() != 2 || bounds[0] > bounds[1]) {
      return Fail(profile, key, "\"range\" must be [low, high] with 0 <= low <= high");
    }
    out->range_low = bounds[0];
    out->range_high = bounds[1];
    return Status::Ok();
  }

  std::string_view origin_;
};

}  // namespace

std::optional<double> HardwareProfile::RidgeFlopPerByte() const {
  if (!peak_fp16_tflops.value || !memory_gb_per_s.value || *memory_gb_per_s.value <= 0) return std::nullopt;
  return *peak_fp16_tflops.value * 1e12 / (*memory_gb_per_s.value * 1e9);
}

Result<HardwareProfiles> HardwareProfiles::Parse(std::string_view json, std::string_view origin) {
  std::vector<HardwareProfile> profiles;
  ProfileReader reader(origin);
  TP_RETURN_IF_ERROR(reader.Read(json, &profiles));
  HardwareProfiles result;
  result.profiles_ = std::move(profiles);
  return result;
}

Result<HardwareProfiles> HardwareProfiles::Builtin() { return Parse(kEmbeddedHardwareProfilesJson, "(built in)"); }

const HardwareProfile* HardwareProfiles::FindByName(std::string_view name) const {
  for (const HardwareProfile& profile : profiles_) {
    if (EqualsIgnoreCase(profile.name, name)) return &profile;
  }
  return Detect(name);
}

const HardwareProfile* HardwareProfiles::Detect(std::string_view device_name, int64_t num_sms) const {
  if (device_name.empty()) return nullptr;
  for (const HardwareProfile& profile : profiles_) {
    for (const std::string& name : profile.device_names) {
      if (!EqualsIgnoreCase(name, device_name)) continue;
      const bool sm_mismatch =
          num_sms != kNoId && profile.sm_count.value && static_cast<int64_t>(*profile.sm_count.value) != num_sms;
      if (!sm_mismatch) return &profile;
    }
  }
  return nullptr;
}

std::vector<const HardwareProfile*> HardwareProfiles::GpuCandidates(std::string_view vendor) const {
  std::vector<const HardwareProfile*> out;
  for (const HardwareProfile& profile : profiles_) {
    if (profile.kind == "gpu" && profile.vendor == vendor && profile.variants.empty() &&
        profile.compute_capability.value) {
      out.push_back(&profile);
    }
  }
  return out;
}

namespace {

// "variant unknown; use --hardware "Ascend 910B1", ... or ...": a family name fixes what the variants
// share (links, AI CPUs) but not their cores and peaks, so none is picked for the user.
std::string VariantUnknown(const HardwareProfile& family) {
  std::string how = "variant unknown; use --hardware \"" + family.variants.front() + "\"";
  for (size_t i = 1; i < family.variants.size(); ++i) {
    how += (i + 1 == family.variants.size() ? " or \"" : ", \"") + family.variants[i] + "\"";
  }
  return how;
}

}  // namespace

const Device* PrimaryDevice(const Trace& trace) {
  const EventTable& events = trace.events();
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (!IsDeviceKind(events.kind[i])) continue;
    const uint32_t device = trace.processes()[trace.tracks()[events.track[i]].process].device;
    if (device != kNoIndex && !trace.str(trace.devices()[device].name).empty()) return &trace.devices()[device];
    break;
  }
  for (const Device& device : trace.devices()) {
    if (device.type != DeviceType::kCpu && !trace.str(device.name).empty()) return &device;
  }
  return nullptr;
}

DeviceType TracePlatform(const Trace& trace) {
  bool gpu = false;
  for (const Device& device : trace.devices()) {
    if (device.type == DeviceType::kNpu) return DeviceType::kNpu;
    gpu |= device.type == DeviceType::kGpu;
  }
  if (gpu) return DeviceType::kGpu;
  if (FactsOf(trace.metadata().format).ascend_profiler) return DeviceType::kNpu;
  if (trace.metadata().format == TraceFormat::kNsysSqlite) return DeviceType::kGpu;
  return DeviceType::kCpu;
}

HardwareSelection SelectHardware(const Trace& trace, const HardwareProfiles& profiles, const HardwareProfile* forced) {
  HardwareSelection selection;
  const Device* device = PrimaryDevice(trace);
  if (device) selection.device_name = trace.str(device->name);
  if (forced) {
    selection.profile = forced;
    selection.how = "--hardware";
    return selection;
  }
  if (!device) {
    bool ascend = false;
    HardwareSelection npu = InferAscendHardware(trace, profiles, &ascend);
    if (ascend) SettleAscendVariant(trace, profiles, &npu);
    if (ascend) return npu;
    HardwareSelection by_properties = IdentifyFromProperties(trace, profiles);
    const bool decided = by_properties.profile != nullptr || !by_properties.how.empty();
    return decided ? by_properties : InferHardware(CollectChipEvidence(trace), profiles);
  }
  selection.profile = profiles.Detect(selection.device_name, device->num_sms);
  if (selection.profile && !selection.profile->variants.empty()) {
    selection.how = VariantUnknown(*selection.profile) +
                    AscendVariantHint(CollectAscendVariantEvidence(trace), *selection.profile, profiles);
    SettleAscendVariant(trace, profiles, &selection);
  } else if (selection.profile) {
    selection.how = "detected";
  } else if (const HardwareProfile* by_name = profiles.Detect(selection.device_name)) {
    selection.how = "named like " + by_name->name + " but has " + std::to_string(device->num_sms) + " SMs, not " +
                    std::to_string(static_cast<int64_t>(*by_name->sm_count.value));
  } else {
    selection.how = UnmatchedDeviceHow(selection.device_name, device->compute_major, device->compute_minor, profiles,
                                       DeviceVendor(*device, selection.device_name));
  }
  return selection;
}

}  // namespace tuneprof
