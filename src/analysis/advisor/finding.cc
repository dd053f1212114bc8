#include "analysis/advisor/finding.h"

namespace tuneprof {

std::string_view FindingCategoryName(FindingCategory category) {
  switch (category) {
    case FindingCategory::kCompute:
      return "compute";
    case FindingCategory::kMemory:
      return "memory";
    case FindingCategory::kCommunication:
      return "communication";
    case FindingCategory::kHost:
      return "host";
    case FindingCategory::kLaunch:
      return "launch";
    case FindingCategory::kData:
      return "data";
    case FindingCategory::kConfig:
      return "config";
  }
  return "?";
}

std::string_view BottleneckName(Bottleneck bottleneck) {
  switch (bottleneck) {
    case Bottleneck::kCompute:
      return "compute";
    case Bottleneck::kMemory:
      return "memory";
    case Bottleneck::kCommunication:
      return "communication";
    case Bottleneck::kHost:
      return "host";
    case Bottleneck::kData:
      return "data";
    case Bottleneck::kIdle:
      return "idle";
    case Bottleneck::kNone:
      return "none";
  }
  return "?";
}

std::string_view TimePartName(TimePart part) {
  switch (part) {
    case TimePart::kComputeBound:
      return "compute_bound";
    case TimePart::kMemoryBound:
      return "memory_bound";
    case TimePart::kCommunication:
      return "communication";
    case TimePart::kMemcpy:
      return "memcpy";
    case TimePart::kHostWait:
      return "host";
    case TimePart::kData:
      return "data";
    case TimePart::kPipelineBubble:
      return "pipeline_bubble";
    case TimePart::kUnclassified:
      return "unclassified";
    case TimePart::kIdle:
      return "idle";
    case TimePart::kCount:
      break;
  }
  return "?";
}

}  // namespace tuneprof
