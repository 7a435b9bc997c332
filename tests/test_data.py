"""Token arrays: deterministic split, train_tokens prefix, memory-mapped cache, batches."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lrngpt.corpora.registry import load_corpus
from lrngpt.data.prepared import prepare, split_documents
from lrngpt.data.sampler import BatchSampler
from lrngpt.errors import UserError
from lrngpt.runconfig.schema import DataConfig


def test_split_by_document_is_deterministic_and_follows_the_seed(text_corpus):
    corpus = load_corpus(text_corpus)
    cfg = DataConfig(corpus=text_corpus, vocab_size=300, val_fraction=0.1, split_seed=0)
    val_a = list(split_documents(corpus, cfg, "val"))
    val_b = list(split_documents(corpus, cfg, "val"))
    train = list(split_documents(corpus, cfg, "train"))
    assert val_a == val_b and 10 < len(val_a) < 60  # about 10% of 300 documents
    assert len(val_a) + len(train) == 300 and not set(val_a) & set(train)
    other = list(split_documents(corpus, DataConfig(corpus=text_corpus, vocab_size=300, val_fraction=0.1,
                                                    split_seed=1), "val"))
    assert other != val_a


def test_prepared_arrays_are_memory_mapped_and_hold_eot_before_every_document(text_corpus, tmp_path):
    data = prepare(DataConfig(corpus=text_corpus, vocab_size=300), tmp_path / "p", log=lambda m: None)
    train = data.tokens("train")
    assert isinstance(train, np.memmap) and train.dtype == np.uint16
    eot = data.tokenizer.eot_id
    assert train[0] == eot
    assert int((train == eot).sum()) == data.meta["splits"]["train"]["documents"]
    assert int(data.tokenizer.token_bytes[np.asarray(train)].sum()) == data.meta["splits"]["train"]["bytes"]


def test_train_tokens_takes_a_prefix_of_the_training_split(text_corpus, tmp_path):
    full = prepare(DataConfig(corpus=text_corpus, vocab_size=300), tmp_path / "p", log=lambda m: None)
    cut = prepare(DataConfig(corpus=text_corpus, vocab_size=300, train_tokens=1000), tmp_path / "p",
                  log=lambda m: None)
    assert len(cut.tokens("train")) == 1000
    assert np.array_equal(cut.tokens("train"), full.tokens("train")[:1000])
    assert len(cut.tokens("val")) == len(full.tokens("val"))  # validation is never cut


def test_a_single_document_corpus_is_split_by_tokens(tmp_path):
    f = tmp_path / "one.txt"
    f.write_text("Lily saw a red cat in the park. " * 300)
    data = prepare(DataConfig(corpus=f"text:{f}", vocab_size=300), tmp_path / "p", log=lambda m: None)
    assert data.meta["split_by"] == "tokens"
    n_train, n_val = len(data.tokens("train")), len(data.tokens("val"))
    assert n_val > 0 and n_val == pytest.approx(0.05 * (n_train + n_val), abs=2)


def test_batch_sampler_is_seeded_and_restores_its_state():
    tokens = np.arange(1000, dtype=np.uint16)
    a, b = BatchSampler(tokens, 4, 16, seed=3), BatchSampler(tokens, 4, 16, seed=3)
    x1, y1 = a.next()
    assert torch.equal(x1, b.next()[0])
    assert torch.equal(y1[:, :-1], x1[:, 1:])  # targets are the next tokens
    state = a.state()
    after = a.next()[0]
    a.set_state(state)
    assert torch.equal(a.next()[0], after)


def test_ranks_take_disjoint_slices_of_the_same_global_batch():
    tokens = np.arange(5000, dtype=np.uint16)
    whole = BatchSampler(tokens, 8, 16, seed=1).next()[0]
    parts = [BatchSampler(tokens, 8, 16, seed=1, rank=r, world_size=2).next()[0] for r in (0, 1)]
    assert torch.equal(torch.cat(parts), whole)
    with pytest.raises(UserError, match="not divisible"):
        BatchSampler(tokens, 7, 16, seed=1, world_size=2)


def numbered_book(tmp_path, lines: int = 3000):
    f = tmp_path / "book.txt"  # one document whose lines are all different: where each comes from is known
    f.write_text("".join(f"verse {i:05d} and the word was said.\n" for i in range(lines)))
    return f


def verses(text: str) -> set[str]:
    import re

    return set(re.findall(r"verse (\d{5}) and the word was said\.", text))


def test_val_split_chunks_draws_validation_from_all_over_a_one_document_text(tmp_path):
    f = numbered_book(tmp_path)
    cfg = DataConfig(corpus=f"text:{f}", vocab_size=300, val_split="chunks", val_fraction=0.1)
    data = prepare(cfg, tmp_path / "a", log=lambda m: None)
    m = data.meta
    assert m["split_by"] == "chunks" and m["val_split"] == "chunks"
    chunks = m["val_chunks"]
    n = m["splits"]["train"]["tokens"] + m["splits"]["val"]["tokens"]
    assert len(chunks) >= 10  # several places in the text
    starts = [c["tokens"][0] for c in chunks]
    assert min(starts) < n / 3 and max(starts) > 2 * n / 3  # from the beginning to the end, not the tail
    assert sum(c["tokens"][1] - c["tokens"][0] for c in chunks) == pytest.approx(0.1 * n, rel=0.15)
    tok = data.tokenizer
    val_text, train_text = tok.decode(data.tokens("val")), tok.decode(data.tokens("train"))
    val_v, train_v = verses(val_text), verses(train_text)
    assert len(val_v) > 100 and not val_v & train_v  # no whole verse in both splits
    assert len(val_v | train_v) >= 3000 - 2 * len(chunks)  # only verses cut at a seam are lost
    # deterministic for a seed, another seed draws other chunks; the default split is untouched
    again = prepare(cfg, tmp_path / "b", log=lambda m: None)
    assert np.array_equal(again.tokens("val"), data.tokens("val")) and again.meta["val_chunks"] == chunks
    other = prepare(DataConfig(corpus=f"text:{f}", vocab_size=300, val_split="chunks", val_fraction=0.1,
                               split_seed=1), tmp_path / "c", log=lambda m: None)
    assert other.meta["val_chunks"] != chunks
    tail = prepare(DataConfig(corpus=f"text:{f}", vocab_size=300, val_fraction=0.1), tmp_path / "d",
                   log=lambda m: None)
    assert tail.meta["split_by"] == "tokens" and "val_split" not in tail.meta


def test_val_split_enters_the_cache_key_only_when_it_is_not_the_default(tmp_path):
    from lrngpt.data.prepared import data_key

    corpus = load_corpus(f"text:{numbered_book(tmp_path, 50)}")
    keys = {s: data_key(corpus, DataConfig(corpus=corpus.spec, vocab_size=300, val_split=s))
            for s in ("documents", "chunks")}
    assert keys["documents"] != keys["chunks"]
    # the default's key is the one data prepared before data.val_split existed had: caches stay valid
    import lrngpt.data.prepared as d

    old = d._hash(corpus.fingerprint, 300, 0.05, 0, 100_000_000)
    assert keys["documents"] == old


def test_val_split_is_checked_in_the_config_and_refused_for_a_corpus_with_its_own_split(tmp_path):
    from lrngpt.runconfig.schema import load_config

    with pytest.raises(UserError, match="data.val_split must be one of documents, chunks"):
        load_config("mlp-tiny", ["data.val_split=pieces"])
    train = tmp_path / "ratings_train.txt"
    test = tmp_path / "ratings_test.txt"
    for p in (train, test):
        p.write_text("id\tdocument\tlabel\n" + "".join(f"{i}\tgood movie {i}\t1\n" for i in range(50)))
    with pytest.raises(UserError, match="own validation split.*leave data.val_split at documents"):
        prepare(DataConfig(corpus=f"nsmc:{tmp_path}", vocab_size=300, val_split="chunks"), tmp_path / "p",
                log=lambda m: None)
