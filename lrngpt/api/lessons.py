"""The lecture's lessons, the chapter's theory and the cost formulas as plain data: dicts, lists and
floats (no tensors), the numbers `lrn lesson`, `lrn theory` and `lrn cost` print. Each wraps one
function of lrngpt.analysis; the arguments are the commands' options, with their defaults.

    import lrngpt
    lrngpt.lesson_lookup()["equal"]                 # True: lookup is a one-hot product
    lrngpt.cost_models()[0]["table_share"]          # GPT-2 small's token table, share of the model

Every function raises UserError, with the line `lrn` prints, for an argument of the wrong type or a
value the command refuses (a size below 1, eps outside (0, 1), a run directory that holds no run).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lrngpt.api.checks import checked
from lrngpt.api.results import Run
from lrngpt.api.results import run_dir as _dir
from lrngpt.core import log as logging
from lrngpt.errors import UserError
from lrngpt.experiments.chapter import quote
from lrngpt.experiments.presets import WIDTHS as CHAPTER_WIDTHS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from lrngpt.api.sweeps import Sweep  # (sweeps.py imports nothing of this module)


@checked
def lesson_lookup(batch: int = 2, length: int = 4, n_embd: int = 256, vocab: int = 300, seed: int = 0) -> dict:
    """nn.Embedding(ids) against one_hot(ids) @ E, and the token + position shapes (`lrn lesson lookup`).

    Example: ``r = lrngpt.lesson_lookup(); r["equal"], r["max_abs_diff"], r["shapes"]["one_hot"]``"""
    # torch, numpy: loaded only when this runs
    from lrngpt.analysis.lessons import lookup

    return lookup(batch, length, n_embd, vocab, seed=seed)


@checked
def lesson_lookup_grad() -> dict:
    """Which rows get gradients: ids [2, 0, 2] through nn.Embedding's backward beside the hand sum
    (row 2 used twice gets both upstream gradients, row 1 unused gets none; `lrn lesson lookup-grad`).

    Example: ``lrngpt.lesson_lookup_grad()["grad"]``"""
    # torch, numpy: loaded only when this runs
    from lrngpt.analysis.lessons import lookup_grad

    return lookup_grad()


@checked
def lesson_tying(vocab: int = 16, n_embd: int = 8, used: int = 6, seed: int = 0) -> dict:
    """One optimizer step on a batch that looks up only some rows: which unused rows still move under
    tying, weight decay or momentum (`lrn lesson tying`); one dict per setting under "settings".

    Example: ``[(s["setting"], s["unused_changed"]) for s in lrngpt.lesson_tying()["settings"]]``"""
    # torch, numpy: loaded only when this runs
    from lrngpt.analysis.lessons import tying

    return tying(vocab, n_embd, used, seed)


@checked
def lesson_softmax_bottleneck(run: Run | str | Path | None = None, contexts: int | None = None, random_contexts: bool = False,
                              seed: int = 0) -> dict:
    """The rank of log-probabilities over many contexts against its bound, for a run (a Run or a
    directory) or, with run None, a small random MLP and GPT (`lrn lesson softmax-bottleneck`).

    Example: ``lrngpt.lesson_softmax_bottleneck()["models"][0]["rank"]``"""
    # torch, numpy: loaded only when this runs
    from lrngpt.analysis.lessons import softmax_bottleneck

    return softmax_bottleneck(_dir(run), contexts, random_contexts, seed)


@checked
def lesson_renumber(run: Run | str | Path | None = None, seed: int = 0, max_tokens: int = 20_000) -> dict:
    """Ids are names: bpb with the table's rows permuted alone, and with the ids relabelled
    consistently, for a run or (run None) a toy MLP trained in-process (`lrn lesson renumber`).

    Example: ``lrngpt.lesson_renumber("runs/demo")``"""
    # torch, numpy: loaded only when this runs
    from lrngpt.analysis.lessons import renumber

    return renumber(_dir(run), seed, max_tokens, log=logging.info)


@checked
def lesson_superposition(features: int = 20, dims: int = 5,
                         sparsity: Sequence[float] = (0.0, 0.7, 0.9, 0.97, 0.99, 0.997, 0.999), steps: int = 1000,
                         batch: int = 1024, seed: int = 0, out: str | Path | None = None,
                         force: bool = False) -> dict:
    """The toy model of superposition (Elhage et al. 2022): `features` sparse features through `dims`
    dimensions, x' = ReLU(W^T W x + b), one model per sparsity; per sparsity how many features are
    represented (||W_i|| > 0.5), their interference and ||W_i|| (`lrn lesson superposition`). With
    `out`, the figure is written there as a PNG (`force`: replacing an earlier one of lrn's; a file lrn
    did not write is never replaced).

    Example: ``[(s["sparsity"], s["represented"]) for s in lrngpt.lesson_superposition()["sparsities"]]``"""
    # torch, numpy: loaded only when this runs
    from lrngpt.analysis.superposition import train_toy

    target = _figure_target(out, force) if out is not None else None
    result = train_toy(features, dims, sparsity, steps=steps, batch=batch, seed=seed)
    if target is not None:
        # matplotlib, PIL, numpy: loaded only when this runs; here: `lrn --help` loads this module, not that one
        from lrngpt.core.ownership import write_owned_file
        from lrngpt.experiments.figures import png_bytes

        write_owned_file(target, png_bytes(lesson_superposition_figure(result)), "figure")
        result["figure"] = str(target)
    return result


def _figure_target(out: str | Path, force: bool) -> Path:
    """Checked before any training: a new path, or (with force) a figure lrn wrote there before."""
    # here: `lrn --help` loads this module, not that one
    from lrngpt.core.ownership import check_file_target

    return check_file_target(out, force, "figure", example="superposition.png")


@checked
def lesson_superposition_figure(result: dict) -> Figure:
    """The lesson's figure as a matplotlib Figure: W^T W and ||W_i|| per sparsity, each bar coloured by
    the feature's interference.

    Example: ``lrngpt.lesson_superposition_figure(lrngpt.lesson_superposition()).savefig("sup.png")``"""
    # torch, numpy: loaded only when this runs
    from lrngpt.analysis.superposition import figure

    rows = result.get("sparsities")
    keys = ("gram", "feature_probability", "represented", "norms", "interference")
    if ("features" not in result or "dims" not in result or not isinstance(rows, list) or not rows
            or not all(isinstance(r, dict) and all(k in r for k in keys) for r in rows)):
        raise UserError("lesson_superposition_figure(): result must be what lrngpt.lesson_superposition() returns "
                        f"(features, dims and a row per sparsity), got a dict with keys {sorted(map(str, result))[:6]}")
    return figure(result)


@checked
def theory_pip(corpus: str, vocab_size: int = 4096, window: int = 6, alpha: float = 0.5,
               train_tokens: int | None = None, seed: int = 0, top: int | None = None,
               sweep: Sweep | str | Path | None = None) -> dict:
    """The PIP-loss-optimal embedding width of a corpus, before any training (Yin & Shen 2018): the
    co-occurrence PMI matrix of the prepared training split at `window` tokens, its spectrum, the
    noise from two halves of the text, the PIP loss by width with its bias and variance, and the
    paper's bound; `top` keeps only the most frequent tokens; with `sweep` (a Sweep or its directory)
    the measured best width beside it (`lrn theory pip`). Prepares (and caches) the data.

    Example: ``r = lrngpt.theory_pip("stories:5MB"); r["optimal"]["k"], r["within"]["5%"]``"""
    # numpy: loaded only when this runs
    from lrngpt.analysis.pip import corpus_estimate

    sweep_dir = None if sweep is None else Path(sweep) if isinstance(sweep, str | Path) else sweep.path
    r = corpus_estimate(corpus, vocab_size, window, alpha, train_tokens, seed, top, sweep_dir, log=logging.info)
    # the chapter's words where lrn's own sentences need them: why 300 is common, and the yardsticks
    r["word2vec"] = f"the chapter on Yin & Shen: {quote('word2vec')}; this text's PIP-optimal k = {r['optimal']['k']}"
    if "sweep" in r:
        r["sweep"]["chapter"] = f"the chapter: {quote('yardsticks')}"
    return r


@checked
def theory_pip_figure(result: dict) -> Figure:
    """The PIP loss by k of a theory_pip result, and with `sweep=` its val bpb by d on a second axis (log-2
    widths), the PIP-optimal k and the measured best d marked, as a matplotlib Figure.

    Example: ``lrngpt.theory_pip_figure(lrngpt.theory_pip("stories:5MB", sweep="runs/embed-dim")).savefig("pip.png")``"""
    # matplotlib: loaded only when this runs
    from lrngpt.analysis.pip_figure import figure

    return figure(result)


@checked
def theory_random_cosine(n: int = 4096, dims: Sequence[int] = (4, 8, 16, 64, 256), seed: int = 0) -> list[dict]:
    """Cosines of all pairs of n Gaussian vectors, one row per width d: their std beside 1/sqrt(d)
    (`lrn theory random-cosine`).

    Example: ``lrngpt.theory_random_cosine(n=1000, dims=[16, 256])``"""
    # here: `lrn --help` loads this module, not that one
    from lrngpt.analysis.theory import random_cosine_stats

    return random_cosine_stats(n, list(dims), seed=seed)


@checked
def theory_jl(n: int, eps: float) -> float:
    """The Johnson-Lindenstrauss width that keeps n points' distances within 1 +- eps (`lrn theory jl`).

    Example: ``lrngpt.theory_jl(4096, 0.5)  # 399.3``"""
    # here: `lrn --help` loads this module, not that one
    from lrngpt.analysis.theory import jl_dimension

    return jl_dimension(n, eps)


@checked
def theory_fourth_root(n: int) -> float:
    """The feature-column rule of thumb, width = n ** 0.25 (`lrn theory fourth-root`).

    Example: ``lrngpt.theory_fourth_root(4096)  # 8.0``"""
    # here: `lrn --help` loads this module, not that one
    from lrngpt.analysis.theory import fourth_root_width

    return fourth_root_width(n)


@checked
def cost_mlp(vocab: int = 4096, block: int = 6, hidden: int = 512, widths: Sequence[int] | None = None,
             sweep: Sweep | str | Path | None = None) -> dict:
    """The chapter's parameter table of the MLP LM by width, with what each step up adds; with a
    sweep (a Sweep or its directory) also the val bpb saved per million added parameters (`lrn cost mlp`).
    `widths` None: the sweep's own widths with a sweep, else the chapter's 4 ... 512.

    Example: ``[(r["n_embd"], r["total"]) for r in lrngpt.cost_mlp(widths=[16, 64])["rows"]]``"""
    # here: `lrn --help` loads this module, not that one
    from lrngpt.analysis.costs import bpb_by_width, mlp_cost_table

    bpb = None
    if sweep is not None:  # the sweep's summary.json, read by its owner
        # torch, numpy: loaded only when this runs
        from lrngpt.experiments.sweepdir import (
            SweepDir,  # torch (through the config schema): only with a sweep
        )

        sweep_dir = SweepDir(Path(getattr(sweep, "path", sweep)))
        bpb = bpb_by_width(sweep_dir.summary_rows(flag="--sweep"), str(sweep_dir.summary_path("json")))
    if widths is None:  # the sweep's own widths: a step between two of them is priced, none left out
        widths = sorted(bpb) if bpb is not None else CHAPTER_WIDTHS
    return mlp_cost_table(vocab, block, hidden, list(widths), bpb)


@checked
def cost_gpt(vocab: int, context: int, n_embd: int = 256, heads: int = 8, layers: int = 6, ffn: str = "gelu",
             ffn_mult: float = 4, tied: bool = False, qkv_bias: bool = False, batch: int = 1,
             length: int | None = None) -> dict:
    """A GPT's parameters by part, bytes to train it, the leading matrix terms and how they grow when
    the width doubles (`lrn cost gpt`).

    Example: ``lrngpt.cost_gpt(50257, 1024, n_embd=768, heads=12, layers=12, tied=True)["params"]["total"]``"""
    # here: `lrn --help` loads this module, not that one
    from lrngpt.analysis.costs import gpt_cost

    return gpt_cost(vocab, context, n_embd, heads, layers, ffn, ffn_mult, tied, qkv_bias, batch, length)


@checked
def cost_models() -> list[dict]:
    """The token tables of GPT-2's four sizes (small to XL), BERT-base, Llama-3-8B and GPT-3 175B against
    their whole models, what tying saves, and each model's depth and width / depth (`lrn cost models`).

    Example: ``{r["model"]: r["table"] for r in lrngpt.cost_models()}``"""
    # here: `lrn --help` loads this module, not that one
    from lrngpt.analysis.costs import reference_table

    return reference_table()
