#pragma once
// Latency of LLM-style generation, from the record_function markers a generation loop writes
// (shared/tools/torchgen/generate.py): `request#<i>` around one generate() call, `prefill` around the
// prompt's forward that yields the first token, `decode_step` around each later token's forward.
//   TTFT (time to first token) = end(prefill) - start(request#i)
//   TPOT (time per output token) = a decode_step's duration; its mean over the request's decode steps
//   decode tokens/s = decode steps / Σ decode_step durations
// A prefill or decode step belongs to the request whose range holds its start. Markers outside every
// request (a loop without request ranges) form one request of their own.
// The marker names are patterns (GenerationMarkers; `*` matches any run of characters), so that a
// serving loop annotated differently (`--generation-markers`) is measured the same way.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/trace.h"

namespace tuneprof {

// Name patterns of the three markers. A name may hold `*` wildcards; matching is exact otherwise, so
// that a `decoder` module range is not taken for a decode step.
struct GenerationMarkers {
  std::vector<std::string> request = {"request#*", "request_*", "request:*"};
  std::vector<std::string> prefill = {"prefill", "prefill_*", "prefill#*", "prefill:*"};
  std::vector<std::string> decode = {"decode_step", "decode", "decode_*", "decode#*", "decode:*"};
};

// Whether `name` matches `pattern`, where `*` matches any run of characters (none included).
bool MatchesMarker(std::string_view pattern, std::string_view name);

// Replaces the patterns named in `spec` ("request=req*,prefill=ctx|context_phase,decode=gen_step");
// markers the spec does not name keep their defaults. False (with `error`) on a malformed spec.
bool ParseGenerationMarkers(std::string_view spec, GenerationMarkers* markers, std::string* error);

struct GenerationRequest {
  std::string name;          // "request#0"; "" for markers outside every request range
  int64_t start_ns = kNoId;  // the request range, kNoId when there is none
  int64_t duration_ns = kNoId;
  std::optional<int64_t> ttft_ns;       // nullopt without a request range or a prefill
  int64_t prefill_ns = 0;               // Σ prefill durations
  std::vector<int64_t> decode_step_ns;  // in time order
  int64_t decode_sum_ns = 0;
};

struct GenerationMetrics {
  std::vector<GenerationRequest> requests;    // in start order
  std::vector<double> ttft_ns;                // one per request that has one
  std::vector<double> tpot_ns;                // every decode step of every request
  std::optional<double> decode_tokens_per_s;  // all decode steps / their summed time

  bool empty() const { return requests.empty(); }
};

// Empty (no requests) when the trace has none of the markers.
GenerationMetrics ComputeGenerationMetrics(const Trace& trace, const GenerationMarkers& markers = {});

}  // namespace tuneprof
