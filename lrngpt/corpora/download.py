"""Resumable, checked downloads into the cache directory (standard library urllib only).

A download streams into `<dest>.part` and resumes with an HTTP Range request, starting over when the
server ignores or cannot serve it or sends a part that starts elsewhere; a file of known size is
never read past it. A complete file's size and sha256 are checked: a bad one moves to `<dest>.bad`.
(huggingface_hub's http_get appends a misplaced 206 and reads endless bodies; pooch never resumes.)
"""

from __future__ import annotations

import hashlib
import http.client
import os
import re
import urllib.error
import urllib.request
from pathlib import Path

from lrngpt.core import log as logging
from lrngpt.core.fsio import FULL_ERRNOS, DiskFull, disk_full_message, replace_file
from lrngpt.errors import UserError

ATTEMPTS = 3  # a dropped connection is resumed this many times before giving up
TIMEOUT_S = 60
BLOCK = 1 << 20


def cache_dir() -> Path:
    """$LRN_CACHE_DIR, else $XDG_CACHE_HOME/lrngpt, else ~/.cache/lrngpt."""
    if os.environ.get("LRN_CACHE_DIR"):
        return Path(os.environ["LRN_CACHE_DIR"]).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "lrngpt"


def sha256_of(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def pinned_problem(path: Path, size: int | None, sha256: str | None, digest=sha256_of) -> str | None:
    """What is wrong with `path` against its pinned size and sha256, or None when it matches (a download's
    and a Hub file's check). `digest(path)` gives the file's sha256: a cached one for a file kept."""
    actual = path.stat().st_size
    if size is not None and actual != size:
        return f"size {actual} bytes, expected {size}"
    if sha256 is not None and (found := digest(path)) != sha256.lower():
        return f"sha256 {found}, expected {sha256}"
    return None


class Unreachable(UserError):
    """The server could not be reached (no network, a closed port): `url` and `reason` say which."""

    def __init__(self, message: str, url: str, reason: str):
        super().__init__(message)
        self.url, self.reason = url, reason


def _fetch(url: str, part: Path, progress: bool | None, size: int | None) -> str:
    """One request that appends to (or restarts) `part`: "done" when the body arrived whole, "again" when
    it stopped short or must start over, or what is wrong when the server sends more than `size` bytes."""
    offset = part.stat().st_size if part.exists() else 0
    req = urllib.request.Request(url, headers={"User-Agent": "lrngpt"})
    if offset:
        req.add_header("Range", f"bytes={offset}-")
    try:
        resp = urllib.request.urlopen(req, timeout=TIMEOUT_S)
    except urllib.error.HTTPError as e:
        if e.code != 416 or not offset:
            raise
        part.unlink()  # our partial file is not a prefix the server recognises
        return "again"
    with resp:
        match = re.match(r"bytes (\d+)-\d+/(\d+|\*)", resp.headers.get("Content-Range", ""))
        if resp.status == 206 and not (match and int(match[1]) == offset):
            part.unlink(missing_ok=True)  # a part, but not the one asked for: appending it would corrupt the file
            return "again"
        if resp.status == 206 and match:
            total = int(match[2]) if match[2] != "*" else None
        else:  # the server ignored Range (200): start over
            offset, length = 0, resp.headers.get("Content-Length")
            total = int(length) if length else None
        room, got = None if size is None else max(0, size - offset), 0
        with open(part, "ab" if offset else "wb") as f, logging.progress(
                total=total, initial=offset, unit="B", unit_scale=True, unit_divisor=1024,
                desc=part.name.removesuffix(".part"), enabled=progress, leave=True) as bar:
            while True:
                try:  # never more than one byte past the pinned size: that byte says the file is not it
                    block = resp.read(BLOCK if room is None else min(BLOCK, room + 1 - got))
                except (OSError, http.client.HTTPException):
                    return "again"  # a dropped connection: resumed
                if room is not None and got + len(block) > room:
                    f.write(block[: room - got])
                    return f"size {total} bytes" if total else "size: it goes on past that"
                if not block:  # also what read() returns on a truncated body, hence the count
                    return "again" if total is not None and offset + got < total else "done"
                f.write(block)
                got += len(block)
                bar.update(len(block))


def download(url: str, dest: Path, *, size: int | None, sha256: str | None,
             progress: bool | None = None) -> Path:
    """Fetch `url` into `dest` (resuming `<dest>.part`), check size/sha256 when given, return `dest`; a
    `dest` that matches is returned without the network. `progress` None: a bar on a terminal."""
    dest = Path(dest)
    part, bad = dest.with_name(dest.name + ".part"), dest.with_name(dest.name + ".bad")
    if dest.exists():
        if pinned_problem(dest, size, sha256) is None:
            return dest
        replace_file(dest, bad)  # stale or corrupt: fetch it again
    if part.exists() and size is not None and part.stat().st_size > size:
        part.unlink()  # longer than the real file: cannot be a prefix of it

    def whole() -> bool:  # every pinned byte is there (a previous run may have stopped before checking)
        return size is not None and part.exists() and part.stat().st_size == size

    outcome = "again"
    try:
        for _ in range(ATTEMPTS):
            if outcome != "again" or whole():
                break
            dest.parent.mkdir(parents=True, exist_ok=True)
            outcome = _fetch(url, part, progress, size)
    except urllib.error.HTTPError as e:
        raise UserError(f"{url}: the server answered HTTP {e.code} {e.reason}; check the URL, or download the "
                        "file yourself and pass a local PATH instead") from None
    except ValueError as e:  # urllib's word for a malformed URL
        raise UserError(f"cannot download {url!r}: {e}") from None
    except (urllib.error.URLError, http.client.HTTPException, TimeoutError, ConnectionError) as e:
        reason = getattr(e, "reason", None) or e
        raise Unreachable(f"this machine could not reach {url} ({reason}); check the network, or download the "
                          f"file yourself and pass a local PATH instead (a partial download, if any, is kept in "
                          f"{part})", url, str(reason)) from None
    except OSError as e:  # the local side: permissions, a full disk
        if e.errno in FULL_ERRNOS:
            raise DiskFull(e.errno, disk_full_message(part)) from None
        raise UserError(f"cannot write {part}: {e.strerror or e}; free some space or set LRN_CACHE_DIR to a "
                        "writable directory") from None
    if outcome == "again" and not whole():
        raise UserError(f"the download of {url} stopped after {part.stat().st_size if part.exists() else 0} "
                        f"bytes; the partial file {part} is kept: run the command again to resume it")
    too_long = outcome not in ("again", "done") and f"{outcome}, expected {size}"
    if problem := too_long or pinned_problem(part, size, sha256):
        replace_file(part, bad)
        raise UserError(f"the file downloaded from {url} has the wrong {problem}; it was moved to {bad} "
                        "and not used. Run again to download it afresh, or pass a local PATH instead")
    replace_file(part, dest)
    return dest

