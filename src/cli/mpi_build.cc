#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "cli/commands.h"
#include "cli/errors.h"

namespace tuneprof::cli {

int RunMpiBuild(char** argv) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path mpi_build = self.parent_path() / "tuneprof-mpi";
  if (ec || !std::filesystem::exists(mpi_build, ec)) {
    return ReportError(Status(StatusCode::kUsage,
                              "--mpi: this build has no MPI support; install Open MPI (scripts/install-deps: "
                              "libopenmpi-dev, openmpi-bin) and rebuild, which makes tuneprof-mpi beside tuneprof"));
  }
  execv(mpi_build.c_str(), argv);
  return ReportError(
      Status(StatusCode::kUsage, "--mpi: cannot run " + mpi_build.string() + ": " + std::strerror(errno)));
}

}  // namespace tuneprof::cli
