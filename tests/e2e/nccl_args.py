"""What a Kineto NCCL kernel's args say of its collective, as the end-to-end oracles read them: the bytes
of its message and nccl-tests' bus-bandwidth factor, written once for every check that recomputes them."""

DTYPE_BYTES = {"Float": 4, "Double": 8, "Half": 2, "BFloat16": 2, "Long": 8, "Int": 4, "Short": 2, "Byte": 1,
               "Char": 1, "Bool": 1}


def message_bytes(args):
    """The larger of the input and output messages, in bytes."""
    return max(int(args["In msg nelems"]), int(args["Out msg nelems"])) * DTYPE_BYTES[args["dtype"]]


def bus_factor(kind, n):
    """busbw / algbw for a collective of `kind` over `n` ranks (nccl-tests' PERFORMANCE.md); None for a kind
    it does not name."""
    if kind == "allreduce":
        return 2 * (n - 1) / n
    if kind in ("allgather", "reducescatter", "alltoall", "all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1) / n
    if kind in ("broadcast", "reduce", "send", "recv", "sendrecv"):
        return 1.0
    return None
