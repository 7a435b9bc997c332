"""Width against depth: nanochat's width-from-depth rule (model.aspect_ratio), the book's GPT presets, the
width-depth study's shapes, its judge on made-up curves whose answer is known, GPT-2's four sizes in
`lrn cost models`, and a tiny-scale sweep of the preset end to end."""

from __future__ import annotations

import json
import math
import re

import pytest

import lrngpt
from lrngpt.analysis.costs import gpt2_params, reference_table
from lrngpt.errors import UserError
from lrngpt.experiments.finding import Verdict
from lrngpt.experiments.grid import resolve_sweep
from lrngpt.experiments.presets import SHAPE_AXIS, STUDIES, WIDTH_DEPTH_SHAPES
from lrngpt.experiments.shape_findings import (
    MAX_CHANGE,
    PARAMS_TOLERANCE,
    RATIO_SPAN,
    is_shape_study,
    judge_shapes,
)
from lrngpt.models import nanochat_shape
from lrngpt.models.build import param_breakdown
from lrngpt.runconfig.schema import from_dict
from tests.cli_run import lrn

SHOWS, DOES_NOT_SHOW, CANNOT_TELL = Verdict.SHOWS, Verdict.DOES_NOT_SHOW, Verdict.CANNOT_TELL

# ---- nanochat's rule -------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_layer, aspect, head, width, heads", [
    (20, 64, 128, 1280, 10),  # nanochat's default depth 20: 20 x 64 = 1,280, a multiple of 128
    (4, 64, 128, 256, 2),     # the book's 4-layer GPT
    (8, 64, 128, 512, 4),     # the book's 8-layer GPT
    (3, 64, 128, 256, 2),     # 192 is rounded up, not down, to a multiple of 128
    (1, 64, 128, 128, 1),     # 64 rounds up to one head of 128
    (6, 50, 64, 320, 5),      # 300 -> 320
    (12, 64, 64, 768, 12),    # GPT-2 small's shape with heads of 64
])
def test_nanochat_shape_on_known_cases(n_layer, aspect, head, width, heads):
    assert nanochat_shape(n_layer, aspect, head) == (width, heads)
    r = lrngpt.width_from_depth(n_layer, aspect, head)
    assert (r["n_embd"], r["n_head"]) == (width, heads) and r["n_embd"] % head == 0


def test_the_books_gpts_are_4_x_256_and_8_x_512_from_the_aspect_ratio():
    for name, layers, width, heads in (("gpt-book-4", 4, 256, 2), ("gpt-book-8", 8, 512, 4)):
        m = lrngpt.config(name).model
        assert (m.n_layer, m.aspect_ratio, m.n_embd, m.n_head, m.head_dim) == (layers, 64, width, heads, 128)
        assert m.n_embd / m.n_layer == 64
    deeper = lrngpt.config("gpt-book-4", **{"model.n_layer": 20}).model  # the rule follows the depth
    assert (deeper.n_embd, deeper.n_head) == (1280, 10)


def test_one_layer_gives_the_width_and_replaces_what_the_other_gave():
    m = lrngpt.config("gpt-default", **{"model.aspect_ratio": 64}).model  # over a preset that names n_embd 256
    assert (m.n_layer, m.n_embd, m.n_head, m.head_dim) == (6, 384, 3, 128)
    m = lrngpt.config("gpt-book-8", **{"model.n_embd": 384}).model  # an explicit width drops the aspect form:
    assert (m.n_embd, m.n_head, m.aspect_ratio, m.head_dim) == (384, 8, None, 48)  # and GPTConfig's 8 heads
    m = lrngpt.config("gpt-default", **{"model.aspect_ratio": 32, "model.head_dim": 64}).model
    assert (m.n_embd, m.n_head) == (192, 3)
    with pytest.raises(UserError, match="both model.n_embd and model.aspect_ratio"):
        lrngpt.config("gpt-default", **{"model.aspect_ratio": 64, "model.n_embd": 384})


def test_a_resolved_config_reads_back_as_itself_and_takes_a_new_depth():
    cfg = lrngpt.config("gpt-book-4")
    again = from_dict(cfg.to_dict())  # config.json holds n_embd and the aspect ratio that gave it
    assert again.model == cfg.model
    assert lrngpt.config(cfg, **{"model.n_layer": 8}).model.n_embd == 512  # a changed depth re-derives it


def test_config_show_and_train_dry_run_show_the_resolved_width(capsys):
    code, out, _ = lrn(capsys, "config", "show", "gpt-book-8", "--json")
    rows = {r["key"]: r for r in json.loads(out)["keys"]}
    assert code == 0 and rows["model.n_embd"]["value"] == 512 and "aspect_ratio 64" in rows["model.n_embd"]["derived"]
    assert rows["model.n_head"]["value"] == 4
    code, out, _ = lrn(capsys, "train", "--config", "gpt-book-4", "--set", "model.n_layer=20", "--set",
                       "data.corpus=stories:300KB", "--set", "data.vocab_size=512", "--dry-run")
    assert code == 0 and "20 layers of width 1280" in out and "n_layer 20 x aspect_ratio 64 = 1,280" in out


def test_the_width_depth_sweep_keeps_the_aspect_form_of_its_base(tmp_path):
    path = tmp_path / "depths.json"
    path.write_text(json.dumps({"base": "gpt-book-4", "scale": "cpu", "study": None,
                                "set": {"data.corpus": "stories:300KB", "data.vocab_size": 512},
                                "axes": {"model.n_layer": [2, 4, 8]}}))
    sweep = resolve_sweep(str(path), "cpu")
    assert [(p.config.model.n_layer, p.config.model.n_embd) for p in sweep.points] == [(2, 128), (4, 256), (8, 512)]


# ---- the study's shapes ----------------------------------------------------------------------------------

@pytest.mark.parametrize("scale", ["tiny", "cpu", "full"])
def test_the_preset_holds_the_non_embedding_parameters_fixed_to_1_percent_over_a_40x_ratio(scale):
    sweep = resolve_sweep("width-depth", scale)
    shapes = {(p.config.model.n_layer, p.config.model.n_embd): p.config for p in sweep.points}
    assert [list(s) + [c.model.n_head] for s, c in shapes.items()] == WIDTH_DEPTH_SHAPES
    counted = {s: param_breakdown("gpt", c.model)["blocks"] for s, c in shapes.items()}  # the model's own count
    for (n_layer, d), n in counted.items():
        assert n == n_layer * (12 * d * d + 4 * d) + 2 * d  # the formula the docs give
        assert shapes[(n_layer, d)].model.head_dim == 8
    assert max(counted.values()) / min(counted.values()) - 1 <= PARAMS_TOLERANCE
    ratios = [d / n_layer for n_layer, d in shapes]
    assert max(ratios) / min(ratios) >= RATIO_SPAN
    assert min(n_layer for n_layer, _ in shapes) >= 2  # Kaplan et al.: fewer than 2 layers deviate
    assert sorted({p.config.train.seed for p in sweep.points}) == [1337, 1338]


def test_the_cpu_scale_reads_well_under_one_pass_and_full_reads_40x_more():
    cpu, full = (resolve_sweep("width-depth", s).points[0].config.train for s in ("cpu", "full"))
    assert cpu.steps * cpu.tokens_per_step == 819_200
    assert full.steps * full.tokens_per_step == 40 * cpu.steps * cpu.tokens_per_step
    assert STUDIES["width-depth"]["axes"][SHAPE_AXIS] is WIDTH_DEPTH_SHAPES


# ---- the judge on made-up curves -------------------------------------------------------------------------

SHAPES = [(2, 120, 346_800), (7, 64, 345_984), (18, 40, 348_560), (28, 32, 347_712)]


def shape_doc(vals: dict, seeds=(1337, 1338), spread=0.002, shapes=SHAPES, preset="width-depth"):
    """A summary document: each shape's val bpb `vals[n_layer]`, seeds `spread` apart around it."""
    rows = []
    for n_layer, d, params in shapes:
        for i, seed in enumerate(seeds):
            off = 0.0 if len(seeds) == 1 else spread * (i / (len(seeds) - 1) - 0.5)
            rows.append({"name": f"d{d}-s{seed}", "n_embd": d, "n_layer": n_layer, "seed": seed,
                         "val_bpb": vals[n_layer] + off, "breakdown": {"blocks": params}, "tokens_read": 819_200})
    return {"sweep": "made-up", "preset": preset, "axes": {SHAPE_AXIS: [], "train.seed": list(seeds)}, "rows": rows}


def test_a_flat_curve_within_the_noise_shows():
    f = judge_shapes(shape_doc({2: 1.000, 7: 0.995, 18: 1.004, 28: 1.008}))
    assert f.verdict == SHOWS and f.reason is None
    assert math.isclose(f.numbers["change"], 0.013 / 0.995, rel_tol=1e-9)
    assert math.isclose(f.numbers["noise"], 0.002 / 0.995, rel_tol=1e-9)  # the seeds 0.002 apart, over the best
    assert f.numbers["span"] == pytest.approx(52.5)


def test_a_clear_trend_does_not_show_and_names_the_worse_end():
    f = judge_shapes(shape_doc({2: 1.00, 7: 1.02, 18: 1.05, 28: 1.08}))  # deeper and narrower, 8% worse
    assert f.verdict == DOES_NOT_SHOW
    assert "28 x 32" in f.reason and "2 x 120" in f.reason and "8.0% higher" in f.reason
    assert f.numbers["slope_per_doubling"] < 0  # val bpb falls as d/L grows
    assert any("the deeper, narrower shapes worse" in e for e in f.evidence)
    # the advice names how far the runs were from Kaplan et al.'s: 819,200 tokens over 346,800 parameters
    assert f.next.startswith("train longer: these runs read 2.4 tokens per non-embedding parameter, and Kaplan")
    assert "--scale full reads 40x the tokens of --scale cpu" in f.next
    unread = shape_doc({2: 1.00, 7: 1.02, 18: 1.05, 28: 1.08})
    for row in unread["rows"]:
        del row["tokens_read"]
    f = judge_shapes(unread)
    assert f.verdict == DOES_NOT_SHOW and f.next.startswith("train longer: Kaplan et al.'s finding")
    assert "per non-embedding parameter" not in f.next
    wide = judge_shapes(shape_doc({2: 1.08, 7: 1.03, 18: 1.01, 28: 1.00}))
    assert wide.verdict == DOES_NOT_SHOW and wide.numbers["slope_per_doubling"] > 0


def test_a_change_near_3_percent_within_the_noise_cannot_tell():
    # 3.2% apart with seeds 0.5% apart: the change could be 2.7% or 3.7%
    f = judge_shapes(shape_doc({2: 1.000, 7: 1.010, 18: 1.020, 28: 1.032}, spread=0.005))
    assert f.verdict == CANNOT_TELL and "within the seed noise" in f.reason
    assert f.numbers["change"] - f.numbers["noise"] <= MAX_CHANGE < f.numbers["change"] + f.numbers["noise"]


@pytest.mark.parametrize("make, why", [
    (lambda: shape_doc({2: 1.0, 28: 1.0}, shapes=[SHAPES[0], SHAPES[3]]), "only 2 shapes"),
    (lambda: shape_doc({2: 1.0, 7: 1.0, 18: 1.0, 28: 1.0}, seeds=(1337,)), "one seed per shape"),
    (lambda: shape_doc({2: 1.0, 7: 1.0, 18: 1.0}, shapes=SHAPES[:3]), "spans only 27.0x"),
    (lambda: shape_doc({2: 1.0, 7: 1.0, 18: 1.0, 28: 1.0}, shapes=[*SHAPES[:3], (28, 36, 436_000)]),
     "differ by 26.0%"),
])
def test_too_few_shapes_seeds_span_or_an_unequal_budget_cannot_tell(make, why):
    f = judge_shapes(make())
    assert f.verdict == CANNOT_TELL and why in f.reason, f.reason


def test_shape_studies_are_judged_apart_from_the_width_findings():
    from lrngpt.experiments.findings import is_width_study, judge

    d = shape_doc({2: 1.0, 7: 0.999, 18: 1.001, 28: 1.003})
    assert is_shape_study(d) and not is_width_study(d)
    assert [f.claim.number for f in judge([d])] == [4]
    plain = {**shape_doc({}, shapes=[]), "preset": None, "axes": {"model.n_layer": [2, 4]}}
    assert is_shape_study(plain)


# ---- GPT-2's four sizes ----------------------------------------------------------------------------------

def test_cost_models_lists_gpt2s_four_sizes_with_depths_widths_and_shares():
    rows = {r["model"]: r for r in reference_table()}
    sizes = [(rows[m]["n_layer"], rows[m]["n_embd"]) for m in ("GPT-2 small", "GPT-2 medium", "GPT-2 large", "GPT-2 XL")]
    assert sizes == [(12, 768), (24, 1024), (36, 1280), (48, 1600)]
    # the released checkpoints' counts (Hugging Face gpt2, gpt2-medium, gpt2-large, gpt2-xl)
    assert [gpt2_params(d, n) for n, d in sizes] == [124_439_808, 354_823_168, 774_030_080, 1_557_611_200]
    assert [round(100 * rows[m]["table_share"], 2) for m in ("GPT-2 small", "GPT-2 XL")] == [31.02, 5.16]
    assert [round(rows[m]["aspect_ratio"], 1) for m in ("GPT-2 small", "GPT-2 medium", "GPT-2 XL")] == [64.0, 42.7, 33.3]


# ---- end to end, tiny --------------------------------------------------------------------------------------

TINY = ["--scale", "tiny", "--set", "train.steps=3", "--axis", f"{SHAPE_AXIS}=2:120:15,7:64:8,28:32:4",
        "--axis", "train.seed=1337"]


@pytest.fixture(scope="module")
def tiny_width_depth(tmp_path_factory):
    """`lrn sweep width-depth --scale tiny` over three shapes and one seed, run once for the module."""
    out = tmp_path_factory.mktemp("wd") / "width-depth"
    code, text, err = lrn_module("sweep", "width-depth", *TINY, "--out", str(out))
    assert code == 0, err
    return out, text


def lrn_module(*argv):
    import contextlib
    import io

    from lrngpt.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def test_a_tiny_width_depth_sweep_runs_end_to_end_and_is_judged(tiny_width_depth):
    out, text = tiny_width_depth
    assert "4. At a fixed non-embedding parameter count the loss changes by at most 3%" in text
    # three steps train no shape: the shapes would be compared on how little each learned
    assert "CANNOT SHOW AT THIS SCALE: no shape has trained past token frequencies" in text
    assert "1. Each doubling" not in text  # no width findings here
    f = lrngpt.width_depth_finding(out)  # the API's document: what --json prints
    assert f["number"] == 4 and f["verdict"] == "cannot show at this scale" and f["next"].startswith("train longer")
    assert [(e["n_layer"], e["n_embd"]) for e in f["numbers"]["shapes"]] == [(2, 120), (7, 64), (28, 32)]
    assert f["numbers"]["span"] == pytest.approx(52.5) and f["numbers"]["params_apart"] < PARAMS_TOLERANCE
    assert "## By shape (tiny scale" in (out / "summary.md").read_text()
    figures = {p.name for p in (out / "figures").iterdir()}
    assert "val_bpb_by_shape.png" in figures and "val_bpb_by_width.png" not in figures


def test_lrngpt_sweep_of_the_same_study_is_the_same_sweep_and_shows_it_by_shape(tiny_width_depth):
    """lrngpt.sweep("width-depth", ...) with the shapes as a mapping of lists resolves to the grid `lrn sweep`
    ran (every point finished: nothing is trained again); its Sweep shows the shapes and the finding."""
    out, _ = tiny_width_depth
    before = {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*/summary.json")}
    sw = lrngpt.sweep("width-depth", scale="tiny", out=out, set={"train.steps": 3}, progress=False,
                      axes={SHAPE_AXIS: [[2, 120, 15], [7, 64, 8], [28, 32, 4]], "train.seed": [1337]})
    assert {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*/summary.json")} == before
    assert [(f["number"], f["verdict"]) for f in sw.findings] == [(4, "cannot show at this scale")]
    assert sorted((r["n_layer"], r["n_embd"]) for r in sw.rows) == [(2, 120), (7, 64), (28, 32)]
    assert sw.figure("val_bpb_by_shape") is not None and sw.figure("val_bpb_by_width") is None
    html = sw._repr_html_()
    assert "data:image/png;base64," in html and "At a fixed non-embedding parameter count" in html


def test_the_dry_run_lists_each_points_shape_parameters_and_ratio(tiny_width_depth, capsys):
    out, _ = tiny_width_depth
    code, text, _ = lrn(capsys, "sweep", "width-depth", *TINY, "--out", str(out), "--dry-run")
    assert code == 0 and text.count(" finished ") == 3
    # a table, one row per point: index, n_layer, n_embd, heads, non-embedding parameters, d/L, name
    assert re.search(r"^\s*# +n_layer +n_embd +heads +non-embedding +d/L +point$", text, re.M)
    assert re.search(r"^\s*\d+ +2 +120 +15 +346,800 +60 +\S+$", text, re.M)
    assert re.search(r"^\s*\d+ +28 +32 +4 +347,712 +1\.14 +\S+$", text, re.M)
    assert "d_model / n_layer from 1.14 to 60 (52.5x); non-embedding parameters 345,984 to 347,712 (0.50% apart)" in text
