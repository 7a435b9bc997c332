"""The byte-level BPE: exact round trips, tiktoken == tokenizers, token_bytes, one file."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lrngpt.corpora.base import EOT
from lrngpt.errors import UserError
from lrngpt.tokenizer.bpe import Tokenizer

TRAIN_TEXT = [
    "Once upon a time, Lily saw a red cat in the park. \"Hello!\" she said.",
    "Tom and Mia played with a blue ball. They were happy. 123 apples, 4.5 pears.",
    "옛날 옛적에 작은 고양이가 살았어요. 영화 정말 재밌다 ㅋㅋ 🙂🎉",
    "tabs\tand\nnewlines\r\n and   spaces, café naïve — “quotes” ‘single’",
] * 30

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer.train(TRAIN_TEXT, 400)


def test_vocabulary_has_requested_size_and_eot(tok):
    assert tok.vocab_size == 400
    assert tok.eot_id == 0
    assert tok.token_bytes[tok.eot_id] == 0


def test_token_bytes_are_utf8_lengths_of_each_token(tok):
    for i in range(tok.vocab_size):
        if i == tok.eot_id:
            continue
        assert tok.token_bytes[i] == len(tok.decode_bytes([i])) >= 1
    assert sorted(tok.token_bytes.tolist()).count(1) == 256  # every byte is one token


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=200))
def test_any_unicode_round_trips_exactly(tok, text):
    ids = tok.encode(text)
    assert tok.decode(ids) == text


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=200))
def test_tiktoken_ids_equal_hugging_face_ids(tok, text):
    if EOT in text:  # HF treats the literal as the special token; lrn encodes it as text
        return
    assert tok.encode(text) == tok.hf.encode(text).ids


def test_korean_emoji_and_control_characters_round_trip(tok):
    text = "안녕하세요, 세계! 👩‍👩‍👧 \x00\x01\x7f\u200b\ufeff end"
    assert tok.decode(tok.encode(text)) == text


def test_literal_endoftext_inside_a_document_is_ordinary_text(tok):
    text = f"before {EOT} after"
    ids = tok.encode(text)
    assert tok.eot_id not in ids
    assert tok.decode(ids) == text
    # the special id itself decodes to the literal, so a document stream round-trips too
    assert tok.decode([tok.eot_id]) == EOT


def test_encode_documents_puts_eot_before_every_document(tok):
    docs = ["a cat", "a dog", "Lily"]
    out = list(tok.encode_documents(docs, batch=2))
    assert [d[0] for d in out] == [tok.eot_id] * 3
    assert [tok.decode(d[1:]) for d in out] == docs


def test_save_and_load_give_the_same_ids_and_hash(tok, tmp_path):
    path = tok.save(tmp_path)
    assert path.name == "tokenizer.json" and path.is_file()
    again = Tokenizer.load(tmp_path)
    text = "Lily and Tom saw 3 cats 🙂"
    assert again.encode(text) == tok.encode(text)
    assert again.hash == tok.hash


def test_vocabulary_below_257_is_refused():
    with pytest.raises(UserError, match="257"):
        Tokenizer.train(TRAIN_TEXT, 256)


def test_missing_or_broken_tokenizer_file_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="no tokenizer"):
        Tokenizer.load(tmp_path / "nope")
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{not json")
    with pytest.raises(UserError, match="not a valid tokenizer"):
        Tokenizer.load(bad)


def test_decode_rejects_ids_outside_the_vocabulary(tok):
    with pytest.raises(UserError, match="outside the vocabulary"):
        tok.decode([tok.vocab_size])


@pytest.mark.skipif(not SHARED.exists(), reason="../shared/data is absent")
def test_tiktoken_equals_hugging_face_on_real_english_and_korean_text():
    sotu = gzip.open(SHARED / "sotu" / "sotu.txt.gz", "rt", encoding="utf-8").read(2_000_000)
    docs = [d for d in sotu.split(EOT) if d.strip()]
    tok = Tokenizer.train(docs, 2048)
    assert [tok.encode(d) for d in docs] == [e.ids for e in tok.hf.encode_batch(docs)]
    lines = gzip.open(SHARED / "nsmc" / "ratings_test.txt.gz", "rt", encoding="utf-8").read(1_000_000)
    reviews = [line.split("\t")[1] for line in lines.splitlines()[1:-1]]
    ktok = Tokenizer.train(reviews, 2048)
    assert [ktok.encode(r) for r in reviews] == [e.ids for e in ktok.hf.encode_batch(reviews)]


def test_a_tokenizer_that_is_not_a_bpe_is_refused_with_its_model_named():
    from tokenizers import Tokenizer as HFTokenizer
    from tokenizers import models

    word_level = HFTokenizer(models.WordLevel(vocab={"a": 0, "b": 1}, unk_token="a"))
    word_level.add_special_tokens([EOT])
    with pytest.raises(UserError, match="a WordLevel model, not a byte-level BPE"):
        Tokenizer(word_level)
