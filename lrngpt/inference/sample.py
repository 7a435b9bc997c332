"""Sampling: temperature (0: greedy), top-k, top-p, seed, stop at <|endoftext|>.

The GPT decodes with its KV cache; once its window is full the context is cropped to context_length
and the cache rebuilt each step, exactly what the no-cache path computes. The MLP is fed only its
last block_size tokens. `sample_texts(..., on_text=f)` streams each sample's text as it grows.
"""

from __future__ import annotations

import codecs
import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import torch
from torch import nn

from lrngpt.errors import UserError, option
from lrngpt.models.gpt import GPT, KVCache
from lrngpt.runconfig.values import check_seed

MAX_NEW_TOKENS = 2**24  # one sample's length: about 16.8M tokens (the ids alone are kept in a list)


@dataclass
class SamplingConfig:
    max_new_tokens: int = 100
    temperature: float = 1.0
    top_k: int | None = None
    top_p: float = 1.0
    seed: int = 0
    stop_at_eot: bool = True

    def __post_init__(self):
        check_seed(self.seed)
        if self.max_new_tokens < 0:
            raise UserError(f"{option('max_new_tokens')} must not be negative (got {self.max_new_tokens})")
        if self.max_new_tokens > MAX_NEW_TOKENS:
            raise UserError(f"{option('max_new_tokens', f'{self.max_new_tokens:,}')} is above the limit of {MAX_NEW_TOKENS:,}; "
                            "ask for fewer")
        t = self.temperature
        if not (isinstance(t, int | float) and 0 <= t < math.inf):  # (NaN is refused: no comparison holds)
            raise UserError(f"{option('temperature')} must be 0 (greedy: the most likely token) or a positive number "
                            f"(got {t}); use 1.0 for plain sampling")
        if self.top_k is not None and self.top_k < 1:
            raise UserError(f"{option('top_k')} must be at least 1 (got {self.top_k})")
        p = self.top_p
        if not 0 < p <= 1:
            raise UserError(f"{option('top_p')} must be in (0, 1] (got {p}); 1.0 turns it off")


def filter_logits(logits: torch.Tensor, cfg: SamplingConfig) -> torch.Tensor:
    """Temperature, then top-k, then top-p (nucleus) on (B, V) logits (finite: generate checks them)."""
    scaled = logits / cfg.temperature
    if not torch.isfinite(scaled).all():  # a tiny temperature overflows: the same softmax from the top score
        shifted = logits - logits.max(dim=-1, keepdim=True).values
        if cfg.temperature >= torch.finfo(logits.dtype).tiny:
            scaled = shifted / cfg.temperature
        else:  # below what the dtype holds the division is by 0: the limit, all mass on the top score
            scaled = torch.where(shifted == 0, 0.0, float("-inf"))
    logits = scaled
    if cfg.top_k is not None and cfg.top_k < logits.size(-1):
        kth = torch.topk(logits, cfg.top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if cfg.top_p < 1.0:
        sorted_logits, order = torch.sort(logits, descending=True, dim=-1)
        probs = torch.softmax(sorted_logits, dim=-1)
        # drop a token when the tokens ranked above it already hold top_p of the mass
        drop = (probs.cumsum(dim=-1) - probs) >= cfg.top_p
        sorted_logits = sorted_logits.masked_fill(drop, float("-inf"))
        logits = torch.full_like(logits, float("-inf")).scatter(-1, order, sorted_logits)
    return logits


@torch.inference_mode()
def generate(model: nn.Module, prompt_ids: list[int], cfg: SamplingConfig, eot_id: int | None = None,
             use_cache: bool = True, device: str = "cpu", crop: bool = True,
             on_token: Callable[[int], None] | None = None) -> list[int]:
    """New token ids after `prompt_ids`, each handed to `on_token` as it is drawn. `crop=False` feeds
    the MLP the whole text each step (quadratic time: kept to prove the crop exact)."""
    if not prompt_ids:
        raise UserError(f"the prompt is empty; give some text with {option('prompt')}")
    model.eval()
    gen = torch.Generator(device=device).manual_seed(cfg.seed)
    # the MLP's last logits depend on its last block_size ids only (each step costs the same); the
    # GPT's positions end at context_length, so it is always cropped there
    config = getattr(model, "config", None)
    window = (getattr(config, "block_size", None) if crop else None) or getattr(config, "context_length", None)
    ids = torch.tensor([prompt_ids[-window:] if window else prompt_ids], dtype=torch.long, device=device)
    gpt = model if use_cache and isinstance(model, GPT) else None  # the GPT decodes through its KV cache
    cache: KVCache | None = None
    out: list[int] = []
    for _ in range(cfg.max_new_tokens):
        if gpt is None:
            logits = model(ids)[0][:, -1]
        elif cache is not None and cache.pos == ids.size(1) - 1:
            logits = gpt.forward_step(ids[:, -1:], cache)[:, -1]
        else:  # the first step, or the window moved on: every position shifted, the cached keys are stale
            cache = gpt.init_cache(ids.size(0), gpt.config.context_length)
            logits = gpt.forward_step(ids, cache)[:, -1]
        logits = logits.float()
        if not torch.isfinite(logits).all():
            raise UserError(_overflow(model))
        if cfg.temperature == 0:  # greedy: the first of the highest scores, as torch.argmax (and transformers)
            nxt = logits.argmax(dim=-1, keepdim=True)
        else:
            nxt = torch.multinomial(torch.softmax(filter_logits(logits, cfg), dim=-1), 1, generator=gen)
        out.append(int(nxt))
        if on_token is not None:
            on_token(out[-1])
        if cfg.stop_at_eot and out[-1] == eot_id:
            break
        ids = torch.cat([ids, nxt], dim=1)
        if window:
            ids = ids[:, -window:]  # all the model will ever look at
    return out


def _overflow(model: nn.Module) -> str:
    """Why finite weights gave scores that are not: they are too large for float32 arithmetic."""
    name, top = max(((n, float(p.detach().abs().max())) for n, p in model.named_parameters() if p.numel()),
                    key=lambda item: item[1], default=("", 0.0))
    return (f"the model's scores for the next token are not finite (inf or NaN), though its weights are: they are "
            f"too large for float32 arithmetic (the largest, in {name!r}, is {top:.3g}); this checkpoint cannot be "
            "sampled: was it edited by hand, or did its training diverge? (retrain with a lower train.lr)")


def sample_texts(run, prompt: str, cfg: SamplingConfig, num_samples: int = 1, use_cache: bool = True,
                 device: str = "cpu", on_text: Callable[[int, str], None] | None = None) -> list[dict]:
    """`num_samples` continuations of `prompt` from a loaded run, with seeds seed, seed+1, ...;
    `on_text(i, piece)` gets sample i's text as it grows, the pieces joining to its "text"."""
    if num_samples < 1:
        raise UserError(f"{option('num_samples')} must be at least 1 (got {num_samples})")

    check_seed(cfg.seed + num_samples - 1, f"{option('seed', cfg.seed)} + {option('num_samples', num_samples)}: the last seed")
    ids = run.tokenizer.encode(prompt)
    out = []
    tok = run.tokenizer
    for i in range(num_samples):
        on_token = None
        if on_text is not None:
            on_text(i, prompt)
            utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")  # what decode() does, in pieces

            def on_token(t: int, i=i, utf8=utf8) -> None:
                if t != tok.eot_id and (piece := utf8.decode(tok.decode_bytes([t]))):
                    on_text(i, piece)

        new = generate(run.model, ids, replace(cfg, seed=cfg.seed + i), eot_id=tok.eot_id,
                       use_cache=use_cache, device=device, on_token=on_token)
        text = tok.decode([t for t in new if t != tok.eot_id])
        if on_text is not None and (rest := utf8.decode(b"", final=True)):
            on_text(i, rest)
        out.append({"text": prompt + text, "completion": text, "tokens": len(new), "seed": cfg.seed + i})
    return out
