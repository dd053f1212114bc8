"""`tuneprof.memory_snapshot(path)`: the snapshot document as a dict, equal to the CLI's
`memory --json SNAPSHOT`, on a generated snapshot; errors raise tuneprof.Error with the CLI's line.
(test_memory_snapshot_corpus.py checks the shared snapshots.)"""

import pickle

import pytest

import tuneprof

MIB = 1 << 20


def _snapshot(path):
    frames = [{"name": "forward", "filename": "/home/u/model.py", "line": 40}]
    step = [{"name": "step", "filename": "/home/u/optim/adam.py", "line": 77}]
    events = [
        {"action": "alloc", "addr": 1 << 30, "size": 100 * MIB, "stream": 0, "time_us": 0, "frames": frames},
        {"action": "alloc", "addr": 2 << 30, "size": MIB, "stream": 0, "time_us": 10, "frames": step},
        {"action": "free_completed", "addr": 2 << 30, "size": MIB, "stream": 0, "time_us": 20, "frames": []},
    ]
    with open(path, "wb") as f:
        pickle.dump({"segments": [], "device_traces": [events], "allocator_settings": {}}, f, protocol=4)
    return path


def test_generated_snapshot_equals_the_cli(tmp_path, cli_json):
    path = _snapshot(tmp_path / "snap.pickle")
    document = tuneprof.memory_snapshot(path)
    assert isinstance(document, dict)
    assert document == cli_json("memory", "--json", path)
    assert document["schema"] == "tuneprof.memory_snapshot/1"
    strategy = document["devices"][0]["strategies"][0]
    assert (strategy["category"], strategy["bytes"], strategy["holds_peak"]) == ("activations", 100 * MIB, True)
    assert len(document.frame("devices.0.strategies")) == 1


def test_not_a_snapshot_raises_the_cli_line(tmp_path):
    path = tmp_path / "list.pickle"
    path.write_bytes(pickle.dumps([1, 2, 3], protocol=4))
    with pytest.raises(tuneprof.Error, match="not a PyTorch memory snapshot"):
        tuneprof.memory_snapshot(str(path))
    with pytest.raises(tuneprof.Error, match="(?i)no such file"):
        tuneprof.memory_snapshot(str(tmp_path / "missing.pickle"))
