"""Corpora and tokenizers, as `lrn data` and `lrn tokenizer` answer; each returns what its command prints
with --json. A corpus is a string (frontend.CORPUS_FORMS); a tokenizer a directory with tokenizer.json,
a run directory or the file."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from lrngpt.analysis.vocab import show
from lrngpt.api.checks import checked
from lrngpt.corpora.base import parse_size
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
    """Write the embedded stories generator's text (the corpus `stories:SIZE` reads) to the file `out`
    (`lrn data stories`); the same size (5MB, 512KB or bytes) and seed give the same bytes.

    Example: ``lrngpt.data_stories("stories.txt", size="512KB", seed=3)["documents"]``"""
    return write_stories(out, parse_size(str(size)), check_seed(seed, option('seed')), force)


@checked
def data_prepare(corpus: str, vocab_size: int = 4096, val_fraction: float = 0.05, split_seed: int = 0,
                 val_split: ValSplit = "documents", out: str | Path | None = None, force: bool = False,
                 verify: bool = False) -> dict:
    """Split a corpus, train a byte-level BPE on its training split and write memory-mapped token arrays
    (`lrn data prepare`), cached by corpus content and settings; `out` another directory than the cache;
    `verify` hashes the corpus files again. Returns the directory, key, splits and what became validation.

    Example: ``lrngpt.data_prepare("text:bible.txt", val_split="chunks")["splits"]["val"]["tokens"]``"""
    if verify:
        set_verify(True)
    cfg = DataConfig(corpus=corpus, vocab_size=vocab_size, val_fraction=val_fraction, split_seed=split_seed,
                     val_split=val_split)
    data = prepare(cfg, Path(out) if out else None, force=force)
    m = data.meta
    validation, said = describe_validation(m)
    return {"dir": str(data.dir), "key": m["key"], "corpus": m["corpus"], "vocab_size": m["vocab_size"],
            "dtype": m["dtype"], "splits": m["splits"], "validation": validation, "validation_note": said}


@checked
def tokenizer_train(corpus: str, out: str | Path, vocab_size: int = 4096, force: bool = False) -> dict:
    """Train a byte-level BPE on the training split of a corpus and write out/tokenizer.json (`lrn tokenizer
    train`); `force` replaces one lrn wrote there.

    Example: ``lrngpt.tokenizer_train("stories:1MB", "tok/", vocab_size=1024)["path"]``"""
    tokenizer_out(out, force)  # refuse before the (slow) training, and again before writing
    tok = train_tokenizer(DataConfig(corpus=corpus, vocab_size=vocab_size))
    path = write_tokenizer(tok, out, force)
    return {"path": str(path), "vocab_size": tok.vocab_size, "eot_id": tok.eot_id, "hash": tok.hash}


@checked
def tokenizer_encode(tokenizer: str | Path, text: str) -> list[int]:
    """The token ids of `text` (`lrn tokenizer encode`); every string round-trips through tokenizer_decode.

    Example: ``lrngpt.tokenizer_encode("runs/demo", "Lily saw a cat")``"""
    return Tokenizer.load(tokenizer).encode(text)


@checked
def tokenizer_decode(tokenizer: str | Path, ids: Sequence[int] | str) -> str:
    """The text of token ids (`lrn tokenizer decode`): a list of ints or "12,345,6".

    Example: ``lrngpt.tokenizer_decode("runs/demo", [1191, 1012])``"""
    if isinstance(ids, str):
        try:
            ids = [int(x) for x in ids.split(",") if x.strip()]
        except ValueError:
            raise UserError(f"{option('ids', f'{ids!r}')} must be comma-separated integers, e.g. 1,2,3") from None
    return Tokenizer.load(tokenizer).decode(list(ids))


@checked
def tokenizer_show(tokenizer: str | Path, items: Sequence[str | int], as_text: bool = False) -> dict:
    """Look tokens up both ways (`lrn tokenizer show`): a whole number is an id, anything else text
    (`as_text`: every item is text).

    Example: ``lrngpt.tokenizer_show("runs/demo", [1191, " Lily"])["results"][0]["token"]``"""
    return show(tokenizer, [str(i) for i in items], as_text)
