"""`lrn eval RUN_DIR`: bits per byte of a run's checkpoint."""

from __future__ import annotations

import sys

from lrngpt.cli.common import add_json, emit, positive_int
from lrngpt.errors import UserError


def register(sub) -> None:
    p = sub.add_parser("eval", help="bits per byte of a trained run")
    p.add_argument("run_dir")
    p.add_argument("--split", choices=["val", "train"], default=None,
                   help="only this split (default: the full val split and the train prefix)")
    p.add_argument("--max-tokens", type=positive_int, help="evaluate about N tokens, in windows spread evenly over the split")
    p.add_argument("--train-tokens", type=positive_int, help="train-text tokens, spread over the split (default: train.train_eval_tokens)")
    p.add_argument("--checkpoint", choices=["last", "best", "init"], default="last")
    p.add_argument("--corpus", help="evaluate on another corpus, encoded with the run's tokenizer")
    p.add_argument("--device", default="auto")
    add_json(p)
    p.set_defaults(func=cmd_eval)


def evaluate_run(run_dir, checkpoint="last", split=None, max_tokens=None, train_tokens=None,
                 corpus=None, device="auto", log=None) -> dict:
    """The run's val bpb (full split or first max_tokens), train bpb and their gap."""
    from lrngpt.data import prepare
    from lrngpt.evaluate import evaluate_bpb
    from lrngpt.run import load_run, resolve_device

    log = log or (lambda m: print(m, file=sys.stderr))
    device = resolve_device(device)
    run = load_run(run_dir, checkpoint, device)
    data_cfg = run.config.data
    if corpus:
        data_cfg.corpus = corpus
    own = run.checkpoint.get("data_key") is not None and not corpus
    data = prepare(data_cfg, log=log) if own else prepare(data_cfg, log=log, tokenizer=run.tokenizer)
    if data.tokenizer.hash != run.tokenizer.hash:
        raise UserError(f"the prepared data for {data_cfg.corpus} uses another tokenizer than this run; "
                        "the cache was rebuilt differently — pass --corpus to re-encode with the run's tokenizer")
    tb = run.tokenizer.token_bytes
    cfg = run.config
    seq_len = cfg.train.seq_len or getattr(cfg.model, "context_length", 256)

    def ev(name, n):
        return evaluate_bpb(run.model, data.tokens(name), tb, seq_len, batch_size=cfg.train.batch_size,
                            max_tokens=n, device=device)

    result: dict = {"step": run.step, "checkpoint": checkpoint}
    if split in (None, "val"):
        v = ev("val", max_tokens)
        result.update(val_bpb=v["bpb"], val_loss=v["loss"], val_tokens=v["tokens"], val_bytes=v["bytes"])
    if split in (None, "train"):
        n = train_tokens or (max_tokens if split == "train" else None) or cfg.train.train_eval_tokens
        t = ev("train", n)
        result.update(train_bpb=t["bpb"], train_loss=t["loss"], train_tokens=t["tokens"])
    if split is None:
        result["gap"] = result["val_bpb"] - result["train_bpb"]  # the chapter's sign: + means overfitting
    return result


def cmd_eval(args) -> None:
    r = evaluate_run(args.run_dir, args.checkpoint, args.split, args.max_tokens, args.train_tokens,
                     args.corpus, args.device)
    parts = [f"step {r['step']}"]
    if "val_bpb" in r:
        parts.append(f"val bpb {r['val_bpb']:.4f} ({r['val_tokens']:,} tokens, {r['val_bytes']:,} bytes)")
    if "train_bpb" in r:
        parts.append(f"train bpb {r['train_bpb']:.4f}")
    if "gap" in r:
        parts.append(f"gap {r['gap']:+.4f}")
    emit(args, r, ", ".join(parts))
