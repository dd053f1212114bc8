#!/usr/bin/python3
"""Checks `tuneprof info --json` against an independent count made with Python's json module.

For every Chrome-trace file under ../shared/traces/{kineto,torch-cpu} and every Ascend trace_view.json,
the `categories` map of the matching `ranks` element must equal Python's count of `traceEvents`
entries per `cat` (entries without `cat` under ""). Usage: check_categories.py TUNEPROF SHARED_DIR
"""
import collections
import gzip
import json
import pathlib
import subprocess
import sys

import harness


def trace_files(shared):
    traces = pathlib.Path(shared) / "traces"
    files = []
    for sub in ("kineto", "torch-cpu"):
        for path in sorted((traces / sub).rglob("*")):
            name = path.name
            if path.is_file() and (name.endswith(".json") or name.endswith(".json.gz")) and ".meta." not in name:
                files.append(path)
    files += sorted((traces / "ascend").rglob("trace_view.json"))
    return files


def python_doc(path):
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)


def is_trace(doc):
    """A JSON document with trace events: an event list, or an object holding traceEvents."""
    return isinstance(doc, list) or "traceEvents" in doc


def python_count(doc):
    events = doc if isinstance(doc, list) else doc.get("traceEvents", [])
    return dict(collections.Counter(e.get("cat", "") for e in events))


def main():
    tuneprof, shared = sys.argv[1], sys.argv[2]
    files = trace_files(shared)
    if harness.corpus_short(shared, files, 40, "sample traces", "files"):
        return 1
    out = subprocess.run([tuneprof, "info", "--json", *map(str, files)], capture_output=True, text=True)
    if out.returncode != 0:
        print(out.stderr)
        return 1
    report = json.loads(out.stdout)
    ranks = {r["path"]: r for r in report["ranks"]}
    failures = 0
    for path in files:
        doc = python_doc(path)  # parsed once: the largest samples take seconds in Python
        if not is_trace(doc):
            # Not a trace (a Chakra execution trace, say): skipped with a warning, never an empty rank.
            if str(path) in ranks or not any(str(path) in w and "not a trace" in w for w in report.get("warnings", [])):
                print(f"FAIL {path}: a document without trace events must be skipped with a 'not a trace' warning")
                failures += 1
            continue
        got = ranks.get(str(path))
        if got is None:
            print(f"FAIL {path}: missing from tuneprof output")
            failures += 1
            continue
        for key in ("rank", "path", "format", "categories"):
            if key not in got:
                print(f"FAIL {path}: no '{key}' field")
                failures += 1
        want = python_count(doc)
        if got.get("categories") != want:
            print(f"FAIL {path}:\n  tuneprof {got.get('categories')}\n  python   {want}")
            failures += 1
    print(f"{len(files) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
