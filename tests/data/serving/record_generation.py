#!/usr/bin/python3
"""Records tests/data/serving/generation_cpu.pt.trace.json.gz: a tiny decoder (embedding, 2 attention +
MLP blocks with a KV cache) generating tokens on the CPU under torch 2.6's profiler, with the markers
tuneprof's serving metrics read (src/analysis/compute/generation_metrics.h): `request#<i>` around a request,
`prefill` around the prompt's forward, `decode_step` around each later token's forward.

The script times the same spans itself with time.perf_counter, just outside each marker, and writes
them to generation_cpu.wall.json: per request TTFT (request start -> end of prefill) and the decode
steps' durations, so that tests/e2e/serving_check.py can compare tuneprof's TTFT and decode tokens/s
against wall-clock numbers (within 2 %). Run from the repository root:
  ../shared/tools/torch26/py tests/data/serving/record_generation.py
"""
import gzip
import json
import os
import shutil
import time

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function

torch.manual_seed(0)
torch.set_num_threads(1)
HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB, D, HEADS, LAYERS, PROMPT, NEW, REQUESTS = 512, 128, 4, 2, 64, 16, 3


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(D, 3 * D)
        self.proj = torch.nn.Linear(D, D)
        self.up = torch.nn.Linear(D, 4 * D)
        self.down = torch.nn.Linear(4 * D, D)
        self.ln1, self.ln2 = torch.nn.LayerNorm(D), torch.nn.LayerNorm(D)

    def forward(self, x, cache):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
        if "k" in cache:
            k, v = torch.cat([cache["k"], k], 2), torch.cat([cache["v"], v], 2)
        cache["k"], cache["v"] = k, v
        y = F.scaled_dot_product_attention(q, k, v, is_causal=t > 1)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, D))
        return x + self.down(F.gelu(self.up(self.ln2(x))))


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, D)
        self.blocks = torch.nn.ModuleList(Block() for _ in range(LAYERS))
        self.head = torch.nn.Linear(D, VOCAB)

    def forward(self, tokens, caches):
        x = self.emb(tokens)
        for block, cache in zip(self.blocks, caches):
            x = block(x, cache)
        return self.head(x[:, -1])


def generate(model, prompt, wall):
    caches = [dict() for _ in model.blocks]
    t0 = time.perf_counter()
    with record_function(f"request#{len(wall)}"):
        with record_function("prefill"):
            nxt = model(prompt, caches).argmax(-1, keepdim=True)
        ttft = time.perf_counter() - t0
        steps = []
        for _ in range(NEW - 1):
            s0 = time.perf_counter()
            with record_function("decode_step"):
                nxt = model(nxt, caches).argmax(-1, keepdim=True)
            steps.append(time.perf_counter() - s0)
    wall.append({"ttft_s": ttft, "decode_step_s": steps})


def main():
    model = Model().eval()
    prompts = torch.randint(0, VOCAB, (REQUESTS, 1, PROMPT))
    with torch.inference_mode():
        generate(model, prompts[0], [])  # warm-up outside the profiler
        wall = []
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for r in range(REQUESTS):
                generate(model, prompts[r], wall)
    out = os.path.join(HERE, "generation_cpu.pt.trace.json")
    prof.export_chrome_trace(out)
    with open(out, "rb") as src, gzip.open(out + ".gz", "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(out)
    ttft = [w["ttft_s"] for w in wall]
    steps = [s for w in wall for s in w["decode_step_s"]]
    summary = {"torch": torch.__version__, "requests": wall, "mean_ttft_ms": 1e3 * sum(ttft) / len(ttft),
               "decode_tokens_per_s": len(steps) / sum(steps)}
    with open(os.path.join(HERE, "generation_cpu.wall.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(f"TTFT {summary['mean_ttft_ms']:.3f} ms (mean of {len(ttft)}), decode {summary['decode_tokens_per_s']:.1f} tokens/s")


if __name__ == "__main__":
    main()
