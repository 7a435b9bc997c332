"""What the Python API returns for a run and a sweep: `Run` and `Sweep` read their directories as
`lrn` does (eval, sample, embed, report), render the report's headline and figure inline in Jupyter
(`_repr_html_`) and give tables through `table` (a DataFrame when pandas is importable)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lrngpt.errors import UserError

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from torch import nn

    from lrngpt.runconfig.schema import RunConfig
    from lrngpt.tokenizer.bpe import Tokenizer

CHECKPOINTS = ("last", "best", "init")


def table(rows: list[dict]) -> Any:
    """`rows` as a pandas DataFrame when pandas is importable, else the list of dicts itself.

    Example: ``lrngpt.table([{"d": 4, "bpb": 2.1}])``"""
    try:
        import pandas
    except ImportError:
        return rows
    return pandas.DataFrame(rows)


class Run:
    """A run directory and one of its checkpoints; every method reads it as `lrn` does.

    Example: ``run = lrngpt.load("runs/tiny"); run.summary["val_bpb"]; run.neighbors(" Lily")``"""

    def __init__(self, path: str | Path, checkpoint: str = "last", device: str = "cpu"):
        from lrngpt.store.rundir import RunDir

        if checkpoint not in CHECKPOINTS:
            raise UserError(f"checkpoint must be last, best or init (got {checkpoint!r})")
        self.path, self.checkpoint, self.device = Path(path), checkpoint, device
        self._dir = RunDir(self.path)
        self._dir.check_is_run()
        self._loaded = None

    def __repr__(self) -> str:
        s = self.summary
        done = f"step {s['step']}, val bpb {s['val_bpb']:.4f}" if s and s.get("val_bpb") is not None else "not finished"
        return f"Run({str(self.path)!r}, checkpoint={self.checkpoint!r}: {done})"

    @property
    def config(self) -> RunConfig:
        """The run's config.json, checked. Example: ``run.config.model.n_embd``"""
        return self._dir.config()

    @property
    def summary(self) -> dict | None:
        """summary.json (val/train bpb, gap, passes, best periodic val bpb, ...), None until the run
        finishes. Example: ``run.summary["val_bpb"]``"""
        return self._dir.summary()

    @property
    def metrics(self) -> Any:
        """metrics.jsonl's rows (training logs, periodic and final evaluations): a DataFrame with pandas,
        else a list of dicts. Example: ``run.metrics.dropna(subset=["val_bpb"])``"""
        return table(self._dir.metrics())

    def _load(self):
        if self._loaded is None:
            self._loaded = self._dir.load(self.checkpoint, self.device)
        return self._loaded

    @property
    def model(self) -> nn.Module:
        """The torch module of this checkpoint, in eval mode. Example: ``run.model.token_embedding.weight.shape``"""
        return self._load().model

    @property
    def tokenizer(self) -> Tokenizer:
        """The run's BPE. Example: ``run.tokenizer.encode(" Lily")``"""
        return self._load().tokenizer

    @property
    def step(self) -> int:
        """The global step of this checkpoint. Example: ``run.step``"""
        return self._load().step

    def eval(self, split: str | None = "val", context: str = "window", max_tokens: int | None = None,
             device: str = "auto", by_reads: bool = False) -> dict:
        """Bits per byte of this checkpoint (`lrn eval`): split val, train, or None for both and their gap;
        context window (as training measures) or full (every target with its true history).

        Example: ``run.eval(split=None)["gap"]``"""
        from lrngpt.inference.evaluate import evaluate_run

        if split not in ("val", "train", None):
            raise UserError(f"split must be val, train or None for both (got {split!r})")
        return evaluate_run(self.path, self.checkpoint, split, max_tokens, device=device, context=context,
                            by_reads=by_reads)  # by_reads: train bpb of the targets read vs never read (lrn eval)

    def sample(self, prompt: str, max_new_tokens: int = 100, temperature: float = 1.0, top_k: int | None = None,
               top_p: float = 1.0, seed: int = 0) -> str:
        """The prompt and its continuation (`lrn sample`); the same seed gives the same text.

        Example: ``run.sample("Once upon a time", max_new_tokens=40, temperature=0.8, top_k=40, seed=1)``"""
        from lrngpt.inference.sample import SamplingConfig, sample_texts

        cfg = SamplingConfig(max_new_tokens, temperature, top_k, top_p, seed)
        return sample_texts(self._load(), prompt, cfg, 1, True, self.device)[0]["text"]

    def neighbors(self, token: str, k: int = 10) -> list[dict]:
        """The k nearest tokens by cosine in the embedding table (`lrn embed neighbors`), as
        [{"id", "token", "cosine"}]; a word the BPE splits is looked up by the mean of its pieces.

        Example: ``run.neighbors(" Lily", k=5)``"""
        from lrngpt.analysis.embeddings import token_neighbors

        table_ = self.model.token_embedding.weight.detach().float()
        return token_neighbors(self.tokenizer, table_, token, k)["neighbors"]

    def axes(self, energy: float = 0.9) -> dict:
        """Used axes of the table, beside the untrained and a random table's (`lrn embed axes`).

        Example: ``run.axes()["used_axes"]``"""
        from lrngpt.analysis.embeddings import run_axes

        return run_axes(self.path, energy, checkpoint=self.checkpoint)

    def purity(self, categories: Mapping[str, list[str]] | str | Path | None = None, k: int = 10) -> dict:
        """Category purity of the table (`lrn embed purity`): categories as {"name": [words]}, a JSON or
        TSV file, or None for a stories run's own; trained, untrained and chance.

        Example: ``run.purity({"month": ["January", "March"], "number": ["two", "three"]})["trained"]["overall"]``"""
        from lrngpt.analysis.embeddings import purity

        cats = {str(k_): list(v) for k_, v in categories.items()} if isinstance(categories, Mapping) else categories
        return purity(self.path, k, cats, self.checkpoint)

    def figure(self) -> Figure | None:
        """The training curves (loss, periodic val bpb against step) as a matplotlib Figure, None before
        any metrics. Example: ``run.figure().savefig("curves.png")``"""
        from lrngpt.report.runs import curves_figure

        return curves_figure({self.path.name: self._dir.metrics()})

    def report(self, out: str | Path | None = None, force: bool = False) -> str:
        """Write the HTML report (`lrn report`; default RUN/report.html) and its explorer; the path.

        Example: ``run.report()``"""
        from lrngpt.report import write_report

        return write_report([self.path], out, force)["path"]

    def explore(self, out: str | Path, top: int | None = None) -> str:
        """Write the embedding explorer page (`lrn embed explore`); its path.

        Example: ``run.explore("tiny-explorer.html")``"""
        from lrngpt.explorer import write_explorer

        return write_explorer([self.path], out, top, checkpoint=self.checkpoint)["path"]

    def _repr_html_(self) -> str:
        from lrngpt.report.html import esc, figure
        from lrngpt.report.runs import curves_png, run_headline

        metrics = self._dir.metrics()
        head = run_headline(self.path, self.config.to_dict(), self.summary, metrics)
        png = curves_png({self.path.name: metrics})
        fig = figure(png, "training loss and validation bpb against step") if png else ""
        return f'<div class="lrngpt-run"><h3>Run {esc(str(self.path))}</h3>{head}{fig}</div>'


class Sweep:
    """A sweep directory: its definition, the finished runs' table, figures and runs.

    Example: ``sw = lrngpt.load_sweep("runs/widths"); sw.table[["n_embd", "val_bpb"]]; sw.figure()``"""

    COLUMNS = ("name", "n_embd", "seed", "steps", "params", "embedding", "val_bpb", "train_bpb", "gap", "passes",
               "best_val_bpb", "best_val_step", "used_axes", "seconds", "corpus")

    def __init__(self, path: str | Path):
        from lrngpt.experiments.sweepdir import SweepDir

        self.path = Path(path)
        self.dir = SweepDir(self.path)
        if not self.dir.holds_sweep():
            raise UserError(f"{self.path} holds no sweep (no sweep.json); run lrngpt.sweep(...) or lrn sweep first")
        self.definition: dict = self.dir.definition()

    def __repr__(self) -> str:
        return f"Sweep({str(self.path)!r}: {self.definition.get('name')}, {len(self.rows)} of " \
               f"{len(self.definition.get('points') or [])} runs finished)"

    def _doc(self) -> dict:
        from lrngpt.report.sweeps import sweep_docs

        return sweep_docs([self.path])[0]

    @property
    def rows(self) -> list[dict]:
        """Every finished run's row as summary.json holds it (plain dicts). Example: ``sw.rows[0]["val_bpb"]``"""
        from lrngpt.experiments.summary import collect

        return collect(self.path)["rows"]

    @property
    def table(self) -> Any:
        """The results table, one row per finished run: a DataFrame with pandas, else a list of dicts.

        Example: ``sw.table.sort_values("val_bpb")``"""
        return table([{c: r.get(c) for c in self.COLUMNS} for r in self.rows])

    def figure(self, name: str = "val_bpb_by_width") -> Figure | None:
        """One of the chapter's figures as a matplotlib Figure: val_bpb_by_width, train_vs_val or
        val_bpb_by_step (None while the sweep has no data for it).

        Example: ``sw.figure("train_vs_val")``"""
        from lrngpt.experiments.figures import FIGURES

        plots = {n: plot for n, plot, _ in FIGURES}
        if name not in plots:
            raise UserError(f"unknown figure {name!r}; figures: {', '.join(plots)}")
        drawn = plots[name]([self._doc()])
        return None if drawn is None else drawn[0]

    def run(self, point: str | int) -> Run:
        """One point's Run, by its name (d64-s1337-t30) or its width (64: the first run of that width).

        Example: ``sw.run(64).neighbors(" red")``"""
        if isinstance(point, int) and not isinstance(point, bool):
            names = [r["name"] for r in self.rows if r["n_embd"] == point]
            if not names:
                raise UserError(f"no finished run of width {point} in {self.path}")
            point = names[0]
        return Run(self.dir.run_path(str(point)))

    def report(self, out: str | Path | None = None, force: bool = False) -> str:
        """Write the sweep's HTML report (`lrn report`; default SWEEP/report.html) and explorer; the path.

        Example: ``sw.report()``"""
        from lrngpt.report import write_report

        return write_report([self.path], out, force)["path"]

    def explore(self, out: str | Path, top: int | None = None) -> str:
        """Write the explorer page stepping through the widths (`lrn embed explore SWEEP`); its path.

        Example: ``sw.explore("widths.html")``"""
        from lrngpt.explorer import write_explorer

        return write_explorer([self.path], out, top)["path"]

    def _repr_html_(self) -> str:
        from lrngpt.experiments.figures import plot_val_by_width, png_bytes
        from lrngpt.report.html import esc, figure
        from lrngpt.report.sweeps import results_html, sweep_headline

        doc = self._doc()
        fig = figure(png_bytes(plot_val_by_width([doc])[0]), "val bpb and parameters by embedding width") \
            if doc["rows"] else ""
        return (f'<div class="lrngpt-sweep"><h3>Sweep {esc(str(doc["sweep"]))} ({esc(str(self.path))})</h3>'
                f"{sweep_headline([doc])}{fig}{results_html([doc])}</div>")
