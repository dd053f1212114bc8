#!/usr/bin/python3
"""gzip'd traces read alike through every inflater and with or without the read-ahead thread.

For every .gz trace of the shared corpus, `tuneprof analyze --json` must give the same stdout, stderr and
exit status through zlib on the caller's thread (the reading before ISA-L and the read-ahead thread),
through ISA-L on a read-ahead thread (forced on, since the corpus files are under its size threshold) and
through the build's defaults. Then damaged gzip made here (cut off, wrong CRC, wrong length, trailing
garbage, a flipped byte) must fail or warn alike, in one line that names the file.
Usage: inflater_identity_check.py TUNEPROF_BINARY SHARED_DIR
"""
import gzip
import os
import subprocess
import sys
import tempfile

from harness import report

TIMEOUT_S = 60
WAYS = {
    "zlib, one thread": {"TUNEPROF_INFLATE": "zlib", "TUNEPROF_READ_AHEAD": "0"},
    "default, read ahead": {"TUNEPROF_READ_AHEAD": "1"},
    "defaults": {},
}


def run(binary, path, extra):
    """analyze --json on `path` as bytes, under the TUNEPROF_* settings `extra` alone (the others cleared)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TUNEPROF_")}
    env.update(extra)
    r = subprocess.run([binary, "analyze", "--json", path], capture_output=True, env=env, timeout=TIMEOUT_S)
    return r.returncode, r.stdout, r.stderr


def compare(binary, path, problems):
    """The outcome through every way, or None (a problem noted) when two differ."""
    outcomes = {name: run(binary, path, extra) for name, extra in WAYS.items()}
    first_name, first = next(iter(outcomes.items()))
    for name, outcome in outcomes.items():
        if outcome != first:
            what = ["exit status", "stdout", "stderr"][next(i for i in range(3) if outcome[i] != first[i])]
            problems.append(f"{path}: {what} differs between '{first_name}' and '{name}'")
            return None
    if first[0] < 0:
        problems.append(f"{path}: killed by signal {-first[0]}")
    return first


def damaged(directory):
    """Damaged gzip files of a small Kineto trace, and whether each must fail (else warn as cut off)."""
    events = ",\n".join('{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": %d, "dur": 5}'
                        % (100 + 10 * i) for i in range(20000))
    packed = gzip.compress(('{"traceEvents": [\n' + events + '\n]}').encode(), mtime=0)
    cases = {
        "cut.json.gz": (packed[: len(packed) // 2], False),
        "bad_crc.json.gz": (packed[:-8] + bytes([packed[-8] ^ 0xFF]) + packed[-7:], True),
        "bad_length.json.gz": (packed[:-1] + bytes([packed[-1] ^ 0x01]), True),
        "trailing_garbage.json.gz": (packed + b"garbage", True),
        "flipped.json.gz": (packed[:len(packed) // 3] + bytes([packed[len(packed) // 3] ^ 0x10]) + packed[len(packed) // 3 + 1:], True),
        "two_members.json.gz": (packed[:len(packed) // 2] + packed, True),
    }
    for name, (data, _) in cases.items():
        with open(os.path.join(directory, name), "wb") as f:
            f.write(data)
    return {os.path.join(directory, name): fails for name, (_, fails) in cases.items()}


def main():
    binary, shared = sys.argv[1], sys.argv[2]
    problems = []
    traces = os.path.join(shared, "traces")
    files = sorted(os.path.join(d, f) for d, _, names in os.walk(traces) for f in names if f.endswith(".gz"))
    for path in files:
        compare(binary, path, problems)
    with tempfile.TemporaryDirectory() as directory:
        for path, fails in damaged(directory).items():
            outcome = compare(binary, path, problems)
            if outcome is None:
                continue
            code, stdout, stderr = outcome
            lines = stderr.decode(errors="replace").splitlines()
            if fails and (code == 0 or len(lines) != 1 or path not in lines[0] or stdout):
                problems.append(f"{path}: expected one error line naming the file, got exit {code}: {lines}")
            if not fails and (code != 0 or not any("cut off" in line for line in lines)):
                problems.append(f"{path}: expected a cut-off warning and exit 0, got exit {code}: {lines}")
    return report(problems, f"{len(files)} corpus .gz files and 6 damaged ones through {len(WAYS)} ways: "
                  f"{'identical' if not problems else str(len(problems)) + ' problems'}")


if __name__ == "__main__":
    sys.exit(main())
