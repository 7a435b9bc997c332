"""lrngpt.core.validate's helpers that several layers share."""

from __future__ import annotations

from lrngpt.core.validate import dotted


def test_dotted_names_nested_settings_as_set_names_them():
    cfg = {"model": {"n_embd": 64, "ffn": {"kind": "gelu"}}, "train": {"steps": 10, "logger": []}, "name": "x",
           "data": {}}
    assert dotted(cfg) == {"model.n_embd": 64, "model.ffn.kind": "gelu", "train.steps": 10, "train.logger": [],
                           "name": "x"}  # an empty section names nothing
    assert dotted(3, "seed") == {"seed": 3} and dotted({}) == {}
    assert dotted({1: {"a": None}}) == {"1.a": None}  # a key that is no string is named as text
