"""`nsmc[:PATH]`: the Naver Sentiment Movie Corpus (`id<TAB>document<TAB>label`, maybe gzipped), one
review per document; PATH is a directory with ratings_train.txt and ratings_test.txt, or one file.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from lrngpt.corpora.base import Corpus
from lrngpt.corpora.download import cache_dir, download
from lrngpt.corpora.text import bounded_lines, find_named, fingerprint_files, open_bytes
from lrngpt.errors import UserError

URL = "https://raw.githubusercontent.com/e9t/nsmc/master"
TRAIN, TEST = "ratings_train.txt", "ratings_test.txt"


class Review(NamedTuple):
    id: str
    text: str
    label: int


def read_reviews(path: str | Path) -> Iterator[Review]:
    """Every row after the header, empty reviews included; a malformed line is a UserError."""
    path = Path(path)
    with open_bytes(path) as f:
        for lineno, raw in bounded_lines(f, path):
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError:
                raise UserError(f"{path}: line {lineno}: invalid UTF-8; re-save the file as UTF-8") from None
            if lineno == 1:
                if not line.lstrip("\ufeff").startswith("id\t"):
                    raise UserError(f"{path}: line 1 should be the header 'id<TAB>document<TAB>label', "
                                    f"got {line[:40]!r}; is this an NSMC file?")
                continue
            if not line:
                continue
            # the review sits between the first and the last tab, so a stray tab inside it is harmless
            rid, _, rest = line.partition("\t")
            text, tab, label = rest.rpartition("\t")
            if not tab or not rid or label not in ("0", "1"):
                raise UserError(f"{path}: line {lineno} is not 'id<TAB>document<TAB>label' with label 0 "
                                f"or 1: {line[:60]!r}")
            yield Review(rid, text, int(label))


def _documents(path: Path) -> Iterator[str]:
    for review in read_reviews(path):
        if text := review.text.strip():
            yield text


def _label_counts(path: Path) -> dict:
    counts = Counter(r.label for r in read_reviews(path))
    return {"negative": counts[0], "positive": counts[1]}


def downloaded_files() -> tuple[Path, Path]:
    """Both files in cache_dir()/nsmc, from LRN_NSMC_URL (a mirror; the tests' local server) or GitHub;
    no size or sha256 of them is published, so nothing is pinned."""
    base = os.environ.get("LRN_NSMC_URL", URL).rstrip("/")
    train, test = (download(f"{base}/{name}", cache_dir() / "nsmc" / name) for name in (TRAIN, TEST))
    return train, test


def nsmc_corpus(path: str | None) -> Corpus:
    """The corpus for `nsmc[:PATH]`; Corpus.meta["labels"] holds the label counts per file."""
    spec = f"nsmc:{path}" if path else "nsmc"
    if path and Path(path).expanduser().is_file():
        train, test = Path(path).expanduser(), None
    elif path:  # a directory, or what is there said as what it is
        train, test = find_named(Path(path).expanduser(), "nsmc", TRAIN, TEST)
    else:
        train, test = downloaded_files()
    files = [(train, "train")] + ([(test, "test")] if test else [])
    labels = {"train": _label_counts(train)} | ({"val": _label_counts(test)} if test else {})
    return Corpus(
        spec=spec,
        kind="nsmc",
        fingerprint=fingerprint_files("nsmc", files),
        train_docs=lambda: _documents(train),
        val_docs=(lambda: _documents(test)) if test else None,
        meta={"labels": labels, "train_file": str(train), "val_file": str(test) if test else None},
    )
