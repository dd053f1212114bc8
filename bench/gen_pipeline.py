#!/usr/bin/env python3
"""Write a deterministic pipeline-parallel (PP x DP) torch_npu run whose stages, waits and bubbles are known, and
print that truth as JSON.

Ranks are laid out as Megatron / MindSpeed do: rank = stage x DP + d, so pp group j is (j, j + DP, j + 2 DP, ...)
and stage s holds ranks s x DP .. s x DP + DP - 1. Stage s computes STAGE_MS[s] a step in MICROBATCHES
micro-batches. The model of one step (ms):
    pipeline = max(STAGE_MS) x (1 + (PP - 1) / MICROBATCHES)   the slowest stage's work plus the fill / drain
    wait[s]  = pipeline - STAGE_MS[s]                          time stage s waits for its neighbours (p2p)
    p2p[s]   = wait[s] + MICROBATCHES x TRANSIT_MS                 its p2p ops: the wait, then the transfer
    step     = STAGE_MS[s] + p2p[s] + ALLREDUCE_MS + FREE_MS     with the DP all-reduce, exposed, and a gap
so the p2p waits are the bubble, the stages that compute less wait more, and with equal stages only the
schedule's fill / drain (PP - 1 micro-batches' worth) is left.

--wait-ops says how torch_npu saw the waits:
    receive  hcom_receive ops (plain 1F1B send / receive): step_trace_time.csv writes Bubble = their time
             (wait and transfer) and Stage = step - Bubble;
    batch    hcom_batchSendRecv ops (MindSpeed's overlapped p2p): Bubble = 0, Stage = step, and the waits are
             only in communication.json's per-op Wait Time.
--layout text writes the rank directories (text export without trace_view.json, as a run that did not keep it):
    OUT/rank{r}_ascend_pt/profiler_info_{r}.json, profiler_metadata.json (parallel_group_info pp / dp groups)
    OUT/rank{r}_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv, communication.json, kernel_details.csv
Each rank's HCCL ops are under its own groups, as torch_npu writes them: the p2p ops under its pp group
(ranks d, d + DP, ...), the all-reduce under its dp group (its stage's ranks), each named "op@<hash>" by the hash of
the group's parallel_group_info id (HCCL's two 32-bit polynomial hashes side by side); --shared-group-hash puts
every rank's p2p ops under one hash and its all-reduces under another that the metadata does not list.
--layout timeline writes the same directories with ASCEND_PROFILER_OUTPUT/trace_view.json too (Python
ProfilerStep#N, CANN launches with HostToDevice flows to the AI_CORE tasks and to the HCCL ops), laid out as
the model says: per micro-batch its compute task then its p2p op, then the all-reduce, then the gap.
--layout kineto writes the run as PyTorch profiler traces of CUDA + NCCL ranks (OUT/rank{r}.pt.trace.json), a
forward chain simulated on one timeline: per micro-batch stage s > 0 receives from s - 1, computes, and stage
s < PP - 1 sends to s + 1 (ncclDevKernel_SendRecv, "Collective name" send / recv); a send and its receive start
when each rank gets there and both end TRANSIT_MS after the later start; then the DP all-reduce; no gap between
steps. The p2p kernels are in the pp group (Process Group Description PIPELINE_MODEL_PARALLEL_GROUP, as Megatron
names it), or with --pg-names none in a two-rank group per neighbouring pair and every group's description
"undefined" (as PyTorch writes unnamed groups), or with --pg-names unnamed in one pp communicator of PP ranks
described "undefined" like every other group, so that only the p2p pattern tells the stages. The p2p wait is
the part of each p2p kernel before its peer's kernel starts: the peer is the other rank of a two-rank group
(PP = 2 or --pg-names none), the rank the kernel names (--peer-args: "Dst Rank" on a send, "Src Rank" on a
recv, the peer's global rank, as PyTorch writes them), or, in a pp communicator of more ranks whose kernels do
not say it, the neighbour in the communicator's order (a send to the next member, a receive from the previous
one, the k-th send to a member meeting its k-th receive); the bubble is that wait and the step the device span.
--schedule 1f1b (kineto) runs Megatron's non-interleaved 1F1B instead of the forward chain: per stage PP - 1 - s
warm-up forwards, then one forward and one backward in turn, then the cool-down backwards (forward a third of the
stage's compute, backward two thirds), the gradients sent back to the previous stage over the same groups as the
activations (a batched send / receive pair as its two kernels, the activation first, so that each pair of
stages calls its p2p in the same order); with --pg-names unnamed --peer-args only the chain both ways, each
kernel naming its peer, tells the stages.
--layout db writes the run as torch_npu's Db export: per rank ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_{r}.db
(the timeline of --layout timeline, the HCCL ops with their waits, the groups in META_DATA) and analysis.db
(step_trace_time.csv and communication.json's ops as StepTraceTime and CommAnalyzerTime rows).
--layout cluster writes msprof-analyze's OUT/cluster_analysis_output/cluster_step_trace_time.csv: a rank row per
rank and a stage row per stage (empty Step, Type "stage", Index the stage's ranks), as the receive export gives.

Truth (per step, ms): per stage computing, p2p wait, bubble (= the wait), step; and the findings the run calls for:
pipeline.stage_imbalance on each stage that waits for a slower one when the stages differ by more than 10 % of
the slowest (gain: what the step loses were every stage to compute the mean stage's compute, by the model above
(max - mean) x (1 + (PP - 1) / MICROBATCHES), at most the stage's bubble; and the part of its wait charged to the
slowest stage's compute, min(bubble, max compute - its compute)), else
pipeline.bubble (gain: half the bubble, what doubling the micro-batches or two virtual stages remove).

    python3 bench/gen_pipeline.py --out DIR [--stage-ms 231,400] [--dp 2] [--microbatches 8] [--steps 3]
                                  [--wait-ops batch|receive] [--layout text|timeline|cluster|kineto|db]
                                  [--pg-names pipeline|none|unnamed] [--peer-args] [--schedule forward|1f1b]
                                  [--without-metadata-json] [--shared-group-hash]
"""
import argparse
import json
import os
import sqlite3

from trace_events import us, npu_x, npu_meta, npu_flow

T0_US = 1736408883000000.0
ALLREDUCE_MS = 5.0
FREE_MS = 2.0
TRANSIT_MS = 0.5  # each p2p op moves its data this long after its wait
STEP_HEADER = ("Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
               "Communication(Not Overlapped and Exclude Receive),Preparing")
CLUSTER_HEADER = ("Step,Type,Index,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,"
                  "Bubble,Communication(Not Overlapped and Exclude Receive)")
KERNEL_HEADER = ("Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),"
                 "Duration(us),Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,"
                 "Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID")
# --shared-group-hash: every rank's p2p ops under one hash and its all-reduces under another, neither of them a
# group profiler_metadata.json lists (as a run whose metadata lost its groups).
DP_HASH = "17522688603477080586"
PP_HASH = "9876543210987654321"
GROUP_ID_PREFIX = "10.0.0.1%enp189s0f1_60000_0_"  # HCCL names a group by its root's address, port and a time
IMBALANCE = 0.10
BUBBLE_SHARE = 0.10  # pipeline.bubble fires on a stage whose bubble is above this share of its step


def stage_model(args):
    stage_ms = [float(v) for v in args.stage_ms.split(",")]
    if args.layout == "kineto":
        return kineto_model(args, stage_ms)
    pp = len(stage_ms)
    pipeline = max(stage_ms) * (1 + (pp - 1) / args.microbatches)
    stages = []
    for s, compute in enumerate(stage_ms):
        wait = pipeline - compute
        p2p = wait + args.microbatches * TRANSIT_MS
        bubble = p2p if args.wait_ops == "receive" else wait
        stages.append({"stage": s, "ranks": [s * args.dp + d for d in range(args.dp)], "computing_ms": compute,
                       "p2p_wait_ms": wait, "p2p_ms": p2p, "bubble_ms": bubble,
                       "step_ms": compute + p2p + ALLREDUCE_MS + FREE_MS})
    return stages, pipeline


def simulate_chain(args, stage_ms):
    """The chain's kernels per stage, [(kind, start_ns, end_ns, wait_ns, peer stage)] per step, and each step's
    start and end per stage; every DP replica runs the same timeline."""
    if args.schedule == "1f1b":
        return simulate_1f1b(args, stage_ms)
    ns = lambda ms: round(ms * 1e6)
    pp, m_count = len(stage_ms), args.microbatches
    each_c = [ns(c / m_count) for c in stage_ms]
    cursor = [1_000_000] * pp
    kernels = [[[] for _ in range(args.steps)] for _ in range(pp)]
    bounds = [[None] * args.steps for _ in range(pp)]
    for k in range(args.steps):
        starts = list(cursor)
        for m in range(m_count):
            for s in range(pp):
                cursor[s] += each_c[s]
                kernels[s][k].append(("compute", cursor[s] - each_c[s], cursor[s], 0, None))
                if s < pp - 1:  # the send to s + 1 meets that stage's receive of this micro-batch
                    send_at, recv_at = cursor[s], cursor[s + 1]
                    end = max(send_at, recv_at) + ns(TRANSIT_MS)
                    kernels[s][k].append(("send", send_at, end, max(recv_at - send_at, 0), s + 1))
                    kernels[s + 1][k].append(("recv", recv_at, end, max(send_at - recv_at, 0), s))
                    cursor[s] = cursor[s + 1] = end
        for s in range(pp):
            kernels[s][k].append(("allreduce", cursor[s], cursor[s] + ns(ALLREDUCE_MS), 0, None))
            cursor[s] += ns(ALLREDUCE_MS)
            bounds[s][k] = (starts[s], cursor[s])
    return kernels, bounds


def one_f_one_b_ops(s, pp, m_count, forward_ns, backward_ns):
    """Stage s's step under non-interleaved 1F1B as Megatron orders it: PP - 1 - s warm-up forwards, then one
    forward and one backward in turn, then the cool-down backwards. Ops: ("compute", ns) or (kind, peer stage,
    message), a message being ("F", micro-batch, sending stage) for an activation, ("B", micro-batch, sending
    stage) for a gradient. Megatron's batched send_forward_recv_backward / send_backward_recv_forward run here as
    their two kernels one after the other, the activation first, so that each pair of stages calls its p2p in
    the same order on both sides."""
    warmup = min(pp - 1 - s, m_count)
    ops = []
    recv_f = lambda m: [("recv", s - 1, ("F", m, s - 1))] if s > 0 else []
    send_f = lambda m: [("send", s + 1, ("F", m, s))] if s < pp - 1 else []
    recv_b = lambda m: [("recv", s + 1, ("B", m, s + 1))] if s < pp - 1 else []
    send_b = lambda m: [("send", s - 1, ("B", m, s))] if s > 0 else []
    for m in range(warmup):
        ops += recv_f(m) + [("compute", forward_ns)] + send_f(m)
    steady = m_count - warmup
    if steady:
        ops += recv_f(warmup)
    for i in range(steady):
        ops += [("compute", forward_ns)] + send_f(warmup + i) + recv_b(i) + [("compute", backward_ns)]
        ops += (recv_f(warmup + i + 1) if i + 1 < steady else []) + send_b(i)
    for m in range(steady, m_count):
        ops += recv_b(m) + [("compute", backward_ns)] + send_b(m)
    return ops


def simulate_1f1b(args, stage_ms):
    """simulate_chain for --schedule 1f1b: each stage runs one_f_one_b_ops a step (forward a third of its compute,
    backward two thirds); a send and its receive start when each rank gets there and both end TRANSIT_MS after the
    later start; then the DP all-reduce."""
    ns = lambda ms: round(ms * 1e6)
    pp, m_count = len(stage_ms), args.microbatches
    cursor = [1_000_000] * pp
    kernels = [[[] for _ in range(args.steps)] for _ in range(pp)]
    bounds = [[None] * args.steps for _ in range(pp)]
    for k in range(args.steps):
        starts = list(cursor)
        ops = [one_f_one_b_ops(s, pp, m_count, ns(c / m_count / 3), ns(c / m_count) - ns(c / m_count / 3))
               for s, c in enumerate(stage_ms)]
        at, arrived = [0] * pp, {}  # arrived: (message, kind) -> when its rank got to the kernel
        while any(at[s] < len(ops[s]) for s in range(pp)):
            moved = False
            for s in range(pp):
                while at[s] < len(ops[s]):
                    op = ops[s][at[s]]
                    if op[0] == "compute":
                        kernels[s][k].append(("compute", cursor[s], cursor[s] + op[1], 0, None))
                        cursor[s] += op[1]
                    else:
                        kind, peer, message = op
                        arrived.setdefault((message, kind), cursor[s])
                        other = arrived.get((message, "recv" if kind == "send" else "send"))
                        if other is None:
                            break
                        start = arrived[(message, kind)]
                        end = max(start, other) + ns(TRANSIT_MS)
                        kernels[s][k].append((kind, start, end, max(other - start, 0), peer))
                        cursor[s] = end
                    at[s] += 1
                    moved = True
            if not moved:
                raise SystemExit("gen_pipeline: the 1F1B schedule deadlocks")
        for s in range(pp):
            kernels[s][k].append(("allreduce", cursor[s], cursor[s] + ns(ALLREDUCE_MS), 0, None))
            cursor[s] += ns(ALLREDUCE_MS)
            bounds[s][k] = (starts[s], cursor[s])
    return kernels, bounds


def kineto_model(args, stage_ms):
    kernels, bounds = simulate_chain(args, stage_ms)
    pp = len(stage_ms)
    stages = []
    for s, compute in enumerate(stage_ms):
        p2p = sum(e - b for step in kernels[s] for kind, b, e, *_ in step if kind in ("send", "recv"))
        wait = sum(w for step in kernels[s] for kind, _, _, w, _ in step if kind in ("send", "recv"))
        measured = wait / args.steps / 1e6
        step = sum(end - start for start, end in bounds[s]) / args.steps / 1e6
        stages.append({"stage": s, "ranks": [s * args.dp + d for d in range(args.dp)], "computing_ms": compute,
                       "p2p_wait_ms": measured, "p2p_ms": p2p / args.steps / 1e6, "bubble_ms": measured,
                       "step_ms": step})
    return stages, max(stage_ms)


def balanced_gain_ms(args, stages):
    """The step the model above loses were every stage to compute the mean stage's compute (on GPUs the
    simulated chain run again with every stage at the mean)."""
    computes = [s["computing_ms"] for s in stages]
    mean = sum(computes) / len(computes)
    if args.layout == "kineto":
        even, _ = kineto_model(args, [mean] * len(computes))
        return max(s["step_ms"] for s in stages) - max(s["step_ms"] for s in even)
    return (max(computes) - mean) * (1 + (len(stages) - 1) / args.microbatches)


def findings(args, stages):
    computes = [s["computing_ms"] for s in stages]
    slowest = max(computes)
    out = []
    if (slowest - min(computes)) / slowest > IMBALANCE:
        for s in stages:
            if s["computing_ms"] < slowest:
                gain = min(s["bubble_ms"], balanced_gain_ms(args, stages))
                out.append({"id": "pipeline.stage_imbalance", "stage": s["stage"], "ranks": s["ranks"],
                            "gain_ms": gain, "wait_for_slowest_ms": min(s["bubble_ms"], slowest - s["computing_ms"])})
    else:
        for s in stages:
            if s["bubble_ms"] > BUBBLE_SHARE * s["step_ms"]:
                out.append({"id": "pipeline.bubble", "stage": s["stage"], "ranks": s["ranks"],
                            "gain_ms": s["bubble_ms"] / 2})
    return out


def ms(v):
    return f"{v:.3f}"


def hccl_hash(group_id):
    """The id HCCL's outputs give the group parallel_group_info lists as group_id (communication.json's
    "op@<id>", the Db export's groupName): two 32-bit polynomial hashes of the name (primes 29 and 131) side by
    side, in decimal."""
    high = low = 0
    for c in group_id.encode():
        high = (high * 29 + c) & 0xFFFFFFFF
        low = (low * 131 + c) & 0xFFFFFFFF
    return str((high << 32) | low)


def group_id(kind, index):
    """parallel_group_info's id of the default group (index 0), pp group j or dp group s."""
    return f"{GROUP_ID_PREFIX}{1736408883000000 + {'default': 0, 'pp': 1000, 'dp': 2000}[kind] + index}"


def rank_hashes(args, rank):
    """(p2p group, all-reduce group) of a rank's HCCL ops: its pp group (rank % DP) and its dp group (its
    stage), one hash per real group as torch_npu writes them; with --shared-group-hash one pair for all ranks
    that the metadata does not name."""
    if args.shared_group_hash:
        return PP_HASH, DP_HASH
    return hccl_hash(group_id("pp", rank % args.dp)), hccl_hash(group_id("dp", rank // args.dp))


def step_rows(args, stage):
    """[step, computing, comm not overlapped, overlapped, comm, free, stage, bubble, exclude receive] in µs."""
    compute = stage["computing_ms"]
    bubble = stage["p2p_ms"] if args.wait_ops == "receive" else 0.0
    comm = stage["p2p_ms"] + ALLREDUCE_MS
    rows = []
    for k in range(args.steps):
        rows.append([k + 1, compute * 1e3, comm * 1e3, 0.0, comm * 1e3, FREE_MS * 1e3,
                     (stage["step_ms"] - bubble) * 1e3, bubble * 1e3, (comm - bubble) * 1e3])
    return rows


def time_info(start_us, elapse_ms, wait_ms):
    transit = elapse_ms - wait_ms
    return {"Start Timestamp(us)": start_us, "Elapse Time(ms)": elapse_ms, "Transit Time(ms)": transit,
            "Wait Time(ms)": wait_ms, "Synchronization Time(ms)": wait_ms, "Idle Time(ms)": 0.0,
            "Wait Time Ratio": round(wait_ms / elapse_ms, 4) if elapse_ms else 0,
            "Synchronization Time Ratio": round(wait_ms / elapse_ms, 4) if elapse_ms else 0}


def bandwidth(size_mb, ms_):
    one = {"Transit Size(MB)": size_mb, "Transit Time(ms)": ms_, "Bandwidth(GB/s)": round(size_mb / ms_, 4),
           "Large Packet Ratio": 0.0, "Size Distribution": {}}
    zero = {"Transit Size(MB)": 0, "Transit Time(ms)": 0, "Bandwidth(GB/s)": 0, "Large Packet Ratio": 0,
            "Size Distribution": {}}
    return {"RDMA": zero, "HCCS": one, "PCIE": zero, "SDMA": one, "SIO": zero}


def communication(args, stage, step_ms, rank):
    """Per step: MICROBATCHES p2p ops sharing the stage's wait, each moving 0.5 ms of data, and one all-reduce,
    under the rank's pp and dp groups."""
    pp_hash, dp_hash = rank_hashes(args, rank)
    prefix = "hcom_receive_" if args.wait_ops == "receive" else "hcom_batchSendRecv_"
    doc = {}
    wait_each = stage["p2p_wait_ms"] / args.microbatches
    for k in range(args.steps):
        t = T0_US + k * step_ms * 1e3
        p2p, collective = {}, {}
        for m in range(args.microbatches):
            name = f"{prefix}_{pp_hash[-3:]}_{k * args.microbatches + m}_1@{pp_hash}"
            p2p[name] = {"Communication Time Info": time_info(t + m * 1e3, wait_each + TRANSIT_MS, wait_each),
                         "Communication Bandwidth Info": bandwidth(8.0, 0.5)}
        p2p["Total Op Info"] = {"Communication Time Info": time_info(None, stage["p2p_ms"], stage["p2p_wait_ms"]),
                                "Communication Bandwidth Info": bandwidth(8.0 * args.microbatches,
                                                                          0.5 * args.microbatches)}
        p2p["Total Op Info"]["Communication Time Info"].pop("Start Timestamp(us)")
        name = f"hcom_allReduce__{dp_hash[-3:]}_{k}_1@{dp_hash}"
        collective[name] = {"Communication Time Info": time_info(t + step_ms * 1e3 - 8e3, ALLREDUCE_MS, 0.2),
                            "Communication Bandwidth Info": bandwidth(64.0, ALLREDUCE_MS - 0.2)}
        collective["Total Op Info"] = {"Communication Time Info": time_info(None, ALLREDUCE_MS, 0.2),
                                       "Communication Bandwidth Info": bandwidth(64.0, ALLREDUCE_MS - 0.2)}
        collective["Total Op Info"]["Communication Time Info"].pop("Start Timestamp(us)")
        doc[f"step{k + 1}"] = {"p2p": p2p, "collective": collective}
    return doc


def kernels(args, stage):
    rows = [KERNEL_HEADER]
    each = stage["computing_ms"] * 1e3 / args.microbatches
    for k in range(args.steps):
        t = T0_US + k * stage["step_ms"] * 1e3
        for m in range(args.microbatches):
            rows.append(f"{k + 1},4294967295,{m},2,aclnnMatmul_MatMulV3_MatMulV3,MatMulV3,static,AI_CORE,"
                        f"{t + m * each:.3f}\t,{each:.3f},0,24,0,NO,\"\"\"4096,4096;4096,4096\"\"\",DT_BF16;DT_BF16,"
                        f"ND;ND,\"\"\"4096,4096\"\"\",DT_BF16,ND,N/A")
    return "\n".join(rows) + "\n"


def metadata(args, rank, pp):
    groups = {group_id("default", 0): {"group_name": "default_group", "group_rank": rank,
                                       "global_ranks": list(range(pp * args.dp))}}
    for j in range(args.dp):
        members = [s * args.dp + j for s in range(pp)]
        groups[group_id("pp", j)] = {"group_name": "pp", "group_rank": members.index(rank) if rank in members else -1,
                             "global_ranks": members}
    for s in range(pp):
        members = [s * args.dp + d for d in range(args.dp)]
        groups[group_id("dp", s)] = {"group_name": "dp", "group_rank": members.index(rank) if rank in members else -1,
                             "global_ranks": members}
    return {"distributed_args": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": pp,
                                 "data_parallel_size": args.dp, "rank": rank, "world_size": pp * args.dp},
            "parallel_group_info": groups}


def profiler_info(rank):
    return {"config": {"common_config": {"activities": ["ProfilerActivity.CPU", "ProfilerActivity.NPU"],
                                         "record_shapes": True},
                       "experimental_config": {"_profiler_level": "Level1", "_export_type": "text"}},
            "rank_id": rank}


PY_PID, CANN_PID, HW_PID, HCCL_PID = 3178231, 3254508768, 3254508960, 3254509024
STREAM = 2


class Timeline:
    """One rank's trace_view.json events: launches on the Python thread's CANN track, device tasks and HCCL ops."""

    def __init__(self, rank):
        self.py_pid = PY_PID + 11 * rank
        self.events, self.connection, self.task_id = [], 1000, 11000

    def launch(self, item, start_ns, end_ns, on_hccl):
        self.connection += 1
        self.task_id += 1
        launch_ns = start_ns - 5000
        self.events.append(npu_x("Node@launch", CANN_PID, self.py_pid, launch_ns, launch_ns + 3000,
                                 {"Thread Id": self.py_pid, "Mode": "launch", "level": "node", "id": "0",
                                  "item_id": item, "connection_id": self.connection}))
        self.events.append(npu_flow("s", self.connection, CANN_PID, self.py_pid, launch_ns))
        if on_hccl:
            self.events.append(npu_x(item, HCCL_PID, 0, start_ns, end_ns,
                                     {"connection_id": self.connection, "model id": 4294967295}))
            self.events.append(npu_flow("f", self.connection, HCCL_PID, 0, start_ns))
        else:
            self.events.append(npu_x(item, HW_PID, STREAM, start_ns, end_ns,
                                     {"Model Id": 4294967295, "Task Type": "AI_CORE", "Physic Stream Id": STREAM,
                                      "Task Id": self.task_id, "Batch Id": 0, "Subtask Id": 4294967295,
                                      "connection_id": self.connection}))
            self.events.append(npu_flow("f", self.connection, HW_PID, STREAM, start_ns))

    def step(self, number, start_ns, end_ns):
        self.events.append(npu_x(f"ProfilerStep#{number}", self.py_pid, self.py_pid, start_ns, end_ns,
                                 {"Sequence number": -1, "Fwd thread id": 0}, "cpu_op"))

    def document(self):
        meta = [npu_meta("process_name", self.py_pid, 0, "name", "Python"),
                npu_meta("thread_name", self.py_pid, self.py_pid, "name", f"Thread {self.py_pid}"),
                npu_meta("process_name", CANN_PID, 0, "name", "CANN"),
                npu_meta("thread_name", CANN_PID, self.py_pid, "name", f"Thread {self.py_pid}"),
                npu_meta("process_name", HW_PID, 0, "name", "Ascend Hardware"),
                npu_meta("thread_name", HW_PID, STREAM, "name", f"Stream {STREAM}"),
                npu_meta("process_labels", HW_PID, 0, "labels", "NPU"),
                npu_meta("process_name", HCCL_PID, 0, "name", "HCCL"),
                npu_meta("thread_name", HCCL_PID, 0, "name", "Group 0 Communication"),
                npu_meta("process_labels", HCCL_PID, 0, "labels", "NPU")]
        return json.dumps(meta + self.events, separators=(",", ":"))


def device_schedule(args, stage, rank):
    """The rank's steps as stage_model lays them out, back to back from T0: per step its number, its ProfilerStep
    range and its device items (name, start ns, end ns, on the HCCL track): per micro-batch its compute task then
    its p2p op, then the all-reduce, then the gap; and a last task after the last step, which closes its gap as the
    next step's first task closes the others'."""
    ns = lambda ms: round(ms * 1e6)
    each_c = ns(stage["computing_ms"] / args.microbatches)
    each_p = ns(stage["p2p_ms"] / args.microbatches)
    step_ns = args.microbatches * (each_c + each_p) + ns(ALLREDUCE_MS) + ns(FREE_MS)
    prefix = "hcom_receive_" if args.wait_ops == "receive" else "hcom_batchSendRecv_"
    pp_hash, dp_hash = rank_hashes(args, rank)
    t0 = round(T0_US * 1000)
    steps = []
    for k in range(args.steps):
        start = t0 + k * step_ns
        items, t = [], start
        for m in range(args.microbatches):
            items.append(("aclnnMatmul_MatMulV3_MatMulV3", t, t + each_c, False))
            t += each_c
            items.append((f"{prefix}_{pp_hash[-3:]}_{k * args.microbatches + m}_1", t, t + each_p, True))
            t += each_p
        items.append((f"hcom_allReduce__{dp_hash[-3:]}_{k}_1", t, t + ns(ALLREDUCE_MS), True))
        steps.append((k + 1, start - 20000, start + step_ns - 20000, items))
    closing = ("aclnnMatmul_MatMulV3_MatMulV3", t0 + args.steps * step_ns, t0 + args.steps * step_ns + 1000, False)
    return steps, closing


def timeline(args, stage, rank):
    """trace_view.json of one rank, laid out as device_schedule says."""
    tl = Timeline(rank)
    steps, closing = device_schedule(args, stage, rank)
    for number, start, end, items in steps:
        tl.step(number, start, end)
        for item in items:
            tl.launch(*item)
    tl.launch(*closing)
    return tl.document()


def kineto_x(cat, name, tid, start_ns, dur_ns, **args):
    e = {"ph": "X", "cat": cat, "name": name, "pid": 0 if cat == "kernel" else 3000, "tid": tid,
         "ts": start_ns / 1000, "dur": dur_ns / 1000}
    if args:
        e["args"] = args
    return e


def kineto_flow(phase, ident, pid, tid, ts_ns):
    e = {"ph": phase, "id": ident, "pid": pid, "tid": tid, "ts": ts_ns / 1000, "cat": "ac2g", "name": "ac2g"}
    if phase == "f":
        e["bp"] = "e"
    return e


def kineto_groups(args, stage, rank, pp):
    """(group name, description, ranks) of the pp group, or per neighbour with --pg-names none (the pair's group
    with the next and the previous stage), and the DP group."""
    d = rank % args.dp
    named = args.pg_names == "pipeline"
    pair = lambda a: (str(100 + a * args.dp + d), "undefined", json.dumps([a * args.dp + d, (a + 1) * args.dp + d]))
    # Every group its own name, as PyTorch numbers them across the job: the cross-rank match keys on it.
    pp_group = (str(10 + d), "PIPELINE_MODEL_PARALLEL_GROUP" if named else "undefined",
                json.dumps([s * args.dp + d for s in range(pp)]))
    dp_group = (str(50 + stage), "DATA_PARALLEL_GROUP" if named else "undefined",
                json.dumps([stage * args.dp + e for e in range(args.dp)]))
    send_group = pair(stage) if args.pg_names == "none" else pp_group
    recv_group = pair(stage - 1) if args.pg_names == "none" else pp_group
    return send_group, recv_group, dp_group


def kineto_rank(args, stage, rank, pp, kernels, bounds):
    """One rank's Kineto trace (relative µs from baseTimeNanoseconds) of the simulated chain."""
    s = stage["stage"]
    events, corr = [], rank * 1_000_000

    def launch(name, stream, start, dur, **kernel_args):
        nonlocal corr
        corr += 1
        events.append(kineto_x("cuda_runtime", "cudaLaunchKernel", 3000, start - 8000, 4000, correlation=corr))
        events.append(kineto_flow("s", corr, 3000, 3000, start - 8000))
        events.append(kineto_x("kernel", name, stream, start, dur, device=0, stream=stream, correlation=corr,
                               **kernel_args))
        events.append(kineto_flow("f", corr, 0, stream, start))

    nccl = lambda collective, group: {"Collective name": collective, "In msg nelems": 1048576,
                                      "Out msg nelems": 1048576, "Group size": len(json.loads(group[2])),
                                      "dtype": "BFloat16", "Process Group Name": group[0],
                                      "Process Group Description": group[1], "Process Group Ranks": group[2]}
    next_group, previous_group, dp_group = kineto_groups(args, s, rank, pp)
    d = rank % args.dp
    peer_key = {"send": "Dst Rank", "recv": "Src Rank"}
    for k, step in enumerate(kernels[s]):
        start, end = bounds[s][k]
        events.append(kineto_x("user_annotation", f"ProfilerStep#{k + 1}", 3000, start - 10000, end - start))
        for kind, b, e, _, peer in step:
            if kind == "compute":
                launch("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn", 7, b, e - b,
                       grid=[512, 1, 1], block=[256, 1, 1])
            elif kind == "allreduce":
                launch("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 21, b, e - b,
                       **nccl("allreduce", dp_group))
            else:
                launch("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", 20, b, e - b,
                       **nccl(kind, next_group if peer > s else previous_group),
                       **({peer_key[kind]: peer * args.dp + d} if args.peer_args else {}))
    return {"schemaVersion": 1,
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": pp * args.dp},
            "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85045936128,
                                  "computeMajor": 9, "computeMinor": 0, "numSms": 132}],
            "traceEvents": sorted(events, key=lambda e: (e["ts"], e["ph"])),
            "displayTimeUnit": "ms", "baseTimeNanoseconds": 1735689600000000000}


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def write_text(args, stages, with_timeline=False):
    pp = len(stages)
    for stage in stages:
        for rank in stage["ranks"]:
            top = os.path.join(args.out, f"rank{rank}_ascend_pt")
            out = os.path.join(top, "ASCEND_PROFILER_OUTPUT")
            write(os.path.join(top, f"profiler_info_{rank}.json"), json.dumps(profiler_info(rank), indent=4))
            write(os.path.join(top, "profiler_metadata.json"), json.dumps(metadata(args, rank, pp)))
            lines = [STEP_HEADER]
            for row in step_rows(args, stage):
                lines.append(",".join([str(row[0])] + [ms(v) for v in row[1:]] + ["0.000"]))
            write(os.path.join(out, "step_trace_time.csv"), "\n".join(lines) + "\n")
            write(os.path.join(out, "communication.json"), json.dumps(communication(args, stage, stage["step_ms"], rank)))
            write(os.path.join(out, "kernel_details.csv"), kernels(args, stage))
            if with_timeline:
                write(os.path.join(out, "trace_view.json"), timeline(args, stage, rank))


class StringTable:
    """STRING_IDS: the database names everything by an id into it."""

    def __init__(self):
        self.ids = {}

    def __call__(self, value):
        return self.ids.setdefault(value, len(self.ids) + 1)


def profiler_db(args, stage, rank, pp, path):
    """ascend_pytorch_profiler_{rank}.db: the timeline device_schedule lays out, as torch_npu's Db export stores it
    (ns, names as STRING_IDS ids): ProfilerStep ranges in PYTORCH_API and STEP_TIME, each launch in CANN_API, the
    compute tasks in TASK / COMPUTE_TASK_INFO, the HCCL ops in COMMUNICATION_OP with each p2p op's share of the
    stage's wait in waitNs; the chip and rank; profiler_metadata.json's distributed_args and parallel_group_info
    as META_DATA rows of JSON text. Only the tables and columns the importer reads."""
    string = StringTable()
    tid = PY_PID + 11 * rank
    apis, steps_rows, cann, tasks, infos, ops = [], [], [], [], [], []
    schedule, closing = device_schedule(args, stage, rank)
    connection = 1000
    wait_each = round(stage["p2p_wait_ms"] / args.microbatches * 1e6)
    pp_hash, dp_hash = rank_hashes(args, rank)
    for number, start, end, items in schedule:
        apis.append((start, end, tid, None, string(f"ProfilerStep#{number}"), -1, 0, 50001, 0))
        steps_rows.append((number, start, end))
    for name, start, end, on_hccl in [item for *_, items in schedule for item in items] + [closing]:
        connection += 1
        cann.append((start - 5000, start - 2000, 10000, tid, connection, string("Node@launch")))
        if on_hccl:
            p2p = not name.startswith("hcom_allReduce")
            group, op_type = (pp_hash, name.split("__")[0] + "_") if p2p else (dp_hash, "hcom_allReduce_")
            ops.append((string(name), start, end, connection, string(group), len(ops) + 1, string(op_type),
                        wait_each if p2p else round(0.2e6)))
        else:
            task = len(tasks) + 1
            tasks.append((start, end, 0, connection, task, 3254508960, string("AI_CORE"), 4294967295, STREAM,
                          11000 + task, 4294967295))
            infos.append((string(name), task, 24, 0, string("AI_CORE"), string("MatMulV3"), string("ND;ND"),
                          string("DT_BF16;DT_BF16"), string('"4096,4096;4096,4096"'), string("ND"), string("DT_BF16"),
                          string('"4096,4096"'), 0))
    tables = profiler_db_tables(apis, steps_rows, cann, tasks, infos, ops, rank,
                                [(k, json.dumps(v)) for k, v in metadata(args, rank, pp).items()])
    tables["STRING_IDS (id INTEGER PRIMARY KEY, value TEXT)"] = [(i, v) for v, i in string.ids.items()]
    write_sqlite(path, tables)


def analysis_db(args, stage, step_ms, rank, path):
    """analysis.db: step_trace_time.csv as StepTraceTime (µs) and communication.json's ops as CommAnalyzerTime
    (ms; the op and its group in two columns, the section in type), as the Db export writes them."""
    steps = [(str(row[0]), *[round(v, 3) for v in row[1:]], 0.0) for row in step_rows(args, stage)]
    ops = []
    for step, sections in communication(args, stage, step_ms, rank).items():
        for section, entries in sections.items():
            for name, op in entries.items():
                if name == "Total Op Info":
                    continue
                t = op["Communication Time Info"]
                op_name, group = name.split("@")
                ops.append((op_name, group, t["Start Timestamp(us)"], t["Elapse Time(ms)"], t["Transit Time(ms)"],
                            t["Wait Time(ms)"], t["Synchronization Time(ms)"], t["Idle Time(ms)"], step, section))
    write_sqlite(path, {
        "StepTraceTime (step TEXT, computing NUMERIC, communication_not_overlapped NUMERIC, overlapped NUMERIC, "
        "communication NUMERIC, free NUMERIC, stage NUMERIC, bubble NUMERIC, "
        "communication_not_overlapped_and_exclude_receive NUMERIC, preparing NUMERIC)": steps,
        "CommAnalyzerTime (hccl_op_name TEXT, group_name TEXT, start_timestamp NUMERIC, elapse_time NUMERIC, "
        "transit_time NUMERIC, wait_time NUMERIC, synchronization_time NUMERIC, idle_time NUMERIC, step TEXT, "
        "type TEXT)": ops})


def profiler_db_tables(apis, steps, cann, tasks, infos, ops, rank, metadata=()):
    """The tables of ascend_pytorch_profiler_{rank}.db the importer reads, holding the rows given, with the
    columns torch_npu's Db export names ("NAME (columns)": rows, for write_sqlite; STRING_IDS is the caller's)."""
    return {
        "PYTORCH_API (startNs INTEGER, endNs INTEGER, globalTid INTEGER, connectionId INTEGER, name INTEGER, "
        "sequenceNumber INTEGER, fwdThreadId INTEGER, type INTEGER, depth INTEGER)": apis,
        "STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER)": steps,
        "CANN_API (startNs INTEGER, endNs INTEGER, type INTEGER, globalTid INTEGER, connectionId INTEGER PRIMARY KEY, "
        "name INTEGER)": cann,
        "TASK (startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER, globalTaskId INTEGER, "
        "globalPid INTEGER, taskType INTEGER, contextId INTEGER, streamId INTEGER, taskId INTEGER, "
        "modelId INTEGER)": tasks,
        "COMPUTE_TASK_INFO (name INTEGER, globalTaskId INTEGER PRIMARY KEY, blockDim INTEGER, mixBlockDim INTEGER, "
        "taskType INTEGER, opType INTEGER, inputFormats INTEGER, inputDataTypes INTEGER, inputShapes INTEGER, "
        "outputFormats INTEGER, outputDataTypes INTEGER, outputShapes INTEGER, waitNs INTEGER)": infos,
        "COMMUNICATION_OP (opName INTEGER, startNs INTEGER, endNs INTEGER, connectionId INTEGER, groupName INTEGER, "
        "opId INTEGER PRIMARY KEY, opType INTEGER, waitNs INTEGER)": ops,
        "NPU_INFO (id INTEGER, name TEXT)": [(0, "Ascend910B")],
        "RANK_DEVICE_MAP (rankId INTEGER, deviceId INTEGER)": [(rank, 0)],
        "META_DATA (name TEXT, value TEXT)": [("SCHEMA_VERSION", "1.0.0")] + list(metadata),
    }


def write_sqlite(path, tables):
    """{"NAME (columns)": rows}: a fresh database file holding them."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    for schema, rows in tables.items():
        db.execute(f"CREATE TABLE {schema}")
        if rows:
            db.executemany(f"INSERT INTO {schema.split()[0]} VALUES ({','.join('?' * len(rows[0]))})", rows)
    db.commit()
    db.close()


def write_db(args, stages):
    """The Db export: per rank its profiler_info / profiler_metadata.json (left out with --without-metadata-json,
    the groups then only in the database) and ASCEND_PROFILER_OUTPUT/ holding only ascend_pytorch_profiler_{rank}.db
    and analysis.db."""
    pp = len(stages)
    for stage in stages:
        for rank in stage["ranks"]:
            top = os.path.join(args.out, f"rank{rank}_ascend_pt")
            out = os.path.join(top, "ASCEND_PROFILER_OUTPUT")
            info = profiler_info(rank)
            info["config"]["experimental_config"]["_export_type"] = "db"
            write(os.path.join(top, f"profiler_info_{rank}.json"), json.dumps(info, indent=4))
            if not args.without_metadata_json:
                write(os.path.join(top, "profiler_metadata.json"), json.dumps(metadata(args, rank, pp)))
            profiler_db(args, stage, rank, pp, os.path.join(out, f"ascend_pytorch_profiler_{rank}.db"))
            analysis_db(args, stage, stage["step_ms"], rank, os.path.join(out, "analysis.db"))


def write_cluster(args, stages):
    lines = [CLUSTER_HEADER]
    for stage in stages:
        for rank in stage["ranks"]:
            for row in step_rows(args, stage)[:1]:  # msprof-analyze writes one row per rank (its mean step)
                lines.append(",".join(["", "rank", str(rank)] + [ms(v) for v in row[1:]]))
    for stage in stages:
        row = step_rows(args, stage)[0]
        ranks = '"(' + ", ".join(str(r) for r in stage["ranks"]) + ')"'
        lines.append(",".join(["", "stage", ranks] + [ms(v) for v in row[1:]]))
    write(os.path.join(args.out, "cluster_analysis_output", "cluster_step_trace_time.csv"), "\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--stage-ms", default="231,400", help="compute per step of each stage, in stage order")
    parser.add_argument("--dp", type=int, default=2)
    parser.add_argument("--microbatches", type=int, default=8)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--wait-ops", choices=("batch", "receive"), default="batch")
    parser.add_argument("--layout", choices=("text", "timeline", "cluster", "kineto", "db"), default="text")
    parser.add_argument("--pg-names", choices=("pipeline", "none", "unnamed"), default="pipeline",
                        help="kineto: name the pp group as Megatron does, or leave every group unnamed (none: a "
                             "two-rank group per neighbouring pair; unnamed: one pp communicator of PP ranks)")
    parser.add_argument("--peer-args", action="store_true",
                        help="kineto: p2p kernels name their peer (Dst Rank / Src Rank)")
    parser.add_argument("--schedule", choices=("forward", "1f1b"), default="forward",
                        help="kineto: the forward chain alone, or 1F1B with the gradients sent back over the same "
                             "groups")
    parser.add_argument("--shared-group-hash", action="store_true",
                        help="text / timeline / db: every rank's p2p ops under one HCCL group hash and its all-reduces "
                             "under another, neither listed in profiler_metadata.json (default: a hash per pp / dp "
                             "group, each the hash of its parallel_group_info id, as torch_npu writes them)")
    parser.add_argument("--without-metadata-json", action="store_true",
                        help="db: no profiler_metadata.json beside the databases (the groups only in META_DATA)")
    args = parser.parse_args()
    if args.layout == "cluster":
        args.wait_ops = "receive"  # msprof-analyze's Bubble column comes from the receive ops
    stages, _ = stage_model(args)
    os.makedirs(args.out, exist_ok=True)
    if args.layout == "cluster":
        write_cluster(args, stages)
    elif args.layout == "kineto":
        kernels, bounds = simulate_chain(args, [s["computing_ms"] for s in stages])
        for stage in stages:
            for rank in stage["ranks"]:
                trace = kineto_rank(args, stage, rank, len(stages), kernels, bounds)
                write(os.path.join(args.out, f"rank{rank}.pt.trace.json"), json.dumps(trace, separators=(",", ":")))
    elif args.layout == "db":
        write_db(args, stages)
    else:
        write_text(args, stages, with_timeline=args.layout == "timeline")
    print(json.dumps({"layout": args.layout, "wait_ops": args.wait_ops, "pg_names": args.pg_names,
                      "schedule": args.schedule,
                      "peer_args": args.peer_args, "pp": len(stages), "dp": args.dp,
                      "microbatches": args.microbatches, "steps": 1 if args.layout == "cluster" else args.steps,
                      "stages": stages, "balanced_gain_ms": balanced_gain_ms(args, stages),
                      "findings": findings(args, stages)}))


if __name__ == "__main__":
    main()
