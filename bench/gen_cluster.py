#!/usr/bin/env python3
"""Write a deterministic N-rank Kineto (PyTorch profiler, CUDA + NCCL) run: one trace file per rank, for
cluster-scale benchmarks and for checks whose answer is known by construction.

Each rank runs STEPS ProfilerSteps of: LAYERS compute kernels (cudaLaunchKernel -> kernel on stream 7,
ac2g flows), then a DDP-style NCCL all-reduce (record_param_comms + nccl:all_reduce launching
ncclDevKernel_AllReduce_RING_LL_Sum_float on stream 20 with the collective args Kineto copies onto it:
Process Group Name "0", ranks, message size, dtype). The all-reduce starts on each rank when its compute
is done and ends on all ranks together, TRANSFER_US after the last rank arrives, so:
  - the straggler (--straggler R, late by --late-us each step) arrives last at every collective and
    every other rank waits exactly that long for it (plus the spread of the others' arrival);
  - each rank's clock is moved by --skew-us x (rank % 3 - 1) (0, -skew, +skew, ...) through
    baseTimeNanoseconds, as hosts with unsynchronized clocks would write it.
A small per-rank, per-step jitter (seeded) keeps arrivals from tying. The true values are printed as JSON
on stdout (straggler, per-rank clock offsets against rank 0, wait per step), so a check can compare.

    python3 bench/gen_cluster.py --out DIR --ranks 8 [--steps 4] [--straggler 3] [--late-us 2000]
                                 [--skew-us 5000] [--layers 40] [--seed 1]
"""
import argparse
import json
import os
import random

BASE_NS = 1735689600000000000
T0_US = 4512345678.0
PID = 3000
STREAM = 7
NCCL_STREAM = 20
KERNEL = "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>(int, float*)"
NCCL = "ncclDevKernel_AllReduce_RING_LL_Sum_float(ncclDevKernelArgsStorage<4096ul>)"
TRANSFER_US = 800.0
NELEMS = 25 * 1024 * 1024 // 4


def x(cat, name, pid, tid, ts, dur, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": round(ts, 3), "dur": round(dur, 3),
            "args": args}


def flow(phase, ident, pid, tid, ts):
    e = {"ph": phase, "id": ident, "pid": pid, "tid": tid, "ts": round(ts, 3), "cat": "ac2g", "name": "ac2g"}
    if phase == "f":
        e["bp"] = "e"
    return e


def plan(args):
    """Per step: each rank's arrival at the all-reduce (µs, true time) and the common end."""
    rng = random.Random(args.seed)
    steps = []
    t = T0_US
    for _ in range(args.steps):
        compute = args.layers * 50.0
        arrive = [t + 20.0 + compute + rng.uniform(0, 30) + (args.late_us if r == args.straggler else 0.0)
                  for r in range(args.ranks)]
        end = max(arrive) + TRANSFER_US
        steps.append((t, arrive, end))
        t = end + 200.0
    return steps


def rank_trace(args, rank, steps):
    events, corr = [], rank * 10_000_000
    groups = json.dumps(list(range(args.ranks)))
    for number, (start, arrive, end) in enumerate(steps, 1):
        t = start + 20.0
        for _ in range(args.layers):
            corr += 1
            events.append(x("cuda_runtime", "cudaLaunchKernel", PID, PID, t, 4.0, correlation=corr))
            events.append(flow("s", corr, PID, PID, t))
            events.append(x("kernel", KERNEL, 0, STREAM, t + 5.0, 45.0, device=0, stream=STREAM,
                            correlation=corr, grid=[512, 1, 1], block=[128, 1, 1]))
            events.append(flow("f", corr, 0, STREAM, t + 5.0))
            t += 50.0
        nccl_start = arrive[rank]
        corr += 1
        events.append(x("cpu_op", "record_param_comms", PID, PID, nccl_start - 6.0, 5.0))
        events.append(x("cuda_runtime", "cudaLaunchKernel", PID, PID, nccl_start - 5.0, 4.0, correlation=corr))
        events.append(flow("s", corr, PID, PID, nccl_start - 5.0))
        events.append(x("kernel", NCCL, 0, NCCL_STREAM, nccl_start, end - nccl_start, device=0, stream=NCCL_STREAM,
                        correlation=corr, **{"Collective name": "allreduce", "In msg nelems": NELEMS,
                                             "Out msg nelems": NELEMS, "Group size": args.ranks, "dtype": "Float",
                                             "Process Group Name": "0", "Process Group Description": "default_pg",
                                             "Process Group Ranks": groups}))
        events.append(flow("f", corr, 0, NCCL_STREAM, nccl_start))
        events.append(x("user_annotation", f"ProfilerStep#{number}", PID, PID, start, end - start + 100.0))
    skew_ns = int(args.skew_us * 1000) * (rank % 3 - 1)
    return {"schemaVersion": 1,
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": args.ranks},
            "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85045936128,
                                  "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024,
                                  "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536,
                                  "regsPerMultiprocessor": 65536, "warpSize": 32, "sharedMemPerBlock": 49152,
                                  "sharedMemPerMultiprocessor": 233472, "numSms": 132,
                                  "sharedMemPerBlockOptin": 232448}],
            "traceEvents": sorted(events, key=lambda e: (e["ts"], e["ph"])),
            "displayTimeUnit": "ms", "baseTimeNanoseconds": BASE_NS + skew_ns}, skew_ns


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--layers", type=int, default=40)
    parser.add_argument("--straggler", type=int, default=3)
    parser.add_argument("--late-us", type=float, default=2000.0)
    parser.add_argument("--skew-us", type=float, default=5000.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    steps = plan(args)
    offsets = {}
    for rank in range(args.ranks):
        doc, skew_ns = rank_trace(args, rank, steps)
        offsets[rank] = skew_ns
        with open(os.path.join(args.out, f"rank{rank}.pt.trace.json"), "w") as f:
            json.dump(doc, f, separators=(",", ":"))
    waits = [sum(max(arrive) - arrive[r] for _, arrive, _ in steps) / len(steps) for r in range(args.ranks)]
    print(json.dumps({"ranks": args.ranks, "straggler": args.straggler if args.late_us > 0 else None,
                      "clock_offsets_us": {r: (offsets[r] - offsets[0]) / 1000 for r in offsets},
                      "wait_us_per_step": waits}))


if __name__ == "__main__":
    main()
