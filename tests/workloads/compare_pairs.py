"""Before/after pairs of one optimization each, for `tuneprof compare`.

Run with torch 2.6 (Kineto), e.g. `../shared/tools/torch26/py tests/workloads/compare_pairs.py --out
tests/data/compare_pairs all`. Each pair profiles STEPS short steps on the CPU (ProfilerStep#N via
prof.step(), one thread) and writes <out>/<pair>_before.json.gz and <out>/<pair>_after.json.gz:

- attention: naive causal attention (matmul, mask, softmax, matmul) ->
  F.scaled_dot_product_attention (is_causal: the fused kernel skips the masked half and never
  materialises the L x L scores);
- conv_bn: eval-mode Conv2d -> BatchNorm2d -> ReLU blocks -> the same blocks after fuse_modules
  (BatchNorm folded into the convolution; thin 1x1 convolutions on a large image and an in-place
  ReLU, so the BatchNorm pass over the 4 MB activation is a large part of each block). Not robust
  on a loaded machine: -39 % and -45 % in two recordings, -3 % in a third (see keep_freed_buffers);
- inplace: a chain of x = torch.relu(x) on a 32 MB tensor (each op allocates and faults in a new
  buffer) -> torch.relu_(x) (no allocation);
- aa: one workload (20 ms wait, 1 to 6 small matmuls) recorded twice (A/A), in two processes side
  by side: must show no significant change.

The sides of a pair are recorded back to back in one process, so both see the same machine load.
tests/e2e/compare_pairs_check.py states what `compare` must find for each pair.
"""
import argparse
import ctypes
import os
import time

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.ao.quantization import fuse_modules
from torch.profiler import ProfilerActivity, profile, schedule

from workload_output import write_gz

STEPS = 20


def profiled_steps(path, step_fn, steps=STEPS, memory=True):
    """Two warmup steps, then `steps` recorded steps (ProfilerStep#N ranges), as a gzipped trace."""
    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                                  profile_memory=memory,
                                  schedule=schedule(wait=0, warmup=2, active=steps, repeat=1),
                                  on_trace_ready=lambda p: write_gz(p, path)) as prof:
        for _ in range(steps + 2):
            step_fn()
            prof.step()


def naive_attention(q, k, v):
    """Causal attention as it is often written by hand: full L x L scores, a materialised mask."""
    length = q.shape[-2]
    scores = torch.matmul(q, k.transpose(-2, -1)) / (q.shape[-1] ** 0.5)
    mask = torch.triu(torch.ones(length, length, dtype=torch.bool), diagonal=1)
    scores = scores.masked_fill(mask, float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), v)


def attention(out):
    q, k, v = (torch.randn(1, 8, 1024, 64) for _ in range(3))
    profiled_steps(os.path.join(out, "attention_before.json.gz"), lambda: naive_attention(q, k, v))
    profiled_steps(os.path.join(out, "attention_after.json.gz"),
                   lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))


class ConvBnRelu(nn.Sequential):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 1)
        self.bn = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)


def keep_freed_buffers():
    """glibc returns a freed 4 MB buffer to the kernel (munmap) and the next one page-faults in
    anew; which side pays that depends on the order of frees, and it swamped the BatchNorm pass in
    both directions. Serving every size from the heap (M_MMAP_THRESHOLD = -3, M_TRIM_THRESHOLD = -1)
    measures the arithmetic (about 1.5x a step). Process-wide: each pair runs in its own process."""
    libc = ctypes.CDLL("libc.so.6")
    # 32 MB is the largest mmap threshold glibc accepts on 64-bit; mallopt returns 1 on success.
    assert libc.mallopt(-3, 32 << 20) == 1 and libc.mallopt(-1, 1 << 30) == 1


def conv_bn(out):
    keep_freed_buffers()
    torch.manual_seed(0)
    model = nn.Sequential(*(ConvBnRelu(4) for _ in range(4))).eval()
    for block in model:
        # Non-trivial statistics, so folding them changes the weights (and nothing is a no-op).
        block.bn.running_mean.uniform_(-0.5, 0.5)
        block.bn.running_var.uniform_(0.5, 2.0)
    fused = fuse_modules(model, [[f"{i}.conv", f"{i}.bn", f"{i}.relu"] for i in range(len(model))])
    x = torch.randn(1, 4, 512, 512)
    assert torch.allclose(model(x), fused(x), atol=1e-4)
    # Six images a step: a step of tens of ms. (A 128 x 128 image showed no change at all under
    # the profiler: the time BatchNorm lost, the convolution's copy_ gained.)
    # No [memory] events: 48 allocations a step would take the trace over 300 KB.
    for side, net in (("before", model), ("after", fused)):
        profiled_steps(os.path.join(out, f"conv_bn_{side}.json.gz"),
                       lambda: [net(x) for _ in range(6)], memory=False)


def inplace(out):
    x = torch.randn(8 << 20)

    def out_of_place():
        y = x
        for _ in range(4):
            y = torch.relu(y)
        return y

    def in_place():
        y = x.clone()
        for _ in range(4):
            torch.relu_(y)
        return y

    profiled_steps(os.path.join(out, "inplace_before.json.gz"), out_of_place)
    profiled_steps(os.path.join(out, "inplace_after.json.gz"), in_place)


def aa_run(path):
    torch.set_num_threads(1)
    a = torch.randn(256, 256)
    # Batches of varying size (1 to 6 products) in one fixed order, the same in both runs, as
    # variable-length batches of one data set are.
    order = torch.Generator().manual_seed(9)
    sizes = iter(torch.randint(1, 7, (STEPS + 2,), generator=order).tolist())

    def step():
        time.sleep(0.02)  # waiting for input, as a step fed by a slow loader does
        c = a
        for _ in range(next(sizes)):
            c = torch.mm(c, a) / 16
        return c

    profiled_steps(path, step)


def aa(out):
    """Two runs of one input-bound workload at the same time, in two processes. A compute-bound
    A/A measured the other users of the shared 2-core machine instead (run 2 35 % faster when
    recorded after run 1, 36 % slower when started beside it). Here each step waits 20 ms, then
    works for 0.5 to 3 ms, so the two runs rarely compete for a core; tuneprof's step time on a CPU
    trace is the span of the operators in the step (the wait is not in it). With equal work a step
    the two processes still differed by a significant 6 % in one recording (core placement): the
    varying batch sizes make the A/A test what it should, no change of the workload."""
    spawn = mp.get_context("spawn")
    runs = [spawn.Process(target=aa_run, args=(os.path.join(out, f"aa_run{i}.json.gz"),))
            for i in (1, 2)]
    for run in runs:
        run.start()
    for run in runs:
        run.join()
        assert run.exitcode == 0, run.exitcode


PAIRS = {"attention": attention, "conv_bn": conv_bn, "inplace": inplace, "aa": aa}


def record(name, out):
    torch.set_num_threads(1)
    PAIRS[name](out)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", required=True)
    p.add_argument("names", nargs="+", help=f"pairs: {', '.join(PAIRS)} or all")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    # One fresh process a pair: conv_bn changes the allocator, and inplace measures exactly the page
    # faults of fresh buffers.
    spawn = mp.get_context("spawn")
    for name in PAIRS if "all" in args.names else args.names:
        pair = spawn.Process(target=record, args=(name, args.out))
        pair.start()
        pair.join()
        assert pair.exitcode == 0, (name, pair.exitcode)


if __name__ == "__main__":
    main()
