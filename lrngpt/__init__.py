"""lrn-gpt: a laboratory for small language models, as a Python API (the command line is `lrn`).

    import lrngpt
    cfg = lrngpt.config("mlp-tiny", **{"train.steps": 60})   # a checked config; keys: lrn config keys
    run = lrngpt.train(cfg, out="runs/tiny")                   # a Run; in Jupyter its headline and curves
    run.eval(by_reads=True), run.sample("Once upon a time"), run.neighbors(" Lily"), run.figure()
    sweep = lrngpt.sweep("embed-dim", scale="tiny", out="runs/widths")
    sweep.table, sweep.findings, sweep.figure()                # a DataFrame (with pandas), verdicts, a Figure

Every `lrn` command has its function (config_list, data_prepare, tokenizer_train, embed_neighbors,
export_hf, doctor, ...; the lessons, theory and costs as plain data: lesson_*, theory_*, cost_*). Bad
input raises UserError with the one-line message `lrn` prints; log lines go to the "lrngpt" logger.
The names load on first use (lrngpt.api), so `import lrngpt` imports neither torch nor matplotlib.
"""

import os as _os  # (private names: `lrngpt`'s public names are __all__ alone)
import typing as _typing

# OpenMP threads that spin while waiting turn a busy 2-core laptop into a crawl: measured
# here with another job on the machine, an MLP training step ran at 0.65 of matmul speed
# with spinning threads and 0.94 with passive ones. It must be set before torch loads
# OpenMP, which is why it lives here; a value the user set wins.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# the lazy face, after OMP_WAIT_POLICY, which must come first: light, each name's module loads on first use
from lrngpt import api as _api  # noqa: E402

__all__ = list(_api.__all__)
if _typing.TYPE_CHECKING:  # what a checker sees: the API's names with their real signatures
    from lrngpt.api import *  # noqa: F403


def __getattr__(name: str):
    if name in __all__:
        value = getattr(_api, name)
        globals()[name] = value  # found directly from now on
        return value
    raise AttributeError(f"module 'lrngpt' has no attribute {name!r}")


def __dir__() -> list[str]:
    # the public names and the module's own dunders: not the submodules the import system sets here
    return sorted({*__all__, *(n for n in globals() if n.startswith("__"))})
