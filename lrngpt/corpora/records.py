"""`jsonl:PATH[:FIELD]` and `parquet:PATH[:COLUMN]`: one document per record (default field `text`).

PATH is a file or a directory read recursively in sorted order. Parquet is read a batch at a time
through a 1 MiB buffer without pre-buffering (pyarrow's defaults read a whole column chunk). A bad
record stops with its file and line (or row); a lone UTF-16 surrogate is refused as `datasets` does.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from lrngpt.corpora.base import LIMITS, Corpus
from lrngpt.corpora.text import bounded_lines, files_corpus, find_files, open_bytes
from lrngpt.errors import UserError

DEFAULT_FIELD = "text"
JSONL_SUFFIXES = (".jsonl", ".jsonl.gz")
PARQUET_SUFFIXES = (".parquet",)
BATCH_ROWS = 1024
LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # what json.loads leaves of an unpaired \uD800-\uDFFF escape
PARQUET_BUFFER = 1 << 20  # bytes pyarrow reads from a column chunk at a time (0 would read it whole)


def split_spec(kind: str, arg: str, what: str) -> tuple[str, str]:
    """'PATH[:NAME]' -> (PATH, NAME or the default). A PATH that exists as written wins, so a
    path with a colon in it still works."""
    if not arg.strip():
        raise UserError(f"{kind} needs a path: write {kind}:PATH[:{what}] (a file or a directory)")
    if Path(arg).expanduser().exists():
        return arg, DEFAULT_FIELD
    path, sep, name = arg.rpartition(":")
    return (path, name or DEFAULT_FIELD) if sep and path else (arg, DEFAULT_FIELD)


NAMES = {type(None): "null", bool: "a boolean", int: "a number", float: "a number", list: "a list", dict: "an object"}


def describe(value) -> str:
    """How a JSON / Arrow value reads in a message."""
    return NAMES.get(type(value), f"a {type(value).__name__}")


def check_text(value, where: str, field: str) -> str:
    if not isinstance(value, str):
        raise UserError(f"{where}: {field!r} is {describe(value)}, not a string; every record's {field!r} "
                        "must hold the document's text")
    if len(value) > LIMITS.max_document_chars:
        raise UserError(f"{where}: {field!r} is {len(value):,} characters long, above the limit of "
                        f"{LIMITS.max_document_chars:,} for one document (lrn reads a document whole: training a "
                        "tokenizer on one costs about 100 bytes of memory a character); split it into documents")
    return value


def column_texts(batches: Iterable[list], where: str, column: str) -> Iterator[str]:
    """The stripped, non-empty strings of a column read a batch of rows at a time (a Parquet file,
    an Arrow dataset); a value that is not a string is a UserError naming its row."""
    for row, value in enumerate(itertools.chain.from_iterable(batches)):
        if text := check_text(value, f"{where}: row {row} (from 0)", column).strip():
            yield text


# ---- JSON Lines ---------------------------------------------------------------------------

def _json_int(digits: str) -> int | float:
    """A record's integer as JSON reads it, but one past Python's 4,300-digit limit as a float
    (infinite): no field lrn reads is a number, and the record is not refused for another field."""
    return int(digits) if len(digits) <= 4000 else float(digits)


def jsonl_documents(path: Path, field: str) -> Iterator[str]:
    with open_bytes(path) as f:
        for lineno, raw in bounded_lines(f, path):
            if not raw.strip():
                continue
            where = f"{path}: line {lineno}"
            try:
                record = json.loads(raw.rstrip(b"\r\n"), parse_int=_json_int)
            except UnicodeDecodeError:
                raise UserError(f"{where}: invalid UTF-8; re-save the file as UTF-8") from None
            except json.JSONDecodeError as e:
                raise UserError(f"{where} is not valid JSON ({e.msg.removesuffix(' at')} at column {e.colno}); "
                                "each line must hold one JSON object") from None
            except RecursionError:
                raise UserError(f"{where} nests lists or objects too deep to read; each line must hold one "
                                f"JSON object with a {field!r} string") from None
            if not isinstance(record, dict):
                raise UserError(f"{where} is {describe(record)}, not a JSON object with a {field!r} field")
            if field not in record:
                has = ", ".join(repr(k)[:40] for k in list(record)[:8]) or "no fields"
                raise UserError(f"{where} has no field {field!r} (it has {has}); name the field to read "
                                "with jsonl:PATH:FIELD")
            text = check_text(record[field], where, field).strip()
            if b"\\u" in raw and (m := LONE_SURROGATE.search(text)):  # (only an escape can make one)
                raise UserError(f"{where}: {field!r} holds a lone UTF-16 surrogate (\\u{ord(m[0]):04x} at character "
                                f"{m.start()}), which is not Unicode text; fix the record, or drop it")
            if text:
                yield text


def jsonl_corpus(arg: str) -> Corpus:
    """The corpus for `jsonl:PATH[:FIELD]`."""
    path, field = split_spec("jsonl", arg, "FIELD")
    return files_corpus("jsonl", arg, find_files([path], JSONL_SUFFIXES), lambda p: jsonl_documents(p, field),
                        f"no record has a non-empty {field!r}", f"jsonl\0{field}", field=field)


# ---- Parquet ------------------------------------------------------------------------------

def _open_parquet(path: Path, column: str):
    """The file, checked: readable, has `column`, and the column holds strings."""
    try:  # optional: its absence is said in one line
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise UserError("parquet: corpora need the pyarrow package: `pip install pyarrow` "
                        "(or `pip install lrngpt[parquet]`)") from None

    try:
        # pre_buffer=False: no read-ahead of whole row groups; buffer_size: stream each column chunk
        pf = pq.ParquetFile(path, pre_buffer=False, buffer_size=PARQUET_BUFFER)
    except (OSError, pa.ArrowException) as e:
        raise UserError(f"{path} cannot be read as Parquet ({str(e).splitlines()[0]})") from None
    schema = pf.schema_arrow
    if column not in schema.names:
        raise UserError(f"{path} has no column {column!r} (columns: {', '.join(schema.names)}); "
                        "name the column to read with parquet:PATH:COLUMN")
    kind = schema.field(column).type
    if str(kind) not in ("string", "large_string", "string_view"):
        raise UserError(f"{path}: column {column!r} holds {kind}, not strings; name a text column "
                        "with parquet:PATH:COLUMN")
    return pf


def parquet_documents(path: Path, column: str) -> Iterator[str]:
    """The column's values a batch of rows at a time (benchmarks/bench_parquet_memory.py); a damaged
    page is a UserError naming the file and the rows read."""
    import pyarrow as pa

    pf = _open_parquet(path, column)

    def batches() -> Iterator[list]:
        rows = 0
        try:
            for batch in pf.iter_batches(batch_size=BATCH_ROWS, columns=[column]):
                values = batch.column(0).to_pylist()
                rows += len(values)
                yield values
        except (OSError, pa.ArrowException, UnicodeDecodeError) as e:
            detail = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
            past = f" past row {rows:,} (from 0)" if rows else ""
            raise UserError(f"{path}: its data cannot be read{past} ({detail}): the file is damaged "
                            "(a page that does not decompress or decode); write it again, or leave it out") from None

    return column_texts(batches(), str(path), column)


def parquet_corpus(arg: str) -> Corpus:
    """The corpus for `parquet:PATH[:COLUMN]`."""
    path, column = split_spec("parquet", arg, "COLUMN")
    files = find_files([path], PARQUET_SUFFIXES)
    rows = sum(_open_parquet(p, column).metadata.num_rows for p, _ in files)  # checks every file's schema
    if rows == 0:
        raise UserError(f"parquet:{arg} has no rows; give files that contain text")
    return files_corpus("parquet", arg, files, lambda p: parquet_documents(p, column),
                        f"no record has a non-empty {column!r}", f"parquet\0{column}", column=column, rows=rows)
