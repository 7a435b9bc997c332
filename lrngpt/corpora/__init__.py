"""Corpora: where documents come from.

A corpus string selects one:

    stories[:SIZE[:SEED]]      the embedded generator (default about 5 MB, seed 0)
    text:PATH[,PATH...]        UTF-8 .txt / .txt.gz files or directories of them
    tinystories[:PATH]         TinyStoriesV2-GPT4 train/valid files (downloaded at a pinned revision
                               if no PATH)
    nsmc[:PATH]                NSMC ratings_train/ratings_test (downloaded if no PATH)
    jsonl:PATH[:FIELD]         JSON Lines, one document per line in FIELD (default text)
    parquet:PATH[:COLUMN]      Parquet files, one document per row of COLUMN (default text)
    hf:NAME[@REV][:CONFIG][:SPLIT][:COLUMN][?stream]   a Hugging Face dataset (Hub, local files,
                               save_to_disk), at a revision, streamed

Every corpus is a `Corpus`: documents as an iterator of strings (streamed, so memory does
not grow with the corpus), its own validation split when it has one, and a fingerprint that
changes when its content changes (it keys the token cache and guards --resume).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePath

from lrngpt.core import log as logging
from lrngpt.core.validate import MAX_CORPUS_BYTES
from lrngpt.errors import UserError

EOT = "<|endoftext|>"
# One document is read, tokenized and trained on whole, and the BPE trainer holds about 100 bytes a
# character of one document at once (a 17 MB document: 1.7 GB): past this, a document is refused with
# its file, not read until the machine runs out of memory (a 1 MB .gz can hold a 1 GB line).
MAX_DOCUMENT_CHARS = 1 << 25  # 33,554,432 characters: a long book is 3 million
MAX_LINE_BYTES = 1 << 27  # a JSONL or TSV line (JSON escapes make a document's line longer than its text)


@dataclass(frozen=True)
class Corpus:
    spec: str
    kind: str
    fingerprint: str
    train_docs: Callable[[], Iterator[str]]
    val_docs: Callable[[], Iterator[str]] | None = None  # the corpus's own split, if any
    meta: dict = field(default_factory=dict)

    @property
    def has_own_split(self) -> bool:
        return self.val_docs is not None


KINDS = ("stories", "text", "tinystories", "nsmc", "jsonl", "parquet", "hf")


def load_corpus(spec: str) -> Corpus:
    """Parse a corpus string and return the corpus it names."""
    corpus = _load(spec.strip())
    logging.debug(f"corpus {corpus.spec}: fingerprint {corpus.fingerprint[:12]}, "
                  f"{'its own validation split' if corpus.has_own_split else 'split by lrn'}"
                  + "".join(f", {k} {v}" for k, v in corpus.meta.items() if isinstance(v, str | int)))
    return corpus


def _load(spec: str) -> Corpus:
    kind, _, arg = spec.partition(":")
    if kind == "stories":
        # here: lrngpt.corpora.stories imports this module (a cycle at the top)
        from lrngpt.corpora.stories import stories_corpus

        return stories_corpus(arg)
    if kind == "text":
        # here: lrngpt.corpora.text imports this module (a cycle at the top)
        from lrngpt.corpora.text import text_corpus

        return text_corpus(arg)
    if kind == "tinystories":
        # here: lrngpt.corpora.tinystories imports this module (a cycle at the top)
        from lrngpt.corpora.tinystories import tinystories_corpus

        return tinystories_corpus(arg or None)
    if kind == "nsmc":
        # here: lrngpt.corpora.nsmc imports this module (a cycle at the top)
        from lrngpt.corpora.nsmc import nsmc_corpus

        return nsmc_corpus(arg or None)
    if kind in ("jsonl", "parquet"):
        # here: lrngpt.corpora.records imports this module (a cycle at the top)
        from lrngpt.corpora.records import jsonl_corpus, parquet_corpus

        return (jsonl_corpus if kind == "jsonl" else parquet_corpus)(arg)
    if kind == "hf":
        # here: lrngpt.corpora.hf imports this module (a cycle at the top)
        from lrngpt.corpora.hf import hf_corpus

        return hf_corpus(arg)
    raise UserError(
        f"unknown corpus kind {kind!r} in {spec!r}; use one of stories[:SIZE], text:PATH, "
        "tinystories[:PATH], nsmc[:PATH], jsonl:PATH[:FIELD], parquet:PATH[:COLUMN], "
        "hf:NAME[@REV][:CONFIG][:SPLIT][:COLUMN][?stream]"
    )


def fetch(spec: str) -> None:
    """Download what a corpus string needs from the network, so a missing file or no network stops a
    command before it writes or trains anything. Corpora on disk need nothing."""
    kind, _, arg = spec.strip().partition(":")
    if kind == "tinystories" and not arg:
        # here: lrngpt.corpora.tinystories imports this module (a cycle at the top)
        from lrngpt.corpora.tinystories import fetch as fetch_tinystories

        fetch_tinystories()
    elif kind == "nsmc" and not arg:
        # here: lrngpt.corpora.nsmc imports this module (a cycle at the top)
        from lrngpt.corpora.nsmc import downloaded_files

        downloaded_files()


def pinned_source(spec: str) -> dict | None:
    """Where a downloaded corpus comes from (dataset, revision, URL, cache), without any download;
    None for corpora read from disk or generated."""
    if spec.strip() == "tinystories":
        # here: lrngpt.corpora.tinystories imports this module (a cycle at the top)
        from lrngpt.corpora.tinystories import source

        return source()
    return None


def corpus_label(spec: str | None) -> str:
    """A corpus as titles name it: the spec, with a file path cut to its file name (text:my.txt)."""
    if not spec:
        return "corpus unknown"
    kind, _, arg = str(spec).partition(":")
    if kind in ("text", "jsonl", "parquet") and arg:
        names = [PurePath(part.split(":")[0]).name or part for part in arg.split(",")]
        return f"{kind}:{','.join(names)}"
    return str(spec)


def parse_size(text: str) -> int:
    """'5MB' -> 5_000_000, '512KB' -> 512_000, '1GB', '123' (bytes)."""
    t = text.strip().upper().replace("_", "")
    units = {"GB": 10**9, "MB": 10**6, "KB": 10**3, "B": 1}
    num, mult = t, 1
    for unit, factor in units.items():
        if t.endswith(unit):
            num, mult = t[: -len(unit)], factor
            break
    try:
        value = float(num)
    except ValueError:
        raise UserError(f"cannot read size {text!r}; write it like 5MB, 512KB or 100000") from None
    if not value > 0:  # NaN included
        raise UserError(f"size {text!r} must be positive; write it like 5MB")
    if not value * mult <= MAX_CORPUS_BYTES:  # infinity included
        raise UserError(f"size {text!r} is above the limit of {MAX_CORPUS_BYTES // 10**9:,}GB; write it like 5MB")
    size = int(value * mult)
    if size < 1:
        raise UserError(f"size {text!r} is less than one byte; write it like 5MB or 512KB")
    return size
