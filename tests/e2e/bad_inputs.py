#!/usr/bin/python3
"""Runs `tuneprof info` (text and --json) on generated bad inputs and checks how it fails.

Errors: exit 1, nothing on stdout, exactly one stderr line that names the file (and 'byte N' where an
offset applies). Usage errors: exit 2. Cut-off traces: exit 0 with the complete events and a warning.
Never a signal, never over 20 s. Usage: bad_inputs.py TUNEPROF_BINARY
"""
import gzip
import json
import os
import re
import sys
import tempfile

from harness import Checker

TIMEOUT_S = 20

EVENT = b'{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": %d, "dur": 5, "args": {"External id": %d}}'
KINETO_HEAD = (b'{\n  "schemaVersion": 1,\n  "deviceProperties": [{"id": 0, "name": "GPU 0", "totalGlobalMem": 85899345920, '
               b'"computeMajor": 8, "computeMinor": 0, "numSms": 108}],\n'
               b'  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},\n  "traceEvents": [\n')


def kineto(events, tail=b'\n  ],\n  "traceName": "t.pt.trace.json"\n}\n'):
    return KINETO_HEAD + b',\n'.join(events) + tail


def events(n):
    return [EVENT % (100 + 10 * i, i + 1) for i in range(n)]


def one_event(body):
    """A valid Kineto file whose second event is `body`; returns (bytes, offset of that event)."""
    good = events(2)
    data = kineto([good[0], body, good[1]])
    return data, data.index(body)


class InfoChecker(Checker):
    """Judges `info` and `info --json` on one input at a time."""

    @staticmethod
    def info_error_problems(result, path, size=None, span=None, offset=False):
        """Exit 1, nothing on stdout, one stderr line naming `path`; with `offset` or `span`, a 'byte N'
        with N <= size and lo <= N <= hi."""
        rc, out, err = result
        problems = []
        lines = err.splitlines()
        if rc != 1:
            problems.append(f"exit {rc}, expected 1")
        if out:
            problems.append(f"stdout not empty: {out[:200]!r}")
        if len(lines) != 1:
            problems.append(f"{len(lines)} stderr lines, expected 1")
        elif path not in lines[0]:
            problems.append("stderr does not name the file")
        if (offset or span is not None) and lines:
            m = re.search(r"\bbyte (\d+)", err)
            if m is None:
                problems.append("no 'byte N' in the message")
            else:
                n = int(m.group(1))
                if size is not None and n > size:
                    problems.append(f"byte {n} is past the end ({size} bytes)")
                if span is not None and not span[0] <= n <= span[1]:
                    problems.append(f"byte {n} is outside the bad value's range {span[0]}..{span[1]}")
        return problems

    @staticmethod
    def ok_problems(result, path, json_mode, entries=None, truncated=False):
        """Exit 0; with --json, `entries` complete entries; a cut-off trace warns naming the file."""
        rc, out, err = result
        problems = []
        if rc != 0:
            return [f"exit {rc}, expected 0"]
        if json_mode:
            try:
                rank = json.loads(out)["ranks"][0]
                if entries is not None and rank.get("entries") != entries:
                    problems.append(f"entries {rank.get('entries')}, expected {entries}")
                if rank.get("truncated") != truncated:
                    problems.append(f"truncated {rank.get('truncated')}, expected {truncated}")
            except (ValueError, KeyError, IndexError, TypeError) as e:
                problems.append(f"--json output unreadable: {e}")
        if truncated and not [l for l in err.splitlines() if "warning" in l and path in l]:
            problems.append("no warning naming the file on stderr")
        if "tuneprof: error" in err:
            problems.append("an error on stderr")
        return problems

    def check_modes(self, name, path, judge):
        for mode in ([], ["--json"]):
            result = self.run(["info", *mode, path])
            problems = self.process_problems(result) or judge(result, bool(mode))
            self.report(f"{name} {' '.join(mode) or '(text)'}", problems, result)

    def expect_error(self, name, path, size=None, span=None, offset=False):
        self.check_modes(name, path, lambda r, _: self.info_error_problems(r, path, size, span, offset))

    def expect_ok(self, name, path, entries=None, truncated=False):
        self.check_modes(name, path, lambda r, j: self.ok_problems(r, path, j, entries, truncated))

    def expect_error_or_ok(self, name, path, size, entries=None, truncated=False):
        """For inputs that a parser may refuse or read: either outcome, each in its proper form."""
        def judge(result, json_mode):
            if result[0] == 1:
                return self.info_error_problems(result, path, size, offset=True)
            return self.ok_problems(result, path, json_mode, entries, truncated)
        self.check_modes(name, path, judge)

    def expect_usage(self, name, args):
        result = self.run(args)
        problems = self.process_problems(result)
        if not problems:
            rc, _, err = result
            if rc != 2:
                problems.append(f"exit {rc}, expected 2")
            if not err.strip():
                problems.append("nothing on stderr")
        self.report(name, problems, result)


def main():
    if len(sys.argv) != 2:
        print("usage: bad_inputs.py TUNEPROF_BINARY", file=sys.stderr)
        return 2
    c = InfoChecker(sys.argv[1], TIMEOUT_S)
    with tempfile.TemporaryDirectory(prefix="tuneprof_bad_inputs_") as tmp:
        def write(name, data):
            path = os.path.join(tmp, name)
            with open(path, "wb") as f:
                f.write(data)
            return path

        # Paths and files that hold no trace.
        c.expect_error("missing path", os.path.join(tmp, "no_such_trace.json"))
        c.expect_error("empty file", write("empty.json", b""))
        c.expect_error("0-byte .gz", write("empty.json.gz", b""))
        c.expect_error("plain text", write("notes.json", b"this is not a trace\nat all\n"))
        empty_dir = os.path.join(tmp, "no_traces")
        os.mkdir(empty_dir)
        write("no_traces/readme.txt", b"nothing here\n")
        c.expect_error("directory without traces", empty_dir)

        # Broken content with a place to point at.
        garbage = b"\x1f\x8b\x08\x00" + bytes(range(7, 250)) * 4
        c.expect_error("garbage .gz", write("garbage.json.gz", garbage), size=len(garbage), offset=True)

        bad_utf8 = b'{"ph": "X", "cat": "cpu_op", "name": "bad \xff\xfe utf8", "pid": 1, "tid": 1, "ts": 1, "dur": 1}'
        data, at = one_event(bad_utf8)
        c.expect_error("invalid UTF-8 in a string", write("bad_utf8.json", data), span=(at, at + len(bad_utf8)))
        bad_utf8_args = b'{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"note": "\xc3\x28"}}'
        data, at = one_event(bad_utf8_args)
        c.expect_error("invalid UTF-8 in args", write("bad_utf8_args.json", data), span=(at, at + len(bad_utf8_args)))

        # A well-formed value of the wrong type costs its event (skipped with a warning), not the trace.
        for name, body in [
            ("ts as object", b'{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": {"us": 1}, "dur": 1}'),
            ("pid as array", b'{"ph": "X", "name": "a", "pid": [1, 2], "tid": 1, "ts": 1, "dur": 1}'),
            ("args not an object", b'{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": 5}'),
            ("20-digit integer ts", b'{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 12345678901234567890, "dur": 1}'),
        ]:
            data, _ = one_event(body)
            c.expect_ok(name, write(name.replace(" ", "_") + ".json", data), entries=3)

        for name, body in [
            ("NaN ts", b'{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": NaN, "dur": 1}'),
            ("Infinity dur", b'{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": -Infinity}'),
        ]:
            data, at = one_event(body)
            c.expect_error(name, write(name.replace(" ", "_") + ".json", data), span=(at, at + len(body)))

        data = b'{"schemaVersion": 1, "traceEvents": {"ph": "X"}}'
        c.expect_error("traceEvents not an array", write("events_object.json", data),
                       span=(data.index(b"{", 1), data.index(b"{", 1)))

        # 100000 nested arrays: balanced, it is valid JSON that a parser may skip (the key is unknown) or
        # refuse for depth; unclosed, the file ends inside the event like a cut-off trace.
        deep_head = b'{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"x": '
        deep = deep_head + b"[" * 100000 + b"]" * 100000 + b"}}]}"
        c.expect_error_or_ok("100000 nested arrays in args", write("deep.json", deep), len(deep), entries=1)
        deep = deep_head + b"[" * 100000
        c.expect_error_or_ok("100000 unclosed arrays in args", write("deep_open.json", deep), len(deep), entries=0,
                             truncated=True)

        # Must not fail: unknown args stay text, and a known one that does not fit reads as absent.
        big_args = b'{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1, ' \
            b'"args": {"Comms Id": 12345678901234567890, "External id": 98765432109876543210, "stream": 7}}'
        c.expect_ok("20-digit integers in args", write("big_args.json", kineto(events(2) + [big_args])), entries=3)

        # Cut-off traces: the complete events count, with a warning.
        full = events(4)
        cut = KINETO_HEAD + b",\n".join(full[:3]) + b",\n" + full[3][: len(full[3]) // 2]
        c.expect_ok("cut-off trace", write("cut.json", cut), entries=3, truncated=True)
        big = kineto(events(3000))
        packed = gzip.compress(big, mtime=0)
        c.expect_ok("cut-off .json.gz", write("cut.json.gz", packed[: len(packed) // 2]), truncated=True)

    # Usage errors.
    c.expect_usage("no subcommand", [])
    c.expect_usage("unknown flag", ["info", "--no-such-flag", "x.json"])
    c.expect_usage("info without a path", ["info"])

    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
