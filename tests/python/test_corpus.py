"""The Python module on every input kind of the shared real-trace corpus: each document equals the CLI's
--json for the same paths, and the tables agree with an independent parse (json / sqlite3) of the files."""

import gzip
import json
import sqlite3

import pytest

import tuneprof
from conftest import hta_time, number

INPUTS = {
    "kineto_gpu_2_ranks": ["kineto/hta/trace_filter/sampled_rank-0.json.gz", "kineto/hta/trace_filter/sampled_rank-1.json.gz"],
    "kineto_cpu_ddp": ["torch-cpu/kineto26/ddp_ws2_rank0.json.gz", "torch-cpu/kineto26/ddp_ws2_rank1.json.gz"],
    "torch_npu_text": ["ascend/msinsight/test/data/pytorch/text/level2"],
    "torch_npu_db": ["ascend/msinsight/test/data/pytorch/db/level2"],
    "nsys": ["nsys/h100_2gpu_1s.sqlite"],
}


@pytest.fixture(scope="module", params=sorted(INPUTS))
def case(request, shared):
    paths = [str(shared / p) for p in INPUTS[request.param]]
    return paths, tuneprof.load(paths)


@pytest.mark.parametrize("command", ["analyze", "advise", "profile", "memory", "comm"])
def test_documents_equal_the_cli(case, cli_json, command):
    paths, run = case
    assert getattr(run, command)() == cli_json(command, "--json", *paths)


def test_tables_hold_every_rank(case, cli_json):
    paths, run = case
    ranks = run.ranks.to_pandas()
    info = cli_json("analyze", "--json", *paths)
    assert sorted(ranks["rank"]) == sorted(r["rank"] for r in info["ranks"])
    steps = run.steps.to_pandas()
    # The parts add up to the step, by the definitions each row names.
    parts = steps.computing_ns + steps.exposed_communication_ns + steps.free_ns
    own = steps.definitions.astype(str) == "tuneprof"
    parts[own] += steps.memcpy_ns[own] + steps.other_ns[own]
    assert (parts == steps.wall_ns).all(), steps[parts != steps.wall_ns]
    profile = run.profile()
    assert len(steps) == sum(len(r["steps"]) for r in profile["ranks"])
    collectives = run.collectives.to_pandas()
    comm = run.comm()
    for r in comm["ranks"]:
        assert (collectives["rank"] == r["rank"]).sum() == sum(t["count"] for t in r["by_type"])
    utilizations = run.utilizations.to_pandas()
    assert len(utilizations) == sum(len(r["utilizations"]) for r in info["ranks"])


def test_kineto_events_match_an_independent_parse(shared):
    path = shared / INPUTS["kineto_gpu_2_ranks"][0]
    with gzip.open(path, "rt") as f:
        raw = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    frame = tuneprof.load(str(path)).events.to_pandas()
    assert len(frame) == len(raw)
    ours = sorted(zip(frame.ts, frame.dur, frame.name.astype(str), frame.cat.astype(str), frame.pid, frame.tid,
                      frame.correlation))
    theirs = sorted((*hta_time(raw, e), e["name"], e.get("cat", ""), number(e["pid"]), number(e["tid"]),
                     int(e.get("args", {}).get("correlation", -1))) for e in raw)
    assert ours == theirs


def test_nsys_kernels_match_sqlite(shared):
    path = shared / INPUTS["nsys"][0]
    with sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True) as con:
        expected = sorted(r[0] - r[1] for r in con.execute("SELECT end, start FROM CUPTI_ACTIVITY_KIND_KERNEL"))
        grids = sorted(r for r in con.execute("SELECT gridX, gridY, gridZ FROM CUPTI_ACTIVITY_KIND_KERNEL"))
    kernels = tuneprof.load(str(path)).kernels.to_pandas()
    assert sorted(kernels.dur_ns) == expected
    assert sorted(zip(kernels.grid_x, kernels.grid_y, kernels.grid_z)) == grids


def test_sqlite_export_of_a_cluster_run(case, tmp_path):
    paths, run = case
    db = tmp_path / "run.db"
    run.to_sqlite(db)
    advise = run.advise()
    with sqlite3.connect(db) as con:
        ids = [r[0] for r in con.execute('SELECT id FROM findings ORDER BY "order"')]
        assert ids == [f["id"] for f in advise["findings"]]
        for rank in advise["ranks"]:
            for u in rank["utilizations"]:
                row = con.execute("SELECT value_pct, source FROM utilizations WHERE rank = ? AND name = ?",
                                  (rank["rank"], u["name"])).fetchone()
                assert row is not None
                assert row[1] == (u["source"] or "")
                if u["value_pct"] is None:
                    assert row[0] is None
                else:
                    assert row[0] == pytest.approx(u["value_pct"], abs=0.05)


def test_modules_equal_the_cli(shared, cli_json):
    """run.modules: every rank's modules of `profile --by module --json`, each with its rank."""
    path = str(shared / "kineto/tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz")
    run = tuneprof.load(path)
    document = cli_json("profile", "--by", "module", "--json", path)
    assert run.profile(by="module") == document
    expected = [{"rank": r["rank"], **m} for r in document["ranks"] for m in r["modules"]]
    assert run.modules == expected
    assert len(expected) == 316
    assert any(m["layer_path"] == "Qwen2Model_0.Qwen2DecoderLayer_*" for m in run.modules)
