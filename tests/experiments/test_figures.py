"""The sweep's PNG figures: written from summary documents, valid PNGs, titled with the scale and
corpus; what the chapter's two figures plot, read back from the figure functions and their artists."""

from __future__ import annotations

import pytest
from matplotlib.colors import to_hex

from lrngpt.core.ownership import write_owned_files
from lrngpt.experiments.figures import (
    REFERENCE_GREY,
    figure_files,
    figure_pngs,
    plot_train_vs_val,
    plot_val_by_width,
)
from lrngpt.experiments.summary import by_width, seed_stats
from lrngpt.experiments.sweepdir import FIGURE_FILE, SweepDir

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _row(d, val, train, seed=1337, steps=400, train_tokens=102_400):
    breakdown = {"embedding": 4096 * d, "hidden": 6 * d * 512 + 512, "output": 2_101_248}
    return {"name": f"d{d}-s{seed}-t{steps}", "n_embd": d, "seed": seed, "steps": steps,
            "params": sum(breakdown.values()), "embedding": breakdown["embedding"], "breakdown": breakdown,
            "val_bpb": val, "train_bpb": train, "gap": None, "used_axes": d, "seconds": 1.0,
            "train_tokens": train_tokens, "values": {}, "corpus": "stories:5MB"}


def _doc(rows, scale="cpu", name="embed-dim-small-data"):
    return {"sweep": name, "scale": scale, "rows": rows, "by_width": by_width(rows), "seeds": seed_stats(rows),
            "corpus": "stories:5MB"}


def write_figures(out, doc):
    """One sweep's figures written as the summary writes them (SweepDir.write_summary)."""
    files = figure_files(out, doc)
    return write_owned_files(SweepDir(out).figures_dir, files, FIGURE_FILE) if files else []


def _is_png(path):
    data = path.read_bytes()
    return data[:8] == PNG_MAGIC and len(data) > 1000


def test_figures_are_valid_pngs_including_the_step_curves(tmp_path):
    rows = [_row(8, 1.10, 1.06), _row(64, 0.98, 0.86), _row(64, 0.99, 0.85, seed=1338), _row(512, 1.03, 0.65)]
    rows[0]["periodic_val"] = [[0, 3.0], [100, 1.4], [400, 1.1]]  # a row's periodic evaluations (gather_row's)
    paths = write_figures(tmp_path, _doc(rows))
    assert [p.name for p in paths] == ["val_bpb_by_width.png", "train_vs_val.png", "val_bpb_by_step.png"]
    assert all(_is_png(p) for p in paths)
    assert sorted(q.name for q in (tmp_path / "figures").iterdir() if not q.name.startswith(".lrn-output")) == sorted(p.name for p in paths)


def test_without_train_bpb_or_metrics_only_the_width_figure_is_drawn(tmp_path):
    rows = [_row(16, 1.0, None), _row(32, 0.95, None)]
    paths = write_figures(tmp_path, _doc(rows, scale="tiny"))
    assert [p.name for p in paths] == ["val_bpb_by_width.png"] and _is_png(paths[0])


def test_a_single_width_still_plots(tmp_path):
    paths = write_figures(tmp_path, _doc([_row(64, 0.93, 0.94)]))
    assert all(_is_png(p) for p in paths)


FULL = {8: 1.05, 64: 0.93, 512: 0.88}  # full-data val bpb by width, 400 steps
LONG = {8: 1.02, 64: 0.90, 512: 0.85}  # the same widths at 4x the steps
SMALL = {8: (1.10, 1.06), 64: (0.98, 0.86), 512: (1.03, 0.65)}  # (val, train) on a 16x-read prefix


def _full(values, steps=400, name="embed-dim"):
    return _doc([_row(d, v, v - 0.01, steps=steps, train_tokens=None) for d, v in values.items()], name=name)


def test_figure_1_overlays_the_4x_steps_sweep_and_stacks_the_parameters_by_part():
    fig, data = plot_val_by_width([_full(FULL), _full(LONG, steps=1600, name="embed-dim-long")])
    assert [c["label"] for c in data["curves"]] == ["embed-dim: steps 400", "embed-dim-long: steps 1,600"]
    assert [c["val_bpb"] for c in data["curves"]] == [list(FULL.values()), list(LONG.values())]
    ax, axp = fig.axes[:2]
    assert ax.get_xscale() == "log" and [t.get_text() for t in ax.get_xticklabels()] == ["8", "64", "512"]
    # the parameter panel: one stacked bar per width, embedding at the bottom, output (d-independent) on top
    params = data["params"]
    assert params["n_embd"] == [8, 64, 512] and list(params)[1:] == ["embedding", "hidden", "output"]
    assert params["embedding"] == [4096 * d for d in (8, 64, 512)] and params["output"] == [2_101_248] * 3
    bars = axp.containers
    assert [b.get_label() for b in bars] == ["embedding (V x d)", "hidden layer", "output layer (the same for every d)"]
    for i in range(3):
        bottoms = [r.get_y() for r in (b.patches[i] for b in bars)]
        heights = [r.get_height() for r in (b.patches[i] for b in bars)]
        assert heights == [params[k][i] for k in ("embedding", "hidden", "output")]
        assert bottoms == [0, heights[0], heights[0] + heights[1]]  # stacked, not side by side
    assert fig.get_suptitle() == ("embed-dim + embed-dim-long: val bpb and parameters by embedding width "
                                        "(cpu scale, stories:5MB)")


def test_figure_2_draws_the_small_data_curves_and_a_grey_line_at_the_full_data_val_bpb():
    small = _doc([_row(d, v, t, train_tokens=102_400) for d, (v, t) in SMALL.items()])
    fig, data = plot_train_vs_val([small, _full(FULL)])
    assert len(data["curves"]) == 1  # only the small-data series; the full-data one is the reference
    curve = data["curves"][0]
    assert curve["label"].startswith("embed-dim-small-data: steps 400, train tokens 102,400")
    assert curve["val_bpb"] == [v for v, _ in SMALL.values()] and curve["train_bpb"] == [t for _, t in SMALL.values()]
    assert data["reference"] == {"label": "embed-dim: steps 400", "n_embd": [8, 64, 512],
                                 "val_bpb": list(FULL.values())}
    (ax,) = fig.axes
    grey = [line for line in ax.get_lines() if to_hex(line.get_color()) == REFERENCE_GREY]
    assert len(grey) == 1 and list(grey[0].get_ydata()) == list(FULL.values())
    assert "val with the full text" in grey[0].get_label()
    assert ax.get_title().endswith("small-data train vs val bpb by width\n(cpu scale, stories:5MB)")
    # alone, the small-data sweep has no reference; a full-data sweep alone plots its own train and val
    assert plot_train_vs_val([small])[1]["reference"] is None
    alone = plot_train_vs_val([_full(FULL)])[1]
    assert alone["reference"] is None and alone["curves"][0]["train_bpb"] == pytest.approx([v - 0.01 for v in
                                                                                              FULL.values()])


def test_figure_pngs_draws_several_sweeps_into_pngs():
    small = _doc([_row(d, v, t) for d, (v, t) in SMALL.items()])
    pngs = figure_pngs([{**small, "out": "/nonexistent"}, {**_full(FULL), "out": "/nonexistent"}])
    assert [name for name, _, _ in pngs] == ["val_bpb_by_width", "train_vs_val"]  # no metrics: no step curves
    assert all(png[:8] == PNG_MAGIC and len(png) > 1000 for _, _, png in pngs)


def test_a_width_study_draws_the_chapters_val_bpb_as_a_labelled_reference_curve():
    from lrngpt.experiments.chapter import LABEL as CHAPTER_LABEL
    from lrngpt.experiments.chapter import NOTE as CHAPTER_NOTE
    from lrngpt.experiments.chapter import VAL_BPB as CHAPTER_VAL_BPB

    study = {**_full(FULL), "preset": "embed-dim", "out": "/nonexistent"}
    fig, data = plot_val_by_width([study])
    ax = fig.axes[0]
    chapter = [line for line in ax.get_lines() if line.get_label() == CHAPTER_LABEL]
    assert len(chapter) == 1
    assert list(chapter[0].get_xdata()) == [4, 8, 16, 32, 64, 128, 256, 512]
    assert list(chapter[0].get_ydata()) == list(CHAPTER_VAL_BPB.values())
    # its text and its reading; the chapter never names its corpus, so neither does the label
    assert "550M training tokens" in CHAPTER_LABEL and "0.12 passes" in CHAPTER_LABEL
    assert "TinyStories" not in CHAPTER_LABEL and "TinyStories" not in CHAPTER_NOTE
    assert CHAPTER_LABEL in [t.get_text() for t in ax.get_legend().get_texts()]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["4", "8", "16", "32", "64", "128", "256", "512"]
    assert data["chapter"]["val_bpb"] == list(CHAPTER_VAL_BPB.values())
    # the sweep's own curve is still there, and a sweep over model.n_embd without a preset counts too
    assert data["curves"][0]["val_bpb"] == list(FULL.values())
    own = {**_full(FULL), "preset": None, "axes": {"model.n_embd": [8, 64, 512]}}
    assert plot_val_by_width([own])[1]["chapter"] is not None
    caption = dict((name, cap) for name, cap, _ in figure_pngs([study]))["val_bpb_by_width"]
    assert caption.endswith(f"; dotted: {CHAPTER_NOTE}")


def test_a_sweep_that_is_not_a_width_study_has_no_chapter_curve():
    from lrngpt.experiments.chapter import LABEL as CHAPTER_LABEL

    fig, data = plot_val_by_width([{**_full(FULL), "preset": None, "axes": {"train.lr": [0.01, 0.02]}}])
    assert data["chapter"] is None
    assert CHAPTER_LABEL not in [line.get_label() for line in fig.axes[0].get_lines()]


def test_the_figures_go_into_the_folder_sweepdir_names(tmp_path, monkeypatch):
    from lrngpt.experiments.sweepdir import SweepDir

    monkeypatch.setattr(SweepDir, "figures_dir", property(lambda self: self.path / "plots"))
    paths = write_figures(tmp_path, _doc([_row(16, 1.0, None), _row(32, 0.95, None)], scale="tiny"))
    assert [p.parent for p in paths] == [tmp_path / "plots"] and not (tmp_path / "figures").exists()
