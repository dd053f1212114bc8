"""A real capture through tuneprof.capture with torch 2.6 on the CPU (tests/workloads/capture_cpu.py), run
twice, the second against the first as its baseline: each run's trace and summary are written, analyze
reads them (the same JSON from either), and the second run prints analyze and compare at its end.

    capture_live_check.py TUNEPROF SOURCE_DIR WORK_DIR [--record DEST]

The torch 2.6 chroot (../shared/tools/torch26) runs the workload; where it is absent (or this is not
root, which its bind mounts need) the check is skipped (77) with one line. The chroot is another
Debian release, so the binary goes in with the shared libraries it lacks (WORK_DIR/bin). --record DEST
copies the two runs to DEST (how tests/data/capture_cpu was made).
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys

from harness import stop as fail

CHROOT = pathlib.Path(os.environ.get("TORCH26_ROOT", "/opt/torch26"))


def skip(message):
    print(f"SKIPPED: {message}")
    sys.exit(77)


def binary_for_chroot(tuneprof, bin_dir):
    """bin_dir/tuneprof: a wrapper running a copy of the binary with the libraries the chroot lacks."""
    lib_dir = bin_dir / "lib"
    lib_dir.mkdir(parents=True)
    shutil.copy2(tuneprof, bin_dir / "tuneprof.bin")
    for line in subprocess.run(["ldd", tuneprof], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "=>" and parts[2].startswith("/"):
            if not any((CHROOT / d / parts[0]).exists() for d in ("usr/lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu")):
                shutil.copy2(parts[2], lib_dir / parts[0])
    wrapper = bin_dir / "tuneprof"
    wrapper.write_text('#!/bin/sh\nhere=$(dirname "$0")\nLD_LIBRARY_PATH="$here/lib" exec "$here/tuneprof.bin" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def run_workload(py, work, wrapper, args):
    env = dict(os.environ, TUNEPROF_BIN=str(wrapper), PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([str(py), "tests/workloads/capture_cpu.py", *args], cwd=work, env=env,
                          capture_output=True, text=True, timeout=400)
    if done.returncode != 0:
        fail(f"capture_cpu.py {' '.join(args)}: exit {done.returncode}: {done.stderr[-2000:]}")
    helper_lines = [line for line in done.stderr.splitlines() if line.startswith("tuneprof: capture:")]
    if helper_lines:
        fail(f"capture_cpu.py {' '.join(args)}: {helper_lines}")
    return done.stdout


def check_run(tuneprof, work, run):
    """One trace and its summary; analyze --json the same from either (run where the capture ran, so that
    the paths the summary recorded are the trace's)."""
    run = work / run
    traces = sorted((run / "traces").iterdir())
    summaries = sorted((run / "summaries").iterdir())
    if len(traces) != 1 or not traces[0].name.startswith("rank0.") or not traces[0].name.endswith(".pt.trace.json.gz"):
        fail(f"{run}: traces/ holds {[t.name for t in traces]}, expected one rank0.<ns>.pt.trace.json.gz")
    if [s.name for s in summaries] != [traces[0].name + ".tps"]:
        fail(f"{run}: summaries/ holds {[s.name for s in summaries]}")
    documents = []
    for source in (run / "traces", run / "summaries"):
        done = subprocess.run([tuneprof, "--quiet", "analyze", "--json", source.relative_to(work)], cwd=work,
                              capture_output=True, text=True)
        if done.returncode != 0:
            fail(f"analyze {source}: {done.stderr}")
        documents.append(done.stdout)
    if documents[0] != documents[1]:
        fail(f"{run}: analyze --json differs between the trace and its summary")
    steps = json.loads(documents[0])["ranks"][0]["steps"]
    if steps != 3:
        fail(f"{run}: {steps} steps recorded, expected the schedule's 3 active steps")


def main():
    tuneprof = str(pathlib.Path(sys.argv[1]).resolve())
    source, work = pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3]).resolve()
    record = pathlib.Path(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[4] == "--record" else None
    py = source.parent / "shared" / "tools" / "torch26" / "py"
    if not (CHROOT / "usr" / "bin" / "python3").exists() or not py.exists():
        skip(f"no torch 2.6 chroot at {CHROOT} (../shared/tools/torch26/setup makes it)")
    if os.geteuid() != 0:
        skip("the torch 2.6 chroot needs root for its bind mounts")
    shutil.rmtree(work / "run", ignore_errors=True)
    shutil.rmtree(work / "bin", ignore_errors=True)
    (work / "tests" / "workloads").mkdir(parents=True, exist_ok=True)
    shutil.copy2(source / "tests" / "workloads" / "capture_cpu.py", work / "tests" / "workloads")
    shutil.rmtree(work / "python", ignore_errors=True)
    shutil.copytree(source / "python" / "tuneprof", work / "python" / "tuneprof",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    wrapper = binary_for_chroot(tuneprof, work / "bin")

    mount = CHROOT / str(work).lstrip("/")
    mounted_before = subprocess.run(["mountpoint", "-q", mount]).returncode == 0
    try:
        run_workload(py, work, wrapper, ["--out", "run/before"])
        printed = run_workload(py, work, wrapper, ["--out", "run/after", "--baseline", "run/before", "--sdpa"])
    finally:
        # The chroot's runner bind-mounts the working directory and leaves it; a chroot deleted with it
        # mounted would delete the files under it, so the mount this check made goes with it.
        if not mounted_before and subprocess.run(["mountpoint", "-q", mount]).returncode == 0:
            subprocess.run(["umount", mount], check=False)
    for run in ("before", "after"):
        check_run(tuneprof, work, pathlib.Path("run") / run)
    if not printed.startswith("tuneprof analyze: 1 rank") or "Top strategies" not in printed:
        fail(f"the end of the block printed no analyze summary: {printed[:500]}")
    if "\nbefore " not in printed or "step_time_us" not in printed:
        fail(f"the end of the block printed no comparison with the baseline: {printed[-1500:]}")
    if record is not None:
        for run in ("before", "after"):
            shutil.rmtree(record / run, ignore_errors=True)
            shutil.copytree(work / "run" / run, record / run)
    print("capture_live_check: 2 captures, traces and summaries read by analyze, compare printed")


if __name__ == "__main__":
    main()
