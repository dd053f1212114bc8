#!/usr/bin/env python3
"""Writes a small Kineto trace shaped like the ROCm trace HTA's own tests use, so that `--semantics hta`
can be held against HTA's outputs on a device type beyond CUDA (expected_hta.json, written by HTA; see
README.md).

rocm.json: a ROCm run (roctracer names): hipLaunchKernel / hipExtModuleLaunchKernel /
  hipMemcpyWithStream on the host, rocBLAS (Cijk_*), elementwise and RCCL kernels on two streams, an
  HtoD copy; four ProfilerSteps (HTA drops the last).
mtia.json: an MTIA run (backend "mtia:hccl"): runFunction launches, kernels whose stream arg is not their
  tid, dma_request rows with a stream arg and without one, work before the first step; four
  ProfilerSteps (HTA keeps the last on MTIA, and filters by the steps' time range).
Deterministic: the same bytes on every run.

    python3 make_traces.py OUT_DIR
"""
import json
import os
import sys

BASE_US = 4203669600000.0


def x(cat, name, pid, tid, ts, dur, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": round(BASE_US + ts, 3),
            "dur": round(dur, 3), "args": args}


def flow(phase, ident, pid, tid, ts):
    e = {"ph": phase, "id": ident, "pid": pid, "tid": tid, "ts": round(BASE_US + ts, 3), "cat": "ac2g", "name": "ac2g"}
    if phase == "f":
        e["bp"] = "e"
    return e


def rocm():
    host, dev = 4242, 2
    events, corr = [], 1000
    t = 0.0
    for step in range(1, 5):
        start = t
        ops = [("hipLaunchKernel", "void at::native::elementwise_kernel<128, 2>(int, at::native::AddFunctor<float>)", 0,
                12.5, 40.0),
               ("hipExtModuleLaunchKernel", "Cijk_Alik_Bljk_SB_MT64x16x32_MI16x16x1_ISA90a", 0, 15.0, 210.0),
               ("hipLaunchKernel", "ncclDevKernel_Generic(ncclDevComm*, unsigned long, ncclWork*)", 1, 9.0, 150.0),
               ("hipMemcpyWithStream", "Memcpy HtoD (Host -> Device)", 0, 30.0, 18.0),
               ("hipLaunchKernel", "void at::native::reduce_kernel<512, 1>(at::native::ReduceOp<float>)", 0, 8.0,
                25.0)]
        t += 5.0
        device_free = {0: t + 20.0, 1: t + 40.0}
        for api, kernel, stream, call, run in ops:
            corr += 1
            events.append(x("cuda_runtime", api, host, host, t, call, correlation=corr, **{"External id": corr}))
            events.append(flow("s", corr, host, host, t))
            begin = max(device_free[stream], t + 6.0)
            cat = "gpu_memcpy" if kernel.startswith("Memcpy") else "kernel"
            events.append(x(cat, kernel, dev, stream, begin, run, device=dev, stream=stream, correlation=corr,
                            **{"External id": corr}))
            events.append(flow("f", corr, dev, stream, begin))
            device_free[stream] = begin + run + (3.0 if stream == 0 else 0.0)
            t += call + 4.0
        t = max(t, max(device_free.values())) + 35.0 + 10.0 * step  # the host pauses between steps
        events.append(x("user_annotation", f"ProfilerStep#{step}", host, host, start, t - start - 1.0))
    meta = {"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},
            "deviceProperties": [{"id": dev, "name": "AMD Radeon Graphics", "computeMajor": 9, "computeMinor": 0,
                                  "warpSize": 64, "numSms": 104}],
            "displayTimeUnit": "ms", "baseTimeNanoseconds": 1735632360000000000}
    return dict(meta, traceEvents=sorted(events, key=lambda e: (e["ts"], e["ph"])))


def mtia():
    host, dev = 3100, 9
    launch = "runFunction - job_prep_and_submit_for_execution"
    events, corr = [], 500

    def kernel(name, tid, stream, t, run, correlation=None):
        args = {"stream": stream} if stream is not None else {}
        if correlation is not None:
            args["correlation"] = correlation
        return x("mtia_ccp_events", name, dev, tid, t, run, **args)

    # Before the first step: a launch and its kernel, and copies, which HTA's MTIA filter drops.
    corr += 1
    events.append(x("mtia_runtime", launch, host, host, 0.0, 30.0, correlation=corr))
    events.append(kernel("fc-dtype_Float", 4, 102, 40.0, 60.0, corr))
    events.append(kernel("dma_request", 4, 102, 110.0, 8.0))
    events.append(kernel("dma_request", 801, None, 112.0, 6.0))
    t = 200.0
    for step in range(1, 5):
        start = t
        t += 6.0
        ops = [("aten::mul", "aten::mul.out-dtype_Float", 4, 102, 45.0),
               ("aten::add", "add-dtype_Float", 408, 104, 70.0 + 10.0 * step),
               ("aten::cat", "aten::cat.out-dtype_Long-extraKey_1", 4, 102, 30.0)]
        device_free = {102: t + 25.0, 104: t + 10.0}
        for op, name, tid, stream, run in ops:
            corr += 1
            events.append(x("cpu_op", op, host, host, t, 40.0, **{"External id": corr}))
            events.append(x("mtia_runtime", launch, host, host, t + 4.0, 30.0, correlation=corr))
            begin = max(device_free[stream], t + 40.0)
            events.append(kernel(name, tid, stream, begin, run, corr))
            device_free[stream] = begin + run + 4.0
            t += 48.0
        copy = device_free[102] - 2.0  # a copy that overlaps the stream's last kernel
        events.append(kernel("dma_request", 4, 102, copy, 12.0))
        events.append(kernel("dma_request", 801, None, copy + 3.0, 5.0 + step))
        t = max(t, max(device_free.values())) + 30.0 + 8.0 * step
        events.append(x("user_annotation", f"ProfilerStep#{step}", host, host, start, t - start - 1.0))
    # After the last step: a copy outside every step.
    events.append(kernel("dma_request", 801, None, t + 20.0, 9.0))
    meta = {"schemaVersion": 1,
            "distributedInfo": {"backend": "mtia:hccl,cpu:gloo", "rank": 0, "world_size": 1},
            "displayTimeUnit": "ms", "baseTimeNanoseconds": 1735632360000000000}
    return dict(meta, traceEvents=sorted(events, key=lambda e: (e["ts"], e["ph"])))


def main():
    out = sys.argv[1]
    for name, doc in (("rocm", rocm()), ("mtia", mtia())):
        os.makedirs(os.path.join(out, name), exist_ok=True)
        with open(os.path.join(out, name, f"{name}.json"), "w") as f:
            json.dump(doc, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
