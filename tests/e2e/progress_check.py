#!/usr/bin/python3
"""The load progress bar through the real binary.

On a generated ~50 MB Kineto trace (and its .gz): under a pty (util-linux `script`) stderr shows
redrawn "loading NAME [bar] P%  READ/TOTAL MiB  N events  ETA" lines whose total is the file's size on
disk (os.stat), whose bytes and events only grow and never pass the size / the event count Python wrote,
and the line is cleared before the command's own output. Piped, or with --quiet (before or after the
subcommand), there is no progress text at all and stdout is the same. A quick load with the default
one-second delay draws nothing. TUNEPROF_PROGRESS_DELAY_MS=0 makes the bar appear at once, so that the
checks do not depend on how fast this machine loads 50 MB. Exit 77 (skipped) without `script`.
Usage: progress_check.py TUNEPROF_BINARY
"""
import gzip
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

from harness import finish

TIMEOUT_S = 120
EVENTS = 240_000  # about 205 bytes each: ~49 MB
LINE = re.compile(r"\rloading (?P<name>\S+)(?: \[[=> ]+\])?  (?P<pct>\d+)%  (?P<read>[\d.]+)/(?P<total>[\d.]+) MiB"
                  r"(?:  (?P<events>[\d,]+) events)?  (?:ETA \d+(?:m\d\ds|s)|\d+(?:m\d\ds|s) elapsed)\x1b\[K")
CLEAR = "\r\x1b[K"


def write_trace(path, n):
    with open(path, "w") as f:
        f.write('{"schemaVersion": 1, "distributedInfo": {"rank": 0, "world_size": 1, "backend": "nccl"},\n'
                '"traceEvents": [\n')
        ts = 1_000_000
        for i in range(n):
            if i:
                f.write(",\n")
            if i % 2 == 0:
                event = {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": 100, "ts": ts, "dur": 5.5,
                         "args": {"External id": i, "Sequence number": i, "Ev Idx": i}}
            else:
                event = {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_nn", "pid": 0, "tid": 7,
                         "ts": ts + 2, "dur": 3.25, "args": {"External id": i - 1, "device": 0, "stream": 7,
                                                             "correlation": i, "grid": [64, 1, 1], "block": [128, 1, 1]}}
            f.write(json.dumps(event))
            ts += 10
        f.write("\n]}\n")


class Checker:
    def __init__(self, binary):
        self.binary = binary
        self.failures = []

    def check(self, ok, what):
        if not ok:
            self.failures.append(what)
            print("FAIL:", what)

    def piped(self, args, delay_ms="0"):
        env = dict(os.environ, TUNEPROF_PROGRESS_DELAY_MS=delay_ms)
        return subprocess.run([self.binary] + args, capture_output=True, text=True, env=env, timeout=TIMEOUT_S)

    def pty(self, args, delay_ms="0"):
        """stdout and stderr together, as a terminal shows them (script: CR LF for each newline)."""
        env = dict(os.environ)
        env.pop("TUNEPROF_PROGRESS_DELAY_MS", None)
        if delay_ms is not None:
            env["TUNEPROF_PROGRESS_DELAY_MS"] = delay_ms
        # Every report redrawn: the test's load takes a fraction of a second, which the default 100 ms
        # between redraws would show once or twice depending on the machine.
        env["TUNEPROF_PROGRESS_INTERVAL_MS"] = "0"
        command = " ".join(shlex.quote(a) for a in [self.binary] + args)
        result = subprocess.run(["script", "-qec", command, "/dev/null"], capture_output=True, env=env,
                                timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
        self.check(result.returncode == 0, f"{args}: exit {result.returncode} under script")
        return result.stdout.decode("utf-8", "replace")

    def no_progress(self, text, what):
        self.check("loading " not in text and "\x1b[" not in text and "\r" not in text.replace("\r\n", ""),
                   f"{what}: progress text where there must be none: {text[:200]!r}")

    def bar_on_pty(self, path, events):
        name = os.path.basename(path)
        out = self.pty(["info", path])
        lines = list(LINE.finditer(out))
        self.check(len(lines) >= 2, f"{name}: expected the bar redrawn, got {len(lines)} lines: {out[:300]!r}")
        total = f"{os.stat(path).st_size / (1 << 20):.1f}"
        previous_read, previous_events = -1.0, -1
        for m in lines:
            self.check(m["name"] == name, f"{name}: bar names {m['name']}")
            self.check(m["total"] == total, f"{name}: bar total {m['total']} MiB, file is {total} MiB")
            read = float(m["read"])
            self.check(previous_read <= read <= float(total), f"{name}: bytes read {read} after {previous_read}")
            self.check(abs(int(m["pct"]) - 100 * read / float(total)) <= 1.5, f"{name}: {m['pct']}% for {read}/{total}")
            n = int(m["events"].replace(",", "")) if m["events"] else 0
            self.check(previous_events <= n <= events, f"{name}: {n} events after {previous_events} (of {events})")
            previous_read, previous_events = read, n
        self.check(previous_events > 0, f"{name}: no event count in the bar")
        report = out.find("rank 0")
        last_bar_end = lines[-1].end() if lines else 0
        self.check(report > 0 and out.rfind(CLEAR, 0, report) >= last_bar_end,
                   f"{name}: the bar is not cleared before the report")
        self.check(f"{events} entries" in out, f"{name}: info does not report {events} entries")
        after = out[report:] if report > 0 else out
        self.no_progress(after.replace("\r\n", "\n"), f"{name}: after the report")
        return out

    def run(self, tmp):
        big = os.path.join(tmp, "big.pt.trace.json")
        write_trace(big, EVENTS)
        big_gz = big + ".gz"
        with open(big, "rb") as src, gzip.open(big_gz, "wb", compresslevel=1) as dst:
            shutil.copyfileobj(src, dst)
        print(f"generated {os.stat(big).st_size} bytes ({EVENTS} events), .gz {os.stat(big_gz).st_size} bytes")

        tty_out = self.bar_on_pty(big, EVENTS)
        self.bar_on_pty(big_gz, EVENTS)

        piped = self.piped(["info", big])
        self.check(piped.returncode == 0, f"piped info: exit {piped.returncode}")
        self.no_progress(piped.stderr, "piped stderr")
        report = tty_out[tty_out.find("rank 0"):].replace("\r\n", "\n")
        self.check(piped.stdout == report, "piped stdout differs from what the terminal shows after the bar")

        for args in (["--quiet", "info", big], ["info", big, "--quiet"]):
            self.no_progress(self.pty(args), f"{args} on a pty")
            quiet_piped = self.piped(args)
            self.check(quiet_piped.returncode == 0 and quiet_piped.stdout == piped.stdout, f"{args}: output changed")

        small = os.path.join(tmp, "small.pt.trace.json")
        write_trace(small, 200)
        self.no_progress(self.pty(["info", small], delay_ms=None), "a quick load with the default delay")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    if shutil.which("script") is None:
        print("SKIP: util-linux `script` is not installed")
        return 77
    checker = Checker(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        checker.run(tmp)
    return finish("progress: OK", checker.failures)


if __name__ == "__main__":
    sys.exit(main())
