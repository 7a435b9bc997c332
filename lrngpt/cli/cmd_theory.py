"""`lrn theory` and `lrn cost` (lrngpt.api.theory): how many dimensions N tokens need (random cosines, JL
bound, fourth root, PIP loss), and what a width costs in parameters, bytes and leading MAC terms before building anything."""

from __future__ import annotations

import argparse

import lrngpt.api as api
from lrngpt.api.frontend import CHAPTER_WIDTHS, FFN_KINDS, nearest
from lrngpt.cli.common import command, emit, group, int_list, positive_int, seed

TIED = {True: "yes", False: "no", None: "?"}


def register(subparsers) -> None:
    sub = group(subparsers, "theory", "width theory: random cosines, JL bound, fourth-root rule",
        "The calculations behind the book chapter on choosing the embedding width: random cosines, the "
        "Johnson-Lindenstrauss bound, the fourth-root rule, and the PIP-loss-optimal width of a corpus.",
        "examples:\n  lrn theory random-cosine --n 4096 --dims 4,8,16,64,256\n"
        "  lrn theory jl --n 4096 --eps 0.5\n  lrn theory fourth-root --n 4096\n"
        "  lrn theory pip stories:5MB --sweep runs/embed-dim-cpu")
    rc = command(sub, "random-cosine", run_random_cosine, "cosines of N random vectors in d dimensions",
        "For each width d: the std of the cosines of all N(N-1)/2 pairs of N Gaussian vectors next to "
        "1/sqrt(d), the maximum, and the share with |cos| > 0.5. Exact over all pairs, in bounded memory.",
        "examples:\n  lrn theory random-cosine\n"
        "  lrn theory random-cosine --n 1000 --dims 2,3,4 --seed 1 --json")
    rc.add_argument("--n", type=int, default=4096,
                    help="number of vectors (4096 is the book chapter's vocabulary size)")
    rc.add_argument("--dims", type=int_list, default=[4, 8, 16, 64, 256], help="comma-separated widths d")
    rc.add_argument("--seed", type=seed, default=0, help="random seed of the vectors")
    jl = command(sub, "jl", run_jl, "Johnson-Lindenstrauss width bound",
        "Width k that keeps all pairwise distances of N points within 1 +- eps "
        "(Dasgupta-Gupta): k >= 24 ln N / (3 eps^2 - 2 eps^3).",
        "examples:\n  lrn theory jl --n 4096 --eps 0.5\n  lrn theory jl --n 50257 --eps 0.1 --json")
    jl.add_argument("--n", type=int, required=True, help="number of points (at least 2)")
    jl.add_argument("--eps", type=float, required=True,
                    help="allowed distortion, strictly between 0 and 1 (below about 1e-150 the bound "
                         "outgrows a float)")
    fr = command(sub, "fourth-root", run_fourth_root, "the fourth-root rule of thumb",
        "Embedding width = N ** 0.25 (TensorFlow feature columns' rule of thumb).",
        "examples:\n  lrn theory fourth-root --n 4096\n  lrn theory fourth-root --n 50257 --json")
    fr.add_argument("--n", type=int, required=True, help="number of categories, e.g. the vocabulary size")
    pp = command(sub, "pip", run_pip, "the PIP-loss-optimal width of a corpus, before training (Yin & Shen 2018)",
                 "Yin & Shen's dimensionality selection (NeurIPS 2018) on the training split of a prepared corpus: "
                 "the PMI matrix of the tokens within --window of each other, its spectrum, the noise estimated "
                 "from two halves of the text, and the PIP loss of every width k with its bias and variance beside "
                 "the paper's upper bound. With --sweep, the measured best width of a width sweep beside it.",
                 "examples:\n  lrn theory pip stories:5MB\n  lrn theory pip stories:5MB --sweep runs/embed-dim-cpu\n"
                 "  lrn theory pip stories:5MB --top 1000 --train-tokens 102400 --json")
    pp.add_argument("corpus", metavar="CORPUS", help="a corpus spec, as data.corpus: stories:5MB, text:PATH, ...")
    pp.add_argument("--vocab-size", type=positive_int, default=4096, help="the BPE's vocabulary (the book chapter's 4096)")
    pp.add_argument("--window", type=positive_int, default=6,
                    help="tokens on either side that count as context (the book chapter's MLP reads 6)")
    pp.add_argument("--alpha", type=float, default=0.5,
                    help="the exponent of the embedding E = U D^alpha, in (0, 1] (the paper's 0.5 for skip-gram "
                         "and GloVe)")
    pp.add_argument("--train-tokens", type=positive_int, metavar="N",
                    help="only the first N training tokens, as data.train_tokens (default: the whole split)")
    pp.add_argument("--top", type=positive_int, metavar="N",
                    help="only the N most frequent tokens as rows, as the authors' code keeps text8's 10,000 (default: "
                         "every token that occurs; a small text leaves most pairs of rare tokens unseen)")
    pp.add_argument("--seed", type=seed, default=0, help="random seed of the Monte Carlo noise")
    pp.add_argument("--sweep", metavar="DIR", help="a width sweep (lrn sweep --out DIR): its best width beside the "
                                                  "prediction")
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


def run_random_cosine(args: argparse.Namespace) -> None:
    rows = api.theory_random_cosine(args.n, args.dims, args.seed)
    lines = [f"## cosines of {args.n:,} random vectors of width d ({rows[0]['pairs']:,} distinct pairs, seed {args.seed})"]
    for r in rows:
        lines.append(f"d={r['d']:>4}: std {r['std']:.4f} (1/sqrt(d) = {r['inv_sqrt_d']:.4f}), "
                     f"max {r['max']:.4f}, |cos| > 0.5 in {100 * r['share_abs_gt_0_5']:.2f}% of pairs "
                     f"({r['count_abs_gt_0_5']:,} of {r['pairs']:,})")
    emit(args, {"rows": rows}, "\n".join(lines))


def run_jl(args: argparse.Namespace) -> None:
    k = api.theory_jl(args.n, args.eps)
    emit(args, {"k": k}, f"N={args.n:,}, eps={args.eps:g}: k >= {k:,.1f}  "
                         "(Dasgupta-Gupta: 24 ln N / (3 eps^2 - 2 eps^3))")


def run_fourth_root(args: argparse.Namespace) -> None:
    d = api.theory_fourth_root(args.n)
    emit(args, {"d": d}, api.theory.fourth_root_text(args.n, d))


def run_pip(args: argparse.Namespace) -> None:
    r = api.theory_pip(args.corpus, args.vocab_size, args.window, args.alpha, args.train_tokens, args.seed, args.top,
                   args.sweep)
    emit(args, r, "\n".join(pip_lines(r)))


def pip_lines(r: dict) -> list[str]:
    o, b = r["optimal"], r["bound"]
    part = f"the first {r['train_tokens']:,} training tokens" if r["train_tokens"] else "the training split"
    lines = [
        f"PIP loss (Yin & Shen 2018) of {r['corpus']}, {part}: {r['tokens']:,} tokens, {r['occurring']:,} of the "
        f"{r['vocab_size']:,} tokens occur" + (f", the {r['rows']:,} most frequent kept (--top)" if r["top"] else "")
        + f"; the PMI of tokens within {r['window']} of each other (either side); "
        f"E = U D^{r['alpha']:g}" + (" (the paper's exponent for skip-gram and GloVe)" if r["alpha"] == 0.5 else ""),
        f"noise sigma {r['noise_sigma']:.4f} = std(PMI of half 1 - PMI of half 2) / 2, the halves alternating "
        f"chunks of the text ({r['chunks']:,} chunks); {100 * r['zero_share']:.1f}% of the pairs never occur (PMI 0)",
        f"spectrum: largest singular value {r['largest_singular_value']:.1f}; {r['signal_rank']} above the noise "
        f"edge 2 sigma sqrt(n) = {r['threshold']:.2f} ({r['negative_directions']} of them negative eigenvalues): "
        f"signal rank {r['signal_rank']}",
        f"PIP-optimal width k = {o['k']}: PIP loss {o['pip_loss']:,.1f}, bias {o['bias']:,.1f}, variance "
        f"{o['variance']:,.1f} (with no embedding, k = 0: {r['pip_loss_without_embedding']:,.1f})",
        *(["no direction of the PMI matrix stands out of the noise usefully: every width's embedding is further "
            "from the noiseless one than no embedding at all"] if o["k"] == 0 else []),
        f"within 5% of the lowest loss: k = {r['within']['5%'][0]} ... {r['within']['5%'][1]}; within 10%: "
        f"k = {r['within']['10%'][0]} ... {r['within']['10%'][1]}",
        f"the paper's upper bound (main theorem): lowest at k = {b['k']}, bias {b['bias']:,.1f} + variance "
        f"{b['variance_singular_values']:,.1f} (singular values) + {b['variance_subspaces']:,.1f} (subspaces) "
        f"= {b['total']:,.1f}",
        f"{'k':>5} {'PIP loss':>10} {'x lowest':>9} {'bias':>10} {'variance':>10}",
    ]
    lines += [f"{w['k']:>5} {w['pip_loss']:>10,.1f} {w['relative_to_best'] or 0:>9.3f} {w['bias']:>10,.1f} "
              f"{w['variance']:>10,.1f}" for w in r["at_widths"]]
    sw = r.get("sweep")
    if sw:
        where = f"{sw['scale']} scale, {sw['corpus']}" + (f", first {sw['train_tokens']:,} tokens" if sw["train_tokens"] else "")
        at = sw["pip_loss_at_best_width"]
        lines.append(f"the sweep {sw['dir']} ({where}): measured best width d = {sw['best_width']} (val bpb "
                     f"{sw['best_val_bpb']:.4f}); predicted k = {sw['predicted_width']}, {sw['ratio']:.2f}x it; "
                     + (f"the PIP loss at d = {sw['best_width']} is {at:.3f}x the lowest, "
                        f"{'inside' if sw['best_width_within_5%'] else 'outside'} the 5% band" if at else
                        f"d = {sw['best_width']} is past the widths the PIP loss was computed for"))
        if not sw["same_text"]:
            lines.append(f"note: the sweep trained on {sw['corpus']}"
                         + (f" (first {sw['train_tokens']:,} tokens)" if sw["train_tokens"] else "")
                         + ", not on this text: the two numbers come from different texts")
        lines.append(sw["yardsticks"])
        if sw.get("far_apart"):  # more than 2x apart: which of this text's and this sweep's numbers say why
            lines += [sw["far_apart"], sw["chapter"]]
    if r.get("word2vec"):
        lines.append(r["word2vec"])
    lines.append(f"measured: {r['seconds']:.0f} s, peak RSS {r['peak_rss_mb']:,.0f} MB (this process)")
    return lines


def run_mlp(args: argparse.Namespace) -> None:
    result = api.cost_mlp(args.vocab, args.block, args.hidden, args.n_embd_given, args.sweep or None)
    lines = [f"## MLP LM parameters (V={args.vocab:,}, block {args.block}, hidden {args.hidden})"]
    for r in result["rows"]:
        line = (f"d={r['n_embd']:>4} | parameters {r['total']:>10,} (embedding {r['embedding']:>9,}, "
                f"hidden {r['hidden']:>9,}, output {r['output']:>9,})")
        if r["added"] is not None:
            line += f" | added {r['added']:>9,}"
        if args.sweep:  # with a sweep, each row has its val bpb and what each step saved
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
