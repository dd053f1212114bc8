#!/usr/bin/python3
"""fusion.graph_fusion on a generated torch_npu rank directory (bench/gen_cluster.py --layout torch_npu, one
rank, two steps of three 45 us tasks) with GE graph dumps written beside its profiler files: a ModelDef dump
(ge_proto_*_Build.txt) holding MatMulV2 + Add(bias) and Sigmoid + Mul(x), an ONNX dump (ge_onnx_*.pbtxt)
holding Cast > Cast, and kernel_details rows renamed after the MatMul, Add and Sigmoid ops, so that the
answers are known by construction:
  - `info --json` lists the dumps as read, with their ops and graphs; a malformed third dump is one warning
    naming the file, the line and the cause, and the rank is still read (exit 0);
  - `advise --json` has fusion.graph_fusion with 3 unfused subgraphs, 135 us of their ops per step and a gain
    of 45 us per step (the MatMul + Add pair's 90 us less its longest op, 45 us; the Sigmoid alone is timed);
  - the same dumps beside the rank directory (in the run directory) are read by the rank, and `info` says where;
  - without the dumps the finding does not fire.
Usage: ge_graph_fusion_check.py TUNEPROF GEN_CLUSTER_PY
"""
import csv
import pathlib
import subprocess
import sys
import tempfile

from harness import advise_findings, check, finish, run_json

MODEL_DEF = """name: "graph_1"
graph {
  name: "graph_1"
  op { name: "x" type: "Data" output_desc { dtype: DT_FLOAT shape { dim: 4096 dim: 4096 } } }
  op { name: "bias" type: "Const" output_desc { dtype: DT_FLOAT shape { dim: 4096 } } }
  op { name: "dense/MatMul" type: "MatMulV2" input: "x:0" input: "w:0"
       attr { key: "transpose_x1" value { b: false } }
       output_desc { dtype: DT_FLOAT shape { dim: 4096 dim: 4096 } } }
  op { name: "dense/Add" type: "Add" input: "dense/MatMul:0" input: "bias:0"
       output_desc { dtype: DT_FLOAT shape { dim: 4096 dim: 4096 } } }
  op { name: "act/Sigmoid" type: "Sigmoid" input: "dense/Add:0" }
  op { name: "act/Mul" type: "Mul" input: "dense/Add:0" input: "act/Sigmoid:0" input: "dense/MatMul:-1" }
}
"""

ONNX = """ir_version: 3
graph {
  node { output: "y" name: "y_in" op_type: "ge:Data" }
  node { input: "y" output: "c1" name: "Cast_1" op_type: "ge:Cast" }
  node { input: "c1" output: "c2" name: "Cast_2" op_type: "ge:Cast" }
  name: "graph_2"
}
"""

RENAMED = ["dense/MatMul", "dense/Add", "act/Sigmoid"]  # the three tasks of each step, in order


def make_rank(gen, tmp):
    subprocess.run([sys.executable, gen, "--out", str(tmp), "--ranks", "1", "--steps", "2", "--layers", "3",
                    "--layout", "torch_npu", "--straggler", "0"], check=True, capture_output=True, timeout=120)
    rank = tmp / "rank0_ascend_pt"
    details = rank / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    with details.open(newline="") as f:
        rows = list(csv.reader(f))
    name = rows[0].index("Name")
    position = {}
    for row in rows[1:]:
        if row[name].startswith("aclnnGelu"):
            step = row[0]
            row[name] = RENAMED[position.get(step, 0)]
            position[step] = position.get(step, 0) + 1
    with details.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    return rank


def check_info(tuneprof, rank, entry_start):
    info = run_json(tuneprof, ["info", "--json", rank])
    entry = info["ranks"][0]["inventory"].get("ge_graph_dumps", "") if info else ""
    check(entry.startswith(entry_start), f"info lists the dumps: '{entry}' starts with '{entry_start}'")
    return info


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    tuneprof, gen = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        rank = make_rank(gen, pathlib.Path(tmp))
        check("fusion.graph_fusion" not in advise_findings(tuneprof, rank), "no dumps: no finding")
        (rank / "ge_proto_00000001_graph_1_Build.txt").write_text(MODEL_DEF)
        (rank / "ge_onnx_00000002_graph_2_Build.pbtxt").write_text(ONNX)
        check_info(tuneprof, rank, "2 files read: 9 ops in 2 graphs")
        findings = advise_findings(tuneprof, rank)
        f = findings.get("fusion.graph_fusion")
        check(f is not None, "fusion.graph_fusion fires")
        if f is not None:
            ev = f["evidence"]
            check(ev.get("unfused_subgraphs") == 3, f"3 unfused subgraphs ({ev.get('unfused_subgraphs')})")
            check(abs(ev.get("unfused_us_per_step", 0) - 135) < 0.01, f"135 us per step ({ev.get('unfused_us_per_step')})")
            gain = f.get("uncapped_gain_us", f.get("estimated_gain_us"))
            check(gain is not None and abs(gain - 45) < 0.01, f"gain 45 us per step ({gain})")
            patterns = ev.get("patterns", "")
            for part in ("matmul_bias", "dense/MatMul > dense/Add", "swish", "act/Sigmoid > act/Mul",
                         "cast_chain", "Cast_1 > Cast_2", "MatMulBiasAddFusionPass"):
                check(part in patterns, f"patterns name '{part}'")
        (rank / "ge_proto_00000003_graph_3_Build.txt").write_text('graph {\n  op { name: "a\n')
        done = subprocess.run([tuneprof, "info", "--json", str(rank)], capture_output=True, text=True, timeout=120)
        check(done.returncode == 0, f"a malformed dump leaves the rank readable (exit {done.returncode})")
        warned = [w for w in done.stdout.splitlines() + done.stderr.splitlines()
                  if "ge_proto_00000003_graph_3_Build.txt: line 2: a string not closed on its line" in w]
        check(len(warned) >= 1, "the malformed dump is a warning naming the file, line and cause")
        check_info(tuneprof, rank, "2 files read: 9 ops in 2 graphs; the graph-fusion check reads them; 1 unreadable")
        # Beside the rank directory (GE writes to the working directory): read by the rank, and the run
        # directory given whole still holds one rank.
        for dump in rank.glob("ge_*"):
            dump.rename(rank.parent / dump.name)
        (rank.parent / "ge_proto_00000003_graph_3_Build.txt").unlink()
        info = check_info(tuneprof, rank, "2 files read: 9 ops in 2 graphs; the graph-fusion check reads them; "
                          f"found beside the rank directory, in {rank.parent.resolve()}")
        info = run_json(tuneprof, ["info", "--json", rank.parent])
        check(info is not None and len(info["ranks"]) == 1, "the run directory with dumps beside its rank is one rank")
        f = advise_findings(tuneprof, rank.parent).get("fusion.graph_fusion")
        check(f is not None and f["evidence"].get("unfused_subgraphs") == 3, "dumps beside the rank: the finding fires")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
