#!/usr/bin/env python3
"""`memory --json` on the shared PyTorch allocator snapshots against an independent reading.

usage: memory_snapshot_check.py TUNEPROF SHARED_DIR

Each snapshot under SHARED_DIR/traces/memory-snapshots/ is read here with a restricted pickle.Unpickler
(find_class refuses every class, so no code from the file can run) and the figures tuneprof prints are
computed again from the dicts: reserved, allocated and requested at the dump; segment counts and
fragmentation; the peak of the trace replayed from the dump backwards, its time and reserved bytes; the
peak's live bytes grouped by the charged frame (the first Python frame outside torch, else the autograd
node, else the outermost at::_ops operator); the blocks never freed by frame. The categories must sum
to the peak. Standard library only.
"""
import collections
import glob
import json
import os
import pickle
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Checker  # noqa: E402


class PlainData(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"class {module}.{name} refused")


def is_python(file):
    return file.endswith(".py") or file.startswith("<")


def charged_frame(frames):
    """(kind, function, file, line) as tuneprof charges a stack (analysis/memory/snapshot_analysis.cc)."""
    node = op = None
    for f in frames:
        if is_python(f["filename"]):
            if "/torch/" not in f["filename"] and not f["filename"].startswith("torch/"):
                return ("python", f["name"], f["filename"], f["line"])
        elif node is None and "Backward" in f["name"]:
            node = f
        elif f["name"].startswith("at::_ops::"):
            op = f
    chosen = node or op
    if chosen is None:
        return ("none", "", "", 0)
    return ("cpp", chosen["name"], chosen["filename"], chosen["line"])


def expected_device(snap, device):
    segs = [s for s in snap["segments"] if s["device"] == device]
    out = {
        "reserved_at_dump": sum(s["total_size"] for s in segs),
        "allocated_at_dump": sum(s["allocated_size"] for s in segs),
        "requested_at_dump": sum(s["requested_size"] for s in segs),
        "segments": len(segs),
        "large": sum(1 for s in segs if s["segment_type"] != "small"),
        "blocks": sum(len(s["blocks"]) for s in segs),
        "inactive_bytes": sum(b["size"] for s in segs for b in s["blocks"] if b["state"] == "inactive"),
        "inactive_split_bytes": sum(b["size"] for s in segs if len(s["blocks"]) > 1
                                    for b in s["blocks"] if b["state"] == "inactive"),
        "largest_free_block": max([b["size"] for s in segs for b in s["blocks"] if b["state"] == "inactive"],
                                  default=0),
    }
    traces = snap.get("device_traces", [])
    entries = traces[device] if device < len(traces) else []
    allocs = [e["size"] for e in entries if e["action"] == "alloc"]
    out["largest_request"] = max(allocs + [b["requested_size"] for s in segs for b in s["blocks"]
                                           if b["state"] != "inactive"], default=0)
    out["events"] = len(entries)
    running = best = 0
    peak_state = 0
    for i, e in enumerate(entries):
        if e["action"] == "alloc":
            running += e["size"]
        elif e["action"] == "free_completed":
            running -= e["size"]
        if running > best:
            best, peak_state = running, i + 1
    # Pair frees with allocations by address: the latest unfreed allocation at it (the shared snapshots
    # never allocate an address twice without freeing it).
    live = collections.defaultdict(list)
    freed_at = {}
    freed_before_trace = 0
    for i, e in enumerate(entries):
        if e["action"] == "alloc":
            live[e["addr"]].append(i)
        elif e["action"] == "free_completed":
            if live[e["addr"]]:
                freed_at[live[e["addr"]].pop()] = i
            else:
                freed_before_trace += e["size"]
    before = max(0, out["allocated_at_dump"] - running, freed_before_trace)
    out["allocated_before"] = before
    out["peak_allocated"] = before + best
    out["peak_event"] = peak_state
    if entries:
        out["peak_time_us"] = entries[peak_state - 1]["time_us"] if peak_state else entries[0]["time_us"]
    groups = collections.Counter()
    live_total = 0
    for i in range(peak_state):
        e = entries[i]
        if e["action"] == "alloc" and freed_at.get(i, len(entries)) >= peak_state:
            groups[charged_frame(e["frames"])] += e["size"]
            live_total += e["size"]
    if out["peak_allocated"] - live_total:
        groups[("before_trace", "", "", 0)] += out["peak_allocated"] - live_total
    out["frames"] = groups
    never = collections.Counter()
    for i, e in enumerate(entries):
        if e["action"] == "alloc" and i not in freed_at:
            never[charged_frame(e["frames"])] += e["size"]
    out["never_freed"] = never
    return out


def check_snapshot(c, path):
    name = os.path.basename(path)
    with open(path, "rb") as f:
        snap = PlainData(f).load()
    result = c.run(["memory", "--json", path])
    if not c.check(f"{name}: memory --json runs", result is not None and result[0] == 0,
                   "no answer" if result is None else f"exit {result[0]}: {result[2][:300]}"):
        return
    doc = json.loads(result[1])
    c.check(f"{name}: schema", doc.get("schema") == "tuneprof.memory_snapshot/1", str(doc.get("schema")))
    devices = sorted({s["device"] for s in snap["segments"]} |
                     {i for i, t in enumerate(snap.get("device_traces", [])) if t})
    c.check(f"{name}: devices", [d["device"] for d in doc["devices"]] == devices, str(devices))
    for got in doc["devices"]:
        want = expected_device(snap, got["device"])
        seg = got["segments"]
        pairs = [
            ("reserved at the dump", got["reserved_at_dump"], want["reserved_at_dump"]),
            ("allocated at the dump", got["allocated_at_dump"], want["allocated_at_dump"]),
            ("requested at the dump", got["requested_at_dump"], want["requested_at_dump"]),
            ("segments", seg["count"], want["segments"]),
            ("large segments", seg["large"], want["large"]),
            ("blocks", seg["blocks"], want["blocks"]),
            ("inactive bytes", seg["inactive_bytes"], want["inactive_bytes"]),
            ("inactive split bytes", seg["inactive_split_bytes"], want["inactive_split_bytes"]),
            ("largest free block", seg["largest_free_block"], want["largest_free_block"]),
            ("largest request", seg["largest_request"], want["largest_request"]),
            ("trace events", got["trace"]["events"], want["events"]),
            ("allocated before the trace", got["trace"]["allocated_before"], want["allocated_before"]),
            ("peak allocated", got["peak"]["allocated"], want["peak_allocated"]),
            ("peak event", got["peak"]["event"], want["peak_event"]),
            ("peak time", got["peak"]["time_us"], want.get("peak_time_us", 0)),
        ]
        for what, have, expected in pairs:
            c.check(f"{name} device {got['device']}: {what} {have}", have == expected, f"expected {expected}")
        timeline = got["timeline"]
        c.check(f"{name}: timeline of {len(timeline)} points holds the peak",
                0 < len(timeline) <= 512 and max(p["allocated"] for p in timeline) == got["peak"]["allocated"]
                and [p["time_us"] for p in timeline] == sorted(p["time_us"] for p in timeline),
                str(timeline[:3]))
        frames = collections.Counter()
        for g in got["peak"]["frames"]:
            frames[(g["kind"], g["function"], g["file"], g["line"])] += g["bytes"]
        c.check(f"{name}: {len(frames)} frame groups at the peak equal the independent grouping",
                frames == want["frames"],
                f"differ: {sorted(set(frames.items()) ^ set(want['frames'].items()))[:4]}")
        c.check(f"{name}: frame groups sum to the peak",
                sum(frames.values()) == got["peak"]["allocated"], str(sum(frames.values())))
        categories = got["peak"]["categories"]
        c.check(f"{name}: categories {sorted(categories)} sum to the peak",
                sum(categories.values()) == got["peak"]["allocated"], str(categories))
        top_never = sorted(want["never_freed"].items(), key=lambda kv: -kv[1])
        for leak in got["never_freed"][:5]:
            key = (leak["kind"], leak["function"], leak["file"], leak["line"])
            c.check(f"{name}: never freed by {leak['function'][:40]} {leak['bytes']}",
                    want["never_freed"].get(key) == leak["bytes"], f"expected {want['never_freed'].get(key)}")
        c.check(f"{name}: never-freed groups", len(got["never_freed"]) == min(20, len(top_never)),
                f"{len(got['never_freed'])} vs {len(top_never)}")
    text = c.run(["memory", path])
    c.check(f"{name}: text output", text is not None and text[0] == 0 and "peak allocated" in text[1]
            and all(len(line) <= 160 for line in text[1].splitlines()),
            "" if text is None else text[2][:200])


def main():
    binary, shared = sys.argv[1], sys.argv[2]
    snapshots = sorted(glob.glob(os.path.join(shared, "traces", "memory-snapshots", "**", "*.pickle"),
                                 recursive=True))
    c = Checker(binary, timeout_s=60)
    c.check("snapshots found", len(snapshots) >= 3, f"{len(snapshots)} under memory-snapshots/")
    for path in snapshots:
        check_snapshot(c, path)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
