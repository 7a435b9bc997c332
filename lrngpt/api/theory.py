"""The chapter's theory and the cost formulas as plain data, the numbers `lrn theory` and `lrn cost` print;
each wraps one function of lrngpt.analysis, and none loads torch or matplotlib."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lrngpt.analysis.costs import bpb_by_width, gpt_cost, mlp_cost_table, reference_table
from lrngpt.analysis.theory import fourth_root_width, jl_dimension, random_cosine_stats
from lrngpt.api.checks import checked
from lrngpt.errors import option
from lrngpt.experiments.chapter import quote
from lrngpt.experiments.presets import WIDTHS as CHAPTER_WIDTHS

if TYPE_CHECKING:
    from lrngpt.api.sweeps import Sweep


@checked
def theory_random_cosine(n: int = 4096, dims: Sequence[int] = (4, 8, 16, 64, 256), seed: int = 0) -> list[dict]:
    """Cosines of all pairs of n Gaussian vectors, per width d: their std beside 1/sqrt(d) (`lrn theory random-cosine`).

    Example: ``lrngpt.theory_random_cosine(n=1000, dims=[16, 256])``"""
    return random_cosine_stats(n, list(dims), seed=seed)


@checked
def theory_jl(n: int, eps: float) -> float:
    """The Johnson-Lindenstrauss width that keeps n points' distances within 1 +- eps (`lrn theory jl`).

    Example: ``lrngpt.theory_jl(4096, 0.5)  # 399.3``"""
    return jl_dimension(n, eps)


def fourth_root_text(n: int, d: float) -> str:
    """What `lrn theory fourth-root` prints: the rule's width, beside what the book chapter measured at its 8."""
    return f"{n:,}^0.25 = {d:g}  (the book chapter's vocabulary of 4,096 gives 8: {quote('fourth_root')})"


@checked
def theory_fourth_root(n: int) -> float:
    """The feature-column rule of thumb, width = n ** 0.25 (`lrn theory fourth-root`).

    Example: ``lrngpt.theory_fourth_root(4096)  # 8.0``"""
    return fourth_root_width(n)


@checked
def cost_mlp(vocab: int = 4096, block: int = 6, hidden: int = 512, widths: Sequence[int] | None = None,
             sweep: Sweep | str | Path | None = None) -> dict:
    """The MLP LM's parameters by width, with what each step up adds (`lrn cost mlp`); with a sweep (a Sweep
    or its directory) the val bpb saved per million added parameters. `widths` None: the sweep's, else 4 ... 512.

    Example: ``[(r["n_embd"], r["total"]) for r in lrngpt.cost_mlp(widths=[16, 64])["rows"]]``"""
    bpb = None
    if sweep is not None:  # (its reader loads torch: imported only with a sweep)
        from lrngpt.experiments.sweepdir import SweepDir

        sweep_dir = SweepDir(Path(sweep if isinstance(sweep, str | Path) else sweep.path))
        bpb = bpb_by_width(sweep_dir.summary_rows(flag=option('sweep')), str(sweep_dir.summary_path("json")))
    if widths is None:  # the sweep's own widths: a step between two of them is priced, none left out
        widths = sorted(bpb) if bpb is not None else CHAPTER_WIDTHS
    return mlp_cost_table(vocab, block, hidden, list(widths), bpb)


@checked
def cost_gpt(vocab: int, context: int, n_embd: int = 256, heads: int = 8, layers: int = 6, ffn: str = "gelu",
             ffn_mult: float = 4, tied: bool = False, qkv_bias: bool = False, batch: int = 1,
             length: int | None = None) -> dict:
    """A GPT's parameters by part, bytes to train it, the leading matrix terms as the width doubles (`lrn cost gpt`).

    Example: ``lrngpt.cost_gpt(50257, 1024, n_embd=768, heads=12, layers=12, tied=True)["params"]["total"]``"""
    return gpt_cost(vocab, context, n_embd, heads, layers, ffn, ffn_mult, tied, qkv_bias, batch, length)


@checked
def cost_models() -> list[dict]:
    """The token tables of well-known models against the whole models, and what tying saves (`lrn cost models`).

    Example: ``{r["model"]: r["table"] for r in lrngpt.cost_models()}``"""
    return reference_table()
