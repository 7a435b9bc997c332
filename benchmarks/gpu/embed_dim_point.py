"""One full-scale point of the `embed-dim` sweep on a GPU: d = 64, 4,000 steps of batch 64 x 256.

The chapter reports 23 s of training for this point on its GPU and val bpb 0.9326 on its
corpus (550M training tokens of TinyStories). This script runs the same point through the
sweep engine (preset embed-dim, scale full, the mlp-chapter config) and prints the data
preparation time, the training time (training steps only, as the chapter's seconds), the
evaluation time and the final val/train bpb, then one JSON line.

The corpus defaults to stories:30MB, not the preset's TinyStories: downloading 2.2 GB and
tokenizing it takes many minutes, 30MB prepares in well under a minute, and the whole run must
fit in 5 minutes. Its bpb is therefore not the chapter's (a smaller, synthetic corpus, read
about 9 times in 4,000 steps); the seconds are comparable.

    python benchmarks/gpu/embed_dim_point.py [--corpus stories:30MB] [--bf16] [--compile]
    python benchmarks/gpu/embed_dim_point.py --smoke      # a few CPU steps at the tiny scale
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

CHAPTER = {"seconds": 23, "val_bpb": 0.9326}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="stories:30MB", help="corpus spec (default stories:30MB, see above)")
    ap.add_argument("--n-embd", type=int, default=64)
    ap.add_argument("--steps", type=int, help="default: the preset's (4,000 full, 5 with --smoke)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--bf16", action="store_true", help="bfloat16 autocast (train.dtype=bfloat16)")
    ap.add_argument("--compile", action="store_true", help="torch.compile the model (train.compile=true)")
    ap.add_argument("--smoke", action="store_true", help="tiny scale, cpu, 5 steps: checks the script runs")
    ap.add_argument("--out", help="sweep directory (default: a temporary one)")
    ap.add_argument("--json", action="store_true", help="only the JSON line on stdout")
    args = ap.parse_args(argv)

    import torch

    from lrngpt.data import prepare
    from lrngpt.experiments.sweep import resolve_sweep
    from lrngpt.experiments.summary import used_axes_of

    scale = "tiny" if args.smoke else "full"
    device = "cpu" if args.smoke else args.device
    steps = args.steps or (5 if args.smoke else None)
    sets = [f"train.device={device}", f"train.dtype={'bfloat16' if args.bf16 else 'float32'}",
            f"train.compile={'true' if args.compile else 'false'}"]
    if not args.smoke:
        sets.append(f"data.corpus={args.corpus}")
    if steps:
        sets.append(f"train.steps={steps}")
    sweep = resolve_sweep("embed-dim", scale, sets, [f"model.n_embd={args.n_embd}"])
    point = sweep.points[0]
    log = (lambda m: print(m, file=sys.stderr)) if not args.json else (lambda m: None)

    t_all = time.perf_counter()
    from lrngpt.config import from_dict
    from lrngpt.train import train

    cfg = from_dict(point.config)
    t0 = time.perf_counter()
    data = prepare(cfg.data, log=log)
    prep = time.perf_counter() - t0
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="embed-dim-point-"))
    run_dir = out / "runs" / point.name
    t0 = time.perf_counter()
    summary = train(cfg, run_dir, force=True, log=log, progress=False)
    wall = time.perf_counter() - t0
    tc = cfg.train
    result = {
        "scale": scale, "device": summary["device"], "corpus": cfg.data.corpus, "n_embd": args.n_embd,
        "steps": summary["step"], "batch": f"{tc.batch_size}x{tc.seq_len}", "dtype": tc.dtype, "compile": tc.compile,
        "prepare_seconds": round(prep, 2), "train_seconds": summary["seconds"],
        "train_and_eval_seconds": round(wall, 2), "total_seconds": round(time.perf_counter() - t_all, 2),
        "tokens_per_s": round(summary["tokens_seen"] / max(summary["seconds"], 1e-9)),
        "val_bpb": summary["val_bpb"], "train_bpb": summary["train_bpb"], "gap": summary["gap"],
        "used_axes": used_axes_of(run_dir), "params": summary["params"]["total"],
        "train_tokens_in_split": int(len(data.tokens("train"))),
        "gpu": torch.cuda.get_device_name(0) if device.startswith("cuda") else None,
        "chapter": CHAPTER, "run_dir": str(run_dir),
    }
    if not args.json:
        print(f"embed-dim point d={args.n_embd} ({scale} scale) on {result['gpu'] or device}: "
              f"{result['steps']:,} steps of {result['batch']} ({tc.dtype}, compile {tc.compile})")
        print(f"  data preparation {prep:.1f}s ({cfg.data.corpus}, {result['train_tokens_in_split']:,} train tokens)")
        print(f"  training {summary['seconds']:.1f}s ({result['tokens_per_s']:,} tokens/s; chapter: "
              f"{CHAPTER['seconds']}s), with evaluations {wall:.1f}s, total {result['total_seconds']:.1f}s")
        print(f"  val bpb {summary['val_bpb']:.4f}, train bpb {summary['train_bpb']:.4f} "
              f"(gap {summary['gap']:+.4f}), used axes {result['used_axes']}/{args.n_embd} "
              f"(chapter on its corpus: {CHAPTER['val_bpb']})")
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
