"""Profile a few training steps of a tiny GPT-like model and write a gzipped Kineto trace.

The model is deliberately small (2 decoder layers, d_model 64, 4 heads) and uses
*naive* attention (q/k/v projections, bmm -> masked_fill -> softmax -> bmm) plus a
Linear -> GELU -> Linear MLP, trained with AdamW on random tokens. Naive attention
and the unfused optimizer leave something for tuneprof's analyses to recommend
(e.g. scaled_dot_product_attention, fused/foreach AdamW).

Profiling uses torch.profiler with activities=[CPU], record_shapes, profile_memory
and with_flops, and schedule(wait=1, warmup=1, active=3); prof.step() is called
once per iteration, so the trace holds ProfilerStep#2..#4. with_stack is left off
because it segfaults in the Debian torch 2.6 build we use.

Needs torch >= 2.x with Kineto. In this project run it through the torch 2.6 chroot:

    cd /work/main && /work/shared/tools/torch26/py examples/workload/tiny_train.py \
        --out examples/tiny_train.pt.trace.json.gz
"""
import argparse
import gzip
import math
import os
import shutil

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function, schedule

WAIT, WARMUP, ACTIVE = 1, 1, 3


class NaiveSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        # Separate projections (instead of one fused qkv Linear) on purpose: three
        # small GEMMs are one of the patterns the analyses should flag.
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.v = nn.Linear(d_model, d_model)
        self.proj = nn.Linear(d_model, d_model)

    def _split(self, x):
        b, t, _ = x.shape
        return (x.view(b, t, self.n_heads, self.head_dim)
                 .transpose(1, 2)
                 .reshape(b * self.n_heads, t, self.head_dim))

    def forward(self, x, causal_mask):
        b, t, d = x.shape
        q, k, v = self._split(self.q(x)), self._split(self.k(x)), self._split(self.v(x))
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(causal_mask[:t, :t], float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        out = torch.bmm(probs, v)
        out = out.view(b, self.n_heads, t, self.head_dim).transpose(1, 2).reshape(b, t, d)
        return self.proj(out)


class Block(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = NaiveSelfAttention(d_model, n_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, 4 * d_model)
        self.fc2 = nn.Linear(4 * d_model, d_model)

    def forward(self, x, causal_mask):
        x = x + self.attn(self.ln1(x), causal_mask)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class TinyGPT(nn.Module):
    def __init__(self, vocab, seq_len, d_model, n_heads, n_layers):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(seq_len, d_model)
        self.blocks = nn.ModuleList(Block(d_model, n_heads) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)
        # True above the diagonal = positions a token must not attend to.
        self.register_buffer(
            "causal_mask", torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool), 1))

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
        for blk in self.blocks:
            x = blk(x, self.causal_mask)
        return self.head(self.ln_f(x))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True,
                   help="output path of the gzipped trace (e.g. examples/tiny_train.pt.trace.json.gz)")
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--seq", type=int, default=32)
    p.add_argument("--d-model", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--vocab", type=int, default=256)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(2)

    model = TinyGPT(args.vocab, args.seq, args.d_model, args.heads, args.layers)
    # foreach=False keeps the per-parameter optimizer ops (the unfused baseline).
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=False)
    data = torch.randint(0, args.vocab, (WAIT + WARMUP + ACTIVE, args.batch, args.seq + 1))

    # export_chrome_trace stores its path as "traceName"; exporting next to the
    # final file keeps that name meaningful instead of a temp path.
    json_path = args.out[:-3] if args.out.endswith(".gz") else args.out + ".json"
    out_dir = os.path.dirname(args.out)
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)

    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE),
        record_shapes=True,
        profile_memory=True,
        with_flops=True,
        with_stack=False,  # segfaults in Debian torch 2.6 + Python 3.13
        on_trace_ready=lambda p: p.export_chrome_trace(json_path),
    ) as prof:
        for batch in data:
            inputs, targets = batch[:, :-1], batch[:, 1:]
            with record_function("forward"):
                logits = model(inputs)
                loss = F.cross_entropy(logits.reshape(-1, args.vocab), targets.reshape(-1))
            with record_function("backward"):
                loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=False)
            prof.step()

    # mtime=0 so re-running with the same seed gives a byte-identical .gz header.
    with open(json_path, "rb") as src, open(args.out, "wb") as raw, \
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(json_path)
    print(f"wrote {args.out} ({os.path.getsize(args.out)} bytes), last loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
