"""The Python module on the bundled example: documents equal to the CLI's --json, tables against an
independent parse of the trace, errors as the CLI prints them, SQLite against the JSON, the Arrow stream
read by a minimal consumer written here (pyarrow is not in Debian 12), the notebook's cells."""

import ctypes
import gzip
import json
import sqlite3

import numpy as np
import pandas as pd
import pytest

import tuneprof
from conftest import EXAMPLE, SOURCE, hta_time, number


@pytest.fixture(scope="module")
def run():
    return tuneprof.load(str(EXAMPLE))


def _without_warnings(document):
    document = dict(document)
    document.pop("warnings", None)
    return document


@pytest.mark.parametrize("command", ["analyze", "advise", "profile", "memory", "comm"])
def test_documents_equal_the_cli(run, cli_json, command):
    assert getattr(run, command)() == cli_json(command, "--json", EXAMPLE)


def test_hta_semantics_equal_the_cli(run, cli_json):
    assert run.profile(semantics="hta") == cli_json("profile", "--semantics", "hta", "--json", EXAMPLE)


def test_compare_equals_the_cli(run, cli_json):
    other = tuneprof.load(EXAMPLE)
    document = tuneprof.compare(run, other, fail_if=["step_time>+5%"])
    assert document == cli_json("compare", "--json", "--fail-if", "step_time>+5%", EXAMPLE, EXAMPLE)
    assert tuneprof.compare(str(EXAMPLE), str(EXAMPLE)) == cli_json("compare", "--json", EXAMPLE, EXAMPLE)


def _independent_events():
    with gzip.open(EXAMPLE, "rt") as f:
        trace = json.load(f)
    return [e for e in trace["traceEvents"] if e.get("ph") == "X"]


def test_events_match_an_independent_parse(run):
    frame = run.events.to_pandas()
    raw = _independent_events()
    assert len(frame) == len(raw)
    ours = sorted(zip(frame.ts, frame.dur, frame.name.astype(str), frame.cat.astype(str), frame.pid, frame.tid))
    theirs = sorted((*hta_time(raw, e), e["name"], e.get("cat", ""), number(e["pid"]), number(e["tid"])) for e in raw)
    assert ours == theirs
    # HTA's stream and correlation: the args, -1 where an event has none.
    streams = sorted(int(e.get("args", {}).get("stream", -1)) for e in raw)
    assert sorted(frame.stream) == streams
    correlations = sorted(int(e.get("args", {}).get("correlation", -1)) for e in raw)
    assert sorted(frame.correlation) == correlations
    assert (frame.end == frame.ts + frame.dur).all()


def test_names_are_categoricals_interned_once(run):
    frame = run.events.to_pandas()
    assert isinstance(frame.name.dtype, pd.CategoricalDtype)
    names = run.events.categories("name")
    assert len(names) == len(set(names))
    assert set(names) == {e["name"] for e in _independent_events()}


@pytest.mark.parametrize("path", ["example", "gpu"])
def test_parent_and_depth_as_hta_call_stacks(path):
    """A range's parent is the innermost range of its thread or stream that contains it; device work
    launched by a host call hangs under that call. Row labels are `index`, as in HTA's frame."""
    frame = tuneprof.load(EXAMPLE if path == "example" else GPU_TRACE).events.to_pandas()
    assert (frame.index == frame["index"]).all()
    assert frame.ts.is_monotonic_increasing  # HTA's time order
    children = frame[frame.parent >= 0]
    assert len(children) > 0
    parents = frame.loc[children.parent.values]
    assert (children.depth.values == parents.depth.values + 1).all()
    same_thread = (parents.pid.values == children.pid.values) & (parents.tid.values == children.tid.values)
    inner, outer = children[same_thread], parents[same_thread]
    assert (outer.ts_ns.values <= inner.ts_ns.values).all()
    assert (outer.ts_ns.values + outer.dur_ns.values >= inner.ts_ns.values + inner.dur_ns.values).all()
    launched = children[~same_thread]
    assert (launched.index_correlation.values == launched.parent.values).all()
    assert (frame[frame.parent < 0].depth == 0).all()


GPU_TRACE = SOURCE / "tests" / "data" / "gpu" / "train_eager.pt.trace.json.gz"  # a real H200 run


@pytest.mark.parametrize("path", [EXAMPLE, GPU_TRACE], ids=["cpu", "gpu"])
def test_iteration_and_index_correlation(path):
    frame = tuneprof.load(path).events.to_pandas().set_index("index", drop=False)
    steps = frame[frame.name.astype(str).str.startswith("ProfilerStep#")]
    numbers = {int(n.split("#")[1]) for n in steps.name.astype(str)}
    assert set(frame.iteration) <= numbers | {-1}
    for _, step in steps.iterrows():
        inside = frame[(frame.stream < 0) & (frame.ts_ns >= step.ts_ns) & (frame.ts_ns < step.ts_ns + step.dur_ns)]
        assert (inside.iteration == int(step["name"].split("#")[1])).all()
    kernels = frame[(frame.kind.astype(str) == "kernel") & (frame.index_correlation >= 0)]
    if path == EXAMPLE:
        return  # CPU only: no kernels
    assert len(kernels) > 0
    launches = frame.loc[kernels.index_correlation.values]
    assert (launches.correlation.values == kernels.correlation.values).all()
    assert (launches.iteration.values == kernels.iteration.values).all()


def test_numpy_views_are_read_only_and_not_copied(run):
    arrays = run.events.to_numpy()
    assert arrays["ts_ns"].dtype == np.int64
    assert not arrays["ts_ns"].flags.writeable
    again = run.events.to_numpy()
    assert arrays["ts_ns"].ctypes.data == again["ts_ns"].ctypes.data


def test_steps_and_findings_tables_match_the_json(run):
    advise = run.advise()
    findings = run.findings.to_pandas()
    assert list(findings["id"].astype(str)) == [f["id"] for f in advise["findings"]]
    steps = run.steps.to_pandas()
    profile = run.profile()
    json_steps = profile["ranks"][0]["steps"]
    assert len(steps) == len(json_steps)
    assert list(steps.step) == [s["step"] for s in json_steps]


def test_errors_raise_the_cli_line(cli, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json")
    with pytest.raises(tuneprof.Error) as raised:
        tuneprof.load(bad)
    printed = cli("analyze", bad, expect_ok=False).stderr.strip().splitlines()[-1]
    assert str(raised.value) == printed
    with pytest.raises(tuneprof.Error):
        tuneprof.load(EXAMPLE, hardware="no such chip")
    with pytest.raises(tuneprof.Error):
        tuneprof.load(EXAMPLE).profile(semantics="nope")


def test_sqlite_export_matches_the_json(run, cli, tmp_path):
    ours = tmp_path / "py.db"
    run.to_sqlite(ours)
    theirs = tmp_path / "cli.db"
    cli("export", "--sqlite", theirs, EXAMPLE)
    advise = run.advise()
    for db in (ours, theirs):
        with sqlite3.connect(db) as con:
            meta = dict(con.execute("SELECT key, value FROM tuneprof_meta WHERE key = 'schema'"))
            assert meta["schema"] == "tuneprof.sqlite/1"
            ids = [r[0] for r in con.execute("SELECT id FROM findings ORDER BY \"order\"")]
            assert ids == [f["id"] for f in advise["findings"]]
            gains = [r[0] for r in con.execute("SELECT estimated_gain_ns FROM findings ORDER BY \"order\"")]
            assert gains == pytest.approx([f["estimated_gain_us"] * 1e3 for f in advise["findings"]], rel=1e-6, abs=1e3)
            events = con.execute("SELECT COUNT(*) FROM events").fetchone()[0]
            assert events == len(_independent_events())
            frame = pd.read_sql("SELECT * FROM utilizations", con)
            assert set(frame.name) == {u["name"] for u in advise["ranks"][0]["utilizations"]}
    with pytest.raises(tuneprof.Error):
        run.to_sqlite(tmp_path / "missing-dir" / "x.db")


# A minimal Arrow C stream consumer: the structs of the Arrow C data interface, read with ctypes.
class _Schema(ctypes.Structure):
    pass


_Schema._fields_ = [("format", ctypes.c_char_p), ("name", ctypes.c_char_p), ("metadata", ctypes.c_char_p),
                    ("flags", ctypes.c_int64), ("n_children", ctypes.c_int64),
                    ("children", ctypes.POINTER(ctypes.POINTER(_Schema))), ("dictionary", ctypes.POINTER(_Schema)),
                    ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(_Schema))), ("private_data", ctypes.c_void_p)]


class _Array(ctypes.Structure):
    pass


_Array._fields_ = [("length", ctypes.c_int64), ("null_count", ctypes.c_int64), ("offset", ctypes.c_int64),
                   ("n_buffers", ctypes.c_int64), ("n_children", ctypes.c_int64),
                   ("buffers", ctypes.POINTER(ctypes.c_void_p)), ("children", ctypes.POINTER(ctypes.POINTER(_Array))),
                   ("dictionary", ctypes.POINTER(_Array)),
                   ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(_Array))), ("private_data", ctypes.c_void_p)]


class _Stream(ctypes.Structure):
    pass


_Stream._fields_ = [("get_schema", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_Stream), ctypes.POINTER(_Schema))),
                    ("get_next", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_Stream), ctypes.POINTER(_Array))),
                    ("get_last_error", ctypes.c_void_p),
                    ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(_Stream))), ("private_data", ctypes.c_void_p)]


def _read_capsule(capsule):
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return ctypes.cast(get(capsule, b"arrow_array_stream"), ctypes.POINTER(_Stream)).contents


def _column_values(schema, array, rows):
    fmt = schema.format.decode()
    if fmt in ("l", "g"):
        kind = ctypes.c_int64 if fmt == "l" else ctypes.c_double
        data = ctypes.cast(array.buffers[1], ctypes.POINTER(kind))
        return [data[i] for i in range(rows)]
    assert fmt == "i" and schema.dictionary.contents.format == b"u"
    codes = ctypes.cast(array.buffers[1], ctypes.POINTER(ctypes.c_int32))
    dictionary = array.dictionary.contents
    offsets = ctypes.cast(dictionary.buffers[1], ctypes.POINTER(ctypes.c_int32))
    data = ctypes.cast(dictionary.buffers[2], ctypes.POINTER(ctypes.c_char))
    strings = [bytes(data[offsets[k]:offsets[k + 1]]).decode() for k in range(dictionary.length)]
    return [strings[codes[i]] for i in range(rows)]


@pytest.mark.parametrize("table", ["events", "kernels", "steps", "findings", "utilizations"])
def test_arrow_stream_schema_and_contents(run, table):
    source = run.table(table)
    capsule = source.__arrow_c_stream__()
    stream = _read_capsule(capsule)
    schema = _Schema()
    assert stream.get_schema(ctypes.byref(stream), ctypes.byref(schema)) == 0
    assert schema.format == b"+s"
    names = [schema.children[i].contents.name.decode() for i in range(schema.n_children)]
    assert names == source.column_names
    batch = _Array()
    assert stream.get_next(ctypes.byref(stream), ctypes.byref(batch)) == 0
    assert batch.length == len(source)
    frame = source.to_pandas()
    for i, name in enumerate(names):
        values = _column_values(schema.children[i].contents, batch.children[i].contents, batch.length)
        expected = frame[name].astype(object if isinstance(frame[name].dtype, pd.CategoricalDtype) else frame[name].dtype)
        assert values == pytest.approx(list(expected), nan_ok=True) if expected.dtype == float else values == list(expected)
    batch.release(ctypes.byref(batch))
    end = _Array()
    assert stream.get_next(ctypes.byref(stream), ctypes.byref(end)) == 0
    assert not end.release  # the end of the stream
    schema.release(ctypes.byref(schema))
    stream.release(ctypes.byref(stream))


def test_repr_html_shows_the_report(run):
    page = run._repr_html_()
    assert page.startswith("<iframe srcdoc=")
    for section in ("summary", "breakdown", "findings"):
        assert f"id=&quot;{section}&quot;" in page


def test_document_frames(run):
    advise = run.advise()
    frame = advise.frame("findings")
    assert list(frame["id"]) == [f["id"] for f in advise["findings"]]


def test_notebook_cells_run(tmp_path, monkeypatch):
    """examples/notebook.ipynb's code cells, run in order in one namespace from the repository root."""
    notebook = json.loads((SOURCE / "examples" / "notebook.ipynb").read_text())
    monkeypatch.chdir(SOURCE)
    namespace = {}
    cells = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert len(cells) >= 4
    for cell in cells:
        exec(compile("".join(cell["source"]), "notebook.ipynb", "exec"), namespace)
    assert "verdict" in namespace


def test_loads_show_progress_on_python_stderr(capsys, monkeypatch):
    """Loads over a second write a progress line to sys.stderr, which a notebook shows under the cell; the
    delay is the CLI's (TUNEPROF_PROGRESS_DELAY_MS, 0 here so that the small example shows it)."""
    monkeypatch.setenv("TUNEPROF_PROGRESS_DELAY_MS", "0")
    tuneprof.load(GPU_TRACE)
    err = capsys.readouterr().err
    assert "loading train_eager.pt.trace.json.gz" in err
    assert err.endswith("\n")
    monkeypatch.delenv("TUNEPROF_PROGRESS_DELAY_MS")
    tuneprof.load(EXAMPLE)
    assert "loading" not in capsys.readouterr().err  # quick loads stay quiet


def test_module_view_equals_the_cli(run, cli_json):
    assert run.profile(by="module") == cli_json("profile", "--by", "module", "--json", EXAMPLE)
    assert run.modules == [{"rank": r["rank"], **m} for r in run.profile(by="module")["ranks"] for m in r["modules"]]
    with pytest.raises(tuneprof.Error, match="by: layer not in"):
        run.profile(by="layer")
