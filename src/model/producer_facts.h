#pragma once
// Facts of a trace's producer that only a few analyses ask, beside FormatFacts (event_kind.h): kept in
// their own header, which only those analyses include, so that adding one rebuilds only them. Analyses ask
// these rather than compare formats.
#include "model/event_kind.h"

namespace tuneprof {

struct ProducerFacts {
  // The host timeline draws every operator the host runs (the PyTorch profiler: Kineto, torch_npu), so a
  // stretch without one is the host stopped; an export that draws API calls only says nothing of that.
  bool host_ops_drawn = false;
  // An Nsight Systems export: what it lacks is captured again with nsys and its export options, and its
  // kernels carry launch configurations without Kineto's blocks per SM.
  bool nsight_systems = false;
};
ProducerFacts ProducerFactsOf(TraceFormat format);

}  // namespace tuneprof
