"""What every corpus is and may hold: `Corpus`, the end-of-text separator, the limits on one document
and one line, and `parse_size`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from lrngpt.core.validate import MAX_CORPUS_BYTES
from lrngpt.errors import UserError

EOT = "<|endoftext|>"


@dataclass
class DocumentLimits:
    """The BPE trainer holds about 100 bytes a character of a document, so a longer one is refused
    (a 1 MB .gz can hold a 1 GB line); one object read at each use, so a test can lower a limit."""

    max_document_chars: int = 1 << 25  # 33,554,432 characters: a long book is 3 million
    max_line_bytes: int = 1 << 27  # a JSONL or TSV line (JSON escapes make a document's line longer than its text)


LIMITS = DocumentLimits()


@dataclass(frozen=True)
class Corpus:
    """Documents streamed as strings, the corpus's own validation split if any, and a fingerprint of
    its content (it keys the token cache and guards --resume)."""

    spec: str
    kind: str
    fingerprint: str
    train_docs: Callable[[], Iterator[str]]
    val_docs: Callable[[], Iterator[str]] | None = None  # the corpus's own split, if any
    meta: dict = field(default_factory=dict)

    @property
    def has_own_split(self) -> bool:
        return self.val_docs is not None


UNITS = {"GB": 10**9, "MB": 10**6, "KB": 10**3}  # decimal, as disks and downloads count


def parse_size(text: str) -> int:
    """'5MB' -> 5_000_000, '512KB' -> 512_000, '1GB', '123' (bytes)."""
    t = text.strip().upper().replace("_", "")
    unit = next((u for u in (*UNITS, "B") if t.endswith(u)), "")
    try:
        size = float(t.removesuffix(unit)) * UNITS.get(unit, 1)
    except ValueError:
        raise UserError(f"cannot read size {text!r}; write it like 5MB, 512KB or 100000") from None
    if not 1 <= size <= MAX_CORPUS_BYTES:  # NaN and infinity included
        raise UserError(f"size {text!r} must be between 1 byte and {MAX_CORPUS_BYTES // 10**9:,}GB; "
                        "write it like 5MB")
    return int(size)
