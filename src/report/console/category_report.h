#pragma once
// Memory by PyTorch's categories: `tuneprof memory` on torch's export_memory_timeline file (a terminal
// summary, or one JSON document of schema tuneprof.memory_timeline/1, docs/json/memory.md), and the
// by-category table other memory outputs print at a peak.
#include <string>

#include "analysis/memory/category_timeline.h"
#include "base/json_writer.h"

namespace tuneprof {

std::string RenderCategoryTimelineText(const CategoryTimeline& timeline);
std::string RenderCategoryTimelineJson(const CategoryTimeline& timeline);

// One row per category with bytes at the peak (its share of `peak`) and, where given, the category's
// own largest; a total row last. Indented by `indent`.
void AppendCategoryTable(const CategoryBytes& at_peak, const CategoryBytes* largest, int64_t peak,
                         std::string_view indent, std::string* out);

// `{"parameters": bytes, ...}` in kMemoryCategoryNames' order.
void WriteCategoryBytes(JsonWriter& w, const CategoryBytes& bytes);

}  // namespace tuneprof
