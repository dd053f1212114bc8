#!/usr/bin/python3
"""Records tests/data/flops/flops_cpu.pt.trace.json.gz: a small CPU workload profiled by torch 2.6 with
record_shapes=True and with_flops=True. torch 2.6 computes `flops` for the ops it has formulas for
(aten::mm, addmm, bmm, baddbmm, conv2d, add, mul) but its Chrome export does not write them, so the
same profiler's events are written beside the trace, each op with its name, Input Dims, Concrete Inputs
and torch's flops: flops_cpu.torch_flops.json. tuneprof's FLOP formulas (src/analysis/compute/op_flops.h),
fed from the trace through the importer, are checked against those numbers (tests/e2e/flops_check.py). Run from the repository root with the torch 2.6 chroot:
  ../shared/tools/torch26/py tests/data/flops/record_flops.py
"""
import gzip
import json
import os
import shutil

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, schedule

torch.manual_seed(0)
HERE = os.path.dirname(os.path.abspath(__file__))


def step():
    a, b = torch.randn(64, 96), torch.randn(96, 48)
    torch.mm(a, b)
    torch.addmm(torch.randn(48), a, b)
    torch.addmm(torch.randn(64, 48), a, b, beta=0.5, alpha=2.0)
    torch.bmm(torch.randn(4, 32, 16), torch.randn(4, 16, 24))
    torch.baddbmm(torch.randn(4, 32, 24), torch.randn(4, 32, 16), torch.randn(4, 16, 24))
    torch.matmul(torch.randn(3, 5, 32, 16), torch.randn(16, 8))
    F.linear(torch.randn(10, 20, 96), torch.randn(40, 96), torch.randn(40))
    x = torch.randn(2, 8, 20, 20)
    F.conv2d(x, torch.randn(16, 8, 3, 3), torch.randn(16))
    F.conv2d(x, torch.randn(16, 8, 3, 3), None, stride=2, padding=1)
    F.conv2d(x, torch.randn(8, 2, 5, 3), torch.randn(8), stride=(1, 2), padding=(2, 1), dilation=(1, 2), groups=4)
    F.conv1d(torch.randn(2, 4, 30), torch.randn(6, 4, 5), padding=2)
    F.conv3d(torch.randn(1, 2, 6, 6, 6), torch.randn(4, 2, 3, 3, 3))
    q, k, v = (torch.randn(2, 4, 16, 8) for _ in range(3))
    F.scaled_dot_product_attention(q, k, v)
    h = torch.randn(8, 64)
    F.layer_norm(h, (64,))
    F.softmax(h, dim=-1)
    torch.add(h, h)
    torch.mul(h, 2.0)
    F.gelu(h)


def export(prof, out):
    prof.export_chrome_trace(out)
    ops = [{"name": e.name, "input_shapes": e.input_shapes, "concrete_inputs": list(e.concrete_inputs or []),
            "flops": e.flops} for e in prof.events() if e.flops]
    with open(os.path.join(HERE, "flops_cpu.torch_flops.json"), "w") as f:
        json.dump({"torch": torch.__version__, "ops": ops}, f, indent=1)


def main():
    out = os.path.join(HERE, "flops_cpu.pt.trace.json")
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_flops=True,
                 schedule=schedule(wait=0, warmup=1, active=2, repeat=1),
                 on_trace_ready=lambda p: export(p, out)) as prof:
        for _ in range(4):
            step()
            prof.step()
    with open(out, "rb") as src, gzip.open(out + ".gz", "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(out)
    print("wrote", out + ".gz", "torch", torch.__version__)


if __name__ == "__main__":
    main()
