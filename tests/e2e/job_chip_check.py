"""The ranks of one job share the chip some of them identify: a torch_npu rank whose kernel_details.csv
has no AI Vector operators (nothing to infer the chip from) takes its job's other rank's Ascend 910B, says
whose evidence decided, and every command measures it against that chip; ranks of different jobs, and
--hardware, are left alone.

Inputs: copies of the shared 2-rank torch_npu run test_data/test_rank_{0,1} in a temporary directory, as
one job (one directory) and as two. Python reads kernel_details.csv to check the premise: rank 0 lists
operators on AI Vector cores, rank 1 none.

Usage: job_chip_check.py TUNEPROF SHARED_DIR
"""
import csv
import os
import shutil
import sys
import tempfile

from harness import check, failures, run_json

RUN = "traces/ascend/msinsight/server/src/test/test_data"
VECTOR_CORES = {"AI_VECTOR_CORE", "MIX_AIV", "MIX_AIC"}
FAMILY = "Ascend 910B (variant unknown)"


def vector_core_ops(rank_dir):
    with open(os.path.join(rank_dir, "ASCEND_PROFILER_OUTPUT", "kernel_details.csv"), newline="") as f:
        return sum(1 for row in csv.DictReader(f) if row["Accelerator Core"] in VECTOR_CORES)


def chips(binary, *paths, extra=()):
    doc = run_json(binary, ["profile", "--json", *extra, *paths], 120)
    if doc is None:
        return {}
    return {r["rank"]: (r["compute"]["hardware"], r["compute"]["hardware_source"]) for r in doc["ranks"]}


def check_one_job(binary, job):
    ranks = [os.path.join(job, "test_rank_0"), os.path.join(job, "test_rank_1")]
    got = chips(binary, *ranks)
    check(got.get(0, (None,))[0] == FAMILY, f"one job: rank 0 identifies {FAMILY}: {got.get(0)}")
    check(got.get(1, (None,))[0] == FAMILY, f"one job: rank 1 shares it: {got.get(1)}")
    check("rank 0's, of the same job" in (got.get(1, ("", ""))[1] or ""), "rank 1 says rank 0's evidence decided")
    # Every command measures rank 1 against the shared chip: comm's HCCS peak, analyze's link utilization.
    comm = run_json(binary, ["comm", "--json", *ranks], 120)
    if comm is not None:
        rank1 = [r for r in comm["ranks"] if r["rank"] == 1][0]
        hccs = [t for t in rank1["ascend"]["transports"] if t["transport"] == "HCCS"]
        check(bool(hccs) and hccs[0]["utilization"] is not None, "comm: rank 1's HCCS utilization is of the chip's peak")
    analyze = run_json(binary, ["analyze", "--json", *ranks], 120)
    if analyze is not None:
        rank1 = [r for r in analyze["ranks"] if r["rank"] == 1][0]
        link = [u for u in rank1["utilizations"] if u["name"] == "communication_bandwidth"][0]
        check(link["value_pct"] is not None, "analyze: rank 1's link utilization is measured against the chip")
    forced = chips(binary, *ranks, extra=("--hardware", "Ascend 910B2"))
    check(all(h == "Ascend 910B2" for h, _ in forced.values()) and len(forced) == 2, f"--hardware wins: {forced}")


def check_two_jobs(binary, first, second):
    got = chips(binary, os.path.join(first, "test_rank_0"), os.path.join(second, "test_rank_1"))
    check(got.get(0, (None,))[0] == FAMILY, "two jobs: rank 0 identifies its chip")
    check(1 in got and got[1][0] is None, f"two jobs: rank 1 of another job keeps its own (none): {got.get(1)}")


def main():
    binary, shared = sys.argv[1], sys.argv[2]
    source = os.path.join(shared, RUN)
    check(vector_core_ops(os.path.join(source, "test_rank_0")) > 0, "premise: rank 0 lists AI Vector operators")
    check(vector_core_ops(os.path.join(source, "test_rank_1")) == 0, "premise: rank 1 lists none")
    with tempfile.TemporaryDirectory() as tmp:
        job = os.path.join(tmp, "job")
        for rank in ("test_rank_0", "test_rank_1"):
            shutil.copytree(os.path.join(source, rank), os.path.join(job, rank))
        check_one_job(binary, job)
        first, second = os.path.join(tmp, "a"), os.path.join(tmp, "b")
        shutil.copytree(os.path.join(source, "test_rank_0"), os.path.join(first, "test_rank_0"))
        shutil.copytree(os.path.join(source, "test_rank_1"), os.path.join(second, "test_rank_1"))
        check_two_jobs(binary, first, second)
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
