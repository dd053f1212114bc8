#!/usr/bin/env python3
"""A torch_npu rank whose kernel_details / memory_record / operator_memory tables are large enough (16 MB and
more) to be read on a second core beside the timeline's import gives exactly the output it gives when read on
one core (`taskset -c 0`, where they are read after the timeline, one after another): info (its inventory,
whose other large CSVs are counted beside too), analyze, profile, memory and comm as JSON, byte for byte.
Once on the rank as generated (bench/gen_npu_scale.py) and once with damaged rows in each table (warnings
past the cap on their number, rows skipped) and a large counted CSV that does not read, so that the strings,
rows, warnings and counts taken from the second core are seen in their usual place and order.

Usage: npu_tables_beside_check.py TUNEPROF GEN_NPU_SCALE_PY
"""
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import harness

COMMANDS = ["info", "analyze", "profile", "memory", "comm"]


def damage(output):
    """Appends rows each table's reader warns about (and some it skips) to the rank's three tables."""
    with open(output / "kernel_details.csv", "a") as f:
        for i in range(30):
            f.write(f'1,4294967295,0,2,bad_kernel_{i},Bad,static,AI_CORE,not-a-time,5.0,1.0,48,0,NO,"""8,{i}""",'
                    'FLOAT,ND,"""8,8""",FLOAT,ND,N/A\n')
    with open(output / "memory_record.csv", "a") as f:
        for i in range(40):
            f.write(f"PTA_{i % 3},t{i},1.5,2,1,123,NPU:{i % 2}\n")
    with open(output / "operator_memory.csv", "a") as f:
        for i in range(40):
            f.write(f"aten::bad_{i},x{i},100,120,119,20,19,1,1,1,1,1,1,123,NPU:0\n")
    # A large CSV the inventory only counts, whose last record never closes its quote: it does not read.
    with open(output / "op_statistic.csv", "w") as f:
        f.write("OP Type,Core Type,Count\n")
        for i in range(60000):
            f.write(f"Op{i},AI_CORE,{i}\n")
        f.write('"Unclosed,AI_CORE,1\n')


def outputs(binary, rank, one_core):
    """Each command's stdout and stderr (bytes) on `rank`, on core 0 alone or on all cores."""
    prefix = ["taskset", "-c", "0"] if one_core else []
    got = {}
    for command in COMMANDS:
        done = subprocess.run([*prefix, binary, command, "--json", str(rank)], capture_output=True, timeout=300,
                              stdin=subprocess.DEVNULL)
        harness.check(done.returncode == 0, f"{command} on {'one core' if one_core else 'all cores'} exits 0"
                      + ("" if done.returncode == 0 else f": {done.stderr.decode(errors='replace').strip()[:300]}"))
        got[command] = (done.stdout, done.stderr)
    return got


def compare(binary, rank, what):
    one, all_cores = outputs(binary, rank, True), outputs(binary, rank, False)
    for command in COMMANDS:
        harness.check(one[command] == all_cores[command] and one[command][0],
                      f"{what}: {command} --json on all cores prints byte for byte what it prints on one core")


def main():
    binary, generator = sys.argv[1], sys.argv[2]
    if len(os.sched_getaffinity(0)) < 2 or shutil.which("taskset") is None:
        print("skipped: needs two cores and taskset")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, generator, "rank", "--out", tmp, "--mb", "4", "--rows", "50000"],
                       check=True, capture_output=True, timeout=300)
        rank = pathlib.Path(tmp) / "rank0_ascend_pt"
        output = rank / "ASCEND_PROFILER_OUTPUT"
        tables = sum((output / name).stat().st_size
                     for name in ("kernel_details.csv", "memory_record.csv", "operator_memory.csv"))
        harness.check(tables >= 16 << 20, f"the generated tables hold {tables} bytes, enough to be read beside")
        compare(binary, rank, "generated rank")
        damage(output)
        compare(binary, rank, "rank with damaged rows")
    return harness.finish()


if __name__ == "__main__":
    sys.exit(main())
