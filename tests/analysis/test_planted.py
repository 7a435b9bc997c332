"""Planting ids at exact input reads, the own-movement indicator and its precision and recall."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lrngpt.analysis.planted import (
    never_read_ids,
    own_flags,
    own_movement,
    plant,
    position_reads,
    precision_recall,
    score,
)
from lrngpt.analysis.rare_tokens import replay_reads
from lrngpt.data.sampler import BatchSampler
from lrngpt.errors import UserError

BATCH, SEQ, SEED, STEPS, ROWS = 4, 8, 3, 50, 64


def _text(n: int = 3000) -> np.ndarray:
    """Ids 1..39 only (0 is <|endoftext|>), so 40..63 are never read by the text."""
    rng = np.random.default_rng(0)
    t = rng.integers(1, 40, size=n).astype(np.uint16)
    t[::100] = 0
    return t


def test_planted_ids_are_read_as_input_exactly_the_planned_times_and_the_batches_do_not_change():
    tokens = _text()
    as_input, as_target = position_reads(tokens, BATCH, SEQ, SEED, STEPS)
    free = never_read_ids(tokens, as_input, ROWS, exclude={0})
    assert set(range(40, ROWS)) <= set(free.tolist())
    groups = {0: [40, 41], 1: [42, 43], 10: [44, 45], 100: [46, 47]}
    new, where = plant(tokens, as_input, as_target, groups, seed=1, keep=0)
    inputs, targets = replay_reads(new, BATCH, SEQ, SEED, STEPS, ROWS)
    assert {i: int(inputs[i]) for g in groups.values() for i in g} == {i: c for c, g in groups.items() for i in g}
    assert (new == 0).sum() == (tokens == 0).sum()  # documents keep their bounds
    assert targets[[40, 41]].tolist() == [0, 0]  # the 0 group: in the text, never read at all
    assert set(where) == {i for g in groups.values() for i in g} and (new[where[46]] == 46).all()
    a, b = BatchSampler(tokens, BATCH, SEQ, SEED), BatchSampler(new, BATCH, SEQ, SEED)
    for _ in range(3):  # the same windows: only the ids in them changed
        (xa, _), (xb, _) = a.next(), b.next()
        assert ((xa == xb) | torch.from_numpy(np.isin(xb.numpy(), range(40, 48)))).all()


def test_planting_refuses_an_id_the_text_reads_and_a_count_the_run_cannot_read():
    tokens = _text()
    as_input, as_target = position_reads(tokens, BATCH, SEQ, SEED, STEPS)
    read = int(np.asarray(tokens)[as_input > 0][0])
    with pytest.raises(UserError, match="never read"):
        plant(tokens, as_input, as_target, {1: [read]}, seed=1)
    with pytest.raises(UserError, match="too few read positions"):
        plant(tokens, as_input, as_target, {10**6: [50]}, seed=1)


def test_precision_and_recall_on_a_hand_made_case():
    flagged = np.array([1, 1, 0, 0, 1, 0], dtype=bool)
    truth = np.array([1, 0, 1, 0, 1, 0], dtype=bool)
    s = precision_recall(flagged, truth)
    assert (s["tp"], s["fp"], s["fn"]) == (2, 1, 1)
    assert s["precision"] == pytest.approx(2 / 3) and s["recall"] == pytest.approx(2 / 3)
    none = precision_recall(np.zeros(3, dtype=bool), np.zeros(3, dtype=bool))
    assert none["precision"] is None and none["recall"] is None


def test_score_splits_the_planted_ids_from_the_vocabulary_and_leaves_the_references_out():
    inputs = np.array([0, 0, 1, 5, 100, 200, 0])  # width 16: ids 0-3 and 6 under-trained, 0, 1, 6 never read
    flagged = np.array([1, 1, 1, 0, 1, 0, 1], dtype=bool)
    outside = np.array([0, 1, 1, 1, 1, 1, 1], dtype=bool)  # id 0 is a reference token
    s = score(flagged, inputs, 16, planted=[2, 3, 4], outside=outside)
    under, never = s["under_trained"], s["never_read"]
    assert (under["planted"]["tp"], under["planted"]["fp"], under["planted"]["fn"]) == (1, 1, 1)
    assert under["vocabulary"]["precision"] == pytest.approx(3 / 4) and under["vocabulary"]["recall"] == pytest.approx(3 / 4)
    assert never["planted"]["positives"] == 0 and never["planted"]["recall"] is None
    assert never["vocabulary"]["precision"] == pytest.approx(2 / 4) and never["vocabulary"]["recall"] == 1.0


def test_own_movement_removes_the_references_shared_drift_and_is_the_movement_untied():
    torch.manual_seed(0)
    init = torch.randn(6, 4, dtype=torch.float64)
    drift = torch.tensor([1.0, 0, 0, 0], dtype=torch.float64)
    own_dir = torch.tensor([0, 0.5, 0, 0], dtype=torch.float64)
    now = init * 0.9 + drift  # every row shares the drift; weight decay 0.9
    now[3] += own_dir  # row 3 learned something of its own
    r = own_movement(now, init, 0.9, reference=[0, 1])
    assert r["drift"] == pytest.approx(1.0)
    assert r["moved"][2] == pytest.approx(1.0) and r["own"][2] == pytest.approx(0.0, abs=1e-12)
    assert r["own"][3] == pytest.approx(0.5)
    untied = own_movement(init * 0.9 + torch.outer(torch.arange(6.0, dtype=torch.float64), own_dir), init, 0.9, [0])
    assert untied["drift"] == 0 and np.allclose(untied["own"], untied["moved"])
    # the threshold: 2 x the reference rows' largest own movement (here 0: they only drifted)
    assert own_flags(r, [0, 1], steps=10).tolist() == [True, True, True, False, True, True]
    rounded = dict(untied, own=np.array([0.0, 1e-9, 0.3, 0.6, 0.9, 1.2]))  # 1e-9: float32 rounding, not learning
    assert own_flags(rounded, [0], steps=10).tolist() == [True, True, False, False, False, False]
