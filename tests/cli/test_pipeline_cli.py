"""The pipeline commands end to end through `lrn ...`: JSON shapes, exit codes, one-line errors."""

from __future__ import annotations

import json
import math

import pytest

from tests.cli_run import lrn, lrn_json


def assert_one_line_error(code, err, needle):
    assert code == 2
    lines = [line for line in err.strip().splitlines() if line]
    assert len(lines) == 1 and needle in lines[0], err
    assert "Traceback" not in err


def test_data_stories_writes_a_deterministic_file(capsys, tmp_path):
    a = lrn_json(capsys, "data", "stories", "--size", "50KB", "--seed", "3", "--out", str(tmp_path / "a.txt"))
    lrn_json(capsys, "data", "stories", "--size", "50KB", "--seed", "3", "--out", str(tmp_path / "b.txt"))
    assert (tmp_path / "a.txt").read_bytes() == (tmp_path / "b.txt").read_bytes()
    assert a["bytes"] >= 50_000 and a["documents"] > 10
    text = (tmp_path / "a.txt").read_text()
    assert text.count("<|endoftext|>") == a["documents"] - 1


def test_data_stories_never_overwrites_a_users_file_and_replaces_its_own_only_with_force(capsys, tmp_path):
    f = tmp_path / "s.txt"
    f.write_text("keep me")
    for force in ([], ["--force"]):
        code, _, err = lrn(capsys, "data", "stories", "--size", "10KB", "--out", str(f), *force)
        assert_one_line_error(code, err, "lrn did not write it")
    assert f.read_text() == "keep me"
    ours = tmp_path / "ours.txt"
    assert lrn(capsys, "data", "stories", "--size", "10KB", "--out", str(ours))[0] == 0
    code, _, err = lrn(capsys, "data", "stories", "--size", "12KB", "--out", str(ours))
    assert_one_line_error(code, err, "holds an earlier stories corpus that lrn wrote; add --force")
    assert lrn(capsys, "data", "stories", "--size", "12KB", "--out", str(ours), "--force")[0] == 0
    assert len(ours.read_bytes()) > 12_000
    ours.write_text(ours.read_text() + "my edit")  # changed since lrn wrote it: the user's now
    code, _, err = lrn(capsys, "data", "stories", "--size", "10KB", "--out", str(ours), "--force")
    assert_one_line_error(code, err, "was changed since lrn wrote it, so it is yours now")
    assert ours.read_text().endswith("my edit")


def test_prepare_twice_hits_the_cache(capsys, tmp_path, text_corpus):
    out = tmp_path / "prep"
    first = lrn_json(capsys, "data", "prepare", "--corpus", text_corpus, "--vocab-size", "300", "--out", str(out))
    mtime = (out / "train.bin").stat().st_mtime_ns
    code, out2, err = lrn(capsys, "data", "prepare", "--corpus", text_corpus, "--vocab-size", "300",
                          "--out", str(out), "--json")
    assert code == 0 and "cached" in err
    assert json.loads(out2) == first
    assert (out / "train.bin").stat().st_mtime_ns == mtime
    n = first["splits"]["train"]["tokens"]
    assert (out / "train.bin").stat().st_size == 2 * n  # uint16


def test_prepare_refuses_a_directory_holding_other_data(capsys, tmp_path, text_corpus):
    out = tmp_path / "prep"
    lrn_json(capsys, "data", "prepare", "--corpus", text_corpus, "--vocab-size", "300", "--out", str(out))
    code, _, err = lrn(capsys, "data", "prepare", "--corpus", "stories:20KB", "--vocab-size", "300",
                       "--out", str(out))
    assert_one_line_error(code, err, "already holds data")


@pytest.mark.parametrize("argv,needle", [
    (["data", "prepare", "--corpus", "bogus:x"], "unknown corpus kind"),
    (["data", "prepare", "--corpus", "text:/no/such/file.txt"], "no such file"),
    (["data", "prepare", "--corpus", "stories:10KB", "--vocab-size", "100"], "below 257"),
    (["data", "prepare", "--corpus", "stories:10KB", "--vocab-size", str(2**20 + 1)], "above lrn's limit of 1,048,576"),
    (["tokenizer", "encode", "--tokenizer", "/no/such", "--text", "x"], "no tokenizer"),
    (["train", "--config", "mlp-tiny", "--set", "train.steps=0", "--out", "x"], "train.steps must be at least 1"),
    (["train", "--config", "mlp-tiny", "--set", "train.batch_size=-3", "--out", "x"], "batch_size"),
    (["train", "--config", "mlp-tiny", "--set", "train.lr=0", "--out", "x"], "train.lr must be positive"),
    (["train", "--config", "mlp-tiny", "--set", "model.block_size=0", "--out", "x"], "block_size"),
    (["train", "--config", "mlp-tiny", "--set", "train.steps=ten", "--out", "x"], "must be an integer"),
    (["train", "--config", "mlp-tiny", "--set", "model.n_embdd=3", "--out", "x"], "unknown config key model.n_embdd"),
    (["train", "--config", "no-such-preset", "--out", "x"], "unknown preset"),
    (["train", "--config", "mlp-tiny", "--out", "x", "--resume"], "does not exist"),
    (["eval", "/no/such/run"], "does not exist"),
])
def test_bad_input_exits_2_with_one_line(capsys, tmp_path, monkeypatch, argv, needle):
    monkeypatch.chdir(tmp_path)
    code, _, err = lrn(capsys, *argv)
    assert_one_line_error(code, err, needle)


def test_empty_corpus_is_a_user_error(capsys, tmp_path):
    f = tmp_path / "empty.txt"
    f.write_text("   \n")
    code, _, err = lrn(capsys, "data", "prepare", "--corpus", f"text:{f}", "--vocab-size", "300",
                       "--out", str(tmp_path / "p"))
    assert code == 2 and "empty" in err


def test_corpus_too_small_for_one_window_is_a_user_error(capsys, tmp_path):
    f = tmp_path / "tiny.txt"
    f.write_text("a b c d e f g")
    code, _, err = lrn(capsys, "train", "--config", "mlp-tiny", "--corpus", f"text:{f}", "--set",
                       "data.vocab_size=300", "--out", str(tmp_path / "r"))
    # progress lines of the data step come first; the error itself is one line, the last
    assert code == 2 and "Traceback" not in err
    assert "too few for one window" in err.strip().splitlines()[-1]
    assert sum("error" in line for line in err.splitlines()) == 1


def test_tokenizer_train_encode_decode_round_trip(capsys, tmp_path, text_corpus):
    info = lrn_json(capsys, "tokenizer", "train", "--corpus", text_corpus, "--vocab-size", "300",
                    "--out", str(tmp_path / "tok"))
    assert info["vocab_size"] == 300
    text = "Lily saw a red cat 🙂 안녕"
    ids = lrn_json(capsys, "tokenizer", "encode", "--tokenizer", str(tmp_path / "tok"), "--text", text)["ids"]
    back = lrn_json(capsys, "tokenizer", "decode", "--tokenizer", str(tmp_path / "tok"),
                    "--ids", ",".join(map(str, ids)))["text"]
    assert back == text
    code, _, err = lrn(capsys, "tokenizer", "decode", "--tokenizer", str(tmp_path / "tok"), "--ids", "1,x")
    assert_one_line_error(code, err, "comma-separated integers")


def test_dry_run_prints_the_chapter_breakdown_without_training(capsys, tmp_path):
    r = lrn_json(capsys, "train", "--config", "mlp-chapter", "--set", "model.n_embd=512", "--dry-run")
    assert r["params"] == {"total": 5_771_776, "embedding": 2_097_152, "hidden": 1_573_376, "output": 2_101_248}
    assert not (tmp_path / "runs").exists()


@pytest.fixture(scope="module")
def trained_run(trained, text_corpus):
    return trained("mlp-tiny", "data.vocab_size=300", "train.steps=40", corpus=text_corpus)


def test_eval_json_has_the_contract_keys_and_matches_the_summary(capsys, trained_run):
    r = lrn_json(capsys, "eval", str(trained_run))
    assert {"step", "val_bpb", "val_loss", "val_tokens", "val_bytes", "train_bpb", "gap"} <= r.keys()
    summary = json.loads((trained_run / "summary.json").read_text())
    assert r["val_bpb"] == pytest.approx(summary["val_bpb"], rel=1e-9)
    assert r["gap"] == pytest.approx(r["val_bpb"] - r["train_bpb"])
    capped = lrn_json(capsys, "eval", str(trained_run), "--split", "val", "--max-tokens", "500")
    assert capped["val_tokens"] < 500 < r["val_tokens"]


def test_untrained_bpb_is_close_to_log2_vocab_over_bytes_per_token(capsys, trained_run):
    r = lrn_json(capsys, "eval", str(trained_run), "--checkpoint", "init", "--split", "val")
    expected = math.log2(300) / (r["val_bytes"] / r["val_tokens"])
    assert r["val_bpb"] == pytest.approx(expected, rel=0.02)


def test_sample_same_seed_same_text_and_bad_values_rejected(capsys, trained_run):
    a = lrn_json(capsys, "sample", str(trained_run), "--prompt", "Lily saw", "--seed", "5", "--max-new-tokens", "15")
    b = lrn_json(capsys, "sample", str(trained_run), "--prompt", "Lily saw", "--seed", "5", "--max-new-tokens", "15")
    c = lrn_json(capsys, "sample", str(trained_run), "--prompt", "Lily saw", "--seed", "6", "--max-new-tokens", "15")
    assert a == b and a != c
    assert a["samples"][0]["text"].startswith("Lily saw")
    for argv, needle in [
        (["--prompt", ""], "prompt is empty"),
        (["--prompt", "x", "--temperature=-1"], "--temperature must be 0 (greedy"),
        (["--prompt", "x", "--temperature", "nan"], "--temperature"),
        (["--prompt", "x", "--top-k", "0"], "--top-k"),
        (["--prompt", "x", "--top-p", "1.5"], "--top-p"),
        (["--prompt", "x", "--top-p", "0"], "--top-p"),
        (["--prompt", "x", "--max-new-tokens", "-1"], "--max-new-tokens"),
    ]:
        code, _, err = lrn(capsys, "sample", str(trained_run), *argv)
        assert_one_line_error(code, err, needle)


def test_eval_json_reports_passes_and_the_best_periodic_evaluation(capsys, trained_run):
    from lrngpt.store.rundir import RunDir

    r = lrn_json(capsys, "eval", str(trained_run))
    summary = json.loads((trained_run / "summary.json").read_text())
    assert r["passes"] == pytest.approx(40 * 8 * 64 / summary["train_split_tokens"]) == summary["passes"]
    periodic = [(m["val_bpb"], m["step"]) for m in RunDir(trained_run).metrics()
                if "val_bpb" in m and not m.get("final") and m["step"] > 0]
    assert len(periodic) == 4  # mlp-tiny evaluates every 10 steps
    assert (r["best_val_bpb"], r["best_step"]) == min(periodic) == (summary["best_val_bpb"], summary["best_step"])
    best = lrn_json(capsys, "eval", str(trained_run), "--checkpoint", "best", "--split", "val")
    assert best["step"] == r["best_step"] and best["checkpoint"] == "best"
    code, out, _ = lrn(capsys, "eval", str(trained_run))
    assert code == 0 and f"best periodic val bpb {r['best_val_bpb']:.4f} at step {r['best_step']}" in out
    assert f"{r['passes']:.2f} passes over the training text" in out


def test_sample_json_records_its_settings_checkpoint_and_step(capsys, trained_run):
    r = lrn_json(capsys, "sample", str(trained_run), "--prompt", "Lily saw", "--seed", "3", "--max-new-tokens", "7",
                 "--temperature", "0.8", "--top-k", "20", "--top-p", "0.9", "--num-samples", "2", "--no-stop")
    assert r["settings"] == {"max_new_tokens": 7, "temperature": 0.8, "top_k": 20, "top_p": 0.9, "seed": 3,
                             "stop_at_eot": False, "num_samples": 2, "use_cache": True}
    assert (r["checkpoint"], r["step"], r["run_dir"]) == ("last", 40, str(trained_run))
    assert len(r["samples"]) == 2
    init = lrn_json(capsys, "sample", str(trained_run), "--prompt", "Lily", "--checkpoint", "init", "--no-cache")
    assert (init["checkpoint"], init["step"], init["settings"]["use_cache"]) == ("init", 0, False)
    assert init["settings"]["seed"] == 0 and init["settings"]["top_k"] is None


def test_data_prepare_says_which_documents_or_which_part_became_validation(capsys, tmp_path, text_corpus):
    from lrngpt.corpora.registry import load_corpus
    from lrngpt.data.prepared import split_documents
    from lrngpt.runconfig.schema import DataConfig

    r = lrn_json(capsys, "data", "prepare", "--corpus", text_corpus, "--vocab-size", "300")
    corpus = load_corpus(text_corpus)
    docs = list(corpus.train_docs())
    val = list(split_documents(corpus, DataConfig(corpus=text_corpus, vocab_size=300), "val"))
    assert r["validation"]["by"] == "documents"
    assert [docs[i] for i in r["validation"]["documents"]] == val  # the very documents drawn into val
    code, out, _ = lrn(capsys, "data", "prepare", "--corpus", text_corpus, "--vocab-size", "300")
    shown = ", ".join(str(i) for i in r["validation"]["documents"][:8])
    assert f"validation: {len(val)} of 300 documents drawn with data.split_seed 0 (documents {shown}, ..." in out

    book = tmp_path / "book.txt"
    book.write_text("In the beginning the word was said. " * 2000)
    r = lrn_json(capsys, "data", "prepare", "--corpus", f"text:{book}", "--vocab-size", "300")
    train_bytes = r["splits"]["train"]["bytes"]
    total = train_bytes + r["splits"]["val"]["bytes"]
    assert r["validation"] == {"by": "tail", "from_byte": train_bytes, "bytes": total}
    assert 0.9 * total < train_bytes < total
    code, out, _ = lrn(capsys, "data", "prepare", "--corpus", f"text:{book}", "--vocab-size", "300")
    assert f"validation: the last 5% of the text, from byte {train_bytes:,} of {total:,}" in out
    assert "--set data.val_split=chunks" in out
    r = lrn_json(capsys, "data", "prepare", "--corpus", f"text:{book}", "--vocab-size", "300",
                 "--val-split", "chunks")
    assert r["validation"]["by"] == "chunks" and len(r["validation"]["chunks"]) >= 10
