"""Under-trained tokens (`lrn embed undertrained`, lrngpt.undertrained): exact read counts checked
against a brute-force count of the batches, a token planted once is found and a frequent one is not,
never-read rows move under tying and stay put without it, and Land & Bartolo's indicator ranks
planted untrained rows of a GPT-2 first."""

from __future__ import annotations

import json
import random
import shutil

import numpy as np
import pytest
import torch

import lrngpt
from lrngpt.analysis.glitch import (
    MAIN,
    UNUSED_UTF8_BYTES,
    candidates,
    indicators,
    reference_ids,
)
from lrngpt.analysis.rare_tokens import as_text, decay_factor, replay_reads, undertrained_tokens
from lrngpt.analysis.vocab import run_data
from lrngpt.cli.main import main
from lrngpt.data.sampler import BatchSampler
from lrngpt.errors import UserError
from lrngpt.report.runs import undertrained_html
from lrngpt.store.rundir import load_run
from tests.cli_run import lrn

WORDS = ("Lily Tom Mia Ben Luna saw a red blue green cat dog bird ball kite in the park garden "
         "was happy sad and said hello to her his friend big small ran jumped played with").split()
PLANTED = "@"  # one byte token, in the text exactly once


def quiet(_msg):
    pass


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    rng = random.Random(0)
    docs = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 60))) + "." for _ in range(200)]
    docs[3] += f" {PLANTED} the end."
    path = tmp_path_factory.mktemp("planted") / "planted.txt"
    path.write_text("\n<|endoftext|>\n".join(docs), encoding="utf-8")
    return f"text:{path}"


def _train(out, corpus, preset, *overrides):
    cfg = lrngpt.config(preset, **{"data.corpus": corpus, "data.vocab_size": 300, "train.device": "cpu",
                                   "train.eval_tokens": 300, "train.train_eval_tokens": 300},
                        set=list(overrides))
    lrngpt.train(cfg, out=out, progress=False)
    return out


@pytest.fixture(scope="module")
def whole_split(corpus, tmp_path_factory):
    """An MLP whose one step reads the whole training split once: one window of the split's length
    (the sampler's only start is 0), so every token's reads are its occurrences."""
    n = lrngpt.plan(lrngpt.config("mlp-tiny", **{"data.corpus": corpus, "data.vocab_size": 300}))["train_tokens"]
    return _train(tmp_path_factory.mktemp("whole") / "run", corpus, "mlp-tiny", "train.steps=1", "train.batch_size=1",
                  f"train.seq_len={n - 1}", "train.eval_every=1")


GPT = ("model.n_layer=1", "model.n_embd=16", "model.n_head=2", "model.context_length=16", "model.dropout=0",
       "train.batch_size=4", "train.steps=12", "train.warmup_steps=2", "train.eval_every=100",
       "train.weight_decay=0.1")


@pytest.fixture(scope="module")
def gpts(corpus, tmp_path_factory):
    d = tmp_path_factory.mktemp("gpts")
    return {tied: _train(d / ("tied" if tied else "untied"), corpus, "gpt-default", *GPT,
                         f"model.tie_embeddings={str(tied).lower()}") for tied in (True, False)}


def by_id(r: dict) -> dict[int, dict]:
    return {t["id"]: t for t in r["tokens"]}


# ---- read counts ----------------------------------------------------------------------------

def test_a_whole_split_step_reads_each_token_as_often_as_it_occurs(whole_split):
    run = load_run(whole_split)
    train = np.asarray(run_data(run, quiet).tokens("train"), dtype=np.int64)
    r = undertrained_tokens(whole_split, log=quiet)
    rows = r["vocab"]
    want_in = np.bincount(train[:-1], minlength=rows)
    want_in[run.tokenizer.eot_id] += run.config.model.block_size - 1  # the MLP's padding of its one window
    want_out = np.bincount(train[1:], minlength=rows)
    got = by_id(r)
    assert [got[i]["input_reads"] for i in range(rows)] == want_in.tolist()
    assert [got[i]["target_reads"] for i in range(rows)] == want_out.tolist()
    assert r["reads"]["targets_read"] == len(train) - 1 and r["reads"]["padding_reads"] == 3


def test_a_token_planted_once_is_under_trained_and_a_frequent_one_is_not(whole_split):
    r = undertrained_tokens(whole_split, log=quiet)
    tok = load_run(whole_split).tokenizer
    (planted,) = tok.encode(PLANTED)
    rows = by_id(r)
    assert rows[planted]["input_reads"] == 1 and rows[planted]["under_trained"]
    frequent = max(rows.values(), key=lambda t: t["input_reads"])
    assert frequent["input_reads"] > 1000 and not frequent["under_trained"]
    order = [t["id"] for t in r["tokens"]]  # fewest reads first: only never-read tokens come before it
    assert all(rows[i]["input_reads"] < 1 for i in order[: order.index(planted)])
    assert r["summary"]["under_trained"] == sum(t["input_reads"] < 16 for t in r["tokens"])  # d = 16
    # one step moved the planted row (read once), and not one never-read row (untied, no decay)
    assert rows[planted]["moved"] > 1e-4
    never = [t for t in r["tokens"] if t["input_reads"] == 0]
    assert never and all(t["moved"] == 0.0 for t in never) and r["summary"]["never_read_moved_rows"] == 0


def test_the_replay_counts_what_the_sampler_hands_the_trainer(gpts):
    run = load_run(gpts[True])
    tc = run.config.train
    train = run_data(run, quiet).tokens("train")
    sampler, x_count, y_count = BatchSampler(train, tc.batch_size, tc.seq_len, tc.seed), 0, 0
    for _ in range(run.step):  # what train_step receives, batch by batch
        x, y = sampler.next()
        x_count = x_count + np.bincount(x.flatten().numpy(), minlength=300)
        y_count = y_count + np.bincount(y.flatten().numpy(), minlength=300)
    inputs, targets = replay_reads(train, tc.batch_size, tc.seq_len, tc.seed, run.step, 300)
    assert inputs.tolist() == x_count.tolist() and targets.tolist() == y_count.tolist()


# ---- tying -----------------------------------------------------------------------------------

def test_never_read_rows_move_under_tying_and_stay_put_without_it(gpts):
    tied, untied = (undertrained_tokens(gpts[t], log=quiet) for t in (True, False))
    assert tied["tied"] and not untied["tied"]
    assert tied["summary"]["never_read"] == untied["summary"]["never_read"] > 100  # the same batches
    never_t = [t for t in tied["tokens"] if t["input_reads"] == 0]
    never_u = [t for t in untied["tokens"] if t["input_reads"] == 0]
    assert min(t["moved"] for t in never_t) > 1e-3  # every one moved, through the output head
    assert max(t["moved"] / t["norm"] for t in never_u) < 1e-6  # float32 rounding of the decay, nothing else
    assert tied["summary"]["never_read_moved_rows"] == len(never_t) and untied["summary"]["never_read_moved_rows"] == 0
    # weight decay did shrink the untied rows: the factor is what is taken out, not a tolerance
    delta = untied["decay_factor"]
    assert delta == pytest.approx(decay_factor(load_run(gpts[False]).config.train, 12)) and delta < 0.9999
    run, init = load_run(gpts[False]), load_run(gpts[False], "init")
    i = never_u[0]["id"]
    raw = (run.model.token_embedding.weight[i] - init.model.token_embedding.weight[i]).norm().item()
    assert raw > 100 * max(never_u[0]["moved"], 1e-9)
    # the untied head's rows of the same tokens move: the softmax pushes every logit
    assert min(t["out_moved"] for t in never_u) > 1e-3
    assert "(tied: the output path moves them)" in as_text(tied)
    assert "(untied: no gradient reaches them)" in as_text(untied)


# ---- Land & Bartolo's indicator -------------------------------------------------------------

REF = [*range(177, 188), 124, 125]
PLANTED_ROWS = [40, 90, 150, 210, 260]


def planted_unembedding(vocab: int = 300, ref=REF, planted=PLANTED_ROWS, h: int = 32, seed: int = 0) -> torch.Tensor:
    """Random rows with a strong shared direction (like a frequency component); the reference and the
    planted rows sit together (the never-trained cluster) at a typical norm, off that direction."""
    g = torch.Generator().manual_seed(seed)
    u = torch.randn(vocab, h, generator=g)
    p = torch.randn(h, generator=g)
    p /= p.norm()
    v = torch.randn(h, generator=g)
    v -= (v @ p) * p
    v *= u.norm(dim=1).mean() / v.norm()
    for i in [*ref, *planted]:
        u[i] = v + 0.3 * torch.randn(h, generator=g)
    return u + 6 * torch.randn(vocab, generator=g)[:, None] * p


def test_the_indicator_ranks_planted_untrained_rows_first_and_needs_its_first_component_removed():
    u = planted_unembedding()
    ind = indicators(u, REF)[MAIN]
    assert sorted(candidates(ind, REF, 1.0)[:5].tolist()) == PLANTED_ROWS
    m = u[REF].mean(0)  # the same cosine, first component kept: the shared direction hides two of them
    plain = (1 - (u @ m) / (u.norm(dim=1) * m.norm())).numpy()
    assert sorted(candidates(plain, REF, 1.0)[:5].tolist()) != PLANTED_ROWS
    # a norm (the untied models' indicator) does not find them either: their norms are typical
    assert sorted(candidates(u.norm(dim=1).numpy(), REF, 1.0)[:5].tolist()) != PLANTED_ROWS
    assert candidates(ind, REF).tolist() == candidates(ind, REF, 1.0)[:6].tolist()  # 2% of 287 -> 6


def test_removing_the_first_component_loses_a_drift_that_half_the_vocabulary_shares():
    """The paper's indicator assumes the unused tokens are few: when half the rows share one drift,
    that drift is the first component, and removing it leaves chance; the plain cosine still finds them."""
    g = torch.Generator().manual_seed(1)
    u = torch.randn(400, 16, generator=g)
    drift = torch.randn(16, generator=g)
    never = np.arange(400) % 2 == 0
    u[torch.from_numpy(never)] += 3 * drift / drift.norm()
    ref = list(range(0, 26, 2))
    share = {name: never[candidates(x, ref, 1.0)[:187]].mean() for name, x in indicators(u, ref).items()}
    assert share[MAIN] < 0.6 and share["cosine"] > 0.9  # chance is 187 / 387 = 0.48


def test_the_reference_tokens_are_the_bytes_no_utf8_text_holds(whole_split):
    tok = load_run(whole_split).tokenizer
    ref = reference_ids(tok, tok.vocab_size + 2)
    assert sorted(tok.decode_bytes([i])[0] for i in ref[:-2]) == sorted(UNUSED_UTF8_BYTES) and len(ref) == 15
    assert ref[-2:] == [tok.vocab_size, tok.vocab_size + 1]  # rows past the vocabulary: never produced
    with pytest.raises(UserError, match="no reference tokens"):
        indicators(torch.randn(50, 4), [])
    with pytest.raises(UserError, match="more tokens than dimensions"):
        indicators(torch.randn(4, 50), [0])


def test_a_gpt2_with_planted_untrained_rows_lists_them_first(tmp_path, whole_split):
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("safetensors")
    tok = load_run(whole_split).tokenizer
    ref = reference_ids(tok, tok.vocab_size)
    planted = [tok.vocab_size - k for k in (3, 10, 20, 30, 40)]  # merged tokens, none a reference byte
    assert not set(planted) & set(ref)
    u = planted_unembedding(tok.vocab_size, ref, planted)
    cfg = transformers.GPT2Config(vocab_size=tok.vocab_size, n_positions=32, n_embd=32, n_layer=1, n_head=2)
    model = transformers.GPT2LMHeadModel(cfg)
    with torch.no_grad():
        model.transformer.wte.weight.copy_(u)  # tied: the unembedding too
    hf = tmp_path / "gpt2-planted"
    model.save_pretrained(hf)
    tok.save(hf / "tokenizer.json")
    direct = lrngpt.undertrained(hf, top=5)
    assert direct["source"] == "huggingface" and direct["tied"] and direct["reads"] is None
    assert sorted(t["id"] for t in direct["tokens"]) == sorted(planted) and all(t["candidate"] for t in direct["tokens"])
    assert main(["-q", "import-gpt2", str(hf), "--out", str(tmp_path / "imported")]) == 0
    imported = lrngpt.undertrained(tmp_path / "imported", top=5)
    assert imported["source"] == "imported" and [t["id"] for t in imported["tokens"]] == [t["id"] for t in direct["tokens"]]
    assert "glitch-token candidates" in as_text(imported)
    assert "candidates, the lowest 2%" in undertrained_html(tmp_path / "imported")


def test_on_a_trained_run_the_indicator_is_graded_against_the_counts(gpts):
    for tied in (True, False):
        r = undertrained_tokens(gpts[tied], log=quiet)
        c, graded = r["indicator"]["check"], r["indicator"]["graded"]
        assert c["k"] == r["summary"]["never_read"] - 13  # the 13 reference bytes are never read
        assert 0 <= c["never_read"] <= c["under_trained"] <= c["k"] and 0 < c["chance"] < 1
        assert graded[MAIN] == c["never_read"]
        assert set(graded) == {MAIN, "cosine", "centred_cosine", "l2_distance"} | (set() if tied else {"input_norm"})


# ---- the command, the API, the report ------------------------------------------------------

def test_the_command_prints_the_first_tokens_and_json_equals_the_api(whole_split, capsys):
    code, out, err = lrn(capsys, "embed", "undertrained", whole_split, "--top", "3", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r == json.loads(json.dumps(lrngpt.undertrained(whole_split, top=3)))
    assert len(r["tokens"]) == 3 and r["rule"]["min_reads"] == 16
    code, out, _ = lrn(capsys, "embed", "undertrained", whole_split, "--top", "2")
    lines = out.splitlines()
    assert code == 0 and "never," in lines[1] and "under-trained (input reads < d = 16" in lines[1]
    assert len([ln for ln in lines if ln.rstrip().endswith("under-trained")]) == 2
    assert lrngpt.load(whole_split).undertrained(top=2)["tokens"] == r["tokens"][:2]


def test_the_api_refuses_what_it_cannot_read(whole_split):
    with pytest.raises(UserError, match="top must be"):
        lrngpt.undertrained(whole_split, top=0)
    with pytest.raises(UserError, match="checkpoint must be"):
        lrngpt.undertrained(whole_split, checkpoint="final")
    with pytest.raises(UserError, match="run_or_path must be a Run or a Sweep or a path"):
        lrngpt.undertrained(42)


def test_the_report_section_names_the_counts_and_the_first_tokens(gpts, tmp_path):
    html = undertrained_html(gpts[True])
    r = undertrained_tokens(gpts[True], log=quiet)
    assert f"<b>{r['summary']['never_read']:,}</b> of 300 tokens never" in html
    assert "under-trained but not untouched" in html and html.count("<tr>") == 1 + 5
    shutil.copytree(gpts[True], tmp_path / "r")
    (tmp_path / "r" / "ckpt_last.pt").unlink()
    (tmp_path / "r" / "ckpt_init.pt").unlink()
    assert "no checkpoint yet" in undertrained_html(tmp_path / "r")


# ---- what is a run: lrngpt.core.ownership.is_run ----------------------------------------------------

def test_a_config_json_alone_is_no_run_and_a_copied_run_is_read(whole_split, tmp_path):
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(whole_split / "config.json", alone)  # lrn's model_type (mlp): no Hugging Face directory either
    with pytest.raises(UserError, match=r"holds no lrn run \(no \.lrn-output naming it a run\)"):
        undertrained_tokens(alone, log=quiet)
    old = shutil.copytree(whole_split, tmp_path / "old", ignore=shutil.ignore_patterns(".lrn-lock"))
    assert undertrained_tokens(old, log=quiet)["tokens"] == undertrained_tokens(whole_split, log=quiet)["tokens"]
