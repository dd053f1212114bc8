#!/usr/bin/env python3
"""Write a deterministic N-rank Kineto (PyTorch profiler, CUDA) expert-parallel MoE run whose communication
runs in kernels not named nccl*: DeepEP-like token exchange and a vLLM-style custom all-reduce. One trace file
per rank; the true per-step figures are printed as JSON on stdout, computed here by interval arithmetic over
the kernels written (independently of tuneprof).

Each rank runs STEPS ProfilerSteps of LAYERS MoE layers. A layer, on the compute stream (7) unless noted:
  - attention kernels (GEMMs), then DeepEP's layout kernel `deep_ep::layout::get_dispatch_layout<...>`
    (local compute: must stay compute);
  - on the communication stream (24): `notify_dispatch<...>` then `dispatch<...>` (the token all-to-all),
    starting before the attention ends, so their first part is hidden under compute; while dispatch runs
    the compute stream runs a shared-expert GEMM for part of it, then waits (exposed all-to-all);
  - the experts' grouped GEMMs, then `combine<...>` on stream 24 beside a short compute kernel;
  - a tensor-parallel all-reduce `vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>` on the compute stream
    (exposed: nothing computes beside it).
Every kernel is launched by cudaLaunchKernel inside its step's ProfilerStep range (ac2g flows), so tuneprof
places it in that step. dispatch / combine carry Kineto's collective args (In/Out msg nelems, dtype) so their
bytes are known; the all-reduce does not. Durations get a seeded per-rank jitter.

Truth per step and rank (µs): step (device span of the step's kernels), host step (the ProfilerStep range),
one step (the longer of the two: the step every command reports), communication (union of the communication
kernels), exposed communication (that union minus the compute union), all_to_all (union of notify_dispatch /
dispatch / combine), its exposed part, its share of the one step, its bytes.

With --mc2-out DIR2 it also writes one torch_npu rank (text export: trace_view.json and kernel_details.csv,
DIR2/rank0_ascend_pt) whose MoE layers run Ascend MC2 fused operators on the compute stream: MatMulV2 ->
MatmulAllReduce (fused matmul + all-reduce) -> MoeDistributeDispatchV2 -> GroupedMatmul ->
MoeDistributeCombineV2. Its truth ("mc2") is per step: computing (every task, each counted once), no
communication in the split (the fused operators compute while they communicate), the fused operators as
collectives (allreduce, alltoall), the dispatch / combine union as the step's all-to-all and the fused
operators' union as the step's fused compute + communication part (fused_comm_us). --mc2-text-out
DIR3 writes the same rank as a text export that did not keep its timeline (kernel_details.csv and
step_trace_time.csv, no trace_view.json): the same truth ("mc2_text").

    python3 bench/gen_expert_parallel.py --out DIR [--ranks 4] [--steps 3] [--layers 4] [--seed 1]
                                         [--mc2-out DIR2] [--mc2-text-out DIR3]
"""
import json
import os
import random

from intervals import intersection_length, length, union
from trace_events import x, flow, hopper_properties, generator_arguments

BASE_NS = 1735689600000000000
T0_US = 1000000.0
PID = 4000
STREAM = 7
COMM_STREAM = 24
GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel"
GROUPED_GEMM = "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::GroupProblemShape>>(Params)"
LAYOUT = "void deep_ep::layout::get_dispatch_layout<256, 32, 8>(long const*, int*, int*, int*, bool*, int, int, int, int)"
NOTIFY = "void deep_ep::intranode::notify_dispatch<8>(int const*, int*, int const*, int*, int, int, int, bool const*)"
DISPATCH = "void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*, float*, int*, int4 const*)"
COMBINE = "void deep_ep::intranode::combine<__nv_bfloat16, 8, 768, 4096>(int4*, float*, int4 const*, float const*)"
ALL_REDUCE = ("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, "
              "vllm::Signal*, __nv_bfloat16*, int, int)")
TOKENS_NELEMS = 4096 * 7168  # one layer's routed tokens x hidden size, bf16
EP_NAMES = (NOTIFY, DISPATCH, COMBINE)
COMM_NAMES = EP_NAMES + (ALL_REDUCE,)


def layer_kernels(t, jitter):
    """One MoE layer from true time t (µs): [(name, stream, start, dur)] and the layer's end."""
    k = []

    def add(name, stream, start, dur):
        k.append((name, stream, start, dur))
        return start + dur

    c = add(GEMM, STREAM, t, 120.0 * jitter)
    c = add(GEMM, STREAM, c, 90.0)
    c = add(LAYOUT, STREAM, c, 15.0)
    # notify + dispatch start 60 µs before the attention's last kernels end: that part is hidden.
    d = add(NOTIFY, COMM_STREAM, c - 60.0, 25.0)
    d = add(DISPATCH, COMM_STREAM, d, 300.0 * jitter)
    add(GEMM, STREAM, c + 5.0, 140.0)  # shared expert beside dispatch; the rest of dispatch is exposed
    c = add(GROUPED_GEMM, STREAM, d + 5.0, 400.0 * jitter)
    e = add(COMBINE, COMM_STREAM, c + 2.0, 260.0 * jitter)
    add(GEMM, STREAM, c + 10.0, 100.0)  # beside combine
    end = add(ALL_REDUCE, STREAM, e + 3.0, 70.0)
    return k, end + 10.0


def rank_events(args, rank):
    rng = random.Random(args.seed * 1000 + rank)
    events, truth, corr = [], [], rank * 10_000_000
    t = T0_US
    for number in range(1, args.steps + 1):
        step_start = t
        t += 30.0
        kernels = []
        for _ in range(args.layers):
            layer, t = layer_kernels(t, 1.0 + rng.uniform(-0.05, 0.05))
            kernels += layer
        step_end = t + 40.0
        for name, stream, start, dur in kernels:
            corr += 1
            launch = max(start - 12.0, step_start + 1.0)
            events.append(x("cuda_runtime", "cudaLaunchKernel", PID, PID, launch, 4.0, correlation=corr))
            events.append(flow("s", corr, PID, PID, launch))
            extra = {}
            if name in (DISPATCH, COMBINE):
                extra = {"In msg nelems": TOKENS_NELEMS, "Out msg nelems": TOKENS_NELEMS, "dtype": "BFloat16"}
            events.append(x("kernel", name, 0, stream, start, dur, device=0, stream=stream, correlation=corr,
                            grid=[132, 1, 1], block=[768, 1, 1], **extra))
            events.append(flow("f", corr, 0, stream, start))
        events.append(x("user_annotation", f"ProfilerStep#{number}", PID, PID, step_start, step_end - step_start))
        truth.append(step_truth(number, kernels, step_end - step_start))
        t = step_end + 50.0
    return events, truth


def step_truth(number, kernels, host_step):
    spans = lambda names: union([(s, s + d) for n, _, s, d in kernels if n in names])
    compute = union([(s, s + d) for n, _, s, d in kernels if n not in COMM_NAMES])
    comm, ep = spans(COMM_NAMES), spans(EP_NAMES)
    first = min(s for _, _, s, _ in kernels)
    last = max(s + d for _, _, s, d in kernels)
    ep_bytes = sum(TOKENS_NELEMS * 2 for n, _, _, _ in kernels if n in (DISPATCH, COMBINE))
    step = last - first
    # The step every command reports: the longer of the host's ProfilerStep range and the device span.
    one_step = max(host_step, step)
    return {"step": number, "step_us": step, "host_step_us": host_step, "one_step_us": one_step,
            "communication_us": length(comm),
            "exposed_communication_us": length(comm) - intersection_length(comm, compute),
            "all_to_all_us": length(ep), "all_to_all_exposed_us": length(ep) - intersection_length(ep, compute),
            "all_to_all_share": length(ep) / one_step, "all_to_all_bytes": ep_bytes,
            "all_to_all_kernels": sum(1 for n, _, _, _ in kernels if n in EP_NAMES)}


def rank_trace(args, rank):
    events, truth = rank_events(args, rank)
    doc = {"schemaVersion": 1,
           "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": args.ranks},
           "deviceProperties": hopper_properties("NVIDIA H800"),
           "traceEvents": sorted(events, key=lambda e: (e["ts"], e["ph"])),
           "displayTimeUnit": "ms", "baseTimeNanoseconds": BASE_NS}
    return doc, truth


# ---- Ascend MC2 (--mc2-out): one torch_npu rank, text export

NPU_PY_PID = 3178231
NPU_HW_PID = 3254508960
NPU_STREAM = 2
NPU_BASE_US = 1735689600000000  # absolute epoch µs, as torch_npu writes them
MC2_TOKENS, MC2_HIDDEN, MC2_FFN, MC2_TOPK = 512, 7168, 2048, 8
# Per task: (input shapes, input types, output shapes, output types) as kernel_details writes them, and the
# message bytes of the fused operators as NCCL counts a collective's (the larger of sent and received),
# computed here from the operator's definition: MatmulAllReduce all-reduces its [tokens, hidden] result;
# MoeDistributeDispatch sends each token to its top-k experts (receives tokens x top-k rows), Combine sends
# them back.
MC2_SHAPES = {
    "MatMulV2": ((f"{MC2_TOKENS},{MC2_HIDDEN};{MC2_HIDDEN},{MC2_FFN}", "DT_BF16;DT_BF16"),
                 (f"{MC2_TOKENS},{MC2_FFN}", "DT_BF16"), None),
    "MatmulAllReduce": ((f"{MC2_TOKENS},{MC2_FFN};{MC2_FFN},{MC2_HIDDEN}", "DT_BF16;DT_BF16"),
                        (f"{MC2_TOKENS},{MC2_HIDDEN}", "DT_BF16"), MC2_TOKENS * MC2_HIDDEN * 2),
    "MoeDistributeDispatchV2": ((f"{MC2_TOKENS},{MC2_HIDDEN};{MC2_TOKENS},{MC2_TOPK}", "DT_BF16;INT32"),
                                (f"{MC2_TOKENS * MC2_TOPK},{MC2_HIDDEN};{MC2_TOKENS * MC2_TOPK}", "DT_BF16;INT32"),
                                MC2_TOKENS * MC2_TOPK * MC2_HIDDEN * 2),
    "GroupedMatmul": ((f"{MC2_TOKENS * MC2_TOPK},{MC2_HIDDEN};32,{MC2_HIDDEN},{MC2_FFN}", "DT_BF16;DT_BF16"),
                      (f"{MC2_TOKENS * MC2_TOPK},{MC2_FFN}", "DT_BF16"), None),
    "MoeDistributeCombineV2": ((f"{MC2_TOKENS * MC2_TOPK},{MC2_HIDDEN};{MC2_TOKENS},{MC2_TOPK}", "DT_BF16;INT32"),
                               (f"{MC2_TOKENS},{MC2_HIDDEN}", "DT_BF16"), MC2_TOKENS * MC2_TOPK * MC2_HIDDEN * 2),
}
MC2_LAYER = (  # (task name, op type, accelerator core, µs, fused collective or None)
    ("aclnnMatmul_MatMulV2_MatMulV2", "MatMulV2", "AI_CORE", 150.0, None),
    ("aclnnMatmulAllReduce_MatmulAllReduce_MatmulAllReduce", "MatmulAllReduce", "MIX_AIC", 320.0, "allreduce"),
    ("aclnnMoeDistributeDispatchV2_MoeDistributeDispatchV2_MoeDistributeDispatchV2", "MoeDistributeDispatchV2",
     "MIX_AIV", 260.0, "alltoall"),
    ("aclnnGroupedMatmul_GroupedMatmul_GroupedMatmul", "GroupedMatmul", "AI_CORE", 400.0, None),
    ("aclnnMoeDistributeCombineV2_MoeDistributeCombineV2_MoeDistributeCombineV2", "MoeDistributeCombineV2",
     "MIX_AIV", 240.0, "alltoall"),
)
MC2_KERNEL_HEADER = ("Step Id,Model ID,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),Duration(us),"
                     "Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,"
                     "Output Shapes,Output Data Types,Output Formats,Context ID")


MC2_STEP_HEADER = ("Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
                   "Communication(Not Overlapped and Exclude Receive),Preparing")


def npu_us(t_us):
    return f"{NPU_BASE_US + t_us:.3f}"


def write_mc2(args, out, timeline=True):
    rank_dir = os.path.join(out, "rank0_ascend_pt")
    os.makedirs(os.path.join(rank_dir, "ASCEND_PROFILER_OUTPUT"), exist_ok=True)
    events = [{"name": "process_name", "ph": "M", "pid": NPU_PY_PID, "tid": 0, "args": {"name": "Python"}},
              {"name": "process_name", "ph": "M", "pid": NPU_HW_PID, "tid": 0, "args": {"name": "Ascend Hardware"}},
              {"name": "process_labels", "ph": "M", "pid": NPU_HW_PID, "tid": 0, "args": {"labels": "NPU"}},
              {"name": "thread_name", "ph": "M", "pid": NPU_HW_PID, "tid": NPU_STREAM,
               "args": {"name": f"Stream {NPU_STREAM}"}}]
    rows, truth, task_id, t, prev_end, step_rows = [], [], 100, 1000.0, None, [MC2_STEP_HEADER]
    for number in range(1, args.steps + 1):
        step_start = t
        t += 20.0
        tasks = []
        for _ in range(args.layers):
            for name, op_type, core, dur, collective in MC2_LAYER:
                task_id += 1
                tasks.append((name, t, dur, collective, MC2_SHAPES[op_type][2]))
                events.append({"ph": "X", "name": name, "pid": NPU_HW_PID, "tid": NPU_STREAM, "ts": npu_us(t),
                               "dur": dur, "args": {"Model Id": 4294967295, "Task Type": core,
                                                    "Physic Stream Id": NPU_STREAM, "Task Id": task_id}})
                wait = 0.0 if prev_end is None else t - prev_end
                (in_shapes, in_types), (out_shapes, out_types), _ = MC2_SHAPES[op_type]
                in_formats = ";".join(["ND"] * len(in_types.split(";")))
                out_formats = ";".join(["ND"] * len(out_types.split(";")))
                rows.append(f"{number},4294967295,{task_id},{NPU_STREAM},{name},{op_type},{core},{npu_us(t)}\t,"
                            f"{dur},{wait:.3f},24,0,NO,\"\"\"{in_shapes}\"\"\",{in_types},{in_formats},"
                            f"\"\"\"{out_shapes}\"\"\",{out_types},{out_formats},N/A")
                prev_end = t + dur
                t += dur + 5.0
        events.append({"ph": "X", "name": f"ProfilerStep#{number}", "pid": NPU_PY_PID, "tid": NPU_PY_PID,
                       "ts": npu_us(step_start), "dur": t + 10.0 - step_start, "cat": "cpu_op", "args": {}})
        spans = union([(s0, s0 + d) for _, s0, d, _, _ in tasks])
        ep = union([(s0, s0 + d) for _, s0, d, c, _ in tasks if c == "alltoall"])
        fused = union([(s0, s0 + d) for _, s0, d, c, _ in tasks if c])
        truth.append({"step": number, "computing_us": length(spans), "communication_us": 0.0,
                      "collectives": {"allreduce": sum(1 for *_, c, _ in tasks if c == "allreduce"),
                                      "alltoall": sum(1 for *_, c, _ in tasks if c == "alltoall")},
                      "fused_bytes": {kind: sum(b for *_, c, b in tasks if c == kind)
                                      for kind in ("allreduce", "alltoall")},
                      "all_to_all_us": length(ep), "all_to_all_exposed_us": 0.0,
                      "fused_comm_us": length(fused)})
        stage = t + 10.0 - step_start
        step_rows.append(f"{number},{length(spans):.3f},0,0,0,{stage - length(spans):.3f},{stage:.3f},0,0,0")
        t += 60.0
    with open(os.path.join(rank_dir, "profiler_info_0.json"), "w") as f:
        json.dump({"config": {"common_config": {"activities": ["ProfilerActivity.CPU", "ProfilerActivity.NPU"]}},
                   "rank_id": 0}, f)
    if timeline:
        with open(os.path.join(rank_dir, "ASCEND_PROFILER_OUTPUT", "trace_view.json"), "w") as f:
            json.dump(events, f)
    else:  # a text export keeps step_trace_time.csv whether or not it keeps the timeline
        with open(os.path.join(rank_dir, "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv"), "w") as f:
            f.write("\n".join(step_rows) + "\n")
    with open(os.path.join(rank_dir, "ASCEND_PROFILER_OUTPUT", "kernel_details.csv"), "w") as f:
        f.write(MC2_KERNEL_HEADER + "\n" + "\n".join(rows) + "\n")
    return {"path": rank_dir, "fused_names": [n for n, *_, c in MC2_LAYER if c], "steps": truth}


def main():
    parser = generator_arguments(__doc__, ranks=4, steps=3, layers=4, seed=1)
    parser.add_argument("--mc2-out", help="also write an Ascend MC2 torch_npu rank here")
    parser.add_argument("--mc2-text-out", help="and the same rank without its timeline (kernel_details.csv and "
                                               "step_trace_time.csv only) here")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    truth = {"ranks": {}, "all_to_all_kernel_names": list(EP_NAMES), "all_reduce_kernel_name": ALL_REDUCE,
             "compute_kernel_names": [GEMM, GROUPED_GEMM, LAYOUT]}
    for rank in range(args.ranks):
        doc, steps = rank_trace(args, rank)
        with open(os.path.join(args.out, f"rank-{rank}.pt.trace.json"), "w") as f:
            json.dump(doc, f)
        truth["ranks"][str(rank)] = steps
    if args.mc2_out:
        truth["mc2"] = write_mc2(args, args.mc2_out)
    if args.mc2_text_out:
        truth["mc2_text"] = write_mc2(args, args.mc2_text_out, timeline=False)
    json.dump(truth, os.sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
