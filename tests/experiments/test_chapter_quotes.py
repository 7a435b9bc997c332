"""What lrn presents as the book chapter's (or the lecture's, or the seed project's notes') says what
they say: every sentence quoted from the chapter is one of lrngpt.experiments.chapter.QUOTES, whose
English carries exactly the numbers of the chapter's Korean; and the misquotes found in issue 29 are
gone from the code, the help, the docs and the notebooks.

Given the chapter's text (LRN_BOOK_CHAPTER=path/to/the/chapter.txt), each Korean sentence is also
checked to occur in it word for word."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from lrngpt.experiments import chapter
from lrngpt.experiments.judges import CLAIMS

ROOT = Path(__file__).resolve().parents[2]


def korean_numbers(text: str) -> list[float]:
    """The numbers of a Korean sentence, its 억 (10^8) and 만 (10^4) units applied: 5억 5천만 = 550,000,000."""
    text = text.replace("−", "-").replace("~", " ~ ")
    text = re.sub(r"(\d+)억\s*(\d+)천만", lambda m: str(int(m[1]) * 10**8 + int(m[2]) * 10**7), text)
    text = re.sub(r"([\d,]+)만", lambda m: str(int(m[1].replace(",", "")) * 10**4), text)
    return sorted(float(x.replace(",", "")) for x in re.findall(r"-?\d[\d,]*(?:\.\d+)?", text))


def english_numbers(text: str) -> list[float]:
    out = []
    for x, unit in re.findall(r"(-?\d[\d,]*(?:\.\d+)?)( million)?", text):
        v = float(x.replace(",", ""))
        out.append(round(v * 10**6) if unit else v)
    return sorted(out)


@pytest.mark.parametrize("key", sorted(chapter.QUOTES))
def test_each_quote_carries_exactly_the_numbers_of_the_chapters_sentence(key):
    ko, en = chapter.QUOTES[key]
    assert english_numbers(en) == korean_numbers(ko), key


def test_the_korean_numbers_are_read_as_the_chapter_means_them():
    assert korean_numbers("5억 5천만 개인데 4,000 스텝 동안 본 토큰은 6,554만 개") == [4000, 65_540_000, 550_000_000]
    assert english_numbers("550 million tokens and 65.54 million, 0.0069") == [0.0069, 65_540_000, 550_000_000]


@pytest.mark.skipif(not os.environ.get("LRN_BOOK_CHAPTER"), reason="LRN_BOOK_CHAPTER names no chapter text here")
def test_each_quote_is_the_chapters_own_sentence_word_for_word():
    text = Path(os.environ["LRN_BOOK_CHAPTER"]).read_text(encoding="utf-8")
    missing = [key for key, (ko, _) in chapter.QUOTES.items() if ko not in text]
    assert not missing, missing
    assert "TinyStories" not in text  # the chapter never names its corpus
    assert "1338" not in text and "1339" not in text  # nor its other two seeds


def quoted(text: str) -> list[str]:
    return re.findall(r'"([^"]+)"', text)


def test_every_sentence_the_findings_give_as_the_chapters_is_a_quote():
    english = {en for _, en in chapter.QUOTES.values()}
    for text in (c.source for c in CLAIMS.values()):
        assert text.startswith("the chapter: ") and quoted(text), text
        assert set(quoted(text)) <= english, set(quoted(text)) - english
        assert "TinyStories" not in text and "1338" not in text
    # lrn's Poisson estimate for the chapter's reading stands outside the quotes, said to be lrn's
    assert not any("11%" in q or "under 1%" in q for q in quoted(CLAIMS[2].source))
    assert "(lrn's figures for it: 0.12 passes, about 11% of its targets read, under 1% twice)" in CLAIMS[2].source


def test_the_findings_say_hardly_ever_where_the_chapter_does():
    assert "hardly a token read twice" in CLAIMS[2].text and "nothing read twice" not in CLAIMS[2].text
    assert "hardly ever had occasion to read the same text twice" in chapter.QUOTES["hardly_twice"][1]
    assert "거의 없었다" in chapter.QUOTES["hardly_twice"][0]  # "hardly ever", not "never"


def texts() -> dict[str, str]:
    """The code's, the help's, the docs' and the notebooks' words."""
    out = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in
           [*(ROOT / "lrngpt").rglob("*.py"), ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]}
    for nb in (ROOT / "notebooks").glob("*.ipynb"):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        out[str(nb.relative_to(ROOT))] = "\n".join("".join(c["source"]) for c in cells)
    return out


@pytest.mark.parametrize("wrong", ["nothing read twice", "nothing is read twice", "book chapter: TinyStories",
                                   "it is the chapter itself", "The lecture's hand example",
                                   "chapter (TinyStories", "than TinyStories", "(TinyStories, 4,000 steps",
                                   "warmup from 0 to", "seeds 1337, 1338, 1339 at d = 64 (the chapter",
                                   "from `--scale full`: TinyStories", "the chapter's TinyStories",
                                   "550M TinyStories", "550 million TinyStories", "TinyStories tokens"])
def test_no_misquote_is_left(wrong):
    # whitespace runs read as one space, so a phrase wrapped across two lines is found too
    found = [name for name, text in texts().items()
             if wrong in " ".join(text.split()) and name != "lrngpt/experiments/chapter.py"]
    assert not found, (wrong, found)


def test_the_chapters_corpus_and_seeds_are_lrns_choices_where_they_are_named():
    from lrngpt.runconfig.help import PRESET_ABOUT

    assert "lrn's choice: the chapter does not name its text" in PRESET_ABOUT["mlp-chapter"]
    study = (ROOT / "docs" / "embedding-width-study.md").read_text(encoding="utf-8")
    assert 'the chapter names only 1337: it trains d = 64 "twice more with only the seed changed"' in study
    assert "The chapter does not name its training text either" in study
    nb = texts()["notebooks/2-width-study.ipynb"]
    assert "on TinyStoriesV2-GPT4, lrn's choice of text: the chapter does not name its own" in nb


def test_notebook_1_credits_the_notes_and_shows_the_lectures_shares():
    from lrngpt.api import cost_models

    nb = texts()["notebooks/1-embedding-lecture.ipynb"]
    assert "The seed project's notes work this example by hand: the table has 3 rows, the ids are `[2, 0, 2]`" in nb
    assert '"about 0.35%" of GPT-3 175B' in nb and "round(r[\"table_share\"], 3)" not in nb
    gpt3 = next(r for r in cost_models() if r["model"].startswith("GPT-3"))
    assert f"{gpt3['table_share']:.2%}" == "0.35%"  # what the notebook's table now shows, as the lecture says


def test_the_warmup_and_weight_decay_are_described_as_the_code_does_them():
    import torch

    from lrngpt.runconfig.help import KEY_HELP
    from lrngpt.runconfig.schema import load_config
    from lrngpt.training.optimizer import make_optimizer
    from lrngpt.training.schedule import lr_at

    tc = load_config("mlp-chapter").train
    assert lr_at(0, tc) == pytest.approx(tc.lr / tc.warmup_steps) and tc.warmup_steps == 100
    assert KEY_HELP["train.warmup_steps"] == "steps of linear warmup to train.lr, from train.lr / warmup_steps at the " \
                                             "first step"
    decayed = load_config("mlp-chapter", ["train.weight_decay=0.01"]).train
    groups = make_optimizer(torch.nn.Linear(3, 2), decayed).param_groups
    assert [(g["weight_decay"], [p.dim() for p in g["params"]]) for g in groups] == [(0.01, [2]), (0.0, [1])]
    study = (ROOT / "docs" / "embedding-width-study.md").read_text(encoding="utf-8")
    assert "lrn never decays biases, so PyTorch's decay of them is not restored" in study
    assert "lr / warmup_steps at the first step to lr (lr/100 at the chapter's warmup of 100" in study


def test_the_docs_quote_the_chapters_findings_in_its_words():
    study = (ROOT / "docs" / "embedding-width-study.md").read_text(encoding="utf-8")
    words = study.split("The chapter's three findings, in its words:", 1)[1].split("Which series is which", 1)[0]
    english = {en for _, en in chapter.QUOTES.values()}
    found = [" ".join(q.split()) for q in quoted(words)]
    assert len(found) == 9 and set(found) <= english, set(found) - english


# ---- the chapter's numbers, once: every sentence and table that restates them builds on chapter.py ----

def test_the_reading_premise_is_built_from_the_chapters_tokens_and_said_by_dry_run_and_budget(monkeypatch):
    from types import SimpleNamespace

    from lrngpt.data.sizing import REREAD_PASSES
    from lrngpt.experiments import budget, thresholds
    from lrngpt.experiments.dry_run import passes_warning

    assert chapter.PREMISE.endswith(f"(it reads {chapter.READ / 1e6:.1f}M of its "
                                    f"{chapter.TRAIN_TOKENS / 1e6:.0f}M training tokens)")
    assert "(it reads 65.5M of its 550M training tokens)" in chapter.PREMISE  # 4,000 x 64 x 256 of 550M
    study = SimpleNamespace(width_study=True, repeats_on_purpose=False)
    assert passes_warning(study, [0.5, REREAD_PASSES]) is None  # once through: no warning
    assert chapter.PREMISE in passes_warning(study, [0.5, REREAD_PASSES + 0.1])
    assert (budget.CHAPTER_STEPS, budget.CHAPTER_BATCH) == (chapter.STEPS, chapter.BATCH)  # not a copy
    assert thresholds.OWN_TEXT_PASSES == REREAD_PASSES == 1.0


def test_the_chapters_share_read_is_said_to_be_lrns_estimate_wherever_the_docs_give_it():
    """The chapter gives no share of targets read: lrn computes 11% from 4,000 x 64 x 256 random windows
    over 550M tokens (Poisson, 0.12 passes), and every sentence that states it says so."""
    assert f"{chapter.read_shares(chapter.PASSES)[0]:.0%}" == "11%"
    hits = 0
    for name, text in texts().items():
        flat = " ".join(text.split())
        for m in re.finditer(r"the chapter's model read about 11%", flat):
            hits += 1
            assert flat[m.end():].startswith(" (lrn's estimate"), (name, flat[m.start():m.end() + 60])
    assert hits >= 1  # the docs' table of findings says it


def test_the_chapters_text_is_550_million_tokens_of_a_text_it_does_not_name_in_the_theory_page():
    theory = " ".join((ROOT / "docs" / "explanation" / "theory.md").read_text(encoding="utf-8").split())
    assert "the chapter's best width was 512 on its data (550 million training tokens of a text it does not name" \
        in theory


def test_the_chapters_neighbours_are_its_quotes_and_are_set_beside_the_runs_own():
    from lrngpt.report.neighbours import neighbours_line

    assert chapter.NEIGHBOURS == {" Lily": (" Mia", 0.95)} and "' Lily' and ' Mia'" in chapter.QUOTES["lily_mia"][1]
    assert "0.95" in chapter.QUOTES["lily_mia"][0] and "0.48" in chapter.QUOTES["luna"][0]
    assert chapter.UNTRAINED_NEIGHBOURS == {" Luna": (" pretending", 0.48)}
    found = {"split": {}, "cosine": 0.7123, "nearest": " Tom", "nearest_cosine": 0.8}
    assert neighbours_line(" Lily", {**found, "other": " Mia"}, untrained=False) == (
        "the chapter: ' Lily' ~ ' Mia' 0.95 (trained); this run: ' Lily' ~ ' Mia' 0.71; ' Lily''s nearest ' Tom' 0.80")
    assert neighbours_line(" Luna", {**found, "cosine": 0.05}, untrained=True) == (
        "the chapter: ' Luna''s untrained neighbour ' pretending' 0.48; this run, untrained: ' Luna''s nearest ' Tom' "
        "0.80; ' Luna' ~ ' pretending' 0.05")
    split = {"split": {" pretending": [" pre", "tending"]}, "cosine": None, "nearest": " Tom", "nearest_cosine": 0.41}
    assert neighbours_line(" Luna", split, untrained=True).endswith(
        "' Luna''s nearest ' Tom' 0.41; ' pretending' is not one token of its BPE (' pre' + 'tending')")


def test_the_docs_set_the_chapters_39_s_a_run_beside_lrns_measured_seconds():
    assert english_numbers(chapter.QUOTES["seconds"][1]) == [39] and english_numbers(
        chapter.QUOTES["train_seconds"][1]) == [22, 30]
    assert (min(chapter.SECONDS.values()), max(chapter.SECONDS.values())) == (22, 30)  # its table's times
    study = " ".join((ROOT / "docs" / "embedding-width-study.md").read_text(encoding="utf-8").split())
    said = "the chapter: each training run took 39 s on its machine"
    assert study.count(said) == 2  # beside the loaded sweeps' seconds and the quiet sweep's
    assert f"training 159 s at d = 16 to 304 s at d = 512, peak RSS 888 MB; {said}" in study
    assert (chapter.READ / (400 * 16 * 256)) == 40 and "40 times the tokens of these 400 steps of 16 x 256" in study
    assert "(the chapter: 22-30 s of training, 39 s a run)" in study


def test_the_docs_name_bengios_width_and_yin_and_shens_word2vec_remark_as_the_chapter_does():
    def page(name: str) -> str:
        return " ".join((ROOT / "docs" / "explanation" / name).read_text(encoding="utf-8").split())

    models = page("models.md").split("## The MLP LM", 1)[1].split("## The GPT", 1)[0]
    assert "벤지오 팀은 100" in chapter.QUOTES["bengio"][0]
    assert '"A Neural Probabilistic Language Model", whose feature vectors had 30 to 100 dimensions' in models
    assert f'the chapter: "{chapter.QUOTES["bengio"][1]}"' in models
    pip = page("theory.md").split("## The PIP loss", 1)[1]
    assert f'the chapter: "{" ".join(chapter.QUOTES["word2vec"][0].split())}"' in pip
    assert "many studies use it probably because the first word2vec paper chose 300" in pip
    assert f'"{chapter.QUOTES["yardsticks"][0]}"' in pip  # the sentence the far-apart line quotes


def test_the_readme_demo_shows_the_chapters_neighbours_beside_the_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    demo = readme.split("## What `make demo` does", 1)[1].split("\n## ", 1)[0]
    assert "the chapter: ' Lily' ~ ' Mia' 0.95 (trained); this run: ' Lily' ~ ' Mia' 0.06" in demo
    assert "the chapter: ' Luna''s untrained neighbour ' pretending' 0.48; this run, untrained: " in demo


# ---- who says what: the lecture, the book chapter, the seed project's notes, lrn itself -----------------

def code_and_help() -> dict[str, str]:
    return {k: " ".join(v.split()) for k, v in texts().items() if k.startswith("lrngpt/")}


@pytest.mark.parametrize("wrong", ["the lecture's GPT pair", "the lecture's notes name the same ids",
                                   "a full-scale split is 550M tokens", "against the lecture's rule",
                                   "the lecture's rule (input reads < d)"])
def test_no_misattribution_is_left_in_the_code_or_the_help(wrong):
    assert [name for name, text in code_and_help().items() if wrong in text] == []


def test_each_claim_is_credited_to_whoever_makes_it():
    from lrngpt.cli.main import build_parser
    from lrngpt.experiments import chapter_plan as cp
    from lrngpt.experiments.planted import CLAIMS as PLANTED

    # superposition is the lecture's remark, not the book chapter's (the toy model is Elhage et al.'s)
    assert "lecture" in cp.CLAIMS["superposition"][1] and "book chapter" not in cp.CLAIMS["superposition"][1]
    assert cp.SUPERPOSITION.source.startswith("the lecture: ")
    # "input reads < d" is lrn's own rule; the lecture says only that a rare token may be under-trained
    assert cp.CLAIMS["planted"][1].startswith("lrn's own rule, input reads < d")
    assert PLANTED["under_trained"][1].startswith("lrn's own rule, input reads < d")
    rare = (ROOT / "lrngpt" / "analysis" / "rare_tokens.py").read_text(encoding="utf-8")
    flat = " ".join(rare.split())
    assert "The rule, once (UNDER_TRAINED)" in flat and "the lecture's \"a rare token may be under-trained" in flat
    # [2,0,2] is the seed project's notes' hand example
    lessons = (ROOT / "lrngpt" / "analysis" / "lessons.py").read_text(encoding="utf-8")
    assert "# the seed project's notes' hand example: a 3-row table looked up at ids [2,0,2]" in lessons
    # the softmax bottleneck is the book chapter's theory 3 (Yang et al. 2017), not one of the lecture's claims
    import argparse

    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    lesson = commands.choices["lesson"]
    lecture = lesson.description.split("; and the book chapter's")[0]
    assert "softmax" not in lecture and "Breaking the Softmax Bottleneck" in lesson.description
    assert 'Yang et al. (2017, "Breaking the Softmax Bottleneck")' in " ".join(lessons.split())


def test_the_chapters_missing_items_carry_its_numbers():
    """The 4,000-step and 16,000-step seconds, the small-data runs' lowest validation and seconds, Problem 11
    and the fourth-root rule's width 8, each on the page beside the findings (and, given the chapter's text,
    each number found in it)."""
    from lrngpt.experiments.judges import CLAIMS

    assert list(chapter.SECONDS.values()) == [27, 23, 22, 22, 23, 23, 26, 30]
    assert list(chapter.LONG_SECONDS.values()) == [90, 88, 103]
    assert [v for v, _ in chapter.SMALL_BEST.values()] == [1.1007, 0.9813, 0.9790, 0.9981, 1.0322]
    assert chapter.SMALL_BEST[512][1] == 3750 and list(chapter.SMALL_SECONDS.values()) == [26, 27, 27, 30, 36]
    assert "27, 23, 22, 22, 23, 23, 26, 30 s at d = 4, 8, 16, 32, 64, 128, 256, 512" in CLAIMS[1].source
    assert "90, 88, 103 s at d = 16, 64, 256" in CLAIMS[2].source
    assert "1.1007, 0.9813, 0.9790, 0.9981, 1.0322 at d = 8, 64, 128, 256, 512" in CLAIMS[3].source
    assert quoted_in(CLAIMS[3].source, "problem11_train") and quoted_in(CLAIMS[3].source, "problem11_val")
    assert english_numbers(chapter.QUOTES["problem11_val"][1]) == [0.0025, 0.9806, 64, 128, 458_752]
    from lrngpt.api.theory import fourth_root_text

    assert fourth_root_text(4096, 8.0).endswith("8: " + chapter.quote("fourth_root") + ")")
    if os.environ.get("LRN_BOOK_CHAPTER"):
        text = Path(os.environ["LRN_BOOK_CHAPTER"]).read_text(encoding="utf-8")
        for d, s in {**chapter.SECONDS, **chapter.SMALL_SECONDS}.items():
            assert f"{s}초" in text, (d, s)
        assert all(f"{v:.4f}" in text for v, _ in chapter.SMALL_BEST.values()) and "스텝 3750" in text


def quoted_in(text: str, key: str) -> bool:
    return chapter.quote(key) in text
