"""Under-trained tokens of a run (`lrn embed undertrained`): exact reads per token (the run's batch
sampler replayed, as `lrn eval --by-reads` does), how far each row moved, and which rows stay
under-trained.

The rule, once (UNDER_TRAINED): a token is under-trained when the run read it as input fewer times
than its row has numbers, input reads < d. With plain SGD a row read r times changed only in an
r-dimensional subspace, so with r < d some directions of the row are still its random initial values
(AdamW rescales each coordinate, but the row still got only r signals of its own). Untied, a
never-read row gets no gradient at all; tied, the softmax moves every row, all in much the same
direction: the lecture's "a rare token may be under-trained but is not necessarily untouched", the
shared drift lrngpt.analysis.glitch looks for. `moved` is ||W_i - delta W0_i||, delta the weight
decay's product over the steps: decay alone shrinks a row by exactly that, which is not learning.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

from lrngpt.analysis.glitch import CANDIDATE_SHARE, INDICATORS, MAIN, candidates, indicators, reference_ids
from lrngpt.analysis.vocab import count_ids, run_data, token_text
from lrngpt.core import log as logging
from lrngpt.data.sampler import BatchSampler
from lrngpt.errors import UserError
from lrngpt.interop.gpt2 import (
    gpt_config_from_hf,
    load_hf_tokenizer,
    load_hf_weights,
    read_hf_config,
    state_dict_from_hf,
)
from lrngpt.models.gpt import GPT
from lrngpt.store.rundir import RunDir
from lrngpt.training.schedule import lr_at

UNDER_TRAINED = "input reads < d (the table's width): fewer reads than the row has numbers"
INDICATOR = ("Land & Bartolo (2024): 1 - cosine of the unembedding row, first principal component removed, "
             "to the mean of the reference tokens")


# ---- the pieces ----------------------------------------------------------------------------

def replay_reads(tokens: np.ndarray, batch_size: int, seq_len: int, seed: int, steps: int, rows: int,
                 pad_id: int | None = None, pad_per_window: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(input reads, target reads) of every id 0..rows-1 in `steps` global batches of the seeded sampler."""
    as_target = BatchSampler(tokens, batch_size, seq_len, seed).reads(steps)  # per position
    targets = count_ids(tokens, rows, as_target)
    inputs = count_ids(tokens[:-1], rows, as_target[1:])  # an input as often as the next position is a target
    if pad_id is not None:
        inputs[pad_id] += steps * batch_size * pad_per_window
    return inputs, targets


def decay_factor(train_cfg, steps: int) -> float:
    """What AdamW's weight decay alone leaves of a row after `steps`: the product of (1 - lr_t x wd)."""
    wd = train_cfg.weight_decay
    if not wd:
        return 1.0
    return float(np.prod([1.0 - lr_at(s, train_cfg) * wd for s in range(steps)], dtype=np.float64))


def tables(model) -> tuple[torch.Tensor, torch.Tensor, bool]:
    """(input table V x d, output rows V x h, tied): the token table and the head's weight rows."""
    head = model.head if hasattr(model, "head") else model.lm_head
    tied = bool(getattr(model.config, "tie_embeddings", False))  # the MLP has no tying
    return model.token_embedding.weight.detach().double(), head.weight.detach().double(), tied


# ---- a run, an import, or a Hugging Face directory -------------------------------------------

def _is_hf_dir(p: Path) -> bool:
    """A directory that is no lrn run, whose config.json names a Hugging Face model_type (gpt2, llama, ...)."""
    if not (p.is_dir() and (p / "config.json").is_file()) or RunDir(p).holds_run():
        return False
    try:
        kind = json.loads((p / "config.json").read_text(encoding="utf-8")).get("model_type")
    except (OSError, ValueError, AttributeError):  # unreadable: let the run reader say what is wrong
        return False
    return isinstance(kind, str) and kind not in ("mlp", "gpt")


def _hf_model(p: Path):
    """(GPT model, tokenizer) of a local Hugging Face GPT-2 directory, read as `lrn import-gpt2` reads it."""
    gcfg = gpt_config_from_hf(read_hf_config(p))
    tokenizer, _ = load_hf_tokenizer(p)
    if tokenizer.vocab_size > gcfg.vocab_size:
        raise UserError(f"{p}: the tokenizer has {tokenizer.vocab_size} tokens but config.json's vocab_size is "
                        f"{gcfg.vocab_size}; give the model's own tokenizer")
    model = GPT(gcfg)
    model.load_state_dict(state_dict_from_hf(load_hf_weights(p)[0], gcfg))
    return model, tokenizer


def _tokens(order: np.ndarray, tokenizer, cols: dict[str, np.ndarray]) -> list[dict]:
    """A row per id of `order`: the id, its text and its value in each column (int, float or bool)."""
    return [{"id": int(i), "token": token_text(tokenizer, int(i)), **{k: v[i].item() for k, v in cols.items()}}
            for i in order]


def undertrained_tokens(path, checkpoint: str = "last", log=None) -> dict:
    """Every token of a run (or a local Hugging Face GPT-2 directory) with its reads, row movement and
    norm, the under-trained ones first; with no training record, Land & Bartolo's candidates instead."""

    log = log or logging.info
    p = Path(path)
    if _is_hf_dir(p):
        model, tokenizer = _hf_model(p)
        run, source, step, cfg = None, "huggingface", 0, None
    else:
        run = RunDir(p).load(checkpoint)  # a directory that is no run is named by the checkpoint it lacks
        model, tokenizer, step, cfg = run.model, run.tokenizer, run.step, run.config
        source = "trained" if run.checkpoint.get("data_key") is not None else "imported"
    inp, out, tied = tables(model)
    rows, width = inp.shape
    ref = reference_ids(tokenizer, rows)
    every = indicators(out, ref, None if tied else inp)
    indicator = every[MAIN]
    result: dict = {"path": str(p), "source": source, "checkpoint": checkpoint if run else None, "step": step,
                    "model_type": cfg.model_type if cfg else "gpt", "tied": tied, "vocab": rows, "n_embd": width,
                    "rule": None, "reads": None, "init": None, "decay_factor": None,
                    "indicator": {"method": INDICATOR, "reference": ref, "candidate_share": CANDIDATE_SHARE,
                                  "names": {name: INDICATORS[name] for name in every}}}
    cols: dict[str, np.ndarray] = {"norm": inp.norm(dim=1).numpy(), "indicator": indicator}
    if not tied:
        cols["out_norm"] = out.norm(dim=1).numpy()

    if source != "trained":
        chosen = np.isin(np.arange(rows), candidates(indicator, ref))
        result["indicator"]["candidates"] = int(chosen.sum())
        who = "a Hugging Face" if source == "huggingface" else "an imported"
        result["note"] = (f"{who} model: no training record, so no read counts; Land & Bartolo's indicator ranks "
                          "glitch-token candidates (the reference tokens themselves are not listed)")
        # every non-reference token, lowest indicator first
        result["tokens"] = _tokens(candidates(indicator, ref, 1.0), tokenizer, {"candidate": chosen, **cols})
        return result

    assert run is not None and cfg is not None  # source "trained" is a run's
    tc, mc = cfg.train, cfg.model
    assert tc.seq_len is not None  # resolved by its RunConfig
    train = run_data(run, log).tokens("train")
    pad, per_window = (mc.pad_id, mc.block_size - 1) if cfg.model_type == "mlp" else (None, 0)
    inputs, targets = replay_reads(train, tc.batch_size, tc.seq_len, tc.seed, step, rows, pad, per_window)
    flagged = inputs < width  # the rule, UNDER_TRAINED
    never = inputs == 0
    result["rule"] = {"text": UNDER_TRAINED, "min_reads": width}
    result["reads"] = {"steps": step, "batch_size": tc.batch_size, "seq_len": tc.seq_len, "seed": tc.seed,
                       "train_tokens": int(len(train)), "targets_read": int(targets.sum()),
                       "padding_reads": step * tc.batch_size * per_window}
    result["init"] = RunDir(p).has_checkpoint("init")
    if result["init"]:
        inp0, out0, _ = tables(RunDir(p).load("init").model)
        result["decay_factor"] = delta = decay_factor(tc, step)
        cols["moved"] = (inp - delta * inp0).norm(dim=1).numpy()  # ||W_i - delta W0_i|| per row
        if not tied:
            cols["out_moved"] = (out - delta * out0).norm(dim=1).numpy()
    else:
        log(f"note: {p} has no ckpt_init.pt (an imported model has no step-0 weights): how far rows moved cannot be measured; "
            "reads and norms only")
    result["summary"] = _summary(cols, never, flagged, targets, rounding(step))
    result["indicator"]["check"] = _indicator_check(indicator, ref, never, flagged)
    result["indicator"]["graded"] = {name: _indicator_check(v, ref, never, flagged)["never_read"]
                                     for name, v in every.items()}  # the siblings, for comparison
    # fewest reads first; then the row that moved least; then by id (lexsort is stable)
    order = np.lexsort((cols.get("moved", np.zeros(rows)), inputs))
    result["tokens"] = _tokens(order, tokenizer, {"input_reads": inputs, "target_reads": targets,
                                                  "under_trained": flagged, **cols})
    return result


def rounding(steps: int) -> float:
    """Relative distance below which a row counts as not moved: half an ulp (2**-24) per step's decay,
    adding like a random walk (sqrt(steps)), times a margin of 8; learning moves a row far more."""
    return 8 * 2.0**-24 * (steps + 1) ** 0.5


def _summary(cols: dict, never: np.ndarray, flagged: np.ndarray, targets: np.ndarray, tol: float) -> dict:
    """Counts of each group and the median movement of its rows: the lecture's point in numbers."""
    groups = {"never_read": never, "under_trained": flagged & ~never, "trained": ~flagged}
    out: dict = {"never_read": int(never.sum()), "under_trained": int(flagged.sum()),
                 "never_a_target": int((targets == 0).sum())}
    for key in ("moved", "out_moved", "norm"):
        if key in cols:
            out[f"median_{key}"] = {g: float(np.median(cols[key][m])) if m.any() else None
                                     for g, m in groups.items()}
    if "moved" in cols and never.any():
        out["never_read_max_moved"] = float(cols["moved"][never].max())
        out["never_read_moved_rows"] = int((cols["moved"][never] > tol * cols["norm"][never]).sum())
    return out


def _indicator_check(indicator: np.ndarray, ref: list[int], never: np.ndarray, flagged: np.ndarray) -> dict:
    """Of the k tokens the indicator ranks first (k = the never-read tokens outside the reference),
    how many were never read and how many under-trained: the indicator graded against the counts."""
    ranked = candidates(indicator, ref, 1.0)  # every token outside the reference, lowest indicator first
    k = int(never[ranked].sum())
    return {"k": k, "never_read": int(never[ranked[:k]].sum()), "under_trained": int(flagged[ranked[:k]].sum()),
            "chance": k / len(ranked) if k else None}


# ---- as text -----------------------------------------------------------------------------------

def _q(token: str) -> str:
    """A token between quotes as token_text wrote it (its escapes are not escaped again, as repr would)."""
    return f'"{token}"' if "'" in token and '"' not in token else f"'{token}'"


def _n(x) -> str:
    return "-" if x is None else f"{x:,.3g}" if isinstance(x, float) else f"{x:,}"


def as_text(r: dict) -> str:
    """What `lrn embed undertrained` prints for a result of undertrained_tokens (its "tokens" cut to --top)."""
    shape = f"{r['vocab']:,} x {r['n_embd']} table, {'tied' if r['tied'] else 'untied'}"
    ind = r["indicator"]
    ref = f"{len(ind['reference'])} reference tokens, the bytes no UTF-8 text holds"
    if r["source"] != "trained":
        what = "a Hugging Face GPT-2 directory" if r["source"] == "huggingface" else f"an imported {r['model_type'].upper()}"
        lines = [f"{r['path']} ({what}, no training record): {shape}",
                 f"Land & Bartolo's indicator, 1 - cosine to the mean of the {ref}, first principal component removed: "
                 f"{ind['candidates']:,} candidates (the lowest {ind['candidate_share']:.0%})",
                 f"glitch-token candidates, lowest indicator first ({len(r['tokens'])}):",
                 f"{'id':>7}  {'token':<20} {'indicator':>9} {'norm':>8}"]
        lines += [f"{t['id']:>7}  {_q(t['token']):<20} {t['indicator']:>9.4f} {t['norm']:>8.3g}" for t in r["tokens"]]
        return "\n".join(lines)
    s, reads = r["summary"], r["reads"]
    lines = [f"{r['path']}, step {r['step']:,} ({r['checkpoint']}): {r['model_type'].upper()}, {shape}; "
             f"{reads['steps']:,} steps x {reads['batch_size']} x {reads['seq_len']} from seed {reads['seed']} over "
             f"{reads['train_tokens']:,} training tokens",
             f"read as input: {s['never_read']:,} tokens never, {s['under_trained']:,} under-trained "
             f"(input reads < d = {r['n_embd']}: fewer reads than the row has numbers)"]
    if r["init"]:
        m = s["median_moved"]
        lines.append(f"median distance from ckpt_init.pt: never read {_n(m['never_read'])} "
                     f"({s.get('never_read_moved_rows', 0):,} of {s['never_read']:,} rows moved beyond float32 rounding), under-trained "
                     f"{_n(m['under_trained'])}, the rest {_n(m['trained'])}"
                     + ("  (tied: the output path moves them)" if r["tied"] and s.get("never_read_moved_rows") else
                        "  (untied: no gradient reaches them)" if s["never_read"] and not r["tied"] else ""))
        if "median_out_moved" in s:
            o = s["median_out_moved"]
            lines.append(f"  output rows (the untied head): never read {_n(o['never_read'])}, under-trained "
                         f"{_n(o['under_trained'])}, the rest {_n(o['trained'])}  (the softmax moves every one)")
    else:
        lines.append("no ckpt_init.pt: how far rows moved cannot be measured (reads and norms only)")
    lines.append(f"fewest input reads first ({len(r['tokens'])}):")
    head = f"{'id':>7}  {'token':<20} {'input':>8} {'target':>8} " + (f"{'moved':>8} " if r["init"] else "")
    lines.append(head + f"{'norm':>8} {'indicator':>9}")
    for t in r["tokens"]:
        mv = f"{t['moved']:>8.3g} " if r["init"] else ""
        lines.append(f"{t['id']:>7}  {_q(t['token']):<20} {t['input_reads']:>8,} {t['target_reads']:>8,} {mv}"
                     f"{t['norm']:>8.3g} {t['indicator']:>9.4f}" + ("  under-trained" if t["under_trained"] else ""))
    c = ind["check"]
    if c["k"]:
        lines.append(f"Land & Bartolo's indicator (against {ref}) graded by the counts: of the {c['k']:,} tokens it "
                     "ranks first, "
                     f"{c['never_read']:,} were never read and {c['under_trained']:,} under-trained "
                     f"(chance: {c['chance']:.0%} never read)")
        g = ind["graded"]
        lines.append("  never read among the first " + f"{c['k']:,}, by each indicator of the authors' code: "
                     + ", ".join(f"{name} {n / c['k']:.0%}" for name, n in g.items()))
    return "\n".join(lines)
