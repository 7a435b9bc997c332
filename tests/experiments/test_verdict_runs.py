"""The findings judge on sweeps that really train (tiny ones): a one-document text whose ending reads
unlike the rest, validated on that ending and then on chunks from all over it; what `lrn eval
--by-reads` adds to an older sweep's verdict; `lrn sweep --minutes 8` on a text of a million
tokens; and the findings section in a real browser."""

from __future__ import annotations

import json
import random
import shlex
import shutil

import pytest

from lrngpt.cli.main import build_parser
from lrngpt.experiments.finding import Verdict
from lrngpt.experiments.findings import judge
from lrngpt.experiments.grid import resolve_sweep
from lrngpt.experiments.runner import run_sweep
from lrngpt.experiments.summary import collect
from lrngpt.experiments.sweepdir import SweepDir, same_sweep
from tests.cli_run import run_cli

SHOWS, DOES_NOT_SHOW, CANNOT_TELL = Verdict.SHOWS, Verdict.DOES_NOT_SHOW, Verdict.CANNOT_TELL

WORDS = "the a cat dog sat ran on under mat tree house river king said unto them and he she it was were lord".split()


@pytest.fixture(scope="module")
def tail_sweeps(tmp_path_factory):
    """One document (no <|endoftext|>): plain words, then an ending of letter soup. The same tiny
    sweep validated on its ending (lrn's split for one document) and on chunks from all over it."""
    root = tmp_path_factory.mktemp("tail")
    rng = random.Random(0)
    text = root / "one-document.txt"
    body = " ".join(rng.choice(WORDS) for _ in range(60_000))
    ending = " ".join("".join(rng.choice("qxzjvkwy") for _ in range(rng.randint(3, 7))) for _ in range(3_000))
    text.write_text(f"{body} {ending}", encoding="utf-8")
    out = {}
    for split in ("documents", "chunks"):  # documents: a one-document text gets its tail
        sweep = resolve_sweep("embed-dim", "tiny", [f"data.corpus=text:{text}", f"data.val_split={split}"],
                              ["model.n_embd=4,8,16"])
        out[split] = root / f"sweep-{split}"
        run_sweep(sweep, out[split], log=lambda m: None, progress=False, figures=False)
    return out["documents"], out["chunks"]


def test_a_one_document_text_validated_on_its_ending_names_the_split_and_advises_chunks(tail_sweeps):
    tail, chunks = tail_sweeps
    f2 = judge([collect(tail)])[1]
    assert f2.verdict == DOES_NOT_SHOW and f2.numbers["val_split"] == "tail"
    assert f2.numbers["split"]["cause"] == "validation text"
    assert "most of the gap is a harder validation text, not memorising" in f2.reason
    assert f2.reason.endswith("validation is the last part of its one document (its ending)")
    assert f2.next.startswith("draw validation from all over the text (data.val_split=chunks)")
    [advice] = f2.commands
    assert "--set data.val_split=chunks" in advice["cli"] and '"data.val_split": "chunks"' in advice["api"]
    assert advice["checked"].startswith("the same steps, batch and widths")
    # the advice is a command that runs: it is exactly the chunks sweep below
    argv = shlex.split(advice["cli"].split(" && ")[0])[1:]
    args = build_parser().parse_args(argv)
    advised = resolve_sweep(args.source, args.scale, args.overrides, args.axes)
    assert same_sweep(advised.definition(), SweepDir(chunks).definition())
    # with chunks the gap falls, and the reason is another
    g2 = judge([collect(chunks)])[1]
    assert max(g2.numbers["gap"].values()) < max(f2.numbers["gap"].values()) - 1.0
    assert g2.reason != f2.reason and g2.numbers["val_split"] == "chunks"
    assert "validation: seeded chunks from all over the text" in g2.evidence
    assert not any(c["why"].startswith("draw validation from all over") for c in g2.commands)
    # validation drawn as the training text is: never "a harder validation text"
    assert "harder validation text" not in (g2.reason or "")


def test_by_reads_measured_by_lrn_eval_change_an_older_sweeps_reason(tail_sweeps, tmp_path):
    tail, _ = tail_sweeps
    old = tmp_path / "old"
    shutil.copytree(tail, old)
    for summary in (old / "runs").glob("*/summary.json"):  # a sweep from before summary.json held the split
        s = json.loads(summary.read_text())
        for key in ("train_bpb_read", "train_bpb_unread", "read_share", "read_twice_share"):
            s.pop(key)
        summary.write_text(json.dumps(s))
    before = judge([collect(old)])[1]
    assert before.numbers["split"] is None and "harder validation text" not in before.reason
    widest = [c for c in before.commands if c["cli"].startswith("lrn eval ")][0]
    assert widest["cli"] == f"lrn eval {old}/runs/d16-s1337-t30 --by-reads && lrn report {old}"
    code, _, err = run_cli("eval", str(old / "runs" / "d16-s1337-t30"), "--by-reads")
    assert code == 0, err
    after = judge([collect(old)])[1]
    assert after.numbers["split"]["cause"] == "validation text" and after.reason != before.reason
    assert "most of the gap is a harder validation text, not memorising: at d = 16" in after.reason


@pytest.mark.slow  # prepares a million tokens and trains two budgeted runs: the done-when of issue 29
def test_a_budget_on_a_text_of_a_million_tokens_plans_more_passes_runs_and_records_its_time(tmp_path, monkeypatch):
    import lrngpt.training.timing as run_timing

    rng = random.Random(1)
    text = tmp_path / "million.txt"
    text.write_text("\n<|endoftext|>\n".join(" ".join(rng.choice(WORDS) for _ in range(700)) for _ in range(1_000)),
                    encoding="utf-8")

    def probe(cfg, device, max_tokens=512, steps=3):  # a stand-in: a slow machine, known times
        return {"train_s_per_token": 4e-4, "eval_s_per_token": 1e-5, "probe_batch": cfg.train.batch_size,
                "probe_steps": steps}

    monkeypatch.setattr(run_timing, "probe", probe)
    out = tmp_path / "width"
    argv = ["sweep", "embed-dim", "--minutes", "8", "--set", f"data.corpus=text:{text}", "--set",
            "data.vocab_size=300", "--set", "data.tokenizer_bytes=300000", "--set", "model.n_hidden=32",
            "--set", "train.train_eval_tokens=20000", "--set", "train.eval_tokens=5000",
            "--axis", "model.n_embd=4,16", "--out", str(out)]
    code, stdout, stderr = run_cli(*argv, "--dry-run", "--json")
    assert code == 0, stderr
    plan = json.loads(stdout)["budget"]
    n_train = json.loads(stdout)["points"][0]["train_split_tokens"]
    assert 900_000 < n_train < 1_300_000  # a text of about a million training tokens
    steps = plan["sets"]["train.steps"]
    assert steps >= 100 and 0.25 < plan["passes"] <= 1.0  # more passes than 0.25, instead of a refusal
    assert plan["est_seconds"] <= 8 * 60
    assert any(g.startswith("finding 2 (no turn with enough data) rests on hardly a token read twice: at "
                            f"{plan['passes']:.2f} passes") for g in plan["gives_up"])
    code, stdout, stderr = run_cli(*argv)
    assert code == 0, stderr
    plan = SweepDir(out).definition()["budget"]  # planned again (a dry run stores nothing): the same choices
    assert plan["sets"]["train.steps"] == pytest.approx(steps, abs=8) and plan["passes"] > 0.25
    rows = SweepDir(out).timing()
    points = [r for r in rows if r["event"] == "point"]
    assert [r["name"] for r in points] == list(plan["point_seconds"])
    assert all(r["estimate"] == plan["point_seconds"][r["name"]] and r["seconds"] > 0 for r in points)
    [run] = [r for r in rows if r["event"] == "run"]
    assert run["estimate"] == plan["est_seconds"] and run["seconds"] >= sum(r["seconds"] for r in points) - 0.05 * len(points)  # each rounded to 0.1 s
    doc = json.loads((out / "summary.json").read_text())
    assert doc["timing"]["estimate_s"] == plan["est_seconds"] and doc["timing"]["actual_s"] == run["seconds"]
    assert "budget 8 min: planned" in stderr and "took" in stderr
    assert "## Time against the budget" in (out / "summary.md").read_text()
    # the stored plan, asked again, now holds what the runs took (the plan corrected by the machine as it is)
    code, stdout, _ = run_cli(*argv, "--dry-run", "--json")
    again = json.loads(stdout)["budget"]
    assert again["point_seconds"] == {r["name"]: r["seconds"] for r in points}
    assert again["sets"] == plan["sets"]


@pytest.mark.browser
def test_the_findings_section_shows_the_new_reasons_in_a_browser(tail_sweeps, tmp_path):
    import lrngpt
    from tests import browser

    if not browser.CHROMIUM.exists():
        pytest.skip(f"no headless browser at {browser.CHROMIUM}")
    tail, _ = tail_sweeps
    page = lrngpt.write_report([tail], tmp_path / "tail.html")["path"]
    found = browser.render(page, tmp_path, screenshot=tmp_path / "tail.png", size=(1280, 3000))
    assert found["console"] == [] and found["overflowing"] == []
    assert found["clientWidth"] == 1280 and found["scrollWidth"] <= found["clientWidth"]
    assert found["h2"][0] == "The chapter's findings"
    text = found["text"]
    assert "and most of the gap is a harder validation text, not memorising" in text
    assert "validation is the last part of its one document (its ending)" in text
    assert "$ lrn sweep embed-dim --scale tiny" in text and "--set data.val_split=chunks" in text
    assert ">>> lrngpt.sweep(\"embed-dim\", scale=\"tiny\"" in text
