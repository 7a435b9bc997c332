"""The Python API: the one place a workflow is assembled; `lrn` and a notebook both run it.

    import lrngpt
    cfg = lrngpt.config("mlp-tiny", **{"train.steps": 60})      # a checked RunConfig
    lrngpt.plan(cfg)["passes"]                                    # what it reads, nothing trained
    run = lrngpt.train(cfg, out="runs/tiny")                      # a Run (shown inline in Jupyter)
    run.eval(split=None, by_reads=True), run.sample("Once upon a time", max_new_tokens=30)
    sweep = lrngpt.sweep("embed-dim", scale="tiny", out="runs/widths", set={"train.steps": 20})
    sweep.table, sweep.findings                                   # a DataFrame, the chapter's findings judged

Every `lrn` command is one call here (lrngpt/cli/ imports nothing else of the package): `lrn train`
is `train` (or `plan` with --dry-run), `lrn sweep` is `sweep`, `lrn eval` is `Run.eval`, `lrn
report` is `write_report`, `lrn data prepare` is `data_prepare`, and so on; so both front ends compute the
same numbers and say the same things. Results are plain data (dicts, lists, floats), tables a pandas
DataFrame when pandas is importable, figures matplotlib `Figure`s; a `Run` and a `Sweep` render as
the report's headline and figure under a cell. Every argument is checked: a wrong type or value
raises `lrngpt.UserError` with the one line `lrn` prints (lrngpt/api/checks.py). The names load
on first use (`__getattr__` below imports the one module that defines a name), so `import lrngpt`,
`lrn --help` and the commands that need no torch (`lrn theory`, `lrn cost`) import neither torch nor
matplotlib, while every module below imports what it needs at its top.

The modules: configs.py (config, config_list/show/keys), runs.py (plan, train, load), results.py
(Run, table), sweeps.py (sweep, load_sweep, Sweep), embedding.py (embed_*), outputs.py
(write_report, export_hf, import_gpt2), corpus.py (data_*, tokenizer_*), lessons.py (lesson_*, theory_pip*), theory.py (the
theory that needs no torch, cost_*),
quickstart.py (demo), machine.py (doctor), rare_tokens.py (undertrained, planted_tokens_figure), shapes.py (width_from_depth,
width_depth_finding), texts.py (what `lrn` prints for each result), frontend.py (what `lrn` needs for
its help and errors).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import typing

__all__ = ["Run", "Sweep", "UserError", "__version__", "config", "config_keys", "config_list", "config_show",
           "cost_gpt", "cost_mlp", "cost_models", "data_prepare", "data_stories", "demo", "doctor", "embed_axes",
           "embed_explore", "embed_export", "embed_neighbors", "embed_purity", "export_hf", "import_gpt2",
           "lesson_lookup", "lesson_lookup_grad", "lesson_renumber", "lesson_softmax_bottleneck",
           "lesson_superposition", "lesson_superposition_figure", "lesson_tying", "load", "load_sweep", "plan",
           "planted_tokens_figure", "run_chapter",
           "sweep", "table", "theory_fourth_root", "theory_jl", "theory_pip", "theory_pip_figure", "theory_random_cosine",
           "tokenizer_decode", "tokenizer_encode", "tokenizer_show", "tokenizer_train",
           "train", "undertrained", "width_depth_finding", "width_from_depth", "write_report"]
# Each public name and the module that defines it: `lrngpt.api.train` imports lrngpt.api.runs (and
# through it torch) the first time it is read, and nothing before.
WHERE = {
    "run_chapter": "lrngpt.api.chapter_studies",
    "config": "lrngpt.api.configs",
    "config_keys": "lrngpt.api.configs",
    "config_list": "lrngpt.api.configs",
    "config_show": "lrngpt.api.configs",
    "data_prepare": "lrngpt.api.corpus",
    "data_stories": "lrngpt.api.corpus",
    "tokenizer_decode": "lrngpt.api.corpus",
    "tokenizer_encode": "lrngpt.api.corpus",
    "tokenizer_show": "lrngpt.api.corpus",
    "tokenizer_train": "lrngpt.api.corpus",
    "embed_axes": "lrngpt.api.embedding",
    "embed_explore": "lrngpt.api.embedding",
    "embed_export": "lrngpt.api.embedding",
    "embed_neighbors": "lrngpt.api.embedding",
    "embed_purity": "lrngpt.api.embedding",
    "lesson_lookup": "lrngpt.api.lessons",
    "lesson_lookup_grad": "lrngpt.api.lessons",
    "lesson_renumber": "lrngpt.api.lessons",
    "lesson_softmax_bottleneck": "lrngpt.api.lessons",
    "lesson_superposition": "lrngpt.api.lessons",
    "lesson_superposition_figure": "lrngpt.api.lessons",
    "lesson_tying": "lrngpt.api.lessons",
    "theory_pip": "lrngpt.api.lessons",
    "theory_pip_figure": "lrngpt.api.lessons",
    "doctor": "lrngpt.api.machine",
    "export_hf": "lrngpt.api.outputs",
    "import_gpt2": "lrngpt.api.outputs",
    "write_report": "lrngpt.api.outputs",
    "demo": "lrngpt.api.quickstart",
    "undertrained": "lrngpt.api.rare_tokens",
    "planted_tokens_figure": "lrngpt.api.rare_tokens",
    "Run": "lrngpt.api.results",
    "table": "lrngpt.api.results",
    "load": "lrngpt.api.runs",
    "plan": "lrngpt.api.runs",
    "train": "lrngpt.api.runs",
    "width_depth_finding": "lrngpt.api.shapes",
    "width_from_depth": "lrngpt.api.shapes",
    "Sweep": "lrngpt.api.sweeps",
    "load_sweep": "lrngpt.api.sweeps",
    "sweep": "lrngpt.api.sweeps",
    "cost_gpt": "lrngpt.api.theory",
    "cost_mlp": "lrngpt.api.theory",
    "cost_models": "lrngpt.api.theory",
    "theory_fourth_root": "lrngpt.api.theory",
    "theory_jl": "lrngpt.api.theory",
    "theory_random_cosine": "lrngpt.api.theory",
    "__version__": "lrngpt.core.version",
    "UserError": "lrngpt.errors",
}
assert set(WHERE) == set(__all__)

if typing.TYPE_CHECKING:  # what a checker sees: the same names, with their real signatures
    from lrngpt.api.chapter_studies import run_chapter
    from lrngpt.api.configs import config, config_keys, config_list, config_show
    from lrngpt.api.corpus import (
        data_prepare,
        data_stories,
        tokenizer_decode,
        tokenizer_encode,
        tokenizer_show,
        tokenizer_train,
    )
    from lrngpt.api.embedding import embed_axes, embed_explore, embed_export, embed_neighbors, embed_purity
    from lrngpt.api.lessons import (
        lesson_lookup,
        lesson_lookup_grad,
        lesson_renumber,
        lesson_softmax_bottleneck,
        lesson_superposition,
        lesson_superposition_figure,
        lesson_tying,
        theory_pip,
        theory_pip_figure,
    )
    from lrngpt.api.machine import doctor
    from lrngpt.api.outputs import export_hf, import_gpt2, write_report
    from lrngpt.api.quickstart import demo
    from lrngpt.api.rare_tokens import planted_tokens_figure, undertrained
    from lrngpt.api.results import Run, table
    from lrngpt.api.runs import load, plan, train
    from lrngpt.api.shapes import width_depth_finding, width_from_depth
    from lrngpt.api.sweeps import Sweep, load_sweep, sweep
    from lrngpt.api.theory import (
        cost_gpt,
        cost_mlp,
        cost_models,
        theory_fourth_root,
        theory_jl,
        theory_random_cosine,
    )
    from lrngpt.core.version import __version__
    from lrngpt.errors import UserError


def _figure_png(fig) -> bytes:
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    return buf.getvalue()


def _show_figures_in_jupyter() -> None:
    """The API's figures are matplotlib `Figure`s made without pyplot, so IPython shows them as
    `<Figure size ...>` text unless `%matplotlib inline` registered a printer: register one by name
    (matplotlib is not imported here), only where none is, so a backend the user chose keeps its own."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or not hasattr(shell, "display_formatter"):
        return
    png = shell.display_formatter.formatters["image/png"]
    if ("matplotlib.figure", "Figure") not in png.deferred_printers and not any(
            f"{t.__module__}.{t.__name__}" == "matplotlib.figure.Figure" for t in png.type_printers):
        png.for_type_by_name("matplotlib.figure", "Figure", _figure_png)


_show_figures_in_jupyter()


def __getattr__(name: str):
    if name in WHERE:
        value = getattr(importlib.import_module(WHERE[name]), name)
        globals()[name] = value  # found directly from now on
        return value
    if importlib.util.find_spec(f"{__name__}.{name}") is not None:  # a module of the API: api.texts
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'lrngpt.api' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*__all__, *(n for n in globals() if n.startswith("__"))})
