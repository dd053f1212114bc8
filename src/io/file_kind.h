#pragma once
// What a path is when it is not a regular file, in the words the messages refusing it use: neither a
// trace is read from nor an output written to a FIFO (it would block), a device or a socket.
#include <sys/types.h>

namespace tuneprof {

// "a FIFO (named pipe)", "a character device", "a block device", "a socket", else "not a regular file".
const char* SpecialFileKind(mode_t mode);

}  // namespace tuneprof
