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
raises `lrngpt.UserError` with the one line `lrn` prints (lrngpt/api/checks.py). Nothing here
imports torch until it is needed (each module imports the library's torch-heavy modules inside its
functions), so `import lrngpt` and `lrn --help` stay cheap.

The modules: configs.py (config, config_list/show/keys), runs.py (plan, train, load), results.py
(Run, table), sweeps.py (sweep, load_sweep, Sweep), embedding.py (embed_*), outputs.py
(write_report, export_hf, import_gpt2), corpus.py (data_*, tokenizer_*), lessons.py (lesson_*, theory_*, cost_*),
quickstart.py (demo), machine.py (doctor), rare_tokens.py (undertrained), shapes.py (width_from_depth,
width_depth_finding), frontend.py (what `lrn` needs for its help and errors).
"""

from __future__ import annotations

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
    cost_gpt,
    cost_mlp,
    cost_models,
    lesson_lookup,
    lesson_lookup_grad,
    lesson_renumber,
    lesson_softmax_bottleneck,
    lesson_superposition,
    lesson_superposition_figure,
    lesson_tying,
    theory_fourth_root,
    theory_jl,
    theory_pip,
    theory_pip_figure,
    theory_random_cosine,
)
from lrngpt.api.machine import doctor
from lrngpt.api.outputs import export_hf, import_gpt2, write_report
from lrngpt.api.quickstart import demo
from lrngpt.api.rare_tokens import undertrained
from lrngpt.api.results import Run, table
from lrngpt.api.runs import load, plan, train
from lrngpt.api.shapes import width_depth_finding, width_from_depth
from lrngpt.api.sweeps import Sweep, load_sweep, sweep
from lrngpt.core.version import __version__
from lrngpt.errors import UserError

__all__ = ["Run", "Sweep", "UserError", "__version__", "config", "config_keys", "config_list", "config_show",
           "cost_gpt", "cost_mlp", "cost_models", "data_prepare", "data_stories", "demo", "doctor", "embed_axes",
           "embed_explore", "embed_export", "embed_neighbors", "embed_purity", "export_hf", "import_gpt2",
           "lesson_lookup", "lesson_lookup_grad", "lesson_renumber", "lesson_softmax_bottleneck",
           "lesson_superposition", "lesson_superposition_figure", "lesson_tying", "load", "load_sweep", "plan", "run_chapter",
           "sweep", "table", "theory_fourth_root", "theory_jl", "theory_pip", "theory_pip_figure", "theory_random_cosine",
           "tokenizer_decode", "tokenizer_encode", "tokenizer_show", "tokenizer_train",
           "train", "undertrained", "width_depth_finding", "width_from_depth", "write_report"]
