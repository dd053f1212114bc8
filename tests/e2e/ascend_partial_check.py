#!/usr/bin/python3
"""Checks torch_npu ranks as they often arrive: with summary files and no timeline.

On temporary copies of the shared torch_npu rank directories with files removed:
  - summary-only (step_trace_time.csv, communication.json, communication_matrix.json): `profile --json`
    steps equal step_trace_time.csv's Computing, Communication(Not Overlapped), Overlapped,
    Communication, Free, Stage, Bubble, Preparing (Python's csv); `analyze --json` calls a rank whose
    step is mostly exposed communication communication-bound; exit 0;
  - kernel_details-only (trace_view.json removed): the same figures, and the Ascend unit ratios present;
  - the Db export with a corrupt ascend_pytorch_profiler_0.db beside a good analysis.db: steps equal
    analysis.db's StepTraceTime (Python's sqlite3), and a warning names the damaged file;
  - a parent holding all of them and one rank with nothing usable: exit 0, one warning per damaged rank;
    a parent with no usable rank: exit 1;
  - a generated msprof-analyze cluster_analysis_output/ (cluster_step_trace_time.csv of 4 ranks, one
    listed twice for a step, plus a stage row): one rank per rank id with its step split equal to the
    CSV, the communication-bound verdict, exit 0, one warning naming the duplicate and no per-rank
    repetition of the shared "no timeline" warning.
On every shared torch_npu rank (and on the copies), work-type shares of each step sum to at most 100 %,
and no text or JSON output of info / profile / analyze / advise / comm / memory says "GPU" or "CUDA", nor
names the GPU's units (SM efficiency, tensor-core share) in place of Cube / Vector / Scalar.
Usage: ascend_partial_check.py TUNEPROF SHARED_DIR
"""
import csv
import json
import pathlib
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

from harness import fail, finish, ranks_exactly, run

COLUMNS = {  # step_trace_time.csv header -> profile --json key
    "Computing": "computing_us",
    "Communication(Not Overlapped)": "communication_not_overlapped_us",
    "Overlapped": "overlapped_us",
    "Communication": "communication_us",
    "Free": "free_us",
    "Stage": "wall_us",
    "Bubble": "bubble_us",
    "Preparing": "preparing_us",
}
DB_COLUMNS = {  # analysis.db StepTraceTime column (ns or µs, checked below) -> CSV header
    "computing": "Computing",
    "communication_not_overlapped": "Communication(Not Overlapped)",
    "overlapped": "Overlapped",
    "communication": "Communication",
    "free": "Free",
    "stage": "Stage",
    "bubble": "Bubble",
    "preparing": "Preparing",
}


def run_json(tuneprof, *args):
    """(document or None, the process): the checks read its stderr as well."""
    proc = run(tuneprof, *args, "--json")
    if proc.returncode != 0:
        fail(f"{' '.join(args)}: exit {proc.returncode}: {proc.stderr.strip()[:400]}")
        return None, proc
    return json.loads(proc.stdout), proc


def close(a, b, tolerance=0.002):
    return a is not None and abs(a - b) <= tolerance * max(1.0, abs(b))


def csv_steps(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return {int(r["Step"]): {k: float(r[k]) for k in COLUMNS if r.get(k) not in (None, "")} for r in rows if r["Step"]}


def db_steps(path):
    con = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    cols = [c[1] for c in con.execute("PRAGMA table_info(StepTraceTime)")]
    out = {}
    for row in con.execute("SELECT * FROM StepTraceTime"):
        rec = dict(zip(cols, row))
        step = rec.get("step")
        if step in (None, ""):
            continue
        # analysis.db writes µs like the CSV.
        out[int(step)] = {DB_COLUMNS[k]: float(v) for k, v in rec.items() if k in DB_COLUMNS and v is not None}
    return out


def check_steps(label, profile, expected):
    ranks = profile["ranks"]
    if len(ranks) != 1:
        fail(f"{label}: {len(ranks)} ranks")
        return
    got = {s["step"]: s for s in ranks[0]["steps"]}
    if set(got) != set(expected):
        fail(f"{label}: steps {sorted(got, key=str)} != {sorted(expected)}")
        return
    for step, figures in expected.items():
        for column, value in figures.items():
            key = COLUMNS[column]
            if not close(got[step].get(key), value):
                fail(f"{label}: step {step} {key} {got[step].get(key)} != {column} {value}")


def check_verdict(tuneprof, label, rank_dir, expected_steps):
    report, _ = run_json(tuneprof, "analyze", str(rank_dir))
    if report is None:
        return
    exposed = sum(s["Communication(Not Overlapped)"] for s in expected_steps.values())
    stage = sum(s["Stage"] for s in expected_steps.values())
    want = "communication" if exposed / stage > 0.5 else None
    if want and report["dominant_bottleneck"] != want:
        fail(f"{label}: verdict {report['dominant_bottleneck']} (exposed communication {100 * exposed / stage:.1f} %)")
    if label == "summary-only":
        # No operators: the Computing of step_trace_time.csv is unclassified, not called memory-bound.
        rank = report["ranks"][0]
        computing = sum(s["Computing"] for s in expected_steps.values()) / len(expected_steps)
        split = rank["split_us"]
        if (rank["compute_classes_known"] or abs(split["unclassified"] - computing) > 0.01
                or split["memory_bound"] != 0 or split["compute_bound"] != 0):
            fail(f"{label}: computing {rank['split_us']} unclassed {not rank['compute_classes_known']}, want {computing}")
        text = subprocess.run([tuneprof, "analyze", str(rank_dir)], capture_output=True, text=True).stdout
        if "computing (no operators to class it)" not in text or "memory-bound" in text:
            fail(f"{label}: the step table calls summary-only computing memory-bound")


def check_shares(label, profile):
    for rank in profile["ranks"]:
        for step in rank["steps"]:
            wall = step["wall_us"]
            parts = step["computing_us"] + step["communication_not_overlapped_us"] + step["free_us"]
            if rank["definitions"] == "tuneprof":
                parts += step["memcpy_us"] + step["other_us"]
            if wall > 0 and parts > wall * 1.001:
                fail(f"{label}: rank {rank['rank']} step {step['step']}: parts {parts:.1f} us > wall {wall:.1f} us")
        table = rank.get("kernel_table") or {}
        for group in table.get("by_work_type", []) or []:
            share = group.get("share_of_step")
            if share is not None and share > 1.0001:
                fail(f"{label}: rank {rank['rank']}: work type {group.get('work_type')} share {share}")


def check_words(tuneprof, label, path):
    for command in ("info", "profile", "analyze", "advise", "comm", "memory"):
        for extra in ([], ["--json"]):
            proc = run(tuneprof, command, str(path), *extra)
            text = proc.stdout + proc.stderr
            for word in ("GPU", "CUDA", "SM eff", "TC share", "tensor-core"):
                if re.search(rf"\b{word}", text):
                    line = next(l for l in text.splitlines() if re.search(rf"\b{word}", l))
                    fail(f"{label}: {command} {' '.join(extra)} says {word}: {line.strip()[:200]}")


def make_rank(tmp, name, source, keep=None, drop=()):
    dest = tmp / name
    shutil.copytree(source, dest)
    out = dest / "ASCEND_PROFILER_OUTPUT"
    for f in list(out.iterdir()):
        if (keep is not None and f.name not in keep) or f.name in drop:
            f.unlink()
    return dest


CLUSTER_HEADER = ("Step,Type,Index,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,"
                  "Bubble,Communication(Not Overlapped and Exclude Receive)")


def check_cluster(tuneprof, tmp):
    out = tmp / "cluster_analysis_output"
    out.mkdir()
    rows = {  # rank -> (Computing, Communication(Not Overlapped), Overlapped, Free), µs
        0: (80309.687, 683731.289, 5524.544, 990605.104),
        1: (80435.746, 1133385.977, 76.479, 488610.058),
        2: (80335.817, 1130279.232, 2056.839, 510332.117),
        3: (80077.269, 1065574.66, 1775.38, 566552.52),
    }
    lines = [CLUSTER_HEADER]
    for rank, (computing, exposed, overlapped, free) in rows.items():
        stage = computing + exposed + free
        lines.append(f",rank,{rank},{computing},{exposed},{overlapped},{exposed + overlapped},{free},{stage},0,{exposed}")
    lines.append(lines[-1])  # rank 3 listed twice
    lines.append(",stage,\"(0, 1, 2, 3)\",1,1,1,1,1,1,0,1")
    (out / "cluster_step_trace_time.csv").write_text("\n".join(lines) + "\n")
    profile, proc = run_json(tuneprof, "profile", str(out))
    ranks = ranks_exactly(profile, rows, "cluster")
    if ranks is None:
        return
    for rank, (computing, exposed, overlapped, free) in rows.items():
        steps = ranks[rank]["steps"]
        got = steps[0] if steps else {}
        for key, want in (("computing_us", computing), ("communication_not_overlapped_us", exposed),
                          ("overlapped_us", overlapped), ("free_us", free)):
            if not close(got.get(key), want):
                fail(f"cluster: rank {rank} {key} {got.get(key)} != {want}")
    if "rank 3 is listed more than once" not in proc.stderr:
        fail(f"cluster: no warning about the duplicate rank: {proc.stderr.strip()[:400]}")
    if proc.stderr.count("no device timeline") > 1:
        fail(f"cluster: the shared no-timeline warning repeated per rank: {proc.stderr.strip()[:600]}")
    report, _ = run_json(tuneprof, "analyze", str(out))
    if report and report["dominant_bottleneck"] != "communication":
        fail(f"cluster: verdict {report['dominant_bottleneck']}, communication expected (most ranks > 60 % exposed)")
    check_words(tuneprof, "cluster", out)


def main():
    tuneprof, shared = sys.argv[1], pathlib.Path(sys.argv[2])
    base = shared / "traces/ascend/msinsight/test/data/pytorch"
    text_rank = base / "text/level1/rank0_ascend_pt"
    db_rank = base / "db/level1/rank0_ascend_pt"
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = pathlib.Path(tmp_name)
        parent = tmp / "job"
        parent.mkdir()
        expected = csv_steps(text_rank / "ASCEND_PROFILER_OUTPUT/step_trace_time.csv")

        summary = make_rank(parent, "summary_ascend_pt", text_rank,
                            keep={"step_trace_time.csv", "communication.json", "communication_matrix.json"})
        shutil.copy(db_rank / "ASCEND_PROFILER_OUTPUT/analysis.db", summary / "ASCEND_PROFILER_OUTPUT/analysis.db")
        profile, _ = run_json(tuneprof, "profile", str(summary))
        if profile:
            check_steps("summary-only", profile, expected)
        check_verdict(tuneprof, "summary-only", summary, expected)
        comm, _ = run_json(tuneprof, "comm", str(summary))
        if comm is None:
            fail("summary-only: comm gave nothing")

        kernels = make_rank(parent, "kernels_ascend_pt", text_rank, drop={"trace_view.json"})
        profile, _ = run_json(tuneprof, "profile", str(kernels))
        if profile:
            check_steps("kernel_details-only", profile, expected)
            compute = profile["ranks"][0]["compute"]
            if compute.get("cube_ratio") is None and compute.get("vector_ratio") is None:
                fail("kernel_details-only: no unit ratios")
        check_verdict(tuneprof, "kernel_details-only", kernels, expected)

        corrupt = make_rank(parent, "corrupt_ascend_pt", db_rank)
        out = corrupt / "ASCEND_PROFILER_OUTPUT"
        for db in out.glob("ascend_pytorch_profiler*.db"):
            db.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4096)
        db_expected = db_steps(out / "analysis.db")
        profile, proc = run_json(tuneprof, "profile", str(corrupt))
        if profile:
            check_steps("corrupt db", profile, db_expected)
        if "ascend_pytorch_profiler" not in proc.stderr:
            fail("corrupt db: no warning names the damaged database")

        broken = parent / "broken_ascend_pt"
        (broken / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
        proc = run(tuneprof, "profile", str(parent), "--json")
        if proc.returncode != 0:
            fail(f"parent: exit {proc.returncode}: {proc.stderr.strip()[:400]}")
        else:
            ranks = json.loads(proc.stdout)["ranks"]
            if len(ranks) != 3:
                fail(f"parent: {len(ranks)} ranks analysed, 3 expected")
            if "broken_ascend_pt" not in proc.stderr:
                fail("parent: no warning for the rank without usable files")
        nothing = tmp / "nothing"
        nothing.mkdir()
        shutil.copytree(broken, nothing / "broken_ascend_pt")
        proc = run(tuneprof, "profile", str(nothing))
        if proc.returncode != 1:
            fail(f"parent of unusable ranks: exit {proc.returncode}, 1 expected")

        for rank in (summary, kernels, corrupt):
            check_words(tuneprof, rank.name, rank)
        check_cluster(tuneprof, tmp)
        for rank in sorted(base.glob("*/*/rank*_ascend_pt")):
            profile, _ = run_json(tuneprof, "profile", str(rank))
            if profile:
                check_shares(str(rank.relative_to(base)), profile)
            check_words(tuneprof, str(rank.relative_to(base)), rank)

    return finish("ok")


if __name__ == "__main__":
    sys.exit(main())
