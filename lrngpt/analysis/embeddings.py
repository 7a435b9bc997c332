"""Dissecting an embedding table (V, d): cosine neighbours, used axes, category purity.

The first half is pure functions on tensors; the second half applies them to a run directory
(its tokenizer and checkpoints), which is what `lrn embed`, the report and the explorer call.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from lrngpt.errors import UserError


def _check_table(table: torch.Tensor) -> torch.Tensor:
    if not isinstance(table, torch.Tensor) or table.dim() != 2 or table.shape[0] < 1 or table.shape[1] < 1:
        raise UserError(f"expected an embedding table of shape (V, d), got {getattr(table, 'shape', type(table))}")
    return table.detach().double()  # float64: cosines and singular values compared across runs


def cosine_neighbors(table: torch.Tensor, token_id: int, k: int,
                     exclude: set[int] | tuple = ()) -> list[tuple[int, float]]:
    """The k rows most cosine-similar to row `token_id` (itself and `exclude` left out), best first."""
    t = _check_table(table)
    vocab = t.shape[0]
    if not 0 <= token_id < vocab:
        raise UserError(f"token id {token_id} is outside the table (0..{vocab - 1})")
    if k < 1:
        raise UserError(f"-k {k}: must be at least 1")
    unit = F.normalize(t, dim=1)  # a zero row gets cosine 0 with everything
    cos = unit @ unit[token_id]
    cos[token_id] = float("-inf")
    for i in exclude:
        if 0 <= i < vocab:
            cos[i] = float("-inf")
    k = min(k, int(torch.isfinite(cos).sum()))
    values, ids = torch.topk(cos, k)
    return [(int(i), float(v)) for i, v in zip(ids, values, strict=True)]


def used_axes(table: torch.Tensor, energy: float = 0.9) -> int:
    """How many singular directions of the centred table hold `energy` of the squared singular values.

    Same as the number of principal components that explain that share of the variance.
    """
    if not 0.0 < energy <= 1.0:
        raise UserError(f"--energy {energy}: must be in (0, 1], e.g. 0.9")
    t = _check_table(table)
    s2 = torch.linalg.svdvals(t - t.mean(dim=0, keepdim=True)) ** 2
    total = s2.sum()
    if total == 0:  # all rows equal: no direction carries anything
        return 0
    share = torch.cumsum(s2, 0) / total
    # the tolerance keeps energy=1.0 from being missed by a rounding error in the last digit
    return int((share < energy - 1e-12).sum()) + 1


def category_purity(table: torch.Tensor, category_ids: dict[str, list[int]], k: int = 10) -> dict:
    """Share of each category word's k nearest neighbours (among all category words) in its own category.

    Neighbours are searched only among the category words' tokens, the word itself left out.
    A random table scores the chance level in expectation: for a word of a category with
    n_cat words out of N, (n_cat - 1) / (N - 1); `chance` is that averaged over the words,
    as `overall` is the purity averaged over the words.
    """
    t = _check_table(table)
    owner: dict[int, str] = {}
    for name, ids in category_ids.items():
        if not ids:
            raise UserError(f"category {name!r} has no tokens")
        for i in ids:
            if not 0 <= i < t.shape[0]:
                raise UserError(f"category {name!r}: token id {i} is outside the table (0..{t.shape[0] - 1})")
            if owner.get(i, name) != name:
                raise UserError(f"token id {i} is in both {owner[i]!r} and {name!r}; a token needs one category")
            owner[i] = name
    words = sorted(owner)
    n = len(words)
    if n < 2:
        raise UserError(f"category purity needs at least 2 category tokens, this vocabulary has {n}: a small vocabulary splits the category words into pieces; train with a larger data.vocab_size (e.g. --set data.vocab_size=4096)")
    if k < 1:
        raise UserError(f"-k {k}: must be at least 1")
    k = min(k, n - 1)
    unit = F.normalize(t[words], dim=1)
    cos = unit @ unit.T
    cos.fill_diagonal_(float("-inf"))
    nearest = torch.topk(cos, k, dim=1).indices
    sizes = {name: sum(1 for w in words if owner[w] == name) for name in category_ids}
    scores: dict[str, list[float]] = {name: [] for name in category_ids}
    chance = []
    for row, w in enumerate(words):
        name = owner[w]
        same = sum(owner[words[j]] == name for j in nearest[row].tolist())
        scores[name].append(same / k)
        chance.append((sizes[name] - 1) / (n - 1))
    every = [s for v in scores.values() for s in v]
    return {"per_category": {name: sum(v) / len(v) for name, v in scores.items()},
            "overall": sum(every) / n, "chance": sum(chance) / n, "k": k, "n_words": n,
            "sizes": sizes}


def token_neighbors(tokenizer, table: torch.Tensor, text: str, k: int) -> dict:
    """Neighbours of a token, or of the mean of a word's tokens when the BPE split it."""
    if not text:
        raise UserError("--token is empty; give a token such as ' Lily'")
    ids = tokenizer.encode(text)
    if len(ids) == 1:
        query, exclude = ids[0], ()
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

def load_table(run_dir, untrained: bool = False):
    """A run (lrngpt.run.LoadedRun) and its token embedding table, float32 (V, d); step 0 if untrained."""
    from lrngpt.run import load_run

    run = load_run(run_dir, "init" if untrained else "last")
    return run, run.model.token_embedding.weight.detach().float()


def category_token_ids(tokenizer) -> tuple[dict[str, list[int]], list[str]]:
    """Single-token ids of ' word' for every stories category word; the words that split are listed."""
    from lrngpt.corpora.stories import CATEGORIES

    ids: dict[str, list[int]] = {}
    split: list[str] = []
    seen: set[int] = set()
    for name, words in CATEGORIES.items():
        for w in words:
            t = tokenizer.encode(" " + w)
            if len(t) == 1 and t[0] not in seen:
                ids.setdefault(name, []).append(t[0])
                seen.add(t[0])
            elif len(t) > 1:
                split.append(w)
    return {k: v for k, v in ids.items() if len(v) >= 2}, split


def token_categories(tokenizer) -> dict[int, str]:
    """Category of each token that `purity` scores (' Lily' -> 'name'); other tokens have none."""
    return {i: name for name, ids in category_token_ids(tokenizer)[0].items() for i in ids}


def has_categories(run) -> bool:
    return run.config.data.corpus.startswith("stories")


def purity(run_dir, k: int = 10) -> dict:
    """Category purity of a stories run's table, trained and (when ckpt_init.pt exists) untrained."""
    run, table = load_table(run_dir)
    if not has_categories(run):
        raise UserError(f"purity needs a run trained on the stories corpus (this one: {run.config.data.corpus}); "
                        "its word categories are what is scored")
    ids, split = category_token_ids(run.tokenizer)
    result = {"step": run.step, "trained": category_purity(table, ids, k), "split_words": split}
    try:
        _, init = load_table(run_dir, untrained=True)
        result["untrained"] = category_purity(init, ids, k)
    except UserError:
        result["untrained"] = None
    return result


def run_neighbors(run_dir, texts: list[str], k: int = 10, untrained: bool = False) -> dict:
    """`lrn embed neighbors`: the neighbour lists of several tokens or words in one run's table."""
    run, table = load_table(run_dir, untrained)
    return {"step": run.step, "untrained": untrained, "results": [token_neighbors(run.tokenizer, table, t, k) for t in texts]}


def run_axes(run_dir, energy: float = 0.9, untrained: bool = False) -> dict:
    """`lrn embed axes`: used axes of one run's table."""
    run, table = load_table(run_dir, untrained)
    return {"used_axes": used_axes(table, energy), "n_embd": table.shape[1], "energy": energy, "step": run.step}
