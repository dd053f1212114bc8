"""Record small real Kineto traces on one NVIDIA GPU, for tuneprof's CUDA-graph and serving tests.

Each scenario runs in its own process (a failing one leaves the others' traces) and writes
<out>/<scenario>.pt.trace.json.gz plus a line of wall-clock facts to <out>/facts.jsonl.
The facts are the workload's own measurements (graph replays, steps, tokens, wall time per
step taken with CUDA events), so tests can check tuneprof's figures against something other
than the trace itself.

Scenarios, chosen in before/after pairs the way an engineer would try the fix:
  train_eager         MLP training step (forward, backward, SGD), eager: many small kernels
  train_cuda_graph    the same step captured once with torch.cuda.graph and replayed
  decode_eager        greedy decoding of a small decoder with a static KV cache, eager
  decode_cuda_graph   the same decode step captured once and replayed per token
  compile_reduce_overhead  torch.compile(mode="reduce-overhead") inference (CUDA graphs inside)
  ddp_2rank           two processes training one model with DistributedDataParallel, rank 1 made late
                      by a host pause before each backward: one trace per rank in <out>/ddp_2rank/.
                      NCCL first; where NCCL refuses two ranks on one GPU, gloo over the same GPU tensors

    python3 record_gpu_traces.py --out DIR            # all scenarios
    python3 record_gpu_traces.py --out DIR --only train_eager
"""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import time

SCENARIOS = ["train_eager", "train_cuda_graph", "decode_eager", "decode_cuda_graph",
             "compile_reduce_overhead", "ddp_2rank"]
SLOW_RANK_PAUSE_S = 0.02
WAIT, WARMUP, ACTIVE = 1, 2, 4


def profiler():
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule
    return profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                   schedule=schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE),
                   record_shapes=True, profile_memory=True, with_flops=True)


def save(prof, out_dir, name):
    raw = os.path.join(out_dir, name + ".pt.trace.json")
    prof.export_chrome_trace(raw)
    with open(raw, "rb") as src, gzip.open(raw + ".gz", "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(raw)


def profile_steps(step, out_dir, name):
    """Runs `step` once per step of the profiler's schedule and saves the trace as `name`."""
    import torch
    with profiler() as prof:
        for _ in range(WAIT + WARMUP + ACTIVE):
            step()
            prof.step()
    torch.cuda.synchronize()
    save(prof, out_dir, name)


def median(values):
    return sorted(values)[len(values) // 2]


def timed_steps(step, count):
    """Wall time of each step in ms, measured with CUDA events around the step."""
    import torch
    times = []
    for _ in range(count):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return times


# ---------------------------------------------------------------- training


def mlp(torch, width, depth):
    layers = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.GELU(), torch.nn.LayerNorm(width)]
    return torch.nn.Sequential(*layers, torch.nn.Linear(width, 16)).cuda()


def training_setup(torch, model):
    """The loss, the optimizer and the one batch (drawn after the model, from the same seed) that every
    training scenario steps with."""
    return (torch.nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.01),
            torch.randn(64, 1024, device="cuda"), torch.randint(0, 16, (64,), device="cuda"))


def train(out_dir, name, use_graph):
    import torch
    torch.manual_seed(0)
    model = mlp(torch, 1024, 8)
    loss_fn, opt, x, y = training_setup(torch, model)

    def eager_step():
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()

    step = eager_step
    if use_graph:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                eager_step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(graph):
            loss_fn(model(x), y).backward()
            opt.step()
        new_x = torch.randn(64, 1024, device="cuda")

        def graph_step():
            x.copy_(new_x)
            graph.replay()
        step = graph_step
    else:
        for _ in range(3):
            eager_step()
    torch.cuda.synchronize()
    wall = timed_steps(step, 10)
    profile_steps(step, out_dir, name)
    return {"steps_profiled": ACTIVE, "wall_ms_per_step_median": median(wall),
            "graph_replays_per_step": 1 if use_graph else 0, "layers": 8, "width": 1024, "batch": 64}


# ---------------------------------------------------------------- decoding


class Decoder:
    """A small decoder with a preallocated KV cache, so one decode step has static shapes."""

    def __init__(self, torch, vocab=8192, width=512, heads=8, layers=4, batch=4, max_len=256):
        self.torch, self.heads, self.max_len = torch, heads, max_len
        g = torch.Generator(device="cuda").manual_seed(0)
        rnd = lambda *shape: torch.randn(*shape, device="cuda", generator=g, dtype=torch.bfloat16) * 0.02
        self.embed = rnd(vocab, width)
        self.layers = [dict(qkv=rnd(width, 3 * width), out=rnd(width, width), up=rnd(width, 4 * width),
                            down=rnd(4 * width, width)) for _ in range(layers)]
        self.head = rnd(width, vocab)
        head_dim = width // heads
        self.k_cache = [torch.zeros(batch, heads, max_len, head_dim, device="cuda", dtype=torch.bfloat16)
                        for _ in range(layers)]
        self.v_cache = [torch.zeros_like(k) for k in self.k_cache]
        self.token = torch.zeros(batch, 1, dtype=torch.long, device="cuda")
        self.pos = torch.zeros(1, dtype=torch.long, device="cuda")
        self.positions = torch.arange(max_len, device="cuda")

    def step(self):
        """One greedy token: reads token and pos, writes the next token and pos + 1, all on the device."""
        torch, F = self.torch, self.torch.nn.functional
        x = self.embed[self.token]  # [batch, 1, width]
        b, t, w = x.shape
        mask = (self.positions <= self.pos).view(1, 1, 1, self.max_len)
        for layer, k_cache, v_cache in zip(self.layers, self.k_cache, self.v_cache):
            h = F.layer_norm(x, (w,))
            q, k, v = (h @ layer["qkv"]).split(w, dim=-1)
            split = lambda z: z.view(b, t, self.heads, w // self.heads).transpose(1, 2)
            q, k, v = split(q), split(k), split(v)
            k_cache.index_copy_(2, self.pos, k)
            v_cache.index_copy_(2, self.pos, v)
            a = F.scaled_dot_product_attention(q, k_cache, v_cache, attn_mask=mask)
            x = x + a.transpose(1, 2).reshape(b, t, w) @ layer["out"]
            x = x + F.gelu(F.layer_norm(x, (w,)) @ layer["up"]) @ layer["down"]
        logits = F.layer_norm(x, (w,)) @ self.head
        self.token.copy_(logits.argmax(dim=-1))
        self.pos.add_(1)


def decode(out_dir, name, use_graph):
    import torch
    dec = Decoder(torch)
    step = dec.step
    if use_graph:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                dec.step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            dec.step()
        step = graph.replay
    else:
        for _ in range(3):
            dec.step()
    dec.pos.zero_()
    torch.cuda.synchronize()
    wall = timed_steps(step, 10)
    dec.pos.zero_()

    def eight_tokens():  # a profiler step is 8 generated tokens
        for _ in range(8):
            step()
    profile_steps(eight_tokens, out_dir, name)
    return {"steps_profiled": ACTIVE, "tokens_per_step": 8, "batch": 4,
            "wall_ms_per_token_median": median(wall),
            "graph_replays_per_step": 8 if use_graph else 0}


# ---------------------------------------------------------------- torch.compile


def compile_reduce_overhead(out_dir, name):
    import torch
    torch.manual_seed(0)
    model = mlp(torch, 1024, 8).eval()
    compiled = torch.compile(model, mode="reduce-overhead")
    x = torch.randn(64, 1024, device="cuda")
    with torch.no_grad():
        for _ in range(4):  # compile, record the graph, then replay
            compiled(x)
        torch.cuda.synchronize()
        wall = timed_steps(lambda: compiled(x), 10)
        profile_steps(lambda: compiled(x), out_dir, name)
    return {"steps_profiled": ACTIVE, "wall_ms_per_step_median": median(wall)}


# ---------------------------------------------------------------- two ranks


def ddp_rank(rank, world, backend, out_dir, port, result_path):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group(backend, rank=rank, world_size=world)
    torch.cuda.set_device(0)
    torch.manual_seed(0)
    model = DistributedDataParallel(mlp(torch, 1024, 8), device_ids=[0], bucket_cap_mb=4)
    loss_fn, opt, x, y = training_setup(torch, model)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        if rank == 1:
            time.sleep(SLOW_RANK_PAUSE_S)  # the straggler: its all-reduces start late
        loss.backward()
        opt.step()

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    wall = timed_steps(step, 6)
    profile_steps(step, out_dir, "rank%d" % rank)
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        with open(result_path, "w") as f:
            json.dump({"wall_ms_per_step_median": median(wall)}, f)


def ddp(out_dir, name):
    """Runs the two ranks under each backend in turn until one finishes."""
    import torch.multiprocessing as mp
    tried = {}
    for port, backend in ((29511, "nccl"), (29512, "gloo")):
        rank_dir = os.path.join(out_dir, name)
        shutil.rmtree(rank_dir, ignore_errors=True)
        os.makedirs(rank_dir)
        result_path = os.path.join(rank_dir, "result.json")
        try:
            mp.spawn(ddp_rank, args=(2, backend, rank_dir, port, result_path), nprocs=2, join=True)
        except Exception as error:  # noqa: BLE001 - the next backend is the fallback
            tried[backend] = str(error).strip().splitlines()[-1][:200] if str(error).strip() else repr(error)
            continue
        with open(result_path) as f:
            facts = json.load(f)
        os.remove(result_path)
        facts.update(steps_profiled=ACTIVE, backend=backend, ranks=2, slow_rank=1,
                     slow_rank_host_pause_ms_per_step=SLOW_RANK_PAUSE_S * 1000, refused=tried)
        return facts
    raise RuntimeError("no backend ran: %s" % tried)


def run_one(name, out_dir):
    import torch
    started = time.time()
    if name.startswith("train_"):
        facts = train(out_dir, name, name.endswith("graph"))
    elif name.startswith("decode_"):
        facts = decode(out_dir, name, name.endswith("graph"))
    elif name == "ddp_2rank":
        facts = ddp(out_dir, name)
    else:
        facts = compile_reduce_overhead(out_dir, name)
    facts.update(scenario=name, torch=torch.__version__, device=torch.cuda.get_device_name(0),
                 seconds=round(time.time() - started, 1))
    with open(os.path.join(out_dir, "facts.jsonl"), "a") as f:
        f.write(json.dumps(facts) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--only")
    parser.add_argument("--timeout", type=int, default=120)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.only:
        run_one(args.only, args.out)
        return
    for name in SCENARIOS:
        cmd = [sys.executable, os.path.abspath(__file__), "--out", args.out, "--only", name]
        try:
            rc = subprocess.run(cmd, timeout=args.timeout).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        print(f"{name}: {rc}", flush=True)


if __name__ == "__main__":
    main()
