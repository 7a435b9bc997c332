"""`lrn chapter`: every study of the book chapter in one command, at the tiny scale (seconds a part):
every verdict and its page, a dry run that writes nothing, a second run that resumes instead of
training again, and a run killed mid-way that resumes to the very numbers of one never stopped."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests import browser
from tests.cli_run import lrn, run_cli, sigterm_after

ROOT = Path(__file__).parents[1]
STUDIES = ["width", "width", "small-data", "width-depth", "planted", "pip", "superposition"]


@pytest.fixture(scope="module")
def chapter_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("chapter") / "ch"
    code, out, err = run_cli("chapter", "--scale", "tiny", "--out", str(d), "--json")
    assert code == 0, err[-3000:]
    return d, json.loads(out)


def test_the_tiny_chapter_judges_every_study_and_writes_one_page_that_opens_with_the_verdicts(chapter_dir):
    d, r = chapter_dir
    studies = [v["study"] for v in r["verdicts"]]
    assert studies[:3] == STUDIES[:3] and set(STUDIES) <= set(studies)
    assert all(v["verdict"] and v["summary"] for v in r["verdicts"])
    page = Path(r["report"]).read_text()
    assert Path(r["report"]) == d / "report.html"
    assert page.index("<h2>Verdicts</h2>") < page.index("<h2>width</h2>") < page.index("<h2>Plan and time</h2>")
    for s in set(studies):
        assert f'<section id="{s}"><h2>{s}</h2>' in page
    assert page.count("<img ") >= 4 and "http" not in page.split("<body>")[1].replace("http-equiv", "")
    assert json.loads((d / "verdicts.json").read_text())["verdicts"] == r["verdicts"]


def test_the_seed_noise_counts_the_width_studys_own_run_at_d_64(chapter_dir):
    d, r = chapter_dir
    first = r["verdicts"][0]
    noise = [e for e in first["evidence"] if "seed spread" in e]
    assert noise and "seeds 1338, 1339, 1337 at d = 64" in noise[0], first["evidence"]
    assert len(list((d / "seeds" / "runs").iterdir())) == 2  # the third seed was not trained again


def test_a_chapter_copied_elsewhere_is_reported_resumed_and_its_page_rewritten_like_the_original(chapter_dir,
                                                                                                  tmp_path):
    """A chapter directory copied to another machine or home (its record with it, its lock files not): lrn
    reads it as its own, rewrites its page and verdicts, and a run of the same command finishes it again."""
    import shutil

    d, r = chapter_dir
    copy = Path(shutil.copytree(d, tmp_path / "elsewhere" / "ch", ignore=shutil.ignore_patterns("*.lock", ".lrn-lock")))
    (copy / "report.html").write_text((copy / "report.html").read_text())  # new times and inodes: hashed, still lrn's
    code, _, err = run_cli("report", str(copy))
    assert code == 0 and (copy / "report.html").is_file(), err[-2000:]
    (copy / "verdicts.json").unlink()  # (moved away, as a damaged one's advice says)
    code, out, err = run_cli("chapter", "--scale", "tiny", "--out", str(copy), "--json")
    assert code == 0, err[-2000:]
    again = json.loads(out)
    assert [v["verdict"] for v in again["verdicts"]] == [v["verdict"] for v in r["verdicts"]]
    assert "chapter: width" not in err  # every part was done: nothing trained again


@browser.requires_chromium
def test_the_chapter_page_renders_in_headless_chromium_every_figure_decoded_and_fits_1280_pixels(chapter_dir, tmp_path):
    d, r = chapter_dir
    text = Path(r["report"]).read_text()
    found = browser.render(Path(r["report"]), tmp_path, screenshot=tmp_path / "chapter.png", size=(1280, 3000))
    assert found["console"] == []
    assert found["h2"][0] == "Verdicts" and found["h2"][-2:] == ["Plan and time", "Protocols against the chapter's"]
    assert len(found["images"]) == text.count('<img src="data:image/png;base64,') >= 4
    assert all(i["complete"] and i["width"] > 0 for i in found["images"]), found["images"]
    assert found["scrollWidth"] <= found["clientWidth"] == 1280 and found["overflowing"] == []


def test_each_part_records_its_seconds_beside_its_estimate(chapter_dir):
    d, r = chapter_dir
    plan = json.loads((d / "chapter.json").read_text())
    rows = [json.loads(x) for x in (d / "timing.jsonl").read_text().splitlines()]
    assert [x["part"] for x in rows] == [p["name"] for p in plan["parts"]]
    assert all(x["seconds"] >= 0 and x["est_seconds"] >= 0 for x in rows)
    assert r["seconds"] == pytest.approx(sum(x["seconds"] for x in rows), abs=0.2)


def test_the_same_command_again_resumes_and_trains_nothing(chapter_dir, capsys):
    d, r = chapter_dir
    before = (d / "timing.jsonl").read_text()
    code, out, err = lrn(capsys, "chapter", "--scale", "tiny", "--out", d, "--json")
    assert code == 0, err
    assert json.loads(out)["verdicts"] == r["verdicts"] and (d / "timing.jsonl").read_text() == before


def test_report_of_a_chapter_directory_writes_the_chapter_page(chapter_dir, capsys, tmp_path):
    d, _ = chapter_dir
    code, out, err = lrn(capsys, "report", d, "--out", tmp_path / "again.html")
    assert code == 0, err
    assert "<h2>Verdicts</h2>" in (tmp_path / "again.html").read_text()


def test_the_dry_run_plans_every_part_and_writes_nothing(capsys, tmp_path):
    code, out, err = lrn(capsys, "chapter", "--scale", "tiny", "--out", tmp_path / "ch", "--dry-run", "--json")
    assert code == 0, err
    plan = json.loads(out)
    names = [p["name"] for p in plan["parts"]]
    assert names[:3] == ["width", "seeds", "small-data"] and names[-3:] == ["planted", "pip", "superposition"]
    assert any(n.startswith("width-depth/") for n in names)
    assert plan["est_seconds"] >= sum(p["est_seconds"] for p in plan["parts"])
    assert not (tmp_path / "ch").exists()


@pytest.mark.slow
def test_a_chapter_killed_mid_way_resumes_to_the_numbers_of_one_never_stopped(chapter_dir, tmp_path):
    d, r = chapter_dir
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = ["chapter", "--scale", "tiny", "--out", str(tmp_path / "ch")]
    # inside small-data's first point: its step-1 evaluation printed, its step loop running
    code, lines = sigterm_after(argv, env, ("chapter: small-data", ": step 1: val bpb"))
    assert code == 130, "".join(lines[-5:])
    done = [json.loads(x)["part"] for x in (tmp_path / "ch" / "timing.jsonl").read_text().splitlines()]
    assert done == ["width", "seeds"]
    code, out, err = run_cli("chapter", "--scale", "tiny", "--out", str(tmp_path / "ch"), "--json")
    assert code == 0, err[-2000:]
    again = json.dumps(json.loads(out)["verdicts"]).replace(str(tmp_path / "ch"), "DIR")
    assert again == json.dumps(r["verdicts"]).replace(str(d), "DIR")
