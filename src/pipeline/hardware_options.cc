#include "pipeline/hardware_options.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "io/byte_source.h"

namespace tuneprof {
namespace {

// A flag's JSON (hardware profiles, advisor thresholds, a previous advise) holds KBs to a few MB.
constexpr size_t kFlagFileLimit = size_t{256} << 20;

}  // namespace

Result<std::string> ReadFlagFile(const std::string& path, std::string_view flag) {
  // A FIFO or a device would block or never end; only regular files are read.
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    return Status(StatusCode::kUsage, fmt::format("{} {}: not a regular file; give a JSON file", flag, path));
  }
  // Through io, which records the file as read: no output may be written over it (io/output_file.h).
  Result<std::string> text = ReadWholeFile(path, kFlagFileLimit);
  if (!text.ok()) return Status(StatusCode::kUsage, fmt::format("cannot read {} {}", flag, path));
  return text;
}

Result<HardwareProfiles> LoadHardwareProfiles(const std::string& path) {
  if (path.empty()) return HardwareProfiles::Builtin();
  TP_ASSIGN_OR_RETURN(std::string text, ReadFlagFile(path, "--hardware-file"));
  return HardwareProfiles::Parse(text, path);
}

Result<HardwareProfiles> ParseHardwareProfiles(const std::string& text, const std::string& path) {
  if (path.empty()) return HardwareProfiles::Builtin();
  return HardwareProfiles::Parse(text, path);
}

Result<const HardwareProfile*> ForcedHardware(const HardwareProfiles& profiles, const std::string& name) {
  if (name.empty()) return static_cast<const HardwareProfile*>(nullptr);
  if (const HardwareProfile* profile = profiles.FindByName(name)) return profile;
  std::string names;
  for (const HardwareProfile& profile : profiles.profiles()) names += (names.empty() ? "" : ", ") + profile.name;
  return Status(StatusCode::kUsage, fmt::format("--hardware: no profile named \"{}\" (known: {})", name, names));
}

}  // namespace tuneprof
