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

}  // namespace tuneprof::cli
