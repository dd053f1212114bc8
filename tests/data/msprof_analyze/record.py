#!/usr/bin/python3
"""Turns the workbooks msprof-analyze's `advisor all` wrote for the shared torch_npu runs into
advisor_findings.json. Documents how the table was made; no test runs it.

How the table was made (msprof-analyze 26.1.0 from source, git commit 8399c1cd of
github.com/Ascend/msprof-analyze, Python 3.11 with its requirements installed):
  for RUN in text/level1 text/level2 db/level2: copy the run to a scratch directory (the tool writes
  cluster_analysis_output beside its input), then in the source tree
    python3 -c "import xlsxwriter.worksheet as w; \
      w.Worksheet.autofit = getattr(w.Worksheet, 'autofit', lambda self, *a, **k: None); \
      from msprof_analyze.cli.entrance import msprof_analyze_cli; msprof_analyze_cli()" \
      advisor all -d COPY -o OUT/RUN > OUT/RUN.log 2>&1
  (the shim only gives xlsxwriter 3.0.2, which lacks Worksheet.autofit, a no-op column fit; without it the
  tool stops before it writes the workbook). Then:
    record.py OUT DATE > advisor_findings.json
with the terminal output of each run kept as OUT/<RUN with / as _>.log (its "Start analysis" lines say which
checks ran, so that those that found nothing are recorded as silent).
The workbook (OUT/RUN/log/mstt_advisor_*.xlsx) is read with the standard library: its first sheet is the
problem summary, one sheet per check holds the figures.
"""
import glob
import json
import re
import sys
import xml.etree.ElementTree as ET
import zipfile

MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
RUNS = ("text/level1", "text/level2", "db/level2")
COMMIT = "8399c1cd"


def column(ref):
    index = 0
    for ch in re.match(r"[A-Z]+", ref).group(0):
        index = index * 26 + ord(ch) - 64
    return index - 1


def cell_value(cell, shared):
    value = cell.find(MAIN + "v")
    if cell.get("t") == "s":
        return shared[int(value.text)]
    if cell.get("t") == "inlineStr":
        return "".join(t.text or "" for t in cell.iter(MAIN + "t"))
    return value.text if value is not None else None


def read_workbook(path):
    """{sheet name: [rows]} of an .xlsx, each row a list of strings or None."""
    book = zipfile.ZipFile(path)
    shared = []
    if "xl/sharedStrings.xml" in book.namelist():
        for item in ET.fromstring(book.read("xl/sharedStrings.xml")).findall(MAIN + "si"):
            shared.append("".join(t.text or "" for t in item.iter(MAIN + "t")))
    rels = ET.fromstring(book.read("xl/_rels/workbook.xml.rels"))
    targets = {r.get("Id"): r.get("Target").replace("/xl/", "") for r in rels}
    sheets = {}
    for sheet in ET.fromstring(book.read("xl/workbook.xml")).find(MAIN + "sheets"):
        xml = ET.fromstring(book.read("xl/" + targets[sheet.get(REL)]))
        rows = []
        for row in xml.iter(MAIN + "row"):
            cells = {column(c.get("r")): cell_value(c, shared) for c in row.findall(MAIN + "c")}
            rows.append([cells.get(i) for i in range(max(cells) + 1)] if cells else [])
        sheets[sheet.get("name")] = rows
    return sheets


def records(rows):
    """A sheet's rows after its header as dicts keyed by the header."""
    return [dict(zip(rows[0], row)) for row in rows[1:]]


def sheet_named(sheets, suffix):
    return next(rows for name, rows in sheets.items() if name.endswith(suffix))


def env_entry(sheets, summary):
    names = [r["Environment"] for r in records(sheet_named(sheets, "环境变量分析"))]
    return {"check": "Environment Variable", "theirs": "suggests setting " + ", ".join(names),
            "ours": "config.ascend_env",
            "names": [{"evidence": "*", "contains": names}]}


def slow_rank_entry(sheets, summary):
    steps = records(sheet_named(sheets, "慢卡分析"))
    parts = ("compute(us)", "communication(us)", "free(us)")
    totals = [sum(float(r[p]) for p in parts) for r in steps]
    mean = sum(totals) / len(totals)
    spread = max((max(float(r[p]) for r in steps) - min(float(r[p]) for r in steps)) / mean for p in parts)
    problem = summary["description"] != "没有慢节点问题"
    names = {"compute(us)": "computing", "communication(us)": "exposed_communication", "free(us)": "free"}
    spreads = [{"metric": names[p], "pct": round(100 * (max(float(r[p]) for r in steps)
                                                        - min(float(r[p]) for r in steps)) / mean, 4)}
               for p in parts]
    return {"check": "Slow Rank", "problem": problem, "ours": "communication.straggler",
            "step_spread": spreads, "step_spread_tolerance_pct": 0.01,
            "theirs": f"{'slow rank' if problem else 'no slow rank'}: the widest spread of a step part "
                      f"(compute, communication, free) across ranks is {100 * spread:.1f} % of the mean step, "
                      f"its limit 5 %",
            "differs": "msprof-analyze's advisor compares the step parts of step_trace_time (a rank is slow when "
                       "a part's spread passes 5 % of the mean step); ours makes that test in `comm` (step_spread, "
                       "the same figures) but the finding judges from the HCCL wait and synchronization ratios "
                       "(the rank that waits least is the one the others wait for), as msprof-analyze's cluster "
                       "communication analysis does, so it names a rank where the step parts stay within 5 %"}


def slow_link_entry(sheets, summary):
    rows = records(sheet_named(sheets, "慢链路分析"))
    sdma = [float(r["SDMA bandwidth(GB/s)"]) for r in rows]
    return {"check": "Slow Link", "problem": bool(summary.get("suggestion")), "ours": "communication.slow_link",
            "theirs": f"statistics only: SDMA {min(sdma):.3f}-{max(sdma):.3f} GB/s across ranks, RDMA unused",
            "bandwidth": [{"rank": int(r["rank_id"]), "transport": "SDMA", "gbps": float(r["SDMA bandwidth(GB/s)"]),
                           "rdma_gbps": float(r["RDMA bandwidth(GB/s)"])} for r in rows],
            "bandwidth_tolerance_gbps": 0.0001, "differs": SLOW_LINK_DIFFERS}


def byte_alignment_entry(sheets, summary):
    ops = records(sheet_named(sheets, "字节对齐分析"))
    abnormal = round(sum(float(r["abnormal duration(us)"]) for r in ops), 4)
    return {"check": "Byte Alignment", "rank": 0, "ours": "communication.byte_alignment",
            "theirs": f"{len(ops)} communication operators with a size not a multiple of 512 B "
                      f"({', '.join(r['op name'] for r in ops)}), {abnormal} us abnormal",
            "figures": [{"evidence": "unaligned_task_us", "theirs_min": abnormal, "theirs_max": abnormal,
                         "tolerance": 0.01, "unit": "us"}],
            "differs": f"msprof-analyze counts the operators ({len(ops)}), ours the SDMA tasks in them "
                       "(unaligned_tasks); the abnormal time is the same sum"}


OPTIMIZATION = re.compile(r"^(\S+)算子 shape: (\S+) dtype: (\S+) "
                          r"疑似有性能优化空间,参考性能优化空间: ([\d.]+)%$")
BOUND = re.compile(r"^(\S+)算子 shape: (\S+) dtype: \S+ bound类型为: (\S+) bound$")


def ai_core_entry(sheets, summary):
    rows = records(sheet_named(sheets, "Vector算子性能分析"))
    kinds = {r["Type"]: r["Description"].strip().split("\n") for r in rows}
    space = [OPTIMIZATION.match(line).groups() for line in kinds.get("性能优化算子集合", [])]
    bound = [BOUND.match(line).groups() for line in kinds.get("bound算子集合", [])]
    best = max(float(s[3]) for s in space)
    return {"check": "AI Core Performance", "rank": 0, "ours": "compute.operator_efficiency",
            "theirs": "optimization space: " + "; ".join(f"{n} [{s}] {p} %" for n, s, _, p in space)
                      + "; bound: " + "; ".join(f"{n} [{s}] {b}" for n, s, b in bound),
            "figures": [{"evidence": "max_space_pct", "theirs_min": best, "theirs_max": best, "tolerance": 0.05,
                         "unit": "%"}],
            "operators": [{"evidence": "top_space", "name": n, "shape": s, "pct": float(p)} for n, s, _, p in space]
                         + [{"evidence": "top_bound", "name": n, "shape": s, "bound": b, "order": i}
                            for i, (n, s, b) in enumerate(bound)]}


def dynamic_shape_entry(sheets, summary):
    return {"check": "Operator Dynamic Shape", "rank": 0, "ours": "config.dynamic_shape",
            "theirs": f"rank 0 compiles its operators online (problem count {summary['problem count']})"}


def api_compare_entry(sheets, summary):
    """"Api compare of Rank1 Step50 and Rank0 Step50": the slow rank, then the fast one."""
    ranks = [int(r) for r in re.findall(r"Rank(\d+)", summary["description"])]
    figures = [{"evidence": key, "theirs_min": rank, "theirs_max": rank, "tolerance": 0, "unit": "rank"}
               for key, rank in zip(("slowest_rank", "fastest_rank"), ranks)]
    return {"check": "API compare (slowest vs fastest rank)", "ours": "communication.straggler",
            "theirs": summary["description"], "figures": figures,
            "names": [{"evidence": "slowest_vs_fastest_apis", "contains": ["aten::"]}],
            "differs": "ours lists the APIs whose time per step differs most, over every step, in the straggler "
                       "finding's evidence; msprof-analyze every API of one step in a sheet of its own"}


def affinity_entry(sheets, summary):
    rows = records(sheet_named(sheets, "亲和API接口"))
    frame = re.search(r"main\.py\(\d+\): \w+", rows[0]["Code stacks"] or "")
    sites = rows[0]["Stack called counts"]
    figures = [{"evidence": "call_sites", "theirs_min": int(sites), "theirs_max": int(sites), "tolerance": 0,
                "unit": "count"}] if sites and sites.isdigit() else []
    return {"check": "Affinity API", "ours": "fusion.api_replacement", "figures": figures,
            "theirs": f"{rows[0]['Affinity API']} ({summary['description']}); stack frame "
                      f"{frame.group(0) if frame else 'none recorded'}",
            "names": [{"evidence": "replacements",
                       "contains": [rows[0]["Affinity API"] + " for SGD.step at main.py("]}],
            "differs": "the call site: ours is the frame of the step's recorded stack msprof-analyze quotes, "
                       "main.py(366), on the Db export too, whose stack msprof-analyze cannot read; the line is not "
                       "compared"}


def no_bound_entry(sheets, summary):
    ops = records(sheet_named(sheets, "算子瓶颈"))
    total = round(sum(float(r["task_duration"]) for r in ops), 3)
    return {"check": "Operator No Bound", "rank": 0, "ours": "compute.operator_no_bound",
            "theirs": f"{summary['problem count']} operators, {total} us ({summary['time ratio']} of "
                      f"{summary['total_time(us)']} us), none of mte, cube, vector, scalar over 80 %",
            "differs": "figures differ by definition: msprof-analyze reads the AI Core ratios only and applies no "
                       "20 us floor; ours reads the AI Vector ratios too and keeps the floor (docs/advisor.md "
                       "'Operator No Bound on the Db export')"}


CHECKS = (("环境变量分析", env_entry), ("慢卡分析", slow_rank_entry), ("慢链路分析", slow_link_entry),
          ("字节对齐分析", byte_alignment_entry), ("Vector算子性能分析", ai_core_entry),
          ("动态shape算子", dynamic_shape_entry), ("Api compare", api_compare_entry),
          ("亲和API接口", affinity_entry),
          ("算子瓶颈", no_bound_entry))


# The analyzers `advisor all` logs as started ("Start analysis NAME"), by the check each makes and our
# equivalents; one that raised no problem on a run is recorded as silent there.
ANALYZERS = {
    "AICoreFreqAnalyzer": ("AI Core Frequency", ["compute.ai_core_frequency"]),
    "AicpuAnalyzer": ("AICPU Issues", ["compute.ai_cpu_ops", "compute.aicpu_dtype"]),
    "BandwidthContentionAnalyzer": ("Bandwidth Contention", ["communication.bandwidth_contention"]),
    "BlockDimAnalyzer": ("Block Dim", ["compute.block_dim"]),
    "ByteAlignmentAnalyzer": ("Byte Alignment", ["communication.byte_alignment"]),
    "ConjecturedGcAnalyzer": ("GC Analysis", ["host.gc", "host.gc_pause"]),
    "DataloaderAnalyzer": ("Slow Dataloader", ["data.slow_dataloader"]),
    "DynamicShapeAnalyzer": ("Operator Dynamic Shape", ["config.dynamic_shape"]),
    "EnvironmentVariableAnalyzer": ("Environment Variable", ["config.ascend_env"]),
    "FusionOPAnalyzer": ("Affinity API", ["fusion.api_replacement"]),
    "GcAnalyzer": ("GC Analysis", ["host.gc", "host.gc_pause"]),
    "MemoryAnalyzer": ("Memory Operator", ["memory.allocator_api"]),
    "OpDispatchAnalyzer": ("Operator Dispatch", ["host.op_compile"]),
    "OperatorBoundAnalyzer": ("Operator No Bound", ["compute.operator_no_bound"]),
    "PacketAnalyzer": ("Packet", ["communication.small_packets", "communication.small_messages"]),
    "RDMARetransmissionAnalyzer": ("Communication Retransmission", ["communication.retransmission"]),
    "SyncBNAnalyzer": ("SyncBatchNorm", ["communication.sync_batchnorm"]),
    "SynchronizeStreamAnalyzer": ("Synchronize Stream", ["host.synchronize_stream"]),
}

# Where ours fires on a run the tool ran a check on and found nothing, why.
SILENT_DIFFERS = {
    ("db/level2", "Environment Variable"):
        "the Db export keeps the environment in its META_DATA table (ENV_VARIABLES), which ours reads; "
        "msprof-analyze 26.1.0 reads profiler_metadata.json only, which the Db export lacks, and says nothing",
    ("text/level1", "Operator No Bound"):
        "msprof-analyze skips the check on a run whose operators are dynamic shape (Operator Dynamic Shape "
        "fires on the text exports); ours makes it on every run",
    ("text/level2", "Operator No Bound"):
        "msprof-analyze skips the check on a run whose operators are dynamic shape (Operator Dynamic Shape "
        "fires on the text exports); ours makes it on every run",
}


def silent_entries(run, log_path, reported):
    """The checks the log shows started that raised no problem, each once."""
    with open(log_path, encoding="utf-8", errors="replace") as log:
        started = sorted(set(re.findall(r"Start analysis (\w+)", log.read())))
    entries = []
    for analyzer in started:
        if analyzer not in ANALYZERS:
            sys.exit(f"{log_path}: no mapping for the analyzer {analyzer}")
        check, ours = ANALYZERS[analyzer]
        if check in reported:
            continue
        reported.add(check)
        entry = {"check": check, "problem": False, "ours": ours,
                 "theirs": f"ran ({', '.join(a for a in started if ANALYZERS.get(a, ('',))[0] == check)}), "
                           "no problem"}
        if (run, check) in SILENT_DIFFERS:
            entry["differs"] = SILENT_DIFFERS[(run, check)]
        entries.append(entry)
    return entries


# The parity table's status of the checks whose definition differs on purpose from msprof-analyze's (a row
# marked "equivalent" must fire where the check does, with figures that agree); the others are "equivalent".
TABLE_STATUS = {
    "Slow Rank": "differs on purpose",
    "Slow Link": "differs on purpose",
    "Operator No Bound": "differs on purpose",
    "API compare (slowest vs fastest rank)": "differs on purpose",
    "GC Analysis": "differs on purpose",
    "Packet": "differs on purpose",
}
SLOW_LINK_DIFFERS = ("ours judges the rank's whole profile rather than each step, leaves ranks without traffic on a "
                     "transport out of its mean, and adds no HCCS rows to the SDMA size")


def with_status(entry):
    if entry["check"] in TABLE_STATUS:
        entry["status"] = TABLE_STATUS[entry["check"]]
    return entry


def run_findings(run, path, log_path):
    sheets = read_workbook(path)
    entries = []
    for summary in records(next(iter(sheets.values()))):
        make = next((m for key, m in CHECKS if key in summary["category"]), None)
        if make is None:
            sys.exit(f"{path}: no mapping for the check '{summary['category']}'")
        entry = make(sheets, summary)
        entry["theirs_category"] = summary["category"]
        entries.append(entry)
    return [with_status(e) for e in entries + silent_entries(run, log_path, {e["check"] for e in entries})]


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: record.py OUT DATE (OUT/<run with / as _>/log/mstt_advisor_*.xlsx)")
    out, date = sys.argv[1], sys.argv[2]
    command = ("msprof-analyze advisor all -d RUN -o OUT (run from the source tree as "
               "`python3 -c \"from msprof_analyze.cli.entrance import msprof_analyze_cli; msprof_analyze_cli()\"`)")
    table = {"tool": "msprof-analyze (github.com/Ascend/msprof-analyze)", "version": f"26.1.0 (git {COMMIT})",
             "command": command, "recorded": date,
             "source": f"RUN FROM SOURCE: msprof-analyze 26.1.0 at git commit {COMMIT}, Python 3.11, on {date}; "
                       "each run copied to a scratch directory first, xlsxwriter's missing Worksheet.autofit "
                       "stubbed (record.py shows the exact command); the figures are read from the workbook "
                       "it writes (log/mstt_advisor_*.xlsx) by tests/data/msprof_analyze/record.py, which says "
                       "how it was run",
             "runs_root": "ascend/msinsight/test/data/pytorch", "runs": {}}
    for run in RUNS:
        books = sorted(glob.glob(f"{out}/{run.replace('/', '_')}/log/mstt_advisor_*.xlsx"))
        if not books:
            sys.exit(f"{out}: no workbook for {run}")
        table["runs"][run] = run_findings(run, books[-1], f"{out}/{run.replace('/', '_')}.log")
    json.dump(table, sys.stdout, ensure_ascii=False, indent=1)
    print()


if __name__ == "__main__":
    main()
