"""Bits per byte: the NLL in nats / (ln 2 * the UTF-8 bytes of the targets), special tokens excluded from
both sums. Bytes do not depend on the tokenizer, so bpb compares runs with different vocabularies.

The split is cut into the consecutive seq_len windows training reads, every token after the first a
target once. A capped evaluation keeps windows spread evenly over the split (a corpus in a meaningful
order is not measured on its beginning only), or its first ones (`windows="prefix"`: the chapter's
"first 2M tokens"). `context`: window (each window starts fresh, as in training and every table) or
full: every target gets its true history; the MLP is fed block_size-1 tokens before each window, the
GPT slides windows of seq_len by seq_len/2, scoring each one's last half.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from lrngpt.core import log as logging
from lrngpt.data.prepared import check_run_data, prepare
from lrngpt.data.sampler import BatchSampler
from lrngpt.device.distributed import resolve_device
from lrngpt.errors import UserError, option
from lrngpt.runconfig.schema import EVAL_WINDOWS, TrainConfig
from lrngpt.store.rundir import RunDir


def window_starts(n_tokens: int, seq_len: int) -> list[tuple[int, int]]:
    """(start, length) of consecutive windows covering targets 1..n_tokens-1."""
    return [(s, min(seq_len, n_tokens - 1 - s)) for s in range(0, n_tokens - 1, seq_len)]


CONTEXTS = ("window", "full")


def context_plan(model: nn.Module, seq_len: int, context: str = "window") -> tuple[int, int]:
    """(targets scored per window, tokens of history fed before each window) for `context`."""
    if context not in CONTEXTS:
        raise ValueError(f"context must be one of {', '.join(CONTEXTS)} (got {context!r})")
    if context == "window":
        return seq_len, 0
    cfg = getattr(model, "config", None)
    block_size = getattr(cfg, "block_size", None)
    if block_size is not None:  # the MLP: its context is the block_size tokens before a target
        return seq_len, block_size - 1
    length = min(seq_len, getattr(cfg, "context_length", seq_len))  # the GPT: overlapping windows
    stride = max(1, length // 2)
    return stride, length - stride


def capped_windows(n_tokens: int, seq_len: int, max_tokens: int | None, how: str = "spread") -> list[tuple[int, int]]:
    """The windows covering about max_tokens targets (None: all): spread evenly over the split, or
    the first ones (prefix), the last cut to fit."""
    if how not in EVAL_WINDOWS:
        raise ValueError(f"windows must be one of {', '.join(EVAL_WINDOWS)} (got {how!r})")
    if how == "prefix":
        return window_starts(min(n_tokens, max_tokens + 1) if max_tokens is not None else n_tokens, seq_len)
    windows = window_starts(n_tokens, seq_len)
    keep = 0 if max_tokens is None else max(1, math.ceil(max(1, max_tokens - 1) / seq_len))
    if max_tokens is None or max_tokens >= n_tokens - 1 or keep >= len(windows):
        return windows
    picks = np.unique(np.linspace(0, len(windows) - 1, keep).round().astype(int))
    return [windows[i] for i in picks]


@torch.inference_mode()
def evaluate_bpb(model: nn.Module, tokens: np.ndarray, token_bytes: np.ndarray, seq_len: int,
                 batch_size: int = 64, max_tokens: int | None = None, device: str = "cpu",
                 autocast_dtype: torch.dtype | None = None, context: str = "window",
                 progress: bool | None = False, desc: str = "eval", mark=None,
                 windows: str = "spread") -> dict:
    """Bits per byte and loss per token of `model` on `tokens` (about max_tokens of them: capped_windows).
    `mark`: a bool per position of `tokens`, or a function from positions to bools; the result then
    also holds the bpb of the marked and of the unmarked targets (`marked`, `unmarked`)."""
    score_len, history = context_plan(model, seq_len, context)
    was_training = model.training
    model.eval()
    tb = torch.as_tensor(np.asarray(token_bytes), dtype=torch.int64, device=device)
    names = ("all",) if mark is None else ("all", "marked", "unmarked")
    sums = {name: [0.0, 0, 0] for name in names}  # nll, bytes, targets (marked or not: a part of all)
    picked = capped_windows(len(tokens), score_len, max_tokens, windows)
    logging.debug(f"{desc}: {len(picked):,} windows of {score_len} scored tokens ({windows}, context {context}, "
                  f"{history} of history) from {len(tokens):,} tokens, batch {batch_size}, on {device}")
    bar = logging.progress(total=len(picked), desc=desc, unit="window", enabled=progress)
    for i in range(0, len(picked), batch_size):
        group = picked[i : i + batch_size]
        by_shape: dict[tuple[int, int], list[int]] = {}
        for s, length in group:  # only the last window can be shorter, only the first has less history
            by_shape.setdefault((length, min(history, s)), []).append(s)
        for (length, fed), starts in by_shape.items():
            idx = np.asarray(starts)[:, None] - fed + np.arange(fed + length + 1)
            w = torch.from_numpy(np.asarray(tokens[idx], dtype=np.int64)).to(device)
            x, y = w[:, :-1], w[:, 1 + fed :]
            with torch.autocast(device_type=torch.device(device).type, dtype=autocast_dtype,
                                enabled=autocast_dtype is not None):
                logits, _ = model(x)
            logits = logits[:, fed:]  # the history's own targets are another window's
            nll = F.cross_entropy(logits.float().flatten(0, 1), y.flatten(), reduction="none")
            weight = tb[y.flatten()]
            counted = weight > 0  # special tokens have 0 bytes: excluded from both sums
            masks = {"all": counted}
            if mark is not None:
                pos = idx[:, 1 + fed :].reshape(-1)
                marked = torch.as_tensor(np.asarray(mark(pos) if callable(mark) else mark[pos], dtype=bool),
                                         device=device)
                masks |= {"marked": counted & marked, "unmarked": counted & ~marked}
            for name, m in masks.items():
                sums[name][0] += nll[m].double().sum().item()
                sums[name][1] += int(weight[m].sum())
                sums[name][2] += int(m.sum())
        bar.update(len(group))
    bar.close()
    model.train(was_training)
    nll_total, n_bytes, n_targets = sums.pop("all")
    result: dict = {"bpb": _bpb(nll_total, n_bytes), "loss": nll_total / n_targets if n_targets else float("nan"),
                    "tokens": n_targets, "bytes": n_bytes}
    return result | {name: {"bpb": _bpb(nll_part, b), "tokens": t, "bytes": b} for name, (nll_part, b, t) in sums.items()}


def _bpb(nll: float, n_bytes: float) -> float:
    return nll / (math.log(2) * n_bytes) if n_bytes else float("nan")


def train_bpb_by_reads(model: nn.Module, tokens: np.ndarray, token_bytes: np.ndarray, tc: TrainConfig,
                       steps: int, max_tokens: int | None, device: str = "cpu",
                       autocast_dtype: torch.dtype | None = None, context: str = "window",
                       progress: bool | None = False, desc: str = "eval train") -> tuple[dict, dict]:
    """`model`'s train bpb and its split by reads after `steps` steps of the run `tc` configures: the bpb
    and targets of those read and never read (the run's batches replayed from its seed) and the share
    of the split's targets read at least once and twice."""
    seq_len = tc.seq_len
    assert seq_len is not None  # resolved when the RunConfig was built
    counter = BatchSampler(tokens, tc.batch_size, seq_len, tc.seed).read_counter(steps)
    trn = evaluate_bpb(model, tokens, token_bytes, seq_len, batch_size=tc.batch_size, max_tokens=max_tokens,
                       device=device, autocast_dtype=autocast_dtype, context=context, progress=progress,
                       desc=desc, mark=lambda pos: counter(pos) > 0, windows=tc.eval_windows)
    once, twice = BatchSampler(tokens, tc.batch_size, seq_len, tc.seed).read_shares(steps)
    return trn, {"train_bpb_read": trn["marked"]["bpb"], "train_bpb_unread": trn["unmarked"]["bpb"],
                 "train_tokens_read": trn["marked"]["tokens"], "train_tokens_unread": trn["unmarked"]["tokens"],
                 "read_share": once, "read_twice_share": twice}


def evaluate_run(run_dir, checkpoint: str = "last", split: str | None = None, max_tokens: int | None = None,
                 train_tokens: int | None = None, corpus: str | None = None, device: str = "auto",
                 log=None, context: str = "window", by_reads: bool = False) -> dict:
    """A run's val bpb (full split, or about max_tokens of it), train bpb and their gap. `by_reads` splits
    the train bpb into targets training read and never read: memorising shows between the two, a
    different validation text between the never-read targets and val."""
    if by_reads and corpus:
        raise UserError(f"{option('by_reads', True)} needs the run's own training text; drop {option('corpus')}")
    log = log or logging.info
    device = resolve_device(device)
    directory = RunDir(run_dir)
    run = directory.load(checkpoint, device)
    if by_reads and run.checkpoint.get("data_key") is None:
        # an import: no batches of ours to replay, so which targets were read cannot be told
        raise UserError(f"{option('by_reads', True)} replays the run's training batches, but {run_dir} has no training record "
                        f"(it was not trained by lrn: {run.checkpoint.get('source') or 'an import'}); it cannot "
                        f"tell read from unread targets here: leave out {option('by_reads', True)}")
    summary = directory.summary() if checkpoint != "init" else None  # read (and checked) before any work
    cfg = run.config
    # another corpus: a new DataConfig (built and checked as any other), the run's own stays as loaded
    data_cfg = dataclasses.replace(cfg.data, corpus=corpus) if corpus is not None else cfg.data  # "" refused
    own = run.checkpoint.get("data_key") is not None and corpus is None
    if own:
        check_run_data(run.checkpoint["data_key"], data_cfg, str(run_dir),
                       f"restore them to score the run on its own splits, or give --corpus {data_cfg.corpus} to "
                       "score it on the text as it is now, encoded with the run's tokenizer")
    data = prepare(data_cfg, log=log) if own else prepare(data_cfg, log=log, tokenizer=run.tokenizer)
    if data.tokenizer.hash != run.tokenizer.hash:
        raise UserError(f"the prepared data for {data_cfg.corpus} uses another tokenizer than this run; "
                        f"pass {option('corpus')} to re-encode it with the run's tokenizer")
    token_bytes = run.tokenizer.token_bytes_for(cfg.data.vocab_size)
    tc = cfg.train
    seq_len = tc.seq_len
    assert seq_len is not None  # resolved when the RunConfig was built

    def ev(name: str, n: int | None) -> dict:
        return evaluate_bpb(run.model, data.tokens(name), token_bytes, seq_len, batch_size=tc.batch_size,
                            max_tokens=n, device=device, context=context, progress=None, desc=f"eval {name}",
                            windows=tc.eval_windows)

    result: dict = {"step": run.step, "checkpoint": checkpoint, "corpus": data_cfg.corpus, "context": context}
    if split in (None, "val"):
        v = ev("val", max_tokens)
        result.update(val_bpb=v["bpb"], val_loss=v["loss"], val_tokens=v["tokens"], val_bytes=v["bytes"])
    if split in (None, "train") or by_reads:  # the split of the train bpb: on the train split whatever `split` asked
        n = train_tokens or (max_tokens if split == "train" else None) or tc.train_eval_tokens
        t, reads = (train_bpb_by_reads(run.model, data.tokens("train"), token_bytes, tc, run.step, n, device=device,
                                       context=context, progress=None) if by_reads else (ev("train", n), {}))
        result.update(train_bpb=t["bpb"], train_loss=t["loss"], train_tokens=t["tokens"], **reads)
        if reads and checkpoint == "last" and context == "window":  # what a sweep's rows hold: lrn report reads it
            _record_by_reads(directory, result, log)
    if split is None:
        result["gap"] = result["val_bpb"] - result["train_bpb"]  # the chapter's sign: + means overfitting
    n_train = len(data.tokens("train"))
    result["passes"] = run.step * tc.tokens_per_step / n_train if n_train and not corpus else None  # passes
    if summary:
        result["best_val_bpb"], result["best_step"] = summary.get("best_val_bpb"), summary.get("best_step")
    return result


def _record_by_reads(directory, result: dict, log) -> None:
    """Keep the split in RUN/by_reads.json for `lrn report` (a run trained before summary.json held it)."""
    keys = ("step", "train_bpb", "train_tokens", "train_bpb_read", "train_bpb_unread", "train_tokens_read",
            "train_tokens_unread", "read_share", "read_twice_share")
    try:
        directory.write_by_reads({k: result.get(k) for k in keys})
    except (OSError, UserError) as e:
        log(f"note: the by-reads split was not kept in {directory.path} ({e}); lrn report will not see it")
