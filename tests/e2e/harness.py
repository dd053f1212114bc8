"""What every end-to-end check of the tuneprof binary does the same way: run it with a time limit, judge
the outcome, count and print the checks, end with the plain closing line.

    from harness import Checker
    c = Checker(binary, timeout_s=20)
    c.expect_error("missing file", ["info", "nowhere.json"], 1, names="nowhere.json", says=["no such file"])
    return c.finish()

A run is (exit code, stdout, stderr) with both texts decoded, or None when it did not end within the limit.
"""
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time


# The failures of a script that checks plain conditions (one process per script, so one list).
failures = []


def check(condition, message):
    """Prints the check and keeps its message among `failures` when it does not hold; returns whether it held."""
    if not condition:
        failures.append(message)
    print(("ok   " if condition else "FAIL ") + message)
    return bool(condition)


def fail(message):
    """Keeps a failure among `failures` and prints it at once, for scripts that print only their failures."""
    failures.append(message)
    print("FAIL:", message)


def fail_unless(condition, message):
    """check() that prints only a failure, at once as fail() does; returns whether the condition held."""
    if not condition:
        fail(message)
    return bool(condition)


def stop(message):
    """Prints a failure as fail() does and ends the script there (exit 1), for a script whose later checks
    need what this one found."""
    fail(message)
    sys.exit(1)


def record(message):
    """Keeps a failure among `failures` without printing it, for scripts that print them all at the end."""
    failures.append(message)


def note(condition, message):
    """check() without the printed line, for scripts that print only their failures; returns whether it held."""
    if not condition:
        failures.append(message)
    return bool(condition)


def run_json_noted(binary, *args, timeout_s=300):
    """Runs the binary with `args`: its stdout parsed as JSON when it exits 0; otherwise notes the failure (the
    arguments, the exit code and the start of stderr) and gives None."""
    args = [str(a) for a in args]
    done = subprocess.run([binary, *args], capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
    note(done.returncode == 0, f"{' '.join(args)}: exit {done.returncode}: {done.stderr.strip()[:300]}")
    return json.loads(done.stdout) if done.returncode == 0 else None


class Checker:
    def __init__(self, binary, timeout_s=20):
        self.binary = binary
        self.timeout_s = timeout_s
        self.passed = 0
        self.failed = 0
        self.last_seconds = 0.0  # how long the last run took

    def run(self, args, cwd=None):
        """Runs the binary with `args` (standard input closed, so that nothing waits on a terminal)."""
        started = time.monotonic()
        try:
            done = subprocess.run([self.binary, *map(str, args)], capture_output=True, timeout=self.timeout_s,
                                  cwd=cwd, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return None
        finally:
            self.last_seconds = time.monotonic() - started
        return done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")

    def report(self, name, problems, result=None):
        """One line per check: ok, or FAIL with its problems and what the binary said."""
        if problems:
            self.failed += 1
            print(f"FAIL {name}: {'; '.join(problems)}")
            if result is not None:
                print(f"     exit {result[0]}, stderr: {result[2].strip()[:600]!r}")
        else:
            self.passed += 1
            print(f"ok   {name}")

    def check(self, name, condition, detail=""):
        """A check that is a plain condition."""
        self.report(name, [] if condition else [detail or "not as expected"])
        return condition

    def run_json(self, name, args, cwd=None):
        """Runs `args`: its stdout parsed as JSON when it exits 0; otherwise reports `name` failed and gives None."""
        result = self.run(args, cwd)
        problems = self.process_problems(result)
        if not problems and result[0] != 0:
            problems.append(f"exit {result[0]}, expected 0")
        if problems:
            self.report(name, problems, result)
            return None
        return json.loads(result[1])

    def process_problems(self, result):
        """What is wrong with how the process ended, whatever it was asked: no answer, or killed."""
        if result is None:
            return [f"no answer within {self.timeout_s} s"]
        return [f"killed by signal {-result[0]}"] if result[0] < 0 else []

    def error_problems(self, result, code, names=None, says=()):
        """Exit `code`, nothing on stdout, one stderr line naming `names` and holding each of `says`."""
        problems = self.process_problems(result)
        if problems:
            return problems
        rc, out, err = result
        if rc != code:
            problems.append(f"exit {rc}, expected {code}")
        if out:
            problems.append(f"stdout not empty: {out[:200]!r}")
        lines = err.splitlines()
        if len(lines) != 1:
            problems.append(f"{len(lines)} stderr lines, expected 1")
        if names and names not in err:
            problems.append(f"stderr does not name {names}")
        problems.extend(f"stderr does not say {text!r}" for text in says if text not in err)
        return problems

    def expect_error(self, name, args, code, names=None, says=(), cwd=None):
        """Runs `args` and checks it fails as error_problems says; returns the run."""
        result = self.run(args, cwd)
        self.report(name, self.error_problems(result, code, names, says), result)
        return result

    def expect_ok(self, name, args, says=(), cwd=None):
        """Runs `args` and checks it exits 0 with each of `says` on stderr; returns the run."""
        result = self.run(args, cwd)
        problems = self.process_problems(result)
        if not problems:
            if result[0] != 0:
                problems.append(f"exit {result[0]}, expected 0")
            problems.extend(f"stderr does not say {text!r}" for text in says if text not in result[2])
        self.report(name, problems, result)
        return result

    def finish(self):
        """Prints the closing line ctest's log is read by and returns the exit code."""
        print(f"{self.passed} passed, {self.failed} failed")
        return 1 if self.failed else 0


def corpus_short(shared, found, least, samples, unit):
    """Whether fewer than `least` of the shared corpus's `samples` were `found` (a list of its `unit`): says
    so, for a script that then stops, since a corpus missing part of its files would pass its checks."""
    if len(found) >= least:
        return False
    print(f"expected the shared {samples} under {shared}, found {len(found)} {unit}")
    return True


def ranks_exactly(document, expected, where, say=fail):
    """The `ranks` of a command's JSON `document` by rank number when their numbers are exactly those of
    `expected` (rank numbers, or a dict keyed by them); otherwise None, `say`ing (fail by default) what
    differs under `where`. None too, and nothing said, when there is no document (its run failed, which was
    said then)."""
    if document is None:
        return None
    ranks = {r["rank"]: r for r in document["ranks"]}
    if sorted(ranks) != sorted(expected):
        say(f"{where}: ranks {sorted(ranks)}, expected {sorted(expected)}")
        return None
    return ranks


def run_measured(binary, args, timeout_s):
    """(exit code, stdout, stderr, peak RSS of the binary in KiB, seconds), or None when it did not end
    within `timeout_s`. A fresh Python parent runs each, so that its RUSAGE_CHILDREN holds this run's
    peak alone."""
    probe = ("import resource, subprocess, sys, json\n"
             "p = subprocess.run(sys.argv[1:], capture_output=True, timeout=%d)\n"
             "print(json.dumps([p.returncode, p.stdout.decode('utf-8', 'replace'), p.stderr.decode('utf-8', 'replace'),"
             " resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))\n" % timeout_s)
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-c", probe, binary, *map(str, args)], capture_output=True,
                              text=True, timeout=timeout_s + 5)
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        return None  # the probe timed out
    rc, out, err, rss = json.loads(done.stdout)
    return rc, out, err, rss, time.monotonic() - started


def finish(all_passed="all checks passed", failures_found=None):
    """Prints the closing line of a script of plain checks and returns its exit code; `failures_found` is the
    list of a script that keeps its own (by default, `failures`)."""
    found = failures if failures_found is None else failures_found
    print(f"{len(found)} failure(s)" if found else all_passed)
    return 1 if found else 0


def run_checks(checks):
    """Runs checks(binary, shared, tmp) with the script's arguments (BINARY SHARED_DIR) and a temporary
    folder removed afterwards, for a script of plain checks; returns finish()'s exit code."""
    with tempfile.TemporaryDirectory() as tmp:
        checks(sys.argv[1], sys.argv[2], tmp)
    return finish()


def run(binary, *args, timeout_s=300):
    """Runs the binary with `args` (standard input closed, so that nothing waits on a terminal): the finished
    process, its texts decoded, whatever its exit code; a run past `timeout_s` raises, failing the script."""
    return subprocess.run([binary, *map(str, args)], capture_output=True, text=True, timeout=timeout_s,
                          stdin=subprocess.DEVNULL)


def outcome(binary, *args, timeout_s=300):
    """(exit code, stdout, stderr) of the binary run with `args`, both texts decoded (a bad byte replaced),
    or None when it did not end within `timeout_s`: for checks that judge a hang themselves."""
    try:
        done = subprocess.run([binary, *map(str, args)], capture_output=True, timeout=timeout_s,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None
    return done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")


def json_or_exit(binary, *args, timeout_s=300):
    """The stdout of the binary run with `args` parsed as JSON; when it does not exit 0 the script ends there
    with one FAIL line naming the command, its exit code and stderr (what follows needs the document)."""
    done = run(binary, *args, timeout_s=timeout_s)
    if done.returncode != 0:
        raise SystemExit(f"FAIL: tuneprof {' '.join(map(str, args))}: exit {done.returncode}: "
                         f"{done.stderr.strip()[:600]}")
    return json.loads(done.stdout)


def run_stdout(binary, args, timeout_s=300):
    """Runs the binary with `args`, checked to exit 0: its stdout, "" when it failed."""
    args = [str(a) for a in args]
    done = subprocess.run([binary, *args], capture_output=True, text=True, timeout=timeout_s,
                          stdin=subprocess.DEVNULL)
    ok = done.returncode == 0
    check(ok, f"{' '.join(args)}: exits 0" + ("" if ok else f" (exit {done.returncode}: {done.stderr.strip()[:300]})"))
    return done.stdout if ok else ""


def run_json(binary, args, timeout_s=300):
    """Runs the binary with `args`, checked to exit 0: its stdout parsed as JSON, or None when it failed."""
    out = run_stdout(binary, args, timeout_s)
    return json.loads(out) if out else None


def advise_findings(binary, *paths, timeout_s=120):
    """The findings of `advise --json` on `paths` by id, checked to exit 0 ({} when it failed)."""
    advice = run_json(binary, ["advise", "--json", *paths], timeout_s)
    return {f["id"]: f for f in advice["findings"]} if advice is not None else {}


def report(failures_found, closing=None, nothing_checked=False, most=None):
    """Prints each failure of a script that keeps its own list (the first `most` of them when given), then
    `closing` (by default "ok" or the count); returns the exit code, which also fails when `nothing_checked`."""
    for failure in failures_found[:most]:
        print("FAIL:", failure)
    print(closing if closing is not None else "ok" if not failures_found else f"{len(failures_found)} failure(s)")
    return 1 if failures_found or nothing_checked else 0


# The shared torch_npu text export of one rank that checks copy to damage or cut.
LEVEL1_RANK = "traces/ascend/msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"


def copy_level1_rank(shared, tmp, name):
    """A copy of the shared level1 rank at tmp/name/rank0_ascend_pt that a check may modify (the corpus may be
    read-only); returns its path."""
    target = pathlib.Path(tmp) / name / "rank0_ascend_pt"
    shutil.copytree(pathlib.Path(shared) / LEVEL1_RANK, target)
    for p in target.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    return target
