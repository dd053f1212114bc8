#pragma once
// Streaming gzip inflation behind a ByteSource, through zlib or ISA-L's igzip. Concatenated members and
// zero padding between them are read as gzip reads them. Both inflaters give the same bytes, the same
// errors and the same cut-off verdict: igzip inflates while the data is sound, and zlib gives the
// verdict on anything else (see gzip_source.cc).
#include <cstddef>
#include <memory>

#include "io/byte_source.h"

namespace tuneprof {

enum class GzipInflater { kZlib, kIsal };

// Whether ISA-L was found when this build was configured.
bool IsalBuiltIn();

// The inflater loads use: ISA-L where built in (about 2.7x zlib's speed on real traces), else zlib. The
// environment variable TUNEPROF_INFLATE=zlib picks zlib, so that the two can be compared on any input.
GzipInflater DefaultGzipInflater();

// Inflates `file` (which starts with the gzip magic) through `input_bytes` of compressed input at a
// time. `file` must give a reader at offset 0 (ReaderAt) for the verdict on damaged data.
std::unique_ptr<ByteSource> MakeGzipSource(std::unique_ptr<ByteSource> file, size_t input_bytes, GzipInflater inflater);

// The error to report for a compressed source whose reading failed with `status`: the first damage in its
// gzip stream where it has any, else `status`. A damaged file is then reported as such whichever bytes of
// its inflated content a parser tripped over first, which depends on how far ahead it was inflated (a
// read-ahead thread, a second parsing thread); a CRC, for one, is only checked at the member's end. Costs
// one more inflate of the file, on failures only.
Status PreferGzipDamage(const ByteSource& source, Status status);

}  // namespace tuneprof
