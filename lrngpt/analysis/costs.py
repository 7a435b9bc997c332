"""What a width costs: parameter counts, bytes, leading MAC terms (the lecture on embedding tables, the
book chapter on width). The formulas count lrngpt.models exactly (a test compares them).
"""

from __future__ import annotations

import math

from lrngpt.core.validate import MAX_PARAMS, check_size, divisors
from lrngpt.errors import UserError, option
from lrngpt.models import FFN_KINDS
from lrngpt.models import GATED_FFNS as GATED


def gpt2_params(n_embd: int, n_layer: int, vocab: int = 50_257, context: int = 1_024) -> int:
    """Parameters of a released GPT-2 checkpoint (head tied), from its shape; 768 x 12: 124,439,808."""
    return (vocab + context) * n_embd + n_layer * (12 * n_embd * n_embd + 13 * n_embd) + 2 * n_embd


# GPT-2's four sizes: the widths the seed project's notes list (768, 1,024, 1,280, 1,600, "each tied to its
# model's depth and training"), the depths of the GPT-2 paper's Table 2 that they cite (Radford et al. 2019).
GPT2_SIZES = [("GPT-2 small", 768, 12, 12, "117M"), ("GPT-2 medium", 1_024, 24, 16, "345M"),
              ("GPT-2 large", 1_280, 36, 20, "762M"), ("GPT-2 XL", 1_600, 48, 25, "1,542M")]

# Whole-model parameter counts the reference table divides by: GPT-2's counted from the shapes of its
# released checkpoints, the others published figures.
REFERENCE_MODELS = [
    # name, width d, vocabulary V, whole-model parameters, ties input and output tables?, source, layers
    *[(name, d, 50_257, gpt2_params(d, layers), True,
       f"{gpt2_params(d, layers):,}: the released checkpoint, counted from its shape ({layers} layers, {heads} heads; "
       f"Radford et al. 2019, Table 2, list {paper})", layers) for name, d, layers, heads, paper in GPT2_SIZES],
    ("BERT-base", 768, 30_522, 110_000_000, True,
     "110M: Devlin et al. 2019, BERT paper, BERT-base (12 layers)", 12),
    ("Llama-3-8B", 4_096, 128_256, 8_030_000_000, False,
     "8.03B: Meta Llama 3 8B model card (8,030,261,248 parameters; 32 layers)", 32),
    ("GPT-3 175B", 12_288, 50_257, 175_000_000_000, None,
     "175B: Brown et al. 2020, GPT-3 paper, Table 2.1 (96 layers; tying not stated)", 96),
]


def _check_positive(**values: int) -> None:
    """Sizes `lrn cost` prices: far beyond any model (it only does arithmetic), but at most MAX_PARAMS
    so that listing the head counts of a width (divisors, found up to its square root) stays instant."""
    for name, v in values.items():
        check_size(option(name), v, high=MAX_PARAMS)


# ---------------------------------------------------------------------------------------------- MLP LM

def mlp_params(vocab: int, block: int, hidden: int, n_embd: int) -> dict:
    """Parameters of the Bengio-style MLP LM: V*d + (block*d*H + H) + (H*V + V)."""
    _check_positive(vocab=vocab, block=block, hidden=hidden, n_embd=n_embd)
    embedding = vocab * n_embd
    hid = block * n_embd * hidden + hidden
    output = hidden * vocab + vocab
    return {"n_embd": n_embd, "total": embedding + hid + output,
            "embedding": embedding, "hidden": hid, "output": output}


def mlp_cost_table(vocab: int, block: int, hidden: int, widths: list[int],
                   bpb: dict[int, float] | None = None) -> dict:
    """The chapter's parameter table, each step up in width adding (V + block*H) per unit of d; with `bpb`
    (val bpb by width) also the bpb saved over the previous row, per million parameters and per doubling."""
    if not widths:
        raise UserError(f"{option('n_embd')} is empty: give widths like 4,8,16")
    rows = [mlp_params(vocab, block, hidden, d) for d in widths]
    for prev, row in zip([None, *rows], rows, strict=False):
        row["added"] = None if prev is None else row["total"] - prev["total"]
        if bpb is None:
            continue
        row["val_bpb"] = bpb.get(row["n_embd"])
        before = None if prev is None else prev["val_bpb"]
        saved = None if before is None or row["val_bpb"] is None else before - row["val_bpb"]
        # a step of 4x in width is two doublings: the price of one is the saving over log2 of the step
        doublings = None if prev is None else math.log2(row["n_embd"] / prev["n_embd"])
        row.update(bpb_saved=saved,
                   bpb_saved_per_million=saved / (row["added"] / 1e6) if saved is not None and row["added"] else None,
                   doublings=doublings, bpb_saved_per_doubling=saved / doublings if saved is not None and doublings else None)
    return {"vocab": vocab, "block": block, "hidden": hidden,
            "params_per_width_unit": vocab + block * hidden, "rows": rows}


def bpb_series(rows: list, key=lambda row: None) -> dict:
    """Mean val bpb by width (seeds averaged) of a sweep's summary rows, per series `key(row)`; rows
    without an int n_embd and a finite val_bpb are skipped."""
    found: dict = {}
    for row in rows:
        if not isinstance(row, dict):
            continue
        d, v = row.get("n_embd"), row.get("val_bpb")
        if (isinstance(d, int) and not isinstance(d, bool) and isinstance(v, (int, float))
                and math.isfinite(v)):
            found.setdefault(key(row), {}).setdefault(d, []).append(float(v))
    return {k: {d: sum(vs) / len(vs) for d, vs in sorted(by.items())} for k, by in found.items()}


def bpb_by_width(rows: list, where: str = "the sweep summary") -> dict[int, float]:
    """Validation bpb by width from a sweep's summary rows, seeds averaged (`bpb_series`)."""
    series = bpb_series(rows)
    if not series:
        raise UserError(f"{where}: no rows with both n_embd and val_bpb")
    return series[None]


# ------------------------------------------------------------------------------------------------- GPT

def gpt_params(vocab: int, context: int, n_embd: int, n_layer: int, ffn: str = "gelu",
               ffn_mult: float = 4, tied: bool = False, qkv_bias: bool = False) -> dict:
    """Parameter breakdown of lrngpt's GPT, matching lrngpt/models/gpt.py layer by layer."""
    _check_positive(vocab=vocab, context=context, n_embd=n_embd, layers=n_layer)
    d, hidden = n_embd, ffn_hidden(n_embd, ffn_mult)
    if ffn not in FFN_KINDS:
        raise UserError(f"{option('ffn', ffn)}: choose one of {', '.join(FFN_KINDS)}")
    # gated FFNs produce 2*hidden in the first projection (value and gate), as in the seed project
    ffn_params = (2 if ffn in GATED else 1) * d * hidden + hidden * d
    attn = 3 * d * d + (3 * d if qkv_bias else 0) + d * d
    per_block = 2 * d + attn + 2 * d + ffn_params  # LayerNorm, attention, LayerNorm, FFN
    blocks = n_layer * per_block + 2 * d  # + the final LayerNorm
    token, position = vocab * d, context * d
    head = 0 if tied else d * vocab
    return {"total": token + position + blocks + head, "token_embedding": token,
            "position_embedding": position, "blocks": blocks, "per_block": per_block, "lm_head": head}


def ffn_hidden(n_embd: int, ffn_mult: float) -> int:
    if not (ffn_mult > 0 and math.isfinite(ffn_mult)):
        raise UserError(f"{option('ffn_mult', ffn_mult)}: must be a positive number, e.g. 4")
    hidden = ffn_mult * n_embd
    if abs(hidden - round(hidden)) > 1e-9:
        raise UserError(f"{option('ffn_mult', ffn_mult)} x {option('n_embd', n_embd)} = {hidden}: the FFN width must be whole")
    return int(round(hidden))


def memory_bytes(params: int) -> dict:
    """Bytes for weights, + gradients, + AdamW's two moments, in fp32 and in bf16 training."""
    return {
        "convention": ("fp32: weights, gradients and both AdamW moments in fp32 (4+4+8 bytes/param); "
                       "bf16: bf16 weights and gradients with fp32 AdamW moments (2+2+8 bytes/param), "
                       "no fp32 master copy; activations, buffers and allocator overhead not counted"),
        "fp32": {"weights": 4 * params, "with_grads": 8 * params, "with_adamw": 16 * params},
        "bf16": {"weights": 2 * params, "with_grads": 4 * params, "with_adamw": 12 * params},
    }


def leading_terms(vocab: int, context: int, n_embd: int, batch: int, length: int,
                  ffn: str = "gelu", ffn_mult: float = 4) -> dict:
    """The leading matrix terms of one full-sequence forward (biases and norms left out): projection and
    FFN (4 + 2r) B N D^2 (4 + 3r gated), attention pairs 2 B N^2 D, lm_head B N D V."""
    hidden = ffn_hidden(n_embd, ffn_mult)
    ffn_matrix = (3 if ffn in GATED else 2) * n_embd * hidden
    block_matrix = 4 * n_embd * n_embd + ffn_matrix
    return {
        "token_parameters": vocab * n_embd,
        "position_parameters": context * n_embd,
        "block_matrix_parameters": block_matrix,
        "projection_ffn_macs": batch * length * block_matrix,
        "attention_pair_macs": 2 * batch * length * length * n_embd,
        "lm_head_macs": batch * length * n_embd * vocab,
    }


def head_split(n_embd: int, heads: int) -> dict:
    """Whether D splits equally over H heads; if not, the head counts that would."""
    valid = n_embd % heads == 0
    return {"n_embd": n_embd, "heads": heads, "valid": valid,
            "head_dim": n_embd // heads if valid else None,
            "valid_heads": divisors(n_embd)}


def gpt_cost(vocab: int, context: int, n_embd: int, heads: int, n_layer: int, ffn: str = "gelu",
             ffn_mult: float = 4, tied: bool = False, qkv_bias: bool = False,
             batch: int = 1, length: int | None = None) -> dict:
    """Everything `lrn cost gpt` reports: parameters, bytes, leading terms and their ratio at 2D."""
    length = context if length is None else length
    _check_positive(heads=heads, batch=batch, length=length)
    if length > context:
        raise UserError(f"{option('length', length)} is longer than {option('context', context)}; the position table has no row for it")
    params = gpt_params(vocab, context, n_embd, n_layer, ffn, ffn_mult, tied, qkv_bias)
    terms = leading_terms(vocab, context, n_embd, batch, length, ffn, ffn_mult)
    doubled = leading_terms(vocab, context, 2 * n_embd, batch, length, ffn, ffn_mult)
    return {
        "config": {"vocab": vocab, "context": context, "n_embd": n_embd, "heads": heads, "layers": n_layer,
                   "ffn": ffn, "ffn_mult": ffn_mult, "tied": tied, "qkv_bias": qkv_bias,
                   "batch": batch, "length": length},
        "params": params,
        "bytes": memory_bytes(params["total"]),
        "leading_terms": terms,
        "ratio_when_width_doubles": {k: doubled[k] / terms[k] for k in terms},
        "head_split": head_split(n_embd, heads),
    }


# ------------------------------------------------------------------------------------ reference models

def reference_table() -> list[dict]:
    """One V*d table against the whole model, what tying saves, and depth and width / depth per model;
    shares are of the model as if untied, so Llama-3-8B reads 13% and 6.5% as in the lecture."""
    rows = []
    for name, d, vocab, total, tied, source, layers in REFERENCE_MODELS:
        table = vocab * d
        untied_total = total + table if tied else total
        rows.append({
            "model": name, "n_embd": d, "n_layer": layers, "aspect_ratio": d / layers, "vocab": vocab, "table": table,
            "model_params": total, "table_share": table / total, "ties_embeddings": tied,
            "untied_total": untied_total, "untied_pair": 2 * table, "untied_pair_share": 2 * table / untied_total,
            "tying_saves": table, "tying_saves_share": table / untied_total, "source": source,
        })
    return rows
