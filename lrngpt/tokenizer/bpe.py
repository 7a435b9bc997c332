"""Byte-level BPE tokenizer, trained with Hugging Face `tokenizers` and saved as its tokenizer.json.

Encoding goes through a `tiktoken` Encoding of the same vocabulary (ranks are the Hugging Face ids,
assigned in merge order, so tiktoken reproduces the trained merges; tests compare both). <|endoftext|>
is the one special token, put before every document; the literal text inside a document is ordinary
text, so any string round-trips.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
from collections.abc import Iterable, Iterator
from functools import cached_property
from itertools import islice
from pathlib import Path

import numpy as np
import tiktoken
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, pre_tokenizers, trainers

from lrngpt.core import log as logging
from lrngpt.core.fsio import atomic_write, read_regular, user_path
from lrngpt.corpora.base import EOT
from lrngpt.errors import UserError, option

MIN_VOCAB = 257  # 256 byte tokens + <|endoftext|>
# the trainer allocates for every token it may learn up front (10**9: a 70 GB abort); 2**20 is 20x GPT-2's
MAX_VOCAB = 2**20

# GPT-2's pre-tokenizer split, the one `tokenizers`' ByteLevel(use_regex=True) applies.
GPT2_SPLIT = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def check_vocab_size(vocab_size: int) -> None:
    if vocab_size < MIN_VOCAB:
        raise UserError(f"vocabulary size {vocab_size} is below {MIN_VOCAB} (256 bytes + <|endoftext|>); "
                        f"use {option('vocab_size', '257')} or more")
    if vocab_size > MAX_VOCAB:
        raise UserError(f"vocabulary size {vocab_size:,} is above lrn's limit of {MAX_VOCAB:,} tokens: the tokenizer "
                        "trainer allocates for every token it may learn before it reads the text, and the model "
                        f"keeps a row per token (GPT-2 has 50,257); use at most {MAX_VOCAB:,}")


def _check_byte_level(hf: HFTokenizer, special_ids: set[int]) -> None:
    """lrn's token arrays and bits per byte need a byte-level BPE: ordinary tokens in GPT-2's byte alphabet."""
    if not isinstance(hf.model, models.BPE):  # (no JSON round trip of the whole vocabulary to learn this)
        raise UserError(f"the tokenizer is a {type(hf.model).__name__} model, not a byte-level BPE; lrn needs one "
                        "that `lrn tokenizer train` (or GPT-2) writes")
    alphabet = _byte_decoder().keys()
    for token, idx in hf.get_vocab(with_added_tokens=False).items():
        if idx not in special_ids and not set(token) <= alphabet:
            raise UserError(f"the tokenizer is not byte-level: token {token!r} (id {idx}) is not spelled in "
                            "byte-level characters; use one that `lrn tokenizer train` (or GPT-2) writes")


@functools.cache
def _byte_decoder() -> dict[str, int]:
    """Inverse of GPT-2's bytes_to_unicode: a printable byte (not the space) stands for itself, every
    other byte, in order, for the characters from chr(256) on."""
    printable = [b for b in range(256) if chr(b).isprintable() and b != ord(" ")]
    others = [b for b in range(256) if b not in printable]
    return {chr(b): b for b in printable} | {chr(256 + n): b for n, b in enumerate(others)}


class Tokenizer:
    """A trained byte-level BPE: encode, decode, token_bytes, one saved file."""

    def __init__(self, hf: HFTokenizer):
        self.hf = hf
        vocab = hf.get_vocab(with_added_tokens=True)
        if EOT not in vocab:
            raise UserError(f"tokenizer has no {EOT} token; lrn needs it as the document separator")
        self.eot_id = vocab[EOT]
        self.vocab_size = hf.get_vocab_size(with_added_tokens=True)
        self.special_ids = set(hf.get_added_tokens_decoder())
        _check_byte_level(hf, self.special_ids)

    # ---- construction -------------------------------------------------------------

    @classmethod
    def train(cls, docs: Iterable[str], vocab_size: int) -> Tokenizer:
        check_vocab_size(vocab_size)
        hf = HFTokenizer(models.BPE())
        hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        hf.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size,
            special_tokens=[EOT],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        start = time.perf_counter()
        hf.train_from_iterator(docs, trainer=trainer)
        tok = cls(hf)
        logging.debug(f"tokenizer: {tok.vocab_size}-token BPE trained in {time.perf_counter() - start:.2f} s "
                      f"(asked for {vocab_size}), hash {tok.hash[:12]}")
        return tok

    @classmethod
    def load(cls, path: str | Path) -> Tokenizer:
        path = Path(path)
        if path.is_dir():
            path = path / "tokenizer.json"
        if not path.exists() and not path.is_symlink():
            raise UserError(f"no tokenizer at {path}; train one with `lrn tokenizer train`")
        raw = read_regular(path, "tokenizer")  # a FIFO would wait for ever, /dev/zero never end
        with user_path(path, "tokenizer"):
            text = raw.decode("utf-8")
        try:
            tok = cls.from_str(text)
        except UserError as e:
            raise UserError(f"{path}: {e.text}") from None
        logging.debug(f"tokenizer: {path} ({tok.vocab_size} tokens, hash {tok.hash[:12]})")
        return tok

    @classmethod
    def from_str(cls, text: str) -> Tokenizer:
        try:
            hf = HFTokenizer.from_str(text)
        except Exception as e:  # tokenizers raises plain Exceptions on bad JSON
            raise UserError(f"not a valid tokenizer.json ({str(e)[:100]})") from None
        return cls(hf)

    def to_str(self) -> str:
        return self.hf.to_str()

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        if path.suffix != ".json":
            path = path / "tokenizer.json"
        with user_path(path.parent, "output directory"):
            path.parent.mkdir(parents=True, exist_ok=True)
        return atomic_write(path, self.to_str())

    @cached_property
    def hash(self) -> str:
        """Content hash of the vocabulary and merges (what decides the ids)."""
        model = json.loads(self.to_str())["model"]
        blob = json.dumps([model["vocab"], model["merges"]], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    # ---- tiktoken encoder built from the same merges -------------------------------

    @cached_property
    def _tiktoken(self) -> tiktoken.Encoding:
        decode_char = _byte_decoder()
        ranks = {bytes(decode_char[c] for c in token): idx
                 for token, idx in self.hf.get_vocab(with_added_tokens=False).items() if idx not in self.special_ids}
        return tiktoken.Encoding(
            name=f"lrn-{self.hash}",
            pat_str=GPT2_SPLIT,
            mergeable_ranks=ranks,
            special_tokens={EOT: self.eot_id},
        )

    @cached_property
    def token_bytes(self) -> np.ndarray:
        """UTF-8 byte length of every token id; 0 for special tokens (they carry no text)."""
        out = np.zeros(self.vocab_size, dtype=np.int64)
        for b, idx in self._tiktoken._mergeable_ranks.items():
            out[idx] = len(b)
        return out

    def token_bytes_for(self, rows: int) -> np.ndarray:
        """`token_bytes` for a model table of `rows` rows: rows past the vocabulary carry no bytes."""
        return np.pad(self.token_bytes, (0, max(0, rows - self.vocab_size)))

    # ---- encode / decode ------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        """Ids of `text`; the literal "<|endoftext|>" in it is ordinary text, never the special id."""
        return self._tiktoken.encode_ordinary(text)

    def encode_batch(self, texts: list[str], num_threads: int = 2) -> list[list[int]]:
        return self._tiktoken.encode_ordinary_batch(texts, num_threads=num_threads)

    def encode_documents(self, docs: Iterable[str], batch: int = 1024) -> Iterator[list[int]]:
        """Each document's ids with <|endoftext|> in front: the layout of the token arrays."""
        docs = iter(docs)
        while buf := list(islice(docs, batch)):
            yield from ([self.eot_id, *ids] for ids in self.encode_batch(buf))

    def decode(self, ids: Iterable[int]) -> str:
        ids = [int(i) for i in ids]
        bad = [i for i in ids if not 0 <= i < self.vocab_size]
        if bad:
            raise UserError(f"token id {bad[0]} is outside the vocabulary (0..{self.vocab_size - 1})")
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    def decode_bytes(self, ids: list[int]) -> bytes:
        return self._tiktoken.decode_bytes(ids)

    def id_to_token(self, idx: int) -> str:
        """The text of one token; rows past the vocabulary (a padded model table) show as <unused:N>."""
        if not 0 <= idx < self.vocab_size:
            return f"<unused:{idx}>"
        return self.decode_bytes([idx]).decode("utf-8", errors="replace")
