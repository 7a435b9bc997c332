"""The PIP-loss estimate (Yin & Shen 2018) against brute force and against corpora whose PMI matrix
has a known rank."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from lrngpt.analysis import pip
from lrngpt.errors import UserError


def topic_corpus(sizes: list[int], eps: float, tokens: int, doc_len: int = 50, seed: int = 0) -> np.ndarray:
    """Documents of doc_len tokens, each about one of len(sizes) topics: a token is drawn uniformly
    from its topic's own block of ids with probability 1 - eps, else from the whole vocabulary.
    P(a, b) then depends only on the blocks of a and b, so the population PMI is block-constant:
    rank len(sizes) exactly (pairs across documents mix the marginals in, which keeps it so)."""
    rng = np.random.default_rng(seed)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    docs = tokens // doc_len
    topic = np.repeat(rng.integers(0, len(sizes), docs), doc_len)
    own = starts[topic] + (rng.random(docs * doc_len) * np.asarray(sizes)[topic]).astype(np.int64)
    return np.where(rng.random(docs * doc_len) >= eps, own, rng.integers(0, sum(sizes), docs * doc_len))


def population_pmi(sizes: list[int], eps: float, doc_len: int = 50, window: int = 6) -> np.ndarray:
    """The PMI the topic corpus converges to: within a document P(a, b) = mean over topics of
    P(a|t) P(b|t); a pair d apart crosses into the next document with probability d / doc_len."""
    v, blocks = sum(sizes), np.repeat(np.arange(len(sizes)), sizes)
    p_given = np.full((len(sizes), v), eps / v)
    for t, size in enumerate(sizes):
        p_given[t, blocks == t] += (1 - eps) / size
    joint = p_given.T @ p_given / len(sizes)
    p = joint.sum(axis=1)
    cross = (window + 1) / 2 / doc_len
    return np.log(((1 - cross) * joint + cross * np.outer(p, p)) / np.outer(p, p))


# ---- the pieces against brute force ---------------------------------------------------------------

def test_pair_counts_and_pmi_equal_a_loop_over_the_text():
    rng = np.random.default_rng(3)
    x, n, window, chunk = rng.integers(0, 7, 301), 7, 3, 50
    (h0, h1), crossing = pip.count_pairs(x, np.arange(n), n, window, chunk)
    want = [np.zeros((n, n), np.int64) for _ in range(3)]
    for t in range(len(x)):
        for d in range(1, window + 1):
            if t + d < len(x):
                which = (t // chunk) % 2 if t // chunk == (t + d) // chunk else 2
                want[which][x[t], x[t + d]] += 1
    assert (h0.reshape(n, n) == want[0]).all() and (h1.reshape(n, n) == want[1]).all()
    full = h0 + h1
    pip._add(full, crossing)
    counts = want[0] + want[1] + want[2]
    assert counts.sum() == sum(len(x) - d for d in range(1, window + 1))
    both = counts + counts.T  # either side of the window
    p = both.sum(axis=1) / both.sum()
    with np.errstate(divide="ignore"):
        hand = np.where(both > 0, np.log(both / both.sum() / np.outer(p, p)), 0.0)
    assert np.abs(pip.pmi_matrix(full, n) - hand).max() < 1e-5


def test_counting_in_blocks_of_tokens_counts_the_same_pairs(monkeypatch):
    x = np.random.default_rng(5).integers(0, 9, 1000)
    whole = pip.count_pairs(x, np.arange(9), 9, 4, 70)
    monkeypatch.setattr(pip, "TOKEN_BLOCK", 37)  # blocks that end inside chunks and inside windows
    blocks = pip.count_pairs(x, np.arange(9), 9, 4, 70)
    assert all((a == b).all() for a, b in zip(whole[0], blocks[0], strict=True))
    assert sorted(whole[1].tolist()) == sorted(blocks[1].tolist())


def test_pairs_with_a_token_left_out_are_not_counted():
    rng = np.random.default_rng(4)
    x, window, chunk = rng.integers(0, 5, 200), 2, 40
    remap = np.array([0, 1, -1, 2, 3])  # id 2 is not a row (what --top does to a rare token)
    (h0, h1), crossing = pip.count_pairs(x, remap, 4, window, chunk)
    full = h0 + h1
    pip._add(full, crossing)
    want = np.zeros((4, 4), np.int64)
    for t in range(len(x)):
        for d in range(1, window + 1):
            if t + d < len(x) and x[t] != 2 and x[t + d] != 2:
                want[remap[x[t]], remap[x[t + d]]] += 1
    assert (full.reshape(4, 4) == want).all()


def test_top_keeps_the_most_frequent_tokens():
    x = topic_corpus([20, 30, 40], 0.3, 30_000)
    rare = np.arange(90, 110)  # twenty ids that occur once each, scattered through the text
    x = np.insert(x, np.linspace(0, len(x), len(rare), endpoint=False).astype(int), rare)
    everything, top = pip.estimate(x, 110), pip.estimate(x, 110, top=90)
    assert everything["rows"] == everything["occurring"] == 110 and top["rows"] == 90 and top["top"] == 90
    assert top["signal_rank"] == 3 and top["optimal"]["k"] == 3
    assert top["pairs"] < everything["pairs"]
    with pytest.raises(UserError, match="top=1"):
        pip.estimate(x, 110, top=1)


def test_monte_carlo_curves_equal_the_pip_loss_of_explicit_embeddings():
    lam, n, sigma, alpha, kmax = np.array([30.0, 20.0, 12.0, 9.0]), 60, 0.8, 0.5, 20
    mc = pip.monte_carlo(lam, n, sigma, alpha, kmax, seed=3)
    y = torch.randn(n, n, generator=torch.Generator().manual_seed(3), dtype=torch.float32).mul_(sigma)
    y[range(4), range(4)] += torch.tensor(lam, dtype=torch.float32)
    u, s, _ = np.linalg.svd(y.double().numpy())
    e = np.zeros((n, 4))
    e[range(4), range(4)] = lam ** alpha
    for k in range(kmax + 1):
        eh, ek = u[:, :k] * s[:k] ** alpha, e[:, :min(k, 4)]
        assert mc["pip_loss"][k] == pytest.approx(np.linalg.norm(eh @ eh.T - e @ e.T), abs=1e-3)
        assert mc["bias"][k] == pytest.approx(np.linalg.norm(ek @ ek.T - e @ e.T), abs=1e-6)
        assert mc["variance"][k] == pytest.approx(np.linalg.norm(eh @ eh.T - ek @ ek.T), abs=1e-3)
    # bias falls and variance grows with k; the 4th direction, below the noise edge 2 sigma sqrt(n) = 12.4,
    # costs more than it brings
    assert all(np.diff(mc["bias"]) <= 1e-9) and mc["variance"][20] > mc["variance"][4] > mc["variance"][1]
    assert int(np.argmin(mc["pip_loss"])) == 3


def test_the_bound_is_the_main_theorem_summed_by_hand():
    lam, n, sigma, alpha = np.array([9.0, 5.0, 4.0, 1.5]), 12, 0.3, 0.5
    b = pip.theorem_bound(lam, n, sigma, alpha)
    full = np.concatenate([lam, np.zeros(n - 4)])
    for k in range(5):
        bias = math.sqrt(sum(full[i] ** (4 * alpha) for i in range(k, n)))
        var_sv = 2 * math.sqrt(2 * n) * alpha * sigma * math.sqrt(sum(lam[i] ** (4 * alpha - 2) for i in range(k)))
        var_sub = math.sqrt(2) * sigma * sum(
            (full[i] ** (2 * alpha) - full[i + 1] ** (2 * alpha))
            * math.sqrt(sum((full[r] - full[s]) ** -2 for r in range(i + 1) for s in range(i + 1, n)))
            for i in range(k))
        assert b["bias"][k] == pytest.approx(bias)
        assert b["variance_singular_values"][k] == pytest.approx(var_sv)
        assert b["variance_subspaces"][k] == pytest.approx(var_sub)
        assert b["total"][k] == pytest.approx(bias + var_sv + var_sub)


# ---- corpora with a known rank -------------------------------------------------------------------

@pytest.mark.parametrize("sizes", [[40, 60, 80], [20, 30, 35, 45, 50, 60], [12, 14, 16, 18, 20, 22, 24, 26, 28, 30]],
                         ids=lambda s: f"rank{len(s)}")
def test_a_planted_rank_is_recovered_with_the_noise_the_halves_estimate(sizes):
    """Stated tolerance: the signal rank exactly, the PIP-optimal width within 1 of it, and the noise
    sigma from the two halves within 15% of the true noise (the PMI against the population PMI)."""
    x = topic_corpus(sizes, eps=0.2, tokens=200_000)
    r = pip.estimate(x, sum(sizes), window=6, seed=0)
    assert r["rows"] == sum(sizes) and r["signal_rank"] == len(sizes)
    assert abs(r["optimal"]["k"] - len(sizes)) <= 1
    assert r["within"]["5%"][0] <= r["optimal"]["k"] <= r["within"]["5%"][1]
    (h0, h1), crossing = pip.count_pairs(x, np.arange(sum(sizes)), sum(sizes), 6, math.ceil(len(x) / pip.CHUNKS))
    full = h0 + h1
    pip._add(full, crossing)
    true_noise = float(np.std(pip.pmi_matrix(full, sum(sizes)) - population_pmi(sizes, 0.2)))
    assert r["noise_sigma"] == pytest.approx(true_noise, rel=0.15)
    # the recovered spectrum lies close to the population's, less the threshold it was shrunk by
    want = np.sort(np.abs(np.linalg.eigvalsh(population_pmi(sizes, 0.2))))[::-1][:len(sizes)]
    assert np.allclose(np.asarray(r["signal_spectrum"]) + r["threshold"], want, rtol=0.2)
    assert r["pairs"] == sum(len(x) - d for d in range(1, 7))


def test_less_text_more_noise_and_a_narrower_best_width():
    """The book chapter's conclusion, in the PIP loss's terms: the best width is set by the text too."""
    sizes = [12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
    few, many = (pip.estimate(topic_corpus(sizes, 0.5, t), sum(sizes)) for t in (5_000, 200_000))
    assert few["noise_sigma"] > 2 * many["noise_sigma"]
    assert few["optimal"]["k"] < many["optimal"]["k"] == len(sizes)


def test_a_text_without_structure_has_no_signal_and_wants_no_width(capsys):
    from lrngpt.cli.cmd_theory import pip_lines

    r = pip.estimate(np.random.default_rng(0).integers(0, 50, 100_000), 50)  # every token drawn independently
    assert r["signal_rank"] == 0 and r["optimal"]["k"] == 0 and r["bound"]["k"] == 0
    assert r["largest_singular_value"] < r["threshold"] and r["optimal"]["relative_to_best"] is None
    lines = pip_lines({**r, "corpus": "iid", "train_tokens": None})
    assert any(line.startswith("no direction of the PMI matrix stands out") for line in lines)


def test_the_estimate_is_seeded_and_json_ready():
    x = topic_corpus([20, 30, 40], 0.3, 30_000)
    a, b = pip.estimate(x, 90, seed=1), pip.estimate(x, 90, seed=1)
    a.pop("seconds"), b.pop("seconds"), a.pop("peak_rss_mb"), b.pop("peak_rss_mb")
    assert a == b
    assert pip.estimate(x, 90, seed=2)["curve"]["pip_loss"] != a["curve"]["pip_loss"]
    json.dumps(a, allow_nan=False)
    assert a["alpha"] == 0.5 and a["window"] == 6 and a["rows"] == 90


def test_ids_that_never_occur_are_left_out_of_the_matrix():
    x = topic_corpus([20, 30, 40], 0.3, 30_000) * 2  # only even ids occur, in a vocabulary of 180
    r = pip.estimate(x, 180)
    assert r["rows"] == 90 and r["vocab_size"] == 180 and r["signal_rank"] == 3


@pytest.mark.parametrize("kwargs, needle", [
    (dict(window=0), "window=0"), (dict(window=-2), "window=-2"),
    (dict(alpha=0.0), "alpha=0.0"), (dict(alpha=1.5), "in (0, 1]"), (dict(alpha=float("nan")), "alpha=nan"),
    (dict(tokens=np.zeros(5, np.int64)), "at least 14"), (dict(tokens=np.zeros(100, np.int64)), "fewer than 2"),
])
def test_bad_input_is_a_user_error(kwargs, needle):
    tokens = kwargs.pop("tokens", np.arange(200) % 20)
    with pytest.raises(UserError, match=needle.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        pip.estimate(tokens, 100, **kwargs)


def _planted(tokens: int = 30_000):
    return pip.estimate(topic_corpus([20, 30, 40], 0.3, tokens), 90)


def test_a_best_width_far_from_the_prediction_is_explained_from_the_texts_and_the_sweeps_numbers():
    r = _planted()
    k = r["optimal"]["k"]
    best = {"best_width": 8 * k, "best_val_bpb": 1.2345, "steps": 400}
    text = pip.far_apart(r, best)
    assert text.startswith(f"the measured best d = {8 * k} is 8.0x above the PIP prediction k = {k}: the PIP loss "
                           "measures how well a k-wide factorisation of the PMI matrix (tokens within 6 of each other) "
                           "recovers the noiseless one under this text's noise")
    assert (f"its {r['tokens']:,} tokens leave {r['signal_rank']:,} of {r['rows']:,} directions above the noise edge "
            f"{r['threshold']:.2f} (sigma {r['noise_sigma']:.4f}), so past k = {k}") in text
    assert text.endswith("stops falling at the 400 steps it trained (val bpb 1.2345 at d = "
                         f"{8 * k}): a different model and a different yardstick")
    assert k == 3  # the planted rank
    assert pip.far_apart(r, {**best, "best_width": 1}).startswith("the measured best d = 1 is 3.0x below the PIP "
                                                                   "prediction k = 3")
    assert pip.far_apart(r, {**best, "best_width": 2 * k}) is None  # 2x apart: close enough, nothing to explain
    assert pip.far_apart({**r, "optimal": {**r["optimal"], "k": 0}}, best) is None


def test_the_pip_figure_draws_the_loss_by_k_and_the_sweeps_val_bpb_by_d_on_a_log2_axis():
    from lrngpt.analysis.pip_figure import figure
    from lrngpt.errors import UserError

    r = _planted()
    k = r["optimal"]["k"]
    alone = figure(r)
    (ax,) = alone.axes
    assert ax.get_xscale() == "log" and ax.get_lines()[0].get_xdata().tolist() == list(range(1, len(r["curve"]["pip_loss"])))
    assert ax.get_lines()[0].get_ydata().tolist() == r["curve"]["pip_loss"][1:]
    sweep = {"val_bpb": {"4": 0.9, "8": 0.6, "16": 0.55, "32": 0.7}, "best_width": 16, "corpus": "text:a.txt"}
    both = figure({**r, "corpus": "text:a.txt", "sweep": sweep})
    ax, ax2 = both.axes
    assert ax2.get_lines()[0].get_xdata().tolist() == [4, 8, 16, 32]  # JSON's string keys read as widths
    assert ax2.get_lines()[0].get_ydata().tolist() == [0.9, 0.6, 0.55, 0.7]
    (legend,) = both.legends
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels == ["PIP loss by k (Yin & Shen 2018)", f"PIP-optimal k = {k}", "the sweep's val bpb by d (text:a.txt)",
                      "measured best d = 16"]
    assert [t.get_text() for t in ax.get_xticklabels()][:3] == ["1", "2", "4"]
    for bad in ({}, {"curve": {"pip_loss": [1.0]}, "optimal": {"k": 0}}, [1]):
        with pytest.raises(UserError, match="must be what lrngpt.theory_pip"):
            figure(bad)


@pytest.mark.parametrize("with_sweep", [False, True], ids=["alone", "beside-a-sweep"])
def test_the_pip_figures_legend_is_clear_of_every_line_it_draws(with_sweep):
    """Drawn, the legend's box overlaps no plotted line's box (it sat on the PIP curve before)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from lrngpt.analysis.pip_figure import figure

    r = _planted()
    sweep = {"val_bpb": {"4": 0.9, "8": 0.6, "16": 0.55, "32": 0.7}, "best_width": 16, "corpus": "text:a.txt"}
    fig = figure({**r, "sweep": sweep} if with_sweep else r)
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    (legend,) = fig.legends
    box = legend.get_window_extent(renderer)
    lines = [line for ax in fig.axes for line in ax.get_lines()]
    assert len(lines) == (4 if with_sweep else 2)
    for line in lines:  # a line's box: its drawn path in pixels (an axvline spans the axes' height)
        assert not box.overlaps(line.get_window_extent(renderer)), line.get_label()
    assert all(not box.overlaps(ax.get_window_extent(renderer)) for ax in fig.axes)
