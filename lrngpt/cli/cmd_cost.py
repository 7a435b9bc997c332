"""`lrn cost`: parameters, bytes and leading MAC terms of a width, before building anything."""

from __future__ import annotations

import argparse

import lrngpt.api as api
from lrngpt.api.frontend import CHAPTER_WIDTHS, FFN_KINDS, nearest
from lrngpt.cli.common import command, emit, group, int_list, positive_int

TIED = {True: "yes", False: "no", None: "?"}


def register(subparsers) -> None:
    sub = group(subparsers, "cost", "parameter, memory and compute cost of a width",
        "What the embedding width costs, computed from the formulas before anything is built: the "
        "MLP LM's parameter table over widths, a GPT's parameters, bytes and leading compute terms, "
        "and the embedding tables of well-known models.",
        "examples:\n  lrn cost mlp\n  lrn cost gpt --vocab 50257 --context 1024 --n-embd 768 --heads 12 "
        "--layers 12 --tied\n  lrn cost models")
    mlp = command(sub, "mlp", run_mlp, "parameter table of the MLP LM over widths",
        "Parameters of the MLP LM for each width d: V*d + (block*d*H + H) + (H*V + V), and what each step up in "
        "width adds. The defaults are the book chapter's MLP; with --sweep, what each step saved in val bpb.",
        "examples:\n  lrn cost mlp\n  lrn cost mlp --vocab 8192 --n-embd 32,64,128\n"
        "  lrn cost mlp --sweep runs/embed-dim --json")
    mlp.add_argument("--vocab", type=positive_int, default=4096, help="vocabulary size V")
    mlp.add_argument("--block", type=positive_int, default=6, help="previous tokens the model sees")
    mlp.add_argument("--hidden", type=positive_int, default=512, help="hidden width H")
    mlp.add_argument("--n-embd", dest="n_embd_given", type=int_list, default=None,
                     help="comma-separated widths d (default: the sweep's widths with --sweep, else the book "
                          f"chapter's {','.join(map(str, CHAPTER_WIDTHS))})")
    mlp.add_argument("--sweep", metavar="DIR",
                     help="a sweep directory with summary.json: add bpb saved per step and per million "
                          "parameters (default: parameters only)")
    gpt = command(sub, "gpt", run_gpt, "parameters, bytes and MAC terms of a GPT",
        "Parameter breakdown, training memory, the leading MAC terms of one "
        "forward and their ratio when the width doubles, and the head split.",
        "examples:\n  lrn cost gpt --vocab 4096 --context 256\n"
        "  lrn cost gpt --vocab 50257 --context 1024 --n-embd 768 --heads 12 --layers 12 "
        "--tied --json")
    gpt.add_argument("--vocab", type=positive_int, required=True, help="vocabulary size V")
    gpt.add_argument("--context", type=positive_int, required=True, help="context length T (position table rows)")
    gpt.add_argument("--n-embd", type=positive_int, default=256, help="model width D")
    gpt.add_argument("--heads", type=positive_int, default=8, help="attention heads H")
    gpt.add_argument("--layers", type=positive_int, default=6, help="transformer blocks L")
    gpt.add_argument("--ffn", choices=FFN_KINDS, default="gelu", help="the feed-forward kind")
    gpt.add_argument("--ffn-mult", type=positive_int, default=4, help="feed-forward expansion r")
    gpt.add_argument("--tied", action="store_true", help="the LM head shares the token table")
    gpt.add_argument("--qkv-bias", action="store_true", help="the qkv projection has a bias")
    gpt.add_argument("--batch", type=positive_int, default=1, help="batch B for the MAC terms")
    gpt.add_argument("--length", type=positive_int,
                     help="sequence length N for the MAC terms (default: the context length)")
    command(sub, "models", run_models, "embedding tables of GPT-2, BERT, Llama-3, GPT-3",
        "One V*d table of each model against the whole model, the pair of input and output tables when untied, "
        "and what tying them saves; each model's depth and width / depth (GPT-2's four sizes, small to XL).",
        "examples:\n  lrn cost models\n  lrn cost models --json")


def run_mlp(args: argparse.Namespace) -> None:
    result = api.cost_mlp(args.vocab, args.block, args.hidden, args.n_embd_given, args.sweep or None)
    bpb = args.sweep or None  # with a sweep, each row has its val bpb and what each step saved
    lines = [f"## MLP LM parameters (V={args.vocab:,}, block {args.block}, hidden {args.hidden})"]
    for r in result["rows"]:
        line = (f"d={r['n_embd']:>4} | parameters {r['total']:>10,} (embedding {r['embedding']:>9,}, "
                f"hidden {r['hidden']:>9,}, output {r['output']:>9,})")
        if r["added"] is not None:
            line += f" | added {r['added']:>9,}"
        if bpb is not None:
            line += " | val bpb " + ("   -  " if r["val_bpb"] is None else f"{r['val_bpb']:.4f}")
            if r["bpb_saved"] is not None:
                line += f" | saved {r['bpb_saved']:.4f} ({r['bpb_saved_per_million']:.4f} per million added)"
                if r["doublings"] and abs(r["doublings"] - 1) > 1e-9:  # a step of several doublings
                    line += f", {r['bpb_saved_per_doubling']:.4f} per doubling over {r['doublings']:g}"
        lines.append(line)
    unit = result["params_per_width_unit"]
    lines.append(f"each unit of width adds V + block*H = {unit:,} parameters: d -> 2d adds {unit:,}*d")
    emit(args, result, "\n".join(lines))


def run_gpt(args: argparse.Namespace) -> None:
    r = api.cost_gpt(args.vocab, args.context, args.n_embd, args.heads, args.layers, args.ffn, args.ffn_mult, args.tied,
                 args.qkv_bias, args.batch, args.length)
    c, p, b, t = r["config"], r["params"], r["bytes"], r["leading_terms"]
    d = c["n_embd"]
    lines = [f"## GPT V={c['vocab']:,} T={c['context']:,} D={d} H={c['heads']} L={c['layers']} "
             f"ffn={c['ffn']} x{c['ffn_mult']:g}" + (" tied" if c["tied"] else "") + (" qkv-bias" if c["qkv_bias"] else ""),
             f"parameters           {p['total']:>16,}",
             f"  token_embedding    {p['token_embedding']:>16,}  (fp32 {4 * p['token_embedding']:,} bytes)",
             f"  position_embedding {p['position_embedding']:>16,}",
             f"  blocks             {p['blocks']:>16,}  ({p['per_block']:,} per block + final LayerNorm)",
             f"  lm_head            {p['lm_head']:>16,}" + ("  (tied to the token table)" if c["tied"] else ""),
             f"bytes                {'fp32':>16} {'bf16':>16}"]
    for key, label in (("weights", "weights"), ("with_grads", "+ gradients"), ("with_adamw", "+ AdamW moments")):
        lines.append(f"  {label:<18} {b['fp32'][key]:>16,} {b['bf16'][key]:>16,}")
    lines.append(f"  ({b['convention']})")
    lines.append(f"leading terms of one forward, B={c['batch']} N={c['length']}:")
    for key, value in t.items():
        ratio = r["ratio_when_width_doubles"][key]
        lines.append(f"  {key:<24} {value:>22,}   D:{d}->{2 * d} ratio={ratio:.1f}")
    h = r["head_split"]
    if h["valid"]:
        lines.append(f"D={d}, heads={h['heads']}: head_dim={h['head_dim']}")
    else:
        shown = nearest(h["valid_heads"], h["heads"])
        more = f"; {len(h['valid_heads'])} in all" if len(shown) < len(h["valid_heads"]) else ""
        lines.append(f"D={d}, heads={h['heads']}: head_dim=invalid equal split "
                     f"(valid head counts for D={d}: {', '.join(map(str, shown))}{more})")
    emit(args, r, "\n".join(lines))


def run_models(args: argparse.Namespace) -> None:
    rows = api.cost_models()
    lines = [f"{'model':<12} {'layers':>6} {'d_model':>7} {'d/L':>5} {'vocab':>8} {'one table V*d':>14} {'whole model':>15}"
             f" {'share':>6} {'tied':>5} {'untied 2Vd':>14} {'share':>6} {'tying saves':>12}"]
    for r in rows:
        lines.append(f"{r['model']:<12} {r['n_layer']:>6} {r['n_embd']:>7,} {r['aspect_ratio']:>5.1f} {r['vocab']:>8,} "
                     f"{r['table']:>14,} {r['model_params']:>15,}"
                     f" {100 * r['table_share']:>5.2f}% {TIED[r['ties_embeddings']]:>5} {r['untied_pair']:>14,} {100 * r['untied_pair_share']:>5.2f}%"
                     f" {100 * r['tying_saves_share']:>11.2f}%")
    lines.append("shares of the untied pair and of the saving are of the model without tying")
    lines.append("whole-model totals: " + "; ".join(r["source"] for r in rows))
    emit(args, {"rows": rows}, "\n".join(lines))
