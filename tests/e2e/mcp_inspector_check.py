#!/usr/bin/python3
"""`tuneprof mcp` spoken to by the protocol's reference client, the MCP inspector's CLI mode (npm package
@modelcontextprotocol/inspector, a pinned version): tools/list names every tool, tools/call of each tool
answers with the CLI's --json document byte for byte, and a path outside the allowed directory comes back
as a tool error naming the rule.

The inspector is installed on first use with npm into a cache outside the repository
($TUNEPROF_TOOLS_CACHE, else $XDG_CACHE_HOME or ~/.cache, under tuneprof/) and reused after. Without npm, or
when the registry cannot be reached, the check is skipped with one line (exit 77): it lives in
`make test-long` (ctest label `inspector`), never in `make test`, whose run CI refuses to see skip.

Usage: mcp_inspector_check.py TUNEPROF_BINARY TESTS_DATA_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from harness import Checker

SKIPPED = 77
INSPECTOR = "@modelcontextprotocol/inspector"
VERSION = "2.12.0"
INSTALL_TIMEOUT_S = 600
CALL_TIMEOUT_S = 120


def cache_dir():
    base = os.environ.get("TUNEPROF_TOOLS_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tuneprof")
    return os.path.join(base, f"mcp-inspector-{VERSION}")


def installed_inspector():
    """The inspector's executable, installing it on first use; None (and why) when it cannot be had."""
    target = cache_dir()
    executable = os.path.join(target, "node_modules", ".bin", "mcp-inspector")
    if os.access(executable, os.X_OK):
        return executable, ""
    npm = shutil.which("npm")
    if not npm or not shutil.which("node"):
        return None, "npm and node are not installed"
    os.makedirs(os.path.dirname(target), exist_ok=True)
    staging = tempfile.mkdtemp(prefix="mcp-inspector-", dir=os.path.dirname(target))
    try:
        done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", staging,
                               f"{INSPECTOR}@{VERSION}"], capture_output=True, timeout=INSTALL_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        shutil.rmtree(staging, ignore_errors=True)
        return None, f"npm install {INSPECTOR}@{VERSION} took over {INSTALL_TIMEOUT_S} s"
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        last = (done.stderr.decode(errors="replace").strip().splitlines() or ["no message"])[-1]
        return None, f"npm install {INSPECTOR}@{VERSION} failed (registry unreachable?): {last}"
    if os.path.isdir(target):  # another run installed it meanwhile
        shutil.rmtree(staging, ignore_errors=True)
    else:
        os.rename(staging, target)
    return executable, ""


def main():
    binary, data = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    inspector, why = installed_inspector()
    if not inspector:
        print(f"skipped: the MCP inspector is not available: {why}")
        return SKIPPED
    c = Checker(binary, timeout_s=CALL_TIMEOUT_S)
    with tempfile.TemporaryDirectory() as scratch:
        # The inspector keeps a catalog of servers; this run's stays in the scratch directory.
        env = dict(os.environ, MCP_CATALOG_PATH=os.path.join(scratch, "catalog.json"))

        def inspect(*args):
            """(exit code, parsed stdout or None) of one inspector CLI run against `tuneprof mcp DATA`."""
            try:
                done = subprocess.run([inspector, "--cli", binary, "mcp", data, *args], capture_output=True,
                                      timeout=CALL_TIMEOUT_S, env=env, stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                return None, None
            try:
                return done.returncode, json.loads(done.stdout)
            except json.JSONDecodeError:
                print(f"     inspector said: {done.stdout[:300]!r} {done.stderr[:300]!r}")
                return done.returncode, None

        def call(tool, *pairs):
            code, reply = inspect("--method", "tools/call", "--tool-name", tool, "--tool-arg", *pairs)
            content = (reply or {}).get("content") or [{}]
            return code, content[0].get("text", ""), (reply or {}).get("isError")

        _, listed = inspect("--method", "tools/list")
        names = sorted(tool["name"] for tool in (listed or {}).get("tools", []))
        c.check("inspector tools/list: every tool",
                names == sorted(["analyze", "advise", "profile", "comm", "memory", "compare", "query"]), str(names))

        one = "gpu/train_eager.pt.trace.json.gz"
        ranks = "gpu/ddp_2rank"
        before, after = "compare_pairs/inplace_before.json.gz", "compare_pairs/inplace_after.json.gz"
        at = lambda relative: os.path.join(data, relative)
        cases = [
            ("analyze", [f'paths=["{one}"]'], ["analyze", "--json", at(one)]),
            ("advise", [f'paths=["{ranks}"]'], ["advise", "--json", at(ranks)]),
            ("profile", [f'paths=["{ranks}"]', "critical_path=true"], ["profile", "--json", "--critical-path", at(ranks)]),
            ("comm", [f'paths=["{ranks}"]'], ["comm", "--json", at(ranks)]),
            ("memory", [f'paths=["{one}"]'], ["memory", "--json", at(one)]),
            ("compare", [f"before={before}", f"after={after}"], ["compare", "--json", at(before), at(after)]),
        ]
        for tool, pairs, args in cases:
            code, text, is_error = call(tool, *pairs)
            expected = c.run(args)
            c.check(f"inspector tools/call {tool}: the CLI's --json",
                    code == 0 and not is_error and expected and text == expected[1] and text.startswith("{"),
                    f"exit {code}, {text[:200]!r}")
        code, text, is_error = call("query", f'paths=["{ranks}"]', "sql=SELECT count(*) AS n FROM kernels",
                                    "max_rows=5")
        rows = json.loads(text).get("rows") if code == 0 and not is_error else None
        c.check("inspector tools/call query: one count", rows and len(rows) == 1 and rows[0][0] > 0, text[:200])
        code, text, is_error = call("analyze", 'paths=["/etc/passwd"]')
        c.check("inspector: a path outside the allowed directory is a tool error naming the rule",
                is_error is True and "is outside the allowed directories" in text, f"exit {code}, {text[:200]!r}")
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
