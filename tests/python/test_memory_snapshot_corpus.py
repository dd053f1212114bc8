"""`tuneprof.memory_snapshot(path)` on every memory snapshot of the shared corpus equals the CLI's
`memory --json SNAPSHOT`. Registered as a corpus test: skipped in one line where the corpus is missing, so
that here an empty list of snapshots is a failure, never a quiet pass."""

import glob
import os

import pytest

import tuneprof


def _shared_snapshots():
    shared = os.environ.get("TUNEPROF_SHARED", "")
    return sorted(glob.glob(os.path.join(shared, "traces", "memory-snapshots", "**", "*.pickle"), recursive=True))


def test_the_corpus_holds_snapshots():
    assert _shared_snapshots(), "no *.pickle under $TUNEPROF_SHARED/traces/memory-snapshots"


@pytest.mark.parametrize("path", _shared_snapshots())
def test_shared_snapshots_equal_the_cli(path, cli_json):
    assert tuneprof.memory_snapshot(path) == cli_json("memory", "--json", path)
