#!/usr/bin/python3
"""End-to-end checks of what `tuneprof compare` adds beyond step time and operators, on our own before/after pairs (tests/data/compare_pairs) and one shared GPU pair.

- Utilizations, MFU and the dominant bottleneck: `metrics` holds
  compute_units_utilization_pct, memory_bandwidth_utilization_pct,
  communication_bandwidth_utilization_pct and mfu with before/after/delta_pct/significant; values are
  null or in range (0-100 %, MFU 0-1), never significant (one reading a side), and equal what
  `tuneprof analyze --json` reports for the same side (the slowest rank's utilizations, the job's
  dominant bottleneck); `dominant_bottleneck` before/after are valid names. On the GPU pair
  (HTA's trace_diff control/test) the compute-unit utilization is known on both sides.
- Categories: `categories[]` against an independent computation from the JSON: outermost
  cpu_op events per thread inside ProfilerStep ranges (an op inside another op is its parent's time),
  per step, classified by the small name table below; the categories' sum equals the sum of all
  outermost ops.
- Predicted vs measured: `--advice` with `advise --json` of the before side lists exactly its
  finding ids; every finding has a measured change or says why not. The advisor's fusion.attention
  finding on the SDPA pair (the causal mask built in place: matmul, div, ones, triu, masked_fill,
  softmax, matmul): its measured change must equal, from the traces, the per-step time of the
  outermost operators its example names before vs those plus the operators only the after side has
  that do their kind of work or attention (the SDPA) after. compute.fp32_matmul (which the advisor does fire) is checked the same way against aten::matmul.
  A bad file is one error line naming it, exit 1; a missing one exit 2.
- Markdown: `--format md` is GitHub tables: every table row has its header's cell count, the
  metric rows are the JSON's metric keys in order, the operator rows are the JSON's first ops.
Usage: compare_fields_check.py TUNEPROF DATA_DIR SHARED_DIR
"""
import collections
import gzip
import json
import pathlib
import re
import sys
import tempfile

from harness import failures, note as check, report, run, run_json_noted

UTILIZATIONS = {"compute_units_utilization_pct": "compute_units",
                "memory_bandwidth_utilization_pct": "memory_bandwidth",
                "communication_bandwidth_utilization_pct": "communication_bandwidth"}
BOTTLENECKS = {"compute", "memory", "communication", "host", "data", "idle", "none", "unknown"}
# Every outermost operator of the bundled pairs, with its category.
CATEGORY = {"aten::mm": "matmul", "aten::matmul": "matmul", "aten::conv2d": "conv",
            "aten::scaled_dot_product_attention": "attention", "aten::relu": "vector", "aten::relu_": "vector",
            "aten::batch_norm": "vector", "aten::div": "vector", "aten::masked_fill": "vector",
            "aten::softmax": "vector", "aten::clone": "memcpy", "aten::transpose": "other",
            "aten::ones": "vector", "aten::triu": "vector"}
PAIRS = [("attention_before", "attention_after"), ("conv_bn_before", "conv_bn_after"),
         ("inplace_before", "inplace_after"), ("aa_run1", "aa_run2")]


def close(a, b):
    """Equal up to the ns rounding of summed durations."""
    return a is not None and b is not None and abs(a - b) <= 1e-6 * abs(b) + 1e-3


class Trace:
    """Outermost host operators per step, read with json alone."""

    def __init__(self, path):
        events = [e for e in json.load(gzip.open(path))["traceEvents"] if e.get("ph") == "X"]
        steps = [(e["ts"], e["ts"] + e["dur"]) for e in events
                 if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")]
        self.steps = len(steps)
        self.names = set()
        by_thread = collections.defaultdict(list)
        for e in events:
            if e.get("cat") == "cpu_op" and any(start <= e["ts"] < end for start, end in steps):
                by_thread[e["tid"]].append(e)
                self.names.add(e["name"])
        self.by_thread = by_thread

    def outermost(self, select=lambda name: True):
        """The selected ops not inside another selected op of their thread."""
        picked = []
        for ops in self.by_thread.values():
            covered = None
            for e in sorted((e for e in ops if select(e["name"])), key=lambda e: (e["ts"], -e["dur"])):
                end = e["ts"] + e["dur"]
                if covered is not None and e["ts"] < covered and end <= covered:
                    continue
                covered = end if covered is None else max(covered, end)
                picked.append(e)
        return picked

    def per_step_us(self, select):
        return sum(e["dur"] for e in self.outermost(select)) / max(self.steps, 1)


def check_verdict(tuneprof, doc, before, after, label):
    sides = {"before": run_json_noted(tuneprof, "analyze", before, "--json"),
             "after": run_json_noted(tuneprof, "analyze", after, "--json")}
    for key, name in list(UTILIZATIONS.items()) + [("mfu", None)]:
        metric = doc["metrics"].get(key)
        check(metric is not None, f"{label}: metrics.{key} missing")
        if metric is None:
            continue
        for field in ("before", "after", "delta_pct", "significant"):
            check(field in metric, f"{label}: metrics.{key}.{field} missing")
        check(metric["significant"] is False, f"{label}: {key} significant (one reading a side)")
        top = 1.0 if key == "mfu" else 100.0
        for side, analysis in sides.items():
            value = metric[side]
            check(value is None or 0 <= value <= top, f"{label}: {key} {side} = {value} out of range")
            if name is None or analysis is None:
                continue
            slowest = max(analysis["ranks"], key=lambda r: r["step_us"])
            want = next(u["value_pct"] for u in slowest["utilizations"] if u["name"] == name)
            check(value == want or close(value, want), f"{label}: {key} {side} {value} != analyze's {want}")
    for side, analysis in sides.items():
        got = doc["dominant_bottleneck"][side]
        check(got in BOTTLENECKS, f"{label}: dominant_bottleneck.{side} = {got!r}")
        if analysis is not None:
            check(got == analysis["dominant_bottleneck"], f"{label}: dominant {side} {got} != analyze's "
                                                          f"{analysis['dominant_bottleneck']}")
    return doc


def check_categories(doc, before, after, label):
    ours = {c["name"]: c for c in doc["categories"]}
    for side, trace in (("before", before), ("after", after)):
        unknown = {e["name"] for e in trace.outermost()} - CATEGORY.keys()
        check(not unknown, f"{label}: extend CATEGORY with {unknown}")
        want = collections.Counter()
        counts = collections.Counter()
        for e in trace.outermost():
            want[CATEGORY.get(e["name"], "?")] += e["dur"] / trace.steps
            counts[CATEGORY.get(e["name"], "?")] += 1 / trace.steps
        for name in set(want) | {n for n, c in ours.items() if c[f"{side}_us"] > 0}:
            got = ours.get(name, {}).get(f"{side}_us")
            check(close(got, want[name]), f"{label} {side}: category {name} {got} us != {want[name]}")
            got_count = ours.get(name, {}).get(f"{side}_count")
            check(close(got_count, counts[name]), f"{label} {side}: category {name} count {got_count} != {counts[name]}")
        total = sum(c[f"{side}_us"] for c in doc["categories"])
        check(close(total, trace.per_step_us(lambda name: True)), f"{label} {side}: categories sum {total}")


def advice_file(tuneprof, data, directory):
    """advise --json of the SDPA pair's before side, which must hold a fusion.attention finding."""
    advice = run_json_noted(tuneprof, "advise", data / "attention_before.json.gz", "--json")
    if advice is None:
        return None, None
    check("fusion.attention" in [f["id"] for f in advice["findings"]], "advise: no fusion.attention on the SDPA pair")
    path = pathlib.Path(directory) / "attention_before_advice.json"
    path.write_text(json.dumps(advice))
    return path, advice


def check_advice(tuneprof, data, directory):
    before_path, after_path = data / "attention_before.json.gz", data / "attention_after.json.gz"
    path, advice = advice_file(tuneprof, data, directory)
    if path is None:
        return
    doc = run_json_noted(tuneprof, "compare", before_path, after_path, "--json", "--advice", path)
    if doc is None:
        return
    check([a["id"] for a in doc["advice"]] == [f["id"] for f in advice["findings"]],
          f"advice ids {[a['id'] for a in doc['advice']]} != the file's")
    for check_row, finding in zip(doc["advice"], advice["findings"]):
        unknown = finding["estimated_gain_us"] == 0 and finding.get("gain_model", "").startswith("unknown")
        check(check_row["estimated_gain_us"] == (None if unknown else finding["estimated_gain_us"]),
              f"{finding['id']}: gain {check_row['estimated_gain_us']} != the file's")
        measured = check_row["measured_change_us"] is not None
        check(measured or check_row["unknown_reason"], f"{finding['id']}: neither measured nor a reason")
    before, after = Trace(before_path), Trace(after_path)
    rows = {a["id"]: a for a in doc["advice"]}
    # fusion.attention: the named ops, then the named ops plus what only the after side has (the SDPA).
    finding = next((f for f in advice["findings"] if f["id"] == "fusion.attention"), {})
    named = set(finding.get("evidence", {}).get("example", "").split(" -> "))
    check({"aten::matmul", "aten::softmax"} <= named, f"fusion.attention example names {sorted(named)}")
    # Operators only the after side has, of the named operators' kinds or attention.
    after_only = {name for name in after.names - before.names
                  if CATEGORY.get(name) in ("matmul", "vector", "attention")}
    check("aten::scaled_dot_product_attention" in after_only, f"SDPA not after-only: {sorted(after_only)}")
    want_before = before.per_step_us(lambda name: name in named)
    want_after = after.per_step_us(lambda name: name in named or name in after_only)
    row = rows.get("fusion.attention", {})
    check(close(row.get("before_us"), want_before), f"fusion.attention before {row.get('before_us')} != {want_before}")
    check(close(row.get("after_us"), want_after), f"fusion.attention after {row.get('after_us')} != {want_after}")
    check(close(row.get("measured_change_us"), want_after - want_before),
          f"fusion.attention change {row.get('measured_change_us')} != {want_after - want_before}")
    sdpa = after.per_step_us(lambda name: name == "aten::scaled_dot_product_attention")
    check(close(want_after, sdpa), f"after-only ops beyond the SDPA: {want_after} vs SDPA {sdpa}")
    if "compute.fp32_matmul" in rows:
        row = rows["compute.fp32_matmul"]
        want = before.per_step_us(lambda name: name == "aten::matmul")
        check(close(row["before_us"], want), f"compute.fp32_matmul before {row['before_us']} != {want}")
        check(row["after_us"] == 0, f"compute.fp32_matmul after {row['after_us']} (no aten::matmul after)")
    text = run(tuneprof, "compare", before_path, after_path, "--advice", path).stdout
    check("predicted vs measured" in text and "fusion.attention" in text, "text: no predicted vs measured table")
    check(all(len(line) <= 100 for line in text.splitlines()), "text wider than 100 columns")
    # Bad files.
    bad = pathlib.Path(directory) / "bad_advice.json"
    bad.write_text('{"schema": "tuneprof.advise/1", "findings": [{"id": 3}]}')
    result = run(tuneprof, "compare", before_path, after_path, "--advice", bad)
    check(result.returncode == 1 and str(bad) in result.stderr and result.stderr.count("\n") == 1,
          f"bad advice file: exit {result.returncode}: {result.stderr!r}")
    missing = pathlib.Path(directory) / "missing.json"
    result = run(tuneprof, "compare", before_path, after_path, "--advice", missing)
    check(result.returncode == 2 and str(missing) in result.stderr, f"missing advice: exit {result.returncode}")


def table_rows(markdown):
    """Each table's rows (cells split at unescaped pipes), the header first."""
    tables, current = [], None
    for line in markdown.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            if current is None:
                current = []
                tables.append(current)
            current.append(cells)
        else:
            current = None
    return tables


def check_markdown(tuneprof, before, after, doc, label):
    result = run(tuneprof, "compare", before, after, "--format", "md")
    check(result.returncode == 0, f"{label} md: exit {result.returncode}")
    tables = table_rows(result.stdout)
    check(len(tables) >= 2, f"{label} md: {len(tables)} tables")
    for table in tables:
        check(len(table) >= 2 and all(re.fullmatch(r":?-+:?", c) for c in table[1]),
              f"{label} md: no separator row under {table[0]}")
        check(all(len(row) == len(table[0]) for row in table), f"{label} md: ragged table {table[0]}")
    if len(tables) < 2:
        return
    metrics = [row[0] for row in tables[0][2:]]
    check(metrics == list(doc["metrics"]) + ["dominant_bottleneck"], f"{label} md: metric rows {metrics}")
    ops = [row[1].strip("`").replace("\\|", "|") for row in tables[1][2:]]
    want = [op["name"] if len(op["name"]) <= 80 else op["name"][:77] + "..." for op in doc["ops"][:len(ops)]]
    check(ops == want and len(ops) == min(15, len(doc["ops"])), f"{label} md: op rows {ops[:3]}")


def main():
    tuneprof, data, shared = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    for before_name, after_name in PAIRS:
        before, after = data / f"{before_name}.json.gz", data / f"{after_name}.json.gz"
        doc = run_json_noted(tuneprof, "compare", before, after, "--json")
        if doc is None:
            continue
        check_verdict(tuneprof, doc, before, after, before_name)
        check_categories(doc, Trace(before), Trace(after), before_name)
        check_markdown(tuneprof, before, after, doc, before_name)
    gpu = shared / "traces" / "kineto" / "hta" / "trace_diff"
    doc = run_json_noted(tuneprof, "compare", gpu / "control", gpu / "test", "--json")
    if doc is not None:
        check_verdict(tuneprof, doc, gpu / "control", gpu / "test", "trace_diff")
        units = doc["metrics"]["compute_units_utilization_pct"]
        check(units["before"] is not None and units["after"] is not None, f"trace_diff: compute units {units}")
        check({c["name"] for c in doc["categories"]} >= {"matmul", "communication", "memcpy"},
              f"trace_diff: categories {[c['name'] for c in doc['categories']]}")
    with tempfile.TemporaryDirectory() as directory:
        check_advice(tuneprof, data, directory)
    return report(failures, f"compare_fields_check: {len(failures)} failure(s)")


if __name__ == "__main__":
    sys.exit(main())
