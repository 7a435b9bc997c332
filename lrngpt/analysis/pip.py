"""Choosing the width before training: the PIP loss of Yin & Shen (NeurIPS 2018, "On the
Dimensionality of Word Embedding") from a corpus's token arrays, as in the paper and its authors'
code: the PMI matrix of skip-gram `window` counts (rows: the tokens that occur, or the `top` most
frequent), its spectrum, the noise from two halves of the text (alternating chunks), the signal
spectrum soft-thresholded at the noise edge, and the PIP loss of every k by Monte Carlo (the lowest
k wins), beside the paper's upper bound (`theorem_bound`). The n x n matrices are float32, at most
four alive; pairs are counted with np.unique in blocks, never as an n^2 histogram.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np
import psutil
import torch

from lrngpt.analysis.costs import bpb_series
from lrngpt.core.fsio import read_json
from lrngpt.data.prepared import prepare
from lrngpt.device.memory import check_memory
from lrngpt.errors import UserError, option
from lrngpt.runconfig.schema import DataConfig

CHAPTER_WINDOW = 6  # the book chapter's MLP reads the 6 tokens before each target
PAPER_ALPHA = 0.5  # the paper's exponent for skip-gram and GloVe: a symmetric factorisation U D^0.5
CHUNKS = 1000  # the two halves: alternating chunks of the text, as the authors split text8
MAX_ROWS = 8192  # the eigendecompositions take ~n^3: 8,192 tokens is 8x the time of 4,096
TOKEN_BLOCK = 1 << 18  # pair starts counted at once: window x 2 MB of pair ids, sorted by np.unique
CHAPTER_WIDTHS = (4, 8, 16, 32, 64, 128, 256, 512)
WITHIN = (0.05, 0.10)  # the widths whose PIP loss stays within 5% / 10% of the lowest


def check_options(window: int, alpha: float, top: int | None = None) -> None:
    """The ranges of the options (lrngpt.api.checks has checked their types; NaN fails `0 < alpha`)."""
    if window < 1:
        raise UserError(f"{option('window', window)}: the context must be a whole number of tokens, at least 1 "
                        f"(the book chapter's MLP reads {CHAPTER_WINDOW})")
    if not 0 < alpha <= 1:
        raise UserError(f"{option('alpha', alpha)}: the exponent of E = U D^alpha must be in (0, 1]; the paper uses "
                        f"{PAPER_ALPHA} for skip-gram and GloVe")
    if top is not None and top < 2:
        raise UserError(f"{option('top', top)}: keep at least the 2 most frequent tokens")


# ------------------------------------------------------------------------------------ counts and PMI

def _add(flat: np.ndarray, ids: np.ndarray) -> None:
    u, c = np.unique(ids, return_counts=True)
    flat[u] += c.astype(flat.dtype)


def count_pairs(tokens: np.ndarray, remap: np.ndarray, n: int, window: int, chunk_len: int):
    """Ordered pair counts (token at t, token at t + d), d = 1..window, of the two halves (chunks
    t // chunk_len even / odd, a pair inside one chunk) as flat n*n arrays, and the pair ids that
    cross a chunk boundary (the full text's counts are the halves' plus these)."""
    total = len(tokens)
    dtype = np.int32 if total * window < 2**31 else np.int64  # no cell can overflow
    halves = [np.zeros(n * n, dtype=dtype), np.zeros(n * n, dtype=dtype)]
    crossing = []
    for s in range(0, total - 1, TOKEN_BLOCK):
        e = min(s + TOKEN_BLOCK, total - 1)
        x = remap[np.asarray(tokens[s:min(e + window, total)], dtype=np.int64)]
        t = np.arange(s, e)
        chunk = t // chunk_len
        parts: list[list[np.ndarray]] = [[], []]
        for d in range(1, window + 1):
            m = min(e, total - d) - s  # starts whose partner t + d is inside the text
            if m <= 0:
                break
            ids = x[:m] * n + x[d:d + m]
            kept = (x[:m] >= 0) & (x[d:d + m] >= 0)  # with --top, pairs with a rarer token drop out
            same = (t[:m] + d) // chunk_len == chunk[:m]
            odd = (chunk[:m] & 1).astype(bool)
            parts[0].append(ids[kept & same & ~odd])
            parts[1].append(ids[kept & same & odd])
            crossing.append(ids[kept & ~same])
        for h in (0, 1):  # d = 1 always appends (m = e - s > 0): neither list is empty
            _add(halves[h], np.concatenate(parts[h]))
    return halves, (np.concatenate(crossing) if crossing else np.zeros(0, np.int64))


def pmi_matrix(counts: np.ndarray, n: int) -> np.ndarray:
    """The symmetric PMI matrix (float32) of ordered pair counts: both orders count (either side of
    the window), log(N_ij N / (N_i N_j)), 0 where a pair never occurs or a token does not."""
    m = counts.reshape(n, n).astype(np.float32)
    m += m.T  # numpy buffers the overlapping transpose
    rows = m.sum(axis=1, dtype=np.float64)
    total = rows.sum()
    if total <= 0:
        raise UserError("the text has no pairs of tokens within the window; give a longer text")
    with np.errstate(divide="ignore", invalid="ignore"):
        np.log(m, out=m)
        log_rows = np.log(rows).astype(np.float32)
        m += np.float32(math.log(total))
        m -= log_rows[:, None]
        m -= log_rows[None, :]
    m[~np.isfinite(m)] = 0.0
    return m


# ---------------------------------------------------------------------------- the loss and its bound

def monte_carlo(lam: np.ndarray, n: int, sigma: float, alpha: float, kmax: int, seed: int) -> dict:
    """PIP loss, bias and variance of the k-wide embedding for k = 0..kmax: the signal diag(lam) plus
    N(0, sigma^2) noise, n x n; from the top eigenvectors of Y Y^T (Y's left singular vectors)."""
    r = len(lam)
    gen = torch.Generator().manual_seed(seed)
    y = torch.randn(n, n, generator=gen, dtype=torch.float32).mul_(sigma)
    y.diagonal()[:r] += torch.from_numpy(lam.astype(np.float32))
    g = y @ y.T
    del y
    w, v = torch.linalg.eigh(g)  # ascending
    del g
    sv = w[n - kmax:].flip(0).double().clamp_min(0).sqrt().numpy()
    o2 = v[:r, n - kmax:].flip(1).double().square().numpy()  # (r, kmax): <u_hat_i, e_j>^2
    del v, w
    a, ah = lam ** (2 * alpha), sv ** (2 * alpha)  # E E^T's and E_hat E_hat^T's weights
    signal = float(np.sum(a * a))
    kept = np.concatenate([[0.0], np.cumsum(ah * ah)])
    cross = np.concatenate([[0.0], np.cumsum(ah * (a @ o2))])  # <E_hat_k E_hat_k^T, E E^T>
    k_sig = np.minimum(np.arange(kmax + 1), r)
    sig_k = np.concatenate([[0.0], np.cumsum(a * a)])[k_sig]
    b = a[:, None] * o2 * ah[None, :]  # the cross terms of E_hat_k against E_k: a k x k leading block
    np.cumsum(b, axis=0, out=b)
    np.cumsum(b, axis=1, out=b)
    block = np.zeros(kmax + 1)
    if r:
        block[1:] = b[k_sig[1:] - 1, np.arange(kmax)]
    return {"pip_loss": np.sqrt(np.maximum(kept + signal - 2 * cross, 0.0)),
            "bias": np.sqrt(np.maximum(signal - sig_k, 0.0)),
            "variance": np.sqrt(np.maximum(kept + sig_k - 2 * block, 0.0))}


def theorem_bound(lam: np.ndarray, n: int, sigma: float, alpha: float) -> dict:
    """The paper's main theorem for k = 0..r: sqrt(sum_{i>k} l_i^4a) + 2 sqrt(2n) a sigma sqrt(sum_{i<=k}
    l_i^(4a-2)) + sqrt(2) sigma sum_{i<=k} (l_i^2a - l_{i+1}^2a) sqrt(sum_{r<=i<s} (l_r - l_s)^-2)."""
    r = len(lam)
    a4 = lam ** (4 * alpha)
    bias = np.sqrt(np.maximum(a4.sum() - np.concatenate([[0.0], np.cumsum(a4)]), 0.0))
    var_sv = 2 * math.sqrt(2 * n) * alpha * sigma * np.sqrt(np.concatenate([[0.0], np.cumsum(lam ** (4 * alpha - 2))]))
    # T_i^2 = sum over r' <= i < s of (l_r' - l_s)^-2 (l_s = 0 past the rank), built from one row
    # added and one column dropped per step, a block of rows of the r x r differences at a time
    row, col = np.zeros(r), np.zeros(r)
    with np.errstate(divide="ignore"):
        for i0 in range(0, r, 512):
            i = np.arange(i0, min(i0 + 512, r))
            f = 1.0 / np.square(lam[i, None] - lam[None, :])
            f[np.arange(r)[None, :] <= i[:, None]] = 0.0  # s > r' only
            row[i] = f.sum(axis=1) + (n - r) / np.square(lam[i])
            col += f.sum(axis=0)
    t = np.sqrt(np.maximum(np.cumsum(row - col), 0.0))
    step = lam ** (2 * alpha) - np.concatenate([lam[1:], [0.0]]) ** (2 * alpha)
    var_sub = math.sqrt(2) * sigma * np.concatenate([[0.0], np.cumsum(step * t)])
    return {"bias": bias, "variance_singular_values": var_sv, "variance_subspaces": var_sub,
            "total": bias + var_sv + var_sub}


# ------------------------------------------------------------------------------------ the estimate

def _peak_rss_mb() -> float:
    try:
        import resource  # POSIX only
    except ImportError:  # Windows: psutil's peak working set
        info = psutil.Process().memory_info()
        return getattr(info, "peak_wset", info.rss) / 2**20
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024  # bytes on macOS, KiB on Linux


def _within(curve: np.ndarray, share: float) -> list[int]:
    ok = np.flatnonzero(curve <= curve.min() * (1 + share))
    return [int(ok[0]), int(ok[-1])]


def _rows(tokens: np.ndarray, vocab_size: int, top: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Each id's count, and the ids that are rows of the matrices (those that occur, or the `top` most
    frequent), refused when there is no matrix to factorise or it is too big."""
    seen = np.bincount(tokens, minlength=vocab_size)
    present = np.flatnonzero(seen)
    if top is not None:
        present = np.sort(np.argsort(-seen, kind="stable")[:min(top, len(present))])
    n = len(present)
    if n < 2:
        raise UserError("the text holds fewer than 2 distinct tokens; there is no matrix to factorise")
    if n > MAX_ROWS:
        raise UserError(f"{n:,} distinct tokens: the eigendecompositions of an n x n matrix take time ~n^3 (hours "
                        f"past {MAX_ROWS:,}); use {option('vocab_size', MAX_ROWS)} or less")
    check_memory(5 * 4 * n * n, f"the {n:,} x {n:,} PMI matrices", f"use a smaller {option('vocab_size')}")
    return seen, present


def _pmi_and_noise(tokens: np.ndarray, present: np.ndarray, vocab_size: int, window: int,
                   chunk_len: int) -> tuple[np.ndarray, float, int]:
    """The full text's PMI matrix, the noise sigma from its two halves' difference, and the pairs
    counted; at most four n x n matrices live at once."""
    n = len(present)
    remap = np.full(vocab_size, -1, dtype=np.int64)
    remap[present] = np.arange(n)
    (c0, c1), crossing = count_pairs(tokens, remap, n, window, chunk_len)
    p0 = pmi_matrix(c0, n)
    p1 = pmi_matrix(c1, n)
    p0 -= p1
    del p1
    # torch's reduction, unlike np.std, makes no n x n temporary (measured: 5 MB against 32 MB at n = 8,192)
    sigma = float(torch.from_numpy(p0).std(unbiased=False)) / 2
    del p0
    c0 += c1
    del c1
    _add(c0, crossing)
    pairs = int(c0.sum())
    m = pmi_matrix(c0, n)
    del c0
    return m, sigma, pairs


def estimate(tokens: np.ndarray, vocab_size: int, window: int = CHAPTER_WINDOW, alpha: float = PAPER_ALPHA,
             seed: int = 0, top: int | None = None, chunks: int = CHUNKS, log=None) -> dict:
    """The PIP-optimal width of a token stream (ids below vocab_size), with its bias and variance;
    `top`: only the `top` most frequent tokens are rows (pairs with any other token drop out)."""
    log = log or (lambda m: None)
    check_options(window, alpha, top)
    started = time.perf_counter()
    total = len(tokens)
    if total < 2 * (window + 1):
        raise UserError(f"the text has {total:,} tokens; the PIP estimate splits it in two halves and needs at least "
                        f"{2 * (window + 1)} for {option('window', window)}: give a longer text")
    seen, present = _rows(tokens, vocab_size, top)
    n = len(present)
    chunk_len = max(window + 1, math.ceil(total / chunks))
    log(f"pip: counting the pairs within {window} tokens of {total:,} tokens ({n:,} distinct)")
    m, sigma, pairs = _pmi_and_noise(tokens, present, vocab_size, window, chunk_len)
    zero_share = float(np.count_nonzero(m == 0)) / m.size
    log(f"pip: the spectrum of the {n:,} x {n:,} PMI matrix (eigvalsh)")
    ev = torch.linalg.eigvalsh(torch.from_numpy(m)).double().numpy()
    del m
    threshold = 2 * sigma * math.sqrt(n)
    sv = np.sort(np.abs(ev))[::-1]
    lam = sv[sv > threshold] - threshold
    rank = len(lam)
    kmax = min(n, max(2 * rank, rank + 64, max(CHAPTER_WIDTHS)))
    log(f"pip: the PIP loss of k = 1..{kmax} by Monte Carlo (signal rank {rank}, noise sigma {sigma:.4g})")
    mc = monte_carlo(lam, n, sigma, alpha, kmax, seed)
    bound = theorem_bound(lam, n, sigma, alpha)
    pip = mc["pip_loss"]
    k = int(np.argmin(pip))
    kb = int(np.argmin(bound["total"]))

    def at(i: int) -> dict:
        return {"k": i, "pip_loss": float(pip[i]), "bias": float(mc["bias"][i]), "variance": float(mc["variance"][i]),
                "relative_to_best": float(pip[i] / pip[k]) if pip[k] > 0 else None}

    return {
        "tokens": total, "pairs": pairs, "vocab_size": vocab_size, "occurring": int(np.count_nonzero(seen)),
        "rows": n, "top": top, "window": window, "alpha": alpha, "seed": seed, "chunks": math.ceil(total / chunk_len),
        "noise_sigma": sigma, "threshold": threshold, "zero_share": zero_share,
        "largest_singular_value": float(sv[0]), "signal_rank": rank,
        "negative_directions": int(np.count_nonzero(ev < -threshold)),
        "signal_spectrum": lam.tolist(), "pip_loss_without_embedding": float(pip[0]),
        "optimal": at(k),
        "within": {f"{round(100 * s)}%": _within(pip, s) for s in WITHIN},
        "bound": {"k": kb, **{name: float(v[kb]) for name, v in bound.items()}},
        "at_widths": [at(d) for d in CHAPTER_WIDTHS if d <= kmax],
        "curve": {"pip_loss": pip.tolist(), "bias": mc["bias"].tolist(), "variance": mc["variance"].tolist(),
                  "bound": bound["total"].tolist()},
        "seconds": time.perf_counter() - started, "peak_rss_mb": _peak_rss_mb(),
    }


# ------------------------------------------------------------------------ a corpus, beside a sweep

YARDSTICKS = ("the yardsticks differ: the PIP loss measures how far a k-wide factorisation of the PMI matrix "
              "lies from the noiseless one, the sweep the MLP's val bpb after training; as the book chapter says "
              "of Yin & Shen's results, the models and the yardsticks are not the same, and the best width is set "
              "by the model and the amount of text together")


FAR_APART = 2.0  # the measured best width and k this many times apart, or more: the sentence explains


def far_apart(result: dict, best: dict) -> str | None:
    """Why the PIP-optimal k and the sweep's best width d differ; None when within FAR_APART of each
    other or when k = 0 (said by its own line)."""
    k, d = result["optimal"]["k"], best["best_width"]
    if k < 1 or d < 1 or max(k, d) / min(k, d) <= FAR_APART:
        return None
    steps = f"the {best['steps']:,} steps it trained" if isinstance(best.get("steps"), int) else "the steps it trained"
    return (f"the measured best d = {d} is {max(k, d) / min(k, d):.1f}x {'above' if d > k else 'below'} the PIP "
            f"prediction k = {k}: the PIP loss measures how well a k-wide factorisation of the PMI matrix (tokens "
            f"within {result['window']} of each other) recovers the noiseless one under this text's noise, and its "
            f"{result['tokens']:,} tokens leave {result['signal_rank']:,} of {result['rows']:,} directions above the "
            f"noise edge {result['threshold']:.2f} (sigma {result['noise_sigma']:.4f}), so past k = {k} a wider "
            f"factorisation adds more noise than signal; the MLP's best width is where its validation loss of "
            f"next-token prediction stops falling at {steps} (val bpb {best['best_val_bpb']:.4f} at d = {d}): "
            "a different model and a different yardstick")


def sweep_best(sweep_dir) -> dict:
    """The measured best width of a width sweep (its summary.json): val bpb by width, seeds averaged,
    of the series with the most widths (steps and training prefix alike)."""
    d = Path(sweep_dir)
    if d.exists() and not d.is_dir():
        raise UserError(f"{option('sweep', d)} is a file; give the sweep directory (what `lrn sweep --out` wrote)")
    if not (d / "summary.json").is_file():
        raise UserError(f"{option('sweep', d)}: no summary.json there; run `lrn sweep embed-dim ... --out {d}` first")
    doc = read_json(d / "summary.json", "sweep summary")
    rows = doc.get("rows") if isinstance(doc, dict) else None
    series = bpb_series(rows if isinstance(rows, list) else [],
                        lambda row: (row.get("steps"), row.get("train_tokens"), row.get("corpus")))
    if not series:
        raise UserError(f"{d / 'summary.json'}: no finished rows with n_embd and val_bpb; is it a width sweep?")
    (steps, train_tokens, corpus), bpb = max(series.items(), key=lambda kv: len(kv[1]))
    best = min(bpb, key=lambda w: bpb[w])
    return {"dir": str(d), "scale": doc.get("scale"), "corpus": corpus, "steps": steps, "train_tokens": train_tokens,
            "val_bpb": bpb, "best_width": best, "best_val_bpb": bpb[best]}


def compare(result: dict, best: dict) -> dict:
    """The PIP prediction beside a sweep's measured best width."""
    k, d = result["optimal"]["k"], best["best_width"]
    curve = result["curve"]["pip_loss"]
    lo, hi = result["within"]["5%"]
    same = best["corpus"] == result.get("corpus") and best["train_tokens"] == result.get("train_tokens")
    return {**best, "predicted_width": k, "ratio": (k / d) if d else None,
            "pip_loss_at_best_width": (curve[d] / curve[k]) if d < len(curve) and curve[k] > 0 else None,
            "best_width_within_5%": lo <= d <= hi, "same_text": same, "yardsticks": YARDSTICKS,
            "far_apart": far_apart(result, best)}


def corpus_estimate(corpus: str, vocab_size: int = 4096, window: int = CHAPTER_WINDOW, alpha: float = PAPER_ALPHA,
                    train_tokens: int | None = None, seed: int = 0, top: int | None = None, sweep=None,
                    log=None) -> dict:
    """`lrn theory pip CORPUS`: the estimate on the training split of the prepared corpus (the run's
    tokenizer and token arrays, cached), beside a width sweep's measured best width when given."""
    check_options(window, alpha, top)
    best = sweep_best(sweep) if sweep is not None else None  # a wrong --sweep fails before the work
    cfg = DataConfig(corpus=corpus, vocab_size=vocab_size, train_tokens=train_tokens)
    data = prepare(cfg, log=log)
    result = estimate(data.tokens("train"), data.tokenizer.vocab_size, window, alpha, seed, top, log=log)
    result = {"corpus": corpus, "requested_vocab_size": vocab_size, "train_tokens": train_tokens, **result}
    if best is not None:
        result["sweep"] = compare(result, best)
    return result
