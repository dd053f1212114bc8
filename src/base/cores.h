#pragma once
// How many cores this process may run on: the CPUs of its affinity mask (taskset, cpusets), which
// std::thread::hardware_concurrency() does not consult. Extra threads beyond it only take turns.
namespace tuneprof {

unsigned UsableCores();

}  // namespace tuneprof
