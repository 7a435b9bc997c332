"""What each config key and named config is: the text of `lrn config list | show | keys`."""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

from lrngpt.core.validate import field_types
from lrngpt.runconfig.schema import DataConfig, RunConfig, TrainConfig, flat_keys, model_class
from lrngpt.runconfig.values import DERIVED, SECTIONS

# One line per config key (`lrn config show`, `lrn config keys`); a test checks it covers every field.
KEY_HELP = {
    "model_type": "which model: mlp (the book chapter's MLP language model) or gpt (a transformer)",
    "name": "the run's name in tables and reports (default: the preset or file name)",
    "data.corpus": "where documents come from: stories[:SIZE], text:PATH, tinystories[:PATH], nsmc[:PATH], "
                   "jsonl:PATH[:FIELD], parquet:PATH[:COLUMN], hf:NAME[@REV][:CONFIG][:SPLIT][:COLUMN][?stream]",
    "data.vocab_size": "tokens in the byte-level BPE vocabulary (at least 257: 256 bytes and <|endoftext|>)",
    "data.val_fraction": "share of documents drawn into the validation split (corpora without their own split)",
    "data.split_seed": "seed of the draw that puts each document (or chunk) into train or validation",
    "data.val_split": "what becomes validation: documents (a seeded draw of whole documents; the last "
                      "val_fraction of the tokens when there are too few) or chunks (seeded chunks from all "
                      "over the text, for a one-document corpus)",
    "data.train_tokens": "train on only this prefix of the training tokens (null: all of them)",
    "data.tokenizer_bytes": "the tokenizer trains on at most this many characters of the training split",
    "model.vocab_size": "rows of the token table and of the output layer",
    "model.pad_id": "MLP: the id that fills the context before a window's first token (<|endoftext|>)",
    "model.block_size": "MLP: how many previous tokens the model sees to predict the next",
    "model.n_embd": "embedding width d: the length of each token's vector (GPT: also the model width)",
    "model.n_hidden": "MLP: width of the tanh hidden layer",
    "model.emb_init_std": "MLP: std of the token table's normal initialisation (null: PyTorch's 1.0)",
    "model.context_length": "GPT: the longest window; rows of the position table",
    "model.n_head": "GPT: attention heads per block (they must divide n_embd)",
    "model.n_layer": "GPT: transformer blocks",
    "model.dropout": "GPT: dropout probability on embeddings, attention and block outputs",
    "model.ffn": "GPT: feed-forward kind: gelu, relu, swiglu or geglu (gated kinds double the first projection)",
    "model.ffn_mult": "GPT: feed-forward hidden width as a multiple of n_embd",
    "model.norm_position": "GPT: LayerNorm before each sublayer (pre) or after the residual sum (post)",
    "model.qkv_bias": "GPT: the query/key/value projection has a bias",
    "model.tie_embeddings": "GPT: the output layer shares the token table's weights",
    "model.init_std": "GPT: std of the normal initialisation of weights and tables",
    "model.bias": "GPT: biases on the attention output and feed-forward layers (GPT-2 imports have them)",
    "model.gelu_approximate": "GPT: GELU as exact erf (none) or GPT-2's tanh approximation (tanh)",
    "model.layer_norm_eps": "GPT: epsilon added to the variance in LayerNorm",
    "model.aspect_ratio": "GPT: the width from the depth instead of model.n_embd (nanochat's rule): n_embd = n_layer x "
                          "aspect_ratio rounded up to a multiple of model.head_dim, n_head = n_embd / head_dim",
    "model.head_dim": "GPT: the size of each attention head, n_embd / n_head; with model.aspect_ratio the width is "
                      "rounded up to a multiple of it (null: 128, nanochat's) and it sets n_head",
    "train.steps": "the final global step; also the length of the learning-rate schedule",
    "train.batch_size": "windows per optimizer step (the global batch when training on several GPUs)",
    "train.seq_len": "tokens per window (null: the GPT's context_length)",
    "train.lr": "peak learning rate of AdamW, reached after the warmup",
    "train.min_lr": "learning rate at the end of the cosine decay",
    "train.warmup_steps": "steps of linear warmup to train.lr, from train.lr / warmup_steps at the first step",
    "train.weight_decay": "AdamW weight decay on matrices and tables (not on biases or norms)",
    "train.beta1": "AdamW's first-moment decay",
    "train.beta2": "AdamW's second-moment decay",
    "train.grad_clip": "clip the gradient norm to this value (0: no clipping)",
    "train.eval_every": "steps between periodic validation evaluations (and checkpoints)",
    "train.eval_tokens": "validation tokens per periodic evaluation (null: all; which ones: train.eval_windows)",
    "train.train_eval_tokens": "training-text tokens for the final train bpb and the gap (0: skip it)",
    "train.eval_windows": "which windows a capped evaluation (eval_tokens, train_eval_tokens) scores: spread evenly "
                          "over the split, or the split's prefix (its first tokens, as the book chapter measures)",
    "train.seed": "seed of the model's initialisation and of the batch draws",
    "train.device": "where to train: auto, cpu, cuda, cuda:N or mps",
    "train.dtype": "auto (bfloat16 on a GPU that has it, float16 + loss scaling on one that does not, float32 on a "
                   "CPU or MPS), or float32, bfloat16, float16 (autocast, on any device)",
    "train.tf32": "float32 matmuls as TF32 on CUDA GPUs of capability 8.0 on (A100, H100, L4); no effect elsewhere",
    "train.compile": "run the model through torch.compile",
    "train.log_every": "steps between log lines",
    "train.save_every": "also checkpoint every N steps (0: only at evaluations and at the end)",
    "train.tensorboard": "also write the metrics to RUN_DIR/tensorboard (needs the tensorboard extra); "
                         "the same as adding tensorboard to train.logger",
    "train.logger": "experiment trackers fed the metrics: none, all, or any of tensorboard, wandb, mlflow, csv, "
                    "comma-separated or a list (each needs its extra; csv writes RUN_DIR/metrics.csv)",
    "train.max_days": "refuse to start a run estimated to take longer than this many days (a run that could take "
                      "over a minute is timed for a few steps first and its estimate logged); 0: no limit",
}

# What each named config is, for `lrn config list` and the help texts.
PRESET_ABOUT = {
    "mlp-chapter": "the book chapter's MLP LM and protocol on TinyStories (lrn's choice: the chapter does not name its "
                   "text), vocabulary 4096, block 6, d 64, hidden 512, 4,000 steps of 64 x 256 (a GPU job)",
    "mlp-cpu": "the chapter's MLP on the 5 MB stories corpus, 400 steps of 16 x 256: minutes on a laptop CPU",
    "mlp-tiny": "a seconds-long MLP for tests: stories:300KB, vocabulary 512, block 4, d 16, hidden 64, 30 steps",
    "gpt-default": "a GPT with GPTConfig's defaults (6 layers, 8 heads, d 256, context 256) on stories:5MB",
    "cpu": "the seed project's small GPT: 2 layers, 4 heads, d 48, context 32, vocabulary 300, stories:2MB",
    "gpt-book-4": "the book's 4-layer GPT: n_layer 4 x aspect_ratio 64 = width 256, 2 heads of 128 (nanochat's head "
                  "size), context 256, vocabulary 4096, stories:5MB; the book states only the depth and width",
    "gpt-book-8": "the book's 8-layer GPT: n_layer 8 x aspect_ratio 64 = width 512, 4 heads of 128 (nanochat's head "
                  "size), context 256, vocabulary 4096, stories:5MB; the book states only the depth and width",
    "nsmc": "the seed project's Korean GPT on NSMC movie reviews: post-norm, 4 layers, d 192, context 128, "
            "vocabulary 3000",
}


def describe(cfg: RunConfig) -> list[dict]:
    """Every key of a resolved config in file order: value, description, and for a derived key
    what sets it (`derived`, else None)."""
    values, derived = flat_keys(cfg.to_dict()), {**DERIVED, **width_derived(cfg)}
    return [{"key": row["key"], "value": values[row["key"]], "help": row["help"], "derived": derived.get(row["key"])}
            for row in key_table(cfg.model_type)]


def width_derived(cfg: RunConfig) -> dict[str, str]:
    """What a GPT's width keys follow from: n_embd and n_head from the aspect ratio, or head_dim from them."""
    m = cfg.model
    if cfg.model_type != "gpt":
        return {}
    if m.aspect_ratio is None:
        return {"model.head_dim": f"n_embd {m.n_embd} / n_head {m.n_head}"}
    rule = (f"n_layer {m.n_layer} x aspect_ratio {m.aspect_ratio} = {m.n_layer * m.aspect_ratio:,}, rounded up to a "
            f"multiple of head_dim {m.head_dim}")
    return {"model.n_embd": rule, "model.n_head": f"n_embd {m.n_embd} / head_dim {m.head_dim}"}


def width_line(cfg: RunConfig) -> str | None:
    """One line saying a GPT's shape and, where an aspect ratio gave it, how (lrn train --dry-run)."""
    if cfg.model_type != "gpt":
        return None
    m = cfg.model
    how = "" if m.aspect_ratio is None else f" (width: {width_derived(cfg)['model.n_embd']})"
    return (f"model: {m.n_layer} layers of width {m.n_embd}{how}, {m.n_head} heads of {m.head_dim}; "
            f"d_model / n_layer = {m.n_embd / m.n_layer:.3g}")


def key_table(model_type: str) -> list[dict]:
    """Every key a config of `model_type` takes: its type, its default (None: required or derived)
    and its description."""
    rows: list[dict[str, Any]] = []
    for prefix, cls in (("", RunConfig), ("data.", DataConfig), ("model.", model_class(model_type)),
                        ("train.", TrainConfig)):
        hints = field_types(cls)
        for f in dataclasses.fields(cls):
            key, has_default = prefix + f.name, f.default is not dataclasses.MISSING
            if key not in SECTIONS:  # (RunConfig's own fields: model_type and name)
                rows.append({"key": key, "type": _type_name(hints[f.name]), "default": f.default if has_default
                             else None, "required": not has_default and key not in DERIVED,
                             "derived": DERIVED.get(key), "help": KEY_HELP[key]})
    return rows


def _type_name(annotation: Any) -> str:
    if typing.get_origin(annotation) in (types.UnionType, typing.Union):
        return " or ".join("null" if a is type(None) else a.__name__ for a in typing.get_args(annotation))
    return getattr(annotation, "__name__", str(annotation))
