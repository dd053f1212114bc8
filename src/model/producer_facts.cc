#include "model/producer_facts.h"

namespace tuneprof {

ProducerFacts ProducerFactsOf(TraceFormat format) {
  ProducerFacts facts;
  facts.host_ops_drawn = format == TraceFormat::kKineto || format == TraceFormat::kTorchNpuTraceView;
  facts.nsight_systems = format == TraceFormat::kNsysSqlite;
  return facts;
}

}  // namespace tuneprof
