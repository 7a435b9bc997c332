"""Land & Bartolo's indicator of under-trained tokens ("Fishing for Magikarp", 2024), for a model
without a training record: a token never seen as a target gets the same softmax push on every step,
so such unembedding rows end up close together. As the authors' code (magikarp/utils.py): remove U's
first principal component, average the rows of known-unused reference tokens (`reference_ids`: the
13 bytes no UTF-8 text holds, plus rows past the vocabulary), indicator_i = 1 - cos(U'_i, u_ref).
When nearly half a vocabulary was never read, the first component is their drift and removing it
removes the signal. The paper's verification by prompting is left out.
"""

from __future__ import annotations

import numpy as np
import torch

from lrngpt.errors import UserError

UNUSED_UTF8_BYTES = (0xC0, 0xC1, *range(0xF5, 0x100))  # bytes no valid UTF-8 text holds
CANDIDATE_SHARE = 0.02  # the authors' code verifies the 2% of tokens with the lowest indicator


def reference_ids(tokenizer, rows: int) -> list[int]:
    """Ids no text can produce: the single-byte tokens of UNUSED_UTF8_BYTES, and rows >= the vocabulary."""
    unused = {bytes([b]) for b in UNUSED_UTF8_BYTES}
    out = [i for i in range(min(rows, tokenizer.vocab_size))
           if i not in tokenizer.special_ids and tokenizer.decode_bytes([i]) in unused]
    return out + list(range(tokenizer.vocab_size, rows))


MAIN = "cosine_no_first_pc"  # the paper's indicator
INDICATORS = {
    MAIN: "1 - cosine to the reference mean, first principal component removed (the paper's)",
    "cosine": "1 - cosine to the reference mean",
    "centred_cosine": "1 - cosine to the reference mean, rows centred on the mean row",
    "l2_distance": "L2 distance to the reference mean",
    "input_norm": "L2 norm of the input embedding row (untied models only)",
}


def _cosine_distance(u: torch.Tensor, v: torch.Tensor) -> np.ndarray:
    # the clip keeps a zero row (or a zero reference mean) from dividing by zero, as the authors' code does
    return (1.0 - (u @ v) / (u.norm(dim=1) * v.norm()).clamp_min(1e-12)).numpy()


def indicators(unembedding: torch.Tensor, reference: list[int], embedding: torch.Tensor | None = None) -> dict:
    """Every indicator of INDICATORS (input_norm only when the untied `embedding` is given), low = candidate."""
    if unembedding.dim() != 2 or unembedding.shape[0] <= unembedding.shape[1]:
        raise UserError(f"the indicator needs more tokens than dimensions, got an unembedding of shape "
                        f"{tuple(unembedding.shape)}")
    if not reference:
        raise UserError("no reference tokens: this vocabulary has none of the single-byte tokens that no UTF-8 "
                        "text holds (0xC0, 0xC1, 0xF5-0xFF), so the indicator has no unused tokens to compare with")
    u = unembedding.detach().double()
    c = u - u.mean(dim=0, keepdim=True)
    p = torch.linalg.eigh(c.T @ c)[1][:, -1]  # the first principal direction (h x h: cheap even for GPT-2)
    no_pc = u - torch.outer(u @ p, p)
    ref = u[reference].mean(dim=0)
    out = {MAIN: _cosine_distance(no_pc, no_pc[reference].mean(dim=0)), "cosine": _cosine_distance(u, ref),
           "centred_cosine": _cosine_distance(c, c[reference].mean(dim=0)),
           "l2_distance": (u - ref).norm(dim=1).numpy()}
    if embedding is not None:
        out["input_norm"] = embedding.detach().double().norm(dim=1).numpy()
    return out


def candidates(indicator: np.ndarray, reference: list[int], share: float = CANDIDATE_SHARE) -> np.ndarray:
    """Ids whose indicator is at or under the `share` quantile of the non-reference tokens, lowest first."""
    ids = np.setdiff1d(np.arange(len(indicator)), reference)
    if not len(ids):
        return ids
    cut = np.quantile(indicator[ids], share)
    chosen = ids[indicator[ids] <= cut]
    return chosen[np.argsort(indicator[chosen], kind="stable")]
