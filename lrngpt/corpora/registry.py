"""A corpus string (`KIND[:ARG]`, docs/reference/corpora.md) and each kind's loader of ARG."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePath

from lrngpt.core import log as logging
from lrngpt.corpora.base import Corpus
from lrngpt.corpora.hf import hf_corpus
from lrngpt.corpora.nsmc import downloaded_files, nsmc_corpus
from lrngpt.corpora.records import jsonl_corpus, parquet_corpus
from lrngpt.corpora.stories import stories_corpus
from lrngpt.corpora.text import text_corpus
from lrngpt.corpora.tinystories import fetch as fetch_tinystories
from lrngpt.corpora.tinystories import source, tinystories_corpus
from lrngpt.errors import UserError

# kind -> its loader (of the argument after `KIND:`); a downloaded corpus with no argument is fetched
# (by DOWNLOADS[kind], which fetch() calls before any work)
LOADERS: dict[str, Callable[[str], Corpus]] = {
    "stories": stories_corpus,
    "text": text_corpus,
    "tinystories": tinystories_corpus,
    "nsmc": nsmc_corpus,
    "jsonl": jsonl_corpus,
    "parquet": parquet_corpus,
    "hf": hf_corpus,
}
KINDS = tuple(LOADERS)
DOWNLOADS: dict[str, Callable[[], object]] = {"tinystories": fetch_tinystories, "nsmc": downloaded_files}


def load_corpus(spec: str) -> Corpus:
    """Parse a corpus string and return the corpus it names."""
    kind, _, arg = spec.strip().partition(":")
    if kind not in LOADERS:
        raise UserError(f"unknown corpus kind {kind!r} in {spec.strip()!r}; use one of stories[:SIZE], text:PATH, "
                        "tinystories[:PATH], nsmc[:PATH], jsonl:PATH[:FIELD], parquet:PATH[:COLUMN], "
                        "hf:NAME[@REV][:CONFIG][:SPLIT][:COLUMN][?stream]")
    corpus = LOADERS[kind](arg)
    logging.debug(f"corpus {corpus.spec}: fingerprint {corpus.fingerprint[:12]}, "
                  f"{'its own validation split' if corpus.has_own_split else 'split by lrn'}"
                  + "".join(f", {k} {v}" for k, v in corpus.meta.items() if isinstance(v, str | int)))
    return corpus


def fetch(spec: str) -> None:
    """Download what a corpus string needs from the network, so a missing file or no network stops a
    command before it writes or trains anything. Corpora on disk need nothing."""
    kind, _, arg = spec.strip().partition(":")
    if not arg and kind in DOWNLOADS:
        DOWNLOADS[kind]()


def pinned_source(spec: str) -> dict | None:
    """Where a downloaded corpus comes from (dataset, revision, URL, cache), without any download;
    None for corpora read from disk or generated."""
    if spec.strip() == "tinystories":
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
