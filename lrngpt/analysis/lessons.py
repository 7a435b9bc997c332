"""The embedding lessons of seeds/000-001 as runnable checks on real torch modules.

- lookup: nn.Embedding(ids) equals one_hot(ids) @ E; token + position shapes.
- lookup_grad: repeated ids sum their gradients in nn.Embedding's own backward.
- tying: rows no input looked up still change under tying, weight decay or momentum.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from lrngpt.errors import UserError
from lrngpt.validate import check_memory

# seeds/001's hand example
TABLE = [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]
IDS = [2, 0, 2]
UPSTREAM = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]


def lookup(batch: int = 2, length: int = 4, n_embd: int = 256, vocab: int = 300,
           context: int | None = None, seed: int = 0) -> dict:
    """Look up (B,T) ids both ways and add the position table, as InputEmbedding does."""
    for name, v in (("batch", batch), ("length", length), ("n-embd", n_embd), ("vocab", vocab)):
        if v < 1:
            raise UserError(f"--{name} {v}: must be at least 1")
    context = length if context is None else context
    if length > context:
        raise UserError(f"--length {length} exceeds the position table's {context} rows")
    # one_hot is int64 (8 bytes) then float32 (4) per (B,T,V) entry; the lookups B*T*D floats
    # three times; the tables (V + context) * D
    need = batch * length * (12 * vocab + 12 * n_embd) + 4 * (vocab + context) * n_embd
    check_memory(need, f"--batch {batch} x --length {length} x --vocab {vocab} (the one-hot matrix)",
                 "use a smaller --batch, --length or --vocab")
    torch.manual_seed(seed)
    tok, pos = nn.Embedding(vocab, n_embd), nn.Embedding(context, n_embd)
    ids = torch.randint(0, vocab, (batch, length))
    with torch.no_grad():
        by_index = tok(ids)
        by_matmul = F.one_hot(ids, vocab).float() @ tok.weight  # (B,T,V) @ (V,D)
        position = pos(torch.arange(length, device=ids.device))  # (T,D), broadcast over the batch
        out = by_index + position
    diff = (by_index - by_matmul).abs().max().item()
    return {"equal": bool(torch.allclose(by_index, by_matmul, rtol=0.0, atol=1e-6)), "max_abs_diff": diff,
            "shapes": {"ids": list(ids.shape), "token": list(by_index.shape), "one_hot": [batch, length, vocab],
                       "position": list(position.shape), "output": list(out.shape)}}


def lookup_grad() -> dict:
    """ids [2,0,2] through nn.Embedding's backward, next to the hand sum of seeds/001."""
    emb = nn.Embedding.from_pretrained(torch.tensor(TABLE), freeze=False)
    out = emb(torch.tensor(IDS))
    out.backward(torch.tensor(UPSTREAM))
    hand = [[0.0] * len(TABLE[0]) for _ in TABLE]
    for i, values in zip(IDS, UPSTREAM, strict=True):  # each use of a row adds its upstream gradient
        for j, v in enumerate(values):
            hand[i][j] += v
    grad = emb.weight.grad.tolist()
    return {"table": TABLE, "ids": IDS, "upstream": UPSTREAM, "lookup": out.detach().tolist(),
            "grad": grad, "hand_grad": hand, "match": grad == hand}


# ---------------------------------------------------------------------------------------------- tying

SETTINGS = [
    ("sgd", "plain SGD, separate LM head"),
    ("tied", "plain SGD, LM head tied to the table"),
    ("adamw_decay", "AdamW with weight decay 0.1, separate LM head"),
    ("adamw_no_decay", "AdamW without weight decay, separate LM head (control)"),
    ("sgd_momentum", "SGD momentum 0.9, after a previous step that looked up every row"),
]


class TinyLM(nn.Module):
    """Embedding table -> LM head: the smallest model where tying means something."""

    def __init__(self, vocab: int, n_embd: int, tied: bool):
        super().__init__()
        self.wte = nn.Embedding(vocab, n_embd)
        self.lm_head = nn.Linear(n_embd, vocab, bias=False)
        if tied:
            self.lm_head.weight = self.wte.weight

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.lm_head(self.wte(ids))


def tying(vocab: int = 16, n_embd: int = 8, used: int = 6, seed: int = 0) -> dict:
    """One optimizer step on a batch that looks up only rows 0..used-1; which other rows moved?"""
    if vocab < 2 or n_embd < 1:
        raise UserError(f"--vocab {vocab} / --n-embd {n_embd}: need vocab >= 2 and n-embd >= 1")
    if not 1 <= used < vocab:
        raise UserError(f"--used {used}: must be between 1 and vocab-1 so that some rows go unused")
    # one model at a time: a V x D table and a D x V head, their gradients and AdamW's two moments
    check_memory(4 * 4 * 2 * vocab * n_embd + 4 * 32 * vocab, f"--vocab {vocab} x --n-embd {n_embd}",
                 "use a smaller --vocab or --n-embd")
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, used, (4, 8), generator=gen)
    targets = torch.randint(0, used, (4, 8), generator=gen)
    every_row = torch.arange(vocab).reshape(1, vocab)
    used_rows = sorted(set(ids.flatten().tolist()))
    unused = torch.ones(vocab, dtype=torch.bool)
    unused[used_rows] = False

    def step(model: TinyLM, opt: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor) -> None:
        opt.zero_grad()
        logits = model(x)
        F.cross_entropy(logits.reshape(-1, vocab), y.flatten()).backward()
        opt.step()

    results = []
    for name, description in SETTINGS:
        torch.manual_seed(seed)
        model = TinyLM(vocab, n_embd, tied=(name == "tied"))
        params = model.parameters()
        if name.startswith("adamw"):
            opt = torch.optim.AdamW(params, lr=1e-2, weight_decay=0.1 if name == "adamw_decay" else 0.0)
        else:
            opt = torch.optim.SGD(params, lr=0.1, momentum=0.9 if name == "sgd_momentum" else 0.0)
        if name == "sgd_momentum":  # an earlier batch touched every row, filling the momentum buffer
            step(model, opt, every_row, every_row.roll(1, dims=1))
        before = model.wte.weight.detach().clone()
        step(model, opt, ids, targets)
        moved = (model.wte.weight.detach() != before).any(dim=1)
        results.append({"setting": name, "description": description,
                        "unused_rows": int(unused.sum()), "unused_changed": int((moved & unused).sum()),
                        "used_rows": len(used_rows), "used_changed": int((moved & ~unused).sum())})
    return {"vocab": vocab, "n_embd": n_embd, "looked_up_rows": used_rows, "settings": results}
