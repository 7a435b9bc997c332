"""Cosine neighbours, used axes and category purity on tables whose answer is known."""

from __future__ import annotations

import pytest
import torch

from lrngpt.analysis.embeddings import category_purity, cosine_neighbors, used_axes
from lrngpt.errors import UserError


def _gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def test_neighbors_are_sorted_by_cosine_and_skip_self_and_exclude():
    table = torch.tensor([[1.0, 0.0], [0.9, 0.1], [0.1, 1.0], [-1.0, 0.0], [0.7, 0.7], [0.0, 0.0]])
    found = cosine_neighbors(table, 0, k=3)
    assert [i for i, _ in found] == [1, 4, 2]
    assert found[0][1] == pytest.approx(0.9 / (0.81 + 0.01) ** 0.5)
    assert found[1][1] == pytest.approx(0.5**0.5)
    assert [i for i, _ in cosine_neighbors(table, 0, k=2, exclude={1})] == [4, 2]
    everything = cosine_neighbors(table, 0, k=99)
    assert [i for i, _ in everything] == [1, 4, 2, 5, 3]  # all but itself; the zero row has cosine 0
    assert everything[3][1] == 0.0


def test_three_strong_directions_give_three_used_axes():
    g = _gen()
    basis = torch.linalg.qr(torch.randn(64, 3, generator=g))[0].T  # 3 orthonormal directions in 64 dims
    table = 10 * torch.randn(500, 3, generator=g) @ basis + 0.01 * torch.randn(500, 64, generator=g)
    assert used_axes(table, 0.9) == 3
    assert used_axes(table, 1.0) == 64  # the noise fills every direction


def test_used_axes_ignores_a_shared_offset():
    # centring: a big constant row added to every token is not a direction the table uses
    g = _gen(1)
    table = torch.randn(300, 2, generator=g) @ torch.randn(2, 16, generator=g) + 100 * torch.randn(1, 16, generator=g)
    assert used_axes(table, 0.99) == 2


def test_used_axes_edge_cases():
    assert used_axes(torch.ones(10, 4)) == 0
    with pytest.raises(UserError):
        used_axes(torch.randn(10, 4), 0.0)
    with pytest.raises(UserError):
        used_axes(torch.randn(10), 0.9)


CATS = {name: list(range(25 * c, 25 * c + 25)) for c, name in enumerate(["names", "colors", "animals", "food"])}


def test_planted_clusters_have_purity_one():
    g = _gen(2)
    centres = torch.randn(4, 64, generator=g)
    table = centres.repeat_interleave(25, 0) + 0.1 * torch.randn(100, 64, generator=g)
    r = category_purity(table, CATS, k=10)
    assert r["overall"] == 1.0
    assert all(v == 1.0 for v in r["per_category"].values())
    assert r["chance"] == pytest.approx(24 / 99)
    assert r["k"] == 10 and r["n_words"] == 100


def test_random_table_scores_near_chance():
    # Each word's k=10 neighbours on a random table are close to a random draw of 10 from the
    # other 99, so its purity has mean 24/99 and sd ~ sqrt(p(1-p)/10 * 89/98) ~ 0.13; over 100
    # words the mean has sd ~ 0.013 (a bit more for shared neighbours). 0.06 is > 4 sd; a
    # clustered table (purity 1) or a miscounted chance would be far outside it.
    table = torch.randn(100, 64, generator=_gen(3))
    r = category_purity(table, CATS, k=10)
    assert abs(r["overall"] - r["chance"]) < 0.06
    assert r["chance"] == pytest.approx(24 / 99)


def test_chance_is_averaged_over_words_for_unequal_categories():
    cats = {"a": [0, 1, 2], "b": [3]}  # b has one word: its purity and chance are 0
    r = category_purity(torch.randn(4, 8, generator=_gen(4)), cats, k=10)
    assert r["k"] == 3
    assert r["chance"] == pytest.approx((3 * (2 / 3) + 0) / 4)
    assert r["per_category"]["b"] == 0.0


class _Words:
    """A tokenizer stub: each known word one id; an unknown word splits into its characters (ids 90+)."""

    def __init__(self, words):
        self.words = list(words)

    def encode(self, text):
        return [self.words.index(text)] if text in self.words else [90 + i for i in range(len(text))]

    def id_to_token(self, i):
        return self.words[i] if i < len(self.words) else f"<{i}>"


def test_pair_cosine_gives_the_pairs_cosine_and_the_querys_nearest_and_names_a_split_word():
    from lrngpt.analysis.embeddings import pair_cosine

    tok = _Words([" Lily", " Mia", " Tom"])
    table = torch.tensor([[1.0, 0.0], [0.6, 0.8], [0.8, 0.6]])
    r = pair_cosine(tok, table, " Lily", " Mia")
    assert r == {"query": " Lily", "other": " Mia", "split": {}, "cosine": 0.6, "nearest": " Tom", "nearest_cosine": 0.8}
    other_split = pair_cosine(tok, table, " Lily", " Mx")
    assert other_split["cosine"] is None and other_split["nearest"] == " Tom" and list(other_split["split"]) == [" Mx"]
    query_split = pair_cosine(tok, table, " Lx", " Mia")
    assert query_split["nearest"] is None and query_split["cosine"] is None and " Lx" in query_split["split"]
