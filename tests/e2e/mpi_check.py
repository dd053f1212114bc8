#!/usr/bin/env python3
"""`--mpi`: a run shared among the processes of an MPI job prints exactly what one process prints.

On generated 8-rank runs in both layouts (bench/gen_cluster.py: Kineto + NCCL with a straggler and skewed
clocks, torch_npu + HCCL), `mpirun -n 2` and `mpirun -n 4 --oversubscribe` of `tuneprof analyze|advise|comm
--mpi` (text and --json) give the single-process stdout, stderr and exit code byte for byte; so do a
directory of rank summaries (.tps), a run with an unreadable file among its ranks, and a path that does not
exist. Per-host disks, simulated with one working directory per process: files only one process sees are
read there, and one path naming different files on two "hosts" is skipped with a warning giving both. The tuneprof executable hands --mpi to tuneprof-mpi beside it, as a user runs it.

Skipped (exit 77) where this build has no tuneprof-mpi or the machine no mpirun.
Usage: mpi_check.py TUNEPROF GEN_CLUSTER_PY
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from harness import report

RANKS = 8


def run(args):
    """(exit code, stdout, stderr) of any command: mpirun as well as the binary alone."""
    done = subprocess.run(args, capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout, done.stderr


def mpirun(processes):
    command = ["mpirun", "-n", str(processes)]
    if processes > (os.cpu_count() or 1):
        command.append("--oversubscribe")
    return command


def check_per_host(binary, generator, tmp, failures):
    run_dir = os.path.join(tmp, "per_host_run")
    subprocess.run([sys.executable, generator, "--out", run_dir, "--ranks", "4"], check=True, capture_output=True,
                   timeout=300)
    ranks = sorted(os.listdir(run_dir))
    hosts = [os.path.join(tmp, "host_a"), os.path.join(tmp, "host_b")]
    for h, host in enumerate(hosts):
        os.makedirs(os.path.join(host, "local"))
        for name in ranks[h * 2:h * 2 + 2]:  # each host holds two ranks under their own names
            shutil.copy(os.path.join(run_dir, name), os.path.join(host, "local", name))
        shutil.copy(os.path.join(run_dir, ranks[h]), os.path.join(host, "local", "same_name.json"))
    binary = os.path.abspath(binary)  # each process starts in its own directory
    command = ["mpirun", "-n", "1", "-wdir", hosts[0], binary, "comm", "--mpi", "--json", "local", ":",
               "-n", "1", "-wdir", hosts[1], binary, "comm", "--mpi", "--json", "local"]
    code, out, err = run(command)
    if code != 0 or "same_name.json: different files under this path on different hosts" not in err:
        failures.append(f"per-host disks: exit {code}, stderr {err[:400]!r}")
        return
    got = sorted(r["rank"] for r in json.loads(out)["ranks"])
    if got != [0, 1, 2, 3]:
        failures.append(f"per-host disks: ranks {got}, want the four each host holds under its own names")


def main():
    binary, generator = sys.argv[1], sys.argv[2]
    if not os.path.exists(os.path.join(os.path.dirname(binary), "tuneprof-mpi")) or shutil.which("mpirun") is None:
        print("SKIP: no tuneprof-mpi beside tuneprof or no mpirun (scripts/install-deps installs Open MPI)")
        return 77
    # Open MPI refuses to start as root unless told; CI containers run as root.
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    failures = []
    checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        inputs = {}
        for layout in ("kineto", "torch_npu"):
            run_dir = os.path.join(tmp, layout)
            subprocess.run([sys.executable, generator, "--out", run_dir, "--ranks", str(RANKS), "--layout", layout],
                           check=True, capture_output=True, timeout=300)
            inputs[layout] = [run_dir]
        summaries = os.path.join(tmp, "summaries")
        os.makedirs(summaries)
        for name in sorted(os.listdir(inputs["kineto"][0])):
            made = run([binary, "summarize", os.path.join(inputs["kineto"][0], name), "-o",
                        os.path.join(summaries, name + ".tps")])
            if made[0] != 0:
                failures.append(f"summarize {name}: exit {made[0]}: {made[2].strip()}")
        inputs["summaries"] = [summaries]
        damaged = os.path.join(tmp, "damaged")
        shutil.copytree(inputs["kineto"][0], damaged)
        with open(os.path.join(damaged, "rank5.pt.trace.json"), "w") as f:
            f.write("not json")
        inputs["damaged"] = [damaged]
        inputs["missing"] = [os.path.join(tmp, "no_such_run")]
        # (input, command, format, processes): every command and both counts on the two layouts, fewer on
        # the rest (each mpirun takes most of a second to start).
        cases = [(layout, command, ["--json"], processes) for layout in ("kineto", "torch_npu")
                 for command in ("analyze", "advise", "comm") for processes in (2, 4)]
        cases += [("kineto", "analyze", [], 2), ("torch_npu", "advise", [], 4), ("summaries", "analyze", ["--json"], 2),
                  ("summaries", "comm", [], 4), ("damaged", "comm", ["--json"], 2), ("damaged", "analyze", [], 4),
                  ("missing", "analyze", [], 2)]
        for label, command, fmt, processes in cases:
            paths = inputs[label]
            want = run([binary, command, *fmt, *paths])
            got = run(mpirun(processes) + [binary, command, "--mpi", *fmt, *paths])
            checked += 1
            # mpirun adds its own report of a failed process after ours: compare our line.
            got_err = got[2] if want[0] == 0 else got[2].split("\n", 1)[0] + "\n"
            if (got[0] != 0) != (want[0] != 0) or got[1] != want[1] or got_err != want[2]:
                failures.append(f"{label}: mpirun -n {processes} {command} --mpi {' '.join(fmt)}: exit {got[0]} "
                                f"(want {want[0]}), stdout {'same' if got[1] == want[1] else 'differs'}, "
                                f"stderr {got_err[:300]!r} (want {want[2][:300]!r})")
        check_per_host(binary, generator, tmp, failures)
    return report(failures, f"mpi: {checked} runs compared with one process, {len(failures)} failure(s)")


if __name__ == "__main__":
    sys.exit(main())
