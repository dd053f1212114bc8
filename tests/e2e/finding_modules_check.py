#!/usr/bin/python3
"""Findings name the modules that hold their evidence (docs/advisor.md "The modules a finding names"), on the
TraceLens H100 and MI300X Qwen1.5-0.5B traces recorded with with_modules=True, against an attribution made here
from the raw trace with Python's json module alone.

- `fusion.rms_norm` (host operators): its evidence is every run of outermost aten operators on one thread
  `[aten::to] aten::pow aten::mean aten::add aten::rsqrt aten::mul [aten::mul] [aten::to]` (Qwen2RMSNorm
  written out: the casts to float32 and back are part of it); their device time equals the finding's
  `pattern_us`. Each operator stands for the device work (`kernel`, `gpu_memcpy`, `gpu_memset`) whose
  runtime call (by correlation id) starts on its thread inside it. Each piece of work counts for the innermost module range
  (`nn.Module:` python_function, user annotations other than steps and `nccl*`) around that call; modules are
  named by the rolled-up layer path `profile --by module --json` gives them (checked against Python by
  e2e_module_view), else by their path. The finding's `modules` must be the paths holding at least 20 % of the
  evidence's device time, at most three, largest first, with their shares (equal to 1e-9).
- Every finding's `modules` is well formed (1 to 3 entries, shares in [0.2, 1], descending), the text of
  `advise` and `analyze` shows the top one, and the same trace with its module ranges taken out (written to a
  temporary directory) gives the same fusion findings, none with the key.
Usage: finding_modules_check.py TUNEPROF SHARED_DIR"""
import gzip
import json
import pathlib
import sys
import tempfile
from collections import defaultdict

from harness import check, finish, run_json, run_stdout
# How tuneprof reads a trace's times and module ranges, as the module-view check reads them.
from module_view_check import load, module_name, ns

TRACES = ["h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", "mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"]
WORK_CATEGORIES = {"kernel", "gpu_memcpy", "gpu_memset"}
CALL_CATEGORIES = {"cuda_runtime", "cuda_driver"}
RMS_NORM = ["aten::pow", "aten::mean", "aten::add", "aten::rsqrt", "aten::mul"]
MIN_SHARE = 0.2


def spans(e, index):
    start = ns(e["ts"])
    return {"start": start, "end": start + max(ns(e.get("dur", 0)), 0), "index": index, "name": e.get("name", "")}


def module_paths(events):
    """Per thread, the module ranges with their dotted paths, in (start, -end, file order) order."""
    by_thread = defaultdict(list)
    for index, e in enumerate(events):
        if e.get("ph") == "X" and module_name(e) is not None:
            r = spans(e, index)
            r["name"] = module_name(e)
            by_thread[(e["pid"], e["tid"])].append(r)
    for ranges in by_thread.values():
        ranges.sort(key=lambda r: (r["start"], -r["end"], r["index"]))
        stack = []
        for r in ranges:
            while stack and stack[-1]["end"] <= r["start"]:
                stack.pop()
            r["path"] = r["name"] if not stack else stack[-1]["path"] + "." + r["name"]
            stack.append(r)
    return by_thread


def innermost(ranges, t):
    """The last range in order with start <= t < end: the innermost open one (linear; the traces are small)."""
    found = None
    for r in ranges:
        if r["start"] > t:
            break
        if r["end"] > t:
            found = r
    return found


def rms_norm_ops(events):
    """The outermost cpu_ops of every RMSNorm run, and how many runs."""
    by_thread = defaultdict(list)
    for index, e in enumerate(events):
        if e.get("ph") == "X" and e.get("cat") == "cpu_op":
            by_thread[(e["pid"], e["tid"])].append(spans(e, index))
    evidence, runs = [], 0
    for thread, ops in by_thread.items():
        ops.sort(key=lambda r: (r["start"], -r["end"], r["index"]))
        outer, end = [], None
        for op in ops:
            if end is None or op["start"] >= end:
                outer.append(op)
                end = op["end"]
        names = [op["name"] for op in outer]
        i = 0
        while i + len(RMS_NORM) <= len(names):
            if names[i:i + len(RMS_NORM)] == RMS_NORM:
                first = i - 1 if i > 0 and names[i - 1] == "aten::to" else i
                end = i + len(RMS_NORM)
                end += 1 if end < len(names) and names[end] == "aten::mul" else 0
                end += 1 if end < len(names) and names[end] == "aten::to" else 0
                evidence += [(thread, op) for op in outer[first:end]]
                runs += 1
                i = end
            else:
                i += 1
    return evidence, runs


def expected_modules(events, layer_of):
    """The modules holding at least 20 % of the RMSNorm runs' device time, with their shares; the runs; their
    device time."""
    modules = module_paths(events)
    calls = defaultdict(list)  # thread -> (call start, correlation)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in CALL_CATEGORIES and "correlation" in e.get("args", {}):
            calls[(e["pid"], e["tid"])].append((ns(e["ts"]), e["args"]["correlation"]))
    work = defaultdict(int)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in WORK_CATEGORIES and "correlation" in e.get("args", {}):
            work[e["args"]["correlation"]] += max(ns(e.get("dur", 0)), 0)
    evidence, runs = rms_norm_ops(events)
    total, by_module = 0, defaultdict(int)
    seen = set()
    for thread, op in evidence:
        for start, correlation in calls[thread]:
            if not op["start"] <= start < op["end"] or correlation not in work or (thread, correlation) in seen:
                continue
            seen.add((thread, correlation))
            total += work[correlation]
            holder = innermost(modules.get(thread, []), start)
            if holder is not None:
                by_module[layer_of.get(holder["path"]) or holder["path"]] += work[correlation]
    ranked = sorted(by_module.items(), key=lambda kv: (-kv[1], kv[0]))
    return [(p, v / total) for p, v in ranked if total and v / total >= MIN_SHARE][:3], runs, total


def well_formed(label, findings):
    for f in findings:
        if "modules" not in f:
            continue
        shares = [m["share"] for m in f["modules"]]
        check(1 <= len(shares) <= 3 and all(MIN_SHARE - 1e-12 <= s <= 1 + 1e-12 for s in shares) and
              shares == sorted(shares, reverse=True) and all(isinstance(m["path"], str) for m in f["modules"]),
              f"{label}: {f['id']}'s modules well formed ({f['modules']})")


def check_trace(tuneprof, path):
    label = "/".join(path.parts[-2:])
    profile = run_json(tuneprof, ["profile", "--by", "module", "--json", str(path)]) or {}
    layer_of = {m["path"]: m["layer_path"] for m in profile.get("ranks", [{}])[0].get("modules", [])}
    advice = run_json(tuneprof, ["advise", "--json", str(path)]) or {}
    findings = advice.get("findings", [])
    well_formed(label, findings)
    rms = next((f for f in findings if f["id"] == "fusion.rms_norm"), None)
    check(rms is not None and "modules" in rms, f"{label}: fusion.rms_norm names its modules")
    if rms is None or "modules" not in rms:
        return
    want, runs, total = expected_modules(load(path), layer_of)
    check(abs(rms["evidence"]["pattern_us"] - total / 1e3) <= 1e-6, f"{label}: the RMSNorm runs' device time "
          f"{total / 1e3:.3f} us here, {rms['evidence']['pattern_us']} in tuneprof")
    check(rms["evidence"]["occurrences"] == runs, f"{label}: {runs} RMSNorm runs here, {rms['evidence']['occurrences']}"
          " in tuneprof")
    got = [(m["path"], m["share"]) for m in rms["modules"]]
    same = len(got) == len(want) and all(g[0] == w[0] and abs(g[1] - w[1]) <= 1e-9 for g, w in zip(got, want))
    check(same, f"{label}: fusion.rms_norm's modules equal Python's attribution (tuneprof {got}, here {want})")
    top = rms["modules"][0]
    text = run_stdout(tuneprof, ["advise", str(path)])
    check(f"modules: {100 * top['share']:.0f} % in `{top['path']}`" in text, f"{label}: advise shows the modules")
    text = run_stdout(tuneprof, ["analyze", str(path)])
    check(f"% in `{top['path']}`" in text, f"{label}: analyze shows the modules")


def check_without_modules(tuneprof, path, tmp):
    """The trace with its module ranges taken out (every python_function and user annotation but the steps):
    the same findings, none with modules."""
    label = "/".join(path.parts[-2:]) + " without its module ranges"
    with gzip.open(path, "rt") as f:
        document = json.load(f)
    document["traceEvents"] = [e for e in document["traceEvents"] if e.get("cat") != "python_function" and (
        e.get("cat") != "user_annotation" or e.get("name", "").startswith("ProfilerStep#"))]
    stripped = tmp / "no_modules.json"
    stripped.write_text(json.dumps(document))
    with_modules = (run_json(tuneprof, ["advise", "--json", str(path)]) or {}).get("findings", [])
    findings = (run_json(tuneprof, ["advise", "--json", str(stripped)]) or {}).get("findings", [])
    check(findings and not any("modules" in f for f in findings),
          f"{label}: {len(findings)} findings, none with modules")
    check({f["id"] for f in findings if f["id"].startswith("fusion.")} ==
          {f["id"] for f in with_modules if f["id"].startswith("fusion.")}, f"{label}: the same fusion findings")
    check("modules:" not in run_stdout(tuneprof, ["advise", str(stripped)]), f"{label}: advise's text names no modules")


def main():
    tuneprof, shared = sys.argv[1], pathlib.Path(sys.argv[2])
    base = shared / "traces" / "kineto" / "tracelens"
    for name in TRACES:
        check_trace(tuneprof, base / name)
    with tempfile.TemporaryDirectory() as tmp:
        check_without_modules(tuneprof, base / TRACES[0], pathlib.Path(tmp))
    return finish("all finding-module checks passed")


if __name__ == "__main__":
    sys.exit(main())
