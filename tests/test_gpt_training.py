"""Training the GPT end to end: exact resume with dropout, tied embeddings through a checkpoint,
and `lrn train` with the shipped GPT configs (NSMC corpus, dry run, refused combinations)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import torch

from lrngpt.cli.main import main
from lrngpt.runconfig.schema import PRESET_DIR, load_config
from lrngpt.store.checkpoint import load_checkpoint, save_checkpoint
from lrngpt.store.layout import INIT, LAST
from lrngpt.store.rundir import load_run
from lrngpt.training.trainer import train_run

CONFIGS = PRESET_DIR  # the seed project's configs ship as the presets cpu and nsmc


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """These runs are tiny: one intra-op thread is faster, and on a 2-core machine busy with other
    jobs, two threads waiting on each other make them tens of times slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def gpt_config(text_corpus):
    """configs/cpu.json shrunk to a seconds-long run on the session corpus (dropout 0.1 kept)."""

    def make(*overrides: str):
        return load_config(str(CONFIGS / "cpu.json"), [
            f"data.corpus={text_corpus}", "data.vocab_size=300", "model.n_embd=16", "model.n_head=2",
            "model.n_layer=2", "model.context_length=16", "model.dropout=0.1", "train.batch_size=4",
            "train.warmup_steps=2", "train.eval_every=3", "train.eval_tokens=500", "train.train_eval_tokens=500",
            "train.device=cpu", *overrides])

    return make


def _state(run_dir):
    return load_checkpoint(Path(run_dir) / LAST)


def _same_tensors(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_gpt_resume_with_dropout_is_bit_exact_with_a_straight_run(gpt_config, tmp_path):
    cfg = gpt_config("train.steps=8")
    assert cfg.model_type == "gpt" and cfg.model.dropout == 0.1
    train_run(cfg, tmp_path / "straight", progress=False)
    train_run(gpt_config("train.steps=8"), tmp_path / "split", stop_at=4, progress=False)
    assert _state(tmp_path / "split")["step"] == 4
    train_run(gpt_config("train.steps=8"), tmp_path / "split", resume=True, progress=False)
    straight, split = _state(tmp_path / "straight"), _state(tmp_path / "split")
    assert split["step"] == straight["step"] == 8
    assert _same_tensors(straight["model"], split["model"])
    for i, s in straight["optimizer"]["state"].items():
        assert torch.equal(s["exp_avg"], split["optimizer"]["state"][i]["exp_avg"])
        assert torch.equal(s["exp_avg_sq"], split["optimizer"]["state"][i]["exp_avg_sq"])


def test_gpt_resume_depends_on_the_saved_dropout_rng(gpt_config, tmp_path):
    # the control for the test above: with another dropout RNG state the second half differs,
    # so the bit-exact match there is the restored RNG at work, not dropout doing nothing
    train_run(gpt_config("train.steps=8"), tmp_path / "straight", progress=False)
    run = tmp_path / "split"
    train_run(gpt_config("train.steps=8"), run, stop_at=4, progress=False)
    ckpt = load_checkpoint(run / LAST)
    ckpt["rng"]["torch"] = torch.Generator().manual_seed(12345).get_state()
    save_checkpoint(ckpt, run / LAST)
    train_run(gpt_config("train.steps=8"), run, resume=True, progress=False)
    assert _state(run)["step"] == 8
    assert not _same_tensors(_state(tmp_path / "straight")["model"], _state(run)["model"])


def test_tied_gpt_trains_and_loads_with_one_shared_table(gpt_config, tmp_path):
    run_dir = tmp_path / "tied"
    train_run(gpt_config("train.steps=4", "model.tie_embeddings=true"), run_dir, progress=False)
    ckpt = _state(run_dir)
    saved = ckpt["model"]
    assert torch.equal(saved["embedding.token.weight"], saved["lm_head.weight"])
    assert not torch.equal(saved["embedding.token.weight"],
                           load_checkpoint(run_dir / INIT)["model"]["embedding.token.weight"])  # it trained
    run = load_run(run_dir)
    table, head = run.model.token_embedding.weight, run.model.lm_head.weight
    assert head.data_ptr() == table.data_ptr()
    assert torch.equal(table, saved["embedding.token.weight"])
    assert run.model.param_breakdown()["lm_head"] == 0
    assert sum(p is table for p in run.model.parameters()) == 1
    # one table after loading: a change through the head is seen by the lookup
    with torch.no_grad():
        head[5].fill_(3.0)
    assert torch.all(run.model.token_embedding(torch.tensor([5])) == 3.0)


# ---- lrn train with the shipped GPT configs --------------------------------------------------------

WORDS = ("영화 정말 너무 재밌다 최고 별로 지루하다 배우 연기 스토리 감동 추천 시간 아깝다 ㅋㅋ 좋아요 음악 감독 "
         "다시 보고 싶다 진짜 완전 결말 기대 이하 명작 쓰레기 웃기다 슬프다 장면 주인공").split()


def _write_nsmc(directory: Path, n_train: int = 300, n_test: int = 60) -> None:
    rng = random.Random(0)
    directory.mkdir(parents=True, exist_ok=True)
    rid = 1000
    for name, n in (("ratings_train.txt", n_train), ("ratings_test.txt", n_test)):
        lines = ["id\tdocument\tlabel"]
        for _ in range(n):
            rid += 1
            review = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 15)))
            lines.append(f"{rid}\t{review}\t{rng.randint(0, 1)}")
        (directory / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


TINY_NSMC = ["data.vocab_size=300", "model.n_embd=16", "model.n_layer=2", "model.context_length=32",
             "train.steps=5", "train.warmup_steps=2", "train.eval_tokens=2000", "train.train_eval_tokens=2000"]


def test_lrn_train_nsmc_config_on_an_nsmc_directory_finishes(tmp_path, capsys):
    data, out = tmp_path / "nsmc", tmp_path / "run"
    _write_nsmc(data)
    sets = [arg for s in TINY_NSMC for arg in ("--set", s)]
    code = main(["train", "--config", str(CONFIGS / "nsmc.json"), "--corpus", f"nsmc:{data}", *sets,
                 "--device", "cpu", "--out", str(out), "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    printed = json.loads(captured.out)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["step"] == printed["step"] == 5 and summary["finished"] is True
    assert summary["corpus"] == f"nsmc:{data}"
    assert summary["val_tokens"] > 0 and summary["val_bpb"] > 0
    cfg = json.loads((out / "config.json").read_text())
    # the overrides made it tiny; the rest is nsmc.json (post-norm, 4 heads, weight decay 0.1)
    assert (cfg["model"]["n_embd"], cfg["model"]["n_layer"], cfg["model"]["context_length"]) == (16, 2, 32)
    assert (cfg["model"]["norm_position"], cfg["model"]["n_head"], cfg["train"]["weight_decay"]) == ("post", 4, 0.1)
    assert cfg["train"]["seq_len"] == 32  # null in nsmc.json: the context length
    assert summary["params"]["position_embedding"] == 32 * 16


def test_dry_run_json_prints_the_nsmc_parameter_breakdown(capsys):
    assert main(["train", "--config", str(CONFIGS / "nsmc.json"), "--dry-run", "--json"]) == 0
    params = json.loads(capsys.readouterr().out)["params"]
    V, T, D, L = 3000, 128, 192, 4
    per_layer = 2 * 2 * D + 3 * D * D + D * D + 2 * 4 * D * D  # 2 LayerNorms, qkv, proj, FFN (r=4), no biases
    assert params == {
        "total": V * D + T * D + L * per_layer + 2 * D + V * D,
        "token_embedding": V * D,
        "position_embedding": T * D,
        "blocks": L * per_layer + 2 * D,
        "lm_head": V * D,
    }
    assert params["total"] == 2_949_504


def test_a_head_count_that_does_not_divide_n_embd_exits_2_naming_the_valid_counts(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["train", "--config", str(CONFIGS / "cpu.json"), "--set", "model.n_head=5", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "n_embd 48 is not divisible by n_head 5" in err
    assert "valid head counts for 48: 1, 2, 3, 4, 6, 8, 12, 16, 24, 48" in err
    assert not out.exists()  # refused before anything was written


def test_a_window_longer_than_the_context_exits_2(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["train", "--config", str(CONFIGS / "cpu.json"), "--set", "train.seq_len=64", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "train.seq_len 64 exceeds model.context_length 32" in err
    assert not out.exists()
