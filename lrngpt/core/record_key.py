"""The secret that signs lrn's ownership records, so a record lrn did not write names nothing.

A record (`.lrn-output`, lrngpt.core.record) names the files lrn may replace. Anyone can write a
file of that name by hand, or copy one from elsewhere, naming a file of theirs with its true
sha256; unsigned, lrn would then replace that file without --force. So lrn signs every record it
writes with HMAC-SHA256 under a per-user key that only lrn writes, and a record whose signature does
not verify names no file as lrn's (its files are the user's, as if there were no record).

The key: `record-key` (32 random bytes, mode 0600, in a 0700 directory) under $LRN_STATE_DIR, else
$XDG_STATE_HOME/lrn, else ~/.local/state/lrn; where none of those can be written (a read-only home),
under the temporary directory in `lrn-UID`, a directory owned by this user and no one else.

What it protects: a hand-written record, one copied from another directory or another user, one
edited (a hash added, a name changed), one from an lrn before records were signed: none makes a
file lrn's. What it cannot: the key is the user's own file, so a user who reads it and computes the
HMAC can still sign a record; another key (a new home, a deleted key file) makes every earlier
output read-only to lrn (read and resumed, never replaced), the safe side.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
import tempfile
from pathlib import Path

from lrngpt.core.fsio import create_once

KEY_NAME = "record-key"
KEY_BYTES = 32
_KEYS: dict[str, bytes] = {}  # key directory -> key: read once per process


def key_dirs() -> list[Path]:
    """Where the key may live, in order of preference."""
    if os.environ.get("LRN_STATE_DIR"):
        first = Path(os.environ["LRN_STATE_DIR"]).expanduser()
    else:
        base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
        first = Path(base) / "lrn"
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return [first, Path(tempfile.gettempdir()) / f"lrn-{uid}"]


def _own_dir(d: Path) -> bool:
    """`d` is a real directory of this user's that no one else may write (a key there stays secret)."""
    st = os.lstat(d)
    mine = not hasattr(os, "getuid") or st.st_uid == os.getuid()
    return stat.S_ISDIR(st.st_mode) and mine and not st.st_mode & 0o022


def _load_or_create(d: Path) -> bytes:
    d.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not _own_dir(d):
        raise PermissionError(f"{d} is not a private directory of this user")
    path = d / KEY_NAME
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        create_once(path, secrets.token_bytes(KEY_BYTES))  # two processes starting at once agree on one key
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as f:
        key = f.read(KEY_BYTES + 1)
    if len(key) != KEY_BYTES:
        raise ValueError(f"{path} is not a key lrn wrote")
    return key


def record_key() -> bytes | None:
    """This user's key, created on first use; None where no place can hold one (nothing is then lrn's)."""
    for d in key_dirs():
        if str(d) in _KEYS:
            return _KEYS[str(d)]
        try:
            _KEYS[str(d)] = key = _load_or_create(d)
            return key
        except (OSError, ValueError):
            continue
    return None


def signature(doc: dict, fields: tuple[str, ...]) -> str | None:
    """The HMAC of a record's fields (canonical JSON), or None without a key."""
    key = record_key()
    if key is None:
        return None
    canon = json.dumps({f: doc.get(f) for f in fields}, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hmac.new(key, canon.encode(), hashlib.sha256).hexdigest()


def verified(doc: dict, fields: tuple[str, ...]) -> bool:
    mac, expected = doc.get("mac"), signature(doc, fields)
    return isinstance(mac, str) and expected is not None and hmac.compare_digest(mac, expected)
