#!/usr/bin/python3
"""`tuneprof annotate` reads the trace's text in pieces of 1 MiB rather than holding it: the diagnosis is
spliced in wherever the last event ends relative to those pieces.

Crafted traces (generated in a temporary directory) whose last event ends just before, exactly at and
just after a piece boundary, plain and gzip'd:
- the output is the input's text up to the end of its last event, ",\\n" and the diagnosis block, then
  the rest of the input, byte for byte, and Python's json module reads it;
- annotating the output again gives the same file (the earlier diagnosis is found, even where its
  opening straddles a piece boundary, and replaced), and says so.
And on a generated 40 MB Kineto trace, annotate's peak RSS stays within 1.5x analyze's (it held the text
twice: 3-4x).
Usage: annotate_streaming_check.py TUNEPROF BENCH_DIR
"""
import gzip
import json
import pathlib
import subprocess
import sys
import tempfile

from harness import failures, note as check, report

PIECE = 1 << 20
OPENING = ',\n{"ph":"M","name":"process_name","pid":'
HEAD = '{"traceEvents": [\n'
TAIL = '\n], "displayTimeUnit": "ms"}\n'


def trace_ending_at(end):
    """A trace whose last event's closing brace is byte `end - 1` of the text."""
    first = '{"ph": "X", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 2, "args": {"pad": "%s"}},\n'
    last = '{"ph": "X", "name": "aten::add", "pid": 1, "tid": 1, "ts": 5, "dur": 1}'
    pad = end - len(HEAD) - len(first % "") - len(last)
    assert pad > 0
    text = HEAD + first % ("x" * pad) + last
    assert len(text) == end
    return text + TAIL


def annotate(tuneprof, source, output):
    result = subprocess.run([tuneprof, "annotate", str(source), "-o", str(output)], capture_output=True, text=True,
                            timeout=300)
    check(result.returncode == 0, f"annotate {source.name}: exit {result.returncode}: {result.stderr}")
    return result.stderr


def check_case(tuneprof, work, end, compressed):
    text = trace_ending_at(end)
    name = f"end{end}{'.json.gz' if compressed else '.json'}"
    source = work / name
    if compressed:
        source.write_bytes(gzip.compress(text.encode(), 6))
    else:
        source.write_text(text)
    once, twice = work / f"once_{name}.json", work / f"twice_{name}.json"
    annotate(tuneprof, source, once)
    if not once.exists():
        return
    out = once.read_text()
    check(out.startswith(text[:end]) and out.endswith(text[end:]), f"{name}: the input's text is not kept around the splice")
    check(out[end:].startswith(OPENING), f"{name}: the diagnosis does not follow the last event")
    try:
        json.loads(out)
    except ValueError as error:
        check(False, f"{name}: annotated output is not JSON: {error}")
    message = annotate(tuneprof, once, twice)
    check(twice.exists() and twice.read_text() == out, f"{name}: annotating again does not replace the diagnosis")
    check("already in it were replaced" in message, f"{name}: annotating again does not say it replaced: {message}")


def peak_mib(command):
    result = subprocess.run(["/usr/bin/time", "-f", "%M", *map(str, command)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, timeout=300)
    check(result.returncode == 0, f"{command[1]}: exit {result.returncode}: {result.stderr[-300:]}")
    return int(result.stderr.strip().splitlines()[-1]) / 1024


def check_memory(tuneprof, bench, work):
    trace = work / "kineto_40mb.json"
    subprocess.run([sys.executable, str(pathlib.Path(bench) / "gen_kineto_trace.py"), "--mb", "40", "--out",
                    str(trace)], check=True, capture_output=True, timeout=300)
    analyze = peak_mib([tuneprof, "analyze", "--json", trace])
    annotate = peak_mib([tuneprof, "annotate", trace, "-o", work / "annotated_40mb.json"])
    print(f"peak RSS on 40 MB: analyze {analyze:.1f} MiB, annotate {annotate:.1f} MiB ({annotate / analyze:.2f}x)")
    check(annotate <= 1.5 * analyze, f"annotate's peak {annotate:.1f} MiB is over 1.5x analyze's {analyze:.1f} MiB")


def main():
    tuneprof, bench = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        check_memory(tuneprof, bench, work)
        # Below, at and past the first boundary (the diagnosis' opening then straddles it on the second
        # read), and past the second.
        for end in (4096, PIECE - 10, PIECE - 1, PIECE, PIECE + 1, 2 * PIECE + 7):
            for compressed in (False, True):
                check_case(tuneprof, work, end, compressed)
    return report(failures, "annotate_streaming_check: " + ("FAIL" if failures else "ok"))


if __name__ == "__main__":
    sys.exit(main())
