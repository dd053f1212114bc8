#pragma once
// Every input the importers recognise, one entry each: how it is recognised (a file by its first bytes,
// a SQLite file by its tables, a directory by its layout) and what reading it gives: its ranks, or, for
// an input that is recognised only to be refused (a memory snapshot, tuneprof's own export), the one-line
// error that points at the command or file to use instead. import.cc tries the entries in order; the
// error for a file that no entry claims lists the formats from here.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "io/sqlite_file.h"
#include "io/trace_files.h"
#include "model/trace.h"

namespace tuneprof {

// How many first bytes of a file the entries recognised by their head see.
inline constexpr size_t kSniffBytes = 64;

// The first bytes of every SQLite database: such a file is offered to the kDatabase entries only.
inline constexpr std::string_view kSqliteHead{"SQLite format 3\0", 16};

// What an entry looks at; only what the input is made of is set.
struct ImportInput {
  std::string path;
  std::string_view head = {};            // a file's first kSniffBytes bytes (fewer in a short file)
  const SqliteFile* database = nullptr;  // the file opened, when its head is kSqliteHead
};

enum class RecognisedBy : uint8_t {
  kHead,       // a file that is not SQLite, by its first bytes
  kDatabase,   // a SQLite file, by its tables
  kDirectory,  // a directory, by its layout: one rank (or one run) read whole, never searched
};

struct InputFormat {
  std::string_view name;  // short and stable: tests name an entry by it
  RecognisedBy by;
  // How the error for an unclaimed file names it: consecutive entries of one group share one phrase,
  // "an A or B {group}"; an entry without a group is `expected` alone. Empty for an input that is refused
  // wherever it is given, which the error must not offer.
  std::string_view expected;
  std::string_view group;
  // The names of its files that a directory search takes, space-separated patterns with one `*`
  // ("*.json", "msprof_*.db"); empty for an entry whose files a search does not take by name.
  std::string_view loose_files;
  bool (*claims)(const ImportInput& input);
  Result<std::vector<Trace>> (*import)(const ImportInput& input);
  // For a format read through its export (Nsight Systems' .nsys-rep through its .sqlite): the error for
  // such a file, given or met in a directory (io/trace_files.h TraceFileKinds::refuse_unexported); null
  // for the others.
  Status (*refuse_unexported)(const std::string& file, bool given) = nullptr;
};

// The entries, in the order they are tried (entries of one kind claim disjoint inputs, so the order
// matters only to the error's wording).
std::span<const InputFormat> InputFormats();

// The first entry of kind `by` that claims `input`, or null.
const InputFormat* FormatClaiming(RecognisedBy by, const ImportInput& input);

// True when a kDirectory entry claims `dir`: io/trace_files.h's listing hands such a directory over whole.
bool IsRankDirectory(const std::string& dir);

// True when an entry's loose_files pattern matches the file name `name`.
bool IsLooseTraceName(std::string_view name);

// What the entries say of a directory's files, for io/trace_files.h's listing: the directories read whole,
// the loose files taken by name, the files refused for their export, and the names for the error.
const TraceFileKinds& DirectoryFileKinds();

// The formats a file may be, for "not a trace tuneprof reads (expected ...)".
std::string ExpectedFormats();

}  // namespace tuneprof
