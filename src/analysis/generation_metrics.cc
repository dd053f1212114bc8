#include "analysis/generation_metrics.h"

#include <algorithm>
#include <string_view>

namespace tuneprof {

namespace {

enum class Marker : uint8_t { kNone, kRequest, kPrefill, kDecodeStep };

Marker MarkerOf(std::string_view name) {
  if (name.starts_with("request#")) return Marker::kRequest;
  if (name == "prefill") return Marker::kPrefill;
  if (name == "decode_step") return Marker::kDecodeStep;
  return Marker::kNone;
}

bool IsMarkerKind(EventKind kind) {
  return kind == EventKind::kUserAnnotation || kind == EventKind::kHostOp;  // legacy exports write ranges as ops
}

struct MarkerEvent {
  uint32_t event;
  Marker marker;
};

std::vector<MarkerEvent> FindMarkers(const Trace& trace) {
  const EventTable& events = trace.events();
  std::vector<MarkerEvent> markers;
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events.dur_ns[i] < 0 || !IsMarkerKind(events.kind[i])) continue;
    const Marker marker = MarkerOf(trace.str(events.name[i]));
    if (marker != Marker::kNone) markers.push_back({i, marker});
  }
  std::sort(markers.begin(), markers.end(), [&](const MarkerEvent& a, const MarkerEvent& b) {
    return events.ts_ns[a.event] < events.ts_ns[b.event];
  });
  return markers;
}

// The request holding `ts`, or the trailing catch-all request (created on demand) when none does.
GenerationRequest* RequestAt(int64_t ts, std::vector<GenerationRequest>* requests, GenerationRequest* outside) {
  for (GenerationRequest& request : *requests) {
    if (request.start_ns <= ts && ts < request.start_ns + request.duration_ns) return &request;
  }
  return outside;
}

}  // namespace

GenerationMetrics ComputeGenerationMetrics(const Trace& trace) {
  const EventTable& events = trace.events();
  const std::vector<MarkerEvent> markers = FindMarkers(trace);
  std::vector<GenerationRequest> requests;
  for (const MarkerEvent& marker : markers) {
    if (marker.marker != Marker::kRequest) continue;
    GenerationRequest request;
    request.name = std::string(trace.str(events.name[marker.event]));
    request.start_ns = events.ts_ns[marker.event];
    request.duration_ns = events.dur_ns[marker.event];
    requests.push_back(std::move(request));
  }
  GenerationRequest outside;
  std::vector<int64_t> first_prefill_end(requests.size() + 1, kNoId);
  for (const MarkerEvent& marker : markers) {
    if (marker.marker == Marker::kRequest) continue;
    const int64_t ts = events.ts_ns[marker.event];
    GenerationRequest* request = RequestAt(ts, &requests, &outside);
    if (marker.marker == Marker::kDecodeStep) {
      request->decode_step_ns.push_back(events.dur_ns[marker.event]);
      request->decode_sum_ns += events.dur_ns[marker.event];
      continue;
    }
    request->prefill_ns += events.dur_ns[marker.event];
    const size_t slot = request == &outside ? requests.size() : static_cast<size_t>(request - requests.data());
    if (first_prefill_end[slot] == kNoId) first_prefill_end[slot] = events.end_ns(marker.event);
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    if (first_prefill_end[i] != kNoId) requests[i].ttft_ns = first_prefill_end[i] - requests[i].start_ns;
  }
  if (outside.prefill_ns > 0 || !outside.decode_step_ns.empty()) requests.push_back(std::move(outside));

  GenerationMetrics metrics;
  int64_t decode_sum = 0;
  for (const GenerationRequest& request : requests) {
    if (request.ttft_ns) metrics.ttft_ns.push_back(static_cast<double>(*request.ttft_ns));
    for (int64_t step : request.decode_step_ns) metrics.tpot_ns.push_back(static_cast<double>(step));
    decode_sum += request.decode_sum_ns;
  }
  if (decode_sum > 0) {
    metrics.decode_tokens_per_s = static_cast<double>(metrics.tpot_ns.size()) / (static_cast<double>(decode_sum) / 1e9);
  }
  metrics.requests = std::move(requests);
  return metrics;
}

}  // namespace tuneprof
