#!/usr/bin/python3
"""Runs info, profile, analyze and report on SQLite files built to hang or mislead the database importers,
and checks that each ends within seconds with what it says.

- A view over an endless recursive CTE where an Nsight Systems export has CUPTI_ACTIVITY_KIND_KERNEL, and
  nothing else readable: exit 1, one stderr line naming the file and the view.
- The same view as NVTX_EVENTS beside readable kernel and runtime tables: exit 0, the view named in a
  warning, the tables read.
- A kernel row whose start is TEXT: skipped and counted in a warning, never read as time 0 (which would
  stretch the trace's span to the epoch).
- A torch_npu database whose tables join into a billion rows (every task and every communication op
  sharing one connectionId): exit 1, `FILE: query over budget: TASK`.
- A virtual table (fts5) as the torch_npu TASK table beside a PYTORCH_API table: refused by name.

Errors: exit 1, nothing on stdout, exactly one stderr line. Never a signal, never over TIMEOUT_S.
Usage: sqlite_schema_check.py TUNEPROF_BINARY
"""
import json
import os
import sqlite3
import sys
import tempfile

from harness import Checker

TIMEOUT_S = 20
FAST_S = 8  # "within seconds" on a loaded 2-core machine

ENDLESS = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
           "SELECT x AS start, x + 1 AS \"end\", 0 AS deviceId, 7 AS streamId, x AS correlationId, "
           "0 AS globalPid, 1 AS demangledName, 1 AS shortName, 0 AS eventType, 0 AS globalTid FROM c")
COMMANDS = (["info"], ["profile"], ["analyze"], ["report"])


def build(path, statements):
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    for statement in statements:
        db.execute(statement)
    db.commit()
    db.close()


def nsys_tables(text_start=False):
    """A minimal Nsight Systems export: two kernels, two runtime calls (times in ns)."""
    start = "'236 ms'" if text_start else "1000"
    return [
        "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT)",
        "INSERT INTO StringIds VALUES (1, 'gemm_kernel'), (2, 'cudaLaunchKernel_v7000')",
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, \"end\" INTEGER, deviceId INTEGER, streamId INTEGER, "
        "correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER)",
        f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (236000000, 236500000, 0, 7, 1, 0, 1, 1), "
        f"(236600000, 237000000, 0, 7, 2, 0, 1, 1), ({start}, 238000000, 0, 7, 3, 0, 1, 1)",
        "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER, \"end\" INTEGER, globalTid INTEGER, "
        "correlationId INTEGER, nameId INTEGER)",
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (235900000, 235910000, 1, 1, 2), "
        "(236500000, 236510000, 1, 2, 2)",
    ]


def billion_row_join():
    """torch_npu tables whose LEFT JOIN is 20,000 x 20,000 rows: every task and op share connectionId 1."""
    return [
        "CREATE TABLE STRING_IDS(id INTEGER, value TEXT)",
        "INSERT INTO STRING_IDS VALUES (1, 'KERNEL_AICORE'), (2, 'hcom_allReduce_')",
        "CREATE TABLE TASK(startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER, "
        "globalTaskId INTEGER, globalPid INTEGER, taskType INTEGER, contextId INTEGER, streamId INTEGER, "
        "taskId INTEGER, modelId INTEGER)",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000) "
        "INSERT INTO TASK SELECT x * 1000, x * 1000 + 500, 0, 1, x, 1, 1, 0, 2, x, 0 FROM c",
        "CREATE TABLE COMMUNICATION_OP(opName INTEGER, startNs INTEGER, endNs INTEGER, connectionId INTEGER, "
        "groupName INTEGER, opId INTEGER, relay INTEGER, retry INTEGER, dataType INTEGER, algType INTEGER, "
        "count NUMERIC, opType INTEGER)",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000) "
        "INSERT INTO COMMUNICATION_OP SELECT 2, x * 1000, x * 1000 + 100, 1, 2, x, 0, 0, 0, 0, 1, 2 FROM c",
    ]


class SchemaChecker(Checker):
    """Each command on one crafted file, run in the temporary directory, judged and timed."""

    def __init__(self, binary, tmp):
        super().__init__(binary, TIMEOUT_S)
        self.tmp = tmp

    def timed(self, args):
        result = self.run(args, self.tmp)
        return result, ([f"took {self.last_seconds:.1f} s"] if result is not None and self.last_seconds > FAST_S else [])

    def args(self, command, path):
        return [*command, path, "-o", os.path.join(self.tmp, "report.html")] if command == ["report"] \
            else [*command, path]

    def expect_error(self, name, path, says):
        for command in COMMANDS:
            result, slow = self.timed(self.args(command, path))
            self.report(f"{command[0]} {name}", self.error_problems(result, 1, path, says) + slow, result)

    def expect_warning(self, name, path, says, check_json=None):
        result, slow = self.timed(["info", "--json", path])
        problems = self.process_problems(result) + slow
        if result is not None and not problems:
            code, out, err = result
            if code != 0:
                problems.append(f"exit {code}, expected 0")
            if any(s not in err for s in says):
                problems.append(f"stderr does not say {says}")
            if code == 0 and check_json is not None:
                problems += check_json(json.loads(out))
        self.report(f"info {name}", problems, result)
        for command in COMMANDS[1:]:
            result, slow = self.timed(self.args(command, path))
            problems = self.process_problems(result) + slow
            if not problems and result[0] != 0:
                problems.append(f"exit {result[0]}, expected 0")
            self.report(f"{command[0]} {name}", problems, result)


def span_at_most(limit_ns):
    """The trace's span (its start_ns .. end_ns) is at most `limit_ns`: a TEXT start read as 0 (or as the
    number it begins with) would stretch it back to the epoch."""
    def check(doc):
        spans = []

        def walk(value):
            if isinstance(value, dict):
                if isinstance(value.get("start_ns"), int) and isinstance(value.get("end_ns"), int):
                    spans.append(value["end_ns"] - value["start_ns"])
                for v in value.values():
                    walk(v)
            elif isinstance(value, list):
                for v in value:
                    walk(v)
        walk(doc)
        if not spans:
            return ["no start_ns / end_ns in the JSON"]
        return [] if max(spans) <= limit_ns else [f"span {max(spans)} ns, over {limit_ns}"]
    return check


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    with tempfile.TemporaryDirectory(prefix="tuneprof_sqlite_schema_") as tmp:
        c = SchemaChecker(os.path.abspath(sys.argv[1]), tmp)

        only_view = os.path.join(tmp, "endless_view.sqlite")
        build(only_view, ["CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT)",
                          f"CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS {ENDLESS}"])
        c.expect_error("an endless view as the only profiler table", only_view,
                       ["CUPTI_ACTIVITY_KIND_KERNEL is a view, not a table"])

        beside = os.path.join(tmp, "view_beside_tables.sqlite")
        build(beside, nsys_tables() + [f"CREATE VIEW NVTX_EVENTS AS {ENDLESS}"])
        c.expect_warning("an endless view beside readable tables", beside, ["NVTX_EVENTS is a view, not a table"])

        text_start = os.path.join(tmp, "text_start.sqlite")
        build(text_start, nsys_tables(text_start=True))
        c.expect_warning("a TEXT kernel start", text_start,
                         ["CUPTI_ACTIVITY_KIND_KERNEL: 1 row with a non-integer start skipped"],
                         span_at_most(10_000_000))

        join = os.path.join(tmp, "billion_row_join.db")
        build(join, billion_row_join())
        c.expect_error("a join of a billion rows", join, ["query over budget: TASK"])

        fts = os.path.join(tmp, "virtual_task.db")
        try:
            build(fts, ["CREATE VIRTUAL TABLE TASK USING fts5(startNs)",
                        "CREATE TABLE PYTORCH_API(startNs INTEGER, endNs INTEGER, globalTid INTEGER, "
                        "connectionId INTEGER, name INTEGER, type INTEGER)",
                        "INSERT INTO PYTORCH_API VALUES (1000, 2000, 1, NULL, NULL, 50001)"])
            c.expect_warning("a virtual TASK table", fts, ["TASK is a virtual table, not a stored one"])
        except sqlite3.OperationalError:
            print("skip a virtual TASK table: this Python's SQLite has no fts5")

    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
