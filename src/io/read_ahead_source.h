#pragma once
// A ByteSource read ahead on a thread of its own: the thread fills a bounded ring of chunks from the
// source it wraps while the caller parses, so a gzip'd trace inflates on one core while it is parsed
// on another, and memory stays at the ring's size whatever the file's.
#include <cstddef>
#include <memory>

#include "io/byte_source.h"

namespace tuneprof {

// Wraps `source`; at most `chunks` chunks of `chunk_bytes` are read ahead of the caller. The wrapped
// source is read on the thread only; its errors reach the caller at the byte they stopped at, and its
// truncated() once the caller has read to the end. The thread starts with the first read; before it,
// ReadOnCallersThread() keeps the reading on the caller's thread.
std::unique_ptr<ByteSource> ReadAhead(std::unique_ptr<ByteSource> source, size_t chunk_bytes, size_t chunks);

}  // namespace tuneprof
