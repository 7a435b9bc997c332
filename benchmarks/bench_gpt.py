"""Training speed of our GPT at the shapes of the presets cpu and nsmc (the seed project's configs), against
torch's own fp32 matmul and against nanoGPT (a nanoGPT-style model, and the real model.py when given),
all in the same process.

Each training step is what Trainer.train_step does (lr set, forward, loss check, zero_grad,
backward, clip 1.0, AdamW step with lrngpt.training.optimizer.make_optimizer) on random token windows of
the config's batch x context. Achieved GFLOP/s counts 6 x matmul MACs per token (forward 1x,
backward 2x, so 3 x 2 FLOPs per MAC):
  per layer (4 + 2r) D^2   (qkv 3D^2, output projection D^2, FFN 2rD^2; gated FFNs 3rD^2)
  per layer 2 T D          (QK^T and AV, counted as full T x T though the mask is causal,
                            so SDPA's skipped upper triangle is counted as work done)
  once      D V            (the LM head)
Embedding lookups, LayerNorm, softmax, GELU, the loss and AdamW are not counted, so 100%
of matmul is out of reach; the gap is what they (and the python overhead) cost.

Two baselines. A nanoGPT-style GPT written here (nn.Linear c_attn / c_proj,
F.scaled_dot_product_attention(is_causal=True), F.layer_norm, nn.GELU, tied wte/lm_head,
bias=False) with the same D, H, L, r, V, T and dropout, trained with our optimizer; its blocks
follow the config's norm position. And the real one: karpathy/nanoGPT's model.py, given with
--nanogpt PATH or LRN_NANOGPT_MODEL=PATH (imported from that file, not shipped here; skipped with a
line saying so when neither is given), built with its GPTConfig/GPT at the preset's shape and
bias=False (our Linears have no bias; its LayerNorms then have none either), pre-norm (its only
kind; post-norm costs the same), tied as it always is, and trained with its own
configure_optimizers (on a CPU that is torch's default for-loop AdamW). --compile adds ours and
the real nanoGPT under torch.compile, with the first step's seconds (the compilation a run pays).
Every measurement is taken in alternating rounds (ours, baselines, model-shape matmul, 2048^3
matmul, ...) so all see the same machine load; the ratios are per round, their medians and
ranges are printed. Usage:

    python benchmarks/bench_gpt.py [--shape cpu|nsmc|both] [--rounds 5] [--steps N] [--threads N] [--loop-adamw] [--nanogpt PATH] [--compile] [--profile]
"""

from __future__ import annotations

import lrngpt  # noqa: F401 - first: it sets OMP_WAIT_POLICY before torch loads OpenMP
import argparse
import contextlib
import importlib.util
import io
import math
import os
import statistics
import time

import torch
from torch import nn
from torch.nn import functional as F

from lrngpt.runconfig.schema import load_config
from lrngpt.models.gpt import GPT
from lrngpt.training.schedule import lr_at
from lrngpt.training.optimizer import make_optimizer

CONFIGS = {"cpu": "cpu", "nsmc": "nsmc"}  # the seed project's configs, shipped as presets
DEFAULT_STEPS = {"cpu": 20, "nsmc": 2}  # per round: a cpu.json step is ~60x cheaper


# ---- a nanoGPT-style baseline ----------------------------------------------------------------

class NanoAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.n_head, self.n_embd, self.dropout = c.n_head, c.n_embd, c.dropout
        self.c_attn = nn.Linear(c.n_embd, 3 * c.n_embd, bias=False)
        self.c_proj = nn.Linear(c.n_embd, c.n_embd, bias=False)
        self.resid_dropout = nn.Dropout(c.dropout)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class NanoLayerNorm(nn.Module):
    def __init__(self, ndim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim))

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class NanoBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.pre = c.norm_position == "pre"
        self.ln_1, self.attn, self.ln_2 = NanoLayerNorm(c.n_embd), NanoAttention(c), NanoLayerNorm(c.n_embd)
        self.c_fc = nn.Linear(c.n_embd, c.ffn_mult * c.n_embd, bias=False)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(c.ffn_mult * c.n_embd, c.n_embd, bias=False)
        self.dropout = nn.Dropout(c.dropout)

    def mlp(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))

    def forward(self, x):
        if self.pre:
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))
        x = self.ln_1(x + self.attn(x))
        return self.ln_2(x + self.mlp(x))


class NanoGPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte = nn.Embedding(c.vocab_size, c.n_embd)
        self.wpe = nn.Embedding(c.context_length, c.n_embd)
        self.drop = nn.Dropout(c.dropout)
        self.h = nn.ModuleList(NanoBlock(c) for _ in range(c.n_layer))
        self.ln_f = NanoLayerNorm(c.n_embd)
        self.lm_head = nn.Linear(c.n_embd, c.vocab_size, bias=False)
        self.wte.weight = self.lm_head.weight  # nanoGPT ties them
        for name, p in self.named_parameters():
            if p.dim() >= 2:
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * c.n_layer) if name.endswith("c_proj.weight") else 0.02)

    def forward(self, idx, targets):
        pos = torch.arange(0, idx.size(1), dtype=torch.long, device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)


# ---- measuring -------------------------------------------------------------------------------

def macs_per_token(c) -> int:
    """Matmul multiply-accumulates per token of one forward pass (see the module docstring)."""
    ffn = (3 if c.ffn in ("swiglu", "geglu") else 2) * c.ffn_mult
    per_layer = (4 + ffn) * c.n_embd**2 + 2 * c.context_length * c.n_embd
    return c.n_layer * per_layer + c.n_embd * c.vocab_size


def make_step(model, opt, tc, batch: int, seq: int, vocab: int):
    """One Trainer.train_step on random windows (fixed in advance, so data costs nothing)."""
    model.train()
    gen = torch.Generator().manual_seed(0)
    windows = [torch.randint(0, vocab, (batch, seq + 1), generator=gen) for _ in range(4)]
    data = [(w[:, :-1].contiguous(), w[:, 1:].contiguous()) for w in windows]  # as BatchSampler gives them
    state = {"step": 0}

    def step():
        for group in opt.param_groups:
            group["lr"] = lr_at(state["step"], tc)
        x, y = data[state["step"] % len(data)]
        _, loss = model(x, y)
        if not torch.isfinite(loss.detach()):
            raise RuntimeError("non-finite loss")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        state["step"] += 1
        return loss.item()

    return step


def load_nanogpt(path: str | None):
    """karpathy/nanoGPT's model.py imported from `path` (None: not given, so skipped)."""
    if not path:
        return None
    if not os.path.isfile(path):
        raise SystemExit(f"--nanogpt / LRN_NANOGPT_MODEL: no file {path!r}; give the path of nanoGPT's model.py")
    spec = importlib.util.spec_from_file_location("nanogpt_model", path)
    module = importlib.util.module_from_spec(spec)
    with contextlib.redirect_stdout(io.StringIO()):
        spec.loader.exec_module(module)
    if not all(hasattr(module, name) for name in ("GPT", "GPTConfig")):
        raise SystemExit(f"{path} defines no GPT and GPTConfig: is it nanoGPT's model.py?")
    return module


def nanogpt_contestant(module, c, tc):
    """The real nanoGPT at our shape: bias=False (our Linears have none; its LayerNorms then have no
    bias either), tied wte/lm_head as it always is, pre-norm (its only kind), trained with its own
    configure_optimizers (on a CPU: torch's default AdamW, not fused)."""
    conf = module.GPTConfig(block_size=c.context_length, vocab_size=c.vocab_size, n_layer=c.n_layer,
                            n_head=c.n_head, n_embd=c.n_embd, dropout=c.dropout, bias=False)
    with contextlib.redirect_stdout(io.StringIO()):  # it prints its parameter counts
        model = module.GPT(conf)
        opt = model.configure_optimizers(tc.weight_decay, tc.lr, (tc.beta1, tc.beta2), "cpu")
    return model, opt


def threads_note() -> str:
    """Intra-op threads and libgomp's wait policy: with the default (active spinning) two threads
    on a 2-core machine that other jobs keep busy wait on each other for whole scheduler slices;
    OMP_WAIT_POLICY=PASSIVE (set before python starts) or --threads 1 avoids that."""
    return f"{torch.get_num_threads()} threads, OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'unset (active)')}"


def timed(fn, n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n


def contestants(c, tc, args, nanogpt) -> dict:
    """label -> (model, step): ours as Trainer trains it, the nanoGPT-style model, the real nanoGPT
    model.py when given, and with --compile each of them under torch.compile too."""
    B, T = tc.batch_size, tc.seq_len
    built = {}
    torch.manual_seed(tc.seed)
    ours = GPT(c)
    built["ours"] = (ours, make_optimizer(ours, tc))
    torch.manual_seed(tc.seed)
    style = NanoGPT(c)
    built["nanoGPT-style"] = (style, make_optimizer(style, tc))
    if nanogpt is not None:
        torch.manual_seed(tc.seed)
        built["nanoGPT model.py"] = nanogpt_contestant(nanogpt, c, tc)
    if args.loop_adamw:  # what make_optimizer was before it took the fused kernel
        torch.manual_seed(tc.seed)
        loop = GPT(c)
        groups = [{"params": g["params"], "weight_decay": g["weight_decay"]} for g in make_optimizer(loop, tc).param_groups]
        built["ours, for-loop AdamW"] = (loop, torch.optim.AdamW(groups, lr=tc.lr, betas=(tc.beta1, tc.beta2)))
    if args.compile:
        for label in [k for k in built if k in ("ours", "nanoGPT model.py")]:
            model, opt = built[label]
            built[f"{label}, compiled"] = (torch.compile(model), opt)
    return {label: (model, make_step(model, opt, tc, B, T, c.vocab_size)) for label, (model, opt) in built.items()}


def warm_up(models: dict) -> dict:
    """Two steps each (allocator, kernels; under torch.compile the first is the compilation); returns
    the seconds of each model's first step, which for a compiled one is what a run pays once."""
    first = {}
    for label, (_, step) in models.items():
        t0 = time.perf_counter()
        step()
        first[label] = time.perf_counter() - t0
        step()
    return first


def bench_shape(name: str, args, nanogpt) -> dict:
    cfg = load_config(CONFIGS[name], ["train.device=cpu"])
    c, tc = cfg.model, cfg.train
    B, T = tc.batch_size, tc.seq_len
    models = contestants(c, tc, args, nanogpt)
    flops_per_step = 6 * macs_per_token(c) * B * T
    a, b = torch.randn(B * T, c.n_embd), torch.randn(c.n_embd, 4 * c.n_embd)
    sq = torch.randn(2048, 2048)
    first = warm_up(models)
    if args.profile:
        profile_models(name, models, args)
    rows = []
    for _ in range(args.rounds):  # alternating: every measurement of a round sees the same load
        t = {label: timed(step, args.steps) for label, (_, step) in models.items()}
        mm_flops = 2 * a.shape[0] * a.shape[1] * b.shape[1] / timed(lambda: a @ b, 20)
        sq_flops = 2 * 2048**3 / timed(lambda: sq @ sq, 2)
        row = {"mm_gflops": mm_flops / 1e9, "sq_gflops": sq_flops / 1e9}
        for label, seconds in t.items():
            row[f"{label} tok_s"] = B * T / seconds
            row[f"{label} gflops"] = flops_per_step / seconds / 1e9
            row[f"{label} share_mm"] = flops_per_step / seconds / mm_flops
            row[f"{label} share_sq"] = flops_per_step / seconds / sq_flops
            row[f"{label} over_ours"] = t["ours"] / seconds
        rows.append(row)
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    spread = {k: (min(r[k] for r in rows), max(r[k] for r in rows)) for k in rows[0]}
    params = models["ours"][0].param_breakdown()["total"]
    print(f"== {name} shape ({CONFIGS[name]}): V {c.vocab_size}, T {T}, D {c.n_embd}, H {c.n_head}, "
          f"L {c.n_layer}, r {c.ffn_mult}, {c.norm_position}-norm, dropout {c.dropout}, batch {B}x{T}, "
          f"{params:,} params; {threads_note()}; median of {args.rounds} rounds x {args.steps} steps")
    print(f"  matmul {B * T}x{c.n_embd}@{c.n_embd}x{4 * c.n_embd}: {med['mm_gflops']:.1f} GFLOP/s   "
          f"matmul 2048^3: {med['sq_gflops']:.1f} GFLOP/s   "
          f"(model: {6 * macs_per_token(c) / 1e6:.2f} MFLOP/token, causal attention counted full)")
    for label in models:
        compiled = f"; first step (compiling) {first[label]:.1f} s" if label.endswith("compiled") else ""
        print(f"  {label:<30} {med[f'{label} tok_s']:9,.0f} tokens/s {med[f'{label} gflops']:6.1f} GFLOP/s = "
              f"{med[f'{label} share_mm']:4.0%} of model-shape matmul"
              + ("" if label == "ours" else f"; ours / this: {1 / med[f'{label} over_ours']:.2f} (rounds "
                 f"{1 / spread[f'{label} over_ours'][1]:.2f}-{1 / spread[f'{label} over_ours'][0]:.2f})") + compiled)
    if "nanoGPT model.py, compiled" in models:
        both = "ours, compiled over_ours", "nanoGPT model.py, compiled over_ours"
        ratio = statistics.median(r[both[0]] / r[both[1]] for r in rows)
        print(f"  compiled ours / compiled nanoGPT model.py: {ratio:.2f}")
    if nanogpt is None:
        print("  nanoGPT model.py: skipped (give --nanogpt PATH or LRN_NANOGPT_MODEL=PATH, a copy of "
              "karpathy/nanoGPT's model.py, to time the real one side by side)")
    return med


def profile_models(name: str, models: dict, args) -> None:
    from torch.profiler import ProfilerActivity, profile  # lazy: only --profile needs the profiler

    for label, (_, step) in models.items():
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(args.steps):
                step()
        print(f"---- profile {name} {label} ({args.steps} steps)")
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.profile_rows))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", choices=["cpu", "nsmc", "both"], default="both")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, help="timed steps per round and model (default: cpu 20, nsmc 2)")
    ap.add_argument("--threads", type=int, help="torch.set_num_threads (default: torch's, one per core); on a "
                    "machine busy with other jobs, 1 thread can be several times faster than 2")
    ap.add_argument("--loop-adamw", action="store_true",
                    help="also time our model with torch's default (for-loop) AdamW, what make_optimizer used before")
    ap.add_argument("--nanogpt", default=os.environ.get("LRN_NANOGPT_MODEL"), metavar="PATH",
                    help="karpathy/nanoGPT's model.py, timed side by side (default: $LRN_NANOGPT_MODEL; skipped "
                    "when neither is given)")
    ap.add_argument("--compile", action="store_true", help="also time ours and nanoGPT under torch.compile "
                    "(and print the first step, which compiles)")
    ap.add_argument("--profile", action="store_true", help="print a torch.profiler table per model first")
    ap.add_argument("--profile-rows", type=int, default=25)
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    nanogpt = load_nanogpt(args.nanogpt)
    for name in ("cpu", "nsmc") if args.shape == "both" else (args.shape,):
        bench_shape(name, argparse.Namespace(**{**vars(args), "steps": args.steps or DEFAULT_STEPS[name]}), nanogpt)


if __name__ == "__main__":
    main()
