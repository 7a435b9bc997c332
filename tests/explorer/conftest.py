"""A tiny real width sweep (`lrn sweep` on a two-width grid, seconds) shared by the explorer tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def tiny_sweep(trained_sweep):
    """DIR of `lrn sweep` over d = 8, 32 at the tiny scale on stories (vocabulary 1024, so category
    words are single tokens); every run keeps ckpt_init.pt."""
    spec = {"name": "widths", "base": "mlp-tiny", "scale": "tiny", "axes": {"model.n_embd": [8, 32]},
            "set": {"data.corpus": "stories:300KB", "data.vocab_size": 1024, "train.steps": 60,
                    "train.eval_every": 30, "train.device": "cpu"}}
    return trained_sweep(spec, scale=None).dir
