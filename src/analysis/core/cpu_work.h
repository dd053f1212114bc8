#pragma once
// Work of a CPU-only trace (no device work at all, e.g. DDP on the gloo backend): the host threads take
// the place of the device. Rules (gloo runs each collective on a worker thread under a
// `gloo:<op>` user_annotation holding its real duration; the caller's `c10d::<op>_` cpu_op only queues it):
// - communication: every `gloo:*` range, on whichever thread;
// - compute: every host operator (cpu_op: aten::, autograd::, ...) on the other threads, except the
//   `c10d::*` calls (queueing, not computing) and ProfilerStep#N ranges (which legacy exports write
//   as operators).
// The operators a gloo worker runs inside a collective (views and copies of the buffers) belong to the
// collective, so threads carrying gloo ranges contribute no compute.
// - where gloo ranges exist, the `c10d::*` calls on the other threads are communication too: the step's
//   thread is inside a collective call (queueing it behind the workers, or waiting for it), and that time,
//   although an operator such as autograd's AccumulateGrad holds the call, is no compute
//   (IsCollectiveCall: the breakdown takes it out of the compute union).
#include <string_view>
#include <vector>

#include "analysis/core/device_work.h"
#include "analysis/core/intervals.h"
#include "model/trace.h"

namespace tuneprof {

// Among ListCpuWork's communication events: whether `event` is a `c10d::*` call on the step's threads (not
// a gloo range), whose time is no compute even inside a compute operator.
bool IsCollectiveCall(const Trace& trace, uint32_t event);

// Every CPU work event of `trace`, in event order; empty when nothing matches.
std::vector<DeviceWorkEvent> ListCpuWork(const Trace& trace);

// A device trace whose collectives ran on the host (DistributedDataParallel on gloo with CUDA tensors:
// the gradients are copied out, reduced by gloo's worker threads and copied back): appends each `gloo:*`
// range as communication work, so that the device time it holds up is communication, not a host that
// is slow to launch. Host events among device work have no device and no launch.
void AppendHostCollectives(const Trace& trace, std::vector<DeviceWorkEvent>* work);

// Whether a host range is the input pipeline (the TensorBoard plugin's DataLoader rule: names of
// `enumerate(DataLoader)#...` ranges; torch_npu and custom loops spell it in other cases).
bool IsDataLoaderRange(std::string_view name);

// The union of the trace's DataLoader ranges (host events only).
IntervalSet DataLoaderRanges(const Trace& trace);

}  // namespace tuneprof
