#pragma once
// Renders the module view (analysis/breakdown/module_view.h): `profile --by module`'s table of the
// model's modules and repeated layers, the short top-modules table of a plain `profile`, and the
// `modules` / `layers` keys of `profile --by module --json`.
#include <string>

#include "analysis/breakdown/module_view.h"
#include "base/json_writer.h"

namespace tuneprof {

// The modules down to the deepest level that keeps the table within its rows, then the layer groups.
void AppendModuleViewText(const ModuleView& view, bool wide_names, std::string* out);
// The five modules that launched the most device work themselves; nothing for a rank without
// nn.Module ranges, so the output of traces recorded without with_modules stays as it was.
void AppendTopModulesText(const ModuleView& view, bool wide_names, std::string* out);
// `modules` and `layers` keys of a rank object.
void WriteModuleViewJson(const ModuleView& view, JsonWriter* w);

}  // namespace tuneprof
