"""`lrn theory`: how many dimensions N tokens need (random cosines, JL bound, fourth root)."""

from __future__ import annotations

import argparse

from lrngpt.api import theory_fourth_root, theory_jl, theory_random_cosine
from lrngpt.cli.common import Parser, add_json, emit, int_list, seed


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "theory", help="width theory: random cosines, JL bound, fourth-root rule",
        description="The calculations behind the book chapter on choosing the embedding width: how close "
                    "random vectors of width d come to each other, how wide a table must be to keep N points' "
                    "distances (Johnson-Lindenstrauss), and the fourth-root rule of thumb.",
        epilog="examples:\n  lrn theory random-cosine --n 4096 --dims 4,8,16,64,256\n"
               "  lrn theory jl --n 4096 --eps 0.5\n  lrn theory fourth-root --n 4096")
    sub = p.add_subparsers(dest="theory_command", metavar="SUBCOMMAND", required=True, parser_class=Parser)

    rc = sub.add_parser("random-cosine", help="cosines of N random vectors in d dimensions",
                        description="For each width d: the std of the cosines of all N(N-1)/2 pairs of N "
                                    "Gaussian vectors next to 1/sqrt(d), the maximum, and the share with "
                                    "|cos| > 0.5. Exact over all pairs, in bounded memory.",
                        epilog="examples:\n  lrn theory random-cosine\n"
                               "  lrn theory random-cosine --n 1000 --dims 2,3,4 --seed 1 --json")
    rc.add_argument("--n", type=int, default=4096,
                    help="number of vectors (4096 is the book chapter's vocabulary size)")
    rc.add_argument("--dims", type=int_list, default=[4, 8, 16, 64, 256], help="comma-separated widths d")
    rc.add_argument("--seed", type=seed, default=0, help="random seed of the vectors")
    add_json(rc)
    rc.set_defaults(func=run_random_cosine)

    jl = sub.add_parser("jl", help="Johnson-Lindenstrauss width bound",
                        description="Width k that keeps all pairwise distances of N points within 1 +- eps "
                                    "(Dasgupta-Gupta): k >= 24 ln N / (3 eps^2 - 2 eps^3).",
                        epilog="examples:\n  lrn theory jl --n 4096 --eps 0.5\n  lrn theory jl --n 50257 --eps 0.1 --json")
    jl.add_argument("--n", type=int, required=True, help="number of points (at least 2)")
    jl.add_argument("--eps", type=float, required=True,
                    help="allowed distortion, strictly between 0 and 1 (below about 1e-150 the bound "
                         "outgrows a float)")
    add_json(jl)
    jl.set_defaults(func=run_jl)

    fr = sub.add_parser("fourth-root", help="the fourth-root rule of thumb",
                        description="Embedding width = N ** 0.25 (TensorFlow feature columns' rule of thumb).",
                        epilog="examples:\n  lrn theory fourth-root --n 4096\n  lrn theory fourth-root --n 50257 --json")
    fr.add_argument("--n", type=int, required=True, help="number of categories, e.g. the vocabulary size")
    add_json(fr)
    fr.set_defaults(func=run_fourth_root)


def run_random_cosine(args: argparse.Namespace) -> None:
    rows = theory_random_cosine(args.n, args.dims, args.seed)
    pairs = args.n * (args.n - 1) // 2
    lines = [f"## cosines of {args.n:,} random vectors of width d ({pairs:,} distinct pairs, seed {args.seed})"]
    for r in rows:
        lines.append(f"d={r['d']:>4}: std {r['std']:.4f} (1/sqrt(d) = {r['inv_sqrt_d']:.4f}), "
                     f"max {r['max']:.4f}, |cos| > 0.5 in {100 * r['share_abs_gt_0_5']:.2f}% of pairs "
                     f"({r['count_abs_gt_0_5']:,} of {r['pairs']:,})")
    emit(args, {"rows": rows}, "\n".join(lines))


def run_jl(args: argparse.Namespace) -> None:
    k = theory_jl(args.n, args.eps)
    emit(args, {"k": k}, f"N={args.n:,}, eps={args.eps:g}: k >= {k:,.1f}  "
                         "(Dasgupta-Gupta: 24 ln N / (3 eps^2 - 2 eps^3))")


def run_fourth_root(args: argparse.Namespace) -> None:
    d = theory_fourth_root(args.n)
    emit(args, {"d": d}, f"{args.n:,}^0.25 = {d:g}")
