#pragma once
// Latency of LLM-style generation, from the record_function markers a generation loop writes
// (shared/tools/torchgen/generate.py): `request#<i>` around one generate() call, `prefill` around the
// prompt's forward that yields the first token, `decode_step` around each later token's forward.
//   TTFT (time to first token) = end(prefill) - start(request#i)
//   TPOT (time per output token) = a decode_step's duration; its mean over the request's decode steps
//   decode tokens/s = decode steps / Σ decode_step durations
// A prefill or decode step belongs to the request whose range holds its start. Markers outside every
// request (a loop without request ranges) form one request of their own.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/trace.h"

namespace tuneprof {

struct GenerationRequest {
  std::string name;                  // "request#0"; "" for markers outside every request range
  int64_t start_ns = kNoId;          // the request range, kNoId when there is none
  int64_t duration_ns = kNoId;
  std::optional<int64_t> ttft_ns;    // nullopt without a request range or a prefill
  int64_t prefill_ns = 0;            // Σ prefill durations
  std::vector<int64_t> decode_step_ns;  // in time order
  int64_t decode_sum_ns = 0;
};

struct GenerationMetrics {
  std::vector<GenerationRequest> requests;  // in start order
  std::vector<double> ttft_ns;  // one per request that has one
  std::vector<double> tpot_ns;  // every decode step of every request
  std::optional<double> decode_tokens_per_s;  // all decode steps / their summed time

  bool empty() const { return requests.empty(); }
};

// Empty (no requests) when the trace has none of the markers.
GenerationMetrics ComputeGenerationMetrics(const Trace& trace);

}  // namespace tuneprof
