#!/usr/bin/env python3
"""`tuneprof memory` by category on a Kineto trace recorded with profile_memory: a trace generated here,
whose every block has a known category by the rules of src/analysis/memory/kineto_categories.h
(parameters before the first step, forward blocks freed in backward, backward blocks passed between
nodes or kept as gradients, optimizer state, temporaries within one op or one optimizer step, bytes held
before the trace), gives those categories at the peak and at every timeline point, summing to the total;
the strategies follow the category that holds the peak; the text prints the by-category table.

usage: memory_categories_check.py TUNEPROF
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Checker  # noqa: E402

NAMES = ["parameters", "optimizer_state", "inputs", "temporaries", "activations", "gradients",
         "autograd_detail", "unknown"]
PRE = 100  # bytes held before the trace began, freed at its end

# (name, category, ts, dur) of host ranges
RANGES = [
    ("ProfilerStep#1", "user_annotation", 1000, 9000),
    ("aten::linear", "cpu_op", 1100, 100),
    ("autograd::engine::evaluate_function: MmBackward0", "cpu_op", 2000, 200),
    ("autograd::engine::evaluate_function: TBackward0", "cpu_op", 2240, 60),
    ("Optimizer.step#AdamW.step", "user_annotation", 3000, 400),
    ("aten::zeros_like", "cpu_op", 3010, 40),
    ("aten::add", "cpu_op", 3100, 100),
]
# (address, bytes, alloc ts, free ts or None, expected category)
BLOCKS = [
    (0x1000, 400000, 100, None, "parameters"),        # before the first step, never freed
    (0x2000, 100000, 1150, 2150, "activations"),      # forward, freed by a backward op
    (0x3000, 5000, 1160, 1190, "temporaries"),        # within aten::linear
    (0x4000, 30000, 2050, 3500, "gradients"),         # backward, outlives the backward ops
    (0x5000, 20000, 2060, 2250, "autograd_detail"),   # backward, freed by the next backward op
    (0x6000, 80000, 3020, None, "optimizer_state"),   # optimizer step, kept
    (0x7000, 10000, 3150, 3300, "temporaries"),       # optimizer step, freed within it
]


def generate(path):
    events = [{"ph": "X", "cat": cat, "name": name, "pid": 7, "tid": 7, "ts": ts, "dur": dur, "args": {}}
              for name, cat, ts, dur in RANGES]
    changes = []  # (ts, address, delta)
    for address, size, alloc, free, _ in BLOCKS:
        changes.append((alloc, address, size))
        if free is not None:
            changes.append((free, address, -size))
    changes.append((3600, 0x9000, -PRE))  # a block allocated before the trace
    changes.sort()
    total = PRE
    for ts, address, delta in changes:
        total += delta
        events.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 7, "tid": 7,
                       "ts": ts, "args": {"Total Reserved": 0, "Total Allocated": total, "Bytes": delta,
                                          "Addr": address, "Device Id": -1, "Device Type": 0}})
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": events}, f)
    return changes


def expected_points(changes):
    """Bytes per category after each change, from the known categories; unknown is what was held before."""
    category = {b[0]: b[4] for b in BLOCKS}
    held = dict.fromkeys(NAMES, 0)
    held["unknown"] = PRE
    points = []
    for ts, address, delta in changes:
        held[category.get(address, "unknown")] += delta
        points.append((ts, [held[n] for n in NAMES]))
    return points


def main():
    c = Checker(sys.argv[1], timeout_s=20)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        points = expected_points(generate(path))
        result = c.expect_ok("memory --json on the generated trace", ["memory", "--json", path])
        if not result or result[0] != 0:
            return c.finish()
        device = json.loads(result[1])["ranks"][0]["devices"][0]
        cats = device.get("categories")
        c.check("the device has categories", isinstance(cats, dict), str(cats)[:200])
        if not isinstance(cats, dict):
            return c.finish()
        peak_ts, peak = max(points, key=lambda p: sum(p[1]))
        c.check("peak as generated", device["peak_allocated_bytes"] == sum(peak), str(device["peak_allocated_bytes"]))
        c.check("categories at the peak as generated", [cats["at_peak"][n] for n in NAMES] == peak,
                f"{cats['at_peak']} vs {peak}")
        c.check("a timeline point per event", len(cats["timeline"]) == len(device["timeline"]) == len(points),
                f"{len(cats['timeline'])} / {len(device['timeline'])} / {len(points)}")
        for i, (point, row) in enumerate(zip(device["timeline"], cats["timeline"])):
            c.check(f"point {i}: categories sum to the total", sum(row) == point[1], f"{row} vs {point}")
            c.check(f"point {i}: categories as generated", row == points[i][1], f"{row} vs {points[i][1]}")
        seen = {n for _, row in points for n, b in zip(NAMES, row) if b}
        c.check("every category the rules give appears", seen >= {"parameters", "optimizer_state", "temporaries",
                                                                    "activations", "gradients", "autograd_detail"},
                str(seen))
        strategies = cats["strategies"]
        c.check("strategies follow the category holding the peak (parameters)",
                strategies and strategies[0]["category"] == "parameters" and strategies[0]["holds_peak"],
                str(strategies)[:300])
        result = c.expect_ok("memory text", ["memory", path])
        if result and result[0] == 0:
            c.check("text has the by-category table at the peak",
                    "at the peak by category" in result[1] and "activations" in result[1]
                    and "strategies" in result[1], result[1][:600])
        # Hostile byte counts: sums past 2^63 neither crash nor hang, and the categories still sum to the total.
        hostile = os.path.join(tmp, "hostile.json")
        big = (1 << 62) + 7
        events = [{"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: X", "pid": 1, "tid": 1,
                   "ts": 0, "dur": 100, "args": {}}]
        for i in range(4):
            events.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1,
                           "ts": 10 + i, "args": {"Total Allocated": (1 << 63) - 1, "Bytes": big, "Addr": 4096 * (i + 1),
                                                  "Device Id": 0, "Device Type": 1}})
        with open(hostile, "w") as f:
            json.dump({"traceEvents": events}, f)
        result = c.run(["memory", "--json", hostile])
        c.check("hostile byte counts: exit 0 or one error line", result is not None and (
            result[0] == 0 or (result[0] == 1 and result[2].count("\n") == 1)), str(result)[:300])
        if result and result[0] == 0:
            device = json.loads(result[1])["ranks"][0]["devices"][0]
            rows = device["categories"]["timeline"]
            c.check("hostile byte counts: categories sum to the total modulo 2^64",
                    all((sum(r) - p[1]) % (1 << 64) == 0 for r, p in zip(rows, device["timeline"])), str(rows[:2]))
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
