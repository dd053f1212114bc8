#pragma once
// The flags of every command that runs the whole analysis (analyze, advise, report, annotate).
#include <string>

namespace tuneprof {

struct AnalysisFlags {
  std::string config;         // --config FILE: advisor thresholds; "" = the defaults
  std::string hardware;       // --hardware NAME: measure against this profile instead of detecting the chip
  std::string hardware_file;  // --hardware-file FILE: profiles instead of the built-in ones
};

}  // namespace tuneprof
