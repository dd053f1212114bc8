#pragma once
// Checks for numeric flags whose messages state the accepted values plainly. CLI11's own range checks
// print their bounds through std::to_string (the largest double as 309 digits, 1e-9 as 0.000000) and let
// "nan" through; these accept finite numbers only.
#include <CLI/CLI.hpp>

namespace tuneprof::cli {

CLI::Validator NonNegative();                    // >= 0
CLI::Validator Positive();                       // > 0
CLI::Validator Between(double min, double max);  // min <= value <= max

}  // namespace tuneprof::cli
