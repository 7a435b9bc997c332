"""`lrn lesson`: the embedding lessons of seeds/000-001, run on real torch modules."""

from __future__ import annotations

import argparse

from lrngpt.cli.common import Parser, add_json, emit, positive_int, seed


def register(subparsers) -> None:
    p = subparsers.add_parser("lesson", help="runnable checks of the embedding lessons",
                              description="The lecture's claims about embedding tables, checked with torch.")
    sub = p.add_subparsers(dest="lesson_command", metavar="SUBCOMMAND", required=True, parser_class=Parser)

    lk = sub.add_parser("lookup", help="lookup equals one-hot times E; token + position shapes",
                        description="Looks up random (B,T) ids with nn.Embedding and with one_hot(ids) @ E, "
                                    "compares them, and adds the position table as InputEmbedding does.")
    lk.add_argument("--batch", type=positive_int, default=2, help="B (default 2)")
    lk.add_argument("--length", type=positive_int, default=4, help="T (default 4)")
    lk.add_argument("--n-embd", type=positive_int, default=256, help="D (default 256)")
    lk.add_argument("--vocab", type=positive_int, default=300, help="V (default 300)")
    lk.add_argument("--seed", type=seed, default=0, help="random seed (default 0)")
    add_json(lk)
    lk.set_defaults(func=run_lookup)

    lg = sub.add_parser("lookup-grad", help="repeated ids sum their gradients",
                        description="seeds/001's example (ids [2,0,2]) through nn.Embedding's backward, "
                                    "next to the hand computation.")
    add_json(lg)
    lg.set_defaults(func=run_lookup_grad)

    ty = sub.add_parser("tying", help="rows no input looked up can still change",
                        description="One optimizer step on a batch that looks up only some rows of a tiny "
                                    "model's table: which unused rows change under plain SGD, a tied LM head, "
                                    "AdamW weight decay, and SGD momentum.")
    ty.add_argument("--vocab", type=positive_int, default=16, help="table rows V (default 16)")
    ty.add_argument("--n-embd", type=positive_int, default=8, help="table width (default 8)")
    ty.add_argument("--used", type=positive_int, default=6, help="the batch draws ids from rows 0..used-1 (default 6)")
    ty.add_argument("--seed", type=seed, default=0, help="random seed (default 0)")
    add_json(ty)
    ty.set_defaults(func=run_tying)


def _shape(s: list[int]) -> str:
    return "(" + ",".join(map(str, s)) + ")"


def run_lookup(args: argparse.Namespace) -> None:
    from lrngpt.analysis import lessons

    r = lessons.lookup(args.batch, args.length, args.n_embd, args.vocab, seed=args.seed)
    s = r["shapes"]
    text = "\n".join([
        f"lookup == one_hot @ E: {r['equal']} (max |difference| {r['max_abs_diff']:g}, "
        f"one_hot{_shape(s['one_hot'])} @ E({args.vocab},{args.n_embd}))",
        f"shape: ids{_shape(s['ids'])} -> token{_shape(s['token'])} + position{_shape(s['position'])} "
        f"-> output{_shape(s['output'])}",
    ])
    emit(args, r, text)


def run_lookup_grad(args: argparse.Namespace) -> None:
    from lrngpt.analysis import lessons

    r = lessons.lookup_grad()
    text = "\n".join([f"table {r['table']}", f"ids {r['ids']}", f"upstream {r['upstream']}",
                      f"lookup {r['lookup']}", f"lookup_gradient {r['grad']}  (nn.Embedding backward)",
                      f"hand_gradient {r['hand_grad']}  (sum per row)", f"match {r['match']}"])
    emit(args, r, text)


def run_tying(args: argparse.Namespace) -> None:
    from lrngpt.analysis import lessons

    r = lessons.tying(args.vocab, args.n_embd, args.used, args.seed)
    lines = [f"table {r['vocab']} x {r['n_embd']}; the batch looks up rows {r['looked_up_rows']}; one step:"]
    for s in r["settings"]:
        lines.append(f"  {s['setting']:<15} {s['unused_changed']:>3}/{s['unused_rows']} unused rows changed"
                     f"  ({s['description']})")
    emit(args, r, "\n".join(lines))
