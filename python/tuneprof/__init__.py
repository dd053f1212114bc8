"""tuneprof from Python: load profiler output once, get every analysis as the CLI's JSON and every table
as pandas / numpy / Arrow.

    import tuneprof
    run = tuneprof.load("examples/tiny_train.pt.trace.json.gz")
    run.analyze()["dominant_bottleneck"]
    run.events.to_pandas()          # HTA's event columns (ts, dur, name, cat, pid, tid, stream, ...)
    tuneprof.compare(before, after)["metrics"]

    with tuneprof.capture("prof/") as prof:   # inside a training script: the profiler tuneprof needs
        for batch in loader:
            train_step(batch)
            prof.step()

docs/python.md describes the API; docs/json/ the documents; docs/sqlite-schema.md the tables.
"""

from __future__ import annotations

import html as _html
import json as _json
import os as _os
import importlib as _importlib
from typing import Iterable, Optional, Sequence, Union

from .capture import Capture, capture, trace_handler

__all__ = ["Error", "Run", "Table", "Document", "load", "compare", "memory_snapshot", "table_names", "capture",
           "trace_handler", "Capture"]
__version__ = "0.1.0"


def _compiled():
    """The compiled engine, imported on first use: `import tuneprof` must work inside any training
    environment (for capture), where the module may not be built for that interpreter."""
    return _importlib.import_module("._core", __name__)


def __getattr__(name):
    # Error is the compiled module's exception class (every failure raises it, with the line the CLI
    # prints); it is looked up here so that naming it is what loads the module.
    if name in ("Error", "_core"):
        return getattr(_compiled(), "Error") if name == "Error" else _compiled()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

PathLike = Union[str, "_os.PathLike[str]"]


def table_names() -> list:
    """The tables a Run has, in the order `export --sqlite` writes them."""
    return list(_compiled().table_names())


class Table:
    """One table of a run, built once in C++; numpy arrays view its buffers (read-only, no copies)."""

    def __init__(self, core_table):
        self._core = core_table
        self._columns = None

    @property
    def name(self) -> str:
        return self._core.name

    def __len__(self) -> int:
        return self._core.num_rows

    def __repr__(self) -> str:
        return f"<tuneprof.Table {self.name}: {len(self)} rows, columns {self.column_names}>"

    def _cols(self):
        if self._columns is None:
            self._columns = self._core.columns()
        return self._columns

    @property
    def column_names(self) -> list:
        return [name for name, _, _, _ in self._cols()]

    def to_numpy(self) -> dict:
        """{column: numpy array}; string columns are their int32 codes, see categories()."""
        return {name: values for name, _, values, _ in self._cols()}

    def categories(self, column: str) -> list:
        """The distinct strings of a string column, indexed by its codes."""
        for name, kind, _, categories in self._cols():
            if name == column:
                if kind != "category":
                    raise _compiled().Error(
                        f"tuneprof: error: column {column} of {self.name} holds numbers, not strings")
                return list(categories)
        raise _compiled().Error(f"tuneprof: error: no column {column} in table {self.name}")

    def to_pandas(self):
        """A pandas DataFrame; string columns are categoricals over the strings interned once."""
        import pandas as pd

        data = {}
        for name, kind, values, categories in self._cols():
            if kind == "category":
                data[name] = pd.Categorical.from_codes(values, categories=pd.Index(categories, dtype=object))
            else:
                data[name] = values
        frame = pd.DataFrame(data, copy=False)
        if self.name == "events" and len(frame):
            # As HTA's frame: a row's label is its `index`, so that df.loc[row.parent] and
            # df.loc[row.index_correlation] find the row they name; (rank, index) over several ranks.
            if frame["rank"].nunique() == 1:
                frame.index = pd.Index(frame["index"].to_numpy(), name=None)
            else:
                frame.index = pd.MultiIndex.from_arrays([frame["rank"].to_numpy(), frame["index"].to_numpy()],
                                                        names=["rank", None])
        return frame

    def __arrow_c_stream__(self, requested_schema=None):
        """The Arrow PyCapsule stream interface: polars.from_arrow / pyarrow.table / duckdb read it."""
        return self._core.__arrow_c_stream__(requested_schema)


class Document(dict):
    """A command's JSON document (the same keys as its --json), with DataFrames of its lists."""

    def frame(self, key: str):
        """pandas DataFrame of the list at `key` (dotted for nested keys: "ranks.0.utilizations"); an object
        of objects (compare's "metrics") gives one row per key."""
        import pandas as pd

        node = self
        for part in key.split("."):
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, dict):
            if node and all(isinstance(v, dict) for v in node.values()):
                return pd.DataFrame.from_dict(node, orient="index")
            node = [node]
        return pd.json_normalize(node)


def _document(text: str) -> Document:
    return Document(_json.loads(text))


def _paths(path_or_paths) -> list:
    if isinstance(path_or_paths, (str, bytes, _os.PathLike)):
        return [_os.fsdecode(path_or_paths)]
    return [_os.fsdecode(p) for p in path_or_paths]


class Run:
    """A loaded run (one rank per trace, as the CLI reads the same paths). Analyses run once, on first use."""

    _TABLES = ("events", "ranks", "steps", "kernels", "operators", "collectives", "memory_events", "findings",
               "utilizations")

    def __init__(self, core_run):
        self._core = core_run
        self._tables = {}
        self._modules = None

    def __repr__(self) -> str:
        return f"<tuneprof.Run of {len(self)} rank(s) from {', '.join(self.paths)}>"

    def __len__(self) -> int:
        return self._core.rank_count

    @property
    def paths(self) -> list:
        return list(self._core.paths)

    @property
    def warnings(self) -> list:
        """What the input lacked or what was left out, as the CLI warns on stderr."""
        return list(self._core.warnings)

    def table(self, name: str) -> Table:
        if name not in self._tables:
            self._tables[name] = Table(self._core.table(name))
        return self._tables[name]

    events = property(lambda self: self.table("events"), doc="Interval events, HTA's columns (docs/python.md).")
    ranks = property(lambda self: self.table("ranks"), doc="One row per rank: path, format, device, chip.")
    steps = property(lambda self: self.table("steps"), doc="Each step's device time and its split.")
    kernels = property(lambda self: self.table("kernels"), doc="Device kernels with their launch configuration.")
    operators = property(lambda self: self.table("operators"), doc="Operators by device (or host self) time.")
    collectives = property(lambda self: self.table("collectives"), doc="Collectives with sizes and groups.")
    memory_events = property(lambda self: self.table("memory_events"), doc="Allocator events.")
    findings = property(lambda self: self.table("findings"), doc="The advisor's findings, largest gain first.")
    utilizations = property(lambda self: self.table("utilizations"), doc="The three utilizations per rank.")

    def analyze(self) -> Document:
        """`tuneprof analyze --json`: the step split, utilizations, verdict and top strategies."""
        return _document(self._core.analyze_json())

    def advise(self) -> Document:
        """`tuneprof advise --json`: every finding with evidence and estimated gain."""
        return _document(self._core.advise_json())

    def profile(self, semantics: str = "tuneprof", hardware: str = "", hardware_file: str = "",
                by: str = "") -> Document:
        """`tuneprof profile --json` (semantics="hta" adds HTA's breakdowns, computed as HTA does; by="module"
        adds each rank's modules and repeated layers, as `profile --by module --json`)."""
        return _document(self._core.profile_json(semantics, hardware, hardware_file, by))

    @property
    def modules(self) -> list:
        """Time per module of the model, every rank's, as `profile --by module --json` gives them: one dict
        per module (docs/json/profile.md, `ranks[].modules[]`) with its rank first; `pd.DataFrame(run.modules)`
        makes a table of it. Empty when the traces hold no nn.Module / record_function / NVTX / mstx ranges."""
        if self._modules is None:
            document = self.profile(by="module")
            self._modules = [{"rank": r["rank"], **m} for r in document["ranks"] for m in r["modules"]]
        return [dict(m) for m in self._modules]

    def memory(self, hardware: str = "", hardware_file: str = "") -> Document:
        """`tuneprof memory --json`."""
        return _document(self._core.memory_json(hardware, hardware_file))

    def comm(self) -> Document:
        """`tuneprof comm --json`."""
        return _document(self._core.comm_json())

    def report_html(self) -> str:
        """The HTML report `tuneprof report` writes, as one self-contained document."""
        return self._core.html()

    def to_sqlite(self, path: PathLike) -> None:
        """Writes every table to a SQLite database (docs/sqlite-schema.md), as `tuneprof export --sqlite`."""
        self._core.to_sqlite(_os.fspath(path))

    def _repr_html_(self) -> str:
        # The report's own CSS stays inside a frame and does not restyle the notebook.
        page = _html.escape(self.report_html(), quote=True)
        return f'<iframe srcdoc="{page}" style="width:100%;height:720px;border:1px solid #ddd"></iframe>'


def load(path_or_paths: Union[PathLike, Sequence[PathLike]], *, config: str = "", hardware: str = "",
         hardware_file: str = "") -> Run:
    """Imports trace files or directories (Kineto, torch_npu text or .db, Nsight Systems SQLite), one rank per
    trace, as every CLI command reads them. Loads over a second show their progress on stderr."""
    flags = _compiled().AnalysisFlags(config, hardware, hardware_file)
    return Run(_compiled().Run(_paths(path_or_paths), flags))



def memory_snapshot(path: PathLike) -> Document:
    """`tuneprof memory --json SNAPSHOT` on a PyTorch allocator snapshot (torch.cuda.memory._dump_snapshot,
    torch_npu's equivalent): the dump, the trace's peak by category and frame, leak suspects, strategies.
    The pickle is read by tuneprof's own reader: nothing in the file runs."""
    return _document(_compiled().memory_snapshot_json(_os.fsdecode(path)))

def compare(before: Union[Run, PathLike], after: Union[Run, PathLike], *, tokens_per_step: Optional[float] = None,
            samples_per_step: Optional[float] = None, alpha: float = 0.05,
            fail_if: Iterable[str] = (), rank: Optional[int] = None) -> Document:
    """`tuneprof compare --json BEFORE AFTER`: each metric's change with its significance, and the gates, over
    the ranks both sides hold; `rank`: that rank alone (`--rank N`)."""
    runs = [side if isinstance(side, Run) else load(side) for side in (before, after)]
    return _document(_compiled().compare_json(runs[0]._core, runs[1]._core, tokens_per_step, samples_per_step, alpha,
                                        list(fail_if), rank))
