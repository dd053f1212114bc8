#!/usr/bin/python3
"""Every command's `--json` output against its documented schema (docs/json/<command>.md).

- Every subcommand whose help offers --json has a page in docs/json/.
- Each page names its schema (`Schema: \`tuneprof.<command>/<version>\``) and the output's "schema" equals it.
- Each page's tables (`### top level`, `### \`path\``) list keys with JSON types (notation: docs/json/README.md).
  Every output is walked key by key: a key path no table documents fails, a value whose type is not one
  of its documented types fails (null only where documented), an element of an array of scalars whose
  type is not the documented one fails, and a documented key that is missing fails unless it is
  documented as `optional`.
- The outputs cover every input kind: Kineto GPU traces (one rank, two ranks, `--semantics hta`), Kineto
  CPU traces (memory events, gloo DDP, generation markers), torch_npu text and .db rank directories (one
  rank and a two-rank parent), torch_npu Text without a trace_view, nsys .sqlite exports, and compare of
  before/after pairs (with throughput, generation metrics, --advice and a gate).
One line per offending path: `FAIL: <command> <input>: <path>: <problem>`. Documented key paths that no
output exercised are listed after the failures, as information (rules that did not fire on these inputs).
Usage: json_schema_check.py TUNEPROF SHARED_DIR [SOURCE_DIR]  (SOURCE_DIR: the repository, default this script's)
"""
import concurrent.futures
import fnmatch
import json
import os
import pathlib
import re
import sys
import tempfile

from harness import run

SCALARS = {"string", "integer", "number", "boolean", "null"}
TYPES = SCALARS | {"array", "object"}

failures = []
reported = set()


def fail(message, key=None):
    """Records a failure once per `key` (default: the message)."""
    key = key or message
    if key not in reported:
        reported.add(key)
        failures.append(message)


def json_commands(tuneprof):
    """Subcommands whose help lists --json."""
    help_text = run(tuneprof, "--help").stdout
    parts = re.split(r"^subcommands:", help_text, flags=re.M | re.I)
    if len(parts) != 2:
        fail("tuneprof --help lists no subcommands")
    section = parts[-1]
    names = re.findall(r"^\s{2}([a-z][a-z-]*)\s", section, re.M)
    return [n for n in names if "--json" in run(tuneprof, n, "--help").stdout]


class Row:
    """One documented key: its JSON types, whether it may be absent, the element type of a scalar array."""

    def __init__(self, key, cell, where):
        self.key = key
        text = cell.strip()
        self.optional = text.startswith("optional ")
        if self.optional:
            text = text[len("optional "):]
        self.types, self.element = [], None
        for alternative in (t.strip() for t in text.split(" or ")):
            m = re.fullmatch(r"array of ([a-z]+)", alternative)
            if m:
                self.types.append("array")
                self.element = m.group(1)
                if self.element not in SCALARS:
                    fail(f"{where}: `{key}`: array of {self.element}: elements are one of {sorted(SCALARS)}")
            elif alternative in TYPES:
                self.types.append(alternative)
            else:
                fail(f"{where}: `{key}`: unknown type {alternative!r}")


class Page:
    """A page's schema, tables ({table path: {key: Row}}) and aliases ({table path: the path it shares tables with})."""

    def __init__(self, path):
        self.schema, self.tables, self.aliases = None, {}, {}
        own, current = set(), None
        for number, line in enumerate(path.read_text().splitlines(), 1):
            where = f"{path.name}:{number}"
            m = re.match(r"Schema: `([^`]+)`", line)
            if m:
                self.schema = m.group(1)
            m = re.match(r"Tables: those of \[([a-z]+\.md)\]", line)
            if m:  # analyze.md: advise.md's tables, then its own rows over them
                other = Page(path.parent / m.group(1))
                self.tables = {p: dict(t) for p, t in other.tables.items()}
                self.aliases = dict(other.aliases)
            m = re.match(r"### (.+)", line)
            if m:
                title = m.group(1).strip()
                current = "" if title == "top level" else title.strip("`")
                if current in own:
                    fail(f"{where}: table `{current}` twice")
                own.add(current)
                self.tables.setdefault(current, {})
                continue
            m = re.match(r"Same keys as `([^`]+)`", line)
            if m and current is not None:
                self.aliases[current] = m.group(1)
                continue
            m = re.match(r"\| `([^`]*)` \| ([^|]+) \|", line)
            if m and current is not None:
                self.tables[current][m.group(1)] = Row(m.group(1), m.group(2), where)
            elif line.startswith("| `") and current is not None:
                fail(f"{where}: a row the check cannot read: {line[:80]}")

    def table(self, path):
        """(documented path, table or None) of the object at table path `path`: its own table, else the one
        its longest aliased prefix shares (`ranks[].total` -> `ranks[].steps[]`)."""
        for _ in range(10):
            best = max((a for a in self.aliases if path == a or path.startswith(a + ".") or path.startswith(a + "[")),
                       key=len, default=None)
            if best is None:
                return path, self.tables.get(path)
            path = self.aliases[best] + path[len(best):]
        return path, None

    def child(self, path, key):
        """The table path of the value under `key` (a row key or pattern) of the object documented at `path`:
        `path.key`, or `path.*` when only that is documented (`metrics.step_time_us` -> `metrics.*`)."""
        exact = join(path, key)
        if self.table(exact)[1] is None and self.table(exact + "[]")[1] is None:
            wildcard = join(path, "*")
            if self.table(wildcard)[1] is not None or self.table(wildcard + "[]")[1] is not None:
                return wildcard
        return exact


def type_of(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def describe(value):
    return "null" if value is None else f"{type_of(value)} {json.dumps(value)[:40]}"


def type_ok(value, types):
    t = type_of(value)
    return t in types or (t == "integer" and "number" in types)


def join(path, key):
    return f"{path}.{key}" if path else key


class Validator:
    """Walks one output against one page. Paths in messages are the output's, with `[]` for array elements;
    table paths are the page's (aliases and `*` resolved)."""

    def __init__(self, label, page, seen):
        self.label, self.page, self.seen = label, page, seen

    def problem(self, path, message):
        """One line per output and path, the first problem found there."""
        fail(f"{self.label}: {path or 'top level'}: {message}", (self.label, path))

    @staticmethod
    def row_for(table, key):
        """The row documenting `key`: its own, else the first pattern (`*`, `setting_*`) that matches it."""
        if key in table:
            return table[key]
        for pattern, row in table.items():
            if "*" in pattern and fnmatch.fnmatchcase(key, pattern):
                return row
        return None

    def value(self, value, row, path, table_path):
        """One documented value: its type, then what it holds."""
        if not type_ok(value, row.types):
            self.problem(path, f"{describe(value)} is not {' or '.join(row.types)}")
        elif isinstance(value, dict):
            self.object(value, path, table_path)
        elif isinstance(value, list):
            self.array(value, row, path, table_path)

    def array(self, items, row, path, table_path):
        element_path, table = self.page.table(table_path + "[]")
        for item in items:
            if isinstance(item, dict):
                if table is None:
                    self.problem(path + "[]", "array of objects without a documented element table")
                    return
                self.object(item, path + "[]", table_path + "[]")
            elif isinstance(item, list):  # a tuple: positions `[0]`, `[1]` ... in the element table
                if table is None:
                    self.problem(path + "[]", "array of arrays without a documented element table")
                    return
                for i, member in enumerate(item):
                    member_row = table.get(f"[{i}]")
                    if member_row is None:
                        self.problem(f"{path}[][{i}]", "undocumented position")
                        continue
                    self.seen.add((element_path, f"[{i}]"))
                    self.value(member, member_row, f"{path}[][{i}]", f"{table_path}[][{i}]")
                for position, member_row in table.items():
                    m = re.fullmatch(r"\[(\d+)\]", position)
                    if m and int(m.group(1)) >= len(item) and not member_row.optional:
                        self.problem(f"{path}[]{position}", "documented position missing")
            elif row.element is None:
                self.problem(path, f"array of {type_of(item)} documented without its element type (`array of T`)")
                return
            elif not type_ok(item, [row.element]):
                self.problem(path + "[]", f"element {describe(item)} is not {row.element}")
                return

    def object(self, node, path, table_path):
        documented, table = self.page.table(table_path)
        if table is None:
            for key, value in node.items():
                self.problem(join(path, key), f"undocumented key path ({type_of(value)}; no table `{table_path}`)")
            return
        for key, value in node.items():
            row = self.row_for(table, key)
            if row is None:
                self.problem(join(path, key), f"undocumented key path ({type_of(value)})")
                continue
            self.seen.add((documented, row.key))
            self.value(value, row, join(path, key), self.page.child(table_path, row.key))
        for key, row in table.items():
            if "*" not in key and not key.startswith("[") and key not in node and not row.optional:
                self.problem(join(path, key), "documented key missing")


def runs_for(command, shared, advice_file):
    """(label, arguments) per output to check: every input kind, chosen so that every key path is emitted."""
    traces = shared / "traces"
    kineto = traces / "kineto" / "hta"
    cpu = traces / "torch-cpu" / "kineto26"
    pytorch = traces / "ascend" / "msinsight" / "test" / "data" / "pytorch"
    msinsight = traces / "ascend" / "msinsight" / "server" / "src" / "test" / "test_data"
    nsys = traces / "nsys"
    inputs = [
        kineto / "nccl_parser_config" / "nccl_data.json.gz",  # Kineto GPU: NCCL collectives, one rank
        kineto / "trace_filter",                               # Kineto GPU: two ranks
        cpu / "cnn_train.json.gz",                             # Kineto CPU: [memory] events, steps
        cpu / "generate_kv.json.gz",                           # Kineto CPU: generation markers
        cpu / "ddp_ws4_rank0.json.gz",                         # Kineto CPU: gloo collectives, no steps
        pytorch / "text" / "level1" / "rank0_ascend_pt",       # torch_npu text: one rank directory
        pytorch / "text" / "level0" / "rank0_ascend_pt",       # torch_npu text, Level0: no PMU, no communication.json
        pytorch / "text" / "level2",                           # torch_npu text: two rank directories
        pytorch / "db" / "level1" / "rank0_ascend_pt",         # torch_npu .db: one rank directory
        pytorch / "db" / "level1",                             # torch_npu .db: two rank directories
        msinsight,                                             # torch_npu text, no trace_view: RDMA links
        nsys / "h100_2gpu_1s.sqlite",                          # nsys: two GPUs, pageable copies
        nsys / "rtx3080_mock.sqlite",                          # nsys: TARGET_INFO_GPU
        kineto / "critical_path" / "alexnet" / "benchmark_result_2869224_1695835535_trace.json.gz",  # no steps, gaps
        kineto / "critical_path" / "cuda_event_sync_multi_stream" / "event_sync_trace.json.gz",  # FP32 GEMMs on A100
        traces / "ascend" / "mstt" / "profiler" / "msprof_analyze" / "test" / "ut" / "advisor" / "advisor_backend" /
        "timeline_advice" / "trace_view.json",                 # a bare torch_npu trace_view.json: DataLoader
        traces / "torch-cpu" / "legacy113" / "cnn_eval.json.gz",  # legacy autograd-profiler JSON
    ]
    runs = [[i] for i in inputs]
    if command == "profile":
        runs += [["--semantics", "hta", kineto / "nccl_parser_config" / "nccl_data.json.gz"],
                 ["--semantics", "hta", kineto / "trace_filter"],
                 ["--model-params", "1e6", "--kv-bytes-per-token", "4096", "--context-tokens", "140",
                  cpu / "generate_kv.json.gz"],
                 ["--by", "module", traces / "kineto" / "tracelens" / "h100" / "Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"],
                 ["--by", "module", pytorch / "text" / "level1" / "rank0_ascend_pt"]]
    if command == "comm":  # four gloo ranks: the slow-rank outlier tests run (Dixon's Q needs 4 values)
        runs.append([cpu / f"ddp_ws4_rank{r}.json.gz" for r in range(4)])
    if command == "compare":
        runs = [[cpu / "cnn_eval.json.gz", cpu / "cnn_eval_fused.json.gz", "--advice", advice_file,
                 "--samples-per-step", "32", "--tokens-per-step", "4096"],
                [cpu / "generate_nokv.json.gz", cpu / "generate_kv.json.gz", "--fail-if", "step_time>+3%",
                 "--fail-if", "ttft>+5%"],
                [kineto / "trace_diff" / "control" / "control.json.gz", kineto / "trace_diff" / "test" / "test.json.gz"],
                [pytorch / "text" / "level1" / "rank0_ascend_pt", pytorch / "db" / "level1" / "rank0_ascend_pt"],
                [nsys / "h100_2gpu_1s.sqlite", nsys / "h100_2gpu_mfu_before.sqlite", "--fail-if", "peak_memory>+1%",
                 "--fail-if", "ttft>+5%"]]  # no generation markers: a gate that resolves to no metric
    labelled = []
    for args in runs:
        label = " ".join(str(a).replace(str(traces) + "/", "") if isinstance(a, pathlib.Path) else
                         ("ADVICE.json" if a == advice_file else str(a)) for a in args)
        labelled.append((label, args))
    return labelled


def main():
    tuneprof, shared = sys.argv[1], pathlib.Path(sys.argv[2])
    source = pathlib.Path(sys.argv[3]) if len(sys.argv) > 3 else pathlib.Path(__file__).resolve().parents[2]
    docs = source / "docs" / "json"
    commands = json_commands(tuneprof)
    if len(commands) < 7:
        fail(f"only {commands} offer --json")
    with tempfile.TemporaryDirectory() as tmp:
        advice_file = str(pathlib.Path(tmp) / "advice.json")
        cpu = shared / "traces" / "torch-cpu" / "kineto26"
        advice = run(tuneprof, "advise", cpu / "cnn_eval.json.gz", "--json")
        pathlib.Path(advice_file).write_text(advice.stdout)
        pages, jobs = {}, []
        for command in commands:
            page = docs / f"{command}.md"
            if not page.exists():
                fail(f"{command}: no docs/json/{command}.md")
                continue
            parsed = Page(page)
            if parsed.schema is None or not parsed.schema.startswith(f"tuneprof.{command}/"):
                fail(f"{page}: schema line {parsed.schema}")
            if "schema" not in parsed.tables.get("", {}):
                fail(f"{page}: no top-level table with `schema`")
            pages[command] = parsed
            jobs += [(command, label, args) for label, args in runs_for(command, shared, advice_file)]
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            results = list(pool.map(lambda job: run(tuneprof, job[0], *job[2], "--json"), jobs))
    seen = {command: set() for command in pages}
    validated = 0
    for (command, label, args), result in zip(jobs, results):
        name = f"{command} {label}"
        if result.returncode not in (0, 3):
            fail(f"{name}: exit {result.returncode}: {result.stderr.strip()[:200]}")
            continue
        try:
            doc = json.loads(result.stdout)
        except json.JSONDecodeError as e:
            fail(f"{name}: not JSON: {e}")
            continue
        page = pages[command]
        if doc.get("schema") != page.schema:
            fail(f"{name}: schema: {doc.get('schema')!r} != documented {page.schema!r}")
        Validator(name, page, seen[command]).object(doc, "", "")
        validated += 1
    print(f"{validated} outputs of {len(pages)} commands validated against docs/json")
    for message in failures:
        print("FAIL:", message)
    noted = {}
    for command, page in pages.items():
        unseen = [join(path, key) for path, table in page.tables.items() for key in table
                  if path not in page.aliases and (path, key) not in seen[command]]
        if unseen and tuple(unseen) in noted:
            print(f"note: {command}: the same {len(unseen)} paths as {noted[tuple(unseen)]}")
        elif unseen:
            noted[tuple(unseen)] = command
            print(f"note: {command}: {len(unseen)} documented key paths not emitted on these inputs: {', '.join(unseen)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
