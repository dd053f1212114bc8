#include "cli/flag_checks.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <functional>
#include <string>
#include <string_view>

namespace tuneprof::cli {
namespace {

// CLI11 puts the flag's name in front of the message.
CLI::Validator NumberCheck(std::string description, std::function<bool(double)> accept) {
  return CLI::Validator(
      [description, accept](std::string& input) -> std::string {
        std::string_view text = input;
        if (text.starts_with('+')) text.remove_prefix(1);
        double value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        const bool number = error == std::errc() && end == text.data() + text.size() && std::isfinite(value);
        if (number && accept(value)) return "";
        return fmt::format("{} is not {}", input, description);
      },
      description);
}

}  // namespace

CLI::Validator NonNegative() {
  return NumberCheck("a number >= 0", [](double v) { return v >= 0; });
}

CLI::Validator Positive() {
  return NumberCheck("a number > 0", [](double v) { return v > 0; });
}

CLI::Validator Between(double min, double max) {
  return NumberCheck(fmt::format("a number from {} to {}", min, max),
                     [min, max](double v) { return v >= min && v <= max; });
}

}  // namespace tuneprof::cli
