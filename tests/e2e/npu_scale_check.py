#!/usr/bin/env python3
"""A generated torch_npu rank whose CSVs span many read windows (bench/gen_npu_scale.py rank, small sizes):
  - `info --json` inventories kernel_details, memory_record and operator_memory (read by the model) and
    operator_details (counted only) with exactly the rows generated: the rows read while streaming, and those
    the inventory took from the read, are all of them;
  - the same rank with CRLF line ends analyses to the same `analyze --json` (apart from nothing);
  - a quoted cell left open near the end of kernel_details.csv, past many windows, is one warning naming the
    file, the row and the byte; the rank still analyses, and the inventory says the file is unreadable and why;
  - 8 small ranks (gen_npu_scale.py ranks: two steps, one all-reduce each, hosts' clocks 5 and 10 ms off rank
    0's, one rank late): `comm --json` finds each rank's offset to the generator's, takes out those that are not
    zero, and so names the generator's late rank as the straggler, as the slow-rank outlier test and the HCCL
    rule name it; the text does not call the ranks one clock.

Usage: npu_scale_check.py TUNEPROF GEN_NPU_SCALE_PY
"""
import json
import os
import subprocess
import sys
import tempfile

from harness import json_or_exit, report

ROWS = 60000  # about 10 MB of kernel_details: some 150 windows of 64 KiB
TABLES = ("kernel_details.csv", "memory_record.csv", "operator_memory.csv", "operator_details.csv")


def check_clocks(binary, generator, tmp, failures):
    """The clocks and the straggler of the 8-rank run against the generator's truth."""
    out = os.path.join(tmp, "ranks")
    done = subprocess.run([sys.executable, generator, "ranks", "--out", out, "--ranks", "8"], check=True,
                          capture_output=True, text=True)
    truth = json.loads(done.stdout)
    x = json_or_exit(binary, "comm", "--json", out)["cross_rank"]
    for clock in x["clocks"]["ranks"]:
        want = truth["clock_offsets_us"][str(clock["rank"])]
        if clock["offset_us"] is None or abs(clock["offset_us"] - want) > 1.0 or clock["applied"] != (want != 0):
            failures.append(f"clocks: rank {clock['rank']} offset {clock['offset_us']} us (applied "
                            f"{clock['applied']}), the generator's {want} us")
    late = truth["straggler"]
    if x["straggler_rank"] != late or not x["straggler_stands_out"] or x["straggler_within_clock_uncertainty"]:
        failures.append(f"clocks: straggler {x['straggler_rank']} (stands out {x['straggler_stands_out']}): "
                        f"{x['straggler_reason']}; the generator's late rank is {late}")
    tested = {o["metric"]: o["outlier_ranks"] for o in x["outliers"]}
    if tested.get("communication") != [late] or x["ascend_slow_rank"] != late:
        failures.append(f"clocks: the outlier test names {tested.get('communication')}, the HCCL rule "
                        f"{x['ascend_slow_rank']}; the generator's late rank is {late}")
    text = subprocess.run([binary, "comm", out], capture_output=True, text=True, timeout=300).stdout
    if "clocks: one clock" in text:
        failures.append("clocks: the text says one clock on hosts 10 ms apart")


def main():
    binary, generator = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, generator, "rank", "--out", tmp, "--mb", "2", "--rows", str(ROWS)], check=True,
                       stdout=subprocess.DEVNULL)
        rank = os.path.join(tmp, "rank0_ascend_pt")
        output = os.path.join(rank, "ASCEND_PROFILER_OUTPUT")
        inventory = json_or_exit(binary, "info", "--json", rank)["ranks"][0]["inventory"]
        for table in TABLES:
            entry = inventory.get("ASCEND_PROFILER_OUTPUT/" + table, "")
            if not entry.startswith(f"{ROWS} rows"):
                failures.append(f"inventory of {table}: {entry!r}, generated {ROWS} rows")
        before = json_or_exit(binary, "analyze", "--json", rank)
        if before["warnings"]:
            failures.append(f"warnings on the generated rank: {before['warnings']}")

        for table in TABLES:
            path = os.path.join(output, table)
            with open(path, "rb") as f:
                text = f.read()
            with open(path, "wb") as f:
                f.write(text.replace(b"\n", b"\r\n"))
        if json_or_exit(binary, "analyze", "--json", rank) != before:
            failures.append("analyze --json differs once the CSVs end their lines with CRLF")

        kernels = os.path.join(output, "kernel_details.csv")
        with open(kernels, "ab") as f:
            f.write(b'1,2,3,"open\r\n' + b"4,5,6\r\n" * 10)
        done = subprocess.run([binary, "analyze", "--json", rank], capture_output=True, text=True,
                              timeout=300)
        if done.returncode != 0:
            failures.append(f"analyze with an open quote: exit {done.returncode}: {done.stderr.strip()}")
        else:
            warnings = [w for w in json.loads(done.stdout)["warnings"] if "unterminated quoted field" in w]
            if len(warnings) != 1 or "kernel_details.csv: row " not in warnings[0] or "from byte " not in warnings[0]:
                failures.append(f"open quote: warnings {warnings}")
        inventory = json_or_exit(binary, "info", "--json", rank)["ranks"][0]["inventory"]
        entry = inventory["ASCEND_PROFILER_OUTPUT/kernel_details.csv"]
        if "unterminated quoted field" not in entry:
            failures.append(f"open quote: inventory entry {entry!r}")
        check_clocks(binary, generator, tmp, failures)
    return report(failures, None if failures else f"ok: {len(TABLES)} tables of {ROWS} rows streamed and counted; "
                  "CRLF reads the same; an open quote is one warning; 8 ranks' clocks and straggler as generated")


if __name__ == "__main__":
    sys.exit(main())
