"""`make demo`'s script: its first screen is the real H200 run (tests/data/gpu/ddp_2rank) with the step
split, the three utilizations (compute units and memory bandwidth measured), the verdict and the top
strategies; the CPU-only example comes second; all within a few seconds.

    demo_check.py TUNEPROF SOURCE_DIR
"""
import pathlib
import subprocess
import sys
import time

from harness import stop as fail

FIRST_SCREEN = 60  # lines


def main():
    tuneprof, source = sys.argv[1], pathlib.Path(sys.argv[2])
    started = time.monotonic()
    done = subprocess.run([source / "scripts" / "demo", tuneprof, "tests/data/gpu/ddp_2rank",
                           "examples/tiny_train.pt.trace.json.gz"], cwd=source, capture_output=True, text=True,
                          timeout=120)
    elapsed = time.monotonic() - started
    if done.returncode != 0:
        fail(f"scripts/demo: exit {done.returncode}: {done.stderr}")
    lines = done.stdout.splitlines()
    screen = "\n".join(lines[:FIRST_SCREEN])
    expected = ["tuneprof analyze: 2 ranks", "Where the step goes", "SM efficiency (compute units)",
                "memory bandwidth", "communication bandwidth", "Dominant bottleneck: communication",
                "Top strategies", " 1. "]
    missing = [text for text in expected if text not in screen]
    if missing:
        fail(f"the first {FIRST_SCREEN} lines lack {missing}")
    for utilization in ("SM efficiency (compute units)", "memory bandwidth "):
        line = next(line for line in lines[:FIRST_SCREEN] if line.strip().startswith(utilization.strip()))
        if "unknown" in line:
            fail(f"not measured on the H200 run: {line.strip()}")
    if screen.find("ddp_2rank") > screen.find("tiny_train") >= 0:
        fail("the CPU example comes before the accelerator run")
    if "tiny_train" not in done.stdout.split("== 2/2", 1)[-1]:
        fail("no CPU example second")
    if elapsed > 30:
        fail(f"the demo took {elapsed:.1f} s")
    print(f"demo_check: first screen as expected, {elapsed:.1f} s")


if __name__ == "__main__":
    main()
