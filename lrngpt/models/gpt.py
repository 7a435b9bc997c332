"""The GPT language model of the seed project: learned token + position tables, a stack of
Transformer blocks, a final LayerNorm and a linear LM head, optionally tied to the token table.
Read top to bottom: GPTConfig -> InputEmbedding -> attention -> FeedForward -> Block -> GPT.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from lrngpt.core.validate import (
    MAX_DIM,
    MAX_FFN_MULT,
    MAX_LAYERS,
    MAX_PARAMS,
    check_fields,
    check_size,
    divisors,
    nearest,
)
from lrngpt.errors import UserError
from lrngpt.models import FFN_KINDS, GATED_FFNS, NANOCHAT_HEAD_DIM, nanochat_shape
from lrngpt.models.dropout import Dropout, causal_attention, own_mask
from lrngpt.models.loss import cross_entropy

NORM_POSITIONS = ("pre", "post")
GELU_APPROXIMATIONS = ("none", "tanh")


class ContextLengthError(UserError, ValueError):
    """A sequence longer than the position table; a UserError, so the command line says it in one line."""


@dataclass
class GPTConfig:
    vocab_size: int
    context_length: int
    n_embd: int = 256
    n_head: int = 8
    n_layer: int = 6
    dropout: float = 0.1
    ffn: str = "gelu"
    ffn_mult: int = 4
    norm_position: str = "pre"
    qkv_bias: bool = False
    tie_embeddings: bool = False
    init_std: float = 0.02
    bias: bool = False  # biases on the attention output and the FFN linears (GPT-2 imports have them)
    gelu_approximate: str = "none"  # GPT-2 uses "tanh"
    layer_norm_eps: float = 1e-5
    # The width from the depth, nanochat's rule (lrngpt.models.nanochat_shape; lrngpt.runconfig.width
    # fills n_embd and n_head from it): here both forms must agree. Else head_dim is n_embd / n_head.
    aspect_ratio: int | None = None
    head_dim: int | None = None

    def __post_init__(self):
        check_fields(self, "model")  # types first: ints, finite floats, strings, booleans
        check_size("model.vocab_size", self.vocab_size, high=2**32)
        check_size("model.n_layer", self.n_layer, high=MAX_LAYERS)
        if self.aspect_ratio is not None:  # before n_embd's own range: the aspect ratio is what was given
            self._check_aspect_ratio(self.aspect_ratio)
        for name in ("context_length", "n_embd", "n_head"):
            check_size(f"model.{name}", getattr(self, name), high=MAX_DIM)
        check_size("model.ffn_mult", self.ffn_mult, high=MAX_FFN_MULT)
        if self.n_embd % self.n_head != 0:
            heads = divisors(self.n_embd)
            shown = nearest(heads, self.n_head)
            more = f" ({len(heads)} in all)" if len(shown) < len(heads) else ""
            raise UserError(f"n_embd {self.n_embd} is not divisible by n_head {self.n_head}; "
                            f"valid head counts for {self.n_embd}: {', '.join(map(str, shown))}{more}")
        if self.head_dim is not None and self.head_dim * self.n_head != self.n_embd:
            raise UserError(f"model.head_dim {self.head_dim} disagrees with model.n_embd {self.n_embd} / model.n_head "
                            f"{self.n_head} = {self.n_embd // self.n_head}; leave head_dim out (it is n_embd / n_head), "
                            "or give model.aspect_ratio, with which head_dim sets the heads")
        self.head_dim = self.n_embd // self.n_head
        for name, choices in (("ffn", FFN_KINDS), ("norm_position", NORM_POSITIONS),
                              ("gelu_approximate", GELU_APPROXIMATIONS)):
            if getattr(self, name) not in choices:
                raise UserError(f"unknown {name} {getattr(self, name)!r}; valid values: {', '.join(choices)}")
        if not 0 <= self.dropout < 1:
            raise UserError(f"model.dropout must be in [0, 1), got {self.dropout!r}")
        for name in ("init_std", "layer_norm_eps"):
            if not getattr(self, name) > 0:
                raise UserError(f"model.{name} must be a positive number, got {getattr(self, name)!r}")
        V, T, D, r = self.vocab_size, self.context_length, self.n_embd, self.ffn_mult
        params = (V + T) * D + self.n_layer * (4 + 3 * r) * D * D + V * D
        if params > MAX_PARAMS:
            raise UserError(f"this GPT would have about {params:,} parameters, above the limit of {MAX_PARAMS:,}; "
                            "lower model.n_embd, model.n_layer, model.context_length or data.vocab_size")

    def _check_aspect_ratio(self, aspect: int) -> None:
        """n_embd and n_head are what nanochat's rule gives for n_layer, aspect_ratio and head_dim."""
        head = NANOCHAT_HEAD_DIM if self.head_dim is None else self.head_dim
        check_size("model.aspect_ratio", aspect, high=MAX_DIM)
        check_size("model.head_dim", head, high=MAX_DIM)
        width, heads = nanochat_shape(self.n_layer, aspect, head)
        rule = (f"n_layer {self.n_layer} x aspect_ratio {aspect} = {self.n_layer * aspect:,}, rounded up to a "
                f"multiple of head_dim {head}: {width:,}")
        if width > MAX_DIM:
            raise UserError(f"model.aspect_ratio {aspect} gives a width above the limit of {MAX_DIM:,} ({rule}); "
                            "lower it")
        if self.n_embd != width:
            raise UserError(f"model.n_embd {self.n_embd} and model.aspect_ratio {aspect} both set the width and "
                            f"disagree ({rule}); give one of them")
        if self.n_head != heads:
            raise UserError(f"model.n_head {self.n_head} and model.aspect_ratio {aspect} disagree: with an aspect "
                            f"ratio the heads are n_embd / head_dim = {width:,} / {head} = {heads}; leave n_head out "
                            "and set model.head_dim for other heads")
        self.head_dim = head


class InputEmbedding(nn.Module):
    """Token lookup (B,T,D) + position lookup of arange(T) (T,D), broadcast over the batch, then dropout."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.context_length = config.context_length
        self.token = nn.Embedding(config.vocab_size, config.n_embd)
        self.position = nn.Embedding(config.context_length, config.n_embd)
        self.dropout = Dropout(config.dropout)

    def forward(self, idx: torch.Tensor, start: int = 0) -> torch.Tensor:
        end = start + idx.size(1)
        if end > self.context_length:
            raise ContextLengthError(f"sequence length {end} exceeds context_length {self.context_length}")
        # positions are made on the ids' device, so the model works wherever it was moved
        positions = torch.arange(start, end, device=idx.device)
        return self.dropout(self.token(idx) + self.position(positions))


def causal_mask(n_query: int, n_key: int, device=None) -> torch.Tensor:
    """(n_query, n_key) bool, True where attending is allowed. The queries are the last n_query of
    the n_key positions, so with a KV cache new tokens see every cached key and the earlier new ones."""
    ones = torch.ones(n_query, n_key, dtype=torch.bool, device=device)
    return ones.tril(diagonal=n_key - n_query)


def manual_attention(q, k, v, dropout_p: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(q k^T / sqrt(d) + causal mask) v, spelled out; returns (output, weights (B,H,Tq,Tk))."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    scores = scores.masked_fill(~causal_mask(q.size(-2), k.size(-2), q.device), float("-inf"))
    weights = scores.softmax(dim=-1)
    return F.dropout(weights, dropout_p) @ v, weights


class CausalSelfAttention(nn.Module):
    """Multi-head attention: D is split equally over H heads (GPTConfig checks D % H == 0)."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.n_head, self.dropout = config.n_head, config.dropout
        self.qkv = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.qkv_bias)
        self.proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.resid_dropout = Dropout(config.dropout)

    def forward(self, x, kv=None, return_weights: bool = False):
        """x (B,T,D). kv = (k_buffer, v_buffer, pos) from a KVCache: this chunk's keys/values are
        written at pos..pos+T-1 and the queries attend to all of 0..pos+T-1.
        return_weights=True takes the manual path and returns (y, weights)."""
        B, T, D = x.shape
        q, k, v = (
            t.view(B, T, self.n_head, D // self.n_head).transpose(1, 2) for t in self.qkv(x).split(D, 2)
        )
        if kv is not None:
            k_buffer, v_buffer, pos = kv
            k_buffer[:, :, pos : pos + T] = k
            v_buffer[:, :, pos : pos + T] = v
            k, v = k_buffer[:, :, : pos + T], v_buffer[:, :, : pos + T]
        dropout_p = self.dropout if self.training else 0.0
        weights = None
        if return_weights:
            y, weights = manual_attention(q, k, v, dropout_p)
        elif dropout_p > 0 and k.size(2) == T and own_mask(q):
            y = causal_attention(q, k, v, dropout_p)
        elif k.size(2) == T:
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=True)
        else:  # is_causal=True would align the mask top-left, wrong when queries are fewer than keys
            mask = causal_mask(T, k.size(2), x.device)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)
        y = self.resid_dropout(self.proj(y.transpose(1, 2).contiguous().view(B, T, D)))
        return (y, weights) if return_weights else y


class FeedForward(nn.Module):
    """Linear(D, rD) -> act -> Linear(rD, D); gated kinds widen the first projection to 2rD and
    multiply act(a) by b, as the seed project does (so they have 1.5x the FFN parameters)."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        hidden = config.ffn_mult * config.n_embd
        self.gated = config.ffn in GATED_FFNS
        self.up = nn.Linear(config.n_embd, 2 * hidden if self.gated else hidden, bias=config.bias)
        gelu = nn.GELU(approximate=config.gelu_approximate)
        self.act = {"gelu": gelu, "relu": nn.ReLU(), "swiglu": nn.SiLU(), "geglu": gelu}[config.ffn]
        self.down = nn.Linear(hidden, config.n_embd, bias=config.bias)
        self.dropout = Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.up(x)
        if self.gated:
            a, b = h.chunk(2, dim=-1)
            h = self.act(a) * b
        else:
            h = self.act(h)
        return self.dropout(self.down(h))


class Block(nn.Module):
    """pre-norm: x + attn(ln1(x)), then x + ffn(ln2(x)). post-norm (original Transformer):
    ln1(x + attn(x)), then ln2(x + ffn(x))."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.pre_norm = config.norm_position == "pre"
        self.ln1 = nn.LayerNorm(config.n_embd, eps=config.layer_norm_eps)
        self.attn = CausalSelfAttention(config)
        self.ln2 = nn.LayerNorm(config.n_embd, eps=config.layer_norm_eps)
        self.ffn = FeedForward(config)

    def forward(self, x: torch.Tensor, kv=None) -> torch.Tensor:
        if self.pre_norm:
            x = x + self.attn(self.ln1(x), kv)
            return x + self.ffn(self.ln2(x))
        x = self.ln1(x + self.attn(x, kv))
        return self.ln2(x + self.ffn(x))


@dataclass
class KVCache:
    """Keys and values of the tokens seen so far, per layer (B, H, max_len, head_dim)."""

    k: list[torch.Tensor]
    v: list[torch.Tensor]
    pos: int = 0  # how many positions are filled

    @property
    def max_len(self) -> int:
        return self.k[0].size(2)

    @property
    def batch_size(self) -> int:
        return self.k[0].size(0)


class GPT(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.config = config
        self.embedding = InputEmbedding(config)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layer))
        # kept for post-norm blocks too: one parameter formula, one head input scale for every variant
        self.ln_f = nn.LayerNorm(config.n_embd, eps=config.layer_norm_eps)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.apply(self._init_weights)
        if config.tie_embeddings:  # one Parameter, so parameters() yields it once
            self.lm_head.weight = self.embedding.token.weight

    def _init_weights(self, module: nn.Module):
        # Plain N(0, init_std) everywhere (no GPT-2 residual scaling): init_std is the one knob.
        if isinstance(module, nn.Linear | nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=self.config.init_std)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    @property
    def token_embedding(self) -> nn.Embedding:
        return self.embedding.token

    def param_breakdown(self) -> dict:
        count = lambda module: sum(p.numel() for p in module.parameters())  # noqa: E731
        parts = {
            "token_embedding": self.embedding.token.weight.numel(),
            "position_embedding": self.embedding.position.weight.numel(),
            "blocks": count(self.blocks) + count(self.ln_f),
            "lm_head": 0 if self.config.tie_embeddings else count(self.lm_head),
        }
        return {"total": count(self), **parts}  # count(self) sees a tied tensor once

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None):
        """idx (B,T) -> (logits (B,T,V) float32, mean cross-entropy over targets != -1 or None)."""
        x = self.embedding(idx)
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.ln_f(x)).float()
        loss = None
        if targets is not None:
            loss = cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
        return logits, loss

    def init_cache(self, batch_size: int, max_len: int) -> KVCache:
        """An empty cache for up to min(max_len, context_length) positions."""
        if batch_size <= 0 or max_len <= 0:
            raise ValueError(f"batch_size and max_len must be positive, got {batch_size} and {max_len}")
        c, p = self.config, self.lm_head.weight
        shape = (batch_size, c.n_head, min(max_len, c.context_length), c.n_embd // c.n_head)  # head_dim's value
        make = lambda: torch.zeros(shape, dtype=p.dtype, device=p.device)  # noqa: E731
        return KVCache(k=[make() for _ in self.blocks], v=[make() for _ in self.blocks])

    @torch.no_grad()
    def forward_step(self, idx_new: torch.Tensor, cache: KVCache) -> torch.Tensor:
        """Logits (B,t,V) for idx_new (B,t) at positions cache.pos..cache.pos+t-1; advances the cache."""
        B, t = idx_new.shape
        if B != cache.batch_size:
            raise ValueError(f"batch of {B} does not match the cache's batch of {cache.batch_size}")
        if cache.pos + t > cache.max_len:
            limit = self.config.context_length
            raise ContextLengthError(
                f"sequence length {cache.pos + t} exceeds context_length {limit}"
                if cache.pos + t > limit
                else f"sequence length {cache.pos + t} exceeds the KV cache's max_len {cache.max_len}"
            )
        x = self.embedding(idx_new, start=cache.pos)
        for block, k, v in zip(self.blocks, cache.k, cache.v, strict=True):
            x = block(x, (k, v, cache.pos))
        cache.pos += t
        return self.lm_head(self.ln_f(x)).float()
