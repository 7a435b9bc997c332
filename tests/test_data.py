"""Token arrays: deterministic split, train_tokens prefix, memory-mapped cache, batches."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lrngpt.config import DataConfig
from lrngpt.corpora import load_corpus
from lrngpt.data import BatchSampler, prepare, split_documents
from lrngpt.errors import UserError


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
