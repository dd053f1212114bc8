#!/usr/bin/env python3
"""Write deterministic torch_npu (Ascend) inputs at scale, for bench/run_npu_bench.sh.

    python3 bench/gen_npu_scale.py rank --out DIR [--mb 1000] [--rows 1000000] [--layers 2000]
        One rank directory, DIR/rank0_ascend_pt/, as torch_npu's text export leaves it:
          profiler_info_0.json
          ASCEND_PROFILER_OUTPUT/trace_view.json      about MB megabytes: steps of LAYERS layers, each an
                                                      aten::gelu on the Python thread, a CANN Node@launch with a
                                                      HostToDevice flow to its AI_CORE task on stream 2, and the
                                                      Overlap Analysis' Computing / Free; one HCCL all-reduce per step
          ASCEND_PROFILER_OUTPUT/kernel_details.csv   ROWS rows on the same step grid (the first ones are the
                                                      timeline's kernels; the grid goes on past it)
          ASCEND_PROFILER_OUTPUT/operator_memory.csv  ROWS rows, one allocation per kernel
          ASCEND_PROFILER_OUTPUT/memory_record.csv    ROWS rows of the allocator's totals
          ASCEND_PROFILER_OUTPUT/operator_details.csv ROWS rows (not modelled: the inventory counts them)
          ASCEND_PROFILER_OUTPUT/step_trace_time.csv  one row per step of the timeline
        Every file is written as it is generated (the 1 GB trace is never held), one process of the timeline
        after the other as torch_npu orders them.

    python3 bench/gen_npu_scale.py ranks --out DIR [--ranks 2000]
        N small rank directories: bench/gen_cluster.py's torch_npu layout with 2 steps of 4 layers a rank
        (trace_view.json, kernel_details.csv, step_trace_time.csv, communication.json, profiler_info), one
        all-reduce a step: rank 3 arrives 2 ms late at each, and the hosts' clocks are 5 ms apart (rank r's moved
        by 5 ms x (r % 3 - 1)), so the clocks differ by 0, 5 and 10 ms from rank 0's. The truth gen_cluster.py
        prints (straggler, clock_offsets_us, wait_us_per_step) is printed with the ranks.

The shapes of the events and rows are those of gen_cluster.py's torch_npu layout (trace_events.npu_x's
fields, absolute epoch µs with ns digits); only the sizes differ.
"""
import argparse
import json
import os
import subprocess
import sys

from trace_events import us
from gen_cluster import (KERNEL_HEADER, STEP_HEADER, NPU_CANN_PID, NPU_HW_PID, NPU_HCCL_PID, NPU_OVERLAP_PID,
                         NPU_STREAM, NPU_KERNEL, NPU_KERNEL_TYPE, NPU_OP, NPU_PY_PID, UINT32_MAX)

BASE_NS = 1735689600000000000
LAYER_NS = 50_000                 # one layer: 45 µs of kernel after 5 µs of launch
ALLREDUCE_NS = 800_000
STEP_GAP_NS = 25_000
MEMORY_HEADER = ("Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),Duration(us),"
                 "Active Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),"
                 "Allocation Total Active(MB),Release Total Allocated(MB),Release Total Reserved(MB),"
                 "Release Total Active(MB),Stream Ptr,Device Type")
RECORD_HEADER = "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Stream Ptr,Device Type"
DETAILS_HEADER = ("Name,Input Shapes,Call Stack,Host Self Duration(us),Host Total Duration(us),Device Self Duration(us),"
                  "Device Total Duration(us),Device Self Duration With AICore(us),Device Total Duration With AICore(us)")
BYTES_PER_LAYER = 1030            # of trace_view.json, measured on the output; sizes the number of steps


class Grid:
    """Where layer i of step s lies, in ns."""

    def __init__(self, layers):
        self.layers = layers
        self.step_ns = layers * LAYER_NS + ALLREDUCE_NS + STEP_GAP_NS

    def step_start(self, step):
        return BASE_NS + step * self.step_ns

    def layer_start(self, step, layer):
        return self.step_start(step) + STEP_GAP_NS + layer * LAYER_NS

    def allreduce(self, step):
        start = self.layer_start(step, self.layers)
        return start, start + ALLREDUCE_NS


def x_event(name, pid, tid, start, end, args, cat=None):
    cat_text = f',"cat":"{cat}"' if cat else ""
    return (f'{{"ph":"X","name":"{name}","pid":{pid},"tid":{tid},"ts":"{us(start)}","dur":{(end - start) / 1000}'
            f'{cat_text},"args":{args}}}')


def flow_event(phase, ident, pid, tid, ts):
    bp = ',"bp":"e"' if phase == "f" else ""
    return (f'{{"name":"HostToDevice{ident}","ph":"{phase}","cat":"HostToDevice","id":"{ident}","pid":{pid},'
            f'"tid":{tid},"ts":"{us(ts)}"{bp}}}')


def meta_event(what, pid, tid, key, value):
    return json.dumps({"name": what, "pid": pid, "tid": tid, "args": {key: value}, "ph": "M"},
                      separators=(",", ":"))


def python_events(grid, step, py):
    cpu = '{"Sequence number":-1,"Fwd thread id":0,"Input Dims":"1024,1024","Input type":"float"}'
    out = [x_event(f"ProfilerStep#{step + 1}", py, py, grid.step_start(step), grid.allreduce(step)[1],
                   '{"Sequence number":-1,"Fwd thread id":0}', "cpu_op")]
    for layer in range(grid.layers):
        t = grid.layer_start(step, layer)
        out.append(x_event("aten::gelu", py, py, t, t + 4_000, cpu, "cpu_op"))
    start, _ = grid.allreduce(step)
    out.append(x_event("HcclAllreduce", py, py, start - 6_000, start - 1_000, cpu, "cpu_op"))
    return out


def connection(grid, step, layer):
    return 1000 + step * (grid.layers + 1) + layer


def cann_events(grid, step, py):
    out = []
    for layer in range(grid.layers + 1):
        c = connection(grid, step, layer)
        launch = grid.layer_start(step, layer) + (500 if layer < grid.layers else -5_000)
        item = NPU_KERNEL if layer < grid.layers else "hcom_allReduce_"
        args = f'{{"Thread Id":{py},"Mode":"launch","level":"node","id":"0","item_id":"{item}","connection_id":{c}}}'
        out.append(x_event("Node@launch", NPU_CANN_PID, py, launch, launch + 3_000, args))
        out.append(flow_event("s", c, NPU_CANN_PID, py, launch))
    return out


def device_events(grid, step):
    out = []
    for layer in range(grid.layers):
        c = connection(grid, step, layer)
        t = grid.layer_start(step, layer)
        args = (f'{{"Model Id":{UINT32_MAX},"Task Type":"AI_CORE","Physic Stream Id":{NPU_STREAM},'
                f'"Task Id":{c + 10000},"Batch Id":0,"Subtask Id":{UINT32_MAX},"connection_id":{c}}}')
        out.append(x_event(NPU_KERNEL, NPU_HW_PID, NPU_STREAM, t + 5_000, t + LAYER_NS, args))
        out.append(flow_event("f", c, NPU_HW_PID, NPU_STREAM, t + 5_000))
    return out


def hccl_events(grid, step):
    start, end = grid.allreduce(step)
    c = connection(grid, step, grid.layers)
    args = f'{{"connection_id":{c},"model id":{UINT32_MAX},"data_type":"FP32","alg_type":"RING","count":6553600}}'
    return [x_event(NPU_OP.format(step), NPU_HCCL_PID, 0, start, end, args), flow_event("f", c, NPU_HCCL_PID, 0, start)]


def overlap_events(grid, step):
    out = []
    for layer in range(grid.layers):
        t = grid.layer_start(step, layer)
        out.append(x_event("Computing", NPU_OVERLAP_PID, 0, t + 5_000, t + LAYER_NS, "{}"))
        if layer:
            out.append(x_event("Free", NPU_OVERLAP_PID, 3, t, t + 5_000, "{}"))
    start, end = grid.allreduce(step)
    out.append(x_event("Communication", NPU_OVERLAP_PID, 1, start, end, "{}"))
    out.append(x_event("Communication(Not Overlapped)", NPU_OVERLAP_PID, 2, start, end, "{}"))
    return out


def metadata(py):
    m = [("process_name", py, 0, "name", "Python"), ("thread_name", py, py, "name", f"Thread {py}"),
         ("process_name", NPU_HW_PID, 0, "name", "Ascend Hardware"),
         ("thread_name", NPU_HW_PID, NPU_STREAM, "name", f"Stream {NPU_STREAM}"),
         ("process_labels", NPU_HW_PID, 0, "labels", "NPU"),
         ("process_name", NPU_HCCL_PID, 0, "name", "HCCL"),
         ("thread_name", NPU_HCCL_PID, 0, "name", "Group 0 Communication"),
         ("process_labels", NPU_HCCL_PID, 0, "labels", "NPU"),
         ("process_name", NPU_CANN_PID, 0, "name", "CANN"),
         ("thread_name", NPU_CANN_PID, py, "name", f"Thread {py}"),
         ("process_name", NPU_OVERLAP_PID, 0, "name", "Overlap Analysis")]
    m += [("thread_name", NPU_OVERLAP_PID, tid, "name", name) for tid, name in
          enumerate(("Computing", "Communication", "Communication(Not Overlapped)", "Free"))]
    return [meta_event(*args) for args in m]


def write_trace(path, grid, steps, py):
    with open(path, "w") as f:
        f.write("[")
        first = True
        sections = [lambda s: python_events(grid, s, py), None, lambda s: cann_events(grid, s, py),
                    lambda s: device_events(grid, s), lambda s: hccl_events(grid, s), lambda s: overlap_events(grid, s)]
        for section in sections:
            for step in range(steps if section else 1):
                events = section(step) if section else metadata(py)
                f.write(("" if first else ",") + ",".join(events))
                first = False
        f.write("]")


def grid_kernel(grid, i):
    """Row i of the kernel grid: (step, layer), the all-reduce being layer == grid.layers."""
    return divmod(i, grid.layers + 1)


def kernel_row(grid, i):
    step, layer = grid_kernel(grid, i)
    if layer < grid.layers:
        t = grid.layer_start(step, layer)
        return (f"{step + 1},{UINT32_MAX},{i % 65536},{NPU_STREAM},{NPU_KERNEL},{NPU_KERNEL_TYPE},static,"
                f"AI_VECTOR_CORE,{us(t + 5_000)}\t,45.000,{'5.000' if layer else '25.000'},48,0,NO,"
                f'"""1024,1024""",FLOAT,ND,"""1024,1024""",FLOAT,ND,N/A')
    start, end = grid.allreduce(step)
    return (f"{step + 1},{UINT32_MAX},N/A,N/A,{NPU_OP.format(step)},hcom_allReduce_,N/A,HCCL,"
            f"{us(start)}\t,{us(end - start)},0.000,0" + ",N/A" * 9)


def operator_memory_row(grid, i):
    step, layer = grid_kernel(grid, i)
    t = grid.layer_start(step, layer)
    allocated = 400.0 + (i % 64) * 0.5
    return (f"aten::gelu,65536.0,{us(t + 1_000)}\t,{us(t + 40_000)}\t,{us(t + 39_000)}\t,39.000\t,38.000\t,"
            f"{allocated},25722.0,{allocated},{allocated - 64},25722.0,{allocated - 64},94509039890976,NPU:0")


def memory_record_row(grid, i):
    step, layer = grid_kernel(grid, i)
    t = grid.layer_start(step, layer)
    return (f"PTA,{us(t + 1_000)}\t,{400.0 + (i % 64) * 0.5},25722.0,{400.0 + (i % 64) * 0.5},"
            "94509039890976,NPU:0")


def write_rows(path, header, rows, row):
    with open(path, "w") as f:
        f.write(header + "\n")
        for first in range(0, rows, 10000):
            f.write("".join(row(i) + "\n" for i in range(first, min(rows, first + 10000))))


def write_step_trace(path, grid, steps):
    lines = [STEP_HEADER]
    for step in range(steps):
        computing = grid.layers * 45_000
        free = (grid.layers - 1) * 5_000
        lines.append(",".join([str(step + 1), us(computing), us(ALLREDUCE_NS), "0", us(ALLREDUCE_NS), us(free),
                               us(grid.step_ns - STEP_GAP_NS), "0", us(ALLREDUCE_NS), us(STEP_GAP_NS + 5_000)]))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def write_rank(args):
    grid = Grid(args.layers)
    steps = max(1, round(args.mb * 1e6 / BYTES_PER_LAYER / (args.layers + 1)))
    rank_dir = os.path.join(args.out, "rank0_ascend_pt")
    out = os.path.join(rank_dir, "ASCEND_PROFILER_OUTPUT")
    os.makedirs(out, exist_ok=True)
    info = {"config": {"common_config": {"activities": ["ProfilerActivity.CPU", "ProfilerActivity.NPU"],
                                         "record_shapes": True, "profile_memory": True},
                       "experimental_config": {"_profiler_level": "Level1", "_export_type": "text"}},
            "rank_id": 0}
    with open(os.path.join(rank_dir, "profiler_info_0.json"), "w") as f:
        json.dump(info, f, indent=4)
    write_trace(os.path.join(out, "trace_view.json"), grid, steps, NPU_PY_PID)
    write_rows(os.path.join(out, "kernel_details.csv"), KERNEL_HEADER, args.rows, lambda i: kernel_row(grid, i))
    write_rows(os.path.join(out, "operator_memory.csv"), MEMORY_HEADER, args.rows,
               lambda i: operator_memory_row(grid, i))
    write_rows(os.path.join(out, "memory_record.csv"), RECORD_HEADER, args.rows, lambda i: memory_record_row(grid, i))
    write_rows(os.path.join(out, "operator_details.csv"), DETAILS_HEADER, args.rows,
               lambda i: f'aten::gelu,"1024,1024",,{4 + i % 7}.000,{4 + i % 7}.000,45.000,45.000,45.000,45.000')
    write_step_trace(os.path.join(out, "step_trace_time.csv"), grid, steps)
    sizes = {name: os.path.getsize(os.path.join(out, name)) for name in sorted(os.listdir(out))}
    print(json.dumps({"rank": rank_dir, "steps": steps, "layers": args.layers, "rows": args.rows, "bytes": sizes}))


def write_ranks(args):
    here = os.path.dirname(os.path.abspath(__file__))
    done = subprocess.run([sys.executable, os.path.join(here, "gen_cluster.py"), "--out", args.out, "--ranks",
                           str(args.ranks), "--steps", "2", "--layers", "4", "--layout", "torch_npu"], check=True,
                          stdout=subprocess.PIPE, text=True)
    truth = json.loads(done.stdout)
    print(json.dumps({"ranks": args.ranks, "out": args.out, "straggler": truth["straggler"],
                      "clock_offsets_us": truth["clock_offsets_us"], "wait_us_per_step": truth["wait_us_per_step"]}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    rank = sub.add_parser("rank", help="one large rank directory")
    rank.add_argument("--out", required=True)
    rank.add_argument("--mb", type=float, default=1000.0, help="trace_view.json's size, about")
    rank.add_argument("--rows", type=int, default=1_000_000, help="rows of each large CSV")
    rank.add_argument("--layers", type=int, default=2000, help="layers per step")
    ranks = sub.add_parser("ranks", help="many small rank directories")
    ranks.add_argument("--out", required=True)
    ranks.add_argument("--ranks", type=int, default=2000)
    args = parser.parse_args()
    write_rank(args) if args.what == "rank" else write_ranks(args)


if __name__ == "__main__":
    main()
