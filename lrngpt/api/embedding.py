"""The learned embedding table of a run, as `lrn embed ...` answers: each function takes a Run or a run
directory and returns what its command prints with --json; checkpoint None: the Run's own, else last."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lrngpt.analysis.embeddings import load_table, pair_cosine, token_neighbors
from lrngpt.analysis.export import export_table
from lrngpt.api.checks import Checkpoint, ExportFormat, HasPath, MapMethod, Precision, checked, positive
from lrngpt.api.outputs import paths_of
from lrngpt.api.results import Categories, Run, as_run, categories_arg
from lrngpt.errors import UserError, option
from lrngpt.experiments.chapter import NEIGHBOURS, UNTRAINED_NEIGHBOURS
from lrngpt.explorer import write_explorer
from lrngpt.report.neighbours import neighbours_line


@checked
def embed_neighbors(run: Run | str | Path, tokens: Sequence[str], k: int = 10,
                    checkpoint: Checkpoint | None = None) -> dict:
    """The k nearest tokens by cosine of each token or word (`lrn embed neighbors`); a word the BPE splits is
    looked up by the mean of its pieces.

    Example: ``lrngpt.embed_neighbors("runs/demo", [" Lily", " red"], k=5)["results"][1]["neighbors"]``"""
    positive(k, "k (-k)")
    if not tokens:
        raise UserError(f"give at least one token, e.g. {option('token')} ' Lily'")
    r = as_run(run, checkpoint)
    loaded, table = load_table(r.path, r.checkpoint)
    untrained = r.checkpoint == "init"
    out = {"step": loaded.step, "checkpoint": r.checkpoint, "untrained": untrained,
           "results": [token_neighbors(loaded.tokenizer, table, t, k) for t in tokens]}
    pairs = UNTRAINED_NEIGHBOURS if untrained else NEIGHBOURS
    asked = [t for t in dict.fromkeys(tokens) if t in pairs]
    if asked:  # the chapter's cosine for this token (" Lily" ~ " Mia", or " Luna" untrained) beside this run's
        out["chapter"] = [neighbours_line(q, pair_cosine(loaded.tokenizer, table, q, pairs[q][0]), untrained)
                          for q in asked]
    return out


@checked
def embed_axes(run: Run | str | Path, energy: float = 0.9, checkpoint: Checkpoint | None = None) -> dict:
    """Used axes (`lrn embed axes`): how many singular directions hold `energy` of the table's energy, beside
    the untrained table's and a random one's.

    Example: ``lrngpt.embed_axes("runs/demo", energy=0.99)["used_axes"]``"""
    return as_run(run, checkpoint).axes(energy)


@checked
def embed_purity(run: Run | str | Path, categories: Categories = None, k: int = 10,
                 checkpoint: Checkpoint | None = None) -> dict:
    """Category purity (`lrn embed purity`): the share of each category word's k nearest category tokens in
    its own category, trained, untrained and chance. `categories`: {"name": [words]}, a JSON or TSV file,
    or None for a stories run's own.

    Example: ``lrngpt.embed_purity("runs/mine", {"month": ["January", "March"], "war": ["army", "navy"]})``"""
    return as_run(run, checkpoint).purity(categories, k)


@checked
def embed_export(run: Run | str | Path, out: str | Path, format: ExportFormat = "tsv",
                 top: int | None = None, checkpoint: Checkpoint | None = None) -> dict:
    """Write the table as out/vectors.tsv and out/metadata.tsv (`lrn embed export`); `format` projector adds
    the untrained table and TensorBoard's config; `top` keeps the most frequent tokens.

    Example: ``lrngpt.embed_export("runs/demo", "runs/demo/projector", format="projector")``"""
    r = as_run(run, checkpoint)
    return export_table(r.path, out, format, top, checkpoint=r.checkpoint)


@checked
def embed_explore(sources: Sequence[HasPath | str | Path] | HasPath | str | Path, out: str | Path, top: int | None = None,
                  map: MapMethod = "pca", precision: Precision = "float32", checkpoint: Checkpoint = "last",
                  categories: Categories = None) -> dict:
    """Write the interactive explorer page (`lrn embed explore`) for runs or sweep directories.

    Example: ``lrngpt.embed_explore(["runs/demo"], "demo.html", top=2000)["bytes"]``"""
    paths = paths_of(sources, "give at least one run or sweep directory")
    return write_explorer(paths, out, top, map, precision, checkpoint=checkpoint, categories=categories_arg(categories))
