"""The under-trained-tokens section of a run's report: the counts of never-read and under-trained
tokens, how far their rows moved against the rest, and the first few (`lrn embed undertrained`
has them all)."""

from __future__ import annotations

from pathlib import Path

from lrngpt.analysis.rare_tokens import undertrained_tokens
from lrngpt.errors import UserError
from lrngpt.report.html import esc, fmt, rows_table
from lrngpt.store.rundir import RunDir

N_SHOWN = 5


def _g(x: float | None) -> str:
    return "-" if x is None else f"{x:.3g}"  # distances and norms: three digits say it


def _token(t: dict) -> str:
    return f"<code>{esc(chr(39) + t['token'] + chr(39))}</code>"  # token_text's escapes, not repr's


def undertrained_html(run_dir: Path, checkpoint: str | None = None) -> str:
    which = checkpoint or "last"
    if not RunDir(run_dir).has_checkpoint(which):
        return "<p>No under-trained tokens to show: the run has no checkpoint yet.</p>"
    try:
        r = undertrained_tokens(run_dir, which, log=lambda m: None)
    except UserError as e:  # the corpus moved, say: the rest of the report still stands
        return f"<p>No under-trained tokens to show: {esc(str(e))}</p>"
    cmd = f"<code>lrn embed undertrained {esc(str(run_dir))}</code>"
    shown = r["tokens"][:N_SHOWN]
    if r["source"] != "trained":
        rows = [[t["id"], _token(t), f"{t['indicator']:.4f}"] for t in shown]
        note = r["note"][0].upper() + r["note"][1:]
        return (f"<p>{esc(note)}: {fmt(r['indicator']['candidates'])} candidates, the lowest "
                f"{r['indicator']['candidate_share']:.0%} of the indicator; {cmd} lists them.</p>"
                + rows_table(["id", "token", "indicator"], rows, raw=True))
    s = r["summary"]
    lead = (f"<p>Read as input: <b>{fmt(s['never_read'])}</b> of {fmt(r['vocab'])} tokens never, "
            f"<b>{fmt(s['under_trained'])}</b> under-trained (fewer input reads than the row's "
            f"d = {r['n_embd']} numbers; exact counts from the run's batches replayed from its seed).")
    if r["init"] and s["never_read"]:
        m = s["median_moved"]
        how = ("tied: the output head is the same matrix, so the softmax moves them: under-trained but not "
               "untouched" if r["tied"] else "untied: no gradient reaches them")
        lead += (f" Median distance of a row from its initial value: never read {_g(m['never_read'])} "
                 f"({how}), under-trained {_g(m['under_trained'])}, the rest {_g(m['trained'])}.")
    lead += f" The first {len(shown)}; {cmd} lists them all.</p>"
    head = ["id", "token", "input reads", "target reads"] + (["moved"] if r["init"] else []) + ["norm"]
    rows = [[t["id"], _token(t), t["input_reads"], t["target_reads"]]
            + ([_g(t["moved"])] if r["init"] else []) + [_g(t["norm"])] for t in shown]
    return lead + rows_table(head, rows, raw=True)
