#!/usr/bin/env python3
"""Writes the adversarial Kineto traces of the bounded-cost benchmark (bench/run_bounds_bench.sh).

usage: gen_adversarial_trace.py KIND OUT [N]
  alloc      N allocator events ([memory]) of one device, allocations and frees at random, one step
  identical  N copies of one cpu_op with the same ts and dur on one thread (they nest as one chain)
  ranks      OUT is a directory: N rank files of a few events each
Deterministic (fixed seed).
"""
import gzip
import json
import os
import random
import sys


def write_trace(out, events, rank=None):
    doc = {"schemaVersion": 1, "traceEvents": events}
    if rank is not None:
        doc["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": 0}
    with gzip.open(out, "wt", compresslevel=1) as f:
        json.dump(doc, f, separators=(",", ":"))


def stream_trace(out, events):
    with gzip.open(out, "wt", compresslevel=1) as f:
        f.write('{"schemaVersion":1,"traceEvents":[\n')
        for i, event in enumerate(events):
            f.write(("" if i == 0 else ",\n") + json.dumps(event, separators=(",", ":")))
        f.write("\n]}\n")


def memory_event(ts, addr, nbytes, total):
    return {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": ts,
            "args": {"Device Type": 1, "Device Id": 0, "Addr": addr, "Bytes": nbytes,
                     "Total Allocated": total, "Total Reserved": 1 << 34}}


def alloc_events(n):
    rng = random.Random(7)
    live, total, addr = [], 0, 0
    yield {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": n + 10}
    for i in range(n):
        if live and rng.random() < 0.5:
            a, b = live.pop(rng.randrange(len(live)))
            total -= b
            yield memory_event(i + 1, a, -b, total)
        else:
            addr += 4096
            b = rng.choice([512, 4096, 65536, 1 << 20, 3 << 20])
            live.append((addr, b))
            total += b
            yield memory_event(i + 1, addr, b, total)


def identical_events(n):
    for _ in range(n):
        yield {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 100, "dur": 10}


def write_ranks(out, n):
    os.makedirs(out, exist_ok=True)
    for rank in range(n):
        events = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
                  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 50 + rank % 7}]
        write_trace(os.path.join(out, f"rank{rank}.json.gz"), events, rank)


def main():
    kind, out = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 1_000_000
    if kind == "alloc":
        stream_trace(out, alloc_events(n))
    elif kind == "identical":
        stream_trace(out, identical_events(n))
    elif kind == "ranks":
        write_ranks(out, n)
    else:
        sys.exit(f"unknown kind {kind}")


if __name__ == "__main__":
    main()
