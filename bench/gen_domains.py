#!/usr/bin/env python3
"""Write a deterministic Kineto (PyTorch profiler, CUDA + NCCL) run laid out TP x DP x PP (2 x 2 x 2 = 8
ranks by default) as Megatron places it (tensor parallel innermost, then data, then pipeline: rank =
4 pp + 2 dp + tp), or with --order pp-dp-tp tensor parallel outermost (its groups then span nodes of 8),
one trace file per rank, whose every process group's role, time and bandwidth are known by construction.

Process groups, named as torch names them (one counter over the job, the same order on every rank); by
default:
    tp  [0,1] [2,3] [4,5] [6,7]   names 1-4    all-reduce after each layer
    dp  [0,2] [1,3] [4,6] [5,7]   names 5-8    one gradient all-reduce a step
    pp  [0,4] [1,5] [2,6] [3,7]   names 9-12   one send (even stages) / receive (odd stages) a step
Their descriptions (--names): megatron (TENSOR_MODEL_PARALLEL_GROUP, DATA_PARALLEL_GROUP,
PIPELINE_MODEL_PARALLEL_GROUP), torchtitan (DeviceMesh's mesh_tp, mesh_dp_shard, mesh_pp) or none
("undefined", as torch writes a group created without one: the roles must then be inferred).

Each step of each rank, from its start t (µs):
    LAYERS x [compute kernel COMPUTE_US on stream 7, then the tp all-reduce TP_US on stream 20]
    the dp all-reduce DP_US on stream 21, from the start of the last layer's compute: half of it
        (COMPUTE_US of DP_US) runs under compute
    the pp send / receive PP_US on stream 22, once the dp all-reduce is done
Every rank runs the same timeline on the same clock, so no collective waits for a peer. Each kernel is
launched by cudaLaunchKernel (ac2g flow) inside ProfilerStep#n; the NCCL kernels carry the collective
arguments Kineto copies onto them (Collective name, message sizes, dtype, Process Group Name /
Description / Ranks). The truth is printed as JSON on stdout: per group (by name) its role, members,
count, time (µs), bytes, algbw and busbw (GB/s) and exposed share, as `comm --json` sums them over the
group's ranks.

    python3 bench/gen_domains.py --out DIR [--steps 3] [--layers 4] [--names megatron|torchtitan|none]
                                 [--tp 2] [--dp 2] [--pp 2] [--order tp-dp-pp|pp-dp-tp]
"""
import argparse
import json
import os

from trace_events import x, flow, hopper_properties

BASE_NS = 1735689600000000000
T0_US = 1000000.0
PID = 3000
STREAM, TP_STREAM, DP_STREAM, PP_STREAM = 7, 20, 21, 22
KERNEL = "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>(int, float*)"
ALLREDUCE = "ncclDevKernel_AllReduce_RING_LL_Sum_float(ncclDevKernelArgsStorage<4096ul>)"
SENDRECV = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"
COMPUTE_US, TP_US, DP_US, PP_US = 100.0, 50.0, 200.0, 30.0
TP_BYTES, DP_BYTES, PP_BYTES = 4 * 2**20, 16 * 2**20, 2 * 2**20
STEP_GAP_US = 20.0
DESCS = {
    "megatron": {"tp": "TENSOR_MODEL_PARALLEL_GROUP", "dp": "DATA_PARALLEL_GROUP",
                 "pp": "PIPELINE_MODEL_PARALLEL_GROUP"},
    "torchtitan": {"tp": "mesh_tp", "dp": "mesh_dp_shard", "pp": "mesh_pp"},
    "none": {"tp": "undefined", "dp": "undefined", "pp": "undefined"},
}


class Layout:
    """Ranks on a tp x dp x pp grid, the first dimension of `order` innermost (stride 1)."""

    def __init__(self, args):
        self.size = {"tp": args.tp, "dp": args.dp, "pp": args.pp}
        self.order = args.order.split("-")
        self.world = args.tp * args.dp * args.pp

    def rank(self, coord):
        rank, stride = 0, 1
        for dim in self.order:
            rank += coord[dim] * stride
            stride *= self.size[dim]
        return rank

    def coord(self, rank):
        out = {}
        for dim in self.order:
            out[dim] = rank % self.size[dim]
            rank //= self.size[dim]
        return out

    def groups(self):
        """(role, name, members) of every group of the job, in torch's creation order (tp, dp, pp)."""
        out = []
        for role in ("tp", "dp", "pp"):
            seen = set()
            for r in range(self.world):
                c = self.coord(r)
                members = sorted(self.rank({**c, role: i}) for i in range(self.size[role]))
                if tuple(members) not in seen:
                    seen.add(tuple(members))
                    out.append((role, members))
        return [(role, str(i + 1), members) for i, (role, members) in enumerate(out)]


def step_us(layers):
    return layers * (COMPUTE_US + TP_US) + (DP_US - COMPUTE_US - TP_US) + PP_US + STEP_GAP_US


class RankWriter:
    def __init__(self, rank, descs, layout):
        self.rank, self.descs, self.layout = rank, descs, layout
        self.events, self.corr = [], rank * 10_000_000
        self.mine = {role: (name, members) for role, name, members in layout.groups() if rank in members}

    def launch(self, name, stream, ts, dur, **args):
        self.corr += 1
        self.events.append(x("cuda_runtime", "cudaLaunchKernel", PID, PID, ts - 6.0, 4.0, correlation=self.corr))
        self.events.append(flow("s", self.corr, PID, PID, ts - 6.0))
        self.events.append(x("kernel", name, 0, stream, ts, dur, device=0, stream=stream, correlation=self.corr,
                             grid=[512, 1, 1], block=[128, 1, 1], **args))
        self.events.append(flow("f", self.corr, 0, stream, ts))

    def collective(self, role, kernel, stream, ts, dur, what, nbytes):
        name, members = self.mine[role]
        nelems = nbytes // 4
        self.events.append(x("cpu_op", "record_param_comms", PID, PID, ts - 8.0, 1.0))
        self.launch(kernel, stream, ts, dur, **{
            "Collective name": what, "In msg nelems": nelems, "Out msg nelems": nelems, "Group size": len(members),
            "dtype": "Float", "Process Group Name": name, "Process Group Description": self.descs[role],
            "Process Group Ranks": json.dumps(members)})

    def step(self, number, start, layers):
        t = start
        for layer in range(layers):
            self.launch(KERNEL, STREAM, t, COMPUTE_US)
            if layer == layers - 1:
                self.collective("dp", ALLREDUCE, DP_STREAM, t, DP_US, "allreduce", DP_BYTES)
            self.collective("tp", ALLREDUCE, TP_STREAM, t + COMPUTE_US, TP_US, "allreduce", TP_BYTES)
            t += COMPUTE_US + TP_US
        pp_start = t - COMPUTE_US - TP_US + DP_US
        stage = self.layout.coord(self.rank)["pp"]
        self.collective("pp", SENDRECV, PP_STREAM, pp_start, PP_US, "send" if stage % 2 == 0 else "recv", PP_BYTES)
        end = pp_start + PP_US
        self.events.append(x("user_annotation", f"ProfilerStep#{number}", PID, PID, start - 10.0, end - start + 15.0))

    def document(self):
        return {"schemaVersion": 1,
                "distributedInfo": {"backend": "nccl", "rank": self.rank, "world_size": self.layout.world,
                                    "pg_config": [{"pg_name": name, "pg_desc": self.descs[role], "ranks": members,
                                                   "pg_size": len(members)}
                                                  for role, name, members in self.layout.groups()]},
                "deviceProperties": hopper_properties("NVIDIA H100 80GB HBM3"),
                "traceEvents": sorted(self.events, key=lambda e: (e["ts"], e["ph"])),
                "displayTimeUnit": "ms", "baseTimeNanoseconds": BASE_NS}


def truth(args, layout):
    per_op = {"tp": (TP_US, TP_BYTES, 1.0, args.layers), "dp": (DP_US, DP_BYTES, (DP_US - COMPUTE_US) / DP_US, 1),
              "pp": (PP_US, PP_BYTES, 1.0, 1)}
    out = {"names": args.names, "steps": args.steps, "step_us": step_us(args.layers), "groups": {}}
    for role, name, members in layout.groups():
        dur, nbytes, exposed, per_step = per_op[role]
        count = len(members) * per_step * args.steps
        algbw = nbytes / (dur * 1000.0)  # B/ns = GB/s
        n = len(members)
        factor = 1.0 if role == "pp" else 2.0 * (n - 1) / n  # nccl-tests: all-reduce 2(n-1)/n, p2p 1
        out["groups"][name] = {"role": role, "members": members, "count": count, "time_us": count * dur,
                               "bytes": count * nbytes, "algbw_gbps": algbw, "busbw_gbps": algbw * factor,
                               "exposed_share": exposed}
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--names", choices=sorted(DESCS), default="megatron")
    parser.add_argument("--tp", type=int, default=2)
    parser.add_argument("--dp", type=int, default=2)
    parser.add_argument("--pp", type=int, default=2)
    parser.add_argument("--order", choices=["tp-dp-pp", "pp-dp-tp"], default="tp-dp-pp",
                        help="dimensions innermost first: Megatron's tp-dp-pp, or tp outermost (across nodes)")
    args = parser.parse_args()
    layout = Layout(args)
    os.makedirs(args.out, exist_ok=True)
    for rank in range(layout.world):
        writer = RankWriter(rank, DESCS[args.names], layout)
        for number in range(args.steps):
            writer.step(number + 1, T0_US + number * step_us(args.layers), args.layers)
        with open(os.path.join(args.out, f"rank{rank}.pt.trace.json"), "w") as f:
            json.dump(writer.document(), f)
    print(json.dumps(truth(args, layout), indent=1))


if __name__ == "__main__":
    main()
