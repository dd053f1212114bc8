#!/usr/bin/env python3
"""Write a deterministic N-rank Kineto (PyTorch profiler, CUDA + NCCL) run: one trace file per rank, for
cluster-scale benchmarks and for checks whose answer is known by construction.

Each rank runs STEPS ProfilerSteps of: LAYERS compute kernels (cudaLaunchKernel -> kernel on stream 7,
ac2g flows), then a DDP-style NCCL all-reduce (record_param_comms + nccl:all_reduce launching
ncclDevKernel_AllReduce_RING_LL_Sum_float on stream 20 with the collective args Kineto copies onto it:
Process Group Name "0", ranks, message size, dtype). The all-reduce starts on each rank when its compute
is done and ends on all ranks together, TRANSFER_US after the last rank arrives, so:
  - the straggler (--straggler R, late by --late-us each step) arrives last at every collective and
    every other rank waits exactly that long for it (plus the spread of the others' arrival);
  - each rank's clock is moved by --skew-us x (rank % 3 - 1) (0, -skew, +skew, ...) through
    baseTimeNanoseconds, as hosts with unsynchronized clocks would write it.
A small per-rank, per-step jitter (seeded) keeps arrivals from tying. The true values are printed as JSON
on stdout (straggler, per-rank clock offsets against rank 0, wait per step), so a check can compare.

With --layout torch_npu the same run is written as torch_npu profiler output instead (Ascend NPUs, HCCL), one
directory per rank as torch_npu's tensorboard_trace_handler leaves it after analyse (text export, Level1):
    OUT/rank{r}_ascend_pt/profiler_info_{r}.json                          rank_id, profiler config
    OUT/rank{r}_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json           Python / CANN / Ascend Hardware / HCCL /
                                                                           Overlap Analysis processes
    OUT/rank{r}_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv        compute tasks and HCCL operators
    OUT/rank{r}_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv       torch_npu's per-step split
    OUT/rank{r}_ascend_pt/ASCEND_PROFILER_OUTPUT/communication.json        per-step HCCL time and bandwidth info
Each layer is an aten::gelu on the Python thread, a CANN Node@launch with a HostToDevice flow to its AI_CORE task
on stream 2; the all-reduce is HcclAllreduce -> Node@launch -> hcom_allReduce__<h>_<i>_1 on the HCCL process's
"Group 0 Communication" thread, with its plane sub-tasks (Notify_Wait while waiting for the last rank, Memcpy while
moving data). torch_npu writes absolute epoch µs (ts as strings with ns digits): each rank's timestamps are moved
by its skew, as its host's clock would have written them; the op name and group hash are the same on every rank.
communication.json's Wait / Synchronization Time is the wait for the last rank, Transit Time the data movement
(TRANSIT_SHARE of the transfer), Idle the rest; step_trace_time.csv follows torch_npu's definitions over the same
tasks. The printed truth is the same for both layouts (plus "layout").

    python3 bench/gen_cluster.py --out DIR --ranks 8 [--steps 4] [--straggler 3] [--late-us 2000]
                                 [--skew-us 5000] [--layers 40] [--seed 1] [--layout kineto|torch_npu]
"""
import json
import os
import random

from trace_events import x, flow, us, npu_x, npu_meta, npu_flow, hopper_properties, generator_arguments

BASE_NS = 1735689600000000000
T0_US = 4512345678.0
PID = 3000
STREAM = 7
NCCL_STREAM = 20
KERNEL = "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>(int, float*)"
NCCL = "ncclDevKernel_AllReduce_RING_LL_Sum_float(ncclDevKernelArgsStorage<4096ul>)"
TRANSFER_US = 800.0
NELEMS = 25 * 1024 * 1024 // 4


def plan(args):
    """Per step: each rank's arrival at the all-reduce (µs, true time) and the common end."""
    rng = random.Random(args.seed)
    steps = []
    t = T0_US
    for _ in range(args.steps):
        compute = args.layers * 50.0
        arrive = [t + 20.0 + compute + rng.uniform(0, 30) + (args.late_us if r == args.straggler else 0.0)
                  for r in range(args.ranks)]
        end = max(arrive) + TRANSFER_US
        steps.append((t, arrive, end))
        t = end + 200.0
    return steps


def rank_trace(args, rank, steps):
    events, corr = [], rank * 10_000_000
    groups = json.dumps(list(range(args.ranks)))
    for number, (start, arrive, end) in enumerate(steps, 1):
        t = start + 20.0
        for _ in range(args.layers):
            corr += 1
            events.append(x("cuda_runtime", "cudaLaunchKernel", PID, PID, t, 4.0, correlation=corr))
            events.append(flow("s", corr, PID, PID, t))
            events.append(x("kernel", KERNEL, 0, STREAM, t + 5.0, 45.0, device=0, stream=STREAM,
                            correlation=corr, grid=[512, 1, 1], block=[128, 1, 1]))
            events.append(flow("f", corr, 0, STREAM, t + 5.0))
            t += 50.0
        nccl_start = arrive[rank]
        corr += 1
        events.append(x("cpu_op", "record_param_comms", PID, PID, nccl_start - 6.0, 5.0))
        events.append(x("cuda_runtime", "cudaLaunchKernel", PID, PID, nccl_start - 5.0, 4.0, correlation=corr))
        events.append(flow("s", corr, PID, PID, nccl_start - 5.0))
        events.append(x("kernel", NCCL, 0, NCCL_STREAM, nccl_start, end - nccl_start, device=0, stream=NCCL_STREAM,
                        correlation=corr, **{"Collective name": "allreduce", "In msg nelems": NELEMS,
                                             "Out msg nelems": NELEMS, "Group size": args.ranks, "dtype": "Float",
                                             "Process Group Name": "0", "Process Group Description": "default_pg",
                                             "Process Group Ranks": groups}))
        events.append(flow("f", corr, 0, NCCL_STREAM, nccl_start))
        events.append(x("user_annotation", f"ProfilerStep#{number}", PID, PID, start, end - start + 100.0))
    skew_ns = int(args.skew_us * 1000) * (rank % 3 - 1)
    return {"schemaVersion": 1,
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": args.ranks},
            "deviceProperties": hopper_properties("NVIDIA H100 80GB HBM3"),
            "traceEvents": sorted(events, key=lambda e: (e["ts"], e["ph"])),
            "displayTimeUnit": "ms", "baseTimeNanoseconds": BASE_NS + skew_ns}, skew_ns


# ---- torch_npu layout (--layout torch_npu)

NPU_PY_PID = 3178231                 # + 11 x rank: each rank its own host process
NPU_CANN_PID = 3254508768            # torch_npu's synthetic pids of the NPU-side processes (as in real output)
NPU_HW_PID = 3254508960
NPU_HCCL_PID = 3254509024
NPU_OVERLAP_PID = 3254509280
NPU_STREAM = 2
NPU_HCCL_STREAM = 4
NPU_KERNEL = "aclnnGelu_GeluAiCore_Gelu"
NPU_KERNEL_TYPE = "Gelu"
NPU_GROUP = "10652853832372142448"  # the HCCL group's hash; the op names end in its last three digits
NPU_OP = "hcom_allReduce__" + NPU_GROUP[-3:] + "_{}_1"
NPU_NODE_SIZE = 8                    # ranks per server: HCCS inside it, RDMA between servers
TRANSIT_SHARE = 0.75                 # of TRANSFER_US the data moves; the rest is HCCL's idle time
HCCS_GBPS = 18.0                     # per link
RDMA_GBPS = 20.0
UINT32_MAX = 4294967295
KERNEL_HEADER = ("Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),"
                 "Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,"
                 "Output Shapes,Output Data Types,Output Formats,Context ID")
STEP_HEADER = ("Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
               "Communication(Not Overlapped and Exclude Receive),Preparing")


def npu_traffic(ranks):
    """Per transport (MB moved by one rank, transit ms summed over its links, packets) of one ring all-reduce of
    NELEMS floats: reduce-scatter + all-gather inside the server over HCCS, the server's shard across servers
    over RDMA."""
    size_mb = NELEMS * 4 / 1e6
    local = min(ranks, NPU_NODE_SIZE)
    nodes = -(-ranks // NPU_NODE_SIZE)
    hccs_mb = size_mb * 2 * (local - 1) / local
    rdma_mb = size_mb / local * 2 * (nodes - 1) / nodes if nodes > 1 else 0.0
    hccs = (hccs_mb, hccs_mb / HCCS_GBPS, 2 * (local - 1))
    rdma = (rdma_mb, rdma_mb / RDMA_GBPS, 2 * (nodes - 1))
    none = (0.0, 0.0, 0)
    return {"RDMA": rdma, "HCCS": hccs, "PCIE": none, "SDMA": hccs, "SIO": none}


def npu_bandwidth(traffic, total):
    out = {}
    for transport, (mb, ms, packets) in traffic.items():
        distribution = {}
        if packets and mb > 0 and transport != "SDMA":  # SDMA aggregates the on-node links: no packets of its own
            distribution[str(round(mb / packets, 6))] = [packets, ms]
        if total:  # "Total Op Info" keeps neither the bandwidth nor the large packet ratio
            out[transport] = {"Transit Time(ms)": ms, "Transit Size(MB)": mb, "Size Distribution": distribution}
        else:
            out[transport] = {"Transit Size(MB)": mb, "Transit Time(ms)": ms,
                              "Bandwidth(GB/s)": round(mb / ms, 4) if ms > 0 else 0,
                              "Large Packet Ratio": 0.0 if mb > 0 else 0, "Size Distribution": distribution}
    return out


def npu_time_info(start_ns, elapse_ns, transit_ns, wait_ns):
    info = {} if start_ns is None else {"Start Timestamp(us)": start_ns / 1000}
    wait_ratio = wait_ns / (wait_ns + transit_ns) if wait_ns + transit_ns else 0
    info.update({"Elapse Time(ms)": elapse_ns / 1e6, "Transit Time(ms)": transit_ns / 1e6,
                 "Wait Time(ms)": wait_ns / 1e6, "Synchronization Time(ms)": wait_ns / 1e6,
                 "Idle Time(ms)": (elapse_ns - transit_ns - wait_ns) / 1e6,
                 "Wait Time Ratio": round(wait_ratio, 4), "Synchronization Time Ratio": round(wait_ratio, 4)})
    return info


def npu_rank(args, rank, steps, traffic):
    """The files of one rank: {relative path: text}."""
    skew_ns = int(args.skew_us * 1000) * (rank % 3 - 1)
    clock = BASE_NS + skew_ns

    def at(t_us):  # true time (µs, the plan's) -> this rank's absolute ns
        return clock + round(t_us * 1000)

    py_pid = NPU_PY_PID + 11 * rank
    py, cann, hw, hccl, overlap = [], [], [], [], []
    kernel_rows, step_rows, comm = [], [], {}
    connection, task_id = 1000, 11000
    prev_end = None  # the device's last task end, for kernel_details' Wait Time
    busy_end = None  # the end of the last busy period (Overlap Analysis' Free gaps)
    transit_ns = round(TRANSFER_US * TRANSIT_SHARE * 1000)
    cpu_args = {"Sequence number": -1, "Fwd thread id": 0}
    for number, (start, arrive, end) in enumerate(steps, 1):
        step_start = at(start)
        first_task = None
        computing = free = 0
        if busy_end is not None:  # the gap after the previous step's all-reduce: Free of the previous step
            gap = at(start + 25.0) - busy_end
            overlap.append(npu_x("Free", NPU_OVERLAP_PID, 3, busy_end, busy_end + gap))
            step_rows[-1][0] += gap
            step_rows[-1][1] += gap
        t = start + 20.0
        for _ in range(args.layers):
            connection += 1
            task_id += 1
            launch, task_start, task_end = at(t + 0.5), at(t + 5.0), at(t + 50.0)
            py.append(npu_x("aten::gelu", py_pid, py_pid, at(t), at(t + 4.0),
                            {**cpu_args, "Input Dims": "4096,4096", "Input type": "float"}, "cpu_op"))
            cann.append(npu_x("Node@launch", NPU_CANN_PID, py_pid, launch, at(t + 3.5),
                              {"Thread Id": py_pid, "Mode": "launch", "level": "node", "id": "0",
                               "item_id": NPU_KERNEL, "connection_id": connection}))
            cann.append(npu_flow("s", connection, NPU_CANN_PID, py_pid, launch))
            hw.append(npu_x(NPU_KERNEL, NPU_HW_PID, NPU_STREAM, task_start, task_end,
                            {"Model Id": UINT32_MAX, "Task Type": "AI_CORE", "Physic Stream Id": NPU_STREAM,
                             "Task Id": task_id, "Batch Id": 0, "Subtask Id": UINT32_MAX, "connection_id": connection}))
            hw.append(npu_flow("f", connection, NPU_HW_PID, NPU_STREAM, task_start))
            if first_task is None:
                first_task = task_start  # the gap before it is the previous step's (above)
            else:
                overlap.append(npu_x("Free", NPU_OVERLAP_PID, 3, busy_end, task_start))
                free += task_start - busy_end
            overlap.append(npu_x("Computing", NPU_OVERLAP_PID, 0, task_start, task_end))
            computing += task_end - task_start
            kernel_rows.append(
                f"{number},{UINT32_MAX},{task_id},{NPU_STREAM},{NPU_KERNEL},{NPU_KERNEL_TYPE},static,AI_VECTOR_CORE,"
                f"{us(task_start)}\t,{us(task_end - task_start)},{us(task_start - prev_end) if prev_end else '0'},"
                f'48,0,NO,"""4096,4096""",FLOAT,ND,"""4096,4096""",FLOAT,ND,N/A')
            prev_end = busy_end = task_end
            t += 50.0
        # The all-reduce: launched when this rank's compute is done, over when the last rank has arrived
        # and the data has moved.
        connection += 1
        op = NPU_OP.format(number - 1)
        op_start, op_end, last = at(arrive[rank]), at(end), at(max(arrive))
        wait_ns = last - op_start
        py.append(npu_x("HcclAllreduce", py_pid, py_pid, at(arrive[rank] - 6.0), at(arrive[rank] - 1.0),
                        {**cpu_args, "Input Dims": str(NELEMS), "Input type": "float"}, "cpu_op"))
        cann.append(npu_x("Node@launch", NPU_CANN_PID, py_pid, at(arrive[rank] - 5.0), at(arrive[rank] - 1.0),
                          {"Thread Id": py_pid, "Mode": "launch", "level": "node", "id": "0",
                           "item_id": "hcom_allReduce_", "connection_id": connection}))
        cann.append(npu_flow("s", connection, NPU_CANN_PID, py_pid, at(arrive[rank] - 5.0)))
        hccl.append(npu_x(op, NPU_HCCL_PID, 0, op_start, op_end,
                          {"connection_id": connection, "model id": UINT32_MAX, "data_type": "FP32",
                           "alg_type": "RING", "count": NELEMS}))
        hccl.append(npu_flow("f", connection, NPU_HCCL_PID, 0, op_start))
        task_id += 1
        plane = {"stream id": NPU_HCCL_STREAM, "task id": task_id, "model id": UINT32_MAX}
        hccs_mb = traffic["HCCS"][0]
        hccl.append(npu_x("Notify_Wait", NPU_HCCL_PID, 1, op_start, last,
                          {"notify_id": str(rank), "duration estimated(us)": 0.02, **plane, "context id": 0,
                           "task type": "Notify_Wait", "src rank": (rank - 1) % args.ranks, "dst rank": rank,
                           "transport type": "LOCAL", "size(Byte)": 0, "data type": "INVALID_TYPE",
                           "link type": "INVALID_TYPE", "bandwidth(GB/s)": 0.0}))
        memcpy_bytes = round(hccs_mb * 1e6)
        hccl.append(npu_x("Memcpy", NPU_HCCL_PID, 1, last, last + transit_ns,
                          {"notify_id": "18446744073709551615", "duration estimated(us)": transit_ns / 1000, **plane,
                           "context id": 1, "task type": "Memcpy", "src rank": rank,
                           "dst rank": (rank + 1) % args.ranks, "transport type": "SDMA", "size(Byte)": memcpy_bytes,
                           "data type": "INVALID_TYPE", "link type": "HCCS",
                           "bandwidth(GB/s)": memcpy_bytes / transit_ns}))
        overlap.append(npu_x("Free", NPU_OVERLAP_PID, 3, busy_end, op_start))
        free += op_start - busy_end
        overlap.append(npu_x("Communication", NPU_OVERLAP_PID, 1, op_start, op_end))
        overlap.append(npu_x("Communication(Not Overlapped)", NPU_OVERLAP_PID, 2, op_start, op_end))
        kernel_rows.append(
            f"{number},{UINT32_MAX},N/A,N/A,{op},hcom_allReduce_,N/A,HCCL,{us(op_start)}\t,{us(op_end - op_start)},"
            f"{us(op_start - prev_end)},0" + ",N/A" * 9)
        prev_end = busy_end = op_end
        comm_ns = op_end - op_start
        # [Free, Stage, Computing, Communication, Preparing, step]: Free and Stage grow by the gap up to the next
        # step's first task, which starts inside this step's range (torch_npu gives a piece to the step it starts in).
        step_rows.append([free, op_end - first_task, computing, comm_ns, first_task - step_start, number])
        py.append(npu_x(f"ProfilerStep#{number}", py_pid, py_pid, step_start, at(end + 100.0), cpu_args, "cpu_op"))
        comm[f"step{number}"] = {"p2p": {}, "collective": {
            f"{op}@{NPU_GROUP}": {"Communication Time Info": npu_time_info(op_start, comm_ns, transit_ns, wait_ns),
                                  "Communication Bandwidth Info": npu_bandwidth(traffic, False)},
            "Total Op Info": {"Communication Time Info": npu_time_info(None, comm_ns, transit_ns, wait_ns),
                              "Communication Bandwidth Info": npu_bandwidth(traffic, True)}}}
    meta = [npu_meta("process_name", py_pid, 0, "name", "Python"),
            npu_meta("process_labels", py_pid, 0, "labels", "CPU"),
            npu_meta("process_sort_index", py_pid, 0, "sort_index", 0),
            npu_meta("thread_name", py_pid, py_pid, "name", f"Thread {py_pid}"),
            npu_meta("thread_sort_index", py_pid, py_pid, "sort_index", py_pid),
            npu_meta("process_name", NPU_HW_PID, 0, "name", "Ascend Hardware"),
            npu_meta("thread_name", NPU_HW_PID, NPU_STREAM, "name", f"Stream {NPU_STREAM}"),
            npu_meta("thread_sort_index", NPU_HW_PID, NPU_STREAM, "sort_index", NPU_STREAM),
            npu_meta("process_labels", NPU_HW_PID, 0, "labels", "NPU"),
            npu_meta("process_sort_index", NPU_HW_PID, 0, "sort_index", 13),
            npu_meta("process_name", NPU_HCCL_PID, 0, "name", "HCCL"),
            npu_meta("thread_name", NPU_HCCL_PID, 0, "name", "Group 0 Communication"),
            npu_meta("thread_sort_index", NPU_HCCL_PID, 0, "sort_index", 0),
            npu_meta("thread_name", NPU_HCCL_PID, 1, "name", "Plane 0"),
            npu_meta("thread_sort_index", NPU_HCCL_PID, 1, "sort_index", 1),
            npu_meta("process_labels", NPU_HCCL_PID, 0, "labels", "NPU"),
            npu_meta("process_sort_index", NPU_HCCL_PID, 0, "sort_index", 15),
            npu_meta("process_name", NPU_CANN_PID, 0, "name", "CANN"),
            npu_meta("thread_name", NPU_CANN_PID, py_pid, "name", f"Thread {py_pid}"),
            npu_meta("thread_sort_index", NPU_CANN_PID, py_pid, "sort_index", py_pid),
            npu_meta("process_labels", NPU_CANN_PID, 0, "labels", "CPU"),
            npu_meta("process_sort_index", NPU_CANN_PID, 0, "sort_index", 7),
            npu_meta("process_name", NPU_OVERLAP_PID, 0, "name", "Overlap Analysis")]
    meta += [npu_meta("thread_name", NPU_OVERLAP_PID, tid, "name", name) for tid, name in
             enumerate(("Computing", "Communication", "Communication(Not Overlapped)", "Free"))]
    meta += [npu_meta("process_labels", NPU_OVERLAP_PID, 0, "labels", "NPU"),
             npu_meta("process_sort_index", NPU_OVERLAP_PID, 0, "sort_index", 23)]
    # As torch_npu orders the file: the Python events with their metadata first, then each NPU-side process.
    events = py + meta + cann + hw + hccl + overlap
    step_lines = [STEP_HEADER]
    for free, stage, computing, comm_ns, preparing, number in step_rows:
        step_lines.append(",".join([str(number), us(computing), us(comm_ns), "0", us(comm_ns), us(free), us(stage),
                                    "0", us(comm_ns), us(preparing)]))
    end_ns = at(steps[-1][2] + 1000.0)
    info = {"config": {"common_config": {"activities": ["ProfilerActivity.CPU", "ProfilerActivity.NPU"],
                                         "schedule": {"wait": 0, "active": len(steps), "warmup": 1, "repeat": 1,
                                                      "skip_first": 0},
                                         "record_shapes": True, "profile_memory": False, "with_stack": False,
                                         "with_flops": False, "with_modules": False},
                       "experimental_config": {"_profiler_level": "Level1", "_aic_metrics": "ACL_AICORE_NONE",
                                               "_l2_cache": False, "_msprof_tx": False, "_data_simplification": True,
                                               "record_op_args": False, "_export_type": "text", "_op_attr": False,
                                               "_gc_detect_threshold": None}},
            "start_info": {"syscnt_enable": True, "freq": 100, "start_cnt": 17597300840689 + 1000 * rank,
                           "start_monotonic": 175754613953420 + 1000 * rank},
            "end_info": {"collectionTimeEnd": end_ns, "MonotonicTimeEnd": 175754613953420 + 1000 * rank +
                         (end_ns - at(steps[0][0]))},
            "rank_id": rank}
    out = f"rank{rank}_ascend_pt/ASCEND_PROFILER_OUTPUT/"
    return {f"rank{rank}_ascend_pt/profiler_info_{rank}.json": json.dumps(info, indent=4),
            out + "trace_view.json": json.dumps(events, separators=(",", ":")),
            out + "kernel_details.csv": "\n".join([KERNEL_HEADER] + kernel_rows) + "\n",
            out + "step_trace_time.csv": "\n".join(step_lines) + "\n",
            out + "communication.json": json.dumps(comm, separators=(",", ":"))}, skew_ns


def main():
    parser = generator_arguments(__doc__, ranks=8, steps=4, layers=40, straggler=3, late_us=2000.0, skew_us=5000.0,
                                 seed=1)
    parser.add_argument("--layout", choices=("kineto", "torch_npu"), default="kineto",
                        help="kineto: rank{r}.pt.trace.json per rank; torch_npu: rank{r}_ascend_pt/ directories")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    steps = plan(args)
    offsets = {}
    traffic = npu_traffic(args.ranks)
    for rank in range(args.ranks):
        if args.layout == "torch_npu":
            files, skew_ns = npu_rank(args, rank, steps, traffic)
            os.makedirs(os.path.join(args.out, f"rank{rank}_ascend_pt", "ASCEND_PROFILER_OUTPUT"), exist_ok=True)
            for name, text in files.items():
                with open(os.path.join(args.out, name), "w") as f:
                    f.write(text)
        else:
            doc, skew_ns = rank_trace(args, rank, steps)
            with open(os.path.join(args.out, f"rank{rank}.pt.trace.json"), "w") as f:
                json.dump(doc, f, separators=(",", ":"))
        offsets[rank] = skew_ns
    waits = [sum(max(arrive) - arrive[r] for _, arrive, _ in steps) / len(steps) for r in range(args.ranks)]
    print(json.dumps({"ranks": args.ranks, "straggler": args.straggler if args.late_us > 0 else None,
                      "clock_offsets_us": {r: (offsets[r] - offsets[0]) / 1000 for r in offsets},
                      "wait_us_per_step": waits, "layout": args.layout}))


if __name__ == "__main__":
    main()
