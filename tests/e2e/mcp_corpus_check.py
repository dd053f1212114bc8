#!/usr/bin/python3
"""`tuneprof mcp` on the shared real traces of the other formats (a Nsight Systems export, a torch_npu
text rank and a Db rank): each tool's document equals the CLI's --json, query reads the Nsight run, and a
database or rank table reached through a symlink out of the allowed directory is left out (the SQLite
reader obeys the path rule as the JSON reader does).

Usage: mcp_corpus_check.py TUNEPROF_BINARY SHARED_DIR (run through needs_corpus.py)
"""
import glob
import json
import os
import sys
import tempfile

from harness import Checker
from mcp_check import Session


def main():
    binary, shared = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    traces = os.path.join(shared, "traces")
    c = Checker(binary, timeout_s=120)
    nsys = os.path.join(traces, "nsys", "h100_2gpu_1s.sqlite")
    text_rank = sorted(glob.glob(os.path.join(traces, "ascend", "**", "text", "level0", "rank1_ascend_pt"), recursive=True))
    db_rank = sorted(os.path.dirname(p) for p in glob.glob(
        os.path.join(traces, "ascend", "**", "ascend_pytorch_profiler*.db"), recursive=True))
    inputs = [nsys] + text_rank[:1] + [os.path.dirname(p) if p.endswith("ASCEND_PROFILER_OUTPUT") else p
                                       for p in db_rank[:1]]
    c.check("the corpus holds the inputs", len(inputs) == 3 and all(os.path.exists(p) for p in inputs), str(inputs))
    with tempfile.TemporaryDirectory() as scratch:
        allowed = os.path.join(scratch, "allowed", "run")
        os.makedirs(allowed)
        os.symlink(nsys, os.path.join(allowed, "linked.sqlite"))
        s = Session(binary, [traces, os.path.dirname(allowed)], dict(os.environ, TMPDIR=scratch))
        try:
            s.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
            for path in inputs:
                for tool in ("analyze", "profile", "comm", "memory"):
                    answer = s.call(tool, {"paths": [path]})
                    expected = c.run([tool, "--json", path])
                    c.check(f"{tool} {os.path.relpath(path, traces)}: the CLI's --json",
                            answer and not answer[1] and expected and answer[0] == expected[1],
                            str(answer)[:300])
            answer = s.call("query", {"paths": [nsys], "sql": "SELECT rank, count(*) FROM kernels GROUP BY rank"})
            rows = json.loads(answer[0])["rows"] if answer and not answer[1] else []
            c.check("query over the Nsight run: kernels per rank", len(rows) == 2 and all(n > 0 for _, n in rows),
                    str(answer)[:300])
        finally:
            c.check("the server ends with exit 0", s.close() == 0)
        # A server allowed only the directory holding the link: the database it points to is out of bounds.
        s = Session(binary, [os.path.dirname(allowed)], dict(os.environ, TMPDIR=scratch))
        try:
            s.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
            answer = s.call("analyze", {"paths": [allowed]})
            c.check("a database linked out of the allowed directory is not read",
                    answer and answer[1] and "is outside the allowed directories" in answer[0], str(answer)[:300])
        finally:
            c.check("the second server ends with exit 0", s.close() == 0)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
