"""The sweep's PNG figures: written from a summary document, valid PNGs, titled with the scale."""

from __future__ import annotations

import json

from lrngpt.experiments.figures import write_figures
from lrngpt.experiments.summary import by_width, seed_stats

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _row(d, val, train, seed=1337, steps=400):
    return {"name": f"d{d}-s{seed}-t{steps}", "n_embd": d, "seed": seed, "steps": steps, "params": 1000 * d,
            "embedding": 100 * d, "val_bpb": val, "train_bpb": train, "gap": None, "used_axes": d,
            "seconds": 1.0, "train_tokens": 102_400, "values": {}}


def _doc(rows, scale="cpu"):
    return {"sweep": "embed-dim-small-data", "scale": scale, "rows": rows, "by_width": by_width(rows),
            "seeds": seed_stats(rows)}


def _is_png(path):
    data = path.read_bytes()
    return data[:8] == PNG_MAGIC and len(data) > 1000


def test_figures_are_valid_pngs_including_the_step_curves(tmp_path):
    rows = [_row(8, 1.10, 1.06), _row(64, 0.98, 0.86), _row(64, 0.99, 0.85, seed=1338), _row(512, 1.03, 0.65)]
    run = tmp_path / "runs" / "d8-s1337-t400"
    run.mkdir(parents=True)
    metrics = [{"step": 0, "val_bpb": 3.0}, {"step": 100, "val_bpb": 1.5}, {"step": 100, "val_bpb": 1.4},
               {"step": 200, "loss": 2.0}, {"step": 400, "val_bpb": 1.1}, {"step": 400, "final": True, "val_bpb": 1.1}]
    (run / "metrics.jsonl").write_text("".join(json.dumps(m) + "\n" for m in metrics) + '{"cut by a kill')
    paths = write_figures(tmp_path, _doc(rows))
    assert [p.name for p in paths] == ["val_bpb_by_width.png", "train_vs_val.png", "val_bpb_by_step.png"]
    assert all(_is_png(p) for p in paths)
    assert sorted(q.name for q in (tmp_path / "figures").iterdir()) == sorted(p.name for p in paths)


def test_without_train_bpb_or_metrics_only_the_width_figure_is_drawn(tmp_path):
    rows = [_row(16, 1.0, None), _row(32, 0.95, None)]
    paths = write_figures(tmp_path, _doc(rows, scale="tiny"))
    assert [p.name for p in paths] == ["val_bpb_by_width.png"] and _is_png(paths[0])


def test_a_single_width_still_plots(tmp_path):
    paths = write_figures(tmp_path, _doc([_row(64, 0.93, 0.94)]))
    assert all(_is_png(p) for p in paths)
