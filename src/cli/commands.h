#pragma once
// One Add*/Run* pair per subcommand, each in its own file.
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace tuneprof::cli {

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 1;
constexpr int kExitUsage = 2;

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

}  // namespace tuneprof::cli
