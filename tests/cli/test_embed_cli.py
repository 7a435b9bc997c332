"""`lrn embed`: neighbours, used axes, and category purity of a tiny stories run."""

from __future__ import annotations

import json

import pytest

from lrngpt.cli.main import main
from tests.cli_run import lrn_json
from tests.factory import copy


@pytest.fixture(scope="module")
def stories_run(trained):
    return trained("mlp-tiny", "data.vocab_size=1024", "model.n_embd=16", "train.steps=150", "train.batch_size=16",
                   "train.eval_every=150", corpus="stories:1MB")


def test_trained_table_scores_well_above_untrained_and_chance_on_category_purity(capsys, stories_run):
    r = lrn_json(capsys, "embed", "purity", str(stories_run))
    trained, untrained = r["trained"]["overall"], r["untrained"]["overall"]
    chance = r["trained"]["chance"]
    assert r["trained"]["n_words"] >= 40  # enough category words are single tokens at vocab 1024
    assert untrained == pytest.approx(chance, abs=0.08)  # random vectors: about chance
    assert trained > untrained + 0.15 and trained > chance + 0.15


def test_neighbors_of_names_are_names_far_more_often_than_chance(capsys, stories_run):
    from lrngpt.corpora.stories import CATEGORIES
    from lrngpt.tokenizer.bpe import Tokenizer

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


def test_axes_prints_the_untrained_and_a_random_table_beside_the_trained_one(capsys, stories_run):
    import torch

    from lrngpt.analysis.embeddings import RANDOM_SEED, load_table, used_axes

    r = lrn_json(capsys, "embed", "axes", str(stories_run))
    _, init = load_table(stories_run, "init")
    assert r["untrained_used_axes"] == used_axes(init, 0.9)
    assert RANDOM_SEED == r["random_seed"] == 0  # the seed the help text names
    random = torch.randn(1024, 16, generator=torch.Generator().manual_seed(0))
    assert r["random_used_axes"] == used_axes(random, 0.9)
    assert r["vocab"] == 1024
    assert main(["embed", "axes", str(stories_run)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[1:]] == ["trained", "untrained", "random"]
    figures = [line.split()[-1] for line in lines[1:]]
    assert figures == [f"{r['used_axes']}/16", f"{r['untrained_used_axes']}/16", f"{r['random_used_axes']}/16"]


def test_bad_embed_input_exits_2(capsys, stories_run, tmp_path):
    for argv, needle in [
        (["embed", "axes", str(stories_run), "--energy", "1.5"], "--energy"),
        (["embed", "neighbors", str(stories_run), "--token", ""], "empty"),
        (["embed", "neighbors", str(tmp_path / "nope"), "--token", " a"], "does not exist"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and needle in err[0]


# ---- any corpus: --categories, --checkpoint ------------------------------------------------

# At vocabulary 400 the BPE of the session's word-salad corpus makes every one of its words a token.
HAND_CATEGORIES = {"name": ["Lily", "Tom", "Mia", "Ben", "Luna"], "colour": ["red", "blue", "green"],
                   "animal": ["cat", "dog", "bird"], "place": ["park", "garden"]}


@pytest.fixture(scope="module")
def text_run(trained, text_corpus):
    """A tiny run on a plain-text corpus (no built-in categories), with periodic evaluations."""
    return trained("mlp-tiny", "data.vocab_size=400", "train.steps=6", "train.eval_every=3", corpus=text_corpus)


def set_table(path, table, step=None):
    """Overwrite the token embedding table (and the step) of an MLP checkpoint file."""
    from lrngpt.store.checkpoint import load_checkpoint, save_checkpoint

    ckpt = load_checkpoint(path)
    assert ckpt["model"]["wte.weight"].shape == table.shape
    ckpt["model"]["wte.weight"] = table
    if step is not None:
        ckpt["step"] = step
    save_checkpoint(ckpt, path)


def planted_table(tokenizer, shape, seed=0):
    """A random table in which the names and the colours each sit tightly around their own direction."""
    import torch

    g = torch.Generator().manual_seed(seed)
    table = torch.randn(*shape, generator=g)
    for axis, name in enumerate(["name", "colour"]):
        for w in HAND_CATEGORIES[name]:
            (i,) = tokenizer.encode(" " + w)
            table[i] = 0.1 * torch.randn(shape[1], generator=g)
            table[i, axis] += 5.0
    return table


def purity_by_hand(table, tokenizer, categories, k):
    """Category purity computed here from its definition, with numpy: per category, and overall."""
    import numpy as np

    words = [(name, tokenizer.encode(" " + w)[0]) for name, ws in categories.items() for w in ws]
    rows = table.double().numpy()[[i for _, i in words]]
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    cos = unit @ unit.T
    np.fill_diagonal(cos, -np.inf)
    per = {name: [] for name in categories}
    for a, (name, _) in enumerate(words):
        nearest = np.argsort(-cos[a])[:k]
        per[name].append(sum(words[b][0] == name for b in nearest) / k)
    every = [v for vs in per.values() for v in vs]
    return {name: sum(v) / len(v) for name, v in per.items()}, sum(every) / len(every)


@pytest.mark.parametrize("fmt", ["json", "tsv"])
def test_purity_with_a_categories_file_scores_a_planted_table_as_computed_by_hand(capsys, text_run, tmp_path, fmt):
    from lrngpt.store.layout import LAST
    from lrngpt.tokenizer.bpe import Tokenizer

    run = copy(text_run, tmp_path)
    tok = Tokenizer.load(run)
    assert all(len(tok.encode(" " + w)) == 1 for ws in HAND_CATEGORIES.values() for w in ws)
    table = planted_table(tok, (400, 16))
    set_table(run / LAST, table)
    cats = tmp_path / f"words.{fmt}"
    if fmt == "json":
        cats.write_text(json.dumps(HAND_CATEGORIES))
    else:
        cats.write_text("# category<TAB>word\n" + "".join(f"{n}\t{w}\n" for n, ws in HAND_CATEGORIES.items() for w in ws))
    r = lrn_json(capsys, "embed", "purity", str(run), "--categories", str(cats), "-k", "2")
    t = r["trained"]
    assert t["per_category"]["name"] == 1.0 and t["per_category"]["colour"] == 1.0  # each other's neighbours
    per, overall = purity_by_hand(table, tok, HAND_CATEGORIES, k=2)
    assert t["per_category"] == pytest.approx(per) and t["overall"] == pytest.approx(overall)
    assert t["chance"] == pytest.approx((5 * 4 + 3 * 2 + 3 * 2 + 2 * 1) / 12 / 13)
    assert r["untrained"]["n_words"] == 13 and r["categories"] == str(cats)
    assert r["split_words"] == [] and r["dropped"] == {}


def test_purity_lists_split_words_and_drops_thin_categories_with_a_note(capsys, text_run, tmp_path):
    cats = tmp_path / "words.json"
    cats.write_text(json.dumps({**HAND_CATEGORIES, "food": ["cake", "pie"], "people": ["friend", "Lilyxyzzy"]}))
    assert main(["embed", "purity", str(text_run), "--categories", str(cats)]) == 0
    out, err = capsys.readouterr()
    assert "note: dropped 2 categories" in err and "food (0)" in err and "people (1)" in err
    assert "split by the BPE, not scored (3): cake, pie, Lilyxyzzy" in out
    assert "food" not in out.split("chance level")[0] and "name" in out
    r = lrn_json(capsys, "embed", "purity", str(text_run), "--categories", str(cats))
    assert r["split_words"] == ["cake", "pie", "Lilyxyzzy"] and r["dropped"] == {"food": 0, "people": 1}
    assert set(r["trained"]["per_category"]) == set(HAND_CATEGORIES)


def test_purity_needs_categories_off_the_stories_corpus_and_two_of_them(capsys, text_run, tmp_path):
    assert main(["embed", "purity", str(text_run)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pass --categories FILE" in err[0] and "category<TAB>word" in err[0]
    one = tmp_path / "one.tsv"
    one.write_text("name\tLily\nname\tTom\nfood\tcake\n")
    assert main(["embed", "purity", str(text_run), "--categories", str(one)]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "only 1 category" in err and "raise data.vocab_size or give more words" in err
    for text, needle in [("{nope", "not valid JSON"), ('{"a": "Lily"}', "must be a list of words"),
                         ("name Lily\n", "line 1 has no tab"), ("", "names no category")]:
        bad = tmp_path / "bad.txt"
        bad.write_text(text)
        assert main(["embed", "purity", str(text_run), "--categories", str(bad)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and needle in err[0]
    assert main(["embed", "purity", str(text_run), "--categories", str(tmp_path / "missing.json")]) == 2
    assert "--categories" in (err := capsys.readouterr().err) and "no such file" in err


def test_checkpoint_best_reaches_every_embed_command_and_falls_back_to_last(capsys, text_run, tmp_path):
    from lrngpt.store.layout import BEST, LAST
    from lrngpt.tokenizer.bpe import Tokenizer

    run = copy(text_run, tmp_path)
    tok = Tokenizer.load(run)
    set_table(run / BEST, planted_table(tok, (400, 16)), step=3)  # the best weights: names cluster
    cats = tmp_path / "words.json"
    cats.write_text(json.dumps(HAND_CATEGORIES))
    best = ["--checkpoint", "best"]
    n = lrn_json(capsys, "embed", "neighbors", str(run), "--token", " Lily", "-k", "4", *best)
    assert n["step"] == 3 and n["checkpoint"] == "best"
    assert {x["token"] for x in n["results"][0]["neighbors"]} == {" Tom", " Mia", " Ben", " Luna"}
    assert lrn_json(capsys, "embed", "axes", str(run), *best)["step"] == 3
    p = lrn_json(capsys, "embed", "purity", str(run), "--categories", str(cats), "-k", "2", *best)
    assert p["step"] == 3 and p["trained"]["per_category"]["name"] == 1.0
    e = lrn_json(capsys, "embed", "export", str(run), "--out", str(tmp_path / "tsv"), "--format", "projector", *best)
    assert e["step"] == 3 and [t["name"].split()[1] for t in e["tensors"]] == ["best", "untrained"]
    x = lrn_json(capsys, "embed", "explore", str(run), "--out", str(tmp_path / "x.html"), *best)
    views = x["frames"][0]["views"]
    assert [(v["label"], v["step"]) for v in views] == [("best", 3), ("untrained", 0)]
    # last is the default; init is the untrained table; without ckpt_best.pt, best is the last weights
    assert lrn_json(capsys, "embed", "axes", str(run))["step"] == 6
    assert lrn_json(capsys, "embed", "neighbors", str(run), "--token", " Lily", "--checkpoint", "init")["step"] == 0
    (run / BEST).unlink()
    for argv in (["axes"], ["neighbors", "--token", " Lily"], ["purity", "--categories", str(cats)]):
        r = lrn_json(capsys, "embed", argv[0], str(run), *argv[1:], *best)
        assert r["step"] == 6, argv
    assert (run / LAST).exists()


def test_neighbours_of_lily_and_untrained_luna_set_the_chapters_cosine_beside_this_runs(capsys, stories_run):
    """The chapter: ' Lily' ~ ' Mia' 0.95 trained, ' Luna''s untrained neighbour ' pretending' 0.48; the
    run's own figures come from its own tables (pair_cosine on the checkpoint lrn embed read)."""
    from lrngpt.analysis.embeddings import load_table, pair_cosine
    from lrngpt.report.neighbours import neighbours_line

    run, trained = load_table(stories_run, "last")
    _, untrained = load_table(stories_run, "init")
    want = neighbours_line(" Lily", pair_cosine(run.tokenizer, trained, " Lily", " Mia"), untrained=False)
    assert main(["embed", "neighbors", str(stories_run), "--token", " Lily", "--token", " red", "-k", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == want and want.startswith("the chapter: ' Lily' ~ ' Mia' 0.95 (trained); this run: ")
    assert len(lines) == 3  # two queries, one chapter line: ' red' has no figure in the chapter
    r = lrn_json(capsys, "embed", "neighbors", str(stories_run), "--token", " Luna", "--untrained")
    assert r["chapter"] == [neighbours_line(" Luna", pair_cosine(run.tokenizer, untrained, " Luna", " pretending"),
                                            untrained=True)]
    assert r["chapter"][0].startswith("the chapter: ' Luna''s untrained neighbour ' pretending' 0.48; this run, "
                                      "untrained: ")
    assert "chapter" not in lrn_json(capsys, "embed", "neighbors", str(stories_run), "--token", " Luna")  # trained
