"""GPU throughput of the GPT at the seed project's nsmc.json shape: tokens/s and MFU.

MFU = achieved model FLOP/s / the device's dense bf16 peak (looked up by device name;
pass --peak-tflops for another GPU). Model FLOPs per token = 6 x (matmul MACs per token):
per layer (4 + 2r) D^2 for the projections and FFN plus 2 T D for attention (QK^T and AV,
counted in full although half is masked), and D V for the LM head. The nsmc shape is tiny
for a data-centre GPU, so a larger batch is measured beside it. Random token data: this
measures the model and the training step, not the data pipeline.

    python benchmarks/gpu/gpt_nsmc.py             # on a CUDA machine
    python benchmarks/gpu/gpt_nsmc.py --smoke     # a few CPU steps, to test the script
"""

from __future__ import annotations

import lrngpt  # noqa: F401 - first: it sets OMP_WAIT_POLICY before torch loads OpenMP
import argparse
import json
import time

import torch

from lrngpt.runconfig.schema import load_config
from lrngpt.models.gpt import GPT
from lrngpt.training.optimizer import make_optimizer

PEAK_BF16_TFLOPS = {"H200": 989.0, "H100": 989.0, "A100": 312.0, "L40S": 362.0, "A10": 125.0, "4090": 165.0}


def flops_per_token(cfg) -> float:
    d, r, t, v = cfg.n_embd, cfg.ffn_mult, cfg.context_length, cfg.vocab_size
    ffn = 3 * r if cfg.ffn in ("swiglu", "geglu") else 2 * r
    per_layer = (4 + ffn) * d * d + 2 * t * d
    return 6 * (cfg.n_layer * per_layer + d * v)


def measure(model, opt, batch: int, seq: int, vocab: int, steps: int, device: str, dtype, compiled) -> float:
    x = torch.randint(0, vocab, (batch, seq), device=device)
    y = torch.randint(0, vocab, (batch, seq), device=device)
    fwd = compiled or model

    def step():
        with torch.autocast(device_type=torch.device(device).type, dtype=dtype, enabled=dtype is not None):
            _, loss = fwd(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    for _ in range(3):  # warm up (and compile)
        step()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return batch * seq * steps / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true", help="CPU, tiny step count: checks the script runs")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--peak-tflops", type=float)
    args = ap.parse_args()
    device = "cpu" if args.smoke else "cuda"
    steps = 2 if args.smoke else args.steps
    run = load_config("nsmc", ["data.corpus=stories:1MB"])
    cfg, tc = run.model, run.train
    name = "cpu" if args.smoke else torch.cuda.get_device_name()
    peak = args.peak_tflops or next((p for k, p in PEAK_BF16_TFLOPS.items() if k in name), None)
    results = []
    for batch in ([tc.batch_size] if args.smoke else [tc.batch_size, 8 * tc.batch_size]):
        for dtype in ([None] if args.smoke else [None, torch.bfloat16]):
            torch.manual_seed(0)
            model = GPT(cfg).to(device)
            opt = make_optimizer(model, tc)
            compiled = torch.compile(model) if args.compile else None
            tps = measure(model, opt, batch, cfg.context_length, cfg.vocab_size, steps, device, dtype, compiled)
            tflops = tps * flops_per_token(cfg) / 1e12
            row = {"batch": batch, "seq": cfg.context_length, "dtype": "bf16" if dtype else "fp32",
                   "compile": args.compile, "tokens_per_s": round(tps), "model_tflops": round(tflops, 2),
                   "mfu_bf16_peak": round(tflops / peak, 4) if peak else None}
            results.append(row)
            print(json.dumps(row), flush=True)
    print(json.dumps({"device": name, "peak_bf16_tflops": peak, "params": GPT(cfg).param_breakdown(),
                      "rows": results}))


if __name__ == "__main__":
    main()
