"""`lrn report DIR [DIR ...]`: one self-contained HTML page for a run, a sweep or several sweeps, checked in
headless Chromium (images load, no console errors, nothing wider than a 1280-pixel window)."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import lrngpt
from lrngpt.cli.main import main
from lrngpt.errors import UserError
from lrngpt.report import (
    FINDINGS_SECTION,
    RUN_SECTIONS,
    SWEEP_SECTIONS,
    WIDTH_SWEEP_SECTIONS,
    build_report,
    kind_of,
    write_report_pages,
)
from lrngpt.report.neighbours import STOPWORDS
from lrngpt.store.rundir import RunDir, read_metrics
from tests import browser
from tests.factory import copy


def test_the_page_leads_with_the_headline_and_ends_with_the_details():
    assert RUN_SECTIONS == ["Headline", "Curves", "Embedding neighbours", "Under-trained tokens", "Embedding explorer",
                            "Details"]
    assert SWEEP_SECTIONS == ["Headline", "Figures", "Results", "Embedding neighbours", "Embedding explorer", "Details"]
    assert WIDTH_SWEEP_SECTIONS == ["The chapter's findings", *SWEEP_SECTIONS]  # a width study: the findings first


def _train(trained, name: str, *overrides: str):
    return trained("mlp-tiny", "train.steps=10", "train.eval_every=5", *overrides, name=name)


@pytest.fixture(scope="module")
def text_run(trained, text_corpus):
    return _train(trained, "text", f"data.corpus={text_corpus}", "data.vocab_size=300")


@pytest.fixture(scope="module")
def stories_run(trained):
    # vocabulary 1024: enough category words become single tokens for the purity line
    return _train(trained, "stories", "data.corpus=stories:300KB", "data.vocab_size=1024")


def _sweep(trained_sweep, text_corpus, name: str, steps: int, axes: dict | None = None, study: str | None = None):
    """A real two-point width sweep (`lrn sweep` on a sweep file) at the tiny scale, on the session corpus
    (or the grid `axes`, with a study preset's derived settings)."""
    spec = {"name": name, "base": "mlp-tiny", "scale": "tiny", "axes": axes or {"model.n_embd": [8, 16]},
            "set": {"data.corpus": text_corpus, "data.vocab_size": 300, "train.steps": steps,
                    "train.eval_every": 5, "train.device": "cpu"}, "study": study}
    return trained_sweep(spec, scale=None, name=name).dir


@pytest.fixture(scope="module")
def sweep_dir(trained_sweep, text_corpus):
    return _sweep(trained_sweep, text_corpus, "widths", 10)


@pytest.fixture(scope="module")
def long_sweep_dir(trained_sweep, text_corpus):
    """The same widths trained 4x as long: the chapter's second curve."""
    return _sweep(trained_sweep, text_corpus, "widths-long", 40)


@pytest.fixture(scope="module")
def study_dirs(trained_sweep, text_corpus):
    """The chapter's three kinds of width sweep, tiny: three widths, two seeds at d = 8, and three widths
    on a training prefix read 16 times (the small-data study's derived settings)."""
    widths = {"model.n_embd": [4, 8, 16]}
    return (_sweep(trained_sweep, text_corpus, "widths3", 10, widths),
            _sweep(trained_sweep, text_corpus, "seeds", 10, {"model.n_embd": [8], "train.seed": [1337, 1338]}),
            _sweep(trained_sweep, text_corpus, "small", 32, widths, study="embed-dim-small-data"))


def section(page: str, title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    m = re.search(rf'<section id="{slug}">(.*?)</section>', page, re.S)
    assert m, f"no section {title}"
    return m[1]


def check_self_contained(page: str, explorer: str | None = None) -> None:
    """Nothing to fetch: inline images, in-page anchors, and only the explorer page beside it as a link."""
    assert '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; img-src data:' in page
    assert "<script" not in page.lower()
    assert "http://" not in page and "https://" not in page
    refs = re.findall(r'(?:src|href)="([^"]*)"', page)
    assert refs and all(r.startswith(("data:image/png;base64,", "#")) or r == explorer for r in refs), refs


# ---- a run ---------------------------------------------------------------------------------

def test_run_report_leads_with_the_headline_and_folds_config_and_metrics(text_run, tmp_path):
    r = write_report_pages(text_run, tmp_path / "r.html")
    assert r == {"path": str(tmp_path / "r.html"), "sections": RUN_SECTIONS, "explorer": str(tmp_path / "r-explorer.html")}
    page = (tmp_path / "r.html").read_text()
    check_self_contained(page, "r-explorer.html")
    assert '<a href="r-explorer.html">' in section(page, "Embedding explorer")
    assert '<meta name="generator" content="lrn embed explore">' in (tmp_path / "r-explorer.html").read_text()[:4096]
    summary = RunDir(text_run).summary()
    evals = [m for m in read_metrics(text_run) if "val_bpb" in m and not m.get("final")]
    assert [m["step"] for m in evals] == [0, 5, 10]
    head = section(page, "Headline")
    # val bpb untrained -> trained, train bpb, gap, passes; best periodic val bpb and its step beside the last
    assert f"val bpb <b>{evals[0]['val_bpb']:.4f} &rarr; {summary['val_bpb']:.4f}</b>" in head
    assert f"train bpb <b>{summary['train_bpb']:.4f}</b>, gap {summary['gap']:+.4f}" in head
    assert f"<b>{summary['passes']:.2f}</b> passes over the training text" in head
    assert f"Best periodic val bpb <b>{summary['best_val_bpb']:.4f}</b> at step {summary['best_step']}; last " \
           f"{evals[-1]['val_bpb']:.4f} at step 10" in head
    assert f'<td>parameters</td><td class="num">{summary["params"]["total"]:,}</td>' in head
    assert f'<td>training seconds</td><td class="num">{summary["seconds"]:.1f}</td>' in head
    # the headline comes first; configuration and metrics are folded in <details> at the end
    assert page.index('id="headline"') < page.index('id="curves"') < page.index('id="details"')
    details = section(page, "Details")
    assert details.count("<details>") == 3 and "<summary>Configuration</summary>" in details
    assert "text:" in details and "model.n_embd" in details
    assert all(f"{m['val_bpb']:.4f}" in details for m in evals)
    assert section(page, "Curves").count('<img src="data:image/png;base64,') == 1


def test_numbers_are_formatted_by_kind(text_run, tmp_path):
    write_report_pages(text_run, tmp_path / "r.html")
    details = section((tmp_path / "r.html").read_text(), "Details")
    cfg = json.loads((text_run / "config.json").read_text())
    assert f'<td>train.seed</td><td class="num">{cfg["train"]["seed"]}</td>' in details  # an id: 1337, not 1,337
    assert '<td>train.eval_tokens</td><td class="num">5,000</td>' in details  # a count
    assert f'<td>train.lr</td><td class="num">{cfg["train"]["lr"]:g}</td>' in details
    summary = RunDir(text_run).summary()
    assert f'<td>seconds</td><td class="num">{summary["seconds"]:.1f}</td>' in details
    assert f'<td>val_bpb</td><td class="num">{summary["val_bpb"]:.4f}</td>' in details
    assert f'<td>val_tokens</td><td class="num">{summary["val_tokens"]:,}</td>' in details
    assert f'<td>params.total</td><td class="num">{summary["params"]["total"]:,}</td>' in details
    from lrngpt.report.html import fmt

    assert [fmt(1337, "seed"), fmt(4000, "steps"), fmt(23.456, "seconds"), fmt(0.93261, "val_bpb"),
            fmt(-0.0033, "gap"), fmt(0.119, "passes"), fmt(None, "x"), fmt(0.0001, "lr")] == \
        ["1337", "4,000", "23.5", "0.9326", "-0.0033", "0.12", "-", "0.0001"]


def test_default_neighbours_are_frequent_content_words_and_token_chooses(text_run, tmp_path, capsys):
    from lrngpt.data.prepared import data_cache_dir, load_prepared
    from lrngpt.tokenizer.bpe import Tokenizer

    write_report_pages(text_run, tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text()
    # the queries are the validation split's most frequent content words, counted here independently
    summary = RunDir(text_run).summary()
    tok = Tokenizer.load(text_run / "tokenizer.json")
    val = load_prepared(data_cache_dir() / summary["data_key"]).tokens("val")
    counts = np.bincount(np.asarray(val, dtype=np.int64), minlength=tok.vocab_size)
    texts = [tok.id_to_token(i) for i in np.argsort(-counts, kind="stable")]
    words = [t for t in texts if t.startswith(" ") and t[1:].isalpha() and len(t) >= 3 and t[1:].lower() not in STOPWORDS]
    queries = re.findall(r"<tr><td><code>(.*?)</code></td>", section(page, "Embedding neighbours"))
    assert [html.unescape(q) for q in queries] == [repr(w) for w in words[:5]]
    assert not {" the", " and", " was", " to", " with"} & {w for w in words[:5]}
    assert "most frequent content words of the validation split" in page
    run = shutil.copytree(text_run, tmp_path / "run")
    assert main(["report", str(run), "--token", " Lily", "--token", " happy", "--json"]) == 0
    page = (run / "report.html").read_text()
    queries = re.findall(r"<tr><td><code>(.*?)</code></td>", section(page, "Embedding neighbours"))
    assert [html.unescape(q) for q in queries] == ["' Lily'", "' happy'"]
    assert "The tokens asked for (--token)" in page
    # the chapter's ' Lily' ~ ' Mia' 0.95 beside this run's own, from the table the section showed
    from lrngpt.analysis.embeddings import load_table, pair_cosine
    from lrngpt.report.neighbours import neighbours_line

    loaded, table = load_table(run, "last")
    line = neighbours_line(" Lily", pair_cosine(loaded.tokenizer, table, " Lily", " Mia"), untrained=False)
    assert f'<p class="sub">{html.escape(line)}.</p>' in section(page, "Embedding neighbours")
    assert line.startswith("the chapter: ' Lily' ~ ' Mia' 0.95 (trained); this run: ")
    capsys.readouterr()


def test_a_run_whose_best_is_not_its_last_shows_both_neighbour_lists(text_run, tmp_path):
    from lrngpt.analysis.embeddings import token_neighbors
    from lrngpt.store.rundir import load_run

    run = shutil.copytree(text_run, tmp_path / "run")
    shutil.copy(run / "ckpt_init.pt", run / "ckpt_best.pt")  # as if the best were an earlier step
    s = json.loads((run / "summary.json").read_text())
    s.update(best_step=5, best_val_bpb=s["val_bpb"] - 0.01)
    (run / "summary.json").write_text(json.dumps(s))
    write_report_pages(run, tmp_path / "r.html", tokens=[" Lily"])
    nb = section((tmp_path / "r.html").read_text(), "Embedding neighbours")
    assert f"<th>neighbours (last, step 10, val bpb {s['val_bpb']:.4f})</th>" in nb
    assert f"<th>neighbours (best, step 5, periodic val bpb {s['best_val_bpb']:.4f})</th>" in nb
    cells = re.findall(r"<td>(<code>.*?)</td>", nb.split("</thead>")[1])
    for which, cell in zip(("last", "best"), cells[-2:], strict=True):
        r = load_run(run, which)
        near = token_neighbors(r.tokenizer, r.model.token_embedding.weight.detach().float(), " Lily", 8)
        assert [html.unescape(t) for t in re.findall(r"<code>(.*?)</code>", cell)] == \
            [repr(n["token"]) for n in near["neighbors"]]
    write_report_pages(run, tmp_path / "b.html", tokens=[" Lily"], checkpoint="best")
    nb = section((tmp_path / "b.html").read_text(), "Embedding neighbours")
    assert "neighbours (best, step 5" in nb and "neighbours (last" not in nb


def test_stories_run_report_shows_neighbours_of_category_words_and_purity(stories_run, tmp_path):
    from lrngpt.analysis.embeddings import purity

    write_report_pages(stories_run, tmp_path / "r.html")
    nb = section((tmp_path / "r.html").read_text(), "Embedding neighbours")
    queries = [html.unescape(q) for q in re.findall(r"<tr><td><code>(.*?)</code></td>", nb)]
    assert queries == [repr(w) for w in (" Lily", " Tom", " red", " cat", " apple", " park")]
    s = RunDir(stories_run).summary()
    columns = 1 if s["best_step"] == s["step"] else 2  # the best weights beside the last when they differ
    assert all(len(re.findall(r"&nbsp;-?\d\.\d\d", row)) == 8 * columns for row in nb.split("<tr>")[2:])
    p = purity(stories_run)
    assert f"trained <b>{p['trained']['overall']:.3f}</b>, untrained {p['untrained']['overall']:.3f}" in nb


def test_unfinished_run_without_checkpoints_still_renders(text_run, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    for name in (".lrn-output", "config.json", "metrics.jsonl"):  # (the record, kind "run": written as a run starts)
        shutil.copy(text_run / name, run / name)
    assert write_report_pages(run)["sections"] == RUN_SECTIONS
    page = (run / "report.html").read_text()
    assert "Not finished: no summary.json yet (last logged step 10)" in section(page, "Headline")
    assert "No embedding table to show" in section(page, "Embedding neighbours")
    assert "No explorer page: " in section(page, "Embedding explorer") and not (run / "report-explorer.html").exists()


# ---- a sweep -------------------------------------------------------------------------------

@pytest.mark.slow  # trains the two-point sweep
def test_sweep_report_leads_with_the_best_width_then_figures_results_and_folded_details(sweep_dir, tmp_path):
    from lrngpt.experiments.chapter import NOTE as CHAPTER_NOTE
    from lrngpt.experiments.summary import collect

    assert lrngpt.write_report(sweep_dir, tmp_path / "s.html")["sections"] == WIDTH_SWEEP_SECTIONS  # judged, then drawn
    page = (tmp_path / "s.html").read_text()
    check_self_contained(page, "s-explorer.html")
    assert "a stepper through the widths" in section(page, "Embedding explorer")
    assert "Scale <b>tiny</b>: steps and batch were shrunk" in page
    doc = collect(sweep_dir)
    names = [row["name"] for row in doc["rows"]]
    assert sorted(names) == ["d16-s1337-t10", "d8-s1337-t10"]
    best = min(doc["by_width"], key=lambda e: e["val_bpb"])
    head = section(page, "Headline")
    assert f"lowest val bpb <b>{best['val_bpb']:.4f} at d = {best['n_embd']}</b>" in head
    assert f"val bpb saved per doubling of d: 8&rarr;16 {doc['by_width'][1]['saved_per_doubling']:.4f}" in head
    assert f"{doc['rows'][0]['passes']:.2f} passes over the training text; 2 of 2 runs finished" in head
    results = section(page, "Results")
    assert all(f"{row['val_bpb']:.4f}" in results for row in doc["rows"])
    assert "<th>passes</th>" in results and "<th>breakdown</th>" not in results
    assert all(f'<td class="num">{row["params"]:,}</td>' in results for row in doc["rows"])  # one number
    assert "<h3>By width (val bpb saved per doubling)</h3>" in results
    captions = re.findall(r'alt="([^"]+)"', section(page, "Figures"))
    assert captions[:3] == [html.escape("val bpb by embedding width, and the parameters by part; dotted: "
                                        f"{CHAPTER_NOTE} (val_bpb_by_width)"),
                            "train and val bpb by width (train_vs_val)",
                            "val bpb over the steps of every run (val_bpb_by_step)"]
    details = section(page, "Details")
    assert all(re.search(rf"<td>{n}</td><td>[^<]*</td><td>finished</td>", details) for n in names)
    assert "<h3>Parameters by part</h3>" in details
    first_line = (sweep_dir / "lines.txt").read_text().splitlines()[0]
    assert html.escape(first_line) in details
    assert page.index("<section") == page.index('<section id="the-chapter-s-findings">') < page.index('id="headline"')
    assert page.index('id="headline"') < page.index('id="figures"') < page.index('id="results"') \
        < page.index('id="details"')
    best_run = min(doc["rows"], key=lambda row: row["val_bpb"])["name"]
    assert f"lowest val bpb, <b>{best_run}</b>" in section(page, "Embedding neighbours")


@pytest.mark.slow  # trains two two-point sweeps
def test_two_sweeps_share_one_page_one_figure_and_one_table(sweep_dir, long_sweep_dir, tmp_path, capsys):
    from lrngpt.experiments.figures import plot_val_by_width
    from lrngpt.report.sweeps import sweep_docs

    sweep_dir = copy(sweep_dir, tmp_path)  # the page is written into it
    assert main(["report", str(sweep_dir), str(long_sweep_dir), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["path"] == str(sweep_dir / "report-with-widths-long.html") and r["sections"] == WIDTH_SWEEP_SECTIONS
    assert not (sweep_dir / "report.html").exists()  # the first sweep's own report is not replaced
    page = (sweep_dir / "report-with-widths-long.html").read_text()
    check_self_contained(page, "report-with-widths-long-explorer.html")
    assert "<h1>Sweeps widths + widths-long</h1>" in page
    assert page.count('class="note"') == 1 and "Scale <b>tiny</b> (widths, widths-long):" in page
    figures = section(page, "Figures")
    assert figures.count("val_bpb_by_width") == 2  # one figure (alt and caption) for both sweeps
    _, drawn = plot_val_by_width(sweep_docs([sweep_dir, long_sweep_dir]))
    assert [c["label"] for c in drawn["curves"]] == ["widths: steps 10", "widths-long: steps 40"]
    results = section(page, "Results")
    runs = results.split("<h3>By width")[0]
    assert runs.count("<table>") == 1 and runs.count("<tr>") == 1 + 4  # one table, both sweeps' runs
    assert len(re.findall(r"<tr><td>widths</td><td class=\"num\">\d+</td><td class=\"num\">10</td>", runs)) == 2
    assert len(re.findall(r"<tr><td>widths-long</td><td class=\"num\">\d+</td><td class=\"num\">40</td>", runs)) == 2
    head = section(page, "Headline")
    assert "<b>widths</b>, steps 10" in head and "<b>widths-long</b>, steps 40" in head
    assert section(page, "Details").count("<summary>Sweep ") == 2
    with pytest.raises(UserError, match="only when all are sweep directories"):
        write_report_pages([sweep_dir, sweep_dir / "runs" / "d8-s1337-t10"], tmp_path / "x.html")


@pytest.mark.slow  # trains three small sweeps (eight tiny runs)
def test_several_width_sweeps_are_judged_together_at_the_top_of_the_page(study_dirs, tmp_path):
    from lrngpt.experiments.finding import Verdict
    from lrngpt.experiments.findings import judge
    from lrngpt.experiments.summary import collect
    from lrngpt.report.sweeps import findings_html, sweep_docs

    widths, seeds, small = study_dirs
    assert lrngpt.write_report([widths, seeds, small], tmp_path / "f.html")["sections"] == WIDTH_SWEEP_SECTIONS
    page = (tmp_path / "f.html").read_text()
    assert page.index("<section") == page.index('<section id="the-chapter-s-findings">')
    body = section(page, FINDINGS_SECTION)
    findings = judge(sweep_docs([widths, seeds, small]))
    assert findings_html(findings) in body
    assert re.findall(r'<span class="verdict [a-z]+">([a-z ]+)</span>', body) == [f.verdict for f in findings]
    # the seed sweep sets the noise, the small-data sweep is judged by finding 3
    spread = collect(seeds)["seeds"][0]["spread"]
    assert findings[0].numbers["seed_spread"] == pytest.approx(spread) and f"seed spread {spread:.4f}" in body
    assert findings[2].verdict != Verdict.CANNOT_TELL
    assert findings[2].evidence[0].startswith("small: steps 32, train tokens 1,024: 16.00 passes over a prefix of 1,024 tokens")
    saved = [e["saved_per_doubling"] for e in collect(widths)["by_width"][1:]]
    assert [s["saved"] for s in findings[0].numbers["saved_per_doubling"]] == pytest.approx(saved)
    # the width sweep alone cannot tell the small-data finding, and says what would
    alone = judge(sweep_docs([widths]))
    assert alone[2].verdict == Verdict.CANNOT_TELL and alone[2].next.startswith("run the small-data study")
    assert alone[2].commands[0]["cli"].startswith("lrn sweep embed-dim-small-data ")


def test_findings_html_states_verdicts_reasons_and_what_would_tell_on_the_docs_numbers():
    from lrngpt.experiments.findings import judge
    from lrngpt.report.sweeps import findings_html
    from tests.experiments.test_findings import sotu

    embed, long, variance, small = sotu()
    text = findings_html(judge([embed, long, variance, small]))
    assert re.findall(r'<span class="verdict ([a-z]+)">([a-z ]+)</span>', text) == [
        ("shows", "shows"), ("not", "does not show"), ("shows", "shows")]
    assert '<p class="lead">It read 50% of its training targets (0.70 passes' in text
    assert text.count('<div class="finding">') == 3 and "<b>Next:</b> train on a larger text (at least" in text
    assert '<pre class="cmd">$ lrn sweep embed-dim --set data.corpus=stories:29MB --out DIR-more-text' in text
    assert "<p class=\"sub\">Checked: the same steps and batch: finding 1&#x27;s savings are measured as before" in text
    alone = findings_html(judge([embed]))
    assert '<span class="verdict unknown">cannot tell</span>' in alone
    assert "<b>What would tell:</b> run the small-data study" in alone
    # the chapter's own words beside
    assert "The chapter: &quot;the training tokens were cut to the first 4 million, so that in 4,000 steps it read " \
           "the same text about 16 times over&quot;" in alone


def test_partial_sweep_renders_with_what_is_there(text_run, tmp_path):
    d = tmp_path / "sweep"
    (d / "runs" / "a").mkdir(parents=True)
    for name in ("config.json", "metrics.jsonl"):
        shutil.copy(text_run / name, d / "runs" / "a" / name)
    (d / "sweep.json").write_text(json.dumps({"version": 1, "name": "p", "scale": "cpu", "points": [{"name": "a"}, "b"]}))
    assert write_report_pages(d)["sections"] == SWEEP_SECTIONS
    page = (d / "report.html").read_text()
    assert "<td>a</td><td>-</td><td>running or killed (step 10)</td>" in section(page, "Details")
    assert "<td>b</td><td>-</td><td>not started</td>" in page
    assert "No summary yet" in page and "No finished run yet" in page
    assert re.findall(r'alt="([^"]+)"', section(page, "Figures")) == [  # no width figures: only a's curves
        "every run&#x27;s training loss and validation bpb (curves)"]
    assert "No explorer page: sweep" in section(page, "Embedding explorer")  # no run has a checkpoint


# ---- the command line ----------------------------------------------------------------------

def test_cli_writes_dir_report_html_by_default_and_json_names_path_and_sections(text_run, tmp_path, capsys):
    run = shutil.copytree(text_run, tmp_path / "run")
    assert main(["report", str(run), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {"path": str(run / "report.html"), "sections": RUN_SECTIONS, "explorer": str(run / "report-explorer.html")}
    assert (run / "report.html").read_text().startswith("<!doctype html>")
    assert main(["report", str(run)]) == 0  # an earlier report is replaced without --force
    assert capsys.readouterr().out.startswith(f"wrote {run / 'report.html'} (Headline, ")


def test_cli_refuses_a_missing_dir_and_a_dir_that_is_neither_run_nor_sweep(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "does not exist" in err
    (tmp_path / "other").mkdir()
    assert main(["report", str(tmp_path / "other")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "neither a run directory (no .lrn-output naming it a run) nor a sweep directory" in err
    (tmp_path / "other" / "config.json").write_text("{not json")  # a config.json alone is no run: never read
    assert main(["report", str(tmp_path / "other")]) == 2
    assert "(no .lrn-output naming it a run (a config.json alone is not one))" in capsys.readouterr().err
    assert not (tmp_path / "other" / "report.html").exists()


def test_out_that_is_not_an_earlier_report_is_kept_and_there_is_no_force(text_run, tmp_path, capsys):
    notes = tmp_path / "notes.html"
    notes.write_text("<html>my notes</html>")
    assert main(["report", str(text_run), "--out", str(notes)]) == 2
    assert "lrn did not write it" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:  # no such option: it would do nothing
        main(["report", str(text_run), "--out", str(notes), "--force"])
    assert e.value.code == 2 and "unrecognized arguments: --force" in capsys.readouterr().err
    assert notes.read_text() == "<html>my notes</html>"
    assert main(["report", str(text_run), "--out", str(tmp_path)]) == 2  # a directory
    assert "is a directory" in capsys.readouterr().err
    page = tmp_path / "page.html"
    assert main(["report", str(text_run), "--out", str(page)]) == 0
    assert '<meta name="generator" content="lrn report">' in page.read_text()
    assert main(["report", str(text_run), "--out", str(page)]) == 0  # its own earlier page: replaced
    with pytest.raises(UserError, match="lrn did not write it"):
        notes.write_text("x")
        write_report_pages(text_run, notes, force=True)
    mine = tmp_path / "mine-explorer.html"  # where the explorer of mine.html would go
    mine.write_text("<html>also mine</html>")
    assert main(["report", str(text_run), "--out", str(tmp_path / "mine.html")]) == 2
    assert "lrn did not write it" in capsys.readouterr().err and not (tmp_path / "mine.html").exists()


# ---- in a real browser ---------------------------------------------------------------------

@pytest.mark.browser
@browser.requires_chromium
def test_browser_check_catches_a_broken_page(tmp_path):
    """The checks below can fail: an external image is blocked and a script error is logged."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!doctype html><html><head><meta http-equiv="Content-Security-Policy" '
                   "content=\"default-src 'none'; img-src data:\"></head><body><h1>x</h1>"
                   '<img src="https://example.com/a.png" alt="ext"><script>null.f()</script>'
                   '<details><div class="wide"><table><tr><td>' + "x" * 3000 + "</td></tr></table></div></details>"
                   "</body></html>")
    found = browser.render(bad, tmp_path)
    assert found["overflowing"] and found["overflowing"][0].startswith("div.wide: ")  # seen inside a closed <details>
    assert found["images"][0]["width"] == 0
    assert any("violates the following Content Security Policy" in c for c in found["console"])
    assert any("Uncaught" in c or "TypeError" in c for c in found["console"])


@pytest.mark.browser
@browser.requires_chromium
@pytest.mark.parametrize("kind", ["run", "sweep", "two sweeps"])
def test_report_renders_in_headless_chromium_and_fits_1280_pixels(kind, stories_run, sweep_dir, long_sweep_dir,
                                                                  tmp_path):
    dirs = {"run": [stories_run], "sweep": [sweep_dir], "two sweeps": [sweep_dir, long_sweep_dir]}[kind]
    name = kind.replace(" ", "-")
    page = lrngpt.write_report(dirs, tmp_path / f"{name}.html")["path"]
    text = (tmp_path / f"{name}.html").read_text()
    shot = tmp_path / f"{name}.png"
    found = browser.render(page, tmp_path, screenshot=shot, size=(1280, 3000))
    assert found["console"] == []
    title = {"run": f"Run {stories_run.name}", "sweep": f"Sweep {sweep_dir.name}",
             "two sweeps": f"Sweeps {sweep_dir.name} + {long_sweep_dir.name}"}[kind]
    assert found["h1"] == [title] and found["h2"] == (RUN_SECTIONS if kind == "run" else WIDTH_SWEEP_SECTIONS)
    assert all(n >= 2 for n in found["tables"]) and len(found["tables"]) == text.count("<table>")
    assert len(found["images"]) == text.count('<img src="data:image/png;base64,') >= (1 if kind == "run" else 4)
    assert all(i["complete"] and i["width"] > 0 and i["height"] > 0 for i in found["images"]), found["images"]
    assert [h for h in found["links"] if not h.startswith("#")] == [f"{name}-explorer.html"]
    # no horizontal scroll at 1280 px: not the page, and no table or figure scrolled inside its box
    assert found["clientWidth"] == 1280 and found["scrollWidth"] <= found["clientWidth"]
    assert found["overflowing"] == []
    if kind != "run":  # the width figure with the chapter's reference curve, drawn and decoded
        chapter = [i for i in found["images"] if "dotted: the book chapter" in i["alt"]]
        assert len(chapter) == 1 and chapter[0]["complete"] and chapter[0]["width"] > 0
    assert browser.png_size(shot) == (1280, 3000)
    from matplotlib.image import imread

    rgb = (imread(shot)[..., :3].reshape(-1, 3) * 255).astype(np.uint32)
    assert len(np.unique(rgb[:, 0] << 16 | rgb[:, 1] << 8 | rgb[:, 2])) > 50  # drawn, not a blank page


# ---- what is a run: lrngpt.core.ownership.is_run ----------------------------------------------------

def test_a_config_json_alone_is_no_run_and_a_copied_run_is_reported(text_run, tmp_path):
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(text_run / "config.json", alone)  # a valid run config, but nothing else of a run
    with pytest.raises(UserError, match="a config.json alone is not one"):
        kind_of(alone)
    old = shutil.copytree(text_run, tmp_path / "old", ignore=shutil.ignore_patterns("report*.html", ".lrn-lock"))
    assert kind_of(old) == "run"  # a run copied elsewhere, its marker and record with it
    page, sections = build_report(old)
    assert sections[0] == "Headline" and f"{RunDir(text_run).summary()['val_bpb']:.4f}" in page


def test_a_huge_lines_txt_is_shown_cut_not_copied_into_the_page(sweep_dir, tmp_path):
    from lrngpt.experiments.sweepdir import MAX_LINES_BYTES

    d = shutil.copytree(sweep_dir, tmp_path / "sweep", ignore=shutil.ignore_patterns("report*.html"))
    line = "d=8 | a line lrn did not write\n"
    (d / "lines.txt").write_text(line * (3 * MAX_LINES_BYTES // len(line)))  # 3 MB, read through SweepDir
    page, _ = build_report(d)
    assert page.count("a line lrn did not write") <= MAX_LINES_BYTES // len(line)
    assert re.search(r"\.\.\. \([\d,]+ more bytes of .*lines\.txt not shown\)", page)


def test_the_width_study_headline_sets_problem_10_beside_the_chapters():
    """`lrn report`'s width-study headline: the bpb saved per million added parameters at the sweep's
    small and large end, with the chapter's 0.0639 against 0.0038 (about 17x) beside."""
    from lrngpt.analysis.costs import mlp_params
    from lrngpt.experiments.chapter import VAL_BPB
    from lrngpt.experiments.summary import by_width
    from lrngpt.report.sweeps import sweep_headline

    rows = [{"n_embd": d, "seed": 1337, "steps": 400, "train_tokens": None, "params": mlp_params(4096, 6, 512, d)["total"],
             "embedding": 4096 * d, "val_bpb": v + 0.1 * (d == 512), "train_bpb": None, "gap": None, "used_axes": d,
             "passes": 0.7, "seconds": 1.0, "values": {}} for d, v in VAL_BPB.items()]
    doc = {"label": "embed-dim", "scale": "cpu", "corpus": "text:a.txt", "rows": rows, "points": 8,
           "by_width": by_width(rows)}
    head = sweep_headline([doc])
    # 256 -> 512 lost 0.0931 here: a negative saving, and no ratio
    assert ("val bpb saved per million added parameters: 64 -&gt; 128 0.0639, 256 -&gt; 512 -0.0507 (no ratio: the "
            "large end saved nothing); the chapter&#x27;s Problem 10: 64 -&gt; 128 0.0639 against 256 -&gt; 512 0.0038, "
            "about 17x") in head


def test_a_sweep_page_reads_each_file_of_the_sweep_once(sweep_dir, tmp_path, monkeypatch):
    """`lrn report SWEEP`: its findings, summary, figures, curves and details need the same run files; each
    owner reads a file once a command (lrngpt.core.once), so no file under the sweep is opened twice; a run's
    weights are loaded once by each part that needs them (the used axes, the explorer, the best run's neighbours)."""
    import builtins
    import io
    from collections import Counter

    d = copy(sweep_dir, tmp_path / "sw")
    opened: Counter = Counter()
    real_open = builtins.open

    def counting_open(file, mode="r", *args, **kwargs):
        path = str(file) if isinstance(file, str | Path) else None
        if path and "r" in mode and "+" not in mode and Path(path).resolve().is_relative_to(d.resolve()):
            opened[Path(path).resolve().relative_to(d.resolve()).as_posix()] += 1
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting_open)
    monkeypatch.setattr(io, "open", counting_open)
    assert main(["report", str(d), "--out", str(tmp_path / "page.html")]) == 0
    assert opened["sweep.json"] >= 1 and any(name.endswith("summary.json") for name in opened)
    assert {name: n for name, n in opened.items() if n > 1 and not name.endswith(".pt")} == {}
    assert sorted(n for name, n in opened.items() if name.endswith("ckpt_last.pt")) == [2, 3]
