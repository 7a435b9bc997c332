"""`lrn embed`: neighbours, used axes, and category purity of a tiny stories run."""

from __future__ import annotations

import json

import pytest

from lrngpt.cli.main import main


@pytest.fixture(scope="module")
def stories_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("embed") / "run"
    code = main(["train", "--config", "mlp-tiny", "--set", "data.corpus=stories:1MB", "--set", "data.vocab_size=1024",
                 "--set", "model.n_embd=16", "--set", "train.steps=150", "--set", "train.batch_size=16",
                 "--set", "train.eval_every=150", "--out", str(run_dir)])
    assert code == 0
    return run_dir


def lrn_json(capsys, *argv):
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_trained_table_scores_well_above_untrained_and_chance_on_category_purity(capsys, stories_run):
    r = lrn_json(capsys, "embed", "purity", str(stories_run))
    trained, untrained = r["trained"]["overall"], r["untrained"]["overall"]
    chance = r["trained"]["chance"]
    assert r["trained"]["n_words"] >= 40  # enough category words are single tokens at vocab 1024
    assert untrained == pytest.approx(chance, abs=0.08)  # random vectors: about chance
    assert trained > untrained + 0.15 and trained > chance + 0.15


def test_neighbors_of_names_are_names_far_more_often_than_chance(capsys, stories_run):
    from lrngpt.corpora.stories import CATEGORIES
    from lrngpt.tokenizer import Tokenizer

    tok = Tokenizer.load(stories_run)
    names = {" " + n for n in CATEGORIES["name"] if len(tok.encode(" " + n)) == 1}  # whole-token names
    assert len(names) >= 10
    hits = []
    for name in sorted(names):
        r = lrn_json(capsys, "embed", "neighbors", str(stories_run), "--token", name, "-k", "10")
        res = r["results"][0]
        assert [t["token"] for t in res["tokens"]] == [name]
        cos = [n["cosine"] for n in res["neighbors"]]
        assert len(cos) == 10 and cos == sorted(cos, reverse=True)
        hits.append(sum(n["token"] in names for n in res["neighbors"]) / 10)
    chance = (len(names) - 1) / (tok.vocab_size - 1)  # a random table's expected share
    assert sum(hits) / len(hits) > 5 * chance


def test_a_word_split_into_several_tokens_says_so(capsys, stories_run):
    r = lrn_json(capsys, "embed", "neighbors", str(stories_run), "--token", " Lilyxyzzy", "-k", "3")
    res = r["results"][0]
    assert len(res["tokens"]) > 1
    assert "".join(t["token"] for t in res["tokens"]) == " Lilyxyzzy"
    assert not {n["id"] for n in res["neighbors"]} & {t["id"] for t in res["tokens"]}


def test_untrained_neighbors_use_the_step_zero_table(capsys, stories_run):
    a = lrn_json(capsys, "embed", "neighbors", str(stories_run), "--token", " Lily", "--untrained")
    b = lrn_json(capsys, "embed", "neighbors", str(stories_run), "--token", " Lily")
    assert a["step"] == 0 and b["step"] == 150
    assert a["results"][0]["neighbors"] != b["results"][0]["neighbors"]


def test_used_axes_is_between_one_and_the_width(capsys, stories_run):
    r = lrn_json(capsys, "embed", "axes", str(stories_run))
    assert 1 <= r["used_axes"] <= 16 and r["n_embd"] == 16
    full = lrn_json(capsys, "embed", "axes", str(stories_run), "--energy", "1.0")
    assert full["used_axes"] == 16 >= r["used_axes"]


def test_bad_embed_input_exits_2(capsys, stories_run, tmp_path):
    for argv, needle in [
        (["embed", "axes", str(stories_run), "--energy", "1.5"], "--energy"),
        (["embed", "neighbors", str(stories_run), "--token", ""], "empty"),
        (["embed", "neighbors", str(tmp_path / "nope"), "--token", " a"], "does not exist"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and needle in err[0]


def test_purity_refuses_a_run_not_trained_on_stories(capsys, tmp_path, text_corpus):
    run = tmp_path / "r"
    assert main(["train", "--config", "mlp-tiny", "--corpus", text_corpus, "--set", "data.vocab_size=300",
                 "--set", "train.steps=2", "--out", str(run)]) == 0
    capsys.readouterr()
    assert main(["embed", "purity", str(run)]) == 2
    assert "stories" in capsys.readouterr().err
