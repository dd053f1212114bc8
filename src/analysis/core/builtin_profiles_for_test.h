#pragma once
// Tests only: the built-in hardware profiles, parsed once per test binary.
#include <gtest/gtest.h>

#include "analysis/core/hardware_profile.h"

namespace tuneprof::testing_support {

inline const HardwareProfiles& BuiltinProfiles() {
  static const HardwareProfiles* profiles = [] {
    auto result = HardwareProfiles::Builtin();
    EXPECT_TRUE(result.ok()) << result.status().message();
    return new HardwareProfiles(std::move(result).value());
  }();
  return *profiles;
}

}  // namespace tuneprof::testing_support
