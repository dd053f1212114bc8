"""Shared fixtures of the Python module's tests: the CLI binary the module must agree with, the bundled
example and (for test_corpus.py) the shared real-trace corpus. CMake passes the paths through the
environment (tests/CMakeLists.txt)."""

import json
import math
import os
import pathlib
import subprocess

import pytest

SOURCE = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = SOURCE / "examples" / "tiny_train.pt.trace.json.gz"


@pytest.fixture(scope="session")
def cli():
    binary = os.environ.get("TUNEPROF_BIN")
    assert binary, "TUNEPROF_BIN names the tuneprof binary"

    def run(*args, expect_ok=True):
        done = subprocess.run([binary, *map(str, args)], capture_output=True, text=True, timeout=300)
        if expect_ok:
            assert done.returncode == 0, done.stderr
        return done

    run.binary = binary
    return run


@pytest.fixture(scope="session")
def cli_json(cli):
    def run(*args):
        return json.loads(cli(*args).stdout)

    return run


@pytest.fixture(scope="session")
def shared():
    return pathlib.Path(os.environ.get("TUNEPROF_SHARED", SOURCE.parent / "shared")) / "traces"


def number(value):
    """pid / tid as the events table holds them: the number, -1 for a name."""
    return value if isinstance(value, int) else -1


def hta_time(raw, event):
    """(ts, dur) in µs as HTA reads an X event: the text's numbers; when any event of the trace has sub-µs
    digits (pandas then reads floats), ts rounded up and the end rounded down; ts then counted from the
    earliest start of the rows HTA keeps (a category other than "Trace")."""
    cache = getattr(hta_time, "_cache", None)
    if cache is None or cache[0] is not raw:
        fractional = any(float(e["ts"]) != math.floor(float(e["ts"])) for e in raw)
        origin = min(_rounded(e, fractional)[0] for e in raw if e.get("cat", "") not in ("", "Trace"))
        cache = hta_time._cache = (raw, fractional, origin)
    _, fractional, origin = cache
    start, end = _rounded(event, fractional)
    return start - origin, end - start


def _rounded(event, fractional):
    ts, dur = float(event["ts"]), float(event["dur"])
    if not fractional:
        return int(ts), int(ts) + int(dur)
    return math.ceil(ts), math.floor(ts + dur)
