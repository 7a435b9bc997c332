"""Planted tokens: a training split in which chosen ids are read as input an exact, known number of
times (the sampler's window starts depend on the split's length and seed only, so overwriting ids
keeps the positions a run reads), and indicators of under-trained tokens scored against that answer.

"Own movement": each row's movement (rare_tokens.moved) less its component along the reference
tokens' shared drift; flagged when at most OWN_FACTOR times the references' largest plus float32's
rounding (OWN_RULE, measured on the planted GPT pair). AdamW moves a row read once nearly as far as
one read a thousand times, so it finds never-read rows, not 10 reads from 1,000: both truths are scored.
"""

from __future__ import annotations

import numpy as np
import torch

from lrngpt.analysis.glitch import CANDIDATE_SHARE, candidates
from lrngpt.analysis.rare_tokens import rounding
from lrngpt.analysis.vocab import count_ids
from lrngpt.data.sampler import BatchSampler
from lrngpt.errors import UserError

OWN_FACTOR = 2.0
OWN_RULE = (f"own movement (the reference tokens' shared drift removed) <= {OWN_FACTOR:g} x the largest own movement "
            "of a reference token + float32 rounding x the row's initial length")
TRUTHS = {"under_trained": "input reads < d", "never_read": "input reads == 0"}
REF_RULE = "indicator at or below the largest value among the reference tokens (as close to the unused as they are)"


# ---- planting ------------------------------------------------------------------------------

def position_reads(tokens: np.ndarray, batch_size: int, seq_len: int, seed: int, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """(input reads, target reads) of every position of the split in `steps` batches of the seeded sampler."""
    as_target = BatchSampler(tokens, batch_size, seq_len, seed).reads(steps)
    as_input = np.zeros_like(as_target)
    as_input[:-1] = as_target[1:]  # an input as often as the next position is a target
    return as_input, as_target


def _take(order: np.ndarray, reads: np.ndarray, used: np.ndarray, want: int) -> list[int]:
    """Positions from `order` (not yet used) whose reads add up to exactly `want`, greedily."""
    chosen, left = [], want
    for p in order:
        if left == 0:
            break
        r = int(reads[p])
        if not used[p] and 0 < r <= left:
            chosen.append(int(p))
            used[p] = True
            left -= r
    if left:
        raise UserError(f"the training split has too few read positions to plant an id read {want:,} times; "
                        "train more steps or plant a smaller count")
    return chosen


def plant(tokens: np.ndarray, as_input: np.ndarray, as_target: np.ndarray, groups: dict[int, list[int]],
          seed: int, keep: int | None = None) -> tuple[np.ndarray, dict[int, list[int]]]:
    """A copy of `tokens` with each id of groups[count] written where it is read as input exactly
    `count` times; returns (new tokens, id -> positions). `keep` (<|endoftext|>) is never overwritten,
    so documents keep their bounds. The ids must be ones the text never has read as input."""
    ids = [i for group in groups.values() for i in group]
    reads = count_ids(tokens, max(ids) + 1, as_input)
    if len(set(ids)) != len(ids) or reads[ids].any():
        raise UserError("planted ids must be distinct and never read as input by the text itself")
    out = np.array(tokens, copy=True)
    used = np.zeros(len(out), dtype=bool)
    if keep is not None:
        used[out == keep] = True
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(out))
    unread = order[(as_input[order] == 0) & (as_target[order] == 0)]
    where: dict[int, list[int]] = {}
    for count, group in sorted(groups.items()):
        for i in group:
            if count == 0:  # in the text, never read: one position that no window touches
                free = unread[~used[unread]]
                if not len(free):
                    raise UserError("the training split has no unread position to plant a never-read id at")
                where[i] = [int(free[0])]
                used[free[0]] = True
            else:
                where[i] = _take(order, as_input, used, count)
            out[where[i]] = i
    return out, where


def never_read_ids(tokens: np.ndarray, as_input: np.ndarray, rows: int, exclude: set[int]) -> np.ndarray:
    """Ids 0..rows-1 the split never has read as input, without `exclude` (reference, special ids)."""
    ok = count_ids(tokens, rows, as_input) == 0
    ok[list(exclude)] = False
    return np.flatnonzero(ok)


# ---- indicators ----------------------------------------------------------------------------

def own_movement(now: torch.Tensor, init: torch.Tensor, delta: float, reference: list[int]) -> dict:
    """Per row: movement ||m_i||, own movement (the reference tokens' mean drift projected out) and the
    initial length ||delta W0_i||; with the drift's norm (0 untied)."""
    m = (now - delta * init).double()
    g = m[reference].mean(dim=0)
    own = m
    if g.norm() > 0:
        u = g / g.norm()
        own = m - torch.outer(m @ u, u)
    return {"moved": m.norm(dim=1).numpy(), "own": own.norm(dim=1).numpy(),
            "init_norm": (delta * init.double()).norm(dim=1).numpy(), "drift": float(g.norm())}


def own_flags(own: dict, reference: list[int], steps: int) -> np.ndarray:
    """OWN_RULE: own movement no larger than OWN_FACTOR x the reference tokens' largest, or float32 rounding."""
    return own["own"] <= OWN_FACTOR * own["own"][reference].max() + rounding(steps) * own["init_norm"]


def reference_flags(values: np.ndarray, reference: list[int]) -> np.ndarray:
    """REF_RULE for an indicator where low = under-trained (Land & Bartolo's and their siblings)."""
    return values <= values[reference].max()


def share_flags(values: np.ndarray, reference: list[int]) -> np.ndarray:
    """The authors' code's own rule: the lowest CANDIDATE_SHARE of the non-reference tokens."""
    return np.isin(np.arange(len(values)), candidates(values, reference, CANDIDATE_SHARE))


# ---- scores --------------------------------------------------------------------------------

def precision_recall(flagged: np.ndarray, truth: np.ndarray) -> dict:
    """Of the flagged, the share truly under-trained (precision); of the under-trained, the share
    flagged (recall); None where there is nothing to divide by."""
    flagged, truth = np.asarray(flagged, dtype=bool), np.asarray(truth, dtype=bool)
    tp = int((flagged & truth).sum())
    fp, fn = int((flagged & ~truth).sum()), int((~flagged & truth).sum())
    return {"tp": tp, "fp": fp, "fn": fn, "flagged": tp + fp, "positives": tp + fn,
            "precision": tp / (tp + fp) if tp + fp else None, "recall": tp / (tp + fn) if tp + fn else None}


def score(flagged: np.ndarray, inputs: np.ndarray, width: int, planted: list[int], outside: np.ndarray) -> dict:
    """Precision and recall of `flagged` against each of TRUTHS, on the planted ids and on `outside`
    (the vocabulary without the reference tokens, flagged by definition)."""
    out = {}
    for name, truth in (("under_trained", inputs < width), ("never_read", inputs == 0)):
        out[name] = {"planted": precision_recall(flagged[planted], truth[planted]),
                     "vocabulary": precision_recall(flagged[outside], truth[outside])}
    return out
