#pragma once
// A JSON document an analysis reads whole (a thresholds file, a previous `advise --json`), parsed
// with its errors said as the user's input errors are: "ORIGIN: what is wrong".
#include <simdjson.h>

#include <string_view>

#include "base/status.h"

namespace tuneprof {

// An input error in the document from `origin`.
Status JsonDocumentError(std::string_view origin, std::string_view what);

// The root of `json`, or the parser's error; the root lives in `parser` until its next parse.
Result<simdjson::dom::element> ParseJsonDocument(simdjson::dom::parser* parser, std::string_view json,
                                                 std::string_view origin);

}  // namespace tuneprof
