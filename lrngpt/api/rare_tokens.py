"""Under-trained tokens as plain data (`lrn embed undertrained`), and the planted-tokens study's figure."""

from __future__ import annotations

from pathlib import Path

from matplotlib.figure import Figure

from lrngpt.analysis.rare_tokens import undertrained_tokens
from lrngpt.api.checks import Checkpoint, HasPath, checked, positive
from lrngpt.experiments.planted_figure import plot_planted


@checked
def undertrained(run_or_path: HasPath | str | Path, checkpoint: Checkpoint | None = None,
                 top: int | None = None) -> dict:
    """Per token: how often the run read it (exact, replayed from its seed), how far its row moved from
    ckpt_init.pt and its norm, the under-trained ones (input reads < d) first; for an import or a local
    Hugging Face GPT-2 directory, Land & Bartolo's indicator. `checkpoint` None: a Run's own, else last;
    `top`: keep that many rows of "tokens".

    Example: ``lrngpt.table(lrngpt.undertrained("runs/demo", top=20)["tokens"])``"""
    path = Path(run_or_path.path if isinstance(run_or_path, HasPath) else run_or_path)  # a Sweep's: no run, said so
    checkpoint = checkpoint or getattr(run_or_path, "checkpoint", None) or "last"
    positive(top, "top")  # (None: every token)
    result = undertrained_tokens(path, checkpoint)
    if top is not None:
        result["tokens"] = result["tokens"][:top]
    return result


@checked
def planted_tokens_figure(out: str | Path) -> Figure:
    """The planted-tokens study's figure: each token's input reads against its row's movement, tied and
    untied side by side; `out`: the study's directory (`lrn chapter`'s `planted/`).

    Example: ``lrngpt.planted_tokens_figure("runs/chapter/planted").savefig("planted.png")``"""
    return plot_planted(Path(out))
