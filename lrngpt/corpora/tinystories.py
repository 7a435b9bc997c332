"""`tinystories[:PATH]`: the TinyStoriesV2-GPT4 train/valid files, with their own split; without PATH
downloaded (about 2.2 GB) from the Hub at a pinned revision. LRN_TINYSTORIES_URL names a mirror.
"""

from __future__ import annotations

import os
from pathlib import Path

from lrngpt.corpora.base import Corpus
from lrngpt.corpora.download import Unreachable, cache_dir
from lrngpt.corpora.hub_file import pinned_file
from lrngpt.corpora.text import find_named, fingerprint_files, iter_documents
from lrngpt.errors import UserError

REPOSITORY = "roneneldan/TinyStories"
# The dataset revision (a commit of the Hugging Face repository) whose files the book chapter's
# corpus is; `resolve/<commit>` serves exactly these bytes forever, `resolve/main` whatever is newest.
REVISION = "f54c09fd23315a6f9c86f9dc80f725de7d8f9c64"
ENDPOINT = "https://huggingface.co"
CACHE_SUBDIR = "tinystories"  # under cache_dir()
TRAIN, VALID = "TinyStoriesV2-GPT4-train.txt", "TinyStoriesV2-GPT4-valid.txt"
# (bytes, sha256) of the two files at REVISION: their Git LFS pointers' size and oid, as Hugging Face
# publishes them (and other projects report). Not measured here (no network); a file that differs is
# refused and never used.
EXPECTED = {
    TRAIN: (2_227_753_162, "6418d412de72888f52b5142c761ac21a582f7d1166f0bfbdb5f03ccfdec90443"),
    VALID: (22_502_601, "6874bae9a4c1a4e7edcf0e53b86c17817e9cf881fc75ff2368da457b80c0585d"),
}


def endpoint() -> str:
    """The Hub to download from: LRN_TINYSTORIES_URL, else HF_ENDPOINT, else huggingface.co."""
    return (os.environ.get("LRN_TINYSTORIES_URL") or os.environ.get("HF_ENDPOINT") or ENDPOINT).rstrip("/")


def base_url() -> str:
    """Where the files of REVISION live: `<endpoint>/datasets/<repo>/resolve/<REVISION>`."""
    return f"{endpoint()}/datasets/{REPOSITORY}/resolve/{REVISION}"


def cache_path() -> Path:
    return cache_dir() / CACHE_SUBDIR


def source() -> dict:
    """What `tinystories` (no PATH) stands for, without touching the network or the files."""
    return {"dataset": REPOSITORY, "revision": REVISION, "files": list(EXPECTED), "url": base_url(),
            "cache": str(cache_path())}


def downloaded_files() -> tuple[Path, Path]:
    """The two files in the cache, downloaded (and checked) when missing; offline, one line names the
    missing files, the cache directory and the ways on."""
    directory = cache_path()
    try:
        train, valid = (pinned_file(REPOSITORY, name, REVISION, directory, size=size, sha256=sha256,
                                    endpoint=endpoint()) for name, (size, sha256) in EXPECTED.items())
    except Unreachable as e:
        missing = [n for n in EXPECTED if not (directory / n).is_file()]
        raise UserError(
            f"the corpus tinystories (TinyStoriesV2-GPT4 at revision {REVISION[:12]}) is not in the cache "
            f"({', '.join(missing)} missing from {directory}) and {e.url} could not be reached ({e.reason}); "
            f"either put the files there (or point to their directory with data.corpus=tinystories:DIR), "
            "or train on another corpus with --set data.corpus=text:PATH or --set data.corpus=stories:SIZE "
            "(the result is then not the book chapter's)"
        ) from None
    return train, valid


def fetch() -> None:
    """Download the files the cache lacks, before any work that needs them (no hashing when both
    are there: loading the corpus checks them)."""
    if not all((cache_path() / name).is_file() for name in EXPECTED):
        downloaded_files()


def tinystories_corpus(path: str | None) -> Corpus:
    """The corpus for `tinystories[:PATH]`: train file for training, valid file as its own split."""
    train, valid = find_named(Path(path).expanduser(), "tinystories", TRAIN, VALID) if path else downloaded_files()
    return Corpus(
        spec=f"tinystories:{path}" if path else "tinystories",
        kind="tinystories",
        fingerprint=fingerprint_files("tinystories", [(train, "train"), (valid, "valid")]),
        train_docs=lambda: iter_documents([train]),
        val_docs=lambda: iter_documents([valid]),
        meta={"train_file": str(train), "val_file": str(valid)}
        | ({} if path else {"dataset": REPOSITORY, "revision": REVISION}),
    )
