"""Token arrays: corpus -> tokenizer -> train.bin / val.bin, cached and memory-mapped.

`prepare(data_config)` streams the corpus twice (to train the tokenizer on the training documents, then
to encode), so memory does not grow with it. The result lives in a directory keyed by a hash of the
corpus fingerprint and the tokenizer settings, reused only while its files agree with meta.json; the
tokenizer is cached on its own (tokenizers/KEY.json, with KEY.hash written after it). A prepared
directory holds meta.json (key, corpus, per-split counts, dtype, split_by: lrngpt.data.splits),
tokenizer.json, train.bin and val.bin (uint16 or uint32 ids, <|endoftext|> before every document) and,
with --out, the record of what lrn wrote (--force replaces only data whose record still matches).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from itertools import islice
from pathlib import Path

import numpy as np

from lrngpt.core import log as logging
from lrngpt.core.fsio import (
    atomic_dir,
    atomic_write,
    check_not_cwd,
    check_output,
    is_regular,
    read_json_object,
    user_path,
    write_json,
    writing,
)
from lrngpt.core.ownership import (
    check_dir_target,
    check_file_target,
    entries,
    is_run,
    write_manifest,
    write_owned_file,
)
from lrngpt.corpora.base import Corpus
from lrngpt.corpora.download import cache_dir
from lrngpt.corpora.registry import load_corpus
from lrngpt.data.splits import SPLITS, split_chunks, split_tail
from lrngpt.errors import UserError, option
from lrngpt.runconfig.schema import DataConfig
from lrngpt.runconfig.values import VAL_SPLIT_MODES
from lrngpt.tokenizer.bpe import Tokenizer

FORMAT_VERSION = 1
DRY_RUN_PREPARE_BYTES = 20_000_000  # a dry run prepares a corpus up to this size to count its tokens
CHEAP_KINDS = ("stories", "text", "jsonl", "parquet")  # corpora that open without a download


def data_cache_dir() -> Path:
    return cache_dir() / "data"


def _hash(*parts) -> str:
    return hashlib.sha256(json.dumps([FORMAT_VERSION, *parts]).encode()).hexdigest()[:16]


def _split_parts(cfg: DataConfig) -> list:
    """data.val_split in a key only when it is not the default, so keys made before it existed hold."""
    return [] if cfg.val_split == VAL_SPLIT_MODES[0] else ["val_split", cfg.val_split]


def tokenizer_key(corpus: Corpus, cfg: DataConfig) -> str:
    """What decides a trained tokenizer: the training split's text and the vocabulary size."""
    return _hash(corpus.fingerprint, cfg.vocab_size, cfg.val_fraction, cfg.split_seed, cfg.tokenizer_bytes,
                 *_split_parts(cfg))


def data_key(corpus: Corpus, cfg: DataConfig, tokenizer: Tokenizer | None = None) -> str:
    """What decides the token arrays: corpus content and how it is tokenized and split."""
    if tokenizer is not None:  # a given tokenizer (an imported GPT-2, say) instead of a trained one
        return _hash(corpus.fingerprint, "tokenizer", tokenizer.hash, cfg.val_fraction, cfg.split_seed,
                     *_split_parts(cfg))
    return tokenizer_key(corpus, cfg)


def check_run_data(saved_key: str | None, cfg: DataConfig, run: str, fix: str) -> None:
    """Refuse, before a tokenizer is trained on it, a corpus whose content changed since the run in `run`
    was trained (`saved_key`: its checkpoint's data_key; None, an import: nothing to check)."""
    if saved_key is not None and data_key(load_corpus(cfg.corpus), cfg) != saved_key:
        raise UserError(f"the content of {cfg.corpus} changed since the run in {run} was trained (its files are "
                        f"not the ones it read); {fix}")


def train_tokenizer(cfg: DataConfig, corpus: Corpus | None = None, log=None) -> Tokenizer:
    """The BPE for a data config, trained on its training split (cached by tokenizer_key)."""
    log = log or logging.info
    corpus = corpus or load_corpus(cfg.corpus)
    path = data_cache_dir().parent / "tokenizers" / f"{tokenizer_key(corpus, cfg)}.json"
    logging.debug(f"tokenizer: key {path.stem} -> {path}")
    record = path.with_suffix(".hash")  # the trained tokenizer's hash, written after it: what the cache trusts
    if path.exists():
        cached = _cached_tokenizer(path, record, log)
        if cached is not None:
            return cached
    log(f"tokenizer: training a {cfg.vocab_size}-token BPE on {corpus.spec}")
    with logging.progress(desc="tokenizer: reading", unit="B", unit_scale=True) as bar:
        tok = Tokenizer.train(_first_bytes(split_documents(corpus, cfg, "train"), cfg.tokenizer_bytes, bar),
                              cfg.vocab_size)
    if tok.vocab_size < 257:
        raise UserError(f"corpus {corpus.spec} is empty: it holds no text to train a tokenizer on")
    tok.save(path)
    atomic_write(record, tok.hash + "\n")
    return tok


def _cached_tokenizer(path: Path, record: Path, log) -> Tokenizer | None:
    """The cached tokenizer when it still has the hash recorded when it was trained; else None (train again)."""
    try:
        want = record.read_text(encoding="ascii").strip()
        tok = Tokenizer.load(path)
    except (OSError, UnicodeDecodeError, UserError):
        log(f"tokenizer: cached {path} is unreadable or has no record of its hash; training it again")
        return None
    if tok.hash != want:
        log(f"tokenizer: cached {path} is not the tokenizer trained for this corpus (its hash changed); "
            "training it again")
        return None
    log(f"tokenizer: cached {path}")
    return tok


def tokenizer_out(out: str | Path, force: bool = False) -> Path:
    """OUT/tokenizer.json, checked before any work: never a run's or a user's file, lrn's own with `force`."""
    out = check_output(out, "dir")
    if is_run(out):
        raise UserError(f"{out} holds lrn's run; its tokenizer.json belongs to that run: choose another {option('out')}")
    return check_file_target(out / "tokenizer.json", force, "tokenizer", example="tokenizer.json")


def write_tokenizer(tok: Tokenizer, out: str | Path, force: bool = False) -> Path:
    """Save a trained tokenizer as OUT/tokenizer.json, recorded as lrn's."""
    path = tokenizer_out(out, force)  # again: the directory may have changed during training
    with user_path(path.parent, "output directory"):
        path.parent.mkdir(parents=True, exist_ok=True)
    return write_owned_file(path, tok.to_str(), "tokenizer")


@dataclass
class PreparedData:
    dir: Path
    meta: dict
    train_tokens_limit: int | None = None

    @property
    def key(self) -> str:
        return self.meta["key"]

    @cached_property
    def tokenizer(self) -> Tokenizer:
        return Tokenizer.load(self.dir / "tokenizer.json")

    def tokens(self, split: str) -> np.ndarray:
        """The split's token ids, memory-mapped (the training split cut to train_tokens)."""
        n = self.meta["splits"][split]["tokens"]
        if n == 0:
            return np.zeros(0, dtype=self.meta["dtype"])
        path = self.dir / f"{split}.bin"
        with user_path(path, "prepared token file"):  # a permission, say: named, not a traceback
            arr: np.ndarray = np.memmap(path, dtype=self.meta["dtype"], mode="r", shape=(n,))
        if split == "train" and self.train_tokens_limit is not None:
            arr = arr[: self.train_tokens_limit]
        return arr


def _read_meta(d: Path) -> dict | None:
    """meta.json, or None when there is none or it is damaged (the directory then holds no usable data)."""
    try:  # (a FIFO named meta.json is no meta.json: never opened)
        return read_json_object(d / "meta.json", "meta.json") if is_regular(d / "meta.json") else None
    except (UserError, ValueError):  # (ValueError: not UTF-8)
        return None


def integrity_problem(data: PreparedData) -> str | None:
    """What is wrong with a prepared directory (None: meta.json, tokenizer and token files agree)."""
    d, meta = data.dir, data.meta
    try:
        splits, dtype = meta["splits"], np.dtype(meta["dtype"])
        ok = (all(isinstance(meta[k], str) for k in ("corpus", "tokenizer_hash", "key"))
              and dtype in (np.uint16, np.uint32) and all(isinstance(splits[s][k], int) and splits[s][k] >= 0
                                                          for s in SPLITS for k in ("documents", "tokens", "bytes")))
    except (KeyError, TypeError, ValueError):
        ok = False
    if not ok:
        return "meta.json lacks corpus, tokenizer_hash, dtype or split counts, or holds wrong values"
    for split in SPLITS:
        n, path = splits[split]["tokens"], d / f"{split}.bin"
        size = path.stat().st_size if path.is_file() else -1
        if size != n * dtype.itemsize:
            return f"{split}.bin holds {max(size, 0):,} bytes where meta.json says {n * dtype.itemsize:,}"
    try:
        tok_hash = data.tokenizer.hash
    except UserError:
        return "tokenizer.json is missing or unreadable"
    if tok_hash != meta["tokenizer_hash"]:
        return "tokenizer.json is not the tokenizer these tokens were encoded with"
    return None


def load_prepared(d: Path, train_tokens: int | None = None) -> PreparedData:
    meta = _read_meta(Path(d))
    if meta is None:
        raise UserError(f"{d} holds no prepared data; run `lrn data prepare --corpus CORPUS --out {d}`")
    data = PreparedData(Path(d), meta, train_tokens)
    problem = integrity_problem(data)
    if problem:
        raise UserError(f"{d}: {problem}; prepare it again with `lrn data prepare --force`")
    return data


def cached_prepared(key: str, train_tokens: int | None = None) -> PreparedData | None:
    """The prepared data under `key` in this machine's cache; None where it is not there, or damaged."""
    try:
        data = load_prepared(data_cache_dir() / key, train_tokens)
        return data if data.meta.get("key") == key else None
    except (UserError, OSError, KeyError, ValueError, TypeError):
        return None


def prepare(cfg: DataConfig, out: Path | None = None, force: bool = False, log=None,
            tokenizer: Tokenizer | None = None) -> PreparedData:
    """Prepare (or find in the cache) the token arrays for a data config; with `tokenizer`, encoded with
    it instead of a freshly trained BPE."""
    log = log or logging.info
    in_cache = out is None
    if out is not None:
        check_output(out, "dir")
        check_not_cwd(out)  # a prepared directory is replaced whole
    corpus = load_corpus(cfg.corpus)
    if cfg.val_split == "chunks" and corpus.has_own_split:
        raise UserError(f"corpus {corpus.spec} has its own validation split; data.val_split=chunks is for a "
                        "corpus without one (a single long text): leave data.val_split at documents")
    key = data_key(corpus, cfg, tokenizer)
    out = Path(out) if out is not None else data_cache_dir() / key
    logging.debug(f"data: key {key} ({'the given tokenizer' if tokenizer else f'a {cfg.vocab_size}-token BPE'}, "
                  f"val_fraction {cfg.val_fraction}, split_seed {cfg.split_seed}) -> {out}")
    meta = _read_meta(out)
    problem = None
    if meta is not None and meta.get("key") == key:  # read, whoever wrote it: nothing is replaced
        data = PreparedData(out, meta, cfg.train_tokens)
        problem = integrity_problem(data)
        if problem is None:
            log(f"data: cached {out} ({meta['splits']['train']['tokens']:,} train tokens)")
            return data
    if not in_cache and entries(out):
        _check_replace(out, force, meta, problem)
    if problem:
        log(f"data: {out} is damaged ({problem}); preparing it again")
    with atomic_dir(out) as tmp:  # a killed prepare (or a full disk) leaves no half-built cache entry
        tok = tokenizer or train_tokenizer(cfg, corpus, log)
        with writing(out):
            meta = _build(corpus, cfg, key, tok, tmp, log)
            if not in_cache:  # the cache is lrn's own; a directory of yours gets the record of what lrn wrote
                write_manifest(tmp, PREPARED)
    return PreparedData(out, meta, cfg.train_tokens)


PREPARED = "prepared data"  # the kind in the record of a prepared --out


def _check_replace(out: Path, force: bool, meta: dict | None, problem: str | None) -> None:
    """--out holds something: replaced only when it is prepared data lrn wrote, unchanged, and with --force."""
    check_dir_target(out, True, PREPARED)
    if force:
        return
    if problem:
        raise UserError(f"{out}: {problem}; pass {option('force', True)} to prepare it again")
    what = f"data for {meta.get('corpus')}" if meta else "prepared data whose meta.json is damaged"
    raise UserError(f"{out} already holds {what}; choose another {option('out')} or pass {option('force', True)} to replace it")


def dry_run_prepared(cfg: DataConfig, log=None) -> PreparedData | None:
    """A dry run's prepared data: cached, or prepared now for a small local corpus; else None."""
    if cfg.corpus.partition(":")[0] not in CHEAP_KINDS:
        return None
    corpus = load_corpus(cfg.corpus)
    cached = cached_prepared(data_key(corpus, cfg), cfg.train_tokens)
    if cached is not None:
        return cached
    size = corpus.meta.get("size_bytes") or corpus.meta.get("bytes")
    if isinstance(size, int) and size <= DRY_RUN_PREPARE_BYTES:
        return prepare(cfg, log=log)
    return None


def split_documents(corpus: Corpus, cfg: DataConfig, split: str) -> Iterator[str]:
    """Documents of one split: the corpus's own split, else a seeded draw per document (with
    data.val_split=chunks every document goes to train; the chunks are drawn after encoding)."""
    if corpus.val_docs is not None:  # its own split
        return corpus.train_docs() if split == "train" else corpus.val_docs()
    if cfg.val_split == "chunks":
        return corpus.train_docs() if split == "train" else iter(())
    rng = random.Random(cfg.split_seed)
    return (doc for doc in corpus.train_docs() if (rng.random() < cfg.val_fraction) == (split == "val"))


def _first_bytes(docs: Iterator[str], limit: int, bar) -> Iterator[str]:
    """The documents up to `limit` characters, each one's UTF-8 bytes added to a shown progress bar."""
    total = 0
    for doc in docs:
        if not bar.disable:
            bar.update(len(doc.encode("utf-8")))
        yield doc
        total += len(doc)
        if total >= limit:
            return


def _build(corpus: Corpus, cfg: DataConfig, key: str, tok: Tokenizer, d: Path, log) -> dict:
    tok.save(d / "tokenizer.json")
    dtype = np.uint16 if tok.vocab_size <= 2**16 else np.uint32
    token_bytes = tok.token_bytes
    splits = {}
    for split in SPLITS:
        log(f"data: encoding the {split} split")
        n_tokens = n_bytes = n_docs = 0
        with open(d / f"{split}.bin", "wb") as f, \
                logging.progress(desc=f"encoding {split}", unit="B", unit_scale=True) as bar:
            encoded = tok.encode_documents(split_documents(corpus, cfg, split))
            while chunk := list(islice(encoded, 4096)):
                arr = np.fromiter((i for ids in chunk for i in ids), dtype=dtype)
                f.write(arr.tobytes())
                n_tokens += arr.size
                chunk_bytes = int(token_bytes[arr].sum())
                n_bytes += chunk_bytes
                n_docs += len(chunk)
                bar.update(chunk_bytes)
        splits[split] = {"documents": n_docs, "tokens": n_tokens, "bytes": n_bytes}
    if splits["train"]["documents"] == 0:
        raise UserError(f"corpus {corpus.spec} has no documents; give it some text")
    split_by = "documents"
    extra: dict = {}  # what split_chunks says of the chunks it drew
    if cfg.val_split == "chunks":  # (prepare refuses it for a corpus with its own split)
        split_by = "chunks"  # seeded chunks from all over the text (lrngpt.data.splits)
        splits, extra = split_chunks(d, dtype, splits, cfg.val_fraction, cfg.split_seed, token_bytes, tok.eot_id)
    elif splits["val"]["documents"] == 0:
        split_by = "tokens"  # too few documents to split by document: the last tokens become val
        splits = split_tail(d, dtype, splits, cfg.val_fraction, token_bytes)
    meta = {"key": key, "format": FORMAT_VERSION, "corpus": corpus.spec, "kind": corpus.kind,
            "fingerprint": corpus.fingerprint, "vocab_size": tok.vocab_size, "requested_vocab_size": cfg.vocab_size,
            "tokenizer_hash": tok.hash, "eot_id": tok.eot_id, "dtype": np.dtype(dtype).name, "split_by": split_by,
            "own_split": corpus.has_own_split, "val_fraction": cfg.val_fraction, "split_seed": cfg.split_seed,
            **({"val_split": cfg.val_split} if cfg.val_split != VAL_SPLIT_MODES[0] else {}),
            "splits": splits, **extra, "corpus_meta": corpus.meta}
    write_json(d / "meta.json", meta)
    log(f"data: {splits['train']['tokens']:,} train / {splits['val']['tokens']:,} val tokens, "
        f"vocabulary {tok.vocab_size}")
    return meta
