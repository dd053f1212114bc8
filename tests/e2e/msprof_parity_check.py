#!/usr/bin/python3
"""msprof-analyze's advisor findings on the shared torch_npu runs (tests/data/msprof_analyze/
advisor_findings.json, recorded by running msprof-analyze from source: the tool's version, command and date
are in the file, record.py beside it says how it was made) against `tuneprof advise --json` on the same runs.
Every recorded problem has its equivalent firing, each recorded figure agrees within the stated tolerance
(theirs_min - tolerance <= ours <= theirs_max + tolerance), each recorded name and operator appears in the
named evidence, and a recorded difference is documented in docs/advisor.md's parity table (which also lists
every equivalent the table records). A check msprof-analyze ran and found no problem in ("problem": false)
must stay silent here unless the entry records why ours differs. msprof-analyze's computation checks read
rank 0 only ("rank": 0): those figures are compared with `advise` on rank 0's directory, as ours otherwise
reports the rank of the cluster where the gain is largest. Slow Rank's and Slow Link's statistics are
compared with `comm --json` on the run (the step parts' spreads to 0.01 % of the step, each rank's SDMA
bandwidth to 0.0001 GB/s: both tools read the same figures, the tolerance is the rounding of the workbook).
The communication checks across ranks (slow link, retransmission) stay silent on CPU, GPU and nsys inputs.
GE graph dumps (Graph Fusion's input), added to a crafted copy of a rank directory, are read, and listed in
`info`'s inventory with their ops.
The automatic slowest-vs-fastest rank comparison (kernel and API compare): on each shared run the straggler
finding names both ranks, the device operators their whole steps differ in and their host APIs, and on a gloo
DDP pair (torch-cpu) their host APIs; on text/level1 communication.exposed explains the HCCL ops' Idle Time.
Usage: msprof_parity_check.py TUNEPROF SHARED_DIR REPO_DIR
"""
import json
import pathlib
import re
import shutil
import sys
import tempfile

from harness import advise_findings, check, finish, run_json


def check_figures(where, recorded, finding):
    for fig in recorded.get("figures", []):
        ours = finding["evidence"].get(fig["evidence"])
        low, high = fig["theirs_min"] - fig["tolerance"], fig["theirs_max"] + fig["tolerance"]
        check(isinstance(ours, (int, float)) and low <= ours <= high,
              f"{where}: {fig['evidence']} {ours} within msprof-analyze's {fig['theirs_min']}-{fig['theirs_max']} "
              f"{fig['unit']} +- {fig['tolerance']}")
    for name in recorded.get("names", []):
        evidence = finding["evidence"]
        every = name["evidence"] == "*"
        text = " ".join(map(str, evidence.values())) if every else str(evidence.get(name["evidence"], ""))
        for part in name["contains"]:
            check(part in text, f"{where}: {name['evidence']} names '{part}'")
    check_operators(where, recorded, finding)


# msprof-analyze lists its vector and its cube operators apart; ours lists the five longest bound shapes of
# every kind together. On the shared runs its cube list is empty: it weighs a matmul shape against its 100 MB
# at 2 bytes an element, ours at the dtype's size, so the FLOAT MatMulV2 shapes (73 MB at 2 bytes, 146 MB at
# 4) are looked at by ours only, and they push its later vector shapes off the list. The first three vector
# shapes it names are required, the rest only where ours lists them, and every other shape ours lists bound
# must be a matmul.
BOUND_REQUIRED = 3
# Ours prints the optimization space to 0.1 %, msprof-analyze to 0.01 % or 0.1 %.
SPACE_TOLERANCE = 0.06


def same_shape(ours, theirs):
    """Ours cuts a long shape list and ends it with '...'; the part it keeps must begin theirs."""
    return ours == theirs or (ours.endswith("...") and theirs.startswith(ours[:-3]))


def listed(text, op):
    """The item of a `; `-joined evidence list that names the operator and its shape, or None."""
    for item in re.split(r"; (?=\S+ \()", text):
        shape = re.search(r"\) \[([^\]]*)\]", item)
        if item.startswith(op["name"] + " (") and shape and same_shape(shape.group(1), op["shape"]):
            return item
    return None


def check_operators(where, recorded, finding):
    bound = [op for op in recorded.get("operators", []) if "bound" in op]
    if bound:
        for item in re.split(r"; (?=\S+ \()", str(finding["evidence"].get("top_bound", ""))):
            if not any(listed(item, op) for op in bound):
                check("(MatMul" in item, f"{where}: top_bound's shape beyond msprof-analyze's is a matmul ({item})")
    for op in recorded.get("operators", []):
        item = listed(str(finding["evidence"].get(op["evidence"], "")), op)
        label = f"{where}: {op['evidence']} names {op['name']} [{op['shape']}]"
        if "bound" in op:
            if op["order"] < BOUND_REQUIRED or item is not None:
                check(item is not None and f"{op['bound']}-bound" in item, f"{label} {op['bound']}-bound")
            continue
        space = re.search(r"space ([\d.]+) %", item or "")
        check(space is not None and abs(float(space.group(1)) - op["pct"]) <= SPACE_TOLERANCE,
              f"{label} with space {op['pct']} % (ours: {item})")


def inventory(tuneprof, path):
    info = run_json(tuneprof, ["info", "--json", path], timeout_s=120)
    return info["ranks"][0]["inventory"] if info is not None else {}


def check_ge_dumps(tuneprof, rank_dir):
    check("ge_graph_dumps" not in inventory(tuneprof, rank_dir), "no GE graph dumps: no inventory entry")
    with tempfile.TemporaryDirectory() as tmp:
        copy = pathlib.Path(tmp) / rank_dir.name
        shutil.copytree(rank_dir, copy)
        for name in ("ge_proto_00000001_graph_1_Build.txt", "ge_onnx_00000001_graph_1_Build.pbtxt", "notes.txt"):
            (copy / name).write_text("graph {}\n")
        entry = inventory(tuneprof, copy).get("ge_graph_dumps", "")
        check(entry.startswith("2 files read: 0 ops in 0 graphs"), f"two empty GE graph dumps listed as read ({entry})")


def parity_row(parity, check_name):
    """The cells of the parity table's row for msprof-analyze's check (empty when there is none)."""
    for line in parity.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 5 and cells[1] == check_name:
            return cells
    return []


STATUSES = ("equivalent", "differs on purpose", "partial", "untested", "none")
# Checks absent from the recorded table whose equivalence this test shows otherwise (check_rank_comparison).
COMPARED_HERE = {"Kernel compare (slowest vs fastest rank)"}


def check_statuses(parity, table):
    """Each row's status is one the text above the table defines; a check the recorded table marks as differing on
    purpose is not called equivalent; a check msprof-analyze did not run on the shared runs is not either."""
    intro = parity[:parity.find("\n| #")]
    recorded = {}
    for entries in table["runs"].values():
        for entry in entries:
            recorded.setdefault(entry["check"], set()).add(entry.get("status", "equivalent"))
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in parity.splitlines()
            if re.match(r"\| \d+ \|", line)]
    check(len(rows) == 26, f"the parity table has 26 rows ({len(rows)})")
    for cells in rows:
        where = f"parity row {cells[0]} ({cells[1]})"
        status = cells[3]
        check(status in STATUSES and f'"{status}":' in intro, f"{where}: status '{status}' is defined above the table")
        for wanted in recorded.get(cells[1], set()):
            if wanted != "equivalent":
                check(status == wanted, f"{where}: '{status}', as the recorded table says ('{wanted}')")
        if cells[1] not in recorded and cells[1] not in COMPARED_HERE:
            check(status != "equivalent", f"{where}: not run by msprof-analyze on the shared runs, so not 'equivalent'")
        if status != "equivalent":
            check(cells[-1] != "", f"{where}: '{status}' says what differs")


def check_step_spread(where, recorded, comm):
    """msprof-analyze's Slow Rank test itself (the step parts' spread across ranks against 5 % of the mean step)
    is `comm`'s step_spread: same parts, same figures, uneven exactly where it finds a slow rank."""
    parts = comm["cross_rank"]["step_spread"] if comm is not None else []
    ours = {p["metric"]: 100 * p["share_of_step"] for p in parts}
    uneven = any(p["uneven"] for p in parts)
    for part in recorded["step_spread"]:
        value = ours.get(part["metric"])
        check(value is not None and abs(value - part["pct"]) <= recorded["step_spread_tolerance_pct"],
              f"{where}: comm's {part['metric']} spread {value} % of the step within {part['pct']} % "
              f"+- {recorded['step_spread_tolerance_pct']}")
    check(uneven == recorded["problem"], f"{where}: comm's step parts uneven: {uneven}, as msprof-analyze finds")


def check_bandwidth(where, recorded, comm):
    """Slow Link's statistics are `comm`'s per-rank transport bandwidths. Its SDMA size and time add the HCCS
    rows of communication.json to the SDMA ones (twice ours), so only the bandwidth compares; RDMA unused is
    no RDMA transport here."""
    ranks = {r["rank"]: r for r in comm["ranks"]} if comm is not None else {}
    for figure in recorded["bandwidth"]:
        transports = {t["transport"]: t for t in ranks.get(figure["rank"], {}).get("ascend", {}).get("transports", [])}
        ours = transports.get(figure["transport"], {}).get("bandwidth_gbps")
        check(ours is not None and abs(ours - figure["gbps"]) <= recorded["bandwidth_tolerance_gbps"],
              f"{where}: rank {figure['rank']} {figure['transport']} {ours} GB/s within {figure['gbps']} "
              f"+- {recorded['bandwidth_tolerance_gbps']}")
        if figure["rdma_gbps"] == 0:
            check("RDMA" not in transports, f"{where}: rank {figure['rank']} has no RDMA traffic")


def check_recorded(where, recorded, parity, findings, comm):
    if "step_spread" in recorded:
        check_step_spread(where, recorded, comm)
    if "bandwidth" in recorded:
        check_bandwidth(where, recorded, comm)
    ours = recorded["ours"] if isinstance(recorded["ours"], list) else [recorded["ours"]]
    for fid in ours:
        check(f"`{fid}`" in parity, f"{where}: the parity table names {fid}")
    finding = next((findings[fid] for fid in ours if fid in findings), None)
    if "differs" in recorded:
        print(f"     differs: {recorded['differs']}")
        check(parity_row(parity, recorded["check"])[-1:] != [""],
              f"{where}: the parity table's row '{recorded['check']}' says what differs")
    if recorded.get("finding", True) is False:
        return  # a command of ours, not a finding: the parity table says so
    if recorded.get("problem", True) is False:
        if "differs" in recorded:
            print(f"     msprof-analyze found no problem; ours {'fires' if finding else 'is silent'} (see differs)")
        else:
            check(finding is None, f"{where}: silent, as msprof-analyze found no problem"
                                   f"{'' if finding is None else ' (ours: ' + finding['id'] + ')'}")
        return
    check(finding is not None, f"{where}: fires")
    if finding is None:
        return
    if "rank" in recorded:
        check(finding["evidence_rank"] == recorded["rank"], f"{where}: figures of rank {recorded['rank']}")
    check_figures(where, recorded, finding)


def check_rank_comparison(where, findings):
    """Rows 24 and 25: the straggler finding names the slowest and the fastest rank, the device operators their
    whole steps differ in (lead-ins reach no compute on these data-parallel runs) and their host APIs."""
    evidence = findings.get("communication.straggler", {}).get("evidence", {})
    check(isinstance(evidence.get("slowest_rank"), (int, float)) and isinstance(evidence.get("fastest_rank"), (int, float)),
          f"{where}: the straggler finding names the slowest and the fastest rank")
    check("device operators per step over whole steps" in str(evidence.get("slowest_vs_fastest_rank", "")),
          f"{where}: the straggler finding names the device operators the two ranks' whole steps differ in")
    check("aten::" in str(evidence.get("slowest_vs_fastest_apis", "")),
          f"{where}: the straggler finding names the host APIs the two ranks differ in")


def check_hccl_idle(where, findings):
    """Idle Time, most of the HCCL ops' elapse on the shared level1 run, is explained on the exposed finding."""
    evidence = findings.get("communication.exposed", {}).get("evidence", {})
    share = evidence.get("hccl_idle_pct_of_elapse")
    check(isinstance(share, (int, float)) and share >= 90 and "Idle" in str(evidence.get("hccl_idle", "")),
          f"{where}: communication.exposed explains the HCCL ops' Idle Time ({share} % of their elapse)")


def check_cpu_rank_comparison(tuneprof, shared):
    """On a gloo DDP pair the straggler finding compares the two ranks' host APIs too."""
    ranks = [shared / "torch-cpu/kineto26" / f"ddp_ws2_rank{r}.json.gz" for r in (0, 1)]
    evidence = advise_findings(tuneprof, *ranks).get("communication.straggler", {}).get("evidence", {})
    check("aten::" in str(evidence.get("slowest_vs_fastest_apis", "")),
          "torch-cpu ddp_ws2: the straggler finding names the host APIs the slowest and fastest rank differ in")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    tuneprof, shared, repo = sys.argv[1], pathlib.Path(sys.argv[2]) / "traces", pathlib.Path(sys.argv[3])
    table = json.loads((repo / "tests/data/msprof_analyze/advisor_findings.json").read_text())
    doc = (repo / "docs/advisor.md").read_text()
    parity = doc[doc.find("## msprof-analyze's advisor, check by check"):]
    check(parity.startswith("## msprof-analyze"), "docs/advisor.md has the parity table")
    print(f"recorded: {table['tool']} {table['version']}, `{table['command']}`, {table['recorded']}")
    print(f"source: {table['source']}")
    check_statuses(parity, table)
    for run, recorded_findings in table["runs"].items():
        run_dir = shared / table["runs_root"] / run
        findings = advise_findings(tuneprof, run_dir)
        rank0 = advise_findings(tuneprof, run_dir / "rank0_ascend_pt")
        comm = run_json(tuneprof, ["comm", "--json", str(run_dir)], timeout_s=120)
        check_rank_comparison(run, findings)
        if run == "text/level1":
            check_hccl_idle(run, findings)
        for recorded in recorded_findings:
            ours = recorded["ours"] if isinstance(recorded["ours"], str) else ", ".join(recorded["ours"])
            check_recorded(f"{run} {recorded['check']} -> {ours}", recorded, parity,
                           rank0 if "rank" in recorded else findings, comm)
    for other in ("kineto/hta/nccl_parser_config/nccl_data.json.gz", "nsys/h100_2gpu_1s.sqlite",
                  "torch-cpu/kineto26"):
        findings = advise_findings(tuneprof, shared / other)
        for fid in ("communication.slow_link", "communication.retransmission"):
            check(fid not in findings, f"{other}: no {fid}")
    check_ge_dumps(tuneprof, shared / table["runs_root"] / "text/level1/rank0_ascend_pt")
    check_cpu_rank_comparison(tuneprof, shared)
    sys.exit(finish())


if __name__ == "__main__":
    main()
