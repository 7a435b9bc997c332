"""The lecture's embedding claims, run on real torch modules."""

from __future__ import annotations

import json

import pytest

from lrngpt.analysis.lessons import lookup, lookup_grad, tying
from lrngpt.errors import UserError


def test_lookup_equals_one_hot_times_table_with_seed_shapes():
    r = lookup(batch=2, length=4, n_embd=256)
    assert r["equal"] is True
    assert r["max_abs_diff"] == 0.0
    assert r["shapes"] == {"ids": [2, 4], "token": [2, 4, 256], "one_hot": [2, 4, 300],
                           "position": [4, 256], "output": [2, 4, 256]}


def test_lookup_rejects_an_empty_batch():
    with pytest.raises(UserError, match=r"batch must be at least 1 \(got 0\)"):
        lookup(batch=0)


def test_repeated_ids_sum_their_gradients_as_in_seed_001():
    r = lookup_grad()
    assert r["lookup"] == [[0.5, 0.5], [1.0, 0.0], [0.5, 0.5]]
    assert r["grad"] == [[3.0, 4.0], [0.0, 0.0], [6.0, 8.0]]
    assert r["hand_grad"] == r["grad"]
    assert r["match"] is True


def test_unused_rows_move_only_under_tying_decay_or_momentum():
    r = tying(vocab=16, n_embd=8, used=6, seed=0)
    by = {s["setting"]: s for s in r["settings"]}
    unused = 16 - len(r["looked_up_rows"])
    assert unused > 0
    assert all(s["unused_rows"] == unused for s in r["settings"])
    assert by["sgd"]["unused_changed"] == 0
    assert by["adamw_no_decay"]["unused_changed"] == 0  # control: Adam's update of a zero grad is zero
    assert by["tied"]["unused_changed"] == unused
    assert by["adamw_decay"]["unused_changed"] == unused
    assert by["sgd_momentum"]["unused_changed"] == unused
    assert all(s["used_changed"] == s["used_rows"] for s in r["settings"])  # looked-up rows always move


@pytest.mark.parametrize("kwargs", [dict(used=16), dict(used=0), dict(vocab=1)])
def test_tying_needs_some_unused_rows(kwargs):
    with pytest.raises(UserError):
        tying(**kwargs)


# ---- on trained runs: the softmax bottleneck and renumbering ----------------------------------

@pytest.fixture(scope="module")
def runs(trained, text_corpus):
    """A tiny MLP (n_hidden 64) and a tiny GPT (d 16, tied head), trained a few steps on the session corpus."""
    common = ["data.vocab_size=300", "train.eval_every=20", "train.eval_tokens=500", "train.train_eval_tokens=500",
              "train.steps=100"]
    return {"mlp": trained("mlp-tiny", *common, corpus=text_corpus, name="mlp"),
            "gpt": trained("cpu", *common, "model.n_embd=16", "model.n_head=2", "model.n_layer=1",
                           "model.context_length=32", "model.tie_embeddings=true", "train.batch_size=4",
                           "train.warmup_steps=2", corpus=text_corpus, name="gpt")}


def test_log_probs_of_a_trained_mlp_have_rank_n_hidden_plus_two(runs):
    from lrngpt.analysis.lessons import softmax_bottleneck

    (m,) = softmax_bottleneck(runs["mlp"], log=lambda m: None)["models"]
    assert (m["model"], m["width"], m["output_bias"], m["vocab"]) == ("mlp", 64, True, 300)
    assert m["contexts"] == 256 and m["binding"]
    # h has 64 features; the output bias adds one direction and the log-softmax normaliser another
    assert (m["rank_h"], m["rank_logits"], m["rank_logprobs"], m["bound"]) == (64, 65, 66, 66)
    assert m["sv_past_bound"] < 1e-12 < 1e-9 < m["sv_at_bound"]


def test_log_probs_of_a_trained_gpt_have_rank_n_embd_plus_one(runs):
    from lrngpt.analysis.lessons import softmax_bottleneck

    (m,) = softmax_bottleneck(runs["gpt"], log=lambda m: None)["models"]
    assert (m["model"], m["width"], m["output_bias"]) == ("gpt", 16, False)
    assert (m["rank_h"], m["rank_logits"], m["rank_logprobs"], m["bound"]) == (16, 16, 17, 17)
    rnd = softmax_bottleneck(runs["gpt"], contexts=100, random_contexts=True)
    assert rnd["source"] == "random contexts" and rnd["models"][0]["contexts"] == 100
    assert rnd["models"][0]["rank_logprobs"] == 17


def test_without_a_run_random_models_reach_their_bounds():
    from lrngpt.analysis.lessons import softmax_bottleneck

    r = softmax_bottleneck()
    by = {m["model"]: m for m in r["models"]}
    assert (by["mlp"]["rank_logprobs"], by["mlp"]["bound"]) == (34, 34)  # n_hidden 32 + bias + normaliser
    assert (by["gpt"]["rank_logprobs"], by["gpt"]["bound"]) == (17, 17)  # n_embd 16 + normaliser
    assert all(m["holds"] and m["binding"] for m in r["models"])


@pytest.mark.parametrize("name", ["mlp", "gpt"])
def test_relabelling_ids_keeps_bpb_and_permuting_table_rows_alone_ruins_it(runs, name):
    from lrngpt.analysis.lessons import renumber

    r = renumber(runs[name], seed=1, max_tokens=3000, log=lambda m: None)
    assert r["rows"] == 300 and r["unit"] == "bits per byte"
    assert r["relabelled"] == pytest.approx(r["original"], abs=1e-5)
    assert r["table_rows_permuted"] > r["original"] + 0.5


def test_renumber_without_a_run_trains_a_toy_model_in_process():
    from lrngpt.analysis.lessons import renumber

    r = renumber(max_tokens=5000, log=lambda m: None)
    assert r["unit"] == "bits per token" and r["rows"] == 64
    assert r["original"] < 1.2  # the chain's entropy is 0.88 bits per token
    assert r["table_rows_permuted"] > 6  # worse than guessing uniformly among 64 (6 bits)
    assert abs(r["relabelled_difference"]) < 1e-6


def test_lesson_cli_prints_text_and_json(runs, capsys):
    from lrngpt.cli.main import main

    assert main(["lesson", "softmax-bottleneck", str(runs["mlp"]), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["models"][0]["rank_logprobs"] == 66
    assert main(["lesson", "softmax-bottleneck"]) == 0
    out = capsys.readouterr().out
    assert "mlp       32  yes      256    300     32     33        34    34  yes" in out
    assert main(["lesson", "renumber", str(runs["gpt"]), "--max-tokens", "2000"]) == 0
    out = capsys.readouterr().out
    assert "table rows permuted, ids not" in out and "ids relabelled (table, output, text)" in out
    assert main(["lesson", "softmax-bottleneck", str(runs["mlp"].parent / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err
