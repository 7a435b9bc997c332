"""The lecture's lessons on embedding tables (and one of the book chapter's) as runnable checks on real
torch modules: `lookup`, `lookup_grad`, `tying`, `renumber`, and `softmax_bottleneck`, the book chapter's
theory 3 after Yang et al. (2017, "Breaking the Softmax Bottleneck"): the log-probability matrix's rank
is bounded by the output layer's width + bias + normaliser.
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from lrngpt.analysis.vocab import run_data
from lrngpt.core import log as logging
from lrngpt.core.validate import check_size
from lrngpt.device.memory import check_memory
from lrngpt.errors import UserError, option
from lrngpt.inference.evaluate import evaluate_bpb
from lrngpt.models.gpt import GPT, GPTConfig
from lrngpt.models.mlp import MLPLM, MLPConfig
from lrngpt.store.rundir import load_run

# the seed project's notes' hand example: a 3-row table looked up at ids [2,0,2]
TABLE = [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]
IDS = [2, 0, 2]
UPSTREAM = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]


def lookup(batch: int = 2, length: int = 4, n_embd: int = 256, vocab: int = 300, seed: int = 0) -> dict:
    """Look up (B,T) ids both ways and add a position table of `length` rows, as InputEmbedding does."""
    for name, v in (("batch", batch), ("length", length), ("n_embd", n_embd), ("vocab", vocab)):
        check_size(option(name), v)
    # one_hot is int64 (8 bytes) then float32 (4) per (B,T,V) entry; the lookups B*T*D floats
    # three times; the tables (V + T) * D
    need = batch * length * (12 * vocab + 12 * n_embd) + 4 * (vocab + length) * n_embd
    check_memory(need, f"{option('batch', batch)} x {option('length', length)} x {option('vocab', vocab)} (the one-hot matrix)",
                 f"use a smaller {option('batch')}, {option('length')} or {option('vocab')}")
    torch.manual_seed(seed)
    tok, pos = nn.Embedding(vocab, n_embd), nn.Embedding(length, n_embd)
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
    """ids [2,0,2] through nn.Embedding's backward, next to the seed project's notes' hand sum."""
    emb = nn.Embedding.from_pretrained(torch.tensor(TABLE), freeze=False)
    out = emb(torch.tensor(IDS))
    out.backward(torch.tensor(UPSTREAM))
    # by hand: each use of a row adds its upstream gradient to that row
    hand = torch.zeros(len(TABLE), len(TABLE[0])).index_add_(0, torch.tensor(IDS), torch.tensor(UPSTREAM)).tolist()
    grad = emb.weight.grad.tolist()
    return {"table": TABLE, "ids": IDS, "upstream": UPSTREAM, "lookup": out.detach().tolist(),
            "grad": grad, "hand_grad": hand, "match": grad == hand}


# ---------------------------------------------------------------------------------------------- tying

SGD, ADAMW = functools.partial(torch.optim.SGD, lr=0.1), functools.partial(torch.optim.AdamW, lr=1e-2)
# name, what it is, the LM head tied to the table, the optimizer, an earlier step that looked up every row
SETTINGS: list[tuple[str, str, bool, Callable[..., torch.optim.Optimizer], bool]] = [
    ("sgd", "plain SGD, separate LM head", False, SGD, False),
    ("tied", "plain SGD, LM head tied to the table", True, SGD, False),
    ("adamw_decay", "AdamW with weight decay 0.1, separate LM head", False,
     functools.partial(ADAMW, weight_decay=0.1), False),
    ("adamw_no_decay", "AdamW without weight decay, separate LM head (control)", False,
     functools.partial(ADAMW, weight_decay=0.0), False),
    ("sgd_momentum", "SGD momentum 0.9, after a previous step that looked up every row", False,
     functools.partial(SGD, momentum=0.9), True),
]


def tying(vocab: int = 16, n_embd: int = 8, used: int = 6, seed: int = 0) -> dict:
    """One optimizer step on a batch that looks up only rows 0..used-1; which other rows moved?"""
    if vocab < 2 or n_embd < 1:
        raise UserError(f"{option('vocab', vocab)} / {option('n_embd', n_embd)}: need vocab >= 2 and n-embd >= 1")
    if not 1 <= used < vocab:
        raise UserError(f"{option('used', used)}: must be between 1 and vocab-1 so that some rows go unused")
    # one model at a time: a V x D table and a D x V head, their gradients and AdamW's two moments
    check_memory(4 * 4 * 2 * vocab * n_embd + 4 * 32 * vocab, f"{option('vocab', vocab)} x {option('n_embd', n_embd)}",
                 f"use a smaller {option('vocab')} or {option('n_embd')}")
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, used, (4, 8), generator=gen)
    targets = torch.randint(0, used, (4, 8), generator=gen)
    every_row = torch.arange(vocab).reshape(1, vocab)
    used_rows = ids.unique().tolist()  # sorted
    unused = ~torch.isin(torch.arange(vocab), ids)

    def step(model: nn.Module, opt: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor) -> None:
        opt.zero_grad()
        logits = model(x)
        F.cross_entropy(logits.reshape(-1, vocab), y.flatten()).backward()
        opt.step()

    results = []
    for name, description, tied, optimizer, earlier in SETTINGS:
        torch.manual_seed(seed)
        # embedding table -> LM head: the smallest model where tying means something
        wte, lm_head = nn.Embedding(vocab, n_embd), nn.Linear(n_embd, vocab, bias=False)
        if tied:
            lm_head.weight = wte.weight
        model = nn.Sequential(wte, lm_head)
        opt = optimizer(model.parameters())
        if earlier:  # an earlier batch touched every row, filling the momentum buffer
            step(model, opt, every_row, every_row.roll(1, dims=1))
        before = wte.weight.detach().clone()
        step(model, opt, ids, targets)
        moved = (wte.weight.detach() != before).any(dim=1)
        results.append({"setting": name, "description": description,
                        "unused_rows": int(unused.sum()), "unused_changed": int((moved & unused).sum()),
                        "used_rows": len(used_rows), "used_changed": int((moved & ~unused).sum())})
    return {"vocab": vocab, "n_embd": n_embd, "looked_up_rows": used_rows, "settings": results}


# ---------------------------------------------------------------------------------- softmax bottleneck

def _output_layer(model: MLPLM | GPT) -> nn.Linear:
    """The Linear that turns the last hidden vector into logits (MLP: head, GPT: lm_head)."""
    return model.head if isinstance(model, MLPLM) else model.lm_head


@torch.no_grad()
def rank_study(model: MLPLM | GPT, windows: torch.Tensor, contexts: int) -> dict:
    """Ranks of the vectors entering the output layer (h), the logits and the log-probabilities
    for `contexts` positions of `windows` (B, T), all in float64 so that rounding cannot add rank."""
    model = copy.deepcopy(model).double().eval()
    head = _output_layer(model)
    seen: list[torch.Tensor] = []
    hook = head.register_forward_hook(lambda _m, inputs, _out: seen.append(inputs[0]))
    model(windows)
    hook.remove()
    h = seen[0].reshape(-1, head.in_features)[:contexts]
    logits = F.linear(h, head.weight, head.bias)
    logp = torch.log_softmax(logits, dim=-1)
    bias = head.bias is not None
    bound = head.in_features + int(bias) + 1
    # matrix_rank's default tolerance is NumPy's: largest singular value x max(shape) x float64 eps
    rank_h, rank_logits, rank_logp = (int(torch.linalg.matrix_rank(m)) for m in (h, logits, logp))
    sv = torch.linalg.svdvals(logp)
    sv = sv / sv[0]
    n, vocab = logp.shape
    return {"width": head.in_features, "output_bias": bias, "contexts": n, "vocab": vocab,
            "rank_h": rank_h, "rank_logits": rank_logits, "rank_logprobs": rank_logp, "bound": bound,
            "binding": bound < min(n, vocab), "holds": rank_logp <= bound,
            # the last singular value inside the bound and the first beyond it, relative to the largest
            "sv_at_bound": float(sv[bound - 1]) if bound <= len(sv) else None,
            "sv_past_bound": float(sv[bound]) if bound < len(sv) else None}


def _random_models(seed: int, vocab: int = 300):
    """A small MLP and GPT with every weight random, biases and LayerNorm shifts included (as
    training leaves them; at initialisation ln_f's shift is 0, which costs the GPT one rank)."""

    torch.manual_seed(seed)
    mlp = MLPLM(MLPConfig(vocab_size=vocab, pad_id=0, block_size=3, n_embd=16, n_hidden=32))
    gpt = GPT(GPTConfig(vocab_size=vocab, context_length=16, n_embd=16, n_head=2, n_layer=1, dropout=0.0))
    with torch.no_grad():
        for p in gpt.parameters():
            p.normal_(0.0, 0.5)
    return [("mlp", mlp, 16), ("gpt", gpt, 16)]


def softmax_bottleneck(run_dir=None, contexts: int | None = None, random_contexts: bool = False,
                       seed: int = 0, log=None) -> dict:
    """The rank of log p(next token | context) over many contexts against its bound, for a run's
    model (contexts from its validation split, or random ids), or for a random MLP and GPT."""
    if contexts is not None and contexts < 2:
        raise UserError(f"{option('contexts', contexts)}: must be at least 2")
    gen = torch.Generator().manual_seed(seed)
    if run_dir is None:
        models, source = _random_models(seed), "random contexts"
    else:
        run = load_run(run_dir)
        cfg = run.config
        models = [(cfg.model_type, run.model, cfg.train.seq_len)]  # seq_len: resolved by RunConfig
        source = "random contexts" if random_contexts else "the validation split"
    results = []
    for name, model, seq_len in models:
        head = _output_layer(model)
        want = contexts or max(256, 2 * (head.in_features + 2))
        # float64 (contexts, width) h and (contexts, vocab) logits, log-probabilities and the SVD's copy
        check_memory(8 * want * (head.in_features + 3 * head.out_features) + 8 * want * min(want, head.out_features),
                     f"{option('contexts', f'{want:,}')} x a {head.out_features:,}-token vocabulary (float64 matrices)",
                     f"use a smaller {option('contexts')}")
        n_windows = math.ceil(want / seq_len)
        if source == "random contexts":
            windows = torch.randint(0, head.out_features, (n_windows, seq_len), generator=gen)
        else:
            windows = _val_windows(run, n_windows, seq_len, log)
        results.append({"model": name, **rank_study(model, windows, want)})
    return {"source": source, "run": None if run_dir is None else str(run_dir), "models": results}


def _val_tokens(run, log, fix: str) -> np.ndarray:
    data = run_data(run, log)
    if data is None:
        raise UserError(f"{run.dir} has no validation split of its own (an imported model){fix}")
    return np.asarray(data.tokens("val"), dtype=np.int64)


def _val_windows(run, n: int, seq_len: int, log) -> torch.Tensor:
    """n windows of seq_len tokens spread evenly over the run's validation split."""
    val = _val_tokens(run, log, "; add --random")
    if len(val) < seq_len:
        raise UserError(f"the validation split has {len(val)} tokens, fewer than one window of {seq_len}; add --random")
    starts = np.linspace(0, len(val) - seq_len, n).round().astype(np.int64)
    return torch.from_numpy(val[starts[:, None] + np.arange(seq_len)])


# ---------------------------------------------------------------------------------------- renumber

def permuted_model(model: MLPLM | GPT, inverse: torch.Tensor, output: bool) -> MLPLM | GPT:
    """A copy whose table row j is the old row inverse[j]; with output, the output rows (and bias)
    too, and the MLP's padding id follows. A tied head is untied when only the table moves."""
    m = copy.deepcopy(model)
    emb, head = m.token_embedding, _output_layer(m)
    tied = head.weight is emb.weight
    with torch.no_grad():
        emb.weight = nn.Parameter(emb.weight[inverse].clone())
        if output:
            head.weight = emb.weight if tied else nn.Parameter(head.weight[inverse].clone())
            if head.bias is not None:
                head.bias = nn.Parameter(head.bias[inverse].clone())
            if hasattr(m.config, "pad_id"):  # new id of the old padding token
                m.config = copy.copy(m.config)
                m.config.pad_id = int(torch.argsort(inverse)[m.config.pad_id])
    return m


def renumber(run_dir=None, seed: int = 0, max_tokens: int = 20_000, log=None) -> dict:
    """bpb of a trained model, of its table with permuted rows, and of the model relabelled
    consistently (table rows, output rows and the text's ids by the same permutation)."""
    if max_tokens < 2:
        raise UserError(f"{option('max_tokens', max_tokens)}: must be at least 2")
    if run_dir is None:
        model, tokens, token_bytes, seq_len, unit = _toy_model(seed, log or logging.info)
    else:
        run = load_run(run_dir)
        model, tokens, unit = run.model, _val_tokens(run, log, " to measure on"), "bits per byte"
        seq_len = run.config.train.seq_len
        token_bytes = run.tokenizer.token_bytes_for(model.token_embedding.weight.shape[0])
    rows = model.token_embedding.weight.shape[0]
    perm = torch.randperm(rows, generator=torch.Generator().manual_seed(seed))  # old id t gets new id perm[t]
    inverse = torch.argsort(perm)  # new id j was old id inverse[j]

    cases = {"original": (model, tokens, token_bytes),
             "table_rows_permuted": (permuted_model(model, inverse, output=False), tokens, token_bytes),
             "relabelled": (permuted_model(model, inverse, output=True), perm.numpy()[tokens], token_bytes[inverse.numpy()])}
    bpb = {name: evaluate_bpb(*case, seq_len, max_tokens=max_tokens) for name, case in cases.items()}
    return {"run": None if run_dir is None else str(run_dir), "unit": unit, "rows": rows, "seed": seed,
            "tokens": bpb["original"]["tokens"], **{name: r["bpb"] for name, r in bpb.items()},
            "relabelled_difference": bpb["relabelled"]["bpb"] - bpb["original"]["bpb"]}


def _toy_model(seed: int, log):
    """A small MLP trained in-process on a 64-token Markov chain (each token has two likely
    successors), measured in bits per token: every id counts as one byte."""
    vocab, n = 64, 40_000
    rng = np.random.default_rng(seed)
    successors = rng.integers(0, vocab, size=(vocab, 2))
    tokens = np.zeros(n, dtype=np.int64)
    for i in range(1, n):
        tokens[i] = successors[tokens[i - 1], int(rng.random() < 0.3)]
    torch.manual_seed(seed)
    model = MLPLM(MLPConfig(vocab_size=vocab, pad_id=0, block_size=2, n_embd=16, n_hidden=64, emb_init_std=0.1))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    gen = torch.Generator().manual_seed(seed)
    seq = 32
    for _ in range(300):
        starts = torch.randint(0, n - seq - 1, (32,), generator=gen).numpy()
        w = torch.from_numpy(tokens[starts[:, None] + np.arange(seq + 1)])
        _, loss = model(w[:, :-1], w[:, 1:])
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    log("lesson: trained a toy MLP on a 64-token Markov chain (300 steps)")
    return model, tokens, np.ones(vocab, dtype=np.int64), seq, "bits per token"
