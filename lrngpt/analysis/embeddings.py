"""Dissecting an embedding table (V, d): cosine neighbours, used axes, category purity; pure functions
on tensors, then their application to a run directory (`lrn embed`, the report, the explorer).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from lrngpt.analysis.categories import FORMAT as CATEGORIES_FORMAT
from lrngpt.analysis.categories import load_categories, stories_categories
from lrngpt.analysis.categories import resolve as resolve_categories
from lrngpt.core import log as logging
from lrngpt.errors import UserError, option
from lrngpt.store.rundir import RunDir, load_run


def _check_table(table: torch.Tensor) -> torch.Tensor:
    if not isinstance(table, torch.Tensor) or table.dim() != 2 or table.shape[0] < 1 or table.shape[1] < 1:
        raise UserError(f"expected an embedding table of shape (V, d), got {getattr(table, 'shape', type(table))}")
    return table.detach().double()  # float64: cosines and singular values compared across runs


def cosine_neighbors(table: torch.Tensor, token_id: int, k: int,
                     exclude: set[int] | tuple = ()) -> list[tuple[int, float]]:
    """The k rows most cosine-similar to row `token_id` (itself and `exclude` left out), best first; the
    callers give a row of the table and k >= 1 (checked where the user gave it)."""
    unit = F.normalize(_check_table(table), dim=1)  # a zero row gets cosine 0 with everything
    cos = unit @ unit[token_id]
    cos[[token_id, *exclude]] = float("-inf")
    k = min(k, int(torch.isfinite(cos).sum()))
    values, ids = torch.topk(cos, k)
    return [(int(i), float(v)) for i, v in zip(ids, values, strict=True)]


def used_axes(table: torch.Tensor, energy: float = 0.9) -> int:
    """How many singular directions of the centred table hold `energy` of the squared singular values
    (the principal components that explain that share of the variance)."""
    if not 0.0 < energy <= 1.0:
        raise UserError(f"{option('energy', energy)}: must be in (0, 1], e.g. 0.9")
    t = _check_table(table)
    s2 = torch.linalg.svdvals(t - t.mean(dim=0, keepdim=True)) ** 2
    total = s2.sum()
    if total == 0:  # all rows equal: no direction carries anything
        return 0
    share = torch.cumsum(s2, 0) / total
    # the tolerance keeps energy=1.0 from being missed by a rounding error in the last digit
    return int((share < energy - 1e-12).sum()) + 1


def category_purity(table: torch.Tensor, category_ids: dict[str, list[int]], k: int = 10) -> dict:
    """Share of each category word's k nearest neighbours (among the other category words) in its own
    category; `chance`, a random table's expectation ((n_cat - 1) / (N - 1)), averaged as `overall` is.
    `category_ids` as lrngpt.analysis.categories.resolve gives them (distinct ids, one category each), k >= 1."""
    t = _check_table(table)
    names = list(category_ids)
    # token id -> its category's place in `names` (resolve gives each token one category, inside the table)
    owner = {i: c for c, name in enumerate(names) for i in category_ids[name]}
    words = sorted(owner)
    n = len(words)
    if n < 2:
        raise UserError(f"category purity needs at least 2 category tokens, this vocabulary has {n}: a small vocabulary splits the category words into pieces; train with a larger data.vocab_size (e.g. --set data.vocab_size=4096)")
    k = min(k, n - 1)
    unit = F.normalize(t[words], dim=1)
    cos = unit @ unit.T
    cos.fill_diagonal_(float("-inf"))
    nearest = torch.topk(cos, k, dim=1).indices
    label = torch.tensor([owner[w] for w in words])
    share = (label[nearest] == label[:, None]).double().mean(dim=1)  # each word's neighbours in its category
    size = torch.bincount(label, minlength=len(names))
    return {"per_category": {name: float(share[label == c].mean()) for c, name in enumerate(names)},
            "overall": float(share.mean()), "chance": float(((size[label] - 1).double() / (n - 1)).mean()),
            "k": k, "n_words": n, "sizes": {name: int(size[c]) for c, name in enumerate(names)}}


def pair_cosine(tokenizer, table: torch.Tensor, query: str, other: str) -> dict:
    """The cosine of two tokens' rows and the query's nearest neighbour; a word the BPE splits has no
    row: its pieces are given ("split") and the figures that need its row are None."""
    ids_q, ids_o = tokenizer.encode(query), tokenizer.encode(other)
    split = {t: [tokenizer.id_to_token(i) for i in ids] for t, ids in ((query, ids_q), (other, ids_o)) if len(ids) != 1}
    out: dict[str, Any] = {"query": query, "other": other, "split": split, "cosine": None, "nearest": None,
                           "nearest_cosine": None}
    if query in split:
        return out
    (near, near_cos), = cosine_neighbors(table, ids_q[0], 1)
    out.update(nearest=tokenizer.id_to_token(near), nearest_cosine=round(near_cos, 4))
    if other not in split:
        out["cosine"] = round(float(F.cosine_similarity(table[ids_q[0]].double(), table[ids_o[0]].double(), dim=0)), 4)
    return out


def token_neighbors(tokenizer, table: torch.Tensor, text: str, k: int) -> dict:
    """Neighbours of a token, or of the mean of a word's tokens when the BPE split it."""
    if not text:
        raise UserError(f"{option('token')} is empty; give a token such as ' Lily'")
    ids = tokenizer.encode(text)
    exclude: set[int] = set()
    if len(ids) == 1:
        query = ids[0]
    else:  # a word the BPE split: look from the mean of its pieces
        table = torch.cat([table, table[ids].mean(0, keepdim=True)])
        query, exclude = table.shape[0] - 1, set(ids)
    found = cosine_neighbors(table, query, k, exclude=exclude)
    return {
        "query": text,
        "tokens": [{"id": i, "token": tokenizer.id_to_token(i)} for i in ids],
        "neighbors": [{"id": i, "token": tokenizer.id_to_token(i), "cosine": round(c, 4)} for i, c in found],
    }


# ---- a run's table ---------------------------------------------------------------------------

RANDOM_SEED = 0  # the seed of the random Gaussian reference table of `run_axes`


def load_table(run_dir, which: str = "last"):
    """A run (LoadedRun) and its token table, float32 (V, d); which: "last", "best" or "init" (step 0)."""
    run = load_run(run_dir, which)
    return run, run.model.token_embedding.weight.detach().float()


def init_table(run_dir):
    """The untrained table (ckpt_init.pt), or None when the run has none (an imported model); a damaged
    ckpt_init.pt is an error, not a missing reference."""
    if not RunDir(run_dir).has_checkpoint("init"):
        return None
    return load_table(run_dir, "init")[1]


def token_categories(tokenizer) -> dict[int, str]:
    """Category of each token that `purity` scores on a stories run (' Lily' -> 'name'); others have none."""
    ids = resolve_categories(tokenizer, stories_categories())["ids"]
    return {i: name for name, words in ids.items() for i in words}


def has_categories(run) -> bool:
    """A stories run: its generator's word categories are the default ones."""
    return run.config.data.corpus.startswith("stories")


def purity(run_dir, k: int = 10, categories=None, checkpoint: str = "last", log=None) -> dict:
    """Category purity of a run's table (`checkpoint`) and, with ckpt_init.pt, of its untrained one; words
    the BPE splits are listed, not scored, and categories with fewer than 2 single-token words dropped.
    `categories`: a file path (lrngpt.analysis.categories), a dict, or None (a stories run's own)."""
    log = log or logging.info
    run, table = load_table(run_dir, checkpoint)
    if categories is None and not has_categories(run):
        raise UserError(f"this run was trained on {run.config.data.corpus}, which has no built-in word "
                        f"categories; pass {option('categories', 'FILE')}, {CATEGORIES_FORMAT} "
                        "(the stories categories are the default only for a stories run)")
    cats, source = ((stories_categories(), "stories corpus (built in)") if categories is None else
                    (categories, "given") if isinstance(categories, dict) else
                    (load_categories(categories), str(categories)))
    r = resolve_categories(run.tokenizer, cats)
    vocab = run.tokenizer.vocab_size
    if r["dropped"]:
        log(f"note: dropped {len(r['dropped'])} categor{'y' if len(r['dropped']) == 1 else 'ies'} with fewer than "
            "2 words that are single tokens: " + ", ".join(f"{n} ({c})" for n, c in r["dropped"].items()))
    if len(r["ids"]) < 2:
        raise UserError(f"only {len(r['ids'])} categor{'y' if len(r['ids']) == 1 else 'ies'} of {source} "
                        f"{'has' if len(r['ids']) == 1 else 'have'} 2 or more words that are single tokens of "
                        f"this run's {vocab:,}-token vocabulary ({len(r['split_words'])} words are split by the BPE); "
                        "purity needs 2 categories: raise data.vocab_size or give more words per category")
    result = {"step": run.step, "checkpoint": checkpoint, "categories": source,
              "trained": category_purity(table, r["ids"], k),
              "split_words": r["split_words"], "dropped": r["dropped"], "repeated": r["repeated"]}
    init = init_table(run_dir)
    result["untrained"] = None if init is None else category_purity(init, r["ids"], k)
    return result


def run_axes(run_dir, energy: float = 0.9, checkpoint: str = "last") -> dict:
    """`lrn embed axes`: used axes of a run's table beside the untrained table's (None without
    ckpt_init.pt) and a random Gaussian table's (scale-free, so N(0, 1) stands for any N(0, s^2))."""
    run, table = load_table(run_dir, checkpoint)
    axes, init = used_axes(table, energy), init_table(run_dir)  # a bad energy said before ckpt_init.pt is read
    gaussian = torch.randn(*table.shape, generator=torch.Generator().manual_seed(RANDOM_SEED))
    return {"used_axes": axes, "n_embd": table.shape[1], "vocab": table.shape[0],
            "energy": energy, "step": run.step, "checkpoint": checkpoint,
            "untrained_used_axes": None if init is None else used_axes(init, energy),
            "random_used_axes": used_axes(gaussian, energy), "random_seed": RANDOM_SEED}
