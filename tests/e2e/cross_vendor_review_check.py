#!/usr/bin/env python3
"""Cross-vendor readings on the shared corpus that a user review found wrong:

  - MI300X (kineto/tracelens/mi300/Qwen...): its hipBLASLt / Tensile MFMA GEMMs (Cijk_..._MI16x16x1) are
    matrix-core work: `profile` gives a tensor-core share above 0 and `analyze` has no
    compute.tensor_cores_unused finding (AMD's compute capability 9.x is not Hopper's).
  - B200 (kineto/tracelens/b200/eager_trace): the communication bandwidth is below its threshold, but
    exposed communication holds 2.5 % of the step: not the bottleneck, like the other two figures, and the
    figure says it rests on one collective.
  - Ascend (ascend/msinsight/server/src/test/test_data): no utilization of any rank is above 100 % of its
    peak; the operator-shape estimate that was is unknown and "inconsistent", naming both figures.
  - compare of the H100 and MI300X Qwen traces: Triton's attn_fwd on the MI300X is attention, as
    FlashAttention is on the H100, not "other".

Usage: cross_vendor_review_check.py TUNEPROF SHARED (the view holding traces/)
"""
import os
import sys

from harness import failures, note as check, report, run_json_noted as run


def main():
    binary, shared = sys.argv[1], sys.argv[2]
    traces = os.path.join(shared, "traces")
    h100 = os.path.join(traces, "kineto/tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz")
    mi300 = os.path.join(traces, "kineto/tracelens/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz")
    b200 = os.path.join(traces, "kineto/tracelens/b200/eager_trace.json.gz")
    ascend = os.path.join(traces, "ascend/msinsight/server/src/test/test_data")

    profile = run(binary, "profile", "--json", mi300)
    if profile:
        share = profile["ranks"][0]["compute"]["tensor_core_share"]
        check(share is not None and share > 0, f"MI300X: tensor-core share {share}, expected above 0")
    advice = run(binary, "analyze", "--json", mi300)
    if advice:
        ids = [f["id"] for f in advice["findings"]]
        check("compute.tensor_cores_unused" not in ids, f"MI300X: MFMA GEMMs reported without tensor cores: {ids}")

    advice = run(binary, "analyze", "--json", b200)
    if advice:
        comm = advice["ranks"][0]["utilizations"][2]
        check(comm["name"] == "communication_bandwidth", f"B200: third utilization is {comm['name']}")
        check(comm["below_threshold"] and not comm["bottleneck"],
              f"B200: communication {comm['value_pct']} % on 2.5 % of the step is called a bottleneck")
        check("a small sample" in comm["measured_as"], f"B200: one collective not said: {comm['measured_as']}")

    advice = run(binary, "analyze", "--json", ascend)
    if advice:
        inconsistent = 0
        for rank in advice["ranks"]:
            for u in rank["utilizations"]:
                value = u.get("value_pct")
                check(value is None or value <= 100, f"Ascend rank {rank.get('rank')}: {u['name']} {value} % over 100")
                if u["measured_as"].startswith("unknown: inconsistent"):
                    inconsistent += 1
                    check("1735.8 GB/s" in u["measured_as"] and "1420 GB/s" in u["measured_as"],
                          f"Ascend: the inconsistent figure does not name both numbers: {u['measured_as']}")
                    check("lower bound" not in u["measured_as"], f"Ascend: still a lower bound: {u['measured_as']}")
        check(inconsistent == 1, f"Ascend: {inconsistent} inconsistent figures, expected 1")

    diff = run(binary, "compare", "--json", h100, mi300)
    if diff:
        categories = {c["name"]: c for c in diff["categories"]}
        attention = categories.get("attention", {})
        check(attention.get("before_count") == 24 and attention.get("after_count") == 24,
              f"compare: attention {attention}, expected 24 -> 24")
        other = categories.get("other", {})
        check(other.get("after_count", 0) <= 1, f"compare: MI300X attention left in other: {other}")

    return report(failures, f"cross-vendor review: {len(failures)} failures")


if __name__ == "__main__":
    sys.exit(main())
