#!/usr/bin/python3
"""msprof-analyze's advisor findings on the shared torch_npu runs (tests/data/msprof_analyze/
advisor_findings.json: the tool's version, command, date and where the figures come from) against
`tuneprof advise --json` on the same runs: every recorded finding has its equivalent firing, each recorded
figure agrees within the stated tolerance (theirs_min - tolerance <= ours <= theirs_max + tolerance), each
recorded name appears in the named evidence, and a recorded difference is documented in docs/advisor.md's
parity table (which also lists every equivalent id the table records). The communication checks across
ranks (slow link, retransmission) stay silent on CPU, GPU and nsys inputs. GE graph dumps (Graph Fusion's
input), added to a crafted copy of a rank directory, are read, and listed in `info`'s inventory with their ops.
Usage: msprof_parity_check.py TUNEPROF SHARED_DIR REPO_DIR
"""
import json
import pathlib
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
        text = str(finding["evidence"].get(name["evidence"], ""))
        for part in name["contains"]:
            check(part in text, f"{where}: {name['evidence']} names '{part}'")


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
    for run, recorded_findings in table["runs"].items():
        findings = advise_findings(tuneprof, shared / table["runs_root"] / run)
        for recorded in recorded_findings:
            where = f"{run} {recorded['check']} -> {recorded['ours']}"
            check(f"`{recorded['ours']}`" in parity, f"{where}: the parity table names {recorded['ours']}")
            finding = findings.get(recorded["ours"])
            check(finding is not None, f"{where}: fires")
            if finding is None:
                continue
            if "rank" in recorded:
                check(finding["evidence_rank"] == recorded["rank"], f"{where}: figures of rank {recorded['rank']}")
            check_figures(where, recorded, finding)
            if "differs" in recorded:
                print(f"     differs (not compared): {recorded['differs']}")
    for other in ("kineto/hta/nccl_parser_config/nccl_data.json.gz", "nsys/h100_2gpu_1s.sqlite",
                  "torch-cpu/kineto26"):
        findings = advise_findings(tuneprof, shared / other)
        for fid in ("communication.slow_link", "communication.retransmission"):
            check(fid not in findings, f"{other}: no {fid}")
    check_ge_dumps(tuneprof, shared / table["runs_root"] / "text/level1/rank0_ascend_pt")
    sys.exit(finish())


if __name__ == "__main__":
    main()
