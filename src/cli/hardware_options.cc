#include "cli/hardware_options.h"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/commands.h"

namespace tuneprof::cli {

Result<std::string> ReadFlagFile(const std::string& path, std::string_view flag) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Status(StatusCode::kUsage, fmt::format("cannot read {} {}", flag, path));
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

Result<HardwareProfiles> LoadHardwareProfiles(const std::string& path) {
  if (path.empty()) return HardwareProfiles::Builtin();
  TP_ASSIGN_OR_RETURN(std::string text, ReadFlagFile(path, "--hardware-file"));
  return HardwareProfiles::Parse(text, path);
}

Result<const HardwareProfile*> ForcedHardware(const HardwareProfiles& profiles, const std::string& name) {
  if (name.empty()) return static_cast<const HardwareProfile*>(nullptr);
  if (const HardwareProfile* profile = profiles.FindByName(name)) return profile;
  std::string names;
  for (const HardwareProfile& profile : profiles.profiles()) names += (names.empty() ? "" : ", ") + profile.name;
  return Status(StatusCode::kUsage, fmt::format("--hardware: no profile named \"{}\" (known: {})", name, names));
}

int ReportError(const Status& status) {
  fmt::print(stderr, "tuneprof: error: {}\n", status.message());
  return status.code() == StatusCode::kUsage ? kExitUsage : kExitBadInput;
}

}  // namespace tuneprof::cli
