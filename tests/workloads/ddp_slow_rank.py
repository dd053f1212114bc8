"""gloo DDP on the CPU with one rank made slow on purpose, for `tuneprof comm`'s straggler detection.

Run with torch 2.6 (Kineto), e.g. `../shared/tools/torch26/py tests/workloads/ddp_slow_rank.py --out
tests/data/ddp_slow_rank` (writes ws2/ and ws4/, one rank<R>.json.gz per process). Each process trains a
tiny MLP for one warmup step and STEPS recorded steps (ProfilerStep#N); rank SLOW_RANK sleeps SLEEP_S
before every backward, so its gradient all-reduces start last and every other rank waits for it in the
collective. `tuneprof comm` must name that rank as the cross-rank straggler
(tests/e2e/ddp_slow_rank_check.py).
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, schedule

from workload_output import free_port, write_gz

STEPS = 5
SLEEP_S = 0.05  # far above the tiny model's step on a shared 2-core machine, so the skew is unambiguous
SLOW_RANK = 1


def worker(rank, out, port, world_size):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), USE_LIBUV="0", GLOO_SOCKET_IFNAME="lo")
    torch.manual_seed(0)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 8))
    # Small buckets: a few all-reduces per step, each one matched across ranks by tuneprof.
    ddp = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.02)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    torch.manual_seed(1 + rank)  # different data per rank

    def step():
        loss = ddp(torch.randn(32, 64)).square().mean()
        if rank == SLOW_RANK:
            time.sleep(SLEEP_S)  # the deliberate straggler: everyone else waits in the all-reduce
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    path = os.path.join(out, f"rank{rank}.json.gz")
    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=0, warmup=1, active=STEPS, repeat=1),
                 on_trace_ready=lambda p: write_gz(p, path)) as prof:
        for _ in range(STEPS + 1):
            step()
            prof.step()
    dist.barrier()
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", required=True)
    p.add_argument("--world-sizes", type=int, nargs="+", default=[2, 4])
    args = p.parse_args()
    for world_size in args.world_sizes:
        out = os.path.join(args.out, f"ws{world_size}")
        os.makedirs(out, exist_ok=True)
        mp.spawn(worker, args=(out, free_port(), world_size), nprocs=world_size, join=True)


if __name__ == "__main__":
    main()
