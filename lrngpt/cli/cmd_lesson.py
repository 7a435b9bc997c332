"""`lrn lesson`: the lessons of the lecture on embedding tables, run on real torch modules."""

from __future__ import annotations

import argparse

import lrngpt.api as api
from lrngpt.cli.common import add_force, command, emit, float_list, group, positive_int, seed


def register(subparsers) -> None:
    sub = group(
        subparsers, "lesson", "runnable checks of the embedding lessons",
        "The claims of the lecture on embedding tables, checked on real torch modules: a lookup is a one-hot "
        "product, repeated ids sum their gradients, which rows an optimizer step can change, ids are only names, "
        "superposition; and the book chapter's softmax bottleneck (Yang et al. 2017, \"Breaking the Softmax Bottleneck\").",
        "examples:\n  lrn lesson lookup\n  lrn lesson tying --json\n  lrn lesson renumber runs/demo\n"
        "  lrn lesson superposition --out superposition.png")
    lk = command(sub, "lookup", run_lookup, "lookup equals one-hot times E; token + position shapes",
                 "Looks up random (B,T) ids with nn.Embedding and with one_hot(ids) @ E, compares them, and adds "
                 "the position table as InputEmbedding does.",
                 "examples:\n  lrn lesson lookup\n  lrn lesson lookup --batch 1 --length 8 --json")
    lk.add_argument("--batch", type=positive_int, default=2, help="batch size B of the ids")
    lk.add_argument("--length", type=positive_int, default=4, help="sequence length T of the ids")
    lk.add_argument("--n-embd", type=positive_int, default=256, help="table width D")
    lk.add_argument("--vocab", type=positive_int, default=300, help="table rows V")
    lk.add_argument("--seed", type=seed, default=0, help="random seed of the table and the ids")
    command(sub, "lookup-grad", run_lookup_grad, "repeated ids sum their gradients",
            "Ids [2,0,2] through nn.Embedding's backward, next to the hand computation: row 2 gets the sum of "
            "both upstream gradients.", "examples:\n  lrn lesson lookup-grad\n  lrn lesson lookup-grad --json")
    ty = command(sub, "tying", run_tying, "rows no input looked up can still change",
                 "One optimizer step on a batch that looks up only some rows of a tiny model's table: which unused "
                 "rows change under plain SGD, a tied LM head, AdamW weight decay, and SGD momentum.",
                 "examples:\n  lrn lesson tying\n  lrn lesson tying --vocab 32 --used 4 --json")
    ty.add_argument("--vocab", type=positive_int, default=16, help="table rows V")
    ty.add_argument("--n-embd", type=positive_int, default=8, help="table width d")
    ty.add_argument("--used", type=positive_int, default=6, help="the batch draws ids from rows 0..used-1")
    ty.add_argument("--seed", type=seed, default=0, help="random seed of the model and the batch")
    sb = command(sub, "softmax-bottleneck", run_softmax_bottleneck,
                 "log-probabilities over many contexts have rank <= width + 1 (+1 with a bias)",
                 "The numerical rank, in float64, of the vector entering the output layer (h), the logits and the "
                 "log-probabilities over many contexts: h W^T + b - normaliser has rank at most width + 1, plus 1 "
                 "with an output bias (the book chapter's theory 3). Without RUN, a small random MLP and GPT.",
                 "examples:\n  lrn lesson softmax-bottleneck\n  lrn lesson softmax-bottleneck runs/demo --contexts 2000")
    sb.add_argument("run_dir", nargs="?", metavar="RUN", help="a run directory (default: small random models)")
    sb.add_argument("--contexts", type=positive_int, metavar="N",
                    help="how many contexts (default: twice the bound, at least 256)")
    sb.add_argument("--random", action="store_true",
                    help="random token ids as contexts instead of the run's validation split (default: the split)")
    sb.add_argument("--seed", type=seed, default=0, help="random seed of the models and the contexts")
    rn = command(sub, "renumber", run_renumber,
                 "ids are names: permuting table rows breaks a model, relabelling ids changes nothing",
                 "Bpb on the validation split as trained; with the table's rows permuted (ids look up other "
                 "tokens' rows); and relabelled (table rows, output rows and the text's ids permuted alike). "
                 "Without RUN, a small MLP trained here on a 64-token Markov chain (bits per token).",
                 "examples:\n  lrn lesson renumber\n  lrn lesson renumber runs/demo --json")
    rn.add_argument("run_dir", nargs="?", metavar="RUN", help="a run directory (default: a toy model trained here)")
    rn.add_argument("--max-tokens", type=positive_int, default=20_000, metavar="N",
                    help="validation tokens to measure on, spread over the split")
    rn.add_argument("--seed", type=seed, default=0, help="seed of the permutation")
    sp = command(sub, "superposition", run_superposition,
                 "n sparse features in d < n dimensions: the toy model of superposition",
                 "Elhage et al.'s toy model (2022): N features, each 0 with probability S (the sparsity), through d "
                 "dimensions and back, x' = ReLU(W^T W x + b), one model per sparsity, in seconds. Per sparsity: "
                 "the features represented (||W_i|| > 0.5), their interference and the dimensions per feature.",
                 "examples:\n  lrn lesson superposition\n  lrn lesson superposition --features 40 --dims 10 --json\n"
                 "  lrn lesson superposition --sparsity 0,0.9,0.999 --out superposition.png")
    sp.add_argument("--features", type=positive_int, default=20, metavar="N", help="features n (the paper's 20)")
    sp.add_argument("--dims", type=positive_int, default=5, metavar="D", help="hidden dimensions d < n (the paper's 5)")
    sp.add_argument("--sparsity", type=float_list, default=[0.0, 0.7, 0.9, 0.97, 0.99, 0.997, 0.999], metavar="S,...",
                    help="comma-separated sparsities in [0, 1): the share of the time a feature is 0")
    sp.add_argument("--steps", type=positive_int, default=1000, help="Adam steps (lr 1e-2, batch 1024)")
    sp.add_argument("--seed", type=seed, default=0, help="random seed of the weights and the data")
    sp.add_argument("--out", metavar="PNG", help="write the figure there (W^T W and ||W_i|| per sparsity)")
    add_force(sp, "an earlier figure lrn wrote at --out")


def _shape(s: list[int]) -> str:
    return "(" + ",".join(map(str, s)) + ")"


def run_lookup(args: argparse.Namespace) -> None:
    r = api.lesson_lookup(args.batch, args.length, args.n_embd, args.vocab, args.seed)
    s = r["shapes"]
    text = "\n".join([
        f"lookup == one_hot @ E: {r['equal']} (max |difference| {r['max_abs_diff']:g}, "
        f"one_hot{_shape(s['one_hot'])} @ E({args.vocab},{args.n_embd}))",
        f"shape: ids{_shape(s['ids'])} -> token{_shape(s['token'])} + position{_shape(s['position'])} "
        f"-> output{_shape(s['output'])}",
        "shown: an embedding lookup is one-hot rows times the table, so it only selects rows of E"
        if r["equal"] else "shown: here the lookup and the one-hot product differ (see the difference above)",
    ])
    emit(args, r, text)


def run_lookup_grad(args: argparse.Namespace) -> None:
    r = api.lesson_lookup_grad()
    text = "\n".join([f"table {r['table']}", f"ids {r['ids']}", f"upstream {r['upstream']}",
                      f"lookup {r['lookup']}", f"lookup_gradient {r['grad']}  (nn.Embedding backward)",
                      f"hand_gradient {r['hand_grad']}  (sum per row)", f"match {r['match']}",
                      "shown: a lookup's gradient lands only on the rows it looked up, summed over every use; "
                      "the other rows get zero" if r["match"] else
                      "shown: here the gradient differs from the sum per row (see the two above)"])
    emit(args, r, text)


def run_tying(args: argparse.Namespace) -> None:
    r = api.lesson_tying(args.vocab, args.n_embd, args.used, args.seed)
    lines = [f"table {r['vocab']} x {r['n_embd']}; the batch looks up rows {r['looked_up_rows']}; one step:"]
    for s in r["settings"]:
        lines.append(f"  {s['setting']:<15} {s['unused_changed']:>3}/{s['unused_rows']} unused rows changed"
                     f"  ({s['description']})")
    moved = [s["setting"] for s in r["settings"] if s["unused_changed"]]
    still = [s["setting"] for s in r["settings"] if not s["unused_changed"]]
    lines.append(f"shown: rows a batch never looks up still move under {', '.join(moved) or 'no setting'}, and stay put "
                 f"under {', '.join(still) or 'no setting'}: tying, weight decay and momentum reach every row")
    emit(args, r, "\n".join(lines))


def run_softmax_bottleneck(args: argparse.Namespace) -> None:
    r = api.lesson_softmax_bottleneck(args.run_dir, args.contexts, args.random, args.seed)
    lines = [f"rank of log p(next | context) over {r['source']}, in float64 (h: the vector entering the output layer)",
             f"{'model':<6} {'width':>5} {'bias':>4} {'contexts':>8} {'V':>6} {'rank h':>6} {'logits':>6} "
             f"{'log-probs':>9} {'bound':>5}  holds"]
    for m in r["models"]:
        lines.append(f"{m['model']:<6} {m['width']:>5} {'yes' if m['output_bias'] else 'no':>4} {m['contexts']:>8} "
                     f"{m['vocab']:>6} {m['rank_h']:>6} {m['rank_logits']:>6} {m['rank_logprobs']:>9} {m['bound']:>5}  "
                     f"{'yes' if m['holds'] else 'NO'}")
    for m in r["models"]:
        if m["sv_past_bound"] is not None:
            lines.append(f"{m['model']}: singular value {m['bound']} / largest = {m['sv_at_bound']:.2e}, "
                         f"{m['bound'] + 1} / largest = {m['sv_past_bound']:.2e}")
        if not m["binding"]:
            lines.append(f"{m['model']}: the bound {m['bound']} is not below min(contexts, V); use more --contexts")
    lines.append("bound = width + 1 (the log-softmax normaliser) + 1 if the output layer has a bias")
    held = all(m["holds"] for m in r["models"])
    lines.append("shown: the log-probabilities of all the contexts have rank at most the bound, however large the "
                 "vocabulary: a model can express only that many directions of next-token preference (the "
                 "softmax bottleneck)" if held else
                 "not shown: a rank above the bound (marked NO): the run's output layer is not what the bound assumes")
    emit(args, r, "\n".join(lines))


def run_renumber(args: argparse.Namespace) -> None:
    r = api.lesson_renumber(args.run_dir, args.seed, args.max_tokens)
    u = r["unit"]
    lines = [f"{r['rows']} ids permuted at random (seed {r['seed']}); {r['tokens']:,} validation tokens; {u}:",
             f"  as trained                            {r['original']:.6f}",
             f"  table rows permuted, ids not          {r['table_rows_permuted']:.6f}   the ids look up other rows",
             f"  ids relabelled (table, output, text)  {r['relabelled']:.6f}   difference {r['relabelled_difference']:+.1e}",
             "shown: an id is only a name: the meaning is in the row it names"]
    emit(args, r, "\n".join(lines))


def run_superposition(args: argparse.Namespace) -> None:
    r = api.lesson_superposition(args.features, args.dims, args.sparsity, steps=args.steps, seed=args.seed,
                             out=args.out, force=args.force)
    d, n = r["dims"], r["features"]
    lines = [f"{n} features in {d} dimensions, x' = ReLU(W^T W x + b), importance 0.7^i, {r['steps']:,} Adam steps "
             f"(seed {r['seed']}); represented: ||W_i|| > {r['represented_threshold']}",
             f"{'sparsity':>9} {'1-S':>7} {'represented':>12} {'share':>6} {'interference':>13} {'dims/feature':>13} "
             f"{'loss':>9}"]
    for s in r["sparsities"]:
        per = s["dimensions_per_feature"]
        lines.append(f"{s['sparsity']:>9g} {s['feature_probability']:>7.3g} {s['represented']:>9}/{n:<2} "
                     f"{s['represented_share']:>6.2f} {s['mean_interference']:>13.3f} "
                     f"{'-' if per is None else format(per, '.3f'):>13} {s['loss']:>9.2e}")
    if r.get("figure"):
        lines.append(f"figure: {r['figure']}")
    lines.append(superposition_sentence(r))
    emit(args, r, "\n".join(lines))


def superposition_sentence(r: dict) -> str:
    """The closing sentence: does the densest setting keep about d features and the sparsest more than d?"""
    d, n, rows = r["dims"], r["features"], r["sparsities"]
    dense, sparse = min(rows, key=lambda s: s["sparsity"]), max(rows, key=lambda s: s["sparsity"])
    if sparse["represented"] > d >= dense["represented"] - 1 and sparse is not dense:
        return (f"shown: with dense features (1-S = {dense['feature_probability']:.3g}) the model keeps "
                f"{dense['represented']} of {n} features in {d} dimensions, about one per dimension, and with sparse "
                f"ones (1-S = {sparse['feature_probability']:.3g}) it keeps {sparse['represented']}, sharing directions "
                f"at an interference of {sparse['mean_interference']:.2f}: as the lecture remarks, d numbers per token "
                "do not make d named features, several features can share one representation (superposition)")
    return (f"not shown: here the sparsest setting keeps {sparse['represented']} features and the densest "
            f"{dense['represented']} in {d} dimensions, not the picture of the paper (about d when dense, more than "
            "d when sparse); train longer with --steps or add sparser values to --sparsity")
