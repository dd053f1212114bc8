#!/usr/bin/python3
"""Anomalies inside otherwise readable traces, generated at test time: each is said once per kind with a
count, the sane part of the trace is kept, and no figure is quietly wrong.

- Ill-typed fields (ts as an array, pid as an object, args as a number, name as a number, ...): the event
  is skipped, one warning per field with its count; the trace is read (exit 0), not refused.
- Kernels starting before their launch (host and device clocks skewed): warned with a count and the
  largest lead, their launch latency counted as 0 (never negative, never left out).
- A ProfilerStep nested in itself 2,000 times, and a step number written twice: one step each, the
  nested and repeated markers counted in a warning.
- A torch_npu rank whose trace_view.json is cut after some device work but before its step ends: read
  from step_trace_time.csv as a rank without a timeline, with a warning; cut to 60 %, `profile`,
  `analyze` and `comm --json` and `export --sqlite`'s kernels and collectives are those of the same rank
  with trace_view.json removed (with --real alone: a copy of a rank of the shared corpus).
Warnings are on stderr and in the --json `warnings` array. Every run: no signal, under 20 s.
Usage: anomalies_check.py TUNEPROF [--real SHARED_DIR]
"""
import json
import pathlib
import sqlite3
import sys
import tempfile

from harness import LEVEL1_RANK, check, copy_level1_rank, failures, outcome

TIMEOUT_S = 20
def ran_ok(name, result):
    if result is None:
        check(False, f"{name}: answers within {TIMEOUT_S} s")
        return False
    check(result[0] == 0, f"{name}: exit 0 (exit {result[0]}: {result[2].strip()[:300]!r})")
    return result[0] == 0


def warned(name, result, needle):
    """The warning is on stderr and in the --json document's warnings[]."""
    doc = json.loads(result[1])
    on_stderr = [l for l in result[2].splitlines() if "warning" in l and needle in l]
    check(len(on_stderr) == 1, f"{name}: one stderr warning with {needle!r} ({len(on_stderr)})")
    check(any(needle in w for w in doc.get("warnings", [])), f"{name}: --json warnings[] has {needle!r}")
    return doc


def event(**fields):
    return json.dumps(fields)


def kineto(events):
    return ('{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB"}],\n'
            '"traceEvents": [\n' + ",\n".join(events) + '\n]}\n')


def launch_pair(correlation, launch_us, kernel_us, dur_us=5):
    """A cudaLaunchKernel on the host thread and its kernel on stream 7."""
    return [event(ph="X", cat="cuda_runtime", name="cudaLaunchKernel", pid=1, tid=1, ts=launch_us, dur=2,
                  args={"correlation": correlation}),
            event(ph="X", cat="kernel", name=f"k{correlation}", pid=0, tid=7, ts=kernel_us, dur=dur_us,
                  args={"correlation": correlation, "stream": 7, "device": 0})]


def check_ill_typed(tuneprof, tmp):
    good = [event(ph="X", cat="cpu_op", name="aten::mm", pid=1, tid=1, ts=100 + 10 * i, dur=5) for i in range(3)]
    bad = ['{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": [1], "dur": 1}',
           '{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": {"us": 1}, "dur": 1}',
           '{"ph": "X", "cat": "cpu_op", "name": "a", "pid": {"p": 1}, "tid": 1, "ts": 2, "dur": 1}',
           '{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 3, "dur": 1, "args": 5}',
           '{"ph": "X", "cat": "cpu_op", "name": 7, "pid": 1, "tid": 1, "ts": 4, "dur": 1}',
           '{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 5, "dur": "long"}']
    path = tmp / "ill_typed.json"
    path.write_text(kineto(good[:1] + bad + good[1:]))
    r = outcome(tuneprof, "info", "--json", path, timeout_s=TIMEOUT_S)
    if not ran_ok("ill-typed fields", r):
        return
    doc = warned("ill-typed fields", r, "2 events with an ill-typed 'ts' skipped (first at byte ")
    for field in ("pid", "args", "name", "dur"):
        check(any(f"1 event with an ill-typed '{field}' skipped (at byte " in w for w in doc.get("warnings", [])),
              f"ill-typed fields: '{field}' counted")
    check(doc["ranks"][0].get("entries") == 9, f"ill-typed fields: 9 entries read ({doc['ranks'][0].get('entries')})")
    r = outcome(tuneprof, "profile", "--json", path, timeout_s=TIMEOUT_S)
    ran_ok("ill-typed fields, profile", r)


def check_launch_before_kernel(tuneprof, tmp):
    events = [event(ph="X", cat="user_annotation", name="ProfilerStep#1", pid=1, tid=1, ts=0, dur=1000)]
    events += launch_pair(1, 10, 20)
    events += launch_pair(2, 100, 60)  # the kernel 40 us before its launch
    events += launch_pair(3, 200, 230)
    path = tmp / "skewed.json"
    path.write_text(kineto(events))
    r = outcome(tuneprof, "profile", "--json", path, timeout_s=TIMEOUT_S)
    if not ran_ok("kernel before its launch", r):
        return
    doc = warned("kernel before its launch", r,
                 "1 of 3 launched device events starts up to 40.0 us before its launch (the host's and the "
                 "device's clocks disagree by that much): its launch latency is counted as 0")
    latency = doc["ranks"][0]["steps"][0].get("launch_latency_us") or {}
    check(latency.get("p50") == 10.0 and abs(latency.get("mean", 0) - 40 / 3) < 1e-6,
          f"kernel before its launch: latencies 10, 0 (clamped) and 30 us, never negative ({latency})")
    r = outcome(tuneprof, "profile", "--semantics", "hta", "--json", path, timeout_s=TIMEOUT_S)
    ran_ok("kernel before its launch, --semantics hta", r)


def check_nested_steps(tuneprof, tmp):
    events = [event(ph="X", cat="user_annotation", name="ProfilerStep#5", pid=1, tid=1, ts=100 + d,
                    dur=100000 - 2 * d) for d in range(2000)]
    events.append(event(ph="X", cat="user_annotation", name="ProfilerStep#6", pid=1, tid=1, ts=200000, dur=1000))
    events.append(event(ph="X", cat="user_annotation", name="ProfilerStep#6", pid=1, tid=2, ts=300000, dur=1000))
    for i, ts in enumerate((200, 200100, 300100)):
        events += launch_pair(i + 1, ts, ts + 10)
    path = tmp / "nested_steps.json"
    path.write_text(kineto(events))
    r = outcome(tuneprof, "profile", "--json", path, timeout_s=TIMEOUT_S)
    if not ran_ok("nested step markers", r):
        return
    doc = warned("nested step markers", r, "1999 ProfilerStep markers inside another ProfilerStep")
    warned("repeated step markers", r, "1 ProfilerStep marker repeating an earlier step's number")
    steps = [s["step"] for s in doc["ranks"][0]["steps"]]
    check(steps == [5, 6], f"nested step markers: steps 5 and 6 once each ({steps[:10]})")


def without_warnings(text):
    doc = json.loads(text)
    doc.pop("warnings", None)
    return doc


def exported_counts(tuneprof, rank, db):
    """(kernels, collectives) rows of `export --sqlite`; None when the export failed."""
    db.unlink(missing_ok=True)
    r = outcome(tuneprof, "export", rank, "--sqlite", db, timeout_s=TIMEOUT_S)
    if not ran_ok(f"export --sqlite {rank.parent.name}", r):
        return None
    with sqlite3.connect(db) as con:
        return tuple(con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("kernels", "collectives"))


def check_cut_reads_as_no_timeline(tuneprof, shared, tmp):
    """Run at one path, so that the documents may be compared whole: cut first, then removed."""
    rank = copy_level1_rank(shared, tmp, "npu_cut60")
    view = rank / "ASCEND_PROFILER_OUTPUT/trace_view.json"
    data = view.read_bytes()
    view.write_bytes(data[: int(len(data) * 0.6)])
    commands = [("profile", "--json"), ("analyze", "--json"), ("comm", "--json")]
    cut = {c: outcome(tuneprof, *c, rank, timeout_s=TIMEOUT_S) for c in commands}
    cut_counts = exported_counts(tuneprof, rank, tmp / "cut60.sqlite")
    view.unlink()
    removed = {c: outcome(tuneprof, *c, rank, timeout_s=TIMEOUT_S) for c in commands}
    removed_counts = exported_counts(tuneprof, rank, tmp / "removed.sqlite")
    for c in commands:
        name = " ".join(c)
        if not (ran_ok(f"{name} on the 60 % cut rank", cut[c]) and ran_ok(f"{name} without trace_view.json", removed[c])):
            continue
        check(without_warnings(cut[c][1]) == without_warnings(removed[c][1]),
              f"{name}: the 60 % cut rank reads as the rank without trace_view.json")
    check("the timeline is cut off (0 complete steps of the 1" in cut[("profile", "--json")][2],
          "60 % cut rank: the warning says the timeline is cut off")
    check("no trace_view.json" not in cut[("profile", "--json")][2],
          "60 % cut rank: no warning says trace_view.json is missing")
    check(cut_counts is not None and cut_counts == removed_counts and cut_counts[1] > 0,
          f"export --sqlite: kernels and collectives of the 60 % cut rank {cut_counts} are those without "
          f"trace_view.json {removed_counts}")


def check_cut_torch_npu(tuneprof, shared, tmp):
    rank = copy_level1_rank(shared, tmp, "npu_cut")
    view = rank / "ASCEND_PROFILER_OUTPUT/trace_view.json"
    data = view.read_bytes()
    view.write_bytes(data[: int(len(data) * 0.9)])  # past device work, before the step's end
    r = outcome(tuneprof, "profile", "--json", rank, timeout_s=TIMEOUT_S)
    if not ran_ok("torch_npu rank with a cut trace_view.json", r):
        return
    doc = warned("cut trace_view.json", r, "step_trace_time.csv holds")
    rank_doc = doc["ranks"][0]
    check([s["step"] for s in rank_doc["steps"]] == [50] and not rank_doc["incomplete_steps"],
          f"cut trace_view.json: step 50 from step_trace_time.csv ({[s['step'] for s in rank_doc['steps']]})")
    r = outcome(tuneprof, "analyze", "--json", rank, timeout_s=TIMEOUT_S)
    if ran_ok("analyze on the cut torch_npu rank", r):
        ranks = json.loads(r[1]).get("ranks", [])
        check(ranks and ranks[0].get("steps") == 1, f"analyze on the cut torch_npu rank: 1 step ({ranks[:1]})")


def main():
    """The generated anomalies alone, or with --real the cut rank of the corpus alone: the first half runs on a
    clone without the corpus, the second is registered as a corpus test (skipped in one line without it)."""
    real = len(sys.argv) == 4 and sys.argv[2] == "--real"
    if len(sys.argv) != 2 and not real:
        print(__doc__, file=sys.stderr)
        return 2
    tuneprof = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="tuneprof_anomalies_") as name:
        tmp = pathlib.Path(name)
        if real:
            shared = pathlib.Path(sys.argv[3])
            if check((shared / LEVEL1_RANK).is_dir(), f"the corpus holds {LEVEL1_RANK}"):
                check_cut_torch_npu(tuneprof, shared, tmp)
                check_cut_reads_as_no_timeline(tuneprof, shared, tmp)
        else:
            check_ill_typed(tuneprof, tmp)
            check_launch_before_kernel(tuneprof, tmp)
            check_nested_steps(tuneprof, tmp)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
