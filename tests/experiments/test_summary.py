"""Lines, tables and seed statistics of a sweep, checked against the chapter's own numbers."""

from __future__ import annotations

import statistics

import pytest

from lrngpt.errors import UserError
from lrngpt.experiments.runner import summarize
from lrngpt.experiments.summary import (
    by_width,
    csv_text,
    format_line,
    markdown,
    seed_stats,
    series_label,
)
from lrngpt.store.run_files import best_periodic_val

# The chapter's 4,000-step table: d -> (total params, embedding, val bpb).
CHAPTER = {4: (2_130_432, 16_384, 1.1734), 8: (2_159_104, 32_768, 1.0882), 16: (2_216_448, 65_536, 1.0247),
           32: (2_331_136, 131_072, 0.9751), 64: (2_560_512, 262_144, 0.9326), 128: (3_019_264, 524_288, 0.9033),
           256: (3_936_768, 1_048_576, 0.8864), 512: (5_771_776, 2_097_152, 0.8795)}
SAVED = [0.0852, 0.0635, 0.0496, 0.0425, 0.0293, 0.0169, 0.0069]


CHAPTER_PASSES = 4000 * 64 * 256 / 550e6  # 65.5M of its 550M training tokens


def row(d, val, seed=1337, steps=4000, train=None, train_tokens=None, used=None, seconds=23.0, values=None,
        passes=CHAPTER_PASSES, corpus="stories:100MB"):
    params, emb, _ = CHAPTER.get(d, (1, 1, 0))
    hidden = 6 * d * 512 + 512
    return {"name": f"d{d}-s{seed}-t{steps}", "n_embd": d, "seed": seed, "steps": steps, "params": params,
            "embedding": emb, "breakdown": {"embedding": emb, "hidden": hidden, "output": 2_101_248},
            "val_bpb": val, "train_bpb": train, "gap": None if train is None else val - train,
            "used_axes": used or d, "seconds": seconds, "train_tokens": train_tokens, "eval_tokens": 2_000_000,
            "best_val_bpb": None, "best_val_step": None, "finished": True, "values": values or {},
            "passes": passes, "corpus": corpus}


def test_line_is_the_chapters_format_with_passes_scale_and_corpus():
    r = row(64, 0.9326, train=0.9359, used=53, seconds=23.2)
    assert format_line(r, "full") == (
        "d=  64 | steps  4,000 | seed 1337 | params  2,560,512 (embedding   262,144, hidden   197,120, "
        "output 2,101,248) | val bpb 0.9326 | train bpb 0.9359 (gap -0.0033) | passes 0.12 | used axes (90%)  "
        "53/64 | 23s | full scale, stories:100MB")
    old = row(64, 0.9326, passes=None, corpus="text:/home/me/books/my.txt")  # a summary from before passes
    assert "| passes - |" in format_line(old, "cpu") and format_line(old, "cpu").endswith("| cpu scale, text:my.txt")
    r = row(512, 0.8795, train=0.8816, used=384, seconds=30, steps=16000)
    assert format_line(r, "cpu").startswith(
        "d= 512 | steps 16,000 | seed 1337 | params  5,771,776 (embedding 2,097,152, hidden 1,573,376, "
        "output 2,101,248) | val bpb 0.8795 | train bpb 0.8816 (gap -0.0021) | passes 0.12 | used axes (90%) 384/512")
    assert format_line(r, "cpu").endswith("| 30s | cpu scale, stories:100MB")


def test_small_data_line_adds_the_best_periodic_val():
    r = row(512, 1.0326, train=0.6541, train_tokens=4_000_000)
    r.update(best_val_bpb=1.0322, best_val_step=3750)
    line = format_line(r, "full", best=True)
    assert "| best val bpb during training 1.0322 (step 3750, 2,000,000 val tokens) |" in line
    assert "best val" not in format_line(r, "full")


def test_saved_per_doubling_reproduces_the_chapter_column():
    table = by_width([row(d, v) for d, (_, _, v) in CHAPTER.items()])
    assert [e["n_embd"] for e in table] == list(CHAPTER)
    assert table[0]["saved_per_doubling"] is None
    assert [round(e["saved_per_doubling"], 4) for e in table[1:]] == SAVED


def test_a_gap_of_two_doublings_is_shared_out_and_series_stay_apart():
    rows = [row(16, 1.0045, steps=16000), row(64, 0.9200, steps=16000), row(256, 0.8689, steps=16000),
            row(16, 1.0247), row(64, 0.9326)]
    table = by_width(rows)
    long = [e for e in table if e["series"] == "steps 16,000"]
    assert [e["saved_per_doubling"] for e in long[1:]] == [pytest.approx(0.0845 / 2), pytest.approx(0.0511 / 2)]
    short = [e for e in table if e["series"] == "steps 4,000"]
    assert short[1]["saved_per_doubling"] == pytest.approx(0.0921 / 2)


def test_seed_mean_spread_and_std_match_the_chapter():
    vals = [0.9326, 0.9327, 0.9323]
    stats = seed_stats([row(64, v, seed=s) for v, s in zip(vals, (1337, 1338, 1339), strict=True)])
    assert len(stats) == 1
    g = stats[0]
    assert g["seeds"] == [1337, 1338, 1339] and g["val_bpb"] == vals
    assert g["mean"] == pytest.approx(sum(vals) / 3)
    assert round(g["spread"], 4) == 0.0004
    assert g["std"] == pytest.approx(statistics.stdev(vals))
    table = by_width([row(64, v, seed=s) for v, s in zip(vals, (1337, 1338, 1339), strict=True)])
    assert table[0]["val_bpb"] == pytest.approx(sum(vals) / 3) and table[0]["seeds"] == [1337, 1338, 1339]
    assert seed_stats([row(64, 0.9)])[0]["std"] is None


def test_series_label_names_steps_prefix_and_other_axes():
    assert series_label(row(64, 1.0, train_tokens=4_000_000)) == "steps 4,000, train tokens 4,000,000"
    assert series_label(row(64, 1.0, values={"model.n_embd": 64, "train.lr": 0.02})) == "steps 4,000, train.lr=0.02"


def _doc(rows, scale="cpu"):
    return {"sweep": "seed-variance", "preset": "seed-variance", "scale": scale, "about": "three seeds",
            "corpus": "stories:5MB",
            "points": len(rows) + 1, "rows": rows, "by_width": by_width(rows), "seeds": seed_stats(rows),
            "pending": ["d64-s1340-t4000"], "lines": [format_line(r, scale) for r in rows]}


def test_markdown_and_csv_name_the_scale_and_hold_the_numbers():
    rows = [row(64, v, seed=s, train=v + 0.003) for v, s in ((0.9326, 1337), (0.9327, 1338), (0.9323, 1339))]
    md = markdown(_doc(rows))
    assert md.startswith("# Sweep seed-variance (cpu scale, stories:5MB)")
    assert "3 of 4 runs finished at the cpu scale; pending: d64-s1340-t4000." in md
    assert "## Seeds (cpu scale, stories:5MB)" in md
    assert "| steps 4,000 | 64 | 1337, 1338, 1339 | 0.9326, 0.9327, 0.9323 | 0.9325 | 0.0004 | 0.0002 |" in md
    assert "| 64 | 2,560,512 | 262,144 | 0.9325 |  | 0.9355 | -0.0030 | 0.12 | 64/64 | 23 | 1337, 1338, 1339 |" in md
    lines = csv_text(_doc(rows)).splitlines()
    assert lines[0].split(",")[:5] == ["scale", "sweep", "corpus", "name", "n_embd"]
    assert "passes" in lines[0].split(",")
    assert lines[1].startswith(f"cpu,seed-variance,stories:100MB,d64-s1337-t4000,64,1337,4000,,{CHAPTER_PASSES},"
                               "2560512,262144,0.9326,")


def test_best_periodic_val_keeps_the_last_of_a_repeated_step_and_skips_init_and_final():
    metrics = [{"step": 0, "val_bpb": 0.1}, {"step": 10, "loss": 3.0}, {"step": 25, "val_bpb": 1.2},
               {"step": 50, "val_bpb": 0.9}, {"step": 50, "val_bpb": 1.1},  # resumed: step 50 evaluated again
               {"step": 75, "val_bpb": 1.0}, {"step": 75, "final": True, "val_bpb": 0.5}]
    assert best_periodic_val(metrics) == (1.0, 75)
    assert best_periodic_val([{"step": 5, "loss": 1.0}]) == (None, None)


def test_summarize_needs_a_sweep_directory(tmp_path):
    with pytest.raises(UserError, match="no sweep.json"):
        summarize(tmp_path)
    (tmp_path / "sweep.json").write_text("{oops")
    with pytest.raises(UserError, match="not valid JSON"):
        summarize(tmp_path)


def test_problem_10_per_million_added_parameters_gives_the_chapters_figures_on_its_own_table():
    """The chapter's Problem 10: 64 -> 128 saves 0.0293 for 458,752 parameters (0.0639 per million),
    256 -> 512 saves 0.0069 for 1,835,008 (0.0038), about 17x; from its own table's val bpb and params."""
    from lrngpt.analysis.costs import mlp_cost_table
    from lrngpt.experiments import chapter
    from lrngpt.experiments.summary import per_million, per_million_text

    eff = per_million(by_width([row(d, chapter.VAL_BPB[d]) for d in CHAPTER]))
    assert (eff["small"]["from"], eff["small"]["added"], eff["large"]["from"], eff["large"]["added"]) == (
        64, 458_752, 256, 1_835_008)
    assert (round(eff["small"]["per_million"], 4), round(eff["large"]["per_million"], 4)) == \
        chapter.PROBLEM10["per_million"] == (0.0639, 0.0038)
    assert round(eff["ratio"]) == chapter.PROBLEM10["ratio"] == 17
    # the cost table's formula (V + block x H) x d agrees, from the model's parameter count
    cost = {r["n_embd"]: r for r in mlp_cost_table(4096, 6, 512, list(chapter.VAL_BPB), chapter.VAL_BPB)["rows"]}
    assert round(cost[128]["bpb_saved_per_million"], 4) == 0.0639 and round(cost[512]["bpb_saved_per_million"], 4) \
        == 0.0038
    assert per_million_text(eff) == (
        "val bpb saved per million added parameters: 64 -> 128 0.0639, 256 -> 512 0.0038 (17.0x); the chapter's "
        "Problem 10: 64 -> 128 0.0639 against 256 -> 512 0.0038, about 17x")


def test_problem_10_falls_back_to_the_sweeps_first_and_last_doubling_and_is_in_the_markdown():
    from lrngpt.experiments.summary import per_million

    rows = [row(d, v) for d, v in ((4, 1.1734), (8, 1.0882), (16, 1.0247), (32, 0.9751))]  # no 64 -> 128
    eff = per_million(by_width(rows))
    assert (eff["small"]["from"], eff["large"]["from"]) == (4, 16)
    assert eff["small"]["per_million"] == pytest.approx(0.0852 / (2_159_104 - 2_130_432) * 1e6)
    assert eff["ratio"] == pytest.approx(eff["small"]["per_million"] / eff["large"]["per_million"])
    assert per_million(by_width(rows[:2])) is None  # one doubling: nothing to compare
    md = markdown(_doc(rows))
    assert "Problem 10 on this series: val bpb saved per million added parameters: 4 -> 8 " in md
    flat = by_width([row(4, 1.0), row(8, 0.9), row(16, 0.95)])  # the large end lost: no ratio, said so
    assert per_million(flat)["ratio"] is None


def test_the_docs_say_where_problem_10_is_worked_on_the_sweep():
    from pathlib import Path

    study = " ".join((Path(__file__).resolve().parents[2] / "docs" / "embedding-width-study.md").read_text(
        encoding="utf-8").split())
    assert "work the chapter's Problem 10 on the sweep" in study and "0.0639 against 0.0038 (about 17x" in study
