"""`lrn sample RUN_DIR --prompt TEXT`."""

from __future__ import annotations

from lrngpt.cli.common import add_json, emit
from lrngpt.errors import UserError


def register(sub) -> None:
    p = sub.add_parser("sample", help="generate text from a trained run")
    p.add_argument("run_dir")
    p.add_argument("--prompt", required=True)
    p.add_argument("--max-new-tokens", type=int, default=100)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--top-k", type=int, default=None)
    p.add_argument("--top-p", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--num-samples", type=int, default=1, help="samples with seeds seed, seed+1, ...")
    p.add_argument("--no-stop", action="store_true", help="keep going past <|endoftext|>")
    p.add_argument("--no-cache", action="store_true", help="GPT: recompute the window instead of the KV cache")
    p.add_argument("--checkpoint", choices=["last", "best", "init"], default="last")
    p.add_argument("--device", default="cpu")
    add_json(p)
    p.set_defaults(func=cmd_sample)


def sample_texts(run, prompt: str, cfg, num_samples: int = 1, use_cache: bool = True, device: str = "cpu"):
    from dataclasses import replace

    from lrngpt.sample import generate

    if not prompt:
        raise UserError("the prompt is empty; give some text with --prompt")
    ids = run.tokenizer.encode(prompt)
    out = []
    for i in range(num_samples):
        new = generate(run.model, ids, replace(cfg, seed=cfg.seed + i), eot_id=run.tokenizer.eot_id,
                       use_cache=use_cache, device=device)
        text = run.tokenizer.decode([t for t in new if t != run.tokenizer.eot_id])
        out.append({"text": prompt + text, "completion": text, "tokens": len(new), "seed": cfg.seed + i})
    return out


def cmd_sample(args) -> None:
    from lrngpt.run import load_run, resolve_device
    from lrngpt.sample import SamplingConfig

    cfg = SamplingConfig(args.max_new_tokens, args.temperature, args.top_k, args.top_p, args.seed,
                         stop_at_eot=not args.no_stop)
    if args.num_samples < 1:
        raise UserError("--num-samples must be at least 1")
    if not args.prompt:
        raise UserError("the prompt is empty; give some text with --prompt")
    device = resolve_device(args.device)
    run = load_run(args.run_dir, args.checkpoint, device)
    samples = sample_texts(run, args.prompt, cfg, args.num_samples, not args.no_cache, device)
    emit(args, {"samples": samples}, "\n---\n".join(s["text"] for s in samples))
