"""`lrn embed neighbors | axes | purity`: the learned embedding table of a run."""

from __future__ import annotations

from lrngpt.cli.common import Parser, add_json, emit, positive_int
from lrngpt.errors import UserError


def register(sub) -> None:
    p = sub.add_parser("embed", help="dissect a run's embedding table")
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


def _table(run_dir, untrained: bool = False):
    from lrngpt.run import load_run

    run = load_run(run_dir, "init" if untrained else "last")
    return run, run.model.token_embedding.weight.detach().float()


def neighbors(run, table, text: str, k: int) -> dict:
    from lrngpt.analysis.embeddings import token_neighbors

    return token_neighbors(run.tokenizer, table, text, k)


def cmd_neighbors(args) -> None:
    run, table = _table(args.run_dir, args.untrained)
    results = [neighbors(run, table, t, args.k) for t in args.token]
    lines = []
    for r in results:
        pieces = " + ".join(repr(t["token"]) for t in r["tokens"])
        lines.append(f"{r['query']!r} -> {pieces}: "
                     + ", ".join(f"{n['token']!r} {n['cosine']:.2f}" for n in r["neighbors"]))
    emit(args, {"step": run.step, "untrained": args.untrained, "results": results}, "\n".join(lines))


def cmd_axes(args) -> None:
    from lrngpt.analysis.embeddings import used_axes

    run, table = _table(args.run_dir, args.untrained)
    n = used_axes(table, args.energy)
    emit(args, {"used_axes": n, "n_embd": table.shape[1], "energy": args.energy, "step": run.step},
         f"used axes ({args.energy:.0%}): {n}/{table.shape[1]}")


def category_token_ids(tokenizer) -> tuple[dict[str, list[int]], list[str]]:
    """Single-token ids of ' word' for every stories category word; the words that split are listed."""
    from lrngpt.corpora.stories import CATEGORIES

    ids: dict[str, list[int]] = {}
    split: list[str] = []
    seen: set[int] = set()
    for name, words in CATEGORIES.items():
        for w in words:
            t = tokenizer.encode(" " + w)
            if len(t) == 1 and t[0] not in seen:
                ids.setdefault(name, []).append(t[0])
                seen.add(t[0])
            elif len(t) > 1:
                split.append(w)
    return {k: v for k, v in ids.items() if len(v) >= 2}, split


def purity(run_dir, k: int = 10) -> dict:
    from lrngpt.analysis.embeddings import category_purity

    run, table = _table(run_dir)
    if not run.config.data.corpus.startswith("stories"):
        raise UserError(f"purity needs a run trained on the stories corpus (this one: {run.config.data.corpus}); "
                        "its word categories are what is scored")
    ids, split = category_token_ids(run.tokenizer)
    from lrngpt.run import RunDir

    result = {"step": run.step, "trained": category_purity(table, ids, k), "split_words": split}
    if RunDir(run_dir).checkpoint_path("init").exists():  # a run from before ckpt_init.pt has none
        _, init = _table(run_dir, untrained=True)
        result["untrained"] = category_purity(init, ids, k)
    else:
        result["untrained"] = None
    return result


def cmd_purity(args) -> None:
    r = purity(args.run_dir, args.k)
    t, u = r["trained"], r["untrained"]
    lines = [f"{'category':<12} {'trained':>8} {'untrained':>10}"]
    for name, v in t["per_category"].items():
        uv = f"{u['per_category'][name]:.3f}" if u else "-"
        lines.append(f"{name:<12} {v:>8.3f} {uv:>10}")
    lines.append(f"{'overall':<12} {t['overall']:>8.3f} {(u['overall'] if u else float('nan')):>10.3f}")
    lines.append(f"chance level {t['chance']:.3f} (k={t['k']}, {t['n_words']} category tokens)")
    emit(args, r, "\n".join(lines))
