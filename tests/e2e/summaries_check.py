#!/usr/bin/env python3
"""Rank summaries (`tuneprof summarize`, .tps) in place of traces, on generated 8-rank runs in both layouts
(bench/gen_cluster.py: Kineto + NCCL with a straggler and skewed clocks, and torch_npu + HCCL):
  - each rank is summarized alone, as a scheduler would where its profile lives;
  - `analyze`, `advise`, `comm`, `memory` and `profile` (text and --json, stdout and stderr) print exactly
    what they print on the traces, whether given the directory of summaries, the summaries one by one, or a
    mix of summaries and traces; `report` writes the same page (but for its list of the inputs given);
  - a summary made with other flags (--hardware) is refused with one line naming it and the flags;
  - a trace beside its own summary (TRACE and TRACE.tps) is warned about: the rank would count twice; a
    summary given twice is read once, with a warning;
  - commands that need the events (info, profile --semantics hta, annotate --merge, summarize itself), and
    `profile` with a compute flag a summary was not made with (--model-params), refuse a summary with one
    line naming it, exit 2;
  - a cut-off or corrupt summary is one line naming it, exit 1, never a crash;
  - traces without a rank number, summarized one by one, still draw the "no rank" warning of each when
    their summaries meet, as the traces do (a lone rank needs none).

Usage: summaries_check.py TUNEPROF GEN_CLUSTER_PY [CORPUS_DIR]
"""
import os
import re
import subprocess
import sys
import tempfile

from harness import report, run

RANKS = 8


def rank_inputs(run_dir):
    return sorted((os.path.join(run_dir, name) for name in os.listdir(run_dir)), key=lambda p: (len(p), p))


def summarize(binary, inputs, out_dir, failures, extra=()):
    os.makedirs(out_dir, exist_ok=True)
    summaries = []
    for path in inputs:
        out = os.path.join(out_dir, os.path.basename(path) + ".tps")
        done = run(binary, "summarize", path, "-o", out, *extra)
        if done.returncode != 0:
            failures.append(f"summarize {path}: exit {done.returncode}: {done.stderr.strip()}")
        summaries.append(out)
    return summaries


def compare_outputs(binary, layout, traces, summaries, summary_dir, failures):
    mixed = summaries[: RANKS // 2] + traces[RANKS // 2 :]
    for command in ("analyze", "advise", "comm", "memory", "profile"):
        for fmt in ((), ("--json",)):
            want = run(binary, command, *fmt, *traces)
            if want.returncode != 0:
                failures.append(f"{layout} {command}: exit {want.returncode} on the traces: {want.stderr.strip()}")
                continue
            for label, given in (("directory", [summary_dir]), ("files", summaries), ("mixed", mixed)):
                got = run(binary, command, *fmt, *given)
                if (got.returncode, got.stdout, got.stderr) != (want.returncode, want.stdout, want.stderr):
                    failures.append(f"{layout} {command} {' '.join(fmt)} on summaries ({label}) differs from the traces")
    compare_reports(binary, layout, traces, [("directory", [summary_dir]), ("files", summaries), ("mixed", mixed)],
                    os.path.dirname(summary_dir), failures)


INPUTS_TABLE = re.compile(r"<table><tr><th>input</th></tr>.*?</table>", re.S)


def compare_reports(binary, layout, traces, givens, tmp, failures):
    """The report's page on summaries is the page on the traces, but for the inputs as given."""
    def page(paths, name):
        out = os.path.join(tmp, name)
        done = run(binary, "report", *paths, "-o", out)
        if done.returncode != 0:
            failures.append(f"{layout} report on {name}: exit {done.returncode}: {done.stderr.strip()}")
            return None, done.stderr
        with open(out, encoding="utf-8") as f:
            html = f.read()
        if len(INPUTS_TABLE.findall(html)) != 1:
            failures.append(f"{layout} report on {name}: no single table of the inputs given")
        return INPUTS_TABLE.sub("", html), done.stderr
    want = page(traces, "traces.html")
    for label, given in givens:
        if page(given, label + ".html") != want:
            failures.append(f"{layout} report on summaries ({label}) differs from the report on the traces")


def check_refusals(binary, summary, trace, tmp, failures):
    other = run(binary, "analyze", "--hardware", "H100 SXM", summary)
    if other.returncode != 2 or summary not in other.stderr or "--hardware" not in other.stderr:
        failures.append(f"analyze --hardware on a summary made without it: exit {other.returncode}: {other.stderr.strip()}")
    # Each refusal names the command that needs the events, as the user typed it.
    for named, args in (("profile --model-params", ("profile", "--model-params", "7e9", summary)),
                        ("info", ("info", summary)),
                        ("profile --semantics hta", ("profile", "--semantics", "hta", summary)),
                        ("report --compare", ("report", "--compare", trace, summary, "-o", os.path.join(tmp, "c.html"))),
                        ("compare", ("compare", trace, summary)),
                        ("export", ("export", summary, "--sqlite", os.path.join(tmp, "e.db"))),
                        ("annotate", ("annotate", summary, "-o", os.path.join(tmp, "a.json"))),
                        ("annotate --merge", ("annotate", "--merge", summary, "-o", os.path.join(tmp, "m.json.gz"))),
                        ("summarize", ("summarize", summary, "-o", os.path.join(tmp, "again.tps")))):
        done = run(binary, *args)
        lines = done.stderr.strip().splitlines()
        if (done.returncode != 2 or len(lines) != 1 or summary not in lines[0] or "summary" not in lines[0]
                or f"; {named} needs the trace itself" not in lines[0]):
            failures.append(f"{' '.join(args[:2])} on a summary: exit {done.returncode}, stderr {done.stderr.strip()!r}")
    twice = os.path.join(tmp, "twice")
    os.makedirs(twice)
    copy = os.path.join(twice, os.path.basename(trace))
    with open(trace, "rb") as src, open(copy, "wb") as dst:
        dst.write(src.read())
    run(binary, "summarize", copy, "-o", copy + ".tps")
    both = run(binary, "analyze", twice)
    if "counted twice" not in both.stderr or copy + ".tps" not in both.stderr:
        failures.append(f"a trace beside its own summary: no warning that its rank is read twice: {both.stderr!r}")
    # The same file named twice is read once, and said.
    doubled = run(binary, "analyze", summary, summary)
    if "named 2 times (or through links to it); read once" not in doubled.stderr:
        failures.append(f"one summary given twice: no warning that it is read once: {doubled.stderr!r}")
    for name in ("rank.json", ".tps"):
        bad_name = run(binary, "summarize", trace, "-o", os.path.join(tmp, name))
        if bad_name.returncode != 2 or os.path.exists(os.path.join(tmp, name)):
            failures.append(f"summarize -o {name}: exit {bad_name.returncode}")


def check_corrupt(binary, summary, tmp, failures):
    data = open(summary, "rb").read()
    cases = {"cut.tps": data[: len(data) // 2], "empty.tps": b"", "flipped.tps": data[:40] + b"\xff" * 16 + data[56:],
             "other.tps": b"{\"traceEvents\": []}"}
    for name, content in cases.items():
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(content)
        done = run(binary, "analyze", path)
        lines = done.stderr.strip().splitlines()
        if done.returncode not in (1, 2) or len(lines) != 1 or path not in lines[0]:
            failures.append(f"analyze {name}: exit {done.returncode}, stderr {done.stderr.strip()!r}")


def check_rankless(binary, example, tmp, failures):
    traces = []
    for name in ("a.json.gz", "b.json.gz"):
        path = os.path.join(tmp, "rankless", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(example, "rb") as src, open(path, "wb") as dst:
            dst.write(src.read())
        traces.append(path)
    summaries = summarize(binary, traces, os.path.join(tmp, "rankless_tps"), failures)
    for given, want_given in ((summaries, traces), (summaries[:1], traces[:1])):
        got, want = run(binary, "analyze", *given), run(binary, "analyze", *want_given)
        if (got.returncode, got.stdout, got.stderr) != (want.returncode, want.stdout, want.stderr):
            failures.append(f"rankless traces: analyze on {len(given)} summaries differs from the traces: "
                            f"{got.stderr.strip()!r} vs {want.stderr.strip()!r}")


# Real runs whose report draws every section a summary must carry: memory timelines and holders (Kineto
# memory events, torch_npu operator memory), FLOPs from shapes and kernel_details, several devices in one
# file (an nsys export of two processes), the db layout, nn.Module ranges (`profile`'s modules).
REAL_RUNS = ("torch-cpu/kineto26/gpt_train_before.json.gz", "ascend/msinsight/test/data/pytorch/text/level2",
             "ascend/msinsight/test/data/pytorch/db/level2", "nsys/h100_2gpu_mfu_before.sqlite",
             "kineto/tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz")


def check_generated_runs(binary, generator, tmp, failures):
    example = os.path.join(os.path.dirname(os.path.abspath(generator)), "..", "examples", "tiny_train.pt.trace.json.gz")
    for layout in ("kineto", "torch_npu"):
        run_dir = os.path.join(tmp, layout)
        subprocess.run([sys.executable, generator, "--out", run_dir, "--ranks", str(RANKS), "--layout", layout],
                       check=True, capture_output=True, timeout=300)
        traces = rank_inputs(run_dir)
        summary_dir = os.path.join(tmp, layout + "_tps")
        summaries = summarize(binary, traces, summary_dir, failures)
        compare_outputs(binary, layout, traces, summaries, summary_dir, failures)
        if layout == "kineto":
            check_refusals(binary, summaries[0], traces[0], tmp, failures)
            check_corrupt(binary, summaries[0], tmp, failures)
    check_rankless(binary, example, tmp, failures)


def check_real_reports(binary, corpus, tmp, failures):
    """`report` on one summary of a real run writes the page it writes on the run; `memory` and `profile`
    print what they print on the run."""
    for k, relative in enumerate(REAL_RUNS):
        path = os.path.join(corpus, relative)
        summary = os.path.join(tmp, f"real{k}.tps")
        done = run(binary, "summarize", path, "-o", summary)
        if done.returncode != 0:
            failures.append(f"summarize {relative}: exit {done.returncode}: {done.stderr.strip()}")
            continue
        compare_reports(binary, relative, [path], [("summary", [summary])], tmp, failures)
        for command in ("memory", "profile"):
            formats = ((), ("--json",)) + ((("--by", "module"), ("--by", "module", "--json")) if command == "profile" else ())
            for fmt in formats:
                want, got = run(binary, command, *fmt, path), run(binary, command, *fmt, summary)
                if (got.returncode, got.stdout, got.stderr) != (want.returncode, want.stdout, want.stderr):
                    failures.append(f"{command} {' '.join(fmt)} on a summary of {relative} differs from the run's")


def main():
    """summaries_check.py BINARY GENERATOR: the generated runs; ... --real CORPUS: the real runs alone (a
    corpus test of its own, so that a missing corpus is reported as skipped, never passed quietly)."""
    binary, generator = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        if len(sys.argv) == 5 and sys.argv[3] == "--real":
            check_real_reports(binary, os.path.join(sys.argv[4], "traces"), tmp, failures)
        else:
            check_generated_runs(binary, generator, tmp, failures)
    return report(failures, f"summaries: {len(failures)} failure(s)")


if __name__ == "__main__":
    sys.exit(main())
