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
from lrngpt.experiments.presets import WIDTHS as CHAPTER_WIDTHS

if TYPE_CHECKING:
    from lrngpt.api.sweeps import Sweep  # (sweeps.py imports nothing of this module)


@checked
def lesson_lookup(batch: int = 2, length: int = 4, n_embd: int = 256, vocab: int = 300, seed: int = 0) -> dict:
    """nn.Embedding(ids) against one_hot(ids) @ E, and the token + position shapes (`lrn lesson lookup`).

    Example: ``r = lrngpt.lesson_lookup(); r["equal"], r["max_abs_diff"], r["shapes"]["one_hot"]``"""
    from lrngpt.analysis.lessons import lookup

    return lookup(batch, length, n_embd, vocab, seed=seed)


@checked
def lesson_lookup_grad() -> dict:
    """Which rows get gradients: ids [2, 0, 2] through nn.Embedding's backward beside the hand sum
    (row 2 used twice gets both upstream gradients, row 1 unused gets none; `lrn lesson lookup-grad`).

    Example: ``lrngpt.lesson_lookup_grad()["grad"]``"""
    from lrngpt.analysis.lessons import lookup_grad

    return lookup_grad()


@checked
def lesson_tying(vocab: int = 16, n_embd: int = 8, used: int = 6, seed: int = 0) -> dict:
    """One optimizer step on a batch that looks up only some rows: which unused rows still move under
    tying, weight decay or momentum (`lrn lesson tying`); one dict per setting under "settings".

    Example: ``[(s["setting"], s["unused_changed"]) for s in lrngpt.lesson_tying()["settings"]]``"""
    from lrngpt.analysis.lessons import tying

    return tying(vocab, n_embd, used, seed)


@checked
def lesson_softmax_bottleneck(run: Run | str | Path | None = None, contexts: int | None = None, random_contexts: bool = False,
                              seed: int = 0) -> dict:
    """The rank of log-probabilities over many contexts against its bound, for a run (a Run or a
    directory) or, with run None, a small random MLP and GPT (`lrn lesson softmax-bottleneck`).

    Example: ``lrngpt.lesson_softmax_bottleneck()["models"][0]["rank"]``"""
    from lrngpt.analysis.lessons import softmax_bottleneck

    return softmax_bottleneck(_dir(run), contexts, random_contexts, seed)


@checked
def lesson_renumber(run: Run | str | Path | None = None, seed: int = 0, max_tokens: int = 20_000) -> dict:
    """Ids are names: bpb with the table's rows permuted alone, and with the ids relabelled
    consistently, for a run or (run None) a toy MLP trained in-process (`lrn lesson renumber`).

    Example: ``lrngpt.lesson_renumber("runs/demo")``"""
    from lrngpt.analysis.lessons import renumber
    from lrngpt.core import log as logging

    return renumber(_dir(run), seed, max_tokens, log=logging.info)


@checked
def theory_random_cosine(n: int = 4096, dims: Sequence[int] = (4, 8, 16, 64, 256), seed: int = 0) -> list[dict]:
    """Cosines of all pairs of n Gaussian vectors, one row per width d: their std beside 1/sqrt(d)
    (`lrn theory random-cosine`).

    Example: ``lrngpt.theory_random_cosine(n=1000, dims=[16, 256])``"""
    from lrngpt.analysis.theory import random_cosine_stats

    return random_cosine_stats(n, list(dims), seed=seed)


@checked
def theory_jl(n: int, eps: float) -> float:
    """The Johnson-Lindenstrauss width that keeps n points' distances within 1 +- eps (`lrn theory jl`).

    Example: ``lrngpt.theory_jl(4096, 0.5)  # 399.3``"""
    from lrngpt.analysis.theory import jl_dimension

    return jl_dimension(n, eps)


@checked
def theory_fourth_root(n: int) -> float:
    """The feature-column rule of thumb, width = n ** 0.25 (`lrn theory fourth-root`).

    Example: ``lrngpt.theory_fourth_root(4096)  # 8.0``"""
    from lrngpt.analysis.theory import fourth_root_width

    return fourth_root_width(n)


@checked
def cost_mlp(vocab: int = 4096, block: int = 6, hidden: int = 512, widths: Sequence[int] | None = None,
             sweep: Sweep | str | Path | None = None) -> dict:
    """The chapter's parameter table of the MLP LM by width, with what each step up adds; with a
    sweep (a Sweep or its directory) also the val bpb saved per million added parameters (`lrn cost mlp`).
    `widths` None: the sweep's own widths with a sweep, else the chapter's 4 ... 512.

    Example: ``[(r["n_embd"], r["total"]) for r in lrngpt.cost_mlp(widths=[16, 64])["rows"]]``"""
    from lrngpt.analysis.costs import mlp_cost_table, read_sweep_bpb

    bpb = read_sweep_bpb(Path(getattr(sweep, "path", sweep))) if sweep is not None else None
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
    from lrngpt.analysis.costs import gpt_cost

    return gpt_cost(vocab, context, n_embd, heads, layers, ffn, ffn_mult, tied, qkv_bias, batch, length)


@checked
def cost_models() -> list[dict]:
    """The token tables of GPT-2 small, BERT-base, Llama-3-8B and GPT-3 175B against their whole
    models, and what tying saves (`lrn cost models`).

    Example: ``{r["model"]: r["table"] for r in lrngpt.cost_models()}``"""
    from lrngpt.analysis.costs import reference_table

    return reference_table()
