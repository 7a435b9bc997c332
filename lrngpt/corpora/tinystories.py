"""`tinystories[:PATH]`: the TinyStoriesV2-GPT4 train/valid files, with their own split.

PATH is a directory holding TinyStoriesV2-GPT4-train.txt and -valid.txt (or .txt.gz). Without PATH
both files are downloaded from Hugging Face into cache_dir()/tinystories (about 2.2 GB); set
LRN_TINYSTORIES_URL to use a mirror.
"""

from __future__ import annotations

from pathlib import Path

from lrngpt.corpora import Corpus
from lrngpt.corpora.download import download_files
from lrngpt.corpora.text import find_named, fingerprint_files, iter_documents
from lrngpt.errors import UserError

URL = "https://huggingface.co/datasets/roneneldan/TinyStories/resolve/main"
TRAIN, VALID = "TinyStoriesV2-GPT4-train.txt", "TinyStoriesV2-GPT4-valid.txt"
# (bytes, sha256) of the files at dataset revision f54c09fd23315a6f9c86f9dc80f725de7d8f9c64, as
# reported identically by several independent projects that downloaded them (not measured here:
# this machine has no network). If Hugging Face ever changes the files, the check fails loudly.
EXPECTED = {
    TRAIN: (2_227_753_162, "6418d412de72888f52b5142c761ac21a582f7d1166f0bfbdb5f03ccfdec90443"),
    VALID: (22_502_601, "6874bae9a4c1a4e7edcf0e53b86c17817e9cf881fc75ff2368da457b80c0585d"),
}


def _local_files(path: str) -> tuple[Path, Path]:
    directory = Path(path).expanduser()
    if not directory.is_dir():
        raise UserError(f"tinystories:{path}: not a directory; give the directory that holds {TRAIN} "
                        f"and {VALID}")
    return find_named(directory, TRAIN, "tinystories"), find_named(directory, VALID, "tinystories")


def _downloaded_files() -> tuple[Path, Path]:
    train, valid = download_files("LRN_TINYSTORIES_URL", URL, "tinystories", EXPECTED)
    return train, valid


def tinystories_corpus(path: str | None) -> Corpus:
    """The corpus for `tinystories[:PATH]`: train file for training, valid file as its own split."""
    train, valid = _local_files(path) if path else _downloaded_files()
    return Corpus(
        spec=f"tinystories:{path}" if path else "tinystories",
        kind="tinystories",
        fingerprint=fingerprint_files("tinystories", [(train, "train"), (valid, "valid")]),
        train_docs=lambda: iter_documents([train]),
        val_docs=lambda: iter_documents([valid]),
        meta={"train_file": str(train), "val_file": str(valid)},
    )
