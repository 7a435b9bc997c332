"""The Python API: the one place a workflow is assembled; `lrn` and a notebook both run it.

Every `lrn` command is one call here (lrngpt/cli/ imports nothing else of the package): `lrn train` is
`train` (or `plan` with --dry-run), `lrn sweep` is `sweep`, `lrn eval` is `Run.eval`, and so on; so both
front ends compute the same numbers and say the same things. Results are plain data, tables a pandas
DataFrame when pandas is importable, figures matplotlib `Figure`s. Every argument is checked: a wrong
type or value raises `lrngpt.UserError` with the one line `lrn` prints (checks.py). The names load on
first use (WHERE), so `import lrngpt`, `lrn --help`, `lrn theory` and `lrn cost` import neither torch
nor matplotlib. texts.py holds what `lrn` prints for each result, frontend.py what it needs for its
help and errors.
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
# The module that defines each public name: `lrngpt.api.train` imports lrngpt.api.runs (and through it
# torch) the first time it is read, and nothing before.
WHERE = {name: f"lrngpt.{module}" for module, names in {
    "api.chapter_studies": "run_chapter", "api.configs": "config config_keys config_list config_show",
    "api.corpus": "data_prepare data_stories tokenizer_decode tokenizer_encode tokenizer_show tokenizer_train",
    "api.embedding": "embed_axes embed_explore embed_export embed_neighbors embed_purity",
    "api.lessons": "lesson_lookup lesson_lookup_grad lesson_renumber lesson_softmax_bottleneck lesson_superposition "
                   "lesson_superposition_figure lesson_tying theory_pip theory_pip_figure",
    "api.machine": "doctor", "api.outputs": "export_hf import_gpt2 write_report", "api.quickstart": "demo",
    "api.rare_tokens": "undertrained planted_tokens_figure", "api.results": "Run table",
    "api.runs": "load plan train", "api.shapes": "width_depth_finding width_from_depth",
    "api.sweeps": "Sweep load_sweep sweep",
    "api.theory": "cost_gpt cost_mlp cost_models theory_fourth_root theory_jl theory_random_cosine",
    "core.version": "__version__", "errors": "UserError",
}.items() for name in names.split()}
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


def _show_figures_in_jupyter() -> None:
    """Figures made without pyplot show in IPython as `<Figure size ...>` text unless a printer is
    registered: register IPython's own PNG printer by name (matplotlib is not imported here) where the
    user's backend has none."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or not hasattr(shell, "display_formatter"):
        return
    from IPython.core.pylabtools import print_figure  # (PNG, bbox_inches="tight", as %matplotlib inline's)

    png = shell.display_formatter.formatters["image/png"]
    if ("matplotlib.figure", "Figure") not in png.deferred_printers and not any(
            f"{t.__module__}.{t.__name__}" == "matplotlib.figure.Figure" for t in png.type_printers):
        png.for_type_by_name("matplotlib.figure", "Figure", print_figure)


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
