#include "analysis/core/json_document.h"

#include <string>

namespace tuneprof {

Status JsonDocumentError(std::string_view origin, std::string_view what) {
  return InvalidInput(std::string(origin) + ": " + std::string(what));
}

Result<simdjson::dom::element> ParseJsonDocument(simdjson::dom::parser* parser, std::string_view json,
                                                 std::string_view origin) {
  const simdjson::padded_string padded(json);
  simdjson::dom::element root;
  if (auto error = parser->parse(padded).get(root)) return JsonDocumentError(origin, simdjson::error_message(error));
  return root;
}

}  // namespace tuneprof
