#!/usr/bin/env python3
"""fusion.api_replacement on the shared runs. On the torch_npu runs (text level1 / level2, db level2), whose
SGD already runs _foreach_ kernels, msprof-analyze suggests torch_npu.optim.NpuFusedSGD for SGD.step: so must
`advise --json`, at the user's line `main.py(366): train` (the frame of its recorded stack), saying that the run does not record its CANN and
torch_npu versions, with the step's device time (the text export's async_npu flows, the Db export's task queue). On CPU, GPU and
Nsight Systems inputs (two of which run SGD.step, one AdamW.step) it must not fire, and no finding names a
torch_npu or MindSpeed API.

Usage: api_replacement_check.py TUNEPROF SHARED_DIR (the folder holding traces/)
"""
import os
import sys

from harness import Checker

ID = "fusion.api_replacement"
NPU_RUNS = ["text/level1", "text/level2", "db/level2"]
OTHER_INPUTS = ["kineto/hta/nccl_parser_config/nccl_data.json.gz", "torch-cpu/kineto26/cnn_train.json.gz",
                "torch-cpu/kineto26/ddp_ws2_rank0.json.gz", "nsys/h100_2gpu_1s.sqlite"]
NPU_WORDS = ("torch_npu", "NpuFused", "mindspeed", "CANN")


def advise(c, name, path):
    advice = c.run_json(f"{name}: advise runs", ["advise", "--json", path])
    return advice["findings"] if advice is not None else None


def check_npu(c, shared, run):
    path = os.path.join(shared, "traces/ascend/msinsight/test/data/pytorch", run)
    findings = advise(c, run, path)
    if findings is None:
        return
    found = [f for f in findings if f["id"] == ID]
    if not c.check(f"{run}: {ID} fires", len(found) == 1, "no finding"):
        return
    f = found[0]
    ev = f["evidence"]
    c.check(f"{run}: NpuFusedSGD for SGD.step at main.py(366): train",
            "torch_npu.optim.NpuFusedSGD for SGD.step at main.py(366): train: 1 per step" in ev.get("replacements", ""),
            ev.get("replacements"))
    c.check(f"{run}: versions unknown, said so",
            ev.get("cann_version") == "unknown (not recorded by the run)" and
            "this run does not record its versions" in " ".join(f["apis"]), f"{ev.get('cann_version')} {f['apis']}")
    c.check(f"{run}: the API is named", any(a.startswith("torch_npu.optim.NpuFusedSGD") for a in f["apis"]),
            str(f["apis"]))
    c.check(f"{run}: no fusion.optimizer_foreach beside it",
            not any(g["id"] == "fusion.optimizer_foreach" for g in findings), "both fire")
    c.check(f"{run}: the step's device time", ev.get("replaced_us_per_step", 0) > 0,
            str(ev.get("replaced_us_per_step")))


def check_msprof_sample(c, shared):
    """msprof-analyze's own timeline sample (its advisor test data) runs Adam per parameter, without
    Python frames: NpuFusedAdam, with a gain, named without a call site."""
    relative = "ascend/mstt/profiler/msprof_analyze/test/ut/advisor/advisor_backend/timeline_advice/trace_view.json"
    findings = advise(c, "msprof-analyze timeline sample", os.path.join(shared, "traces", relative))
    if findings is None:
        return
    found = [f for f in findings if f["id"] == ID]
    c.check("msprof-analyze timeline sample: NpuFusedAdam for Adam.step, gain counted",
            len(found) == 1 and "torch_npu.optim.NpuFusedAdam for Adam.step at (no Python frames)"
            in found[0]["evidence"]["replacements"] and found[0]["uncapped_gain_us"] > 0,
            str(found and found[0]["evidence"]))


def check_other(c, shared, relative):
    findings = advise(c, relative, os.path.join(shared, "traces", relative))
    if findings is None:
        return
    c.check(f"{relative}: no {ID}", not any(f["id"] == ID for f in findings), "fired")
    worded = [f["id"] for f in findings if any(w in " ".join(f["apis"]) for w in NPU_WORDS)]
    c.check(f"{relative}: no NPU API named", not worded, str(worded))


def main():
    binary, shared = sys.argv[1], sys.argv[2]
    c = Checker(binary, timeout_s=120)
    for run in NPU_RUNS:
        check_npu(c, shared, run)
    check_msprof_sample(c, shared)
    for relative in OTHER_INPUTS:
        check_other(c, shared, relative)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
