"""Workloads with a known memory behaviour each, for `tuneprof memory` (tests/e2e/memory_workloads_check.py).

Run with torch 2.6 (Kineto) on the CPU: `../shared/tools/torch26/py tests/workloads/memory_workloads.py
--out tests/data/memory_workloads`. Each profiles one warmup step and STEPS recorded steps
(ProfilerStep#N, profile_memory=True) and writes <out>/<name>.json.gz. The numbers the check expects
are written next to them in <out>/expected.json, from the constants below (known by construction):
- leak: every step appends one LEAK_ELEMS float32 tensor to a list that is never cleared; every other
  tensor of the step dies inside it. The leaked bytes alive at the end of recorded step i are
  (i + 1) * LEAK_BYTES (the warmup step's tensor was allocated before recording began).
- inplace_relu: every step runs `x = torch.relu(x)` RELU_CHAIN times on a fresh RELU_ELEMS float32
  tensor; each relu's input dies as the name is rebound, so each is an in-place candidate of
  RELU_BYTES: STEPS * RELU_CHAIN * RELU_BYTES saved in all.
"""
import argparse
import json
import os

import torch

from bottlenecks import profiled_steps

STEPS = 4
LEAK_ELEMS = 300_000
LEAK_BYTES = LEAK_ELEMS * 4
RELU_ELEMS = 250_000
RELU_BYTES = RELU_ELEMS * 4
RELU_CHAIN = 6


def leak(out):
    kept = []

    def step():
        scratch = torch.randn(50_000)
        kept.append(torch.full((LEAK_ELEMS,), float(len(kept))))
        return float((scratch * 2).sum())

    profiled_steps(os.path.join(out, "leak.json.gz"), step, memory=True)
    # Frees the leaked tensors. Measured: the next trace's first Total Allocated still counts the four
    # recorded ones (4.8 MB; allocated while profiling, freed while not), which tuneprof reports as
    # allocated before the trace began.
    kept.clear()


def inplace_relu(out):
    def step():
        x = torch.randn(RELU_ELEMS)
        for _ in range(RELU_CHAIN):
            x = torch.relu(x)
        return float(x[0])

    profiled_steps(os.path.join(out, "inplace_relu.json.gz"), step, memory=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    leak(args.out)
    inplace_relu(args.out)
    expected = {"steps": STEPS, "leak_bytes": LEAK_BYTES, "relu_bytes": RELU_BYTES, "relu_chain": RELU_CHAIN}
    with open(os.path.join(args.out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
