#!/usr/bin/env python3
"""`tuneprof memory` on the file torch's export_memory_timeline writes: the shared raw file's peak, its
time and the bytes of every category at it (and at the end) equal an independent reading done here the
way torch and HTA coalesce the events; generated files in both forms (raw events, plot points) give their
known values; odd variants are refused with one line; a Kineto trace is still read as a trace.

Also the categories of the shared CPU training traces' [memory] blocks: at the peak and at every timeline
point equal to the rules of src/analysis/memory/kineto_categories.h applied here independently, and
plausible (gradients of the model's size with set_to_none, activations holding the peak).

usage: memory_timeline_check.py TUNEPROF SHARED
"""
import bisect
import decimal
import gzip
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Checker  # noqa: E402

NAMES = ["parameters", "optimizer_state", "inputs", "temporaries", "activations", "gradients",
         "autograd_detail", "unknown"]


def independent_reading(events):
    """Points where the time changes; -1 (before profiling) placed at the first real time; the peak is
    the first point with the largest total."""
    times, sizes = [], []
    for t, _action, numbytes, category in events:
        if not times or t != times[-1]:
            times.append(t)
            sizes.append(list(sizes[-1]) if sizes else [0] * 8)
        sizes[-1][category] += numbytes
    first_real = next((t for t in times if t != -1), 0)
    times = [first_real if t == -1 else t for t in times]
    peak = max(range(len(times)), key=lambda i: (sum(sizes[i]), -i))
    return {"points": len(times), "peak": sum(sizes[peak]), "peak_ns": times[peak],
            "at_peak": dict(zip(NAMES, sizes[peak])), "at_end": dict(zip(NAMES, sizes[-1])),
            "largest": {n: max(s[i] for s in sizes) for i, n in enumerate(NAMES)},
            "preexisting": sum(e[2] for e in events if e[0] == -1)}


def check_document(c, label, doc, expected):
    c.check(f"{label}: schema", doc.get("schema") == "tuneprof.memory_timeline/1", str(doc.get("schema")))
    c.check(f"{label}: points", doc["points"] == expected["points"], f"{doc['points']} vs {expected['points']}")
    c.check(f"{label}: peak bytes", doc["peak"]["bytes"] == expected["peak"], f"{doc['peak']} vs {expected['peak']}")
    c.check(f"{label}: peak time", doc["peak"]["time_ns"] == expected["peak_ns"],
            f"{doc['peak']['time_ns']} vs {expected['peak_ns']}")
    c.check(f"{label}: categories at the peak", doc["peak"]["categories"] == expected["at_peak"],
            f"{doc['peak']['categories']} vs {expected['at_peak']}")
    c.check(f"{label}: categories at the end", doc["at_end"] == expected["at_end"], str(doc["at_end"]))
    c.check(f"{label}: each category's largest", doc["largest"] == expected["largest"], str(doc["largest"]))
    c.check(f"{label}: held before profiling", doc["preexisting_bytes"] == expected["preexisting"],
            f"{doc['preexisting_bytes']} vs {expected['preexisting']}")
    c.check(f"{label}: categories sum to the total at every timeline point",
            all(sum(p["categories"].values()) == p["total"] for p in doc["timeline"]), "")
    c.check(f"{label}: the peak is a timeline point",
            any(p["time_ns"] == expected["peak_ns"] and p["total"] == expected["peak"] for p in doc["timeline"]), "")


def run_json(c, label, path):
    """`memory --json PATH` through the Checker, reported as the check `label`."""
    result = c.expect_ok(label, ["memory", "--json", path])
    return json.loads(result[1]) if result and result[0] == 0 else None


def check_corpus(c, shared):
    path = os.path.join(shared, "traces", "kineto", "hta", "memory_analysis", "memory_timeline.raw.gz")
    with gzip.open(path) as f:
        events = json.load(f)
    doc = run_json(c, "shared raw timeline", path)
    if doc:
        expected = independent_reading(events)
        check_document(c, "shared raw timeline", doc, expected)
        c.check("shared raw timeline: activations hold the peak and lead the strategies",
                doc["strategies"] and doc["strategies"][0]["category"] == "activations"
                and doc["strategies"][0]["holds_peak"], str(doc["strategies"][:1]))
    result = c.expect_ok("shared raw timeline as text", ["memory", path], says=[])
    if result and result[0] == 0:
        c.check("text names the peak's categories", "activations" in result[1] and "at the peak by category" in result[1],
                result[1][:400])
    c.expect_error("profile points at tuneprof memory", ["profile", path], 1, names=path, says=["tuneprof memory"])
    c.expect_error("read alone", ["memory", path, path], 2, names=path, says=["read alone"])


def generated(tmp, c):
    raw = [[-1, 1, 1000, 0], [-1, 1, 200, 1], [10, 2, 5000, 4], [10, 2, 64, 3], [20, 4, -64, 3],
           [30, 3, -5000, 4], [30, 3, 5000, 5], [40, 4, -5000, 5]]
    path = os.path.join(tmp, "timeline.raw.json.gz")
    with gzip.open(path, "wt") as f:
        json.dump(raw, f)
    doc = run_json(c, "generated raw events", path)
    if doc:
        check_document(c, "generated raw events", doc, independent_reading(raw))
        c.check("generated raw: peak 6264 at 10 ns", doc["peak"]["bytes"] == 6264 and doc["peak"]["time_ns"] == 10,
                str(doc["peak"]))
    # The plot points torch writes for a .json path: µs times, rows of a zero baseline and 8 categories.
    times = [5, 6, 7]
    sizes = [[0, 1000, 200, 0, 0, 0, 0, 0, 0], [0, 1000, 200, 0, 64, 5000, 0, 0, 0], [0, 1000, 200, 0, 0, 0, 5000, 0, 0]]
    path = os.path.join(tmp, "timeline.json")
    with open(path, "w") as f:
        json.dump([times, sizes], f)
    doc = run_json(c, "generated plot points", path)
    if doc:
        c.check("plot points: peak at the second point, in ns",
                doc["peak"]["bytes"] == 6264 and doc["peak"]["time_ns"] == 6000 and doc["form"] == "plot_points",
                str(doc["peak"]))
        c.check("plot points: activations at the peak", doc["peak"]["categories"]["activations"] == 5000,
                str(doc["peak"]["categories"]))
    # A Kineto trace beside it is not taken for a timeline.
    trace = os.path.join(tmp, "trace.json")
    with open(trace, "w") as f:
        json.dump({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1,
                                    "ts": 1, "dur": 2}]}, f)
    doc = run_json(c, "a Kineto trace stays a trace", trace)
    if doc:
        c.check("a Kineto trace gives the memory document", doc.get("schema") == "tuneprof.memory/1", str(doc)[:200])


def odd(tmp, c):
    variants = {
        "category_8": ("[[-1, 1, 512, 8]]", "category 8"),
        "action_9": ("[[-1, 9, 512, 7]]", "action 9"),
        "short_row": ("[[-1, 1, 512]]", "not [time, action, bytes, category]"),
        "float_bytes": ("[[-1, 1, 1.5, 7]]", "not an integer"),
        "time_back": ("[[10, 2, 5, 7], [5, 4, -5, 7]]", "goes back"),
        "negative": ("[[10, 4, -5, 7]]", "falls below zero"),
        "huge": ("[[1, 2, 72057594037927937, 0]]", "out of range"),
        "truncated": ("[[1, 2, 5, 0], [2, 2,", "not valid JSON"),
        "rows_mismatch": ("[[1, 2], [[0, 1, 2, 3, 4, 5, 6, 7, 8]]]", "2 times but 1 rows"),
        "bad_baseline": ("[[1], [[3, 1, 2, 3, 4, 5, 6, 7, 8]]]", "baseline"),
        "overflow_time": ("[[99999999999999999999, 1, 5, 0]]", "not valid JSON"),
    }
    for name, (text, says) in variants.items():
        path = os.path.join(tmp, name + ".json")
        with open(path, "w") as f:
            f.write(text)
        c.expect_error(f"odd timeline {name}", ["memory", path], 1, names=path, says=[says])


def ns(value):
    return int(decimal.Decimal(value) * 1000)


def kineto_categories(path):
    """Per [memory] event with a total: (ts_us text, total, bytes per category), by the documented rules."""
    with gzip.open(path) as f:
        events = json.load(f, parse_float=decimal.Decimal)["traceEvents"]
    spans = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation") and e.get("dur", -1) >= 0:
            spans.setdefault((e["pid"], e["tid"]), []).append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["cat"], e["name"]))
    tracks = {}
    for key, items in spans.items():
        ops = sorted((s, -e) for s, e, cat, _ in items if cat == "cpu_op")
        top, reach = [], None  # outermost ops: those no earlier op still covers
        for s, neg_e in ops:
            if reach is None or s > reach:
                top.append((s, -neg_e))
                reach = -neg_e
            else:
                reach = max(reach, -neg_e)
        backward = [(s, e) for s, e, cat, n in items if cat == "cpu_op" and n.startswith("autograd::engine::evaluate_function:")]
        optimizer = [(s, e) for s, e, cat, n in items if cat == "user_annotation" and n.startswith("Optimizer.step#")]
        tracks[key] = (top, backward, optimizer)

    def context(key, t):
        top, backward, optimizer = tracks.get(key, ([], [], []))
        i = bisect.bisect_right(top, (t, float("inf"))) - 1
        outer_end = top[i][1] if i >= 0 and top[i][1] >= t else None
        # An op reaching past the outermost one that started first still encloses: take the latest end.
        covering = [e for s, e in top if s <= t <= e]
        if covering:
            outer_end = covering[0]
        opt = [e for s, e in optimizer if s <= t <= e]
        if opt:
            return "optimizer", opt[0], outer_end
        if any(s <= t <= e for s, e in backward):
            return "backward", None, outer_end
        return "other", None, outer_end

    steps = sorted(ns(e["ts"]) for e in events if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#"))
    first_step = steps[0] if steps else None
    memory = [e for e in events if e.get("name") == "[memory]"]
    memory.sort(key=lambda e: ns(e["ts"]))
    blocks, open_blocks, ops_at = [], {}, []
    for i, e in enumerate(memory):
        a = e["args"]
        t, key = ns(e["ts"]), (e["pid"], e["tid"])
        if a["Bytes"] > 0:
            open_blocks[a["Addr"]] = len(blocks)
            blocks.append({"bytes": a["Bytes"], "alloc": i, "alloc_t": t, "ctx": context(key, t), "free": None})
        elif a["Bytes"] < 0 and a["Addr"] in open_blocks:
            b = blocks[open_blocks.pop(a["Addr"])]
            b["free"], b["free_t"], b["free_ctx"] = i, t, context(key, t)
    for b in blocks:
        phase, phase_end, outer_end = b["ctx"]
        freed = b["free"] is not None
        if freed and outer_end is not None and b["free_t"] <= outer_end:
            b["cat"] = "temporaries"
        elif phase == "optimizer":
            b["cat"] = "temporaries" if freed and b["free_t"] <= phase_end else "optimizer_state"
        elif phase == "backward":
            b["cat"] = "autograd_detail" if freed and b["free_ctx"][0] == "backward" else "gradients"
        elif freed and b["free_ctx"][0] == "backward":
            b["cat"] = "activations"
        elif not freed and first_step is not None and b["alloc_t"] < first_step:
            b["cat"] = "parameters"
        else:
            b["cat"] = "unknown"
    at = {}
    for b in blocks:
        at.setdefault(b["alloc"], []).append((b["cat"], b["bytes"]))
        if b["free"] is not None:
            at.setdefault(b["free"], []).append((b["cat"], -b["bytes"]))
    live = dict.fromkeys(NAMES, 0)
    out = []
    for i, e in enumerate(memory):
        for cat, delta in at.get(i, []):
            live[cat] += delta
        total = e["args"].get("Total Allocated")
        if total is None:
            continue
        row = [live[n] for n in NAMES]
        row[-1] += total - sum(row)
        out.append((ns(e["ts"]), total, row))
    return out


def check_kineto_corpus(c, shared):
    for name in ("gpt_train_after", "cnn_train"):
        path = os.path.join(shared, "traces", "torch-cpu", "kineto26", name + ".json.gz")
        doc = run_json(c, f"{name}: memory --json", path)
        if not doc:
            continue
        device = doc["ranks"][0]["devices"][0]
        cats = device["categories"]
        expected = kineto_categories(path)
        peak = next(p for p in expected if p[1] == max(q[1] for q in expected))
        c.check(f"{name}: categories at the peak as the rules give them",
                [cats["at_peak"][n] for n in NAMES] == peak[2], f"{cats['at_peak']} vs {peak[2]}")
        # tuneprof moves the trace onto its own clock: the peak's two times give the offset.
        offset = device["peak_time_ns"] - peak[0]
        # Timeline times are µs in a double (about 0.25 µs apart at this clock): matched within 1 µs.
        points = {}
        for ts, total, row in expected:
            points.setdefault((total, tuple(row)), []).append((ts + offset) / 1000)
        missing = [(p, r) for p, r in zip(device["timeline"], cats["timeline"])
                   if not any(abs(t - p[0]) <= 1 for t in points.get((p[1], tuple(r)), []))]
        c.check(f"{name}: every timeline point's categories as the rules give them", not missing, str(missing[:2]))
        c.check(f"{name}: activations hold the peak", cats["strategies"] and cats["strategies"][0]["category"] == "activations",
                str(cats["strategies"][:1]))
    # set_to_none frees the gradients at zero_grad and backward makes them again each step: the largest
    # gradient bytes are the model's fp32 parameters (GPT 4 layers, d 256, vocab 1024, seq 128: 3.7-3.9 M).
    path = os.path.join(shared, "traces", "torch-cpu", "kineto26", "gpt_train_after.json.gz")
    doc = run_json(c, "gpt_train_after: gradients", path)
    if doc:
        rows = doc["ranks"][0]["devices"][0]["categories"]["timeline"]
        grads = max(r[NAMES.index("gradients")] for r in rows)
        c.check("gpt_train_after: largest gradients are the parameters' fp32 bytes", 3.7e6 * 4 <= grads <= 3.9e6 * 4, str(grads))


def main():
    c = Checker(sys.argv[1], timeout_s=20)
    check_corpus(c, sys.argv[2])
    check_kineto_corpus(c, sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        generated(tmp, c)
        odd(tmp, c)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
