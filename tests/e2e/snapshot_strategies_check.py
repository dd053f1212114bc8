#!/usr/bin/env python3
"""Strategies of `memory SNAPSHOT` and snapshots inside directories, on generated snapshots (and with
SHARED_DIR, on the shared ones).

usage: snapshot_strategies_check.py TUNEPROF [SHARED_DIR]

Without SHARED_DIR: one generated snapshot per thing that can hold memory (activations, optimizer
state, parameters, gradients, fragmentation on CUDA and on Ascend, growing never-freed blocks) must
give that strategy first with its bytes and saving; a directory holding only a snapshot reads it; one
mixing traces and a snapshot reads the traces and says so in one stderr line; several snapshots and no
traces are one error line. With SHARED_DIR: the shared snapshots' strategies follow their categories
(each category holding a tenth of the peak gets one, with its bytes, the largest holding the peak).
Standard library only.
"""
import glob
import json
import os
import pickle
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Checker  # noqa: E402

MIB = 1 << 20
FORWARD = [{"name": "forward", "filename": "/home/u/model.py", "line": 40}]
OPTIMIZER = [{"name": "step", "filename": "/home/u/optim/adam.py", "line": 77}]
BACKWARD = [{"name": "torch::autograd::Engine::thread_main", "filename": "??", "line": 0}]
INIT = [{"name": "_apply", "filename": "/venv/site-packages/torch/nn/modules/module.py", "line": 900},
        {"name": "main", "filename": "/home/u/train.py", "line": 3}]
NPU = [{"name": "forward", "filename": "/venv/site-packages/torch_npu/utils/x.py", "line": 1}]


class Trace:
    def __init__(self):
        self.events = []
        self.next_addr = 1 << 30

    def alloc(self, size, frames):
        self.next_addr += size
        self.events.append({"action": "alloc", "addr": self.next_addr, "size": size, "stream": 0,
                            "time_us": len(self.events) * 10, "frames": frames})
        return self.next_addr

    def free(self, addr, size):
        self.events.append({"action": "free_completed", "addr": addr, "size": size, "stream": 0,
                            "time_us": len(self.events) * 10, "frames": []})


def snapshot(events, segments=(), expandable=False):
    return pickle.dumps({"segments": list(segments), "device_traces": [events],
                         "allocator_settings": {"expandable_segments": expandable}}, protocol=4)


def kept_by(frames):
    """100 MiB allocated by `frames` and kept past its phase (a small forward allocation ends the phase,
    and is freed at once)."""
    t = Trace()
    t.alloc(100 * MIB, frames)
    other = OPTIMIZER if frames is FORWARD else FORWARD
    small = t.alloc(MIB, other)
    t.free(small, MIB)
    return snapshot(t.events)


def split_segment(free_frames):
    """One 100 MiB segment at the dump, half held, half free: split free bytes half the reserved."""
    return {"device": 0, "address": 0, "total_size": 100 * MIB, "allocated_size": 50 * MIB,
            "active_size": 50 * MIB, "requested_size": 50 * MIB, "stream": 0, "segment_type": "large",
            "is_expandable": False, "frames": [],
            "blocks": [{"address": 0, "size": 50 * MIB, "requested_size": 50 * MIB, "state": "active_allocated",
                        "frames": free_frames},
                       {"address": 50 * MIB, "size": 50 * MIB, "requested_size": 0, "state": "inactive",
                        "frames": []}]}


def growing_leak():
    """Three iterations each leaving 4 MiB from the same frame; the optimizer's blocks are freed."""
    t = Trace()
    leak_frames = [{"name": "train_step", "filename": "/home/u/train.py", "line": 12}]
    for _ in range(3):
        t.alloc(4 * MIB, leak_frames)
        a = t.alloc(MIB, OPTIMIZER)
        t.free(a, MIB)
    return snapshot(t.events)


CASES = {
    # name: (pickle, category first, bytes, saving, action holds)
    "activations": (kept_by(FORWARD), "activations", 100 * MIB, 50 * MIB, "checkpointing"),
    "optimizer_state": (kept_by(OPTIMIZER), "optimizer_state", 100 * MIB, 75 * MIB, "optimizer"),
    "parameters": (kept_by(INIT), "parameters", 100 * MIB, 50 * MIB, "parameters"),
    "gradients": (kept_by(BACKWARD), "gradients", 100 * MIB, 50 * MIB, "gradients"),
    "fragmentation": (snapshot([], [split_segment([])]), "fragmentation", 50 * MIB, 50 * MIB,
                      "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"),
    "fragmentation_npu": (snapshot([], [split_segment(NPU)]), "fragmentation", 50 * MIB, 50 * MIB,
                          "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True"),
    "fragmentation_expandable": (snapshot([], [split_segment([])], expandable=True), "fragmentation", 50 * MIB,
                                 50 * MIB, "garbage_collection_threshold:0.8"),
    "leak_suspects": (growing_leak(), "leak_suspects", 12 * MIB, 12 * MIB, "free or detach"),
}


def strategies_of(c, path):
    result = c.run(["memory", "--json", path])
    if result is None or result[0] != 0:
        return None
    return [s for d in json.loads(result[1])["devices"] for s in d["strategies"]]


def check_generated(c, tmp):
    for name, (data, category, size, saving, action) in CASES.items():
        path = os.path.join(tmp, name + ".pickle")
        with open(path, "wb") as f:
            f.write(data)
        got = strategies_of(c, path)
        first = got[0] if got else {}
        c.check(f"{name}: strategy {category} first, {size} bytes at stake, {saving} to save",
                first.get("category") == category and first.get("bytes") == size and first.get("saving") == saving
                and action in first.get("action", "") + first.get("why", "") and first.get("why"),
                f"got {got}")
        text = c.run(["memory", path])
        c.check(f"{name}: text names the strategy", text is not None and text[0] == 0
                and "strategies (what holds the memory" in text[1] and f"    {category}" in text[1]
                and all(len(line) <= 100 for line in text[1].split("strategies (", 1)[-1].splitlines()),
                "" if text is None else text[1][-800:])
    leak = strategies_of(c, os.path.join(tmp, "leak_suspects.pickle"))
    c.check("leak_suspects: names the frame", leak and "train_step (/home/u/train.py:12)" in leak[0]["why"], str(leak))


def check_directories(c, tmp):
    only = os.path.join(tmp, "only")
    mixed = os.path.join(tmp, "mixed")
    several = os.path.join(tmp, "several")
    for d in (only, mixed, several):
        os.makedirs(d)
    for d, names in ((only, ["snap.pickle"]), (mixed, ["snap.pickle"]), (several, ["a.pickle", "b.pkl"])):
        for n in names:
            with open(os.path.join(d, n), "wb") as f:
                f.write(CASES["activations"][0])
    with open(os.path.join(mixed, "rank0.json"), "w") as f:
        json.dump({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 5,
                                    "args": {"device": 0, "stream": 7}}]}, f)
    result = c.expect_ok("a directory holding only a snapshot reads it", ["memory", "--json", only])
    c.check("  ... as the snapshot alone", result is not None and result[0] == 0
            and json.loads(result[1]).get("path") == os.path.join(only, "snap.pickle"),
            "" if result is None else result[1][:200])
    result = c.run(["memory", mixed])
    alone = c.run(["memory", os.path.join(mixed, "rank0.json")])
    c.check("a directory mixing traces and a snapshot reads the traces, one stderr line names the snapshot",
            result is not None and alone is not None and result[0] == 0 and result[1] == alone[1]
            and len(result[2].splitlines()) == 1 and "snap.pickle" in result[2]
            and "not read with the traces" in result[2],
            "" if result is None else f"exit {result[0]}, stderr {result[2]!r}")
    c.expect_error("several snapshots and no traces", ["memory", several], 2, names=several,
                   says=("2 memory snapshots", "give one snapshot"))
    check_report(c, os.path.join(tmp, "activations.pickle"), tmp)
    check_report(c, os.path.join(tmp, "fragmentation.pickle"), tmp, traced=False)
    c.expect_error("report: a snapshot with a trace", ["report", os.path.join(only, "snap.pickle"),
                   os.path.join(mixed, "rank0.json"), "-o", os.path.join(tmp, "x.html")], 2,
                   says=("reported alone",))


def check_report(c, path, tmp, traced=True):
    """`report SNAPSHOT -o out.html`: a page per device with the stacked timeline, frames and strategies."""
    out = os.path.join(tmp, os.path.basename(path) + ".html")
    result = c.run(["report", path, "-o", out])
    page = open(out, encoding="utf-8").read() if result is not None and result[0] == 0 else ""
    name = os.path.basename(path)
    c.check(f"{name}: report draws the timeline stacked by frame", 'id="snapshot-device-0"' in page
            and 'id="chart-snapshot-timeline-0"' in page and "allocating frame at the peak" in page
            and "<script" not in page
            and (("held before the trace" in page and "reserved" in page) if traced else "unknown: no allocator" in page),
            "" if result is None else result[2][:300])


def check_shared(c, shared):
    paths = sorted(glob.glob(os.path.join(shared, "traces", "memory-snapshots", "**", "*.pickle"), recursive=True))
    c.check("shared snapshots found", len(paths) >= 3, f"{len(paths)}")
    for path in paths:
        result = c.run(["memory", "--json", path])
        if not c.check(f"{os.path.basename(path)}: read", result is not None and result[0] == 0):
            continue
        for d in json.loads(result[1])["devices"]:
            cats = d["peak"]["categories"]
            want = sorted((k for k in ("activations", "optimizer_state", "parameters", "gradients")
                           if cats[k] > 0 and cats[k] >= 0.10 * d["peak"]["allocated"]), key=lambda k: -cats[k])
            got = [s for s in d["strategies"] if s["category"] in cats]
            c.check(f"{os.path.basename(path)}: strategies follow the categories {want}",
                    [s["category"] for s in got] == want and all(s["bytes"] == cats[s["category"]] for s in got)
                    and all(0 < s["saving"] <= s["bytes"] for s in got)
                    and [s["holds_peak"] for s in got] == [i == 0 for i in range(len(got))],
                    f"got {[(s['category'], s['bytes']) for s in d['strategies']]}")
            split = d["segments"]["inactive_split_bytes"]
            frag = [s for s in d["strategies"] if s["category"] == "fragmentation"]
            c.check(f"{os.path.basename(path)}: fragmentation strategy iff split free bytes >= 5 % of reserved",
                    bool(frag) == (split > 0 and split >= 0.05 * d["reserved_at_dump"]), f"{frag} {split}")
        with tempfile.TemporaryDirectory() as tmp:
            check_report(c, path, tmp)


def main():
    c = Checker(sys.argv[1], timeout_s=60)
    if len(sys.argv) > 2:
        check_shared(c, sys.argv[2])
    else:
        with tempfile.TemporaryDirectory() as tmp:
            check_generated(c, tmp)
            check_directories(c, tmp)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
