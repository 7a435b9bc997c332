"""A file's parsed content, kept while the file stays the same: a command reads each of its files once.

The key is the file's stat: lrn replaces a file by renaming a new one in (a new inode) and appends to
metrics.jsonl (a new size), so a changed file is read again. Each caller gets its own copy.
"""

from __future__ import annotations

import copy
import os
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
KEEP = 256  # files kept: a chapter's sweeps hold a few dozen runs of three or four files each
_kept: OrderedDict[tuple, Any] = OrderedDict()


def parsed(path: Path, what: str, parse: Callable[[Path], T]) -> T:
    """`parse(path)` (named `what`: one parser a name), or a copy of what it gave while the file is the same."""
    try:
        st = os.stat(path)
    except OSError:
        return parse(path)  # missing or unreadable: the parser says so
    key = (os.path.abspath(path), what, st.st_ino, st.st_size, st.st_mtime_ns)
    if key not in _kept:
        _kept[key] = parse(path)
        if len(_kept) > KEEP:
            _kept.popitem(last=False)
    _kept.move_to_end(key)
    return copy.deepcopy(_kept[key])
