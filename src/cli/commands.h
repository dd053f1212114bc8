#pragma once
// One Add*/Run* pair per subcommand, each in its own file.
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace tuneprof::cli {

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 1;
constexpr int kExitUsage = 2;
constexpr int kExitGateFailed = 3;  // compare --fail-if: a significant change crossed a limit

struct InfoOptions {
  std::vector<std::string> paths;
  bool json = false;
};
void AddInfoCommand(CLI::App* app, InfoOptions* options);
int RunInfo(const InfoOptions& options);

struct ProfileOptions {
  std::vector<std::string> paths;
  bool json = false;
  std::string semantics = "tuneprof";  // or "hta"
  std::string hardware;                 // --hardware: a profile name, instead of detection
  std::string hardware_file;            // --hardware-file: profiles to use instead of the built-in ones
};
void AddProfileCommand(CLI::App* app, ProfileOptions* options);
int RunProfile(const ProfileOptions& options);

struct CommOptions {
  std::vector<std::string> paths;
  bool json = false;
  std::string hardware;
  std::string hardware_file;
  double utilization_threshold = 0.5;
};
void AddCommCommand(CLI::App* app, CommOptions* options);
int RunComm(const CommOptions& options);

struct CompareOptions {
  std::string before;
  std::string after;
  bool json = false;
  std::optional<double> tokens_per_step;
  std::optional<double> samples_per_step;
  double alpha = 0.05;
  std::vector<std::string> fail_if;       // --fail-if EXPR, repeated
  std::optional<double> fail_if_slower;   // --fail-if-slower PCT
};
void AddCompareCommand(CLI::App* app, CompareOptions* options);
int RunCompare(const CompareOptions& options);

struct MemoryOptions {
  std::vector<std::string> paths;
  bool json = false;
  std::string hardware;       // --hardware: a profile name, instead of detection
  std::string hardware_file;  // --hardware-file: profiles to use instead of the built-in ones
};
void AddMemoryCommand(CLI::App* app, MemoryOptions* options);
int RunMemory(const MemoryOptions& options);

struct AdviseOptions {
  std::vector<std::string> paths;
  bool json = false;
  std::string config;         // --config: advisor thresholds (analysis/advisor/advisor_config.h)
  std::string hardware;       // --hardware: a profile name, instead of detection
  std::string hardware_file;  // --hardware-file: profiles to use instead of the built-in ones
};
// `analyze` (one-screen summary, the main job) and `advise` (every finding) share options and code.
void AddAdviseCommands(CLI::App* app, AdviseOptions* analyze, AdviseOptions* advise);
int RunAdvise(const AdviseOptions& options, bool summary);

}  // namespace tuneprof::cli
