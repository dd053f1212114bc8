#!/usr/bin/python3
"""Runs tuneprof on generated inputs that must neither hang it, nor let it destroy a file, nor let a name
drive the terminal, nor pass a wrong file off as a trace, and checks what it says.

- Special files: a FIFO (or /dev/zero) given as the trace or as --config is refused at once.
- Outputs: -o that is an input (same name, a symlink or a hard link to it) is refused and the input stays
  byte for byte; an output that cannot be written is an I/O error (exit 1) and leaves no file behind;
  annotating an annotated trace replaces its diagnosis (one "tuneprof diagnosis" process, not two).
- Control characters (ESC, CR, LF, BEL, BS, DEL, C1) in operator, kernel, process, thread, device, group
  and backend names reach no text output raw (info, profile, analyze, advise, memory, comm, compare), and
  every --json output parses and carries the names exactly.
- Non-traces: JSON without trace events ({"foo": 1}, []) is "not a trace" (exit 1); {"traceEvents": []}
  is read with a warning.
- Messages: an unknown SQLite database, an unreadable directory, a symlink loop, a dangling symlink, a
  mistyped command and a negative percentage each name their real cause.

Errors: exit 1 (usage: exit 2), nothing on stdout, exactly one stderr line. Never a signal, never over 20 s.
Usage: hardening_check.py TUNEPROF_BINARY
"""
import gzip
import hashlib
import json
import os
import sqlite3
import sys
import tempfile

from harness import Checker

TIMEOUT_S = 20

HOSTILE = "\x1b[2J\x1b]0;pwned\x07evil\rFORGED\x08\x7f\u009b31m"
HOSTILE_LINE = "op\nFORGED line"


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def kineto_trace(op_name="aten::mm", kernel_name="void gemm_kernel<float>(float*)", process="python3",
                 thread="main thread", device="NVIDIA A100", backend="nccl", group="default_pg", steps=3):
    """A small Kineto GPU trace: steps of an operator launching a kernel and an NCCL all-reduce, with
    allocator events, every name taken from the arguments."""
    events = [
        {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": process}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": thread}},
        {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0 " + process}},
        {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7 " + thread}},
    ]
    correlation = 1
    for step in range(steps):
        t0 = 1000 + step * 1000
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step + 1}", "pid": 1, "tid": 1,
                       "ts": t0, "dur": 900})
        events.append({"ph": "X", "cat": "cpu_op", "name": op_name, "pid": 1, "tid": 1, "ts": t0 + 10, "dur": 100,
                       "args": {"External id": correlation}})
        events.append({"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "s": "t",
                       "ts": t0 + 15, "args": {"Device Type": 1, "Device Id": 0, "Addr": 4096 + step,
                                               "Bytes": 1 << 20, "Total Allocated": (step + 1) << 20,
                                               "Total Reserved": 8 << 20}})
        for name, cat, start, dur, args in [
            (kernel_name, "kernel", t0 + 200, 300, {}),
            ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", "kernel",
             t0 + 520, 200, {"Collective name": "allreduce", "In msg nelems": 262144, "Out msg nelems": 262144,
                             "Group size": 2, "dtype": "Float", "Process Group Name": group,
                             "Process Group Description": group, "Process Group Ranks": "[0, 1]"}),
        ]:
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                           "ts": t0 + 20 + correlation % 2 * 10, "dur": 5,
                           "args": {"correlation": correlation, "External id": correlation}})
            events.append({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": 7, "ts": start, "dur": dur,
                           "args": {"device": 0, "stream": 7, "correlation": correlation, "grid": [108, 1, 1],
                                    "block": [256, 1, 1], "registers per thread": 32, "shared memory": 0,
                                    "warps per SM": 8, "blocks per SM": 1, "est. achieved occupancy %": 50,
                                    **args}})
            correlation += 1
    return {
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": device, "totalGlobalMem": 85899345920, "computeMajor": 8,
                              "computeMinor": 0, "numSms": 108}],
        "distributedInfo": {"backend": backend, "rank": 0, "world_size": 1},
        "traceEvents": events,
        "traceName": "t.pt.trace.json",
    }


def write_json(path, document, compress=False):
    data = json.dumps(document).encode()
    with open(path, "wb") as f:
        f.write(gzip.compress(data, mtime=0) if compress else data)
    return path


def check_special_files(c, tmp):
    fifo = os.path.join(tmp, "f.json")
    os.mkfifo(fifo)
    for mode in ([], ["--json"]):
        c.expect_error(f"FIFO as the trace {' '.join(mode) or '(text)'}", ["info", *mode, fifo], 1, fifo, ["FIFO"])
    c.expect_error("FIFO as the trace (profile)", ["profile", fifo], 1, fifo, ["FIFO"])
    trace = write_json(os.path.join(tmp, "ok.json"), kineto_trace())
    c.expect_error("FIFO as --config", ["analyze", "--config", fifo, trace], 2, fifo, ["not a regular file"])
    if os.path.exists("/dev/zero"):
        c.expect_error("/dev/zero as the trace", ["info", "/dev/zero"], 1, "/dev/zero", ["character device"])
    # A FIFO inside a directory of traces is no trace file: the directory's real trace is read.
    d = os.path.join(tmp, "dir_with_fifo")
    os.mkdir(d)
    os.mkfifo(os.path.join(d, "a.json"))
    write_json(os.path.join(d, "b.json"), kineto_trace())
    result = c.run(["info", "--json", d])
    problems = ["no answer"] if result is None else []
    if result is not None:
        rc, out, _ = result
        if rc != 0:
            problems.append(f"exit {rc}, expected 0")
        else:
            ranks = json.loads(out)["ranks"]
            if len(ranks) != 1 or not ranks[0]["path"].endswith("b.json"):
                problems.append(f"read {[r['path'] for r in ranks]}, expected b.json alone")
    c.report("FIFO inside a directory is skipped", problems, result)


def no_files_like(directory, prefix):
    return [n for n in os.listdir(directory) if n.startswith(prefix)]


def check_outputs(c, tmp):
    d = os.path.join(tmp, "out")
    os.mkdir(d)
    gz = write_json(os.path.join(d, "x.json.gz"), kineto_trace(), compress=True)
    plain = write_json(os.path.join(d, "y.json"), kineto_trace())
    before = {gz: digest(gz), plain: digest(plain)}

    c.expect_error("report -o the input", ["report", gz, "-o", gz], 2, gz, ["input"])
    c.expect_error("annotate -o the input", ["annotate", gz, "-o", gz], 2, gz, ["input"])
    c.expect_error("report --compare -o an input", ["report", "--compare", plain, gz, "-o", gz], 2, gz, ["input"])
    link = os.path.join(d, "link.html")
    os.symlink(gz, link)
    c.expect_error("report -o a symlink to the input", ["report", gz, "-o", link], 2, link, ["input"])
    hard = os.path.join(d, "hard.json")
    os.link(plain, hard)
    c.expect_error("annotate -o a hard link to the input", ["annotate", plain, "-o", hard], 2, hard, ["input"])
    c.expect_error("report -o inside the input directory's trace", ["report", d, "-o", plain], 2, plain, ["input"])
    c.report("inputs unchanged after refused writes",
             [f"{p} changed" for p, h in before.items() if digest(p) != h])

    # Outputs that cannot be written: an I/O error naming the output, and no file (or temporary) left.
    under_file = os.path.join(plain, "report.html")
    c.expect_error("report -o under a regular file", ["report", gz, "-o", under_file], 1, under_file,
                   ["cannot write"])
    c.expect_error("report -o an existing directory", ["report", gz, "-o", d], 1, d, ["directory"])
    if os.geteuid() != 0:
        locked = os.path.join(tmp, "locked")
        os.mkdir(locked, 0o555)
        target = os.path.join(locked, "r.html")
        c.expect_error("report -o in a read-only directory", ["report", gz, "-o", target], 1, target,
                       ["cannot write"])
        c.report("nothing left in the read-only directory", [f"left {os.listdir(locked)}"] if os.listdir(locked)
                 else [])

    # A good write replaces an existing file whole and leaves no temporary beside it.
    html = os.path.join(d, "r.html")
    with open(html, "w") as f:
        f.write("old content " * 100000)
    result = c.run(["report", gz, "-o", html])
    problems = [] if result is not None and result[0] == 0 else [f"report failed: {result and result[2][:300]}"]
    if not problems:
        with open(html) as f:
            text = f.read()
        if "old content" in text or not text.rstrip().endswith("</html>"):
            problems.append("the old file was not replaced by a whole report")
        if no_files_like(d, ".r.html"):
            problems.append(f"temporary files left: {no_files_like(d, '.r.html')}")
    c.report("report replaces an existing output whole", problems, result)

    # Annotating an annotated trace replaces its diagnosis.
    once, twice = os.path.join(d, "once.json.gz"), os.path.join(d, "twice.json")
    first = c.run(["annotate", plain, "-o", once])
    second = c.run(["annotate", once, "-o", twice])
    problems = []
    if first is None or second is None or first[0] != 0 or second[0] != 0:
        problems.append(f"annotate failed: {first and first[2][:300]} / {second and second[2][:300]}")
    else:
        with gzip.open(once, "rt") as f:
            a = json.load(f)["traceEvents"]
        with open(twice) as f:
            b = json.load(f)["traceEvents"]
        diagnosis = [e for e in b if e.get("ph") == "M" and e.get("name") == "process_name"
                     and e.get("args", {}).get("name") == "tuneprof diagnosis"]
        if len(diagnosis) != 1:
            problems.append(f"{len(diagnosis)} diagnosis processes after annotating twice, expected 1")
        if len(a) != len(b):
            problems.append(f"{len(b)} events after the second annotate, {len(a)} after the first")
        if "replaced" not in second[2]:
            problems.append("the second annotate does not say it replaced the diagnosis")
    c.report("annotate on an annotated trace replaces the diagnosis", problems, second)


def strings_in(value):
    """Every string value in a parsed JSON document."""
    if isinstance(value, str):
        return {value}
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return set().union(*(strings_in(child) for child in children)) if children else set()


def has_raw_control(text):
    return [hex(ord(ch)) for ch in text if (ord(ch) < 0x20 and ch != "\n") or 0x7f <= ord(ch) <= 0x9f]


def check_terminal_injection(c, tmp):
    trace = write_json(os.path.join(tmp, "hostile\x1b[31m.json"), kineto_trace(
        op_name="aten::" + HOSTILE, kernel_name=HOSTILE_LINE + HOSTILE, process="proc" + HOSTILE,
        thread="thread" + HOSTILE_LINE, device="GPU" + HOSTILE, backend="nccl" + HOSTILE, group="pg" + HOSTILE_LINE))
    commands = [["info"], ["profile"], ["analyze"], ["advise"], ["memory"], ["comm"]]
    for args in commands + [["compare"]]:
        paths = [trace, trace] if args == ["compare"] else [trace]
        result = c.run([*args, *paths])
        problems = ["no answer"] if result is None else []
        if result is not None:
            rc, out, err = result
            if rc != 0:
                problems.append(f"exit {rc}")
            for stream, text in (("stdout", out), ("stderr", err)):
                raw = has_raw_control(text)
                if raw:
                    problems.append(f"raw control characters on {stream}: {sorted(set(raw))}")
                if any(line.startswith("FORGED") for line in text.splitlines()):
                    problems.append(f"a name forged a line on {stream}")
            if args[0] in ("info", "profile") and "\\x1b" not in out:
                problems.append("the escaped name (\\x1b) is not shown")
        c.report(f"{args[0]} text: control characters escaped", problems, result)
        result = c.run([*args, "--json", *paths])
        problems = ["no answer"] if result is None else []
        if result is not None:
            try:
                document = json.loads(result[1])
                if args[0] == "profile" and (HOSTILE_LINE + HOSTILE) not in strings_in(document):
                    problems.append("the kernel name does not come back exactly")
            except ValueError as e:
                problems.append(f"--json output is not JSON: {e}")
        c.report(f"{args[0]} --json: valid JSON", problems, result)
    # Error messages carry the path: the file name's ESC is escaped there too.
    missing = os.path.join(tmp, "gone\x1b[2J\nFORGED.json")
    result = c.expect_error("error message escapes the path", ["info", missing], 1, None, ["\\x1b[2J\\x0aFORGED"])
    if result is not None and has_raw_control(result[2].rstrip("\n")):
        c.report("error message holds no raw control characters", ["raw control characters"], result)


def check_not_a_trace(c, tmp):
    for name, data in [("object without traceEvents", b'{"foo": 1}'), ("empty array", b"[]"),
                       ("object with other arrays", b'{"schemaVersion": 1, "events": [{"ph": "X"}]}')]:
        path = os.path.join(tmp, name.replace(" ", "_") + ".json")
        with open(path, "wb") as f:
            f.write(data)
        for mode in ([], ["--json"]):
            c.expect_error(f"{name}: not a trace {' '.join(mode) or '(text)'}", ["info", *mode, path], 1, path,
                           ["not a trace"])
        c.expect_error(f"{name}: analyze says not a trace", ["analyze", path], 1, path, ["not a trace"])
    empty = write_json(os.path.join(tmp, "empty_trace.json"), {"traceEvents": []})
    # info, an inventory, lists it with a warning; a command that measures steps refuses it (no 0 ms step).
    for args, code, word in ((["info"], 0, "warning"), (["info", "--json"], 0, "warning"), (["analyze"], 1, "error")):
        result = c.run([*args, empty])
        problems = ["no answer"] if result is None else []
        if result is not None:
            rc, out, err = result
            # Other warnings (no rank in the trace, say) may come too; the empty trace is said once.
            lines = [line for line in err.splitlines() if "no events" in line]
            if rc != code:
                problems.append(f"exit {rc}, expected {code}")
            if len(lines) != 1 or word not in lines[0] or empty not in lines[0] or "no events" not in lines[0]:
                problems.append(f"expected one {word} naming the file and 'no events', got {lines}")
        c.report(f"empty traceEvents: {'warning' if code == 0 else 'error'} ({' '.join(args)})", problems, result)


def check_messages(c, tmp):
    db = os.path.join(tmp, "shop.sqlite")
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE orders (id INTEGER)")
        con.execute("CREATE TABLE customers (id INTEGER)")
    c.expect_error("unknown SQLite database", ["info", db], 1, db,
                   ["not a profile", "orders", "nsys export"])
    loop = os.path.join(tmp, "loop.json")
    os.symlink(loop, loop)
    c.expect_error("self-symlink", ["info", loop], 1, loop, ["symbolic link loop"])
    dangling = os.path.join(tmp, "dangling.json")
    os.symlink(os.path.join(tmp, "nowhere.json"), dangling)
    c.expect_error("dangling symlink", ["info", dangling], 1, dangling, ["nowhere.json", "does not exist"])
    if os.geteuid() != 0:
        closed = os.path.join(tmp, "closed_dir")
        os.mkdir(closed)
        write_json(os.path.join(closed, "t.json"), kineto_trace())
        os.chmod(closed, 0)
        c.expect_error("unreadable directory", ["info", closed], 1, closed, ["permission denied"])
        os.chmod(closed, 0o755)
    c.expect_error("mistyped command", ["infoo", "x.json"], 2, "infoo", ["unknown command", "info"])
    trace = write_json(os.path.join(tmp, "m.json"), kineto_trace())
    result = c.expect_error("negative --fail-if-slower", ["compare", trace, trace, "--fail-if-slower", "-5"], 2,
                            "--fail-if-slower", [">= 0"])
    if result is not None and len(result[2]) > 300:
        c.report("--fail-if-slower message is short", [f"{len(result[2])} characters"], result)
    c.expect_error("nan --tokens-per-step", ["compare", trace, trace, "--tokens-per-step", "nan"], 2,
                   "--tokens-per-step", ["> 0"])
    c.expect_error("unknown flag: one line", ["info", "--no-such-flag", trace], 2, "--no-such-flag")
    # Gates that could never fire, or whose unit is a guess, are usage errors naming the expression.
    for expression, says in (("free_us<nan%", "not a finite percentage"), ("free_us<-inf%", "not a finite percentage"),
                              ("step_time>+3", "no '%'")):
        c.expect_error(f"--fail-if {expression}", ["compare", trace, trace, "--fail-if", expression], 2,
                       expression, [says])
    result = c.run(["compare", trace, trace, "--fail-if", " free_us < +5 % "], None)
    c.report("--fail-if with blanks inside",
             [] if result is not None and result[0] == 0 else [f"exit {result[0] if result else 'timeout'}, expected 0"],
             result)


def main():
    if len(sys.argv) != 2:
        print("usage: hardening_check.py TUNEPROF_BINARY", file=sys.stderr)
        return 2
    c = Checker(os.path.abspath(sys.argv[1]), TIMEOUT_S)
    with tempfile.TemporaryDirectory(prefix="tuneprof_hardening_") as tmp:
        check_special_files(c, tmp)
        check_outputs(c, tmp)
        check_terminal_injection(c, tmp)
        check_not_a_trace(c, tmp)
        check_messages(c, tmp)
        # A read-only directory left behind would stop the temporary directory's removal.
        for root, dirs, _ in os.walk(tmp):
            for name in dirs:
                os.chmod(os.path.join(root, name), 0o755)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
