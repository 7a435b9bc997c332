"""`lrn report DIR`: one self-contained HTML page for a run or a sweep, checked in headless Chromium."""

from __future__ import annotations

import html
import json
import re
import shutil

import numpy as np
import pytest

from lrngpt.cli.main import main
from lrngpt.errors import UserError
from lrngpt.report import write_report
from lrngpt.run import read_metrics, read_summary
from tests import browser

RUN_SECTIONS = ["Overview", "Configuration", "Metrics", "Curves", "Embedding neighbours"]
SWEEP_SECTIONS = ["Sweep", "Results", "Figures", "Run lines", "Curves", "Embedding neighbours"]


def _train(tmp_path_factory, name: str, *overrides: str):
    from lrngpt.config import load_config
    from lrngpt.train import train

    run_dir = tmp_path_factory.mktemp("report") / name
    cfg = load_config("mlp-tiny", ["train.device=cpu", "train.steps=10", "train.eval_every=5", *overrides])
    train(cfg, run_dir, progress=False, log=lambda msg: None)
    return run_dir


@pytest.fixture(scope="module")
def text_run(tmp_path_factory, text_corpus):
    return _train(tmp_path_factory, "text", f"data.corpus={text_corpus}", "data.vocab_size=300")


@pytest.fixture(scope="module")
def stories_run(tmp_path_factory):
    # vocabulary 1024: enough category words become single tokens for the purity line
    return _train(tmp_path_factory, "stories", "data.corpus=stories:300KB", "data.vocab_size=1024")


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory, text_corpus):
    """A real two-point width sweep (lrn sweep's own code) at the tiny scale, on the session corpus."""
    from lrngpt.experiments.sweep import resolve_sweep, run_sweep

    root = tmp_path_factory.mktemp("sweep")
    spec = {"name": "widths", "base": "mlp-tiny", "scale": "tiny", "axes": {"model.n_embd": [8, 16]},
            "set": {"data.corpus": text_corpus, "data.vocab_size": 300, "train.steps": 10,
                    "train.eval_every": 5, "train.device": "cpu"}}
    (root / "widths.json").write_text(json.dumps(spec))
    run_sweep(resolve_sweep(str(root / "widths.json")), root / "out", progress=False, log=lambda msg: None)
    return root / "out"


def section(page: str, title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    m = re.search(rf'<section id="{slug}">(.*?)</section>', page, re.S)
    assert m, f"no section {title}"
    return m[1]


def check_self_contained(page: str) -> None:
    assert '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; img-src data:' in page
    assert "<script" not in page.lower()
    assert "http://" not in page and "https://" not in page
    refs = re.findall(r'(?:src|href)="([^"]*)"', page)
    assert refs and all(r.startswith(("data:image/png;base64,", "#")) for r in refs), refs


# ---- a run ---------------------------------------------------------------------------------

def test_run_report_shows_config_summary_metrics_curves_and_frequent_token_neighbours(text_run, tmp_path):
    from lrngpt.data import data_cache_dir, load_prepared
    from lrngpt.tokenizer import Tokenizer

    r = write_report(text_run, tmp_path / "r.html")
    assert r == {"path": str(tmp_path / "r.html"), "sections": RUN_SECTIONS}
    page = (tmp_path / "r.html").read_text()
    check_self_contained(page)
    summary = read_summary(text_run)
    overview = section(page, "Overview")
    assert f"{summary['val_bpb']:.4f}" in overview and f"{summary['train_bpb']:.4f}" in overview
    assert f"total {summary['params']['total']:,}" in overview
    assert "text:" in section(page, "Configuration") and "model.n_embd" in section(page, "Configuration")
    evals = [m for m in read_metrics(text_run) if "val_bpb" in m and not m.get("final")]
    metrics = section(page, "Metrics")
    assert [m["step"] for m in evals] == [0, 5, 10]
    assert all(f"{m['val_bpb']:.4f}" in metrics for m in evals)
    assert section(page, "Curves").count('<img src="data:image/png;base64,') == 1
    # the queries are the validation split's most frequent whole-word tokens, counted here independently
    tok = Tokenizer.load(text_run / "tokenizer.json")
    val = load_prepared(data_cache_dir() / summary["data_key"]).tokens("val")
    counts = np.bincount(np.asarray(val, dtype=np.int64), minlength=tok.vocab_size)
    texts = [tok.id_to_token(i) for i in np.argsort(-counts, kind="stable")]
    words = [t for t in texts if t.startswith(" ") and t[1:].isalpha() and len(t) >= 3]
    queries = re.findall(r"<tr><td><code>(.*?)</code></td>", section(page, "Embedding neighbours"))
    assert [html.unescape(q) for q in queries] == [repr(w) for w in words[:5]]
    assert "most frequent word tokens of the validation split" in page


def test_stories_run_report_shows_neighbours_of_category_words_and_purity(stories_run, tmp_path):
    from lrngpt.cli.embed import purity

    write_report(stories_run, tmp_path / "r.html")
    nb = section((tmp_path / "r.html").read_text(), "Embedding neighbours")
    queries = [html.unescape(q) for q in re.findall(r"<tr><td><code>(.*?)</code></td>", nb)]
    assert queries == [repr(w) for w in (" Lily", " Tom", " red", " cat", " apple", " park")]
    assert all(len(re.findall(r"&nbsp;-?\d\.\d\d", row)) == 8 for row in nb.split("<tr>")[2:])  # k=8 each
    p = purity(stories_run)
    assert f"trained <b>{p['trained']['overall']:.3f}</b>, untrained {p['untrained']['overall']:.3f}" in nb


def test_unfinished_run_without_checkpoints_still_renders(text_run, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    for name in ("config.json", "metrics.jsonl"):
        shutil.copy(text_run / name, run / name)
    assert write_report(run)["sections"] == RUN_SECTIONS
    page = (run / "report.html").read_text()
    assert "No summary.json: the run has not finished (last logged step 10)" in page
    assert "No embedding table to show" in section(page, "Embedding neighbours")


# ---- a sweep -------------------------------------------------------------------------------

@pytest.mark.slow  # trains the two-point sweep
def test_sweep_report_shows_definition_tables_figures_lines_and_best_run(sweep_dir, tmp_path):
    write_report(sweep_dir, tmp_path / "s.html")
    page = (tmp_path / "s.html").read_text()
    check_self_contained(page)
    assert 'Scale <b>tiny</b>' in page
    summary = json.loads((sweep_dir / "summary.json").read_text())
    names = [row["name"] for row in summary["rows"]]
    assert sorted(names) == ["d16-s1337-t10", "d8-s1337-t10"]
    sweep = section(page, "Sweep")
    assert all(re.search(rf"<td>{n}</td><td>[^<]*</td><td>finished</td>", sweep) for n in names)
    results = section(page, "Results")
    assert all(f"{row['val_bpb']:.4f}" in results for row in summary["rows"])
    assert "<h3>By width (bpb saved per doubling)</h3>" in results
    figures = sorted(p.name for p in (sweep_dir / "figures").glob("*.png"))
    assert figures and re.findall(r'alt="([^"]+)"', section(page, "Figures")) == figures
    first_line = (sweep_dir / "lines.txt").read_text().splitlines()[0]
    assert html.escape(first_line) in section(page, "Run lines")
    best = min(summary["rows"], key=lambda row: row["val_bpb"])["name"]
    assert f"lowest val bpb, <b>{best}</b>" in section(page, "Embedding neighbours")


def test_partial_sweep_renders_with_what_is_there(text_run, tmp_path):
    d = tmp_path / "sweep"
    (d / "runs" / "a").mkdir(parents=True)
    for name in ("config.json", "metrics.jsonl"):
        shutil.copy(text_run / name, d / "runs" / "a" / name)
    (d / "sweep.json").write_text(json.dumps({"name": "p", "scale": "cpu", "points": [{"name": "a"}, "b"]}))
    assert write_report(d)["sections"] == SWEEP_SECTIONS
    page = (d / "report.html").read_text()
    assert "<td>a</td><td>-</td><td>running or killed (step 10)</td>" in page
    assert "<td>b</td><td>-</td><td>not started</td>" in page
    assert "No summary yet" in page and "No figures yet" in page and "No finished run yet" in page


# ---- the command line ----------------------------------------------------------------------

def test_cli_writes_dir_report_html_by_default_and_json_names_path_and_sections(text_run, tmp_path, capsys):
    run = shutil.copytree(text_run, tmp_path / "run")
    assert main(["report", str(run), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {"path": str(run / "report.html"), "sections": RUN_SECTIONS}
    assert (run / "report.html").read_text().startswith("<!doctype html>")
    assert main(["report", str(run)]) == 0  # an earlier report is replaced without --force
    assert capsys.readouterr().out.startswith(f"wrote {run / 'report.html'} (Overview, ")


def test_cli_refuses_a_missing_dir_and_a_dir_that_is_neither_run_nor_sweep(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "does not exist" in err
    (tmp_path / "other").mkdir()
    assert main(["report", str(tmp_path / "other")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "neither a run directory (no config.json) nor a sweep directory" in err
    (tmp_path / "other" / "config.json").write_text("{not json")
    assert main(["report", str(tmp_path / "other")]) == 2
    assert "config.json is not valid JSON" in capsys.readouterr().err
    assert not (tmp_path / "other" / "report.html").exists()


def test_out_that_is_not_an_earlier_report_is_kept_unless_force(text_run, tmp_path, capsys):
    notes = tmp_path / "notes.html"
    notes.write_text("<html>my notes</html>")
    assert main(["report", str(text_run), "--out", str(notes)]) == 2
    assert "not an lrn report" in capsys.readouterr().err and notes.read_text() == "<html>my notes</html>"
    assert main(["report", str(text_run), "--out", str(tmp_path)]) == 2  # a directory
    assert "is a directory" in capsys.readouterr().err
    assert main(["report", str(text_run), "--out", str(notes), "--force"]) == 0
    assert '<meta name="generator" content="lrn report">' in notes.read_text()
    with pytest.raises(UserError, match="not an lrn report"):
        notes.write_text("x")
        write_report(text_run, notes)


# ---- in a real browser ---------------------------------------------------------------------

@pytest.mark.browser
@browser.requires_chromium
def test_browser_check_catches_a_broken_page(tmp_path):
    """The checks below can fail: an external image is blocked and a script error is logged."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!doctype html><html><head><meta http-equiv="Content-Security-Policy" '
                   "content=\"default-src 'none'; img-src data:\"></head><body><h1>x</h1>"
                   '<img src="https://example.com/a.png" alt="ext"><script>null.f()</script></body></html>')
    found = browser.render(bad, tmp_path)
    assert found["images"][0]["width"] == 0
    assert any("violates the following Content Security Policy" in c for c in found["console"])
    assert any("Uncaught" in c or "TypeError" in c for c in found["console"])


@pytest.mark.browser
@browser.requires_chromium
@pytest.mark.parametrize("kind", ["run", "sweep"])
def test_report_renders_in_headless_chromium(kind, stories_run, sweep_dir, tmp_path):
    d, sections = (stories_run, RUN_SECTIONS) if kind == "run" else (sweep_dir, SWEEP_SECTIONS)
    page = write_report(d, tmp_path / f"{kind}.html")["path"]
    shot = tmp_path / f"{kind}.png"
    found = browser.render(page, tmp_path, screenshot=shot, size=(1200, 3000))
    assert found["console"] == []
    assert found["h1"] == [f"{kind.capitalize()} {d.name}"] and found["h2"] == sections
    assert all(n >= 2 for n in found["tables"]) and len(found["tables"]) == (4 if kind == "run" else 7)
    n_images = 1 if kind == "run" else 1 + len(list((d / "figures").glob("*.png")))
    assert len(found["images"]) == n_images
    assert all(i["complete"] and i["width"] > 0 and i["height"] > 0 for i in found["images"]), found["images"]
    assert all(href.startswith("#") for href in found["links"])
    assert browser.png_size(shot) == (1200, 3000)
    from matplotlib.image import imread

    rgb = (imread(shot)[..., :3].reshape(-1, 3) * 255).astype(np.uint32)
    assert len(np.unique(rgb[:, 0] << 16 | rgb[:, 1] << 8 | rgb[:, 2])) > 50  # drawn, not a blank page
