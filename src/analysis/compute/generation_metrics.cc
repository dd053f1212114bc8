#include "analysis/compute/generation_metrics.h"

#include <algorithm>
#include <string_view>

namespace tuneprof {

namespace {

enum class Marker : uint8_t { kNone, kRequest, kPrefill, kDecodeStep };

bool MatchesAny(const std::vector<std::string>& patterns, std::string_view name) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& pattern) { return MatchesMarker(pattern, name); });
}

Marker MarkerOf(std::string_view name, const GenerationMarkers& markers) {
  if (MatchesAny(markers.request, name)) return Marker::kRequest;
  if (MatchesAny(markers.prefill, name)) return Marker::kPrefill;
  if (MatchesAny(markers.decode, name)) return Marker::kDecodeStep;
  return Marker::kNone;
}

bool IsMarkerKind(EventKind kind) {
  return kind == EventKind::kUserAnnotation || kind == EventKind::kHostOp;  // legacy exports write ranges as ops
}

struct MarkerEvent {
  uint32_t event;
  Marker marker;
};

std::vector<MarkerEvent> FindMarkers(const Trace& trace, const GenerationMarkers& names) {
  const EventTable& events = trace.events();
  std::vector<MarkerEvent> markers;
  // Each distinct name is matched against the patterns once: names repeat on every step, and matching
  // every host operator's name against every pattern was most of the serving metrics' time.
  constexpr uint8_t kUnmatched = 0xFF;
  std::vector<uint8_t> marker_of(trace.strings().size(), kUnmatched);
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events.dur_ns[i] < 0 || !IsMarkerKind(events.kind[i])) continue;
    uint8_t& known = marker_of[events.name[i].value];
    if (known == kUnmatched) known = static_cast<uint8_t>(MarkerOf(trace.str(events.name[i]), names));
    const auto marker = static_cast<Marker>(known);
    if (marker != Marker::kNone) markers.push_back({i, marker});
  }
  std::sort(markers.begin(), markers.end(),
            [&](const MarkerEvent& a, const MarkerEvent& b) { return events.ts_ns[a.event] < events.ts_ns[b.event]; });
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

bool MatchesMarker(std::string_view pattern, std::string_view name) {
  const size_t star = pattern.find('*');
  if (star == std::string_view::npos) return pattern == name;
  const std::string_view head = pattern.substr(0, star);
  if (!name.starts_with(head)) return false;
  std::string_view rest_pattern = pattern.substr(star + 1);
  std::string_view rest_name = name.substr(head.size());
  // Each later literal piece is matched at its first occurrence; the last one must end the name.
  while (true) {
    const size_t next_star = rest_pattern.find('*');
    const std::string_view piece = rest_pattern.substr(0, next_star);
    if (next_star == std::string_view::npos) return rest_name.size() >= piece.size() && rest_name.ends_with(piece);
    const size_t at = rest_name.find(piece);
    if (at == std::string_view::npos) return false;
    rest_name.remove_prefix(at + piece.size());
    rest_pattern.remove_prefix(next_star + 1);
  }
}

bool ParseGenerationMarkers(std::string_view spec, GenerationMarkers* markers, std::string* error) {
  while (!spec.empty()) {
    const size_t comma = spec.find(',');
    const std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    const size_t equals = item.find('=');
    const std::string_view key = item.substr(0, equals);
    std::vector<std::string>* target = key == "request"   ? &markers->request
                                       : key == "prefill" ? &markers->prefill
                                       : key == "decode"  ? &markers->decode
                                                          : nullptr;
    if (target == nullptr || equals == std::string_view::npos || equals + 1 == item.size()) {
      *error = "expected request=PATTERN, prefill=PATTERN or decode=PATTERN (patterns separated by |), got \"" +
               std::string(item) + "\"";
      return false;
    }
    target->clear();
    std::string_view patterns = item.substr(equals + 1);
    while (true) {
      const size_t bar = patterns.find('|');
      const std::string_view pattern = patterns.substr(0, bar);
      if (pattern.empty()) {
        *error = "empty pattern in \"" + std::string(item) + "\"";
        return false;
      }
      target->emplace_back(pattern);
      if (bar == std::string_view::npos) break;
      patterns.remove_prefix(bar + 1);
    }
  }
  return true;
}

GenerationMetrics ComputeGenerationMetrics(const Trace& trace, const GenerationMarkers& names) {
  const EventTable& events = trace.events();
  const std::vector<MarkerEvent> markers = FindMarkers(trace, names);
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
