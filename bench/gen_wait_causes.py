#!/usr/bin/env python3
"""Write a deterministic N-rank Kineto (PyTorch profiler, CUDA + NCCL) run whose straggler is late for known
reasons, for checks of why ranks wait (`tuneprof comm`'s wait causes, the straggler finding's operator diff,
`profile --critical-path`).

The run opens with a parameter broadcast every rank reaches together (as DistributedDataParallel does when it
wraps the model), then STEPS ProfilerSteps of, on every rank:
  - a DataLoader range on the Python thread (device idle): DATA_US, plus --data-us on the straggler;
  - LAYERS `aten::linear` operators, each launching one 45 µs kernel;
  - on the straggler only: an `aten::embedding_backward` operator launching kernels that run --compute-us in
    all, then a host pause of --pause-us (host code outside any operator, device idle);
  - a DDP-style NCCL all-reduce (record_param_comms, ncclDevKernel_AllReduce on its own stream, the collective
    args Kineto copies onto it, Process Group Name "0"), ending on every rank together TRANSFER_US after the
    last rank arrives.
A small seeded jitter (0-30 µs) keeps the other ranks' arrivals from tying. Each rank's clock may be moved by
--skew-us x (rank % 3 - 1) through baseTimeNanoseconds. The truth is printed as JSON on stdout: the straggler,
per step its window (its arrival minus the median arrival of the others) and the extra work by cause
(compute, host_pause, data_loading, in µs per step), the extra operator, and the mean step time with the
straggler on time (every step ending TRANSFER_US after the others' last arrival instead of its own).

    python3 bench/gen_wait_causes.py --out DIR [--ranks 8] [--steps 4] [--straggler 7] [--compute-us 3000]
                                     [--pause-us 1500] [--data-us 1000] [--skew-us 0] [--seed 1]
"""
import json
import os
import random
import statistics

from trace_events import x, flow, hopper_properties, generator_arguments

BASE_NS = 1735689600000000000
T0_US = 4512345678.0
PID = 3000
STREAM = 7
NCCL_STREAM = 20
LAYER_KERNEL = "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>(int, float*)"
EMBED_KERNEL = "void at::native::embedding_backward_feature_kernel<float, float, long>(long const*, float const*)"
NCCL = "ncclDevKernel_AllReduce_RING_LL_Sum_float(ncclDevKernelArgsStorage<4096ul>)"
BROADCAST = "ncclDevKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevKernelArgsStorage<4096ul>)"
DATALOADER = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
EXTRA_OP = "aten::embedding_backward"
TRANSFER_US = 800.0
DATA_US = 200.0
LAYERS = 30
EMBED_KERNEL_US = 100.0
NELEMS = 25 * 1024 * 1024 // 4


class Rank:
    """One rank's events, written as its host and device would record them."""

    def __init__(self, rank, ranks):
        self.rank = rank
        self.events = []
        self.corr = rank * 10_000_000
        self.groups = json.dumps(list(range(ranks)))
        self.ranks = ranks

    def launch(self, t, kernel, dur):
        """cudaLaunchKernel at host time t; the kernel runs [t + 5, t + 5 + dur) on the compute stream."""
        self.corr += 1
        self.events.append(x("cuda_runtime", "cudaLaunchKernel", PID, PID, t, 4.0, correlation=self.corr))
        self.events.append(flow("s", self.corr, PID, PID, t))
        self.events.append(x("kernel", kernel, 0, STREAM, t + 5.0, dur, device=0, stream=STREAM,
                             correlation=self.corr, grid=[512, 1, 1], block=[128, 1, 1]))
        self.events.append(flow("f", self.corr, 0, STREAM, t + 5.0))

    def operator(self, t, name, kernel, kernels, kernel_us):
        """A cpu_op launching `kernels` kernels back to back; returns when its last kernel ends."""
        self.events.append(x("cpu_op", name, PID, PID, t, kernels * (kernel_us + 5.0)))
        for _ in range(kernels):
            self.launch(t, kernel, kernel_us)
            t += kernel_us + 5.0
        return t

    def collective(self, start, end, kernel, name):
        self.corr += 1
        self.events.append(x("cpu_op", "record_param_comms", PID, PID, start - 6.0, 5.0))
        self.events.append(x("cuda_runtime", "cudaLaunchKernel", PID, PID, start - 5.0, 4.0, correlation=self.corr))
        self.events.append(flow("s", self.corr, PID, PID, start - 5.0))
        self.events.append(x("kernel", kernel, 0, NCCL_STREAM, start, end - start, device=0, stream=NCCL_STREAM,
                             correlation=self.corr, **{"Collective name": name, "In msg nelems": NELEMS,
                                                       "Out msg nelems": NELEMS, "Group size": self.ranks,
                                                       "dtype": "Float", "Process Group Name": "0",
                                                       "Process Group Description": "default_pg",
                                                       "Process Group Ranks": self.groups}))
        self.events.append(flow("f", self.corr, 0, NCCL_STREAM, start))


def work_until_arrival(rank, args, t, jitter):
    """One step's work on `rank` from t; returns its arrival at the all-reduce."""
    straggler = rank.rank == args.straggler
    data = DATA_US + (args.data_us if straggler else 0.0)
    rank.events.append(x("user_annotation", DATALOADER, PID, PID, t, data))
    t += data + 5.0
    for _ in range(LAYERS):
        t = rank.operator(t, "aten::linear", LAYER_KERNEL, 1, 45.0)
    if straggler and args.compute_us > 0:
        t = rank.operator(t, EXTRA_OP, EMBED_KERNEL, int(round(args.compute_us / (EMBED_KERNEL_US + 5.0))),
                          EMBED_KERNEL_US)
    if straggler:
        t += args.pause_us
    return t + 20.0 + jitter


def main():
    parser = generator_arguments(__doc__, ranks=8, steps=4, straggler=7, compute_us=3000.0, pause_us=1500.0,
                                 data_us=1000.0, skew_us=0.0, seed=1)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(args.seed)
    ranks = [Rank(r, args.ranks) for r in range(args.ranks)]
    # The opening broadcast: every rank arrives together, so every step's all-reduce has a lead-in.
    t = T0_US
    for rank in ranks:
        rank.collective(t, t + 300.0, BROADCAST, "broadcast")
    t += 500.0
    windows, steps_us, on_time_us = [], [], []
    for number in range(1, args.steps + 1):
        start = t
        jitters = [rng.uniform(0, 30) for _ in ranks]
        arrive = [work_until_arrival(rank, args, start + 10.0, jitters[rank.rank]) for rank in ranks]
        end = max(arrive) + TRANSFER_US
        others = sorted(a for r, a in enumerate(arrive) if r != args.straggler)
        windows.append(arrive[args.straggler] - others[(len(others) - 1) // 2])
        for rank in ranks:
            rank.collective(arrive[rank.rank], end, NCCL, "allreduce")
            rank.events.append(x("user_annotation", f"ProfilerStep#{number}", PID, PID, start, end - start + 100.0))
        steps_us.append(end + 100.0 - start)
        on_time_us.append(max(others) + TRANSFER_US + 100.0 - start)
        t = end + 200.0
    for rank in ranks:
        skew_ns = int(args.skew_us * 1000) * (rank.rank % 3 - 1)
        doc = {"schemaVersion": 1,
               "distributedInfo": {"backend": "nccl", "rank": rank.rank, "world_size": args.ranks},
               "deviceProperties": hopper_properties("NVIDIA H100 80GB HBM3"),
               "traceEvents": sorted(rank.events, key=lambda e: (e["ts"], e["ph"])),
               "displayTimeUnit": "ms", "baseTimeNanoseconds": BASE_NS + skew_ns}
        with open(os.path.join(args.out, f"rank{rank.rank}.pt.trace.json"), "w") as f:
            json.dump(doc, f, separators=(",", ":"))
    kernels = int(round(args.compute_us / (EMBED_KERNEL_US + 5.0)))
    print(json.dumps({
        "ranks": args.ranks, "straggler": args.straggler, "steps": args.steps,
        "held_up_us_per_step": statistics.mean(windows),
        "by_cause_us_per_step": {"compute": kernels * EMBED_KERNEL_US, "host_pause": args.pause_us + kernels * 5.0,
                                 "data_loading": args.data_us},
        "extra_operator": EXTRA_OP, "extra_operator_us_per_step": kernels * EMBED_KERNEL_US,
        "step_us": statistics.mean(steps_us), "step_us_straggler_on_time": statistics.mean(on_time_us)}))


if __name__ == "__main__":
    main()
