"""Hash a corpus once: fingerprints recognised by the files' stat, as git's index does.

`cached_fingerprint` remembers a sha256 in CACHE_DIR/fingerprints.json under each file's path, size,
mtime_ns, ctime_ns, inode and device; `LRN_VERIFY=1` always hashes. A file whose mtime is within
`RACY_NS` of the hash's start is not remembered (git's "racily clean").
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from lrngpt.core import log as logging
from lrngpt.core.fsio import write_json
from lrngpt.core.once import parsed
from lrngpt.corpora.download import cache_dir
from lrngpt.errors import UserError

CACHE_NAME = "fingerprints.json"
RACY_NS = 2_000_000_000  # 2 s: coarser than any filesystem's mtime granularity in use (FAT's)
MAX_ENTRIES = 512  # the oldest written entries are dropped past this
_verify = False


def set_verify(on: bool = True) -> None:
    """Re-hash every corpus in this process (`lrn data prepare --verify`)."""
    global _verify
    _verify = bool(on)


def verifying() -> bool:
    return _verify or os.environ.get("LRN_VERIFY", "") not in ("", "0")


def cache_path() -> Path:
    return cache_dir() / CACHE_NAME


def _stat_key(kind: str, files: list[tuple[Path, str]]) -> tuple[str, int] | None:
    """The key of this call (the kind, each file's path, name and stat) and the newest mtime_ns."""
    parts: list[object] = [kind]
    newest = 0
    for path, name in files:
        try:
            st = os.stat(path)
        except OSError:
            return None  # the hash itself says what is wrong with the file
        parts.append([os.path.realpath(path), name, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino,
                      st.st_dev])
        newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest(), newest


def read_entries(name: str) -> dict:
    """The "entries" object of the JSON cache file `name` in cache_dir() ({} when damaged or absent),
    read once per command while the file stays the same (lrngpt.core.once)."""
    return parsed(cache_dir() / name, "cache entries", _entries)


def _entries(path: Path) -> dict:
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))["entries"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return entries if isinstance(entries, dict) else {}


def write_entries(name: str, entries: dict, **fields) -> None:
    """Write the JSON cache file `name`; one that cannot be written (read-only, full) is no cache."""
    try:
        cache_dir().mkdir(parents=True, exist_ok=True)
        write_json(cache_dir() / name, {"version": 1, **fields, "entries": entries})
    except (OSError, UserError) as e:
        logging.debug(f"{name} not written ({type(e).__name__}: {e})")


def cached_fingerprint(kind: str, files: list[tuple[Path, str]], compute: Callable[[], str]) -> str:
    """`compute()` (the fingerprint of `files`), or the one remembered for files with this same stat."""
    started = time.time_ns()
    keyed = _stat_key(kind, files)
    if keyed is None:
        return compute()
    key, newest = keyed
    what = f"{kind} fingerprint of {len(files)} file(s)"
    found = read_entries(CACHE_NAME).get(key)
    if not verifying() and isinstance(found, dict) and isinstance(found.get("fingerprint"), str):
        logging.debug(f"{what}: same stat as in {cache_path()}, files not read")
        return found["fingerprint"]
    fingerprint = compute()
    after = _stat_key(kind, files)
    if after is not None and after[0] == key and newest < started - RACY_NS:  # unchanged while read, not racy
        entries = {k: v for k, v in read_entries(CACHE_NAME).items() if k != key}  # the newest last:
        entries[key] = {"fingerprint": fingerprint, "kind": kind, "files": len(files)}
        write_entries(CACHE_NAME, dict(list(entries.items())[-MAX_ENTRIES:]))
        logging.debug(f"{what}: hashed{' (verify)' if verifying() else ''} and remembered")
    else:
        logging.debug(f"{what}: hashed, not remembered (a file changed in the last {RACY_NS // 10**9} s, "
                      "or while it was read)")
    return fingerprint
