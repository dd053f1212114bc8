"""Workloads built to have one known bottleneck each, for the advisor's golden tests.

Run with torch 2.6 (Kineto), e.g. `../shared/tools/torch26/py tests/workloads/bottlenecks.py --out
tests/data/workloads all`. Each workload profiles a few steps on the CPU (ProfilerStep#N via prof.step())
and writes <out>/<name>.json.gz (the DDP one writes one file per rank into <out>/comm_ddp/). What each
one is built to show, and what the advisor must say about it, is in WORKLOADS below and in
tests/e2e/advisor_workloads_check.py.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, schedule

from workload_output import free_port, write_gz

STEPS = 4


def profiled_steps(path, step_fn, steps=STEPS, memory=False):
    """One warmup step, then `steps` recorded steps (ProfilerStep#N ranges), written as a gzipped trace."""
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=memory,
                 with_flops=True, schedule=schedule(wait=0, warmup=1, active=steps, repeat=1),
                 on_trace_ready=lambda p: write_gz(p, path)) as prof:
        for _ in range(steps + 1):
            step_fn()
            prof.step()


def host_launch(out):
    """Thousands of tiny operators on 8-element tensors: the time is Python and dispatch, not math."""
    x = torch.zeros(8)

    def step():
        y = x
        for _ in range(600):
            y = y + 1
        return y

    profiled_steps(os.path.join(out, "host_launch.json.gz"), step)


class SleepyDataset(torch.utils.data.Dataset):
    """Each sample costs 4 ms of I/O wait (sleep), as a slow disk or decoder would."""

    def __len__(self):
        return 10_000

    def __getitem__(self, i):
        time.sleep(0.004)
        return torch.randn(64), torch.randn(8)


def data_loading(out):
    """A DataLoader in the main process (num_workers=0) feeding a tiny model: steps wait for input."""
    loader = iter(torch.utils.data.DataLoader(SleepyDataset(), batch_size=16, num_workers=0))
    model = nn.Linear(64, 8)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def step():
        x, y = next(loader)
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()

    profiled_steps(os.path.join(out, "data_loading.json.gz"), step)


def memory_elementwise(out):
    """Element-wise chains over 2M-element tensors: every op streams 16 MB through memory and does
    one or two flops per element."""
    x = torch.randn(2 << 20)

    def chain(y):
        y = y * 1.5
        y = y + 0.5
        y = torch.sigmoid(y)
        y = y * x
        y = torch.tanh(y)
        return y - 0.25

    def step():
        # Three chains per step, each ending in a reduction (as loss terms would).
        return [chain(x).sum() for _ in range(3)]

    profiled_steps(os.path.join(out, "memory_elementwise.json.gz"), step)


def compute_matmul(out):
    """Back-to-back 1024^3 matrix products in fp32: arithmetic dominates, nothing to fuse."""
    a = torch.randn(1024, 1024)
    b = torch.randn(1024, 1024)

    def step():
        c = a
        for _ in range(6):
            c = torch.mm(c, b)
            c = c / 32  # keeps values finite; one cheap op against a 2-GFLOP product
        return c

    profiled_steps(os.path.join(out, "compute_matmul.json.gz"), step)


class ConvBnRelu(nn.Module):
    def __init__(self, channels=32, blocks=6):
        super().__init__()
        layers = [nn.Conv2d(3, channels, 3, padding=1), nn.BatchNorm2d(channels), nn.ReLU()]
        for _ in range(blocks - 1):
            layers += [nn.Conv2d(channels, channels, 3, padding=1), nn.BatchNorm2d(channels), nn.ReLU()]
        self.body = nn.Sequential(*layers)

    def forward(self, x):
        return self.body(x)


def fusion_conv_bn_relu(out):
    """Inference through unfused Conv2d -> BatchNorm2d -> ReLU blocks (fuse_modules was not applied)."""
    model = ConvBnRelu().eval()
    x = torch.randn(8, 3, 64, 64)

    def step():
        with torch.no_grad():
            model(x)

    profiled_steps(os.path.join(out, "fusion_conv_bn_relu.json.gz"), step)


def naive_attention(q, k, v, mask):
    scores = torch.matmul(q, k.transpose(-2, -1)) / (q.shape[-1] ** 0.5)
    scores = scores.masked_fill(mask, float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), v)


def fusion_attention(out):
    """Causal self-attention written out as matmul -> scale -> mask -> softmax -> matmul."""
    batch, heads, seq, dim = 4, 8, 256, 64
    q, k, v = (torch.randn(batch, heads, seq, dim) for _ in range(3))
    mask = torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1)

    def step():
        with torch.no_grad():
            for _ in range(4):
                naive_attention(q, k, v, mask)

    profiled_steps(os.path.join(out, "fusion_attention.json.gz"), step)


class ManySmallParameters(nn.Module):
    """128 parameters of 4096 floats (16 KiB each), each scaling the input once: the backward is 128
    tiny products while DDP, with buckets of one parameter, runs 128 all-reduces per step."""

    def __init__(self, count=128, size=4096):
        super().__init__()
        self.weights = nn.ParameterList(nn.Parameter(torch.randn(size)) for _ in range(count))

    def forward(self, x):
        return sum((w * x).sum() for w in self.weights)


def ddp_worker(rank, out, port, world_size):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), USE_LIBUV="0", GLOO_SOCKET_IFNAME="lo")
    torch.manual_seed(rank)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    # bucket_cap_mb far below the default 25: every 16 KiB gradient is its own latency-bound all-reduce.
    ddp = nn.parallel.DistributedDataParallel(ManySmallParameters(), bucket_cap_mb=0.01)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3, foreach=True)

    def step():
        loss = ddp(torch.randn(4096))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    path = os.path.join(out, "comm_ddp", f"rank{rank}.json.gz")
    profiled_steps(path, step)
    dist.destroy_process_group()


def comm_ddp(out):
    """gloo DDP whose gradients travel in hundreds of tiny buckets: communication sets the step."""
    os.makedirs(os.path.join(out, "comm_ddp"), exist_ok=True)
    mp.spawn(ddp_worker, args=(out, free_port(), 2), nprocs=2, join=True)


WORKLOADS = {
    "host_launch": host_launch,                  # verdict host; top finding host.*
    "data_loading": data_loading,                # verdict data; top finding data.*
    "memory_elementwise": memory_elementwise,    # verdict memory; top finding fusion.elementwise_chain
    "compute_matmul": compute_matmul,            # verdict compute
    "fusion_conv_bn_relu": fusion_conv_bn_relu,  # top finding fusion.conv_bn_relu
    "fusion_attention": fusion_attention,        # top finding fusion.attention
    "comm_ddp": comm_ddp,                        # verdict communication; top finding communication.*
}


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", required=True)
    p.add_argument("names", nargs="+", help=f"workloads: {', '.join(WORKLOADS)} or all")
    args = p.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    for name in WORKLOADS if args.names == ["all"] else args.names:
        WORKLOADS[name](args.out)


if __name__ == "__main__":
    main()
