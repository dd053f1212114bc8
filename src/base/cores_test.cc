#include "base/cores.h"

#include <gtest/gtest.h>

#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif

namespace tuneprof {
namespace {

TEST(CoresTest, AtLeastOneAndNoMoreThanInstalled) {
  EXPECT_GE(UsableCores(), 1u);
  EXPECT_LE(UsableCores(), std::max(1u, std::thread::hardware_concurrency()));
}

#if defined(__linux__)
// Pinned to one CPU (as `taskset -c 0` runs a process), the process has one core whatever is installed.
TEST(CoresTest, FollowsTheAffinityMask) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  int first = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE && first < 0; ++cpu) {
    if (CPU_ISSET(cpu, &saved)) first = cpu;
  }
  ASSERT_GE(first, 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  EXPECT_EQ(UsableCores(), 1u);
  ASSERT_EQ(sched_setaffinity(0, sizeof saved, &saved), 0);
}
#endif

}  // namespace
}  // namespace tuneprof
