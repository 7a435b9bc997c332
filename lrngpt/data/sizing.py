"""How much of its training text a run reads: the one place the passes are computed (steps x batch_size
x seq_len / training tokens); an unknown number of training tokens gives None, not a guess."""

from __future__ import annotations

# The readings lrn warns about (lrngpt.experiments.thresholds holds the findings judge's):
REREAD_PASSES = 1.0  # past one pass a run reads part of its text twice: a width study's dry run and report say so
MEMORISING_PASSES = 2.0  # past about two a model memorises its text and val bpb can get worse: `lrn train` warns
# Bytes a token of lrn's stories at a 4,096-token BPE, measured: stories:20MB gives 4,633,822 training
# tokens of its 19.0 MB training split (stories:100MB, 23.2M of 95 MB)
STORIES_BYTES_PER_TOKEN = 4.1


def sizing(steps: int, tokens_per_step: int, train_tokens: int | None, val_tokens: int | None = None) -> dict:
    """What `steps` steps of `tokens_per_step` tokens read of a text of `train_tokens` tokens: its passes
    (tokens read over training tokens) and the steps of one pass (at least 1)."""
    read = steps * tokens_per_step
    return {"train_tokens": train_tokens, "val_tokens": val_tokens, "tokens_per_step": tokens_per_step,
            "steps": steps, "tokens_read": read,
            "passes": None if train_tokens is None else read / max(1, train_tokens),
            "one_pass_steps": None if train_tokens is None else max(1, train_tokens // tokens_per_step)}
