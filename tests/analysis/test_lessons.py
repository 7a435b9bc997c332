"""The lecture's embedding claims, run on real torch modules."""

from __future__ import annotations

import pytest

from lrngpt.analysis.lessons import lookup, lookup_grad, tying
from lrngpt.errors import UserError


def test_lookup_equals_one_hot_times_table_with_seed_shapes():
    r = lookup(batch=2, length=4, n_embd=256)
    assert r["equal"] is True
    assert r["max_abs_diff"] == 0.0
    assert r["shapes"] == {"ids": [2, 4], "token": [2, 4, 256], "one_hot": [2, 4, 300],
                           "position": [4, 256], "output": [2, 4, 256]}


def test_lookup_rejects_a_length_beyond_the_position_table():
    with pytest.raises(UserError):
        lookup(length=9, context=8)
    with pytest.raises(UserError):
        lookup(batch=0)


def test_repeated_ids_sum_their_gradients_as_in_seed_001():
    r = lookup_grad()
    assert r["lookup"] == [[0.5, 0.5], [1.0, 0.0], [0.5, 0.5]]
    assert r["grad"] == [[3.0, 4.0], [0.0, 0.0], [6.0, 8.0]]
    assert r["hand_grad"] == r["grad"]
    assert r["match"] is True


def test_unused_rows_move_only_under_tying_decay_or_momentum():
    r = tying(vocab=16, n_embd=8, used=6, seed=0)
    by = {s["setting"]: s for s in r["settings"]}
    unused = 16 - len(r["looked_up_rows"])
    assert unused > 0
    assert all(s["unused_rows"] == unused for s in r["settings"])
    assert by["sgd"]["unused_changed"] == 0
    assert by["adamw_no_decay"]["unused_changed"] == 0  # control: Adam's update of a zero grad is zero
    assert by["tied"]["unused_changed"] == unused
    assert by["adamw_decay"]["unused_changed"] == unused
    assert by["sgd_momentum"]["unused_changed"] == unused
    assert all(s["used_changed"] == s["used_rows"] for s in r["settings"])  # looked-up rows always move


@pytest.mark.parametrize("kwargs", [dict(used=16), dict(used=0), dict(vocab=1)])
def test_tying_needs_some_unused_rows(kwargs):
    with pytest.raises(UserError):
        tying(**kwargs)
