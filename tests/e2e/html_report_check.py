#!/usr/bin/python3
"""Browser test of `tuneprof report`: renders reports in headless Chromium (Debian's
`chromium`) and checks what the browser built, not the file we wrote.

Reports: a Kineto sample (kineto/hta/nccl_parser_config), an Ascend sample (torch_npu text export,
level1 rank 0), a compare (torch-cpu/kineto26 cnn_eval -> cnn_eval_fused) and a crafted trace whose
kernel, operator and file names hold `</svg><script>` and quotes.

For each: exit 0; no console message at all (the report has no script, so any message is an error or a
blocked injection: `--enable-logging=stderr --v=0` prints them as CONSOLE lines); every section and
chart id (src/report/html/html_report.h) present in the rendered DOM, charts as <svg>; no <script> element,
no external resource; a screenshot saved under OUT_DIR. Hostile: the names come back as text.
Independent figures: the Kineto report's top kernel row (name, count, total ms) against Python's json
over the trace's kernel/memcpy/memset events; the Ascend breakdown bar against step_trace_time.csv
(csv module); the compare report's step-time figures against `compare --json`.
Exit 77 (skipped) when no chromium is installed.
Usage: html_report_check.py TUNEPROF SHARED_DIR OUT_DIR
"""
import csv
import gzip
import html.parser
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

SECTIONS = ["summary", "breakdown", "kernels", "compute", "roofline", "memory", "comm", "findings"]
CHARTS = ["chart-breakdown", "chart-kernels", "chart-compute", "chart-roofline", "chart-memory",
          "chart-comm-bandwidth", "chart-comm-matrix", "chart-findings"]
COMPARE_SECTIONS = ["summary", "metrics", "breakdown", "ops"]
COMPARE_CHARTS = ["chart-compare-breakdown", "chart-compare-steps", "chart-op-diff"]
HOSTILE_KERNEL = "</svg><script>alert(1)</script>\"'<img src=x onerror=alert(3)>"
HOSTILE_OP = "aten::evil\" onload=\"alert(2)"

from harness import failures, note as check, report as report_failures


class Dom(html.parser.HTMLParser):
    """Ids and tags of the rendered DOM, text per table row, and <title> texts of SVG shapes."""

    def __init__(self):
        super().__init__()
        self.tags_by_id = {}
        self.tags = []
        self.external = []
        self.rows = []
        self.titles = []
        self.text = []
        self._row = None
        self._title = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if "id" in attrs:
            self.tags_by_id[attrs["id"]] = tag
        for key in ("src", "href"):
            if key in attrs:
                self.external.append(f"{tag} {key}={attrs[key]}")
        if tag == "tr":
            self._row = []
        if tag == "title":
            self._title = ""

    def handle_endtag(self, tag):
        if tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None
        if tag == "title" and self._title is not None:
            self.titles.append(self._title)
            self._title = None

    def handle_data(self, data):
        self.text.append(data)
        if self._row is not None and data.strip():
            self._row.append(data.strip())
        if self._title is not None:
            self._title += data


def chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def render(browser, page, screenshot):
    flags = ["--headless", "--disable-gpu", "--no-sandbox", "--enable-logging=stderr", "--v=0",
             "--user-data-dir=" + tempfile.mkdtemp(prefix="tp-chromium-")]
    url = page.resolve().as_uri()
    dump = subprocess.run([browser, *flags, "--dump-dom", url], capture_output=True, text=True, timeout=120)
    check(dump.returncode == 0, f"{page.name}: chromium exit {dump.returncode}")
    consoles = [line for line in dump.stderr.splitlines() if "CONSOLE" in line]
    check(not consoles, f"{page.name}: console messages: {consoles[:3]}")
    shot = subprocess.run([browser, *flags, "--hide-scrollbars", "--window-size=1000,2400",
                           f"--screenshot={screenshot}", url], capture_output=True, text=True, timeout=120)
    check(shot.returncode == 0 and screenshot.exists() and screenshot.stat().st_size > 10000,
          f"{page.name}: no screenshot at {screenshot}")
    dom = Dom()
    dom.feed(dump.stdout)
    return dom


def report(tuneprof, args, out):
    result = subprocess.run([tuneprof, "report", *map(str, args), "-o", str(out)], capture_output=True, text=True,
                            timeout=300)
    check(result.returncode == 0, f"report {args}: exit {result.returncode}: {result.stderr}")
    return out.read_text(encoding="utf-8") if out.exists() else ""


def check_page(label, dom, sections, charts):
    for sid in sections:
        check(dom.tags_by_id.get(sid) == "section", f"{label}: section #{sid} missing from the DOM")
    for cid in charts:
        check(dom.tags_by_id.get(cid) == "svg", f"{label}: chart #{cid} missing from the DOM")
    check("script" not in dom.tags, f"{label}: a <script> element in the DOM")
    check(not dom.external, f"{label}: external resources: {dom.external[:3]}")


def kineto_top_kernel(path):
    """(name, count, total ns) of the device-work name with the largest summed duration."""
    with gzip.open(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    totals = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            name = e["name"].strip()
            count, ns = totals.get(name, (0, 0))
            # ts/dur are µs with three decimals: exact integers in ns.
            totals[name] = (count + 1, ns + round(float(e["dur"]) * 1000))
    name, (count, ns) = max(totals.items(), key=lambda item: (item[1][1], item[0]))
    return name, count, ns


def check_kineto(tuneprof, browser, trace, out):
    page = out / "kineto.html"
    report(tuneprof, [trace], page)
    dom = render(browser, page, out / "kineto.png")
    check_page("kineto", dom, SECTIONS, CHARTS)
    name, count, ns = kineto_top_kernel(trace)
    row = next((r for r in dom.rows if r and r[0] == name), None)
    check(row is not None, f"kineto: top kernel {name[:60]} not in the kernels table")
    if row:
        check(row[1] == str(count), f"kineto: {name[:40]} count {row[1]} != {count}")
        check(row[2] == f"{ns / 1e6:.3f}", f"kineto: {name[:40]} total {row[2]} ms != {ns / 1e6:.3f}")


def check_ascend(tuneprof, browser, rank_dir, out):
    page = out / "ascend.html"
    report(tuneprof, [rank_dir], page)
    dom = render(browser, page, out / "ascend.png")
    check_page("ascend", dom, SECTIONS, CHARTS)
    with open(rank_dir / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("Step")]
    check(len(rows) > 0, "ascend: no step rows in step_trace_time.csv")
    for r in rows:
        for column, series in (("Computing", "computing"), ("Communication(Not Overlapped)", "exposed communication"),
                               ("Free", "free (no device work)")):
            expected_ms = float(r[column]) / 1000
            pattern = re.compile(rf"rank \d+ step {r['Step']}: {re.escape(series)}: ([0-9.]+) ms")
            shown = [float(m.group(1)) for t in dom.titles for m in [pattern.fullmatch(t)] if m]
            check(len(shown) == 1, f"ascend: step {r['Step']} {series}: {len(shown)} bars")
            if shown:
                check(abs(shown[0] - expected_ms) <= max(0.01 * expected_ms, 0.001),
                      f"ascend: step {r['Step']} {series}: {shown[0]} ms != {expected_ms} ms")


def check_compare(tuneprof, browser, before, after, out):
    page = out / "compare.html"
    report(tuneprof, ["--compare", before, after], page)
    dom = render(browser, page, out / "compare.png")
    check_page("compare", dom, COMPARE_SECTIONS, COMPARE_CHARTS)
    result = subprocess.run([tuneprof, "compare", str(before), str(after), "--json"], capture_output=True, text=True,
                            timeout=300)
    doc = json.loads(result.stdout)
    metric = doc["metrics"]["step_time_us"]
    row = next((r for r in dom.rows if r and r[0] == "step_time_us"), None)
    check(row is not None, "compare: no step_time_us row")
    if row:
        check(abs(float(row[2]) - metric["before"]) < 1e-3 and abs(float(row[3]) - metric["after"]) < 1e-3,
              f"compare: step_time_us {row[2:4]} != {metric['before']}, {metric['after']}")
    top = doc["ops"][0]["name"]
    check(any(r and r[0] == top for r in dom.rows), f"compare: top op {top} not in the ops table")


def hostile_trace(path, with_device=True):
    events = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 900},
        {"ph": "X", "cat": "cpu_op", "name": HOSTILE_OP, "pid": 1, "tid": 1, "ts": 10, "dur": 100,
         "args": {"External id": 1}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 20, "dur": 5,
         "args": {"correlation": 7, "External id": 1}},
        {"ph": "X", "cat": "kernel", "name": HOSTILE_KERNEL, "pid": 0, "tid": 7, "ts": 200, "dur": 300,
         "args": {"device": 0, "stream": 7, "correlation": 7, "grid": [1, 1, 1], "block": [32, 1, 1]}},
    ]
    if not with_device:
        events = events[:2]
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": events}, f)


def check_hostile(tuneprof, browser, out):
    trace = out / "evil\"<b>'.json"
    hostile_trace(trace)
    page = out / "hostile.html"
    text = report(tuneprof, [trace], page)
    check("<script" not in text.lower(), "hostile: <script in the written file")
    dom = render(browser, page, out / "hostile.png")
    check_page("hostile", dom, SECTIONS, CHARTS)
    rendered = "".join(dom.text)
    check(HOSTILE_KERNEL in rendered, "hostile: the kernel name does not come back as text")
    check(str(trace) in rendered, "hostile: the file name does not come back as text")
    check("img" not in dom.tags, "hostile: an <img> element was created")
    # CPU only: the operator table lists host operators, so the hostile operator is drawn and listed.
    cpu_trace = out / "evil_cpu.json"
    hostile_trace(cpu_trace, with_device=False)
    cpu_page = out / "hostile_cpu.html"
    report(tuneprof, [cpu_trace], cpu_page)
    cpu_dom = render(browser, cpu_page, out / "hostile_cpu.png")
    check_page("hostile cpu", cpu_dom, SECTIONS, CHARTS)
    check(HOSTILE_OP in "".join(cpu_dom.text), "hostile cpu: the operator name does not come back as text")


def main():
    tuneprof, shared, out = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    browser = chromium()
    if browser is None:
        print("SKIP: no chromium installed (scripts/install-deps installs Debian's chromium)")
        return 77
    out.mkdir(parents=True, exist_ok=True)
    traces = shared / "traces"
    check_kineto(tuneprof, browser, traces / "kineto" / "hta" / "nccl_parser_config" / "nccl_data.json.gz", out)
    check_ascend(tuneprof, browser,
                 traces / "ascend" / "msinsight" / "test" / "data" / "pytorch" / "text" / "level1" / "rank0_ascend_pt",
                 out)
    cpu = traces / "torch-cpu" / "kineto26"
    check_compare(tuneprof, browser, cpu / "cnn_eval.json.gz", cpu / "cnn_eval_fused.json.gz", out)
    check_hostile(tuneprof, browser, out)
    return report_failures(failures, f"{len(failures)} failure(s); screenshots in {out}")


if __name__ == "__main__":
    sys.exit(main())
