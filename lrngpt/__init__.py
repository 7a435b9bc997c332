"""lrn-gpt: a laboratory for small language models, as a Python API (the command line is `lrn`).

    import lrngpt
    cfg = lrngpt.config("mlp-tiny", **{"train.steps": 60})   # a checked config; keys: lrn config keys
    run = lrngpt.train(cfg, out="runs/tiny")                   # a Run; in Jupyter its headline and curves
    run.eval(by_reads=True), run.sample("Once upon a time"), run.neighbors(" Lily"), run.figure()
    sweep = lrngpt.sweep("embed-dim", scale="tiny", out="runs/widths")
    sweep.table, sweep.findings, sweep.figure()                # a DataFrame (with pandas), verdicts, a Figure

Runs and sweeps: config, plan, train, load, Run, sweep, load_sweep, Sweep, table, write_report. Every
`lrn` command has its function: config_list/show/keys, data_stories/prepare, tokenizer_train/encode/
decode/show, embed_neighbors/axes/purity/export/explore, export_hf, import_gpt2, demo, doctor; the
lecture's lessons, the chapter's theory and the cost formulas, as plain data: lesson_*, theory_*, cost_*;
under-trained tokens of a run or an imported model: undertrained; width against depth: width_from_depth,
width_depth_finding.
Bad input raises UserError with the one-line message `lrn` prints. Log lines go to the "lrngpt"
logger (logging.basicConfig(level=logging.INFO) shows them); progress bars show in a notebook.

The names load on first use (lrngpt.api), so `import lrngpt` imports neither torch nor matplotlib;
type checkers read them from the TYPE_CHECKING import below, with their real signatures.
"""

import importlib as _importlib  # (private names: `lrngpt`'s public names are __all__ alone)
import os as _os
import typing as _typing

# OpenMP threads that spin while waiting turn a busy 2-core laptop into a crawl: measured
# here with another job on the machine, an MLP training step ran at 0.65 of matmul speed
# with spinning threads and 0.94 with passive ones. It must be set before torch loads
# OpenMP, which is why it lives here; a value the user set wins.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from lrngpt.core.version import __version__  # noqa: E402 (after OMP_WAIT_POLICY, which must come first)

__all__ = [
    "Run", "Sweep", "UserError", "__version__", "config", "config_keys", "config_list", "config_show", "cost_gpt",
    "cost_mlp", "cost_models", "data_prepare", "data_stories", "demo", "doctor", "embed_axes", "embed_explore",
    "embed_export", "embed_neighbors", "embed_purity", "export_hf", "import_gpt2", "lesson_lookup",
    "lesson_lookup_grad", "lesson_renumber", "lesson_softmax_bottleneck", "lesson_superposition",
    "lesson_superposition_figure", "lesson_tying", "load", "load_sweep", "plan", "run_chapter",
    "sweep", "table", "theory_fourth_root", "theory_jl", "theory_pip", "theory_pip_figure", "theory_random_cosine",
    "tokenizer_decode", "tokenizer_encode", "tokenizer_show", "tokenizer_train", "train", "undertrained", "width_depth_finding",
    "width_from_depth", "write_report",
]
if _typing.TYPE_CHECKING:  # what a checker sees; at run time __getattr__ loads the same names on first use
    from lrngpt.api import (
        Run,
        Sweep,
        config,
        config_keys,
        config_list,
        config_show,
        cost_gpt,
        cost_mlp,
        cost_models,
        data_prepare,
        data_stories,
        demo,
        doctor,
        embed_axes,
        embed_explore,
        embed_export,
        embed_neighbors,
        embed_purity,
        export_hf,
        import_gpt2,
        lesson_lookup,
        lesson_lookup_grad,
        lesson_renumber,
        lesson_softmax_bottleneck,
        lesson_superposition,
        lesson_superposition_figure,
        lesson_tying,
        load,
        load_sweep,
        plan,
        run_chapter,
        sweep,
        table,
        theory_fourth_root,
        theory_jl,
        theory_pip,
        theory_pip_figure,
        theory_random_cosine,
        tokenizer_decode,
        tokenizer_encode,
        tokenizer_show,
        tokenizer_train,
        train,
        undertrained,
        width_depth_finding,
        width_from_depth,
        write_report,
    )
    from lrngpt.errors import UserError


def __getattr__(name: str):
    if name in __all__:
        value = getattr(_importlib.import_module("lrngpt.errors" if name == "UserError" else "lrngpt.api"), name)
        globals()[name] = value  # found directly from now on
        return value
    raise AttributeError(f"module 'lrngpt' has no attribute {name!r}")


def __dir__() -> list[str]:
    # the public names and the module's own dunders: not the submodules the import system sets here
    return sorted({*__all__, *(n for n in globals() if n.startswith("__"))})
