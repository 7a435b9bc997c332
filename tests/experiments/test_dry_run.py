"""`lrn sweep --dry-run`'s text: a shape study's plan as a table the student reads point by point."""

from __future__ import annotations

from lrngpt.experiments.dry_run import shape_table, shapes_line, sweep_plan_text


def point(index, n_layer, n_embd, heads, non_embedding):
    return {"index": index, "name": f"L{n_layer}-d{n_embd}-s1337", "state": "pending", "steps": 400, "passes": 0.5,
            "est_seconds": 60.0, "device": "cpu",
            "shape": {"n_layer": n_layer, "n_embd": n_embd, "n_head": heads, "non_embedding": non_embedding,
                      "ratio": n_embd / n_layer}}


def plan(points):
    return {"sweep": "width-depth", "scale": "tiny", "corpus": "stories:300KB", "shard": "0/1", "about": "shapes",
            "points": points, "est_seconds": 120.0, "estimate": "an estimate", "unprepared": [], "refused": False,
            "warning": None, "shapes": shapes_line([p["shape"] for p in points if "shape" in p])}


def test_the_width_depth_plan_is_a_table_of_each_points_depth_width_parameters_and_ratio():
    points = [point(0, 2, 120, 15, 346_800), point(1, 28, 32, 4, 347_712)]
    text = sweep_plan_text(plan(points))
    lines = text.splitlines()
    head = lines.index("each point's shape:")
    assert lines[head + 1:head + 4] == [
        "#  n_layer  n_embd  heads  non-embedding   d/L  point",
        "0        2     120     15        346,800    60  L2-d120-s1337",
        "1       28      32      4        347,712  1.14  L28-d32-s1337"]
    assert lines[head + 4].startswith("shapes: d_model / n_layer from 1.14 to 60 (52.5x)")
    # the parameters read down one right-aligned column
    ends = [line.index(word) + len(word) for line, word in zip(lines[head + 1:head + 4],
                                                                ("non-embedding", "346,800", "347,712"), strict=True)]
    assert len(set(ends)) == 1


def test_a_width_study_has_no_shape_table():
    points = [{k: v for k, v in point(i, 1, d, 1, 0).items() if k != "shape"} for i, d in enumerate((8, 16))]
    assert shape_table(points) == [] and "each point's shape" not in sweep_plan_text(plan(points))
