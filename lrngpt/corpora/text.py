"""`text:PATH[,PATH...]`: UTF-8 text files (.txt, .txt.gz) or directories of them, streamed in chunks;
documents are separated by the literal `<|endoftext|>` (a file without one is one document).
"""

from __future__ import annotations

import codecs
import contextlib
import gzip
import hashlib
import itertools
import os
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, cast

from lrngpt.core.fsio import check_regular, describe_os_error
from lrngpt.corpora.base import EOT, LIMITS, Corpus
from lrngpt.corpora.stat_cache import cached_fingerprint
from lrngpt.errors import UserError

CHUNK_SIZE = 1 << 20  # bytes read at a time
SUFFIXES = (".txt", ".txt.gz")


@contextlib.contextmanager
def open_bytes(path: Path, raw: bool = False) -> Iterator[BinaryIO]:
    """The file's bytes, decompressed when its name ends in .gz (unless `raw`); an error opening or
    reading it (permission, a directory, a corrupt .gz) is a UserError naming the file."""
    path = Path(path)
    try:
        with (gzip.open(path, "rb") if path.name.endswith(".gz") and not raw else open(path, "rb")) as f:
            yield cast(BinaryIO, f)
    except (gzip.BadGzipFile, EOFError, zlib.error) as e:
        raise UserError(f"corpus file {path} is not a valid gzip file ({e or type(e).__name__}): it is truncated "
                        "or not gzip; compress it again, or give the uncompressed file") from None
    except OSError as e:
        raise UserError(describe_os_error(path, e, "corpus file")) from None


def find_files(arg_paths: Iterable[str | Path], suffixes: tuple[str, ...] = SUFFIXES) -> list[tuple[Path, str]]:
    """(file, name) pairs in reading order: each argument in turn, a directory's files with one of
    `suffixes` recursively in sorted order. `name` is the path relative to the argument (the
    fingerprint uses it, so moving a corpus elsewhere keeps its fingerprint)."""
    found = []
    for arg in arg_paths:
        p = Path(arg).expanduser()
        if p.is_dir():
            files = sorted(walk(p, suffixes))
            if not files:
                raise UserError(f"{p}: no {' or '.join(suffixes)} files in this directory")
            found += [(f, f.relative_to(p).as_posix()) for f in files]
        elif p.is_file():
            found.append((p, p.name))
        else:  # say what is there: a named pipe, a device, a broken link, nothing
            check_regular(p, "corpus file")
            raise UserError(describe_os_error(p, FileNotFoundError(2, "no such file"), "corpus file"))
    return found


MAX_WALK_ENTRIES = 100_000  # names a corpus directory's walk looks at: a corpus, not a disk (200,000 names of / took 45 s at load 5)


def walk(top: Path, suffixes: tuple[str, ...]) -> Iterator[Path]:
    """The files under `top` ending in one of `suffixes`, bounded: on `top`'s file system only (like
    `find -xdev`: never /proc nor another disk), an unreadable directory named, at most MAX_WALK_ENTRIES."""
    seen = 0

    def unreadable(e: OSError) -> None:
        raise UserError(f"corpus directory {top}: cannot read {e.filename} ({e.strerror or e}); give a directory "
                        "whose subdirectories you can read, or the files themselves (text:a.txt,b.txt)")

    device = os.stat(top).st_dev
    for d, dirs, names in os.walk(top, onerror=unreadable):
        seen += len(dirs) + len(names)
        if seen > MAX_WALK_ENTRIES:
            raise UserError(f"corpus directory {top} holds more than {MAX_WALK_ENTRIES:,} files and directories; "
                            "give the directory that holds the corpus itself (e.g. text:data/books), not a "
                            "whole disk (or join its files into fewer)")
        dirs[:] = sorted(x for x in dirs if _on(device, os.path.join(d, x)))
        for name in names:
            f = Path(d) / name
            if name.endswith(suffixes) and f.is_file():
                yield f


def _on(device: int, path: str) -> bool:
    try:
        return os.lstat(path).st_dev == device
    except OSError:
        return False


def find_named(directory: Path, kind: str, *names: str) -> list[Path]:
    """Each of `names` (or `name.gz`) inside `directory`, for corpora made of known files."""
    if not directory.is_dir():
        check_regular(directory, f"{kind} corpus")  # /dev/null, a FIFO: said as what they are
        raise UserError(f"{kind}:{directory}: no such directory; give the directory that holds "
                        f"{' and '.join(names)}, or write {kind} to download them")
    found = []
    for name in names:
        if not (there := [f for f in (directory / name, directory / f"{name}.gz") if f.is_file()]):
            raise UserError(f"{kind}:{directory} has no {name} (or {name}.gz); put the file there, or omit the "
                            "path to download it")
        found.append(there[0])
    return found


def _decoded_chunks(path: Path, chunk_size: int) -> Iterator[str]:
    """The file as text, chunk by chunk; invalid UTF-8 is a UserError naming the byte offset."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    pos = 0  # bytes handed to the decoder so far
    with open_bytes(path) as f:
        for data in itertools.chain(iter(lambda: f.read(chunk_size), b""), [b""]):  # then b"": the final decode
            pending = len(decoder.getstate()[0])  # undecoded bytes from the previous chunk
            try:
                text = decoder.decode(data, final=not data)
            except UnicodeDecodeError as e:
                # e.start counts from the decoder's buffer, which begins `pending` bytes before pos
                where = " of the uncompressed text" if path.name.endswith(".gz") else ""
                raise UserError(
                    f"{path}: invalid UTF-8 at byte {pos - pending + e.start}{where}; "
                    "re-save the file as UTF-8"
                ) from None
            pos += len(data)
            if text:
                yield text


def split_documents(chunks: Iterable[str], sep: str = EOT, max_chars: int | None = None,
                    where: str = "the text") -> Iterator[str]:
    """Split a stream of text on `sep`, also across chunks; raw pieces. A piece longer than `max_chars`
    is a UserError naming `where` and the document as soon as it is that long (memory stays bounded;
    the text held is searched again with each chunk, at most max_chars / chunk times)."""
    index, tail = 0, ""  # the current document, from 0; its text so far

    def check(n: int) -> None:
        if max_chars is not None and n > max_chars:
            raise UserError(f"{where}: document {index + 1} (from 1) is longer than {max_chars:,} characters "
                            f"without a {sep} between documents; lrn reads a document whole (training a tokenizer "
                            f"on one costs about 100 bytes of memory a character), so separate the documents with "
                            f"{sep} or split the text into files")

    for chunk in chunks:
        *docs, tail = (tail + chunk).split(sep)
        for doc in docs:
            check(len(doc))
            yield doc
            index += 1
        check(len(tail) - len(sep) + 1)  # the end of `tail` may be the start of a separator
    check(len(tail))
    yield tail


def iter_documents(paths: Iterable[str | Path], chunk_size: int = CHUNK_SIZE) -> Iterator[str]:
    """Documents of the given files in order: separated by EOT, stripped, empty ones dropped; one
    longer than LIMITS.max_document_chars is a UserError naming its file."""
    for path in paths:
        path = Path(path)
        where = f"{path} (uncompressed)" if path.name.endswith(".gz") else str(path)
        for doc in split_documents(_decoded_chunks(path, chunk_size), max_chars=LIMITS.max_document_chars,
                                   where=where):
            doc = doc.lstrip("\ufeff").strip()  # a byte-order mark is not text
            if doc:
                yield doc


def bounded_lines(f: BinaryIO, path: Path, max_bytes: int | None = None) -> Iterator[tuple[int, bytes]]:
    """(line number from 1, raw line) of a binary file; a line past `max_bytes` (LIMITS.max_line_bytes)
    is a UserError once that much of it is read, so a file of one huge line is never held whole."""
    limit = LIMITS.max_line_bytes if max_bytes is None else max_bytes
    for lineno, line in enumerate(iter(lambda: f.readline(limit + 1), b""), 1):
        if len(line) > limit:
            where = " of the uncompressed text" if path.name.endswith(".gz") else ""
            raise UserError(f"{path}: line {lineno}{where} is longer than {limit:,} bytes; a line holds one "
                            "record (one document), so split it, or check that this is the right file")
        yield lineno, line


def fingerprint_files(kind: str, files: list[tuple[Path, str]]) -> str:
    """sha256 over the corpus kind and each file's name and bytes, in reading order; files whose stat is
    unchanged since an earlier call are not read again (lrngpt.corpora.stat_cache)."""
    return cached_fingerprint(kind, files, lambda: hash_files(kind, files))


def hash_files(kind: str, files: list[tuple[Path, str]]) -> str:
    """The fingerprint, computed from every byte of the files."""
    h = hashlib.sha256(f"{kind}\0".encode())
    for path, name in files:
        with open_bytes(path, raw=True) as f:
            h.update(f"{name}\0{path.stat().st_size}\0".encode())
            while block := f.read(CHUNK_SIZE):
                h.update(block)
    return h.hexdigest()


def _is_empty(path: Path) -> bool:
    with open_bytes(path) as f:
        return not f.read(1)


def files_corpus(kind: str, arg: str, files: list[tuple[Path, str]], read: Callable[[Path], Iterator[str]],
                 what: str, key: str | None = None, empty: Callable[[], bool] | None = None, **meta) -> Corpus:
    """The corpus `kind:arg` of `files` in order, each read by `read(path)`, fingerprinted under `key`
    (default `kind`); refused when `empty()` (by default: no file holds a document), `what` saying why."""
    paths = [f for f, _ in files]

    def docs() -> Iterator[str]:
        for p in paths:
            yield from read(p)

    if empty() if empty else next(docs(), None) is None:
        raise UserError(f"{kind}:{arg} has no documents: {what}; give files that contain text")
    return Corpus(spec=f"{kind}:{arg}", kind=kind, fingerprint=fingerprint_files(key or kind, files),
                  train_docs=docs, val_docs=None,
                  meta={"files": [str(p) for p in paths], **meta, "bytes": sum(p.stat().st_size for p in paths)})


def text_corpus(arg: str) -> Corpus:
    """The corpus for `text:PATH[,PATH...]`."""
    args = [a.strip() for a in arg.split(",") if a.strip()]
    if not args:
        raise UserError("text needs a path: write text:PATH[,PATH...] (files or directories of .txt/.txt.gz)")
    files = find_files(args)
    return files_corpus("text", arg, files, lambda path: iter_documents([path]), "every file is empty",
                        empty=lambda: all(_is_empty(f) for f, _ in files))  # one byte read: a load reads no corpus
