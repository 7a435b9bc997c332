"""What the Python API returns for a run: `Run` reads its directory as `lrn` does and renders the report's
headline and curves in Jupyter; `table` gives rows as a DataFrame when pandas is importable."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from lrngpt.analysis.embeddings import purity, run_axes, token_neighbors
from lrngpt.api.checks import Checkpoint, Context, Split, checked, positive
from lrngpt.api.rare_tokens import undertrained
from lrngpt.device.distributed import resolve_device
from lrngpt.errors import UserError, option
from lrngpt.explorer import write_explorer
from lrngpt.inference.evaluate import evaluate_run
from lrngpt.inference.sample import SamplingConfig, sample_texts
from lrngpt.interop.hf_export import export_run_hf
from lrngpt.report import write_report_pages
from lrngpt.report.html import esc, figure
from lrngpt.report.runs import curves_figure, curves_png, run_headline
from lrngpt.store.rundir import RunDir

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from torch import nn

    from lrngpt.runconfig.schema import RunConfig
    from lrngpt.tokenizer.bpe import Tokenizer


@checked
def table(rows: Sequence[Mapping[str, Any]]) -> Any:
    """`rows` as a pandas DataFrame when pandas is importable, else the list of dicts itself. Example: ``lrngpt.table([{"d": 4, "bpb": 2.1}])``"""
    try:
        import pandas
    except ImportError:
        return list(rows)
    return pandas.DataFrame(list(rows))


class Run:
    """A run directory and one of its checkpoints; every method reads it as `lrn` does. `device`: where
    its weights load and run (auto, cpu, cuda, cuda:N or mps). `result`: for lrngpt.train the summary it
    returned (None on the ranks of a torchrun job other than 0), None for lrngpt.load.

    Example: ``run = lrngpt.load("runs/tiny"); run.summary["val_bpb"]; run.neighbors(" Lily")``"""

    @checked
    def __init__(self, path: str | Path, checkpoint: Checkpoint = "last", device: str = "auto"):
        self.path, self.checkpoint, self.device = Path(path), checkpoint, device
        self.result: Any = None  # a dict, or None (typed Any so `run.result["step"]` checks as written)
        self._dir = RunDir(self.path)
        self._dir.check_is_run()

    def __repr__(self) -> str:
        s = self.summary
        done = f"step {s['step']}, val bpb {s['val_bpb']:.4f}" if s and s.get("val_bpb") is not None else "not finished"
        return f"Run({str(self.path)!r}, checkpoint={self.checkpoint!r}: {done})"

    @property
    def config(self) -> RunConfig:
        """The run's config.json, checked. Example: ``run.config.model.n_embd``"""
        return self._dir.config()

    @property
    def summary(self) -> Any:
        """summary.json as a dict (val/train bpb, gap, passes, ...), None until the run finishes (typed Any, so
        `run.summary["val_bpb"]` checks as written). Example: ``run.summary["val_bpb"]``"""
        return self._dir.summary()

    @property
    def metrics(self) -> Any:
        """metrics.jsonl's rows as a table. Example: ``run.metrics.dropna(subset=["val_bpb"])``"""
        return table(self._dir.metrics())

    @cached_property
    def _device(self) -> str:
        return resolve_device(self.device)

    @cached_property
    def _loaded(self) -> Any:
        return self._dir.load(self.checkpoint, self._device)

    @property
    def model(self) -> nn.Module:
        """The torch module of this checkpoint, in eval mode. Example: ``sum(p.numel() for p in run.model.parameters())``"""
        return self._loaded.model

    @property
    def tokenizer(self) -> Tokenizer:
        """The run's BPE. Example: ``run.tokenizer.encode(" Lily")``"""
        return self._loaded.tokenizer

    @property
    def step(self) -> int:
        """The global step of this checkpoint. Example: ``run.step``"""
        return self._loaded.step

    @checked
    def eval(self, split: Split | None = "val", context: Context = "window", max_tokens: int | None = None,
             train_tokens: int | None = None, corpus: str | None = None, by_reads: bool = False,
             device: str | None = None) -> dict:
        """Bits per byte of this checkpoint (`lrn eval`, whose options these are): split val, train, or None for
        both and their gap; context window or full; `corpus` another text, encoded with the run's tokenizer;
        `by_reads` splits the train bpb into the targets training read and those it never read.

        Example: ``run.eval(split=None, by_reads=True)["train_bpb_unread"]``"""
        positive(max_tokens, option('max_tokens'))
        positive(train_tokens, option('train_tokens'))
        return evaluate_run(self.path, self.checkpoint, split, max_tokens, train_tokens, corpus,
                            device or self._device, context=context, by_reads=by_reads)

    @checked
    def samples(self, prompt: str, num_samples: int = 1, max_new_tokens: int = 100, temperature: float = 1.0,
                top_k: int | None = None, top_p: float = 1.0, seed: int = 0, stop_at_eot: bool = True,
                use_cache: bool = True, on_text: Callable[[int, str], None] | None = None) -> dict:
        """`lrn sample`: `num_samples` continuations of the prompt with seeds seed, seed+1, ...: "samples" (text,
        completion, tokens, seed each), the settings and the step. `on_text(i, piece)` sees sample i grow;
        `temperature=0` is greedy. Raises UserError for a bad setting (an empty prompt, top_k < 1, ...).

        Example: ``[s["text"] for s in run.samples("Lily saw a", num_samples=3, top_k=40)["samples"]]``"""
        cfg = SamplingConfig(max_new_tokens, temperature, top_k, top_p, seed, stop_at_eot=stop_at_eot)
        loaded = self._loaded
        texts = sample_texts(loaded, prompt, cfg, num_samples, use_cache, self._device, on_text=on_text)
        return {"samples": texts, "settings": {**asdict(cfg), "num_samples": num_samples, "use_cache": use_cache},
                "checkpoint": self.checkpoint, "step": loaded.step, "run_dir": str(self.path)}

    @checked
    def sample(self, prompt: str, max_new_tokens: int = 100, temperature: float = 1.0, top_k: int | None = None,
               top_p: float = 1.0, seed: int = 0) -> str:
        """The prompt and its continuation (`lrn sample`); the same seed gives the same text.

        Example: ``run.sample("Once upon a time", max_new_tokens=40, temperature=0.8, top_k=40, seed=1)``"""
        return self.samples(prompt, 1, max_new_tokens, temperature, top_k, top_p, seed)["samples"][0]["text"]

    @checked
    def neighbors(self, token: str, k: int = 10) -> list[dict]:
        """The k nearest tokens by cosine (`lrn embed neighbors`), as [{"id", "token", "cosine"}].

        Example: ``run.neighbors(" Lily", k=5)``"""
        positive(k, "k (-k)")
        table_ = cast("nn.Embedding", self.model.token_embedding).weight.detach().float()  # both models' property
        return token_neighbors(self.tokenizer, table_, token, k)["neighbors"]

    @checked
    def axes(self, energy: float = 0.9) -> dict:
        """Used axes of the table, beside the untrained and a random table's (`lrn embed axes`).

        Example: ``run.axes()["used_axes"]``"""
        return run_axes(self.path, energy, checkpoint=self.checkpoint)

    @checked
    def purity(self, categories: Mapping[str, Sequence[str]] | str | Path | None = None, k: int = 10) -> dict:
        """Category purity of the table (`lrn embed purity`), as lrngpt.embed_purity.

        Example: ``run.purity({"month": ["January", "March"], "number": ["two", "three"]})["trained"]["overall"]``"""
        positive(k, "k (-k)")
        return purity(self.path, k, categories_arg(categories), self.checkpoint)

    def figure(self) -> Figure | None:
        """The training curves (loss, periodic val bpb against step) as a matplotlib Figure, None before
        any metrics. Example: ``if (fig := run.figure()) is not None: fig.savefig("curves.png")``"""
        return curves_figure({self.path.name: self._dir.metrics()})

    @checked
    def report(self, out: str | Path | None = None) -> str:
        """Write the HTML report (`lrn report`; default RUN/report.html) and its explorer; the path.

        Example: ``run.report()``"""
        return write_report_pages([self.path], out, checkpoint=self.checkpoint)["path"]

    @checked
    def explore(self, out: str | Path, top: int | None = None) -> str:
        """Write the embedding explorer page (`lrn embed explore`); its path.

        Example: ``run.explore("tiny-explorer.html")``"""
        return write_explorer([self.path], out, top, checkpoint=self.checkpoint)["path"]

    @checked
    def undertrained(self, top: int | None = None) -> dict:
        """The under-trained tokens first (`lrn embed undertrained`), as lrngpt.undertrained.

        Example: ``lrngpt.table(run.undertrained(top=20)["tokens"])``"""
        return undertrained(self, top=top)

    @checked
    def export_hf(self, out: str | Path, force: bool = False, license: str | None = None) -> str:
        """Write this GPT run as a Hugging Face GPT-2 directory (`lrn export`), as lrngpt.export_hf; its path.

        Example: ``run.export_hf("exports/gpt-cpu")``"""
        if self.checkpoint == "init":
            raise UserError(f"{option('checkpoint')} init: export the trained weights, last or best")
        return export_run_hf(self.path, out, checkpoint=self.checkpoint, force=force, license=license)["out"]

    def _repr_html_(self) -> str:
        metrics = self._dir.metrics()
        head = run_headline(self.path, self.config.to_dict(), self.summary, metrics)
        png = curves_png({self.path.name: metrics})
        fig = figure(png, "training loss and validation bpb against step") if png else ""
        return f'<div class="lrngpt-run"><h3>Run {esc(str(self.path))}</h3>{head}{fig}</div>'


Categories = Mapping[str, Sequence[str]] | str | Path | None  # {"name": [words]}, a JSON or TSV file, or a stories run's own


def categories_arg(categories: Categories) -> dict | str | Path | None:
    """Word categories as the analysis takes them: a mapping as a plain dict of lists."""
    if isinstance(categories, Mapping):
        return {str(name): list(words) for name, words in categories.items()}
    return categories


def as_run(run: Run | str | Path, checkpoint: Checkpoint | None = None) -> Run:
    """`run` as a Run with the weights `checkpoint` (None: the Run's own, else last)."""
    if isinstance(run, Run):
        if checkpoint is None or checkpoint == run.checkpoint:
            return run
        return Run(run.path, checkpoint, run.device)
    return Run(run, checkpoint or "last")
