"""`lrn embed neighbors | axes | purity | undertrained | export | explore`: the learned embedding table of a run."""

from __future__ import annotations

import lrngpt.api as api
from lrngpt.api.frontend import CHECKPOINT_LABELS, EXPORT_FORMATS, MAPS, PRECISIONS
from lrngpt.cli.common import add_checkpoint, add_out, command, emit, group, positive_int

EXPLORE_EPILOG = """\
Page size: 4 bytes per token and width with float32 (2 float16, 1 int8), x 4/3 for base64: the demo
run 3.0 MB, the book chapter's width sweep 22.6 MB (int8 6.1 MB). float32 is the default because its
neighbour lists equal `lrn embed neighbors` (on the demo run int8 reorders 53% of the top-10 lists).

examples:
  lrn embed explore runs/demo --out demo.html                # trained vs untrained
  lrn embed explore runs/embed-dim --out widths.html         # a sweep: step through the widths
  lrn embed explore runs/a runs/b --out ab.html --top 2000   # several runs, 2,000 tokens each
  lrn embed explore runs/bible --categories words.json --out bible.html   # your text, your word categories"""

CATEGORIES_HELP = ('word categories: a JSON object {"category": ["word", ...]} or TSV lines category<TAB>word; '
                   "a word is looked up after a space (' word'). Default: the stories categories, for a stories run "
                   "only")

PURITY_EPILOG = """\
Words the BPE splits are listed, not scored; a category with fewer than 2 one-token words is dropped.
A categories file, JSON:            or TSV (category<TAB>word a line):
  {"month": ["January", "March"],     month   January
   "war": ["army", "navy"]}           war     army

examples:
  lrn embed purity runs/mlp64                              # a stories run: its generator's categories
  lrn embed purity runs/sotu --categories words.json       # any corpus: categories you write
  lrn embed purity runs/sotu --categories words.tsv --checkpoint best"""

UNDERTRAINED_EPILOG = """\
Without tying, a never-read token's row gets no gradient and stays where it started; with tying the
softmax moves it anyway: "under-trained but not necessarily untouched" (the lecture on embedding tables).

examples:
  lrn embed undertrained runs/demo
  lrn embed undertrained runs/demo --top 50 --json
  lrn embed undertrained path/to/gpt2          # a local Hugging Face GPT-2: glitch-token candidates
  lrn embed undertrained runs/gpt2             # the same after lrn import-gpt2 path/to/gpt2 --out runs/gpt2"""


def register(sub) -> None:
    cmds = group(sub, "embed", "dissect a run's embedding table",
        "The learned token table of a run: nearest neighbours, used axes, category "
        "purity; export for TensorBoard's projector; an interactive explorer page.",
        "examples:\n  lrn embed neighbors runs/demo --token ' Lily'\n"
        "  lrn embed explore runs/demo --out demo.html")
    n = command(cmds, "neighbors", cmd_neighbors, "nearest tokens by cosine",
        "The k tokens whose rows of the embedding table are closest by cosine to a token's row. A "
        "word the BPE splits into several tokens is looked up by the mean of their rows.",
        "examples:\n  lrn embed neighbors runs/demo --token ' Lily'\n"
        "  lrn embed neighbors runs/demo --token ' Lily' --token ' red' -k 5 --untrained --json")
    n.add_argument("--token", action="append", required=True,
                   help='a token or word, with its leading space: --token " Lily" (repeatable)')
    n.add_argument("-k", type=positive_int, default=10, help="how many neighbours to list")
    add_checkpoint(n, untrained=True)
    a = command(cmds, "axes", cmd_axes, "singular directions holding a share of the table's energy",
        "Used axes: how many singular directions of the embedding table hold the given share of its energy (the "
        "sum of squared singular values), beside the untrained table's (ckpt_init.pt) and a random Gaussian "
        "table's of the same shape. A table that uses few of its d axes could have been narrower.",
        "examples:\n  lrn embed axes runs/mlp64\n  lrn embed axes runs/mlp64 --energy 0.99 --checkpoint best --json")
    a.add_argument("--energy", type=float, default=0.9, help="the share of the energy the axes must hold")
    add_checkpoint(a, untrained=True)
    q = command(cmds, "purity", cmd_purity, "share of category words' neighbours in their own category",
        "For each category word that is one token (the stories corpus's categories, or your own "
        "with --categories), the share of its k nearest category tokens in its own category; for "
        "the chosen weights, the untrained table and chance level.",
        PURITY_EPILOG)
    q.add_argument("-k", type=positive_int, default=10, help="neighbours per category word")
    q.add_argument("--categories", metavar="FILE", help=CATEGORIES_HELP)
    add_checkpoint(q)
    u = command(cmds, "undertrained", cmd_undertrained, "how often each token was read, how far its row moved, the under-trained ones",
        "Per token: how often the run read it (its batches replayed from its seed), how far its row moved from "
        "ckpt_init.pt, and its norm; tokens with input reads < d are under-trained. For an import or a Hugging "
        "Face GPT-2 directory: Land & Bartolo's indicator ranks glitch-token candidates instead.",
        UNDERTRAINED_EPILOG)
    u.add_argument("run_dir", metavar="RUN",
                   help="a run directory (lrn train --out, lrn import-gpt2 --out) or a local Hugging Face GPT-2 "
                        "directory")
    u.add_argument("--top", type=positive_int, default=20, metavar="N", help="how many tokens to list")
    add_checkpoint(u, run=None)
    e = command(cmds, "export", cmd_export, "write the table as TSV, or for TensorBoard's projector",
        "Write DIR/vectors.tsv (one row per token, in id order) and DIR/metadata.tsv (token text with its bytes "
        "escaped, id, frequency in the training split, category). --format projector adds the step-0 table and "
        "projector_config.pbtxt, so `tensorboard --logdir DIR` shows both tables under PROJECTOR.",
        "examples:\n  lrn embed export runs/demo --out runs/demo/projector --format projector\n"
        "  tensorboard --logdir runs/demo/projector\n"
        "  lrn embed export runs/demo --out demo-tsv --top 1000")
    add_out(e, "directory to write (created if missing); an earlier export nobody changed is replaced, a "
               "directory holding anything else never is")
    e.add_argument("--format", choices=EXPORT_FORMATS, default="tsv",
                   help="tsv: the two TSV files; projector: also the untrained table and TensorBoard's config")
    e.add_argument("--top", type=positive_int, metavar="N",
                   help="only the N tokens most frequent in the training split (default: every row)")
    add_checkpoint(e)
    x = command(cmds, "explore", cmd_explore, "an interactive page: map, neighbour search, widths or trained vs untrained",
        "Write one self-contained HTML page (works from file://): a 2-D map of the most frequent tokens, a "
        "neighbour search equal to `lrn embed neighbors`, a run's trained and untrained tables side by side, "
        "or a stepper through a sweep's widths.",
        EXPLORE_EPILOG)
    x.add_argument("sources", nargs="+", metavar="RUN",
                   help="run directories (lrn train --out) or sweep directories (lrn sweep --out)")
    add_out(x, "the HTML file to write; an earlier explorer page is replaced, any other file never", metavar="FILE")
    x.add_argument("--top", type=positive_int, metavar="N",
                   help="tokens on the page, the most frequent in training first; the search covers these "
                        "(default: 8192, every token of a vocabulary up to that size)")
    x.add_argument("--map", choices=MAPS, default="pca",
                   help="how the 2-D map is made: pca, or tsne (scikit-learn) / umap (umap-learn) when installed")
    x.add_argument("--precision", choices=PRECISIONS, default="float32",
                   help="how the search vectors are stored in the page (see the sizes below)")
    add_checkpoint(x, extra="; a run's page shows them beside the untrained table", run=None)
    x.add_argument("--categories", metavar="FILE",
                   help=CATEGORIES_HELP.replace("Default: ", "They colour the map and give each table its purity. "
                                                "Default: ", 1))



def cmd_neighbors(args) -> None:
    r = api.embed_neighbors(args.run_dir, args.token, args.k, args.checkpoint)
    lines = []
    for res in r["results"]:
        pieces = " + ".join(repr(t["token"]) for t in res["tokens"])
        lines.append(f"{res['query']!r} -> {pieces}: "
                     + ", ".join(f"{n['token']!r} {n['cosine']:.2f}" for n in res["neighbors"]))
    emit(args, r, "\n".join(lines + r.get("chapter", [])))


def cmd_axes(args) -> None:
    r = api.embed_axes(args.run_dir, args.energy, args.checkpoint)
    d, u = r["n_embd"], r["untrained_used_axes"]
    name = CHECKPOINT_LABELS[r["checkpoint"]]
    emit(args, r, "\n".join([
        f"used axes ({args.energy:.0%} of the energy), {r['vocab']:,} x {d} tables:",
        f"  {name + ' (step ' + format(r['step'], ',') + ')':<24} {r['used_axes']}/{d}",
        f"  {'untrained (step 0)':<24} " + (f"{u}/{d}" if u is not None else "- (no ckpt_init.pt)"),
        f"  {'random Gaussian (seed ' + str(r['random_seed']) + ')':<24} {r['random_used_axes']}/{d}"]))


def cmd_purity(args) -> None:
    r = api.embed_purity(args.run_dir, args.categories, args.k, args.checkpoint)
    t, u = r["trained"], r["untrained"]
    head = CHECKPOINT_LABELS[r["checkpoint"]]
    width = max(12, *(len(name) for name in t["per_category"]))
    lines = [f"{'category':<{width}} {head:>8} {'untrained':>10}"]
    for name, v in t["per_category"].items():
        uv = f"{u['per_category'][name]:.3f}" if u else "-"
        lines.append(f"{name:<{width}} {v:>8.3f} {uv:>10}")
    lines.append(f"{'overall':<{width}} {t['overall']:>8.3f} {(format(u['overall'], '.3f') if u else '-'):>10}")
    lines.append(f"chance level {t['chance']:.3f} (k={t['k']}, {t['n_words']} category tokens; "
                 f"step {r['step']}, categories: {r['categories']})")
    if r["split_words"]:
        shown = r["split_words"][:20]
        lines.append(f"split by the BPE, not scored ({len(r['split_words'])}): " + ", ".join(shown)
                     + (", ... (--json lists them all)" if len(r["split_words"]) > len(shown) else ""))
    emit(args, r, "\n".join(lines))


def cmd_export(args) -> None:
    r = api.embed_export(args.run_dir, args.out, args.format, args.top, args.checkpoint)
    text = (f"wrote {r['rows']:,} rows x {r['n_embd']} ({', '.join(r['files'])}) to {r['out']}; {r['frequencies']}"
            + (f"\nview them: tensorboard --logdir {r['out']}  (PROJECTOR tab)" if args.format == "projector" else ""))
    emit(args, r, text)


def cmd_explore(args) -> None:
    r = api.embed_explore(args.sources, args.out, args.top, args.map, args.precision, args.checkpoint, args.categories)
    frames = "; ".join(f"{f['label']}: " + ", ".join(v["label"] for v in f["views"]) for f in r["frames"])
    emit(args, r, f"wrote {r['path']} ({r['bytes'] / 1e6:.1f} MB, {', '.join(map(str, r['tokens']))} tokens; "
                  f"{frames})")


def cmd_undertrained(args) -> None:
    r = api.undertrained(args.run_dir, args.checkpoint, args.top)
    emit(args, r, api.texts.undertrained_text(r))

