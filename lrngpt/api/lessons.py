"""The lecture's lessons and the PIP estimate as plain data, the numbers `lrn lesson` and `lrn theory pip`
print, and their figures; each wraps one function of lrngpt.analysis, with the commands' defaults."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lrngpt.analysis import pip_figure, superposition
from lrngpt.analysis.lessons import lookup, lookup_grad, renumber, softmax_bottleneck, tying
from lrngpt.analysis.pip import corpus_estimate
from lrngpt.analysis.superposition import train_toy
from lrngpt.api.checks import checked
from lrngpt.api.outputs import paths_of
from lrngpt.api.results import Run
from lrngpt.api.sweeps import Sweep
from lrngpt.core import log as logging
from lrngpt.core.ownership import check_file_target, write_owned_file
from lrngpt.errors import UserError
from lrngpt.experiments.chapter import quote
from lrngpt.experiments.figures import png_bytes

if TYPE_CHECKING:
    from matplotlib.figure import Figure


@checked
def lesson_lookup(batch: int = 2, length: int = 4, n_embd: int = 256, vocab: int = 300, seed: int = 0) -> dict:
    """nn.Embedding(ids) against one_hot(ids) @ E, and the token + position shapes (`lrn lesson lookup`).

    Example: ``r = lrngpt.lesson_lookup(); r["equal"], r["max_abs_diff"], r["shapes"]["one_hot"]``"""
    return lookup(batch, length, n_embd, vocab, seed=seed)


@checked
def lesson_lookup_grad() -> dict:
    """Ids [2, 0, 2] through nn.Embedding's backward beside the hand sum (`lrn lesson lookup-grad`).

    Example: ``lrngpt.lesson_lookup_grad()["grad"]``"""
    return lookup_grad()


@checked
def lesson_tying(vocab: int = 16, n_embd: int = 8, used: int = 6, seed: int = 0) -> dict:
    """Which unused rows one optimizer step moves under tying, weight decay or momentum (`lrn lesson tying`).

    Example: ``[(s["setting"], s["unused_changed"]) for s in lrngpt.lesson_tying()["settings"]]``"""
    return tying(vocab, n_embd, used, seed)


@checked
def lesson_softmax_bottleneck(run: Run | str | Path | None = None, contexts: int | None = None, random_contexts: bool = False,
                              seed: int = 0) -> dict:
    """The rank of log-probabilities over many contexts against its bound, for a run or (None) small random
    models (`lrn lesson softmax-bottleneck`).

    Example: ``lrngpt.lesson_softmax_bottleneck()["models"][0]["rank"]``"""
    return softmax_bottleneck(None if run is None else paths_of(run)[0], contexts, random_contexts, seed)


@checked
def lesson_renumber(run: Run | str | Path | None = None, seed: int = 0, max_tokens: int = 20_000) -> dict:
    """Ids are names: bpb with the table's rows permuted, and with the ids relabelled consistently, for a
    run or (None) a toy MLP trained here (`lrn lesson renumber`).

    Example: ``lrngpt.lesson_renumber("runs/demo")``"""
    return renumber(None if run is None else paths_of(run)[0], seed, max_tokens, log=logging.info)


@checked
def lesson_superposition(features: int = 20, dims: int = 5, sparsity: Sequence[float] = superposition.SPARSITIES,
                         steps: int = 1000, batch: int = 1024, seed: int = 0, out: str | Path | None = None,
                         force: bool = False) -> dict:
    """The toy model of superposition (Elhage et al. 2022; `lrn lesson superposition`): `features` sparse
    features through `dims` dimensions, one model per sparsity; per sparsity how many features are
    represented, their interference and ||W_i||. With `out`, the figure is written there as a PNG.

    Example: ``[(s["sparsity"], s["represented"]) for s in lrngpt.lesson_superposition()["sparsities"]]``"""
    # checked before any training: a new path, or (with force) a figure lrn wrote there before
    target = check_file_target(out, force, "figure", example="superposition.png") if out is not None else None
    result = train_toy(features, dims, sparsity, steps=steps, batch=batch, seed=seed)
    if target is not None:
        write_owned_file(target, png_bytes(lesson_superposition_figure(result)), "figure")
        result["figure"] = str(target)
    return result


@checked
def lesson_superposition_figure(result: dict) -> Figure:
    """The lesson's figure: W^T W and ||W_i|| per sparsity, each bar coloured by the feature's interference.

    Example: ``lrngpt.lesson_superposition_figure(lrngpt.lesson_superposition()).savefig("sup.png")``"""
    rows = result.get("sparsities")
    keys = ("gram", "feature_probability", "represented", "norms", "interference")
    if ("features" not in result or "dims" not in result or not isinstance(rows, list) or not rows
            or not all(isinstance(r, dict) and all(k in r for k in keys) for r in rows)):
        raise UserError("lesson_superposition_figure(): result must be what lrngpt.lesson_superposition() returns "
                        f"(features, dims and a row per sparsity), got a dict with keys {sorted(map(str, result))[:6]}")
    return superposition.figure(result)


@checked
def theory_pip(corpus: str, vocab_size: int = 4096, window: int = 6, alpha: float = 0.5,
               train_tokens: int | None = None, seed: int = 0, top: int | None = None,
               sweep: Sweep | str | Path | None = None) -> dict:
    """The PIP-loss-optimal embedding width of a corpus before any training (Yin & Shen 2018; `lrn theory
    pip`): the PMI spectrum, its noise, the PIP loss by width and the paper's bound; with `sweep` (a Sweep
    or its directory) the measured best width beside it. Prepares (and caches) the data.

    Example: ``r = lrngpt.theory_pip("stories:5MB"); r["optimal"]["k"], r["within"]["5%"]``"""
    sweep_dir = None if sweep is None else Path(sweep) if isinstance(sweep, str | Path) else sweep.path
    r = corpus_estimate(corpus, vocab_size, window, alpha, train_tokens, seed, top, sweep_dir, log=logging.info)
    # the chapter's words where lrn's own sentences need them: why 300 is common, and the yardsticks
    r["word2vec"] = f"the chapter on Yin & Shen: {quote('word2vec')}; this text's PIP-optimal k = {r['optimal']['k']}"
    if "sweep" in r:
        r["sweep"]["chapter"] = f"the chapter: {quote('yardsticks')}"
    return r


@checked
def theory_pip_figure(result: dict) -> Figure:
    """The PIP loss by k of a theory_pip result (with `sweep=`, its val bpb by d too) as a Figure.

    Example: ``lrngpt.theory_pip_figure(lrngpt.theory_pip("stories:5MB", sweep="runs/embed-dim")).savefig("pip.png")``"""
    return pip_figure.figure(result)
