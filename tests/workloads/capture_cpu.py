"""A small training loop profiled through tuneprof.capture, as docs/python.md shows it, on the CPU.

Run with torch 2.6 (Kineto) from the repository root, twice, the second against the first:

    ../shared/tools/torch26/py tests/workloads/capture_cpu.py --out tests/data/capture_cpu/before
    ../shared/tools/torch26/py tests/workloads/capture_cpu.py --out tests/data/capture_cpu/after \
        --baseline tests/data/capture_cpu/before --sdpa

A two-layer transformer-style block (attention written out, or F.scaled_dot_product_attention with
--sdpa, then an MLP) trains on random data; the helper's schedule is 1 wait, 2 warm-up and 3 active
steps, so each run leaves one trace (traces/rank0.<ns>.pt.trace.json.gz) and its summary
(summaries/<trace>.tps), and prints `tuneprof analyze` (and `tuneprof compare` with --baseline) at the
end. The tuneprof command comes from $TUNEPROF_BIN (tests/e2e/capture_live_check.py hands the chroot one).
"""
import argparse
import math
import pathlib
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
import tuneprof  # noqa: E402

WIDTH, HEADS, TOKENS, BATCH = 128, 4, 64, 8


class Block(nn.Module):
    def __init__(self, sdpa):
        super().__init__()
        self.sdpa = sdpa
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.out = nn.Linear(WIDTH, WIDTH)
        self.norm1 = nn.LayerNorm(WIDTH)
        self.norm2 = nn.LayerNorm(WIDTH)
        self.mlp = nn.Sequential(nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(), nn.Linear(4 * WIDTH, WIDTH))

    def attention(self, x):
        q, k, v = self.qkv(x).view(BATCH, TOKENS, 3, HEADS, WIDTH // HEADS).permute(2, 0, 3, 1, 4)
        if self.sdpa:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scores = q @ k.transpose(-2, -1) / math.sqrt(WIDTH // HEADS)
            mask = torch.ones(TOKENS, TOKENS, dtype=torch.bool).triu(1)
            y = scores.masked_fill(mask, float("-inf")).softmax(-1) @ v
        return self.out(y.transpose(1, 2).reshape(BATCH, TOKENS, WIDTH))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--baseline")
    parser.add_argument("--sdpa", action="store_true")
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(Block(args.sdpa), Block(args.sdpa))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    data = torch.randn(BATCH, TOKENS, WIDTH)
    with tuneprof.capture(args.out, device="cpu", wait=1, warmup=2, active=3, worker_name="rank0",
                          baseline=args.baseline) as prof:
        for _ in range(6):
            optimizer.zero_grad(set_to_none=True)
            model(data).square().mean().backward()
            optimizer.step()
            prof.step()


if __name__ == "__main__":
    main()
