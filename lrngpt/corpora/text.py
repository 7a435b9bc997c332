"""`text:PATH[,PATH...]`: UTF-8 text files (.txt, .txt.gz) or directories of them.

Documents are separated by the literal `<|endoftext|>` (the TinyStoriesV2 convention); a file
without one is a single document. Files are streamed in chunks, so a multi-GB file never sits in
memory whole (only the document being assembled does).
"""

from __future__ import annotations

import codecs
import contextlib
import gzip
import hashlib
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from lrngpt.core.fsio import check_regular, describe_os_error
from lrngpt.corpora import EOT, Corpus
from lrngpt.errors import UserError

CHUNK_SIZE = 1 << 20  # bytes read at a time
SUFFIXES = (".txt", ".txt.gz")


@contextlib.contextmanager
def open_bytes(path: Path, raw: bool = False) -> Iterator[BinaryIO]:
    """The file's bytes, decompressed when its name ends in .gz (unless `raw`).

    An error while opening or reading it is a UserError naming the file: permission denied, a
    directory, a truncated or corrupt .gz.
    """
    path = Path(path)
    try:
        with (gzip.open(path, "rb") if path.name.endswith(".gz") and not raw else open(path, "rb")) as f:
            yield f
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
            files = sorted(f for f in p.rglob("*") if f.is_file() and f.name.endswith(suffixes))
            if not files:
                raise UserError(f"{p}: no {' or '.join(suffixes)} files in this directory")
            found += [(f, f.relative_to(p).as_posix()) for f in files]
        elif p.is_file():
            found.append((p, p.name))
        else:  # say what is there: a named pipe, a device, a broken link, nothing
            check_regular(p, "corpus file")
            raise UserError(describe_os_error(p, FileNotFoundError(2, "no such file"), "corpus file"))
    return found


def find_named(directory: Path, name: str, kind: str) -> Path:
    """`name` or `name.gz` inside `directory` (for corpora made of known files)."""
    for candidate in (directory / name, directory / f"{name}.gz"):
        if candidate.is_file():
            return candidate
    raise UserError(f"{kind}:{directory} has no {name} (or {name}.gz); put the file there, or omit the "
                    "path to download it")


def _decoded_chunks(path: Path, chunk_size: int) -> Iterator[str]:
    """The file as text, chunk by chunk; invalid UTF-8 is a UserError naming the byte offset."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    pos = 0  # bytes handed to the decoder so far
    with open_bytes(path) as f:
        while True:
            data = f.read(chunk_size)
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
            if not data:
                return


def split_documents(chunks: Iterable[str], sep: str = EOT) -> Iterator[str]:
    """Split a stream of text on `sep`, also when a separator straddles two chunks.

    Yields raw pieces (unstripped, possibly empty). The unsearched `tail` is kept no longer than
    len(sep) - 1 characters: anything before that was already searched together with enough
    following text to see a whole separator.
    """
    done: list[str] = []  # searched pieces of the current document
    tail = ""
    keep = len(sep) - 1
    for chunk in chunks:
        parts = (tail + chunk).split(sep)
        if len(parts) > 1:
            yield "".join(done) + parts[0]
            yield from parts[1:-1]
            done = []
        tail = parts[-1]
        if len(tail) > keep:
            done.append(tail[: len(tail) - keep])
            tail = tail[len(tail) - keep :]
    yield "".join(done) + tail


def iter_documents(paths: Iterable[str | Path], chunk_size: int = CHUNK_SIZE) -> Iterator[str]:
    """Documents of the given files in order: separated by EOT, stripped, empty ones dropped."""
    for path in paths:
        for doc in split_documents(_decoded_chunks(Path(path), chunk_size)):
            doc = doc.lstrip("\ufeff").strip()  # a byte-order mark is not text
            if doc:
                yield doc


def fingerprint_files(kind: str, files: list[tuple[Path, str]]) -> str:
    """sha256 over the corpus kind and each file's name and raw bytes, in reading order (streamed).

    Computed once: files whose stat (path, size, mtime, inode) is unchanged since an earlier
    call, in this process or an earlier one, are not read again (lrngpt.corpora.stat_cache)."""
    from lrngpt.corpora.stat_cache import cached_fingerprint

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


def text_corpus(arg: str) -> Corpus:
    """The corpus for `text:PATH[,PATH...]`."""
    args = [a.strip() for a in arg.split(",") if a.strip()]
    if not args:
        raise UserError("text needs a path: write text:PATH[,PATH...] (files or directories of .txt/.txt.gz)")
    files = find_files(args)
    if all(_is_empty(f) for f, _ in files):
        raise UserError(f"text:{arg}: every file is empty; give files that contain text")
    paths = [f for f, _ in files]
    return Corpus(
        spec=f"text:{arg}",
        kind="text",
        fingerprint=fingerprint_files("text", files),
        train_docs=lambda: iter_documents(paths),
        val_docs=None,
        meta={"files": [str(p) for p in paths], "bytes": sum(p.stat().st_size for p in paths)},
    )
