#include "base/cores.h"

#include <algorithm>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif

namespace tuneprof {

unsigned UsableCores() {
  const unsigned installed = std::max(1u, std::thread::hardware_concurrency());
#if defined(__linux__)
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) == 0) {
    const int allowed = CPU_COUNT(&mask);
    if (allowed > 0) return std::min(installed, static_cast<unsigned>(allowed));
  }
#endif
  return installed;
}

}  // namespace tuneprof
