#include "report/console/warnings_json.h"

namespace tuneprof {

void WriteWarnings(const std::vector<std::string>& warnings, JsonWriter* w) {
  w->Key("warnings").BeginArray();
  for (const std::string& warning : warnings) w->String(warning);
  w->EndArray();
}

std::string WithWarnings(std::string json, const std::vector<std::string>& warnings) {
  const size_t close = json.rfind('}');
  if (close == std::string::npos) return json;
  const size_t last = json.find_last_not_of(" \n", close == 0 ? 0 : close - 1);
  std::string key = last != std::string::npos && json[last] == '{' ? "\"warnings\":[" : ",\"warnings\":[";
  for (size_t i = 0; i < warnings.size(); ++i) {
    key += i > 0 ? ",\"" : "\"";
    AppendJsonEscaped(warnings[i], &key);
    key += '"';
  }
  key += ']';
  json.insert(close, key);
  return json;
}

}  // namespace tuneprof
