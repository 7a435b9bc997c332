"""The toy model of superposition (Elhage et al. 2022): its measures on known weights, and the
paper's phase change on a trained model."""

from __future__ import annotations

import math

import pytest
import torch

from lrngpt.analysis.superposition import figure, measure, train_toy
from lrngpt.errors import UserError


@pytest.fixture(scope="module")
def dense_and_sparse():
    return train_toy(features=20, dims=5, sparsity=[0.0, 0.99], steps=500, batch=512, seed=0)


def test_dense_features_get_about_d_directions_sparse_ones_more(dense_and_sparse):
    dense, sparse = dense_and_sparse["sparsities"]
    # dense: the d most important features, each alone in its direction (PCA's answer); the rest dropped
    assert dense["represented"] == 5
    assert [i for i, v in enumerate(dense["norms"]) if v > 0.5] == [0, 1, 2, 3, 4]
    assert dense["max_interference"] < 0.05 and dense["dimensions_per_feature"] == pytest.approx(1.0, abs=0.05)
    # sparse: more features than dimensions, sharing them
    assert sparse["represented"] >= 10 and sparse["more_than_dims"] and not dense["more_than_dims"]
    assert sparse["mean_interference"] > 0.5 and sparse["dimensions_per_feature"] < 0.5
    assert all(0.8 < v < 1.3 for v in dense["norms"][:5])  # "represented" norms sit near 1, not near the cut


def test_the_same_seed_trains_the_same_model():
    a, b = (train_toy(20, 5, [0.9], steps=5, batch=64, seed=3) for _ in range(2))
    assert a == b
    assert train_toy(20, 5, [0.9], steps=5, batch=64, seed=4)["sparsities"][0]["norms"] != a["sparsities"][0]["norms"]


def test_measures_on_weights_with_known_answers():
    # features 0 and 1 on the two axes, 2 antipodal to 0, 3 at 45 degrees with norm 0.3, 4 absent
    w = torch.tensor([[1.0, 0.0, -1.0, 0.3 / math.sqrt(2), 0.0], [0.0, 1.0, 0.0, 0.3 / math.sqrt(2), 0.0]])
    row = measure(w[None], torch.zeros(1, 5), [0.5], [0.0], {"dims": 2})["sparsities"][0]
    assert row["norms"] == pytest.approx([1.0, 1.0, 1.0, 0.3, 0.0])
    assert row["represented"] == 3 and row["represented_share"] == pytest.approx(0.6) and row["more_than_dims"]
    # feature 0: (0 . 2)^2 = 1 from its antipode, (0 . 3)^2 = 0.045 from the small diagonal one
    assert row["interference"][:4] == pytest.approx([1.045, 0.045, 1.045, 3 * 0.5])
    assert row["mean_interference"] == pytest.approx((1.045 + 0.045 + 1.045) / 3)
    assert row["dimensions_per_feature"] == pytest.approx(2 / 3.09)
    assert row["gram"][0][2] == pytest.approx(-1.0)


def test_the_figure_draws_one_column_per_sparsity(dense_and_sparse):
    fig = figure(dense_and_sparse)
    assert len(fig.axes) == 4
    bars = fig.axes[2].patches  # (row-major) the dense column's ||W_i|| bars
    assert [round(p.get_width(), 6) for p in bars] == [round(v, 6) for v in dense_and_sparse["sparsities"][0]["norms"]]
    assert "5/20 represented" in fig.axes[0].get_title()


@pytest.mark.parametrize("kwargs, needle", [
    (dict(features=5, dims=5), "not below features"), (dict(features=4, dims=9), "not below features"),
    (dict(sparsity=[1.0]), "sparsity=1.0"), (dict(sparsity=[-0.1]), "sparsity=-0.1"),
    (dict(sparsity=[float("nan")]), "sparsity=nan"), (dict(sparsity=[]), "empty"),
    (dict(steps=0), "steps must be at least 1"), (dict(features=1, dims=0), "features must be at least 2"),
    (dict(features=1000, dims=999, steps=10**6), "multiply-adds"),
])
def test_bad_settings_are_user_errors(kwargs, needle):
    with pytest.raises(UserError, match=needle.replace(".", r"\.")):
        train_toy(**kwargs)
