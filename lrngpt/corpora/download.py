"""Resumable, checked downloads into the cache directory (standard library urllib only).

A download streams into `<dest>.part`. An interrupted transfer leaves the `.part` file in place and
the next attempt resumes it with an HTTP Range request; it starts over from zero when the server
ignores Range (200) or answers with a part that does not start where the file stopped (206 with
another Content-Range). Once complete, the file's size and sha256 are checked when known: a good
file is renamed to `dest`; a bad one is moved aside to `<dest>.bad` (replacing an older one) and
never used, so the next run downloads afresh while the user can still inspect what arrived. An
existing `dest` that no longer matches is moved aside the same way and fetched again. A file
of known size is never read past it (one byte more says it is the wrong file): a mirror that
streams without end stops there instead of filling the disk.
"""

from __future__ import annotations

import http.client
import os
import re
import urllib.error
import urllib.request
from pathlib import Path

from lrngpt.core import log as logging
from lrngpt.core.fsio import FULL_ERRNOS, DiskFull, disk_full_message, replace_file
from lrngpt.core.record import sha256_file
from lrngpt.errors import UserError

ATTEMPTS = 3  # a dropped connection is resumed this many times before giving up
TIMEOUT_S = 60
BLOCK = 1 << 20


def cache_dir() -> Path:
    """$LRN_CACHE_DIR, else $XDG_CACHE_HOME/lrngpt, else ~/.cache/lrngpt."""
    if os.environ.get("LRN_CACHE_DIR"):
        return Path(os.environ["LRN_CACHE_DIR"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "lrngpt"


def pinned_problem(path: Path, size: int | None, sha256: str | None, digest=sha256_file) -> str | None:
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


class _Interrupted(Exception):
    """The connection dropped mid-transfer; the .part file holds what arrived."""


class _TooLong(Exception):
    """The server sends more than the pinned size; `announced` is its Content-Length total, if any."""

    def __init__(self, announced: int | None):
        super().__init__(announced)
        self.announced = announced


def _fetch(url: str, part: Path, progress: bool | None, size: int | None = None) -> None:
    """One HTTP request that appends to (or restarts) `part` until the server's body is complete,
    never past `size` bytes in all: a server that sends more, or streams without end, does not fill
    the disk (_TooLong: the file is not the pinned one)."""
    offset = part.stat().st_size if part.exists() else 0
    req = urllib.request.Request(url, headers={"User-Agent": "lrngpt"})
    if offset:
        req.add_header("Range", f"bytes={offset}-")
    try:
        resp = urllib.request.urlopen(req, timeout=TIMEOUT_S)
    except urllib.error.HTTPError as e:
        if e.code == 416 and offset:  # our partial file is not a prefix the server recognises
            part.unlink()
            raise _Interrupted() from None
        raise
    with resp:
        match = re.match(r"bytes (\d+)-\d+/(\d+|\*)", resp.headers.get("Content-Range", ""))
        if resp.status == 206 and not (match and int(match[1]) == offset):
            # a part of the file, but not the one asked for (or unlabelled): appending it would
            # corrupt the file, so drop what we have and start over with a plain request
            part.unlink(missing_ok=True)
            raise _Interrupted()
        if resp.status == 206 and match:  # (a 206 without the range asked for was dropped above)
            mode, total = "ab", match[2]
            total = int(total) if total != "*" else None
        else:  # the server ignored Range (200): start over
            mode, offset = "wb", 0
            total = int(resp.headers["Content-Length"]) if resp.headers.get("Content-Length") else None
        expected = None if total is None else total - offset
        got = 0
        room = None if size is None else max(0, size - offset)
        with open(part, mode) as f, logging.progress(
            total=total, initial=offset, unit="B", unit_scale=True, unit_divisor=1024,
            desc=part.name.removesuffix(".part"), enabled=progress, leave=True,
        ) as bar:
            while True:
                try:  # never more than one byte past the pinned size: that byte says the file is not it
                    block = resp.read(BLOCK if room is None else min(BLOCK, room + 1 - got))
                except (OSError, http.client.HTTPException):
                    break  # a dropped connection: the count check below resumes it
                if not block:  # also what read() returns on a truncated body, hence the count check
                    break
                if room is not None and got + len(block) > room:
                    f.write(block[: room - got])
                    raise _TooLong(total)
                f.write(block)
                got += len(block)
                bar.update(len(block))
    if expected is not None and got < expected:
        raise _Interrupted()


def download(url: str, dest: Path, *, size: int | None, sha256: str | None,
             progress: bool | None = None) -> Path:
    """Fetch `url` into `dest` (resuming `<dest>.part`), check size/sha256 when given, return `dest`.

    A progress bar shows on a terminal (`progress` None), or as `progress` says.

    An existing `dest` that matches is returned without touching the network.
    """
    dest = Path(dest)
    if dest.exists():
        if pinned_problem(dest, size, sha256) is None:
            return dest
        replace_file(dest, dest.with_suffix(dest.suffix + ".bad"))  # stale or corrupt: fetch it again
    part = dest.with_suffix(dest.suffix + ".part")
    if part.exists() and size is not None and part.stat().st_size > size:
        part.unlink()  # longer than the real file: cannot be a prefix of it
    too_long = None
    for attempt in range(1, ATTEMPTS + 1):
        if size is not None and part.exists() and part.stat().st_size == size:
            break  # a previous run got every byte but stopped before checking
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            _fetch(url, part, progress, size)
            break
        except _TooLong as e:
            too_long = f"size {e.announced} bytes" if e.announced else "size: it goes on past that"
            break
        except _Interrupted:
            if attempt == ATTEMPTS:
                have = part.stat().st_size if part.exists() else 0
                raise UserError(
                    f"the download of {url} stopped after {have} bytes; the partial file {part} is kept: "
                    "run the command again to resume it"
                ) from None
        except urllib.error.HTTPError as e:
            raise UserError(f"{url}: the server answered HTTP {e.code} {e.reason}; check the URL, or "
                            "download the file yourself and pass a local PATH instead") from None
        except ValueError as e:  # urllib's word for a malformed URL
            raise UserError(f"cannot download {url!r}: {e}") from None
        except (urllib.error.URLError, http.client.HTTPException, TimeoutError, ConnectionError) as e:
            reason = getattr(e, "reason", None) or e
            raise Unreachable(
                f"this machine could not reach {url} ({reason}); check the network, or download the "
                f"file yourself and pass a local PATH instead (a partial download, if any, is kept in {part})",
                url, str(reason),
            ) from None
        except OSError as e:  # the local side: permissions, a full disk
            if e.errno in FULL_ERRNOS:
                raise DiskFull(e.errno, disk_full_message(part)) from None
            raise UserError(f"cannot write {part}: {e.strerror or e}; free some space or set LRN_CACHE_DIR "
                            "to a writable directory") from None
    if problem := (too_long and f"{too_long}, expected {size}") or pinned_problem(part, size, sha256):
        bad = dest.with_suffix(dest.suffix + ".bad")
        replace_file(part, bad)
        raise UserError(f"the file downloaded from {url} has the wrong {problem}; it was moved to {bad} "
                        "and not used. Run again to download it afresh, or pass a local PATH instead")
    replace_file(part, dest)
    return dest


def download_files(base_url: str, subdir: str, expected: dict[str, tuple[int | None, str | None]]) -> list[Path]:
    """Each file named in `expected` (name -> size, sha256), fetched from `base_url`/name into
    cache_dir()/subdir (a file already there and right is not fetched again)."""
    return [download(f"{base_url.rstrip('/')}/{name}", cache_dir() / subdir / name, size=size, sha256=sha256)
            for name, (size, sha256) in expected.items()]
