"""Corpora and tokenizers, as `lrn data` and `lrn tokenizer` answer: the stories generator as a
file, a corpus prepared into cached token arrays, a byte-level BPE trained, text encoded and
decoded, tokens looked up. Each returns the document its command prints with --json.

A corpus is a string: stories[:SIZE[:SEED]], text:PATH[,PATH...], tinystories[:DIR], nsmc[:PATH],
jsonl:PATH[:FIELD], parquet:PATH[:COLUMN], hf:NAME[@REV][:CONFIG][:SPLIT][:COLUMN][?stream]
(CORPUS_FORMS). A tokenizer is a directory with tokenizer.json, a run directory or the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from lrngpt.analysis.vocab import show
from lrngpt.api.checks import checked
from lrngpt.corpora.base import parse_size
from lrngpt.corpora.registry import load_corpus
from lrngpt.corpora.stat_cache import set_verify
from lrngpt.corpora.stories import write_stories
from lrngpt.data.prepared import prepare, tokenizer_out, train_tokenizer, write_tokenizer
from lrngpt.data.splits import describe_validation
from lrngpt.errors import UserError, option
from lrngpt.runconfig.schema import DataConfig
from lrngpt.runconfig.values import VAL_SPLIT_MODES, check_seed
from lrngpt.tokenizer.bpe import Tokenizer

ValSplit = Literal["documents", "chunks"]  # data.val_split (lrngpt.runconfig.values.VAL_SPLIT_MODES)
assert VAL_SPLIT_MODES == ("documents", "chunks")


@checked
def data_stories(out: str | Path, size: str | int = "5MB", seed: int = 0, force: bool = False) -> dict:
    """Write the embedded stories generator's text (the corpus `stories:SIZE` reads) to the file `out`,
    documents separated by <|endoftext|> (`lrn data stories`); the same size and seed give the same
    bytes. `size` like 5MB, 512KB or a number of bytes; `force` replaces an earlier stories file lrn
    wrote (never a file you made). Raises UserError for a bad size or seed, or an `out` it may not write.

    Example: ``lrngpt.data_stories("stories.txt", size="512KB", seed=3)["documents"]``"""
    return write_stories(out, parse_size(str(size)), check_seed(seed, option('seed')), force)


@checked
def data_prepare(corpus: str, vocab_size: int = 4096, val_fraction: float = 0.05, split_seed: int = 0,
                 val_split: ValSplit = "documents", out: str | Path | None = None, force: bool = False,
                 verify: bool = False) -> dict:
    """Split a corpus into train and validation documents, train a byte-level BPE on the training split
    and write memory-mapped token arrays (`lrn data prepare`), cached by corpus content and settings so
    the same call again does no work. `out` another directory than the cache (`force` replaces other
    prepared data there); `verify` hashes the corpus files again even when they look unchanged. Returns
    the directory, key, splits and what became validation ("validation", and in words "validation_note").
    Raises UserError for a corpus it cannot read or a bad setting.

    Example: ``lrngpt.data_prepare("text:bible.txt", val_split="chunks")["splits"]["val"]["tokens"]``"""
    if verify:
        set_verify(True)
    cfg = DataConfig(corpus=corpus, vocab_size=vocab_size, val_fraction=val_fraction, split_seed=split_seed,
                     val_split=val_split)
    data = prepare(cfg, Path(out) if out else None, force=force)
    m = data.meta
    validation, said = describe_validation(m, load_corpus(cfg.corpus).has_own_split)
    return {"dir": str(data.dir), "key": m["key"], "corpus": m["corpus"], "vocab_size": m["vocab_size"],
            "dtype": m["dtype"], "splits": m["splits"], "validation": validation, "validation_note": said}


@checked
def tokenizer_train(corpus: str, out: str | Path, vocab_size: int = 4096, force: bool = False) -> dict:
    """Train a byte-level BPE on the training split of a corpus (the split data_prepare makes) and write
    out/tokenizer.json (`lrn tokenizer train`); `force` replaces a tokenizer.json lrn wrote there (never
    one you made). Raises UserError for a corpus it cannot read, a vocabulary under 257 or an `out` it
    may not write (checked before the training).

    Example: ``lrngpt.tokenizer_train("stories:1MB", "tok/", vocab_size=1024)["path"]``"""
    tokenizer_out(out, force)  # refuse before the (slow) training, and again before writing
    tok = train_tokenizer(DataConfig(corpus=corpus, vocab_size=vocab_size))
    path = write_tokenizer(tok, out, force)
    return {"path": str(path), "vocab_size": tok.vocab_size, "eot_id": tok.eot_id, "hash": tok.hash}


@checked
def tokenizer_encode(tokenizer: str | Path, text: str) -> list[int]:
    """The token ids of `text` (`lrn tokenizer encode`); the literal text <|endoftext|> inside it is
    ordinary text, so every string round-trips through tokenizer_decode. Raises UserError for a
    tokenizer it cannot read.

    Example: ``lrngpt.tokenizer_encode("runs/demo", "Lily saw a cat")``"""
    return Tokenizer.load(tokenizer).encode(text)


@checked
def tokenizer_decode(tokenizer: str | Path, ids: Sequence[int] | str) -> str:
    """The text of token ids (`lrn tokenizer decode`): a list of ints or "12,345,6". Raises UserError
    for ids that are not integers or outside the vocabulary, or a tokenizer it cannot read.

    Example: ``lrngpt.tokenizer_decode("runs/demo", [1191, 1012])``"""
    if isinstance(ids, str):
        try:
            ids = [int(x) for x in ids.split(",") if x.strip()]
        except ValueError:
            raise UserError(f"{option('ids', f'{ids!r}')} must be comma-separated integers, e.g. 1,2,3") from None
    return Tokenizer.load(tokenizer).decode(list(ids))


@checked
def tokenizer_show(tokenizer: str | Path, items: Sequence[str | int], as_text: bool = False) -> dict:
    """Look tokens up both ways (`lrn tokenizer show`): a whole number is an id and shows its token's text
    (bytes that are no whole UTF-8 character escaped as \\xNN) and bytes; anything else is text and shows
    its ids and tokens (`as_text`: every item is text). Raises UserError for an id outside the vocabulary.

    Example: ``lrngpt.tokenizer_show("runs/demo", [1191, " Lily"])["results"][0]["token"]``"""
    return show(tokenizer, [str(i) for i in items], as_text)
