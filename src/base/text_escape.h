#pragma once
// Text meant for a terminal, made inert. Names in a trace (operators, processes, streams, groups, paths)
// are the profiled program's and reach text output as they are; a control character among them would be
// obeyed by the terminal: ESC starts a sequence that can clear the screen or recolour it, CR and BS
// overwrite what was printed, LF forges a line. Every such character is shown as an escape instead:
//   C0 (U+0000..U+001F) and DEL as \xNN, C1 (U+0080..U+009F) and the bidirectional overrides and
//   isolates (U+202A..U+202E, U+2066..U+2069) as \uNNNN, bytes that are not UTF-8 as \xNN.
// A backslash itself stays a backslash: the escapes are for a reader, not for parsing back.
#include <string>
#include <string_view>

namespace tuneprof {

// One field (a name, a path, a message): every control character escaped, line breaks included.
std::string EscapeText(std::string_view field);

// A whole text report: as EscapeText, but its own line breaks stay, so that a field a report forgot
// to escape can still add a line yet never drive the terminal.
std::string EscapeTextKeepingLines(std::string_view text);

// True when `text` holds nothing EscapeText would change.
bool IsTerminalSafe(std::string_view text);

}  // namespace tuneprof
