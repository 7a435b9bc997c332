"""The MLP language model of the book chapter (Bengio et al. 2003 style): the embeddings of the
`block_size` tokens ending at t, concatenated, through Linear -> tanh -> Linear predict token t+1; a
window's context starts padded with `pad_id` (<|endoftext|>), so every position is a target.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from lrngpt.core.validate import MAX_DIM, MAX_PARAMS, check_fields, check_size
from lrngpt.errors import UserError
from lrngpt.models.loss import cross_entropy


@dataclass
class MLPConfig:
    vocab_size: int
    pad_id: int
    block_size: int = 6
    n_embd: int = 64
    n_hidden: int = 512
    emb_init_std: float | None = None  # None: PyTorch's N(0, 1) for nn.Embedding

    def __post_init__(self):
        check_fields(self, "model")
        check_size("model.vocab_size", self.vocab_size, high=2**32)
        for name in ("block_size", "n_embd", "n_hidden"):
            check_size(f"model.{name}", getattr(self, name), high=MAX_DIM)
        if self.emb_init_std is not None and not self.emb_init_std > 0:
            raise UserError(f"model.emb_init_std must be positive or null (got {self.emb_init_std})")
        if not 0 <= self.pad_id < self.vocab_size:
            raise UserError(f"model.pad_id {self.pad_id} is outside the vocabulary 0..{self.vocab_size - 1}")
        V, d, H = self.vocab_size, self.n_embd, self.n_hidden
        params = V * d + self.block_size * d * H + H + H * V + V
        if params > MAX_PARAMS:
            raise UserError(f"this MLP would have {params:,} parameters, above the limit of {MAX_PARAMS:,}; "
                            "lower model.n_embd, model.n_hidden, model.block_size or data.vocab_size")


class MLPLM(nn.Module):
    def __init__(self, config: MLPConfig):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.hidden = nn.Linear(config.block_size * config.n_embd, config.n_hidden)
        self.head = nn.Linear(config.n_hidden, config.vocab_size)
        if config.emb_init_std is not None:
            nn.init.normal_(self.wte.weight, std=config.emb_init_std)

    @property
    def token_embedding(self) -> nn.Embedding:
        return self.wte

    def contexts(self, idx: torch.Tensor) -> torch.Tensor:
        """(B,T) ids -> (B,T,block*d): for each t the embeddings of ids t-block+1..t, pad-filled."""
        block = self.config.block_size
        padded = F.pad(idx, (block - 1, 0), value=self.config.pad_id)  # (B, T+block-1)
        emb = self.wte(padded)  # one lookup per id, not per (position, slot)
        windows = emb.unfold(1, block, 1)  # (B, T, d, block)
        return windows.transpose(2, 3).flatten(2)  # (B, T, block*d), oldest token first

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None):
        h = torch.tanh(self.hidden(self.contexts(idx)))
        logits = self.head(h)
        loss = None
        if targets is not None:
            loss = cross_entropy(logits.flatten(0, 1), targets.flatten())
        return logits, loss

    def param_breakdown(self) -> dict[str, int]:
        count = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
        parts = {"embedding": count(self.wte), "hidden": count(self.hidden), "output": count(self.head)}
        return {"total": sum(parts.values()), **parts}
