#!/usr/bin/env python3
"""Write a large Kineto trace by repeating a real one, as real traces are laid out and compressed.

The events of the input's traceEvents array are written as many times as --mb asks, each copy shifted
in time past the one before it (ts, and correlation / External id / flow ids and step numbers moved
into a range of their own so that copies neither link to each other nor repeat a step). The text of every event is kept as the profiler wrote it, so
the output compresses as the original does (13-20x for the shared Kineto samples), which a synthetic
trace would not. With --gzip the output is gzip'd as PyTorch writes it (one member, level 6).

Usage: gen_repeated_trace.py INPUT(.json[.gz]) OUTPUT --mb 520 [--gzip]
"""
import argparse
import gzip
import json
import re
import sys

NUMBER_FIELDS = re.compile(rb'"(ts|correlation|External id|id)": (\d+)(\.\d+)?')
STEP = re.compile(rb'ProfilerStep#(\d+)')


def read(path):
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rb") as f:
        return f.read()


def events_span(text):
    """Start and end of the traceEvents array's body in `text`, and the time span of its events."""
    key = text.index(b'"traceEvents"')
    start = text.index(b"[", key)
    decoder = json.JSONDecoder()
    events, end = decoder.raw_decode(text.decode("utf-8"), start)
    # raw_decode counts characters: find the byte end by re-encoding the prefix (ASCII in practice).
    end = len(text.decode("utf-8")[:end].encode("utf-8"))
    times = [(float(e["ts"]), float(e.get("dur", 0))) for e in events if isinstance(e.get("ts"), (int, float))]
    span = max(t + d for t, d in times) - min(t for t, _ in times)
    return start + 1, end - 1, int(span) + 1000


def shifted(body, copy, span):
    def move(match):
        field, whole, fraction = match.group(1), int(match.group(2)), match.group(3) or b""
        delta = copy * span if field == b"ts" else copy * 100_000_000
        return b'"%s": %d%s' % (field, whole + delta, fraction)

    def step(match):
        return b"ProfilerStep#%d" % (int(match.group(1)) + copy * 100_000)

    return STEP.sub(step, NUMBER_FIELDS.sub(move, body)) if copy else body


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--mb", type=float, default=520)
    parser.add_argument("--gzip", action="store_true")
    args = parser.parse_args()
    text = read(args.input)
    body_start, body_end, span = events_span(text)
    body = text[body_start:body_end].rstrip()
    target = int(args.mb * 1e6)
    copies = max(1, -(-(target - len(text)) // max(1, len(body))) + 1)
    out = gzip.open(args.output, "wb", compresslevel=6) if args.gzip else open(args.output, "wb")
    with out:
        out.write(text[:body_start])
        for copy in range(copies):
            if copy:
                out.write(b",")
            out.write(shifted(body, copy, span))
        out.write(text[body_end:])
    print(f"{args.output}: {copies} copies of {args.input}", file=sys.stderr)


if __name__ == "__main__":
    main()
