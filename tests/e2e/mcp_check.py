#!/usr/bin/python3
"""`tuneprof mcp DIR...` spoken to as a plain JSON-RPC client over pipes (no MCP library), on the committed
test traces and on directories generated here.

- Lifecycle: initialize (the version asked for when known, else the newest the server speaks; tools
  capability; serverInfo), notifications get no answer, ping, tools/list with an inputSchema per tool.
- tools/call for every tool answers with exactly what the CLI's --json prints for the same arguments
  (analyze, advise, profile, comm, memory, compare); query's rows equal Python's sqlite3 over the database
  `export --sqlite` writes, are cut at max_rows, and only reading is allowed, within a bounded time.
- Paths: outside every DIR (absolute, `..`, a symlink out, a directory whose name only starts like an
  allowed one) is a tool error naming the rule; a file a directory reaches through a symlink out is left
  out with a warning; relative paths are taken in the first DIR.
- Protocol faults: not JSON, a batch, no jsonrpc, an id of the wrong type, an unknown method, params that
  are no object, an unknown tool, a message over the size limit, deep nesting: each gets its JSON-RPC error
  and the server answers the next request.
- The end: query's databases leave the disk as soon as they are open; closing stdin ends the server
  (exit 0); a DIR that is no directory is one error line.

Usage: mcp_check.py TUNEPROF_BINARY TESTS_DATA_DIR
"""
import json
import os
import select
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

from harness import Checker

TIMEOUT_S = 60


class Session:
    """One server process; requests are written a line each and replies read a line each."""

    def __init__(self, binary, directories, env):
        self.stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen([binary, "mcp", *directories], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self.stderr, env=env)
        self.next_id = 100

    def send_line(self, data):
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def read(self, timeout_s=TIMEOUT_S):
        """The next reply, parsed, or None when none comes within the time."""
        ready, _, _ = select.select([self.process.stdout], [], [], timeout_s)
        if not ready:
            return None
        line = self.process.stdout.readline()
        return json.loads(line) if line else None

    def request(self, method, params=None):
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send_line(json.dumps(message).encode())
        return self.read()

    def call(self, name, arguments):
        """(text, isError) of a tools/call, or None on a protocol error or no answer."""
        reply = self.request("tools/call", {"name": name, "arguments": arguments})
        if not reply or "result" not in reply:
            return None
        content = reply["result"]["content"]
        return content[0]["text"], reply["result"].get("isError", False)

    def close(self):
        self.process.stdin.close()
        try:
            return self.process.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return None


def cli(binary, *args):
    done = subprocess.run([binary, *args], capture_output=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
    return done.stdout.decode()


def check_lifecycle(c, s):
    reply = s.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "mcp_check", "version": "1"}})
    result = (reply or {}).get("result", {})
    c.check("initialize: the version asked for", result.get("protocolVersion") == "2025-06-18", str(reply))
    c.check("initialize: tools capability and serverInfo",
            "tools" in result.get("capabilities", {}) and result.get("serverInfo", {}).get("name") == "tuneprof")
    s.send_line(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    reply = s.request("ping")
    c.check("a notification gets no answer; ping answers {}", reply and reply.get("id") == s.next_id
            and reply.get("result") == {}, str(reply))
    reply = s.request("initialize", {"protocolVersion": "1999-01-01"})
    version = (reply or {}).get("result", {}).get("protocolVersion", "")
    c.check("initialize: an unknown version gets the newest the server speaks", version >= "2025-06-18", version)
    reply = s.request("tools/list")
    tools = (reply or {}).get("result", {}).get("tools", [])
    names = sorted(tool["name"] for tool in tools)
    c.check("tools/list: every tool", names == sorted(["analyze", "advise", "profile", "comm", "memory",
                                                        "compare", "query"]), str(names))
    c.check("tools/list: an object inputSchema and a description each",
            all(tool["inputSchema"]["type"] == "object" and tool["description"] for tool in tools))
    c.check("tools/list: every tool says it only reads",
            all(tool.get("annotations", {}).get("readOnlyHint") is True for tool in tools))


def check_tools_match_cli(c, s, binary, data):
    gpu = os.path.join(data, "gpu")
    one = os.path.join(gpu, "train_eager.pt.trace.json.gz")
    ranks = os.path.join(gpu, "ddp_2rank")
    before = os.path.join(data, "compare_pairs", "inplace_before.json.gz")
    after = os.path.join(data, "compare_pairs", "inplace_after.json.gz")
    cases = [
        ("analyze", {"paths": [one]}, ["analyze", "--json", one]),
        ("advise", {"paths": [ranks]}, ["advise", "--json", ranks]),
        ("profile", {"paths": [ranks]}, ["profile", "--json", ranks]),
        ("profile", {"paths": [one], "semantics": "hta"}, ["profile", "--json", "--semantics", "hta", one]),
        ("comm", {"paths": [ranks]}, ["comm", "--json", ranks]),
        ("memory", {"paths": [one]}, ["memory", "--json", one]),
        ("compare", {"before": before, "after": after}, ["compare", "--json", before, after]),
        ("analyze", {"paths": [one], "hardware": "H100 SXM"}, ["analyze", "--json", "--hardware", "H100 SXM", one]),
    ]
    for name, arguments, args in cases:
        answer = s.call(name, arguments)
        expected = cli(binary, *args)
        c.check(f"tools/call {name} {sorted(arguments)}: the CLI's --json byte for byte",
                answer is not None and not answer[1] and answer[0] == expected and expected.startswith("{"),
                (answer or ("none", None))[0][:300])
    answer = s.call("analyze", {"paths": ["gpu/train_eager.pt.trace.json.gz"]})
    c.check("a relative path is taken in the first DIR",
            answer and not answer[1] and json.loads(answer[0])["schema"] == "tuneprof.analyze/1")


def check_query(c, s, binary, data, scratch):
    ranks = os.path.join(data, "gpu", "ddp_2rank")
    database = os.path.join(scratch, "export.db")
    subprocess.run([binary, "export", ranks, "--sqlite", database], capture_output=True, timeout=TIMEOUT_S)
    sql = "SELECT name, count(*) AS n FROM kernels GROUP BY name ORDER BY n DESC, name LIMIT 20"
    answer = s.call("query", {"paths": [ranks], "sql": sql})
    with sqlite3.connect(database) as db:
        expected = [list(row) for row in db.execute(sql)]
    document = json.loads(answer[0]) if answer and not answer[1] else {}
    c.check("query: rows equal sqlite3 over export --sqlite", document.get("rows") == expected and expected,
            str(answer)[:300])
    c.check("query: columns named", document.get("columns") == ["name", "n"], str(document.get("columns")))
    answer = s.call("query", {"paths": [ranks], "sql": "SELECT * FROM events", "max_rows": 3})
    document = json.loads(answer[0]) if answer and not answer[1] else {}
    c.check("query: max_rows cuts the rows and says so",
            len(document.get("rows", [])) == 3 and document.get("truncated") is True, str(answer)[:300])
    refused = {
        "a write": "DELETE FROM kernels",
        "a pragma": "PRAGMA table_info(kernels)",
        "attach": f"ATTACH DATABASE '{os.path.join(scratch, 'other.db')}' AS other",
        "two statements": "SELECT 1; SELECT 2",
        "a schema change": "CREATE TABLE t(x)",
        "not SQL": "hello",
    }
    for what, statement in refused.items():
        answer = s.call("query", {"paths": [ranks], "sql": statement})
        c.check(f"query: {what} is a tool error", answer and answer[1] and answer[0].startswith("tuneprof: error: query"),
                str(answer)[:300])
    c.check("query: nothing was written beside the inputs", not os.path.exists(os.path.join(scratch, "other.db")))
    started = time.monotonic()
    endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    answer = s.call("query", {"paths": [ranks], "sql": endless})
    c.check("query: an endless statement ends over budget",
            answer and answer[1] and "over budget" in answer[0] and time.monotonic() - started < 30, str(answer)[:300])


def make_hostile_tree(scratch, data):
    """allowed/ (a DIR) with symlinks out of it, outside/ and allowed2/ beside it."""
    allowed = os.path.join(scratch, "allowed")
    outside = os.path.join(scratch, "outside")
    sibling = os.path.join(scratch, "allowed2")
    for path in (os.path.join(allowed, "run"), outside, sibling):
        os.makedirs(path)
    ranks = os.path.join(data, "gpu", "ddp_2rank")
    shutil.copy(os.path.join(ranks, "rank0.pt.trace.json.gz"), outside)
    shutil.copy(os.path.join(ranks, "rank0.pt.trace.json.gz"), sibling)
    shutil.copy(os.path.join(ranks, "rank1.pt.trace.json.gz"), os.path.join(allowed, "run"))
    os.symlink(os.path.join(outside, "rank0.pt.trace.json.gz"), os.path.join(allowed, "link.json.gz"))
    os.symlink(outside, os.path.join(allowed, "dirlink"))
    os.symlink(os.path.join(outside, "rank0.pt.trace.json.gz"), os.path.join(allowed, "run", "rank0.pt.trace.json.gz"))
    return allowed, outside, sibling


def check_paths(c, s, allowed, outside, sibling):
    rule = "is outside the allowed directories"
    cases = {
        "an absolute path outside": ("analyze", {"paths": [os.path.join(outside, "rank0.pt.trace.json.gz")]}),
        "a .. out of a DIR": ("profile", {"paths": [os.path.join(allowed, "..", "outside")]}),
        "a symlink to a file outside": ("comm", {"paths": [os.path.join(allowed, "link.json.gz")]}),
        "a symlink to a directory outside": ("memory", {"paths": [os.path.join(allowed, "dirlink")]}),
        "a directory named like a DIR": ("advise", {"paths": [os.path.join(sibling, "rank0.pt.trace.json.gz")]}),
        "compare's after side": ("compare", {"before": os.path.join(allowed, "run"), "after": "/etc/passwd"}),
        "query's inputs": ("query", {"paths": ["/etc"], "sql": "SELECT 1"}),
    }
    for what, (tool, arguments) in cases.items():
        answer = s.call(tool, arguments)
        c.check(f"refused: {what} ({tool})", answer and answer[1] and rule in answer[0] and
                answer[0].count("\n") == 0, str(answer)[:300])
    answer = s.call("comm", {"paths": [os.path.join(allowed, "run")]})
    document = json.loads(answer[0]) if answer and not answer[1] else {}
    c.check("a member linked out of a DIR is left out with a warning",
            any(rule in w for w in document.get("warnings", [])) and len(document.get("ranks", [None, None])) == 1,
            str(answer)[:400])


def check_tool_errors(c, s, data):
    one = os.path.join(data, "gpu", "train_eager.pt.trace.json.gz")
    cases = {
        "no paths": ("analyze", {}),
        "a path of the wrong type": ("analyze", {"paths": 3}),
        "an argument that is an object": ("analyze", {"paths": [one], "hardware": {"a": 1}}),
        "an unknown argument": ("profile", {"paths": [one], "fast": True}),
        "an unknown semantics": ("profile", {"paths": [one], "semantics": "other"}),
        "a negative rate": ("compare", {"before": one, "after": one, "tokens_per_step": -1}),
        "a missing file": ("analyze", {"paths": [os.path.join(data, "gpu", "nowhere.json")]}),
        "an unknown hardware profile": ("analyze", {"paths": [one], "hardware": "no such chip"}),
        "no sql": ("query", {"paths": [one]}),
    }
    for what, (tool, arguments) in cases.items():
        answer = s.call(tool, arguments)
        c.check(f"tool error: {what}", answer and answer[1] and answer[0].startswith("tuneprof: error: ") and
                answer[0].count("\n") == 0, str(answer)[:300])
    answer = s.call("analyze", {"paths": [os.path.join(data, "gpu", "nowhere.json")]})
    c.check("tool error names the file", answer and "nowhere.json" in answer[0], str(answer))


def check_protocol_faults(c, s):
    def fault(what, line, code, id_expected=None):
        s.send_line(line)
        reply = s.read()
        error = (reply or {}).get("error", {})
        c.check(f"protocol: {what} -> {code}", error.get("code") == code and reply.get("id") == id_expected,
                str(reply)[:300])

    fault("not JSON", b"{not json", -32700)
    fault("invalid UTF-8", b'{"jsonrpc":"2.0","id":1,"method":"ping\xff"}', -32700)
    fault("a batch", b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', -32600)
    fault("a number", b"42", -32600)
    fault("no jsonrpc", b'{"id":7,"method":"ping"}', -32600, 7)
    fault("jsonrpc 1.0", b'{"jsonrpc":"1.0","id":"x","method":"ping"}', -32600, "x")
    fault("an id that is an object", b'{"jsonrpc":"2.0","id":{},"method":"ping"}', -32600)
    fault("no method", b'{"jsonrpc":"2.0","id":8}', -32600, 8)
    fault("a method that is a number", b'{"jsonrpc":"2.0","id":9,"method":5}', -32600, 9)
    fault("an unknown method", b'{"jsonrpc":"2.0","id":10,"method":"resources/list"}', -32601, 10)
    fault("params that are an array", b'{"jsonrpc":"2.0","id":11,"method":"tools/list","params":[]}', -32602, 11)
    fault("an unknown tool", b'{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"rm"}}', -32602, 12)
    fault("a call without a name", b'{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{}}', -32602, 13)
    fault("arguments that are a string",
          b'{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"analyze","arguments":"x"}}', -32602, 14)
    fault("deep nesting", b"[" * 100000 + b"]" * 100000, -32700)
    fault("a message over the limit", b'{"jsonrpc":"2.0","id":15,"method":"ping","pad":"' + b"x" * (5 << 20) + b'"}',
          -32600)
    s.send_line(b"")
    s.send_line(b'{"jsonrpc":"2.0","result":{},"id":3}')  # a response to nothing: ignored
    reply = s.request("ping")
    c.check("after every fault the server still answers", reply and reply.get("result") == {}, str(reply))


def main():
    binary, data = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    c = Checker(binary, timeout_s=TIMEOUT_S)
    with tempfile.TemporaryDirectory() as scratch:
        allowed, outside, sibling = make_hostile_tree(scratch, data)
        server_tmp = os.path.join(scratch, "tmp")
        os.makedirs(server_tmp)
        env = dict(os.environ, TMPDIR=server_tmp)
        s = Session(binary, [data, allowed], env)
        try:
            check_lifecycle(c, s)
            check_tools_match_cli(c, s, binary, data)
            check_query(c, s, binary, data, scratch)
            c.check("query's databases are off the disk once open (a killed server leaves none)",
                    os.listdir(server_tmp) == [], str(os.listdir(server_tmp)))
            check_paths(c, s, allowed, outside, sibling)
            check_tool_errors(c, s, data)
            check_protocol_faults(c, s)
        finally:
            code = s.close()
        c.check("closing stdin ends the server with exit 0", code == 0, str(code))
        c.check("the session's databases are removed", os.listdir(server_tmp) == [], str(os.listdir(server_tmp)))
        s.stderr.seek(0)
        c.check("stderr holds only tuneprof's lines", all(line.startswith(b"tuneprof: ")
                                                           for line in s.stderr.read().splitlines()))
        c.expect_error("a DIR that does not exist", ["mcp", os.path.join(scratch, "nowhere")], 1, names="nowhere")
        c.expect_error("a DIR that is a file", ["mcp", os.path.join(outside, "rank0.pt.trace.json.gz")], 1,
                       says=["not a directory"])
        c.expect_error("no DIR", ["mcp"], 2)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
