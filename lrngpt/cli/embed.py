"""`lrn embed neighbors | axes | purity | export`: the learned embedding table of a run."""

from __future__ import annotations

import argparse

from lrngpt.cli.common import Parser, add_json, emit, positive_int


def register(sub) -> None:
    p = sub.add_parser("embed", help="dissect a run's embedding table",
                       description="Neighbours, used axes, category purity; export for TensorBoard's "
                                   "projector.")
    cmds = p.add_subparsers(dest="embed_command", metavar="COMMAND", required=True, parser_class=Parser)

    n = cmds.add_parser("neighbors", help="nearest tokens by cosine")
    n.add_argument("run_dir")
    n.add_argument("--token", action="append", required=True,
                   help='a token or word, with its leading space: --token " Lily" (repeatable)')
    n.add_argument("-k", type=positive_int, default=10)
    n.add_argument("--untrained", action="store_true", help="use the step-0 weights (ckpt_init.pt)")
    add_json(n)
    n.set_defaults(func=cmd_neighbors)

    a = cmds.add_parser("axes", help="singular directions holding a share of the table's energy")
    a.add_argument("run_dir")
    a.add_argument("--energy", type=float, default=0.9)
    a.add_argument("--untrained", action="store_true")
    add_json(a)
    a.set_defaults(func=cmd_axes)

    q = cmds.add_parser("purity", help="share of category words' neighbours in their own category (stories)")
    q.add_argument("run_dir")
    q.add_argument("-k", type=positive_int, default=10)
    add_json(q)
    q.set_defaults(func=cmd_purity)

    e = cmds.add_parser(
        "export", help="write the table as TSV, or for TensorBoard's projector",
        description="Write DIR/vectors.tsv (one row per token, in id order) and DIR/metadata.tsv (token text "
                    "with its bytes escaped, id, frequency in the training split, category). --format projector "
                    "adds the step-0 table and projector_config.pbtxt, so `tensorboard --logdir DIR` shows both "
                    "tables under PROJECTOR.",
        epilog="example:\n  lrn embed export runs/demo --out runs/demo/projector --format projector\n"
               "  tensorboard --logdir runs/demo/projector",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    e.add_argument("run_dir")
    e.add_argument("--out", required=True, metavar="DIR", help="directory to write (created if missing)")
    e.add_argument("--format", choices=["tsv", "projector"], default="tsv",
                   help="tsv: the two TSV files; projector: also the untrained table and TensorBoard's config "
                        "(default tsv)")
    e.add_argument("--top", type=positive_int, metavar="N",
                   help="only the N tokens most frequent in the training split (default: every row)")
    e.add_argument("--force", action="store_true",
                   help="write into --out even when it holds files lrn did not write (default: refuse)")
    add_json(e)
    e.set_defaults(func=cmd_export)


def cmd_neighbors(args) -> None:
    from lrngpt.analysis.embeddings import run_neighbors

    r = run_neighbors(args.run_dir, args.token, args.k, args.untrained)
    lines = []
    for res in r["results"]:
        pieces = " + ".join(repr(t["token"]) for t in res["tokens"])
        lines.append(f"{res['query']!r} -> {pieces}: "
                     + ", ".join(f"{n['token']!r} {n['cosine']:.2f}" for n in res["neighbors"]))
    emit(args, r, "\n".join(lines))


def cmd_axes(args) -> None:
    from lrngpt.analysis.embeddings import run_axes

    r = run_axes(args.run_dir, args.energy, args.untrained)
    emit(args, r, f"used axes ({args.energy:.0%}): {r['used_axes']}/{r['n_embd']}")


def cmd_purity(args) -> None:
    from lrngpt.analysis.embeddings import purity

    r = purity(args.run_dir, args.k)
    t, u = r["trained"], r["untrained"]
    lines = [f"{'category':<12} {'trained':>8} {'untrained':>10}"]
    for name, v in t["per_category"].items():
        uv = f"{u['per_category'][name]:.3f}" if u else "-"
        lines.append(f"{name:<12} {v:>8.3f} {uv:>10}")
    lines.append(f"{'overall':<12} {t['overall']:>8.3f} {(u['overall'] if u else float('nan')):>10.3f}")
    lines.append(f"chance level {t['chance']:.3f} (k={t['k']}, {t['n_words']} category tokens)")
    emit(args, r, "\n".join(lines))


def cmd_export(args) -> None:
    from lrngpt.analysis.export import export_table

    r = export_table(args.run_dir, args.out, args.format, args.top, args.force)
    text = (f"wrote {r['rows']:,} rows x {r['n_embd']} ({', '.join(r['files'])}) to {r['out']}; {r['frequencies']}"
            + (f"\nview them: tensorboard --logdir {r['out']}  (PROJECTOR tab)" if args.format == "projector" else ""))
    emit(args, r, text)
