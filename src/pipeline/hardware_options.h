#pragma once
// What every command with --hardware / --hardware-file does the same way: load the profiles (built-in
// or from the file) and resolve the forced profile by name.
#include <string>

#include "analysis/core/hardware_profile.h"
#include "base/status.h"

namespace tuneprof {

// The whole of a small file named by a flag (--config, --hardware-file); kUsage when it cannot be read.
Result<std::string> ReadFlagFile(const std::string& path, std::string_view flag);

// The built-in profiles when `path` is empty, else the file's.
Result<HardwareProfiles> LoadHardwareProfiles(const std::string& path);

// The same from the file's contents already read (`path` names it in errors; empty: the built-in ones).
Result<HardwareProfiles> ParseHardwareProfiles(const std::string& text, const std::string& path);

// nullptr when `name` is empty (detect the chip); kUsage naming the known profiles when none matches.
Result<const HardwareProfile*> ForcedHardware(const HardwareProfiles& profiles, const std::string& name);

}  // namespace tuneprof
