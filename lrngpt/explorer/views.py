"""What the explorer page shows, computed ahead of time in Python.

A *view* is one embedding table (a run's trained or step-0 table) with a 2-D map of the page's tokens
(PCA; t-SNE or UMAP when installed), its used axes, purity and val bpb. A *frame* is one position of
the page's stepper: a run's trained and untrained tables side by side, or one width of a sweep. A
*vocab* is what views of one tokenizer and training data share: texts, bytes, frequencies, categories.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from lrngpt.analysis.categories import resolve as resolve_categories
from lrngpt.analysis.categories import stories_categories
from lrngpt.analysis.embeddings import category_purity, has_categories, load_table, used_axes
from lrngpt.analysis.vocab import frequency_order, train_counts
from lrngpt.core import log as logging
from lrngpt.errors import UserError, option
from lrngpt.experiments.sweepdir import SweepDir
from lrngpt.store.layout import CHECKPOINT_FILES, CHECKPOINT_LABELS, CONFIG
from lrngpt.store.run_files import best_periodic_val, periodic_evals
from lrngpt.store.rundir import RunDir, read_metrics
from lrngpt.tokenizer.bpe import Tokenizer

METHODS = ("pca", "tsne", "umap")
PURITY_K = 10  # as `lrn embed purity`


@dataclass(eq=False)  # (found by identity: a view names its vocab by its place in Collection.vocabs)
class Vocab:
    tokenizer: Tokenizer
    rows: int  # table rows: the vocabulary, or more for a padded table
    counts: np.ndarray | None
    note: str  # where the frequencies come from, or why there are none
    ids: np.ndarray  # the page's tokens, most frequent first
    categories: dict[str, list[int]]  # category -> its one-token words' ids (lrngpt.analysis.categories.resolve)


@dataclass
class Collection:
    """What the page shows, and how it is gathered. A view is a dict of the page's fields for one table,
    with its page tokens' rows ("rows", float32) and map ("coords") as arrays; a frame is {"label", "views": [view index, ...]}."""
    top: int | None  # the page's tokens per vocab (None: every row)
    method: str  # the 2-D map: pca, tsne or umap
    log: Callable[[str], None]
    checkpoint: str  # the weights shown (a run's untrained table beside them)
    categories: dict | None = None  # --categories: word categories for any corpus (None: a stories run's own)
    frames: list[dict] = field(default_factory=list)
    views: list[dict] = field(default_factory=list)
    vocabs: dict[str, Vocab] = field(default_factory=dict)  # by tokenizer, training data and rows


def check_dir(d: Path) -> None:
    if not d.is_dir():
        raise UserError(f"{d} {'is not a directory' if d.exists() else 'does not exist'}; give a run directory "
                        "(lrn train --out) or a sweep directory (lrn sweep --out)")


def source_name(d: Path) -> str:
    """A sweep's own name (sweep.json), else the directory's name."""
    return SweepDir(d).name() if SweepDir(d).holds_sweep() else Path(d).resolve().name


def collect(sources: list[str | Path], top: int | None = None, method: str = "pca", log=None,
            checkpoint: str = "last", categories: dict | None = None) -> Collection:
    """Frames and views for run and sweep directories, in the order given: each run's `checkpoint` and, for
    a run directory, its untrained table beside it. `categories` ({"category": ["word", ...]}) colour and
    score any run (default: a stories run's own)."""
    if method not in METHODS:
        raise UserError(f"{option('map', f'{method!r}')}: choose one of {', '.join(METHODS)}")
    if top is not None and top < 2:
        raise UserError(f"{option('top', top)}: the map needs at least 2 tokens")
    if not sources:
        raise UserError("give at least one run directory or sweep directory")
    c = Collection(top, method, log or logging.info, checkpoint, categories)
    for src in map(Path, sources):
        check_dir(src)
        (_add_sweep if SweepDir(src).holds_sweep() else _add_run)(c, src)
    return c


def _add_run(c: Collection, run_dir: Path) -> None:
    RunDir(run_dir).check_is_run()  # a config.json alone is no run: said before any checkpoint is looked for
    views = [_view(c, run_dir, c.checkpoint)]
    # no ckpt_init.pt (an imported model): the trained table alone; a damaged one is an error
    if c.checkpoint != "init" and RunDir(run_dir).has_checkpoint("init"):
        views.append(_view(c, run_dir, "init"))
    c.frames.append({"label": run_dir.name, "views": views})


def _add_sweep(c: Collection, d: Path) -> None:
    sweep_dir = SweepDir(d)
    runs = []
    for p in sweep_dir.definition(partial=True).get("points") or []:  # checked: a damaged one is named
        run = sweep_dir.run(str(p["name"] if isinstance(p, dict) else p))
        if not run.holds_run() or not (run.path / CONFIG).is_file():
            continue  # not started (a config.json alone is no run: lrngpt.core.ownership.is_run)
        if not run.has_checkpoint(c.checkpoint):  # started but no checkpoint yet: leave it out
            c.log(f"explore: {run.path.name} left out (no {CHECKPOINT_FILES[c.checkpoint]} yet)")
            continue
        cfg = run.config()  # checked: a damaged config.json is named, field and all
        runs.append((cfg.model.n_embd, cfg.train.seed, run.path))
    several_seeds = len({seed for _, seed, _ in runs}) > 1
    for width, seed, run_dir in sorted(runs, key=lambda r: (r[0], r[1])):
        label = f"d={width}" + (f", seed {seed}" if several_seeds else "")
        # a damaged checkpoint is an error, not a run quietly left out
        c.frames.append({"label": label, "views": [_view(c, run_dir, c.checkpoint, label)]})
    if not c.frames:
        raise UserError(f"sweep {d} has no run with a checkpoint yet; run `lrn sweep` first")


def _vocab(c: Collection, run, rows: int) -> Vocab:
    """The run's vocab, made on first use (a sweep's runs share one)."""
    key = f"{run.tokenizer.hash}/{run.checkpoint.get('data_key')}/{rows}"
    if key not in c.vocabs:
        counts, note = train_counts(run, rows, c.log)
        ids = frequency_order(counts, rows)[:c.top]  # top None: every row
        given = c.categories if c.categories is not None else stories_categories() if has_categories(run) else {}
        c.vocabs[key] = Vocab(run.tokenizer, rows, counts, note, ids, resolve_categories(run.tokenizer, given)["ids"])
    return c.vocabs[key]


def _view(c: Collection, run_dir: Path, which: str, label: str | None = None) -> int:
    """One table, mapped: which is the checkpoint (last, best, init)."""
    run, table = load_table(run_dir, which)
    vocab = _vocab(c, run, table.shape[0])
    index = list(c.vocabs.values()).index(vocab)
    bpb, note = _val_bpb(run_dir, which)
    p = category_purity(table, vocab.categories, PURITY_K) if len(vocab.categories) >= 2 else {}
    view = {"label": f"{label + ', ' if label else ''}{CHECKPOINT_LABELS.get(which, which)}",
            "source": str(run_dir), "step": run.step, "d": int(table.shape[1]), "vocab": index, "val_bpb": bpb,
            "bpb_note": note, "used_axes": used_axes(table, 0.9), "purity": p.get("overall"),
            "chance": p.get("chance"), "variance": None, "rows": table.numpy().astype(np.float32)[vocab.ids]}
    rows = view["rows"].astype(np.float64)  # the page's tokens' rows, placed in 2-D
    if c.method == "pca":
        view["coords"], view["variance"] = pca_2d(rows)  # with each axis's share of the variance
    else:
        c.log(f"explore: {c.method} of {len(rows):,} tokens for {view['label']} ({view['source']})")
        view["coords"] = _nonlinear_2d(rows, c.method)
    # turned to match the vocabulary's map before (PCA's signs are arbitrary): steps move only what changed
    before = [v["coords"] for v in c.views if v["vocab"] == index]
    if before:
        view["coords"] = procrustes(view["coords"], before[-1])
    c.views.append(view)
    return len(c.views) - 1


def _val_bpb(run_dir: Path, which: str) -> tuple[float | None, str]:
    """A table's val bpb and where it comes from: the first of its sources that holds a number."""
    metrics = read_metrics(run_dir)
    evals = periodic_evals(metrics)
    if which == "init":
        sources = [(evals.get(0), "periodic evaluation at step 0")]
    else:
        s = RunDir(run_dir).summary() or {}
        best, step = best_periodic_val(metrics)
        last = max(evals, default=-1)  # (-1: none, and no value)
        sources = [(s.get("best_val_bpb"), f"best periodic evaluation, at step {s.get('best_step')}"),
                   (best, f"best periodic evaluation, at step {step}")] if which == "best" else []
        sources += [(s.get("val_bpb"), "summary.json"), (evals.get(last), f"periodic evaluation at step {last}")]
    return next(((float(v), note) for v, note in sources if isinstance(v, int | float)), (None, "not evaluated"))


# ---- the 2-D maps --------------------------------------------------------------------------

def pca_2d(rows: np.ndarray) -> tuple[np.ndarray, list[float]]:
    """The rows projected on their first two principal axes, and each axis's share of the variance."""
    x = rows - rows.mean(axis=0, keepdims=True)
    x = np.pad(x, ((0, 0), (0, max(0, 2 - x.shape[1]))))  # a width-1 table: a second axis of zeros
    _, s, vt = np.linalg.svd(x, full_matrices=False)
    total = float((s**2).sum()) or 1.0  # (all rows alike: no variance, shares 0)
    return x @ vt[:2].T, [float(v) / total for v in s[:2] ** 2]


def procrustes(b: np.ndarray, a: np.ndarray) -> np.ndarray:
    """b rotated (or reflected) to lie as close to a as an orthogonal map allows."""
    u, _, vt = np.linalg.svd(b.T @ a)
    return b @ (u @ vt)


def _nonlinear_2d(rows: np.ndarray, method: str) -> np.ndarray:
    if method == "tsne":
        try:  # optional: its absence is said in one line
            from sklearn.manifold import TSNE
        except ImportError:
            raise UserError(f"{option('map')} tsne needs scikit-learn: pip install scikit-learn (or use {option('map')} pca)") from None
        perplexity = float(min(30, max(2, len(rows) // 4)))
        return TSNE(2, metric="cosine", init="pca", perplexity=perplexity, random_state=0).fit_transform(rows)
    try:  # optional: its absence is said in one line
        import umap
    except ImportError:
        raise UserError(f"{option('map')} umap needs umap-learn: pip install umap-learn (or use {option('map')} pca)") from None
    return umap.UMAP(n_components=2, metric="cosine", random_state=0).fit_transform(rows)
