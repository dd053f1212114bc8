#!/usr/bin/python3
"""Partial, damaged and hostile inputs, generated at test time: what tuneprof keeps, drops and says.

- A gzip bomb (1 GiB of blanks between two trace events in a few MB of .gz) is read in bounded memory;
  blanks inside one event past the value limit are a one-line error.
- A directory with unreadable files next to a good trace is analysed with a warning per skipped file
  (then a count); 5,000 empty files stay fast and quiet; nothing readable is exit 1 and one line.
- A cut Kineto trace keeps its whole steps (figures equal to the uncut file's) and sets the steps
  reaching past the cut apart as incomplete; a torch_npu rank whose trace_view.json is cut before any
  device work is not taken for a CPU-only run, and is read from its step_trace_time.csv.
- kernel_details rows with a wrong cell count are dropped, counted in one warning.
- Absurd events (negative duration, a 106-day kernel, a timestamp 5e15 us away, unbalanced B/E) are
  dropped with one warning per kind and count.
Warnings are on stderr and in the --json `warnings` array. Every run: no signal, under 20 s.
Usage: partial_input_check.py TUNEPROF SHARED_DIR
"""
import gzip
import json
import os
import pathlib
import sys
import tempfile
import zlib

from harness import check, copy_level1_rank, failures, run_measured

TIMEOUT_S = 20
BOMB_RSS_LIMIT_KB = 100 * 1024
def answered(name, result):
    check(result is not None, f"{name}: answers within {TIMEOUT_S} s")
    if result is None:
        return False
    check(result[0] >= 0, f"{name}: not killed by a signal (exit {result[0]})")
    return result[0] >= 0


def warnings_of(result):
    return [line for line in result[2].splitlines() if line.startswith("tuneprof: warning: ")]


def exited_0(name, result):
    """Checks that the run exited 0, quoting its stderr when not; returns whether it did."""
    check(result[0] == 0, f"{name}: exit 0 (exit {result[0]}: {result[2].strip()[:300]!r})")
    return result[0] == 0


def one_warning(name, result, says, what, in_json):
    """Checks a run that reads on past a bad file: exit 0, one stderr warning holding each of `says` (`what`
    it is to say), and a --json warning holding `in_json`; returns whether it exited 0."""
    ok = exited_0(name, result)
    warned = [w for w in warnings_of(result) if all(text in w for text in says)]
    check(len(warned) == 1, f"{name}: one warning {what} ({warnings_of(result)})")
    if ok:
        check(any(in_json in w for w in json.loads(result[1]).get("warnings", [])), f"{name}: --json warnings[]")
    return ok


def one_error_line(name, result, path):
    rc, out, err = result[:3]
    lines = err.splitlines()
    check(rc == 1 and not out and len(lines) == 1 and str(path) in lines[0],
          f"{name}: exit 1, one stderr line naming {pathlib.Path(path).name} (exit {rc}, {err.strip()[:300]!r})")


EVENT = ('{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": %d, "dur": 5, '
         '"args": {"External id": %d}}')


def small_trace(n=3, first_ts=100):
    events = ",\n".join(EVENT % (first_ts + 10 * i, i + 1) for i in range(n))
    return '{"schemaVersion": 1, "distributedInfo": {"rank": 0}, "traceEvents": [\n' + events + "\n]}\n"


def write_bomb(path, blanks, inside_event):
    """`blanks` spaces between two events (or inside the second one), gzip level 1, streamed."""
    z = zlib.compressobj(1, zlib.DEFLATED, 31)
    head = '{"traceEvents": [' + (EVENT % (100, 1)) + ', {"ph": "X", "name": "k", '
    if not inside_event:
        head = '{"traceEvents": [' + (EVENT % (100, 1)) + ','
    tail = EVENT % (110, 2) + "]}" if not inside_event else '"pid": 1, "tid": 1, "ts": 110, "dur": 5}]}'
    block = b" " * (1 << 20)
    with open(path, "wb") as f:
        f.write(z.compress(head.encode()))
        for _ in range(blanks >> 20):
            f.write(z.compress(block))
        f.write(z.compress(tail.encode()))
        f.write(z.flush())


def check_gzip_bomb(tuneprof, tmp):
    bomb = tmp / "bomb.json.gz"
    write_bomb(bomb, 1 << 30, inside_event=False)
    r = run_measured(tuneprof, ["info", "--json", bomb], TIMEOUT_S)
    if answered("gzip bomb (1 GiB of blanks between events)", r):
        check(r[0] == 0, f"gzip bomb: exit 0 (exit {r[0]}: {r[2].strip()[:300]!r})")
        entries = json.loads(r[1])["ranks"][0]["entries"] if r[0] == 0 else None
        check(entries == 2, f"gzip bomb: both events read (entries {entries})")
        check(r[3] < BOMB_RSS_LIMIT_KB, f"gzip bomb: peak RSS {r[3] // 1024} MiB < {BOMB_RSS_LIMIT_KB // 1024} MiB "
              f"({os.path.getsize(bomb) // 1024} KiB on disk, {r[4]:.1f} s)")
    inside = tmp / "bomb_in_event.json.gz"
    write_bomb(inside, 256 << 20, inside_event=True)
    r = run_measured(tuneprof, ["info", inside], TIMEOUT_S)
    if answered("blanks inside one event", r):
        one_error_line("blanks inside one event", r, inside)
        check("MiB" in r[2], f"blanks inside one event: the message names the limit ({r[2].strip()[:200]!r})")
        check(r[3] < 4 * BOMB_RSS_LIMIT_KB, f"blanks inside one event: peak RSS {r[3] // 1024} MiB bounded")


def check_directories(tuneprof, tmp):
    mixed = tmp / "mixed"
    mixed.mkdir()
    (mixed / "good.json").write_text(small_trace())
    (mixed / "junk.json").write_text("this is not a trace\n")
    r = run_measured(tuneprof, ["profile", "--json", mixed], TIMEOUT_S)
    if answered("good + junk directory", r):
        if one_warning("good + junk directory", r, ("junk.json", "skipped"), "naming junk.json", "junk.json"):
            check(len(json.loads(r[1])["ranks"]) == 1, "good + junk directory: the good trace is analysed")

    many = tmp / "many_empty"
    many.mkdir()
    (many / "aaa_good.json").write_text(small_trace())
    for i in range(5000):
        (many / f"empty_{i:04d}.json").write_bytes(b"")
    r = run_measured(tuneprof, ["info", many], TIMEOUT_S)
    if answered("5,000 empty files + one trace", r):
        exited_0("5,000 empty files", r)
        lines = warnings_of(r)
        check(len(lines) <= 10, f"5,000 empty files: {len(lines)} warning lines, at most 10")
        check(any("4995 more" in w for w in lines), f"5,000 empty files: the rest counted ({lines[-1:]})")
        check(r[4] < 10, f"5,000 empty files: {r[4]:.1f} s")

    junk_only = tmp / "junk_only"
    junk_only.mkdir()
    (junk_only / "a.json").write_text("nope\n")
    (junk_only / "b.json").write_bytes(b"")
    r = run_measured(tuneprof, ["profile", junk_only], TIMEOUT_S)
    if answered("directory of junk only", r):
        one_error_line("directory of junk only", r, junk_only)


def cut_bytes(data, fraction):
    return data[: int(len(data) * fraction)]


def check_cut_kineto(tuneprof, shared, tmp):
    source = shared / "traces/kineto/hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
    full = gzip.decompress(source.read_bytes())
    whole = tmp / "whole.json"
    whole.write_bytes(full)
    cut = tmp / "cut.json"
    cut.write_bytes(cut_bytes(full, 0.8))
    rw = run_measured(tuneprof, ["profile", "--json", whole], TIMEOUT_S)
    rc = run_measured(tuneprof, ["profile", "--json", cut], TIMEOUT_S)
    if not (answered("uncut Kineto trace", rw) and answered("cut Kineto trace", rc)):
        return
    check(rc[0] == 0, f"cut Kineto trace: exit 0 (exit {rc[0]}: {rc[2].strip()[:300]!r})")
    if rw[0] != 0 or rc[0] != 0:
        return
    whole_rank, cut_doc = json.loads(rw[1])["ranks"][0], json.loads(rc[1])
    cut_rank = cut_doc["ranks"][0]
    complete = {s["step"]: s for s in cut_rank["steps"]}
    incomplete = [s["step"] for s in cut_rank["incomplete_steps"]]
    last = whole_rank["steps"][-1]["step"]
    check(last in incomplete and last not in complete,
          f"cut Kineto trace: the last step {last} is incomplete "
          f"(complete {sorted(complete)}, incomplete {incomplete})")
    for step in whole_rank["steps"]:
        if step["step"] in complete:
            check(complete[step["step"]]["wall_us"] == step["wall_us"] and
                  complete[step["step"]]["computing_us"] == step["computing_us"],
                  f"cut Kineto trace: complete step {step['step']} equals the uncut file's")
    check(any("incomplete" in w for w in warnings_of(rc)), "cut Kineto trace: stderr says which steps are incomplete")
    check(any("incomplete" in w for w in cut_doc.get("warnings", [])), "cut Kineto trace: --json warnings[] too")


def check_cut_torch_npu(tuneprof, shared, tmp):
    rank = copy_level1_rank(shared, tmp, "npu_cut")
    view = rank / "ASCEND_PROFILER_OUTPUT/trace_view.json"
    view.write_bytes(cut_bytes(view.read_bytes(), 0.2))  # before the first device event
    r = run_measured(tuneprof, ["profile", "--json", rank], TIMEOUT_S)
    if not answered("torch_npu rank with a cut trace_view.json", r):
        return
    if not exited_0("cut trace_view.json", r):
        return
    doc = json.loads(r[1])
    rank_doc = doc["ranks"][0]
    check(rank_doc["work_on"] == "device", f"cut trace_view.json: not CPU-only (work_on {rank_doc['work_on']})")
    check([s["step"] for s in rank_doc["steps"]] == [50] and not rank_doc["incomplete_steps"],
          f"cut trace_view.json: its step read from step_trace_time.csv ({len(rank_doc['steps'])} steps)")
    check(any("the timeline is cut off (0 complete steps of the 1" in w for w in doc.get("warnings", [])),
          "cut trace_view.json: warning in --json")
    check(not any("no trace_view.json" in w for w in doc.get("warnings", [])),
          "cut trace_view.json: no warning calls it missing")
    r = run_measured(tuneprof, ["advise", "--json", rank], TIMEOUT_S)
    if answered("advise on the cut torch_npu rank", r):
        if exited_0("advise on the cut torch_npu rank", r):
            ranks = json.loads(r[1]).get("ranks", [])
            check(ranks and ranks[0].get("cpu_only") is not True and ranks[0].get("steps") == 1,
                  f"advise on the cut torch_npu rank: not CPU-only, its step from step_trace_time.csv ({ranks[:1]})")


def check_misaligned_csv(tuneprof, shared, tmp):
    rank = copy_level1_rank(shared, tmp, "npu_csv")
    details = rank / "ASCEND_PROFILER_OUTPUT/kernel_details.csv"
    lines = details.read_text().splitlines(keepends=True)
    lines[1] = lines[1].rstrip("\r\n") + ",extra\n"
    lines[2] = lines[2].rstrip("\r\n").rsplit(",", 1)[0] + "\n"
    details.write_text("".join(lines))
    r = run_measured(tuneprof, ["info", "--json", rank], TIMEOUT_S)
    if answered("kernel_details.csv with misaligned rows", r):
        one_warning("misaligned rows", r, ("kernel_details.csv: 2 rows", "dropped"), "counting 2 dropped rows",
                    "kernel_details.csv: 2 rows")


def check_absurd_values(tuneprof, tmp):
    base = 1_700_000_000_000_000  # µs, as Kineto writes
    sane = [EVENT % (base + 10 * i, i + 1) for i in range(20)]
    absurd = [
        '{"ph": "X", "cat": "cpu_op", "name": "negative", "pid": 1, "tid": 1, "ts": %d, "dur": -5}' % (base + 3),
        '{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": %d, "dur": %d}' % (base + 4,
                                                                                          106 * 86400 * 10**6),
        '{"ph": "X", "cat": "cpu_op", "name": "early", "pid": 1, "tid": 1, "ts": %d, "dur": 1}' % (base - 5 * 10**15),
        '{"ph": "E", "pid": 1, "tid": 2, "ts": %d}' % (base + 5),
        '{"ph": "B", "name": "open", "pid": 1, "tid": 3, "ts": %d}' % (base + 6),
    ]
    path = tmp / "absurd.json"
    path.write_text('{"schemaVersion": 1, "distributedInfo": {"rank": 0}, "traceEvents": [\n' +
                    ",\n".join(sane + absurd) + "\n]}\n")
    r = run_measured(tuneprof, ["info", "--json", path], TIMEOUT_S)
    if not answered("absurd values", r):
        return
    if not exited_0("absurd values", r):
        return
    lines = warnings_of(r)
    for what in ["1 events with a negative duration", "1 events lasting more than a day",
                 "1 events starting more than a day away", "1 'E' events without a matching 'B'",
                 "1 'B' events without a matching 'E'"]:
        check(sum(what in w for w in lines) == 1, f"absurd values: one warning '{what} ...'")
    rank = json.loads(r[1])["ranks"][0]
    span_ns = rank["end_ns"] - rank["start_ns"]
    check(span_ns == 195_000, f"absurd values: the span is the sane events' ({span_ns} ns)")


def main():
    if len(sys.argv) != 3:
        print("usage: partial_input_check.py TUNEPROF SHARED_DIR", file=sys.stderr)
        return 2
    tuneprof, shared = os.path.abspath(sys.argv[1]), pathlib.Path(sys.argv[2])
    with tempfile.TemporaryDirectory(prefix="tuneprof_partial_") as name:
        tmp = pathlib.Path(name)
        check_gzip_bomb(tuneprof, tmp)
        check_directories(tuneprof, tmp)
        check_cut_kineto(tuneprof, shared, tmp)
        check_cut_torch_npu(tuneprof, shared, tmp)
        check_misaligned_csv(tuneprof, shared, tmp)
        check_absurd_values(tuneprof, tmp)
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
