"""The sections of a run's report: the headline (val bpb untrained -> trained, train bpb, gap, passes,
the best periodic val bpb beside the last), the training curves, the embedding neighbours, the
under-trained tokens (counts, how far their rows moved, the first few) and the details."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure  # no pyplot: no global state, no display needed (Agg)

from lrngpt.analysis.rare_tokens import undertrained_tokens
from lrngpt.corpora.registry import corpus_label
from lrngpt.errors import UserError
from lrngpt.experiments.figures import png_bytes
from lrngpt.report.html import esc, facts_table, figure, fmt, folded, kv_table, rows_table
from lrngpt.report.neighbours import neighbours_html
from lrngpt.runconfig.schema import flat_keys
from lrngpt.store.run_files import periodic_evals, run_passes
from lrngpt.store.rundir import RunDir

MAX_METRIC_ROWS = 25  # the periodic evaluations listed in the details, evenly spaced
N_SHOWN = 5  # under-trained tokens listed (`lrn embed undertrained` has them all)


def run_sections(d: Path, tokens: list[str] | None = None, checkpoint: str | None = None) -> list[tuple[str, str]]:
    run = RunDir(d)
    cfg = run.config().to_dict()  # checked: a damaged config.json is named, field and all
    summary, metrics = run.summary(), run.metrics()
    curves = curves_png({d.name: metrics})
    details = (folded("Overview: every number of summary.json", kv_table(flat_keys(summary)) if summary is not None
                        else "<p>No summary.json: the run has not finished.</p>")
               + folded("Configuration", kv_table(flat_keys(cfg)))
               + folded("Metrics: the periodic evaluations", _metrics_table(metrics)))
    return [
        ("Headline", run_headline(d, cfg, summary, metrics)),
        ("Curves", figure(curves, "training loss and validation bpb against step") if curves
         else "<p>No metrics logged yet.</p>"),
        ("Embedding neighbours", neighbours_html(d, tokens, checkpoint)),
        ("Under-trained tokens", undertrained_html(d, checkpoint)),
        ("Details", details),
    ]


def run_headline(d: Path, cfg: dict, summary: dict | None, metrics: list[dict]) -> str:

    evals = periodic_evals(metrics)
    data, train = cfg.get("data", {}), cfg.get("train", {})
    untrained = evals.get(0)
    facts = [("model", cfg.get("model_type")), ("corpus", corpus_label(data.get("corpus"))),
             ("vocabulary", data.get("vocab_size")), ("width d", (cfg.get("model") or {}).get("n_embd"))]
    if summary is None:
        last = max((r.get("step", 0) for r in metrics), default=0)
        text = f"<p class=\"lead\">Not finished: no summary.json yet (last logged step {fmt(last, 'step')}).</p>"
        if evals:
            s = max(evals)
            text += f"<p>Last periodic val bpb {fmt(evals[s], 'bpb')} at step {fmt(s, 'step')}.</p>"
        return text + facts_table(facts)
    passes = run_passes(summary)
    val, trn, gap = summary.get("val_bpb"), summary.get("train_bpb"), summary.get("gap")
    lead = (f"val bpb <b>{fmt(untrained, 'bpb')} &rarr; {fmt(val, 'bpb')}</b> (untrained &rarr; trained, step "
            f"{fmt(summary.get('step'), 'step')})" if untrained is not None
            else f"val bpb <b>{fmt(val, 'bpb')}</b> at step {fmt(summary.get('step'), 'step')}")
    if trn is not None:
        lead += f", train bpb <b>{fmt(trn, 'bpb')}</b>, gap {fmt(gap, 'gap')} (val &minus; train)"
    lead += f", <b>{fmt(passes, 'passes')}</b> passes over the training text."
    text = f'<p class="lead">{lead}</p>'
    best, best_step = summary.get("best_val_bpb"), summary.get("best_step")
    over = f"over {fmt(train.get('eval_tokens'), 'tokens')} tokens" if train.get("eval_tokens") else None
    last_step = max((s for s in evals if s > 0), default=None)
    if best is not None and last_step is not None:
        how = "from the start of" if train.get("eval_windows") == "prefix" else "spread over"
        where = f"{over} {how} the split" if over else "over the full split"
        same = best_step == last_step
        text += (f"<p>Best periodic val bpb <b>{fmt(best, 'bpb')}</b> at step {fmt(best_step, 'step')}; last "
                 f"{fmt(evals[last_step], 'bpb')} at step {fmt(last_step, 'step')}"
                 + (" (the best is the last)" if same else
                    f" ({fmt(evals[last_step] - best, 'gap')} since the best: ckpt_best.pt keeps the best weights)")
                 + f". Periodic evaluations are {where}; the headline's val bpb is the full split.</p>")
    if untrained is not None:
        text += ("<p class=\"sub\">Untrained: the step-0 evaluation of the same weights as ckpt_init.pt "
                 f"({over or 'full split'}).</p>")
    params = summary.get("params") or {}
    facts += [("parameters", params.get("total") if isinstance(params, dict) else params),
              ("steps", summary.get("step")), ("tokens read", summary.get("tokens_seen")),
              ("training seconds", summary.get("seconds")), ("device", summary.get("device"))]
    return text + facts_table(facts)


def _metrics_table(metrics: list[dict]) -> str:
    by_step: dict[int, dict] = {}
    for r in metrics:
        if not r.get("final") and isinstance(r.get("step"), int):
            by_step.setdefault(r["step"], {}).update(r)
    steps = sorted(s for s, r in by_step.items() if "val_bpb" in r) or sorted(by_step)
    if not steps:
        return "<p>No metrics logged yet.</p>"
    shown = [steps[i] for i in sorted({round(x) for x in np.linspace(0, len(steps) - 1, MAX_METRIC_ROWS)})]
    cols = [c for c in ("step", "loss", "lr", "tokens_per_s", "val_bpb", "val_loss")
            if any(c in by_step[s] for s in shown)]
    note = f"<p>{len(shown)} of {len(steps)} evaluations, evenly spaced.</p>" if len(shown) < len(steps) else ""
    return note + rows_table([c.replace("_", " ") for c in cols], [[by_step[s].get(c) for c in cols] for s in shown],
                         kinds=cols)


def curves_png(runs: dict[str, list[dict]]) -> bytes | None:
    """Training loss and periodic validation bpb against step, one line per run, as PNG bytes."""
    fig = curves_figure(runs)
    return None if fig is None else png_bytes(fig)


def curves_figure(runs: dict[str, list[dict]]):
    """The matplotlib Figure of `curves_png` (None when nothing was logged yet)."""
    series = {n: ([(r["step"], r["loss"]) for r in rows if "loss" in r and "step" in r],
                  [(r["step"], r["val_bpb"]) for r in rows if "val_bpb" in r and "step" in r and not r.get("final")])
              for n, rows in runs.items()}
    if not any(a or b for a, b in series.values()):
        return None
    fig = Figure(figsize=(10, 3.6), dpi=100)
    ax_loss, ax_bpb = fig.subplots(1, 2)
    for name, (loss, bpb) in series.items():
        if loss:
            ax_loss.plot(*zip(*loss, strict=True), label=name)
        if bpb:
            ax_bpb.plot(*zip(*bpb, strict=True), marker="o", ms=3, label=name)
    ax_loss.set(xlabel="step", ylabel="training loss (nats/token)", title="training loss")
    ax_bpb.set(xlabel="step", ylabel="bits per byte", title="validation bpb")
    for ax in (ax_loss, ax_bpb):
        ax.grid(alpha=0.3)
        if len(series) > 1 and ax.lines:
            ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


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
