"""The sections of a run's report: the headline (val bpb untrained -> trained, train bpb, gap, passes
over the training text, the best periodic val bpb beside the last), the training curves, the
embedding neighbours, the under-trained tokens and the details (every number of summary.json, the configuration, the periodic
evaluations)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure  # no pyplot: no global state, no display needed (Agg)

from lrngpt.corpora.registry import corpus_label
from lrngpt.experiments.figures import png_bytes
from lrngpt.report.html import facts_table, figure, fmt, folded, kv_table, rows_table
from lrngpt.report.neighbours import neighbours_html
from lrngpt.report.rare_tokens import undertrained_html
from lrngpt.runconfig.schema import flat_keys
from lrngpt.store.run_files import periodic_evals, run_passes
from lrngpt.store.rundir import RunDir, read_metrics, read_summary

MAX_METRIC_ROWS = 25  # the periodic evaluations listed in the details, evenly spaced


def run_sections(d: Path, tokens: list[str] | None = None, checkpoint: str | None = None) -> list[tuple[str, str]]:
    cfg = RunDir(d).config().to_dict()  # checked: a damaged config.json is named, field and all
    summary, metrics = read_summary(d), read_metrics(d)
    curves = curves_png({d.name: metrics})
    details = (folded("Overview: every number of summary.json", _overview(cfg, summary, metrics))
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
    last_step = max((s for s in evals if s > 0), default=None)
    if best is not None and last_step is not None:
        how = "from the start of" if train.get("eval_windows") == "prefix" else "spread over"
        where = f"over {fmt(train.get('eval_tokens'), 'tokens')} tokens {how} the split" \
            if train.get("eval_tokens") else "over the full split"
        same = best_step == last_step
        text += (f"<p>Best periodic val bpb <b>{fmt(best, 'bpb')}</b> at step {fmt(best_step, 'step')}; last "
                 f"{fmt(evals[last_step], 'bpb')} at step {fmt(last_step, 'step')}"
                 + (" (the best is the last)" if same else
                    f" ({fmt(evals[last_step] - best, 'gap')} since the best: ckpt_best.pt keeps the best weights)")
                 + f". Periodic evaluations are {where}; the headline's val bpb is the full split.</p>")
    if untrained is not None:
        text += ("<p class=\"sub\">Untrained: the step-0 evaluation of the same weights as ckpt_init.pt "
                 f"({'over ' + fmt(train.get('eval_tokens'), 'tokens') + ' tokens' if train.get('eval_tokens') else 'full split'}).</p>")
    params = summary.get("params") or {}
    facts += [("parameters", params.get("total") if isinstance(params, dict) else params),
              ("steps", summary.get("step")), ("tokens read", summary.get("tokens_seen")),
              ("training seconds", summary.get("seconds")), ("device", summary.get("device"))]
    return text + facts_table(facts)


def _overview(cfg: dict, summary: dict | None, metrics: list[dict]) -> str:
    if summary is None:
        return "<p>No summary.json: the run has not finished.</p>"
    flat = flat_keys({k: v for k, v in summary.items()})
    return kv_table(flat)


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
