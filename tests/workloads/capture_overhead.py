"""What each torch.profiler setting tuneprof.capture turns on costs, on the CPU model of capture_cpu.py:
the mean wall time of a recorded step with the profiler off, with it on and nothing else, and with each
setting added alone and all together (as capture() sets them). docs/python.md quotes the figures.

    ../shared/tools/torch26/py tests/workloads/capture_overhead.py [--steps 20]

Each configuration runs 3 warm-up then STEPS timed steps; the profiler records them all (no schedule), so
the figure includes the recording and not the export. One thread, so the figures are the host cost. The
configurations take turns over ROUNDS rounds and each figure is the median of its rounds' medians, so that
a load change on a shared machine does not land on one configuration. --with-stack adds with_stack=True
(Debian's torch 2.6 under Python 3.13 crashed in it here, so it is not measured by default).
"""
import argparse
import pathlib
import statistics
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from capture_cpu import BATCH, TOKENS, WIDTH, Block  # noqa: E402

SETTINGS = {
    "profiler off": None,
    "profiler on, no options": {},
    "record_shapes": {"record_shapes": True},
    "profile_memory": {"profile_memory": True},
    "with_modules": {"with_modules": True},
    "capture() defaults (record_shapes + profile_memory + with_modules)": {"record_shapes": True,
                                                                         "profile_memory": True,
                                                                         "with_modules": True},
}


def timed_steps(step, steps, options):
    for _ in range(3):
        step()
    times = []
    context = profile(activities=[ProfilerActivity.CPU], **options) if options is not None else None
    if context is not None:
        context.__enter__()
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    if context is not None:
        context.__exit__(None, None, None)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--with-stack", action="store_true")
    args = parser.parse_args()
    if args.with_stack:
        SETTINGS["with_stack"] = {"with_stack": True}
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(Block(False), Block(False))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    data = torch.randn(BATCH, TOKENS, WIDTH)

    def step():
        optimizer.zero_grad(set_to_none=True)
        model(data).square().mean().backward()
        optimizer.step()

    rounds = {name: [] for name in SETTINGS}
    for _ in range(args.rounds):
        for name, options in SETTINGS.items():
            rounds[name].append(timed_steps(step, args.steps, options))
    base = statistics.median(rounds["profiler off"])
    for name, medians in rounds.items():
        median = statistics.median(medians)
        print(f"{name:52s} {median * 1e3:8.2f} ms/step  {100 * (median / base - 1):+6.1f} %")


if __name__ == "__main__":
    main()
