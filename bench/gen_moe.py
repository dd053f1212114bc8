#!/usr/bin/env python3
"""Write a deterministic expert-parallel (EP) mixture-of-experts run with a known token skew, one trace per
rank, and print its true expert load as JSON: for checks whose answer is known by construction.

The run: RANKS ranks of one EP group, each holding EXPERTS local experts (global expert g = rank x EXPERTS +
local index). Every step runs LAYERS MoE layers. A layer routes TOKENS x RANKS tokens (top-1 rows) to the
experts: expert g gets a share proportional to 1 / (g' + 1) ** SKEW, g' being g rotated by EXPERTS on odd
layers (so the most loaded rank alternates between ranks 0 and 1, and a layer-by-layer comparison differs
from one over the totals); --skew 0 routes evenly. Shares become whole tokens by largest remainder. Per
layer, on every rank:
  attention (ATTN_US) -> dispatch all-to-all (A2A_US; every rank arrives together) -> grouped GEMM fc1
  (x [t, HIDDEN], weight [EXPERTS, HIDDEN, FFN]) -> grouped GEMM fc2 (x [t, FFN], weight [EXPERTS, FFN,
  HIDDEN]) -> combine all-to-all, which ends A2A_US after the last rank's fc2 ends
where t is the rank's tokens in that layer and each GEMM takes GEMM_BASE_US + GEMM_US_PER_TOKEN x t. So per
step the slowest rank's extra GEMM time over the mean, summed over the layers, is what an even load saves,
and the other ranks wait that long (their own gap to the slowest) at each combine.

Layouts:
  kineto     rank{r}.pt.trace.json: the custom op `moe::grouped_gemm` (record_shapes Input Dims, and the
             group sizes as an int list in Concrete Inputs) around aten::_grouped_mm, which launches the
             grouped GEMM kernel; the all-to-alls as record_param_comms + ncclDevKernel_SendRecv with the
             collective args Kineto copies onto the kernel, "In split size" / "Out split size" included.
  torch_npu  rank{r}_ascend_pt/ (text export, no timeline kept): kernel_details.csv with the attention
             tasks, GroupedMatmul rows (Input Shapes "t,HIDDEN;EXPERTS,HIDDEN,FFN;;EXPERTS": x, weight, an
             empty bias and the group list, whose values kernel_details does not hold, so tokens per expert
             are unknown there) and the hcom_alltoallv operators; step_trace_time.csv.
  torch_npu_db the same run as torch_npu's Db export: rank{r}_ascend_pt/ASCEND_PROFILER_OUTPUT/
             ascend_pytorch_profiler_{r}.db (the GroupedMatmul shapes in COMPUTE_TASK_INFO, the all-to-alls in
             COMMUNICATION_OP, the steps in STEP_TIME) and analysis.db (StepTraceTime).

  --sequential-experts (torch_npu, torch_npu_db): the experts run as one MatMul each (no grouped GEMM shapes), after a
             MoeTokenPermute row (x [TOKENS, HIDDEN], the token row's size) before each dispatch; communication.json
             and communication_matrix.json give each hcom_alltoallv's start and the bytes it sent to each rank, so
             the rows each rank sends back in the combine are the tokens its experts ran (torch_npu_db: the same
             in analysis.db's CommAnalyzerTime / CommAnalyzerMatrix).

  --splits-only (kineto): the grouped GEMMs recorded without record_shapes, so only the all-to-alls' split
             sizes tell each rank's tokens (one dispatch a layer: its received rows), none per expert.

    python3 bench/gen_moe.py --out DIR [--ranks 4] [--experts 2] [--layers 4] [--steps 3] [--tokens 4096]
                             [--skew 1.0] [--layout kineto|torch_npu|torch_npu_db] [--splits-only]
                             [--sequential-experts]
"""
import argparse
import json
import os

from trace_events import x, flow, us, hopper_properties

BASE_NS = 1735689600000000000
T0_US = 4512345678.0
PID = 3000
STREAM = 7
NCCL_STREAM = 20
HIDDEN = 1024
FFN = 2048
ATTN_US = 300.0
A2A_US = 120.0
PERMUTE_US = 10.0
EP_HASH = "8147369851290715623"
GEMM_BASE_US = 40.0
GEMM_US_PER_TOKEN = 0.05
GEMM_KERNEL = "void cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm_grouped_bf16_128x128_64x3_tn_align8>(Params)"
ATTN_KERNEL = "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>>(Params)"
A2A_KERNEL = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"
UINT32_MAX = 4294967295


def largest_remainder(total, weights):
    shares = [total * w / sum(weights) for w in weights]
    whole = [int(s) for s in shares]
    order = sorted(range(len(weights)), key=lambda i: (-(shares[i] - whole[i]), i))
    for i in order[:total - sum(whole)]:
        whole[i] += 1
    return whole


def plan(args):
    """tokens[layer][global expert]; the same in every step."""
    n = args.ranks * args.experts
    layers = []
    for layer in range(args.layers):
        shift = args.experts if layer % 2 else 0
        weights = [1.0 / (((g - shift) % n) + 1) ** args.skew for g in range(n)]
        layers.append(largest_remainder(args.tokens * args.ranks, weights))
    return layers


def gemm_us(tokens):
    return GEMM_BASE_US + GEMM_US_PER_TOKEN * tokens


def rank_tokens(args, per_expert, rank):
    return sum(per_expert[rank * args.experts:(rank + 1) * args.experts])


def schedule(args, layers):
    """Per step, per layer: (attention start, dispatch start, gemm start, combine end) in true µs."""
    steps, t = [], T0_US
    for _ in range(args.steps):
        step_start, t = t, t + 20.0
        rows = []
        for per_expert in layers:
            attn = t
            dispatch = attn + ATTN_US
            gemm = dispatch + A2A_US
            slowest = max(2 * gemm_us(rank_tokens(args, per_expert, r)) for r in range(args.ranks))
            end = gemm + slowest + A2A_US
            rows.append((attn, dispatch, gemm, end))
            t = end + 10.0
        steps.append((step_start, rows, t + 20.0))
        t += 60.0
    return steps


def truth(args, layers):
    n_experts = args.ranks * args.experts
    # With the grouped GEMMs' shapes each GEMM (fc1, fc2) is a call of the rank's tokens; with split sizes
    # only, each dispatch all-to-all is one call of the tokens it received.
    per_layer = 1 if args.splits_only or args.sequential_experts else 2
    calls = per_layer * args.layers  # per step, per rank
    rank_tok = [sum(per_layer * rank_tokens(args, per_expert, r) for per_expert in layers)
                for r in range(args.ranks)]
    expert_tok = [sum(2 * per_expert[g] for per_expert in layers) for g in range(n_experts)]
    mean_rank = sum(rank_tok) / args.ranks
    mean_expert = sum(expert_tok) / n_experts
    cost = wait = 0.0
    rank_wait = [0.0] * args.ranks  # each rank's own wait at the all-to-all after each GEMM
    for per_expert in layers:
        for _ in range(2):
            d = [gemm_us(rank_tokens(args, per_expert, r)) for r in range(args.ranks)]
            cost += max(d) - sum(d) / args.ranks
            wait += (args.ranks * max(d) - sum(d)) / (args.ranks - 1) if args.ranks > 1 else 0.0
            rank_wait = [w + max(d) - d[r] for r, w in enumerate(rank_wait)]
    device = [sum(2 * gemm_us(rank_tokens(args, per_expert, r)) for per_expert in layers) for r in range(args.ranks)]
    slowest = max(range(args.ranks), key=lambda r: (device[r], -r))
    source = "all_to_all_splits" if args.splits_only else "communication_matrix" if args.sequential_experts else None
    out = {"layout": args.layout, "splits_only": args.splits_only or args.sequential_experts,
           "source": source, "ranks": args.ranks, "experts_per_rank": args.experts, "steps": args.steps,
           "grouped_gemm_calls_per_step": calls,
           "rank_tokens_per_step": rank_tok, "max_rank_tokens_per_step": max(rank_tok),
           "mean_rank_tokens_per_step": mean_rank, "max_rank": rank_tok.index(max(rank_tok)),
           "slowest_rank": slowest,
           "slowest_rank_extra_compute_us_per_step": device[slowest] - sum(device) / args.ranks,
           "cost_us_per_step": cost, "others_wait_us_per_step": wait, "rank_wait_us_per_step": rank_wait}
    experts_known = args.layout == "kineto" and not args.splits_only
    if experts_known:
        out.update({"expert_tokens_per_step": expert_tok, "max_expert_tokens_per_step": max(expert_tok),
                    "mean_expert_tokens_per_step": mean_expert, "max_expert": expert_tok.index(max(expert_tok))})
    if args.layout == "kineto":  # each all-to-all moves max(in, out) rows of HIDDEN bf16 values (2 per layer)
        moved = [sum(2 * max(map(sum, splits(args, per_expert, r))) * HIDDEN * 2 for per_expert in layers)
                 for r in range(args.ranks)]
        out["all_to_all_mb_per_step"] = [b / 1e6 for b in moved]
    ratios = [max(rank_tok) / mean_rank] + ([max(expert_tok) / mean_expert] if experts_known else [])
    out["max_over_mean"] = max(ratios)
    return out


def splits(args, per_expert, rank):
    """Rows rank `rank` sends to each rank at dispatch, and receives from each: expert g's tokens come from the
    ranks evenly (largest remainder)."""
    send = [0] * args.ranks
    recv = [0] * args.ranks
    for dst in range(args.ranks):
        for g in range(dst * args.experts, (dst + 1) * args.experts):
            share = largest_remainder(per_expert[g], [1.0] * args.ranks)
            send[dst] += share[rank]
            if dst == rank:
                recv = [recv[s] + share[s] for s in range(args.ranks)]
    return send, recv


# ---- Kineto layout

class KinetoRank:
    def __init__(self, args, rank):
        self.args, self.rank, self.events, self.corr = args, rank, [], rank * 10_000_000

    def launch(self, host_ts, device_ts, dur, name, stream, **kernel_args):
        self.corr += 1
        self.events.append(x("cuda_runtime", "cudaLaunchKernel", PID, PID, host_ts, 4.0, correlation=self.corr))
        self.events.append(flow("s", self.corr, PID, PID, host_ts))
        self.events.append(x("kernel", name, 0, stream, device_ts, dur, device=0, stream=stream,
                             correlation=self.corr, grid=[132, 1, 1], block=[256, 1, 1], **kernel_args))
        self.events.append(flow("f", self.corr, 0, stream, device_ts))

    def all_to_all(self, start, end, send, recv):
        args = self.args
        self.events.append(x("cpu_op", "record_param_comms", PID, PID, start - 30.0, 12.0))
        self.launch(start - 25.0, start, end - start, A2A_KERNEL, NCCL_STREAM, **{
            "Collective name": "all_to_all", "In msg nelems": sum(send) * HIDDEN, "Out msg nelems": sum(recv) * HIDDEN,
            "Group size": args.ranks, "dtype": "BFloat16", "In split size": json.dumps(send),
            "Out split size": json.dumps(recv), "Process Group Name": "1", "Process Group Description": "ep_pg",
            "Process Group Ranks": json.dumps(list(range(args.ranks)))})

    def grouped_gemm(self, start, dur, tokens, sizes, k_in, k_out):
        host = start - 40.0
        dims = [[tokens, k_in], [self.args.experts, k_in, k_out]]
        if self.args.splits_only:  # recorded without record_shapes: the operators carry no shapes
            self.events.append(x("cpu_op", "moe::grouped_gemm", PID, PID, host, 20.0))
            self.events.append(x("cpu_op", "aten::_grouped_mm", PID, PID, host + 2.0, 16.0))
            self.launch(host + 5.0, start, dur, GEMM_KERNEL, STREAM)
            return
        self.events.append(x("cpu_op", "moe::grouped_gemm", PID, PID, host, 20.0,
                             **{"Input Dims": dims + [[]], "Input type": ["c10::BFloat16", "c10::BFloat16", "GenericList"],
                                "Concrete Inputs": ["", "", json.dumps(sizes)]}))
        self.events.append(x("cpu_op", "aten::_grouped_mm", PID, PID, host + 2.0, 16.0,
                             **{"Input Dims": dims + [[self.args.experts]],
                                "Input type": ["c10::BFloat16", "c10::BFloat16", "int"],
                                "Concrete Inputs": ["", "", ""]}))
        self.launch(host + 5.0, start, dur, GEMM_KERNEL, STREAM)

    def trace(self, layers, steps):
        args, r = self.args, self.rank
        for number, (step_start, rows, step_end) in enumerate(steps, 1):
            for per_expert, (attn, dispatch, gemm, end) in zip(layers, rows):
                self.launch(attn - 30.0, attn, ATTN_US, ATTN_KERNEL, STREAM)
                send, recv = splits(args, per_expert, r)
                self.all_to_all(dispatch, gemm, send, recv)
                sizes = per_expert[r * args.experts:(r + 1) * args.experts]
                tokens = sum(sizes)
                d = gemm_us(tokens)
                self.grouped_gemm(gemm, d, tokens, sizes, HIDDEN, FFN)
                self.grouped_gemm(gemm + d, d, tokens, sizes, FFN, HIDDEN)
                self.all_to_all(gemm + 2 * d, end, recv, send)
            self.events.append(x("user_annotation", f"ProfilerStep#{number}", PID, PID, step_start - 15.0,
                                 step_end - step_start + 15.0))
        return {"schemaVersion": 1,
                "distributedInfo": {"backend": "nccl", "rank": r, "world_size": args.ranks},
                "deviceProperties": hopper_properties("NVIDIA H100 80GB HBM3"),
                "traceEvents": sorted(self.events, key=lambda e: (e["ts"], e["ph"])),
                "displayTimeUnit": "ms", "baseTimeNanoseconds": BASE_NS}


# ---- torch_npu text layout (no trace_view.json)

KERNEL_HEADER = ("Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),"
                 "Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,"
                 "Output Shapes,Output Data Types,Output Formats,Context ID")
STEP_HEADER = ("Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
               "Communication(Not Overlapped and Exclude Receive),Preparing")


def npu_items(args, rank, layers, steps):
    """One rank's device work per step, as torch_npu records it: (step, [(name, type, core, start ns, end ns, input
    shapes, input types)], (computing, communication, stage) ns), the same for every layout."""
    def at(t_us):
        return BASE_NS + round(t_us * 1000)

    out, op_index = [], 0
    for number, (step_start, rows_of_step, step_end) in enumerate(steps, 1):
        items, sends, computing, comm = [], [], 0, 0
        for per_expert, (attn, dispatch, gemm, end) in zip(layers, rows_of_step):
            permute = PERMUTE_US if args.sequential_experts else 0.0
            items.append(("aclnnFlashAttentionScore_FlashAttentionScore_FlashAttentionScore", "FlashAttentionScore",
                          "MIX_AIC", at(attn), at(attn + ATTN_US - permute), f"4096,{HIDDEN};4096,{HIDDEN};4096,{HIDDEN}",
                          "DT_BF16;DT_BF16;DT_BF16"))
            if permute:  # lays the rank's tokens out by expert before the dispatch: x [tokens, HIDDEN]
                items.append(("aclnnMoeTokenPermute_MoeTokenPermute_MoeTokenPermute", "MoeTokenPermute",
                              "AI_VECTOR_CORE", at(attn + ATTN_US - permute), at(attn + ATTN_US),
                              f"{args.tokens},{HIDDEN};{args.tokens},1", "DT_BF16;INT32"))
            tokens = rank_tokens(args, per_expert, rank)
            d = gemm_us(tokens)
            send, recv = splits(args, per_expert, rank)
            for start, end_us, shapes in ((dispatch, gemm, send), (gemm, gemm + d, (HIDDEN, FFN)),
                                          (gemm + d, gemm + 2 * d, (FFN, HIDDEN)), (gemm + 2 * d, end, recv)):
                if len(shapes) != 2:  # an all-to-all: the rows it sends to each rank
                    items.append((f"hcom_alltoallv__512_{op_index}_1", "hcom_alltoallv_", "HCCL", at(start),
                                  at(end_us), "", ""))
                    sends.append((f"hcom_alltoallv__512_{op_index}_1", at(start), at(end_us), shapes))
                    op_index += 1
                    comm += at(end_us) - at(start)
                elif args.sequential_experts:  # one MatMul per local expert, sharing the grouped GEMM's time
                    k_in, k_out = shapes
                    sizes = per_expert[rank * args.experts:(rank + 1) * args.experts]
                    for e, size in enumerate(sizes):
                        items.append(("aclnnMatmul_MatMulV2_MatMulV2", "MatMulV2", "AI_CORE",
                                      at(start + d * e / args.experts), at(start + d * (e + 1) / args.experts),
                                      f"{size},{k_in};{k_in},{k_out}", "DT_BF16;DT_BF16"))
                else:
                    k_in, k_out = shapes
                    items.append(("aclnnGroupedMatmulV4_GroupedMatmul_GroupedMatmul", "GroupedMatmul", "MIX_AIC",
                                  at(start), at(end_us), f"{tokens},{k_in};{args.experts},{k_in},{k_out};;{args.experts}",
                                  "DT_BF16;DT_BF16;;INT64"))
            computing += at(attn + ATTN_US) - at(attn) + at(gemm + 2 * d) - at(gemm)
        out.append((number, items, (computing, comm, at(step_end) - at(step_start)), (at(step_start), at(step_end)),
                    sends))
    return out


def npu_info(args, rank, export_type):
    return {"config": {"common_config": {"activities": ["ProfilerActivity.CPU", "ProfilerActivity.NPU"],
                                         "record_shapes": True, "profile_memory": False, "with_stack": False,
                                         "with_flops": False, "with_modules": False},
                       "experimental_config": {"_profiler_level": "Level1", "_aic_metrics": "ACL_AICORE_NONE",
                                               "_export_type": export_type}},
            "rank_id": rank}


def step_line(number, computing, comm, stage):
    free = stage - computing - comm
    return [str(number), us(computing), us(comm), "0", us(comm), us(free), us(stage), "0", us(comm), "0"]


def npu_rank(args, rank, layers, steps):
    rows, step_lines, task, prev_end = [], [STEP_HEADER], 100, None
    for number, items, (computing, comm, stage), *_ in npu_items(args, rank, layers, steps):
        for name, kind, core, start, end, shapes, types in items:
            task += 1
            wait = us(start - prev_end) if prev_end is not None else "0"
            if core == "HCCL":
                rows.append(f"{number},{UINT32_MAX},N/A,N/A,{name},{kind},N/A,HCCL,{us(start)}\t,{us(end - start)},"
                            f"{wait},0" + ",N/A" * 9)
            else:
                rows.append(f'{number},{UINT32_MAX},{task},2,{name},{kind},dynamic,{core},{us(start)}\t,'
                            f'{us(end - start)},{wait},20,0,NO,"""{shapes}""",{types},ND,"""{shapes.split(";")[0]}""",'
                            f'BF16,ND,N/A')
            prev_end = end
        step_lines.append(",".join(step_line(number, computing, comm, stage)))
    out = f"rank{rank}_ascend_pt/ASCEND_PROFILER_OUTPUT/"
    files = {f"rank{rank}_ascend_pt/profiler_info_{rank}.json": json.dumps(npu_info(args, rank, "text"), indent=4),
             out + "kernel_details.csv": "\n".join([KERNEL_HEADER] + rows) + "\n",
             out + "step_trace_time.csv": "\n".join(step_lines) + "\n"}
    if args.sequential_experts:
        time_doc, matrix_doc = npu_communication(rank, npu_items(args, rank, layers, steps))
        files[out + "communication.json"] = json.dumps(time_doc)
        files[out + "communication_matrix.json"] = json.dumps(matrix_doc)
    return files


def npu_communication(rank, steps):
    """communication.json (each all-to-all's start and elapse) and communication_matrix.json (the bytes it sent
    on each "<rank>-<dst>" link: rows x HIDDEN bf16 values, MB to the byte) of one rank, as torch_npu writes them."""
    from gen_pipeline import time_info, bandwidth
    time_doc, matrix_doc = {}, {}
    for number, *_, sends in steps:
        ops, links = {}, {}
        for name, start, end, rows in sends:
            key = f"{name}@{EP_HASH}"
            mb = [round(n * HIDDEN * 2 / 1e6, 6) for n in rows]
            ms_ = (end - start) / 1e6
            ops[key] = {"Communication Time Info": time_info(start / 1e3, ms_, 0.0),
                        "Communication Bandwidth Info": bandwidth(round(sum(mb), 6), ms_)}
            links[key] = {f"{rank}-{dst}": {"Transport Type": "LOCAL" if dst == rank else "HCCS",
                                            "Transit Size(MB)": size, "Transit Time(ms)": ms_,
                                            "Bandwidth(GB/s)": round(size / ms_, 4)}
                          for dst, size in enumerate(mb)}
        time_doc[f"step{number}"] = {"collective": ops}
        matrix_doc[f"step{number}"] = {"collective": links}
    return time_doc, matrix_doc


# ---- torch_npu Db export (ascend_pytorch_profiler_{rank}.db + analysis.db), the tables the importer reads

def npu_db_rank(args, rank, layers, steps, top):
    """The items of npu_items as torch_npu's Db export stores them (ns, names as STRING_IDS ids): ProfilerStep
    ranges in PYTORCH_API and STEP_TIME, each launch in CANN_API, compute tasks in TASK / COMPUTE_TASK_INFO (the
    GroupedMatmul shapes in inputShapes), the all-to-alls in COMMUNICATION_OP; step_trace_time as analysis.db's
    StepTraceTime."""
    from gen_pipeline import StringTable, profiler_db_tables, write_sqlite
    string = StringTable()
    tid, connection = 3178231 + 11 * rank, 1000
    apis, step_rows, cann, tasks, infos, ops, trace_steps = [], [], [], [], [], [], []
    for number, items, (computing, comm, stage), (start_ns, end_ns), _ in npu_items(args, rank, layers, steps):
        apis.append((start_ns, end_ns, tid, None, string(f"ProfilerStep#{number}"), -1, 0, 50001, 0))
        step_rows.append((number, start_ns, end_ns))
        trace_steps.append((str(number), computing / 1e3, comm / 1e3, 0.0, comm / 1e3, (stage - computing - comm) / 1e3,
                            stage / 1e3, 0.0, comm / 1e3, 0.0))
        for name, kind, core, start, end, shapes, types in items:
            connection += 1
            cann.append((start - 5000, start - 2000, 10000, tid, connection, string("Node@launch")))
            if core == "HCCL":
                ops.append((string(name), start, end, connection, string("ep_group"), len(ops) + 1, string(kind), 0))
                continue
            task = len(tasks) + 1
            tasks.append((start, end, 0, connection, task, 3254508960, string(core), UINT32_MAX, 2, 11000 + task,
                          UINT32_MAX))
            infos.append((string(name), task, 20, 0, string(core), string(kind), string("ND"), string(types),
                          string(f'"{shapes}"'), string("ND"), string("DT_BF16"), string(f'"{shapes.split(";")[0]}"'),
                          0))
    tables = profiler_db_tables(apis, step_rows, cann, tasks, infos, ops, rank)
    tables["STRING_IDS (id INTEGER PRIMARY KEY, value TEXT)"] = [(i, v) for v, i in string.ids.items()]
    out = os.path.join(top, "ASCEND_PROFILER_OUTPUT")
    write_sqlite(os.path.join(out, f"ascend_pytorch_profiler_{rank}.db"), tables)
    analysis = {
        "StepTraceTime (step TEXT, computing NUMERIC, communication_not_overlapped NUMERIC, overlapped NUMERIC, "
        "communication NUMERIC, free NUMERIC, stage NUMERIC, bubble NUMERIC, "
        "communication_not_overlapped_and_exclude_receive NUMERIC, preparing NUMERIC)": trace_steps}
    if args.sequential_experts:  # communication.json / communication_matrix.json as the Db export's tables
        times, cells = [], []
        time_doc, matrix_doc = npu_communication(rank, npu_items(args, rank, layers, steps))
        for step, sections in time_doc.items():
            for key, op in sections["collective"].items():
                t = op["Communication Time Info"]
                name, group = key.split("@")
                times.append((name, group, t["Start Timestamp(us)"], t["Elapse Time(ms)"], t["Transit Time(ms)"],
                              t["Wait Time(ms)"], t["Synchronization Time(ms)"], t["Idle Time(ms)"], step,
                              "collective"))
        for step, sections in matrix_doc.items():
            for key, links in sections["collective"].items():
                name, group = key.split("@")
                for link, cell in links.items():
                    src, dst = link.split("-")
                    cells.append((name, group, src, dst, cell["Transport Type"], cell["Transit Size(MB)"],
                                  cell["Transit Time(ms)"], cell["Bandwidth(GB/s)"], step, "collective", name))
        analysis["CommAnalyzerTime (hccl_op_name TEXT, group_name TEXT, start_timestamp NUMERIC, elapse_time NUMERIC, "
                 "transit_time NUMERIC, wait_time NUMERIC, synchronization_time NUMERIC, idle_time NUMERIC, step TEXT, "
                 "type TEXT)"] = times
        analysis["CommAnalyzerMatrix (hccl_op_name TEXT, group_name TEXT, src_rank TEXT, dst_rank TEXT, "
                 "transport_type TEXT, transit_size NUMERIC, transit_time NUMERIC, bandwidth NUMERIC, step TEXT, "
                 "type TEXT, op_name TEXT)"] = cells
    write_sqlite(os.path.join(out, "analysis.db"), analysis)
    with open(os.path.join(top, f"profiler_info_{rank}.json"), "w") as f:
        f.write(json.dumps(npu_info(args, rank, "db"), indent=4))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--experts", type=int, default=2, help="local experts per rank")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=4096, help="mean tokens per rank per layer")
    parser.add_argument("--skew", type=float, default=1.0, help="Zipf exponent of the routing; 0: even")
    parser.add_argument("--layout", choices=("kineto", "torch_npu", "torch_npu_db"), default="kineto")
    parser.add_argument("--sequential-experts", action="store_true",
                        help="torch_npu(_db): one MatMul per local expert (no GroupedMatmul), a MoeTokenPermute "
                             "before each dispatch and the communication summaries: tokens from the all-to-alls' "
                             "link sizes")
    parser.add_argument("--splits-only", action="store_true",
                        help="kineto: no record_shapes on the grouped GEMMs, only the all-to-alls' split sizes")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    layers = plan(args)
    steps = schedule(args, layers)
    for rank in range(args.ranks):
        if args.layout == "torch_npu_db":
            npu_db_rank(args, rank, layers, steps, os.path.join(args.out, f"rank{rank}_ascend_pt"))
        elif args.layout == "torch_npu":
            for name, text in npu_rank(args, rank, layers, steps).items():
                os.makedirs(os.path.dirname(os.path.join(args.out, name)), exist_ok=True)
                with open(os.path.join(args.out, name), "w") as f:
                    f.write(text)
        else:
            with open(os.path.join(args.out, f"rank{rank}.pt.trace.json"), "w") as f:
                json.dump(KinetoRank(args, rank).trace(layers, steps), f, separators=(",", ":"))
    print(json.dumps(truth(args, layers)))


if __name__ == "__main__":
    main()
