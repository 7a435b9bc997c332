"""Resumable downloads into the cache directory (standard library urllib only).

A download streams into `<dest>.part` and resumes with an HTTP Range request, starting over when the
server ignores or cannot serve it or sends a part that starts elsewhere; `<dest>` appears only once
the whole body has arrived. (huggingface_hub's http_get appends a misplaced 206; pooch never resumes.)
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
from lrngpt.errors import UserError

ATTEMPTS = 3  # a dropped connection is resumed this many times before giving up
TIMEOUT_S = 60
BLOCK = 1 << 20


def cache_dir() -> Path:
    """$LRN_CACHE_DIR, else $XDG_CACHE_HOME/lrngpt, else ~/.cache/lrngpt."""
    if os.environ.get("LRN_CACHE_DIR"):
        return Path(os.environ["LRN_CACHE_DIR"]).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "lrngpt"


def write_error(e: OSError, where: Path) -> Exception:
    """A download's local side failing (a full disk, a permission, a read-only disk), said in one line."""
    if e.errno in FULL_ERRNOS:
        return DiskFull(e.errno, disk_full_message(where))
    return UserError(f"cannot write {where}: {e.strerror or e}; free some space or set LRN_CACHE_DIR to a "
                     "writable directory")


class Unreachable(UserError):
    """The server could not be reached (no network, a closed port): `url` and `reason` say which, in
    one message for every downloader (`kept`: where a partial download is kept)."""

    def __init__(self, url: str, reason: str, kept: str = ""):
        super().__init__(f"this machine could not reach {url} ({reason}); check the network, or download the "
                         f"file yourself and pass a local PATH instead{kept}")
        self.url, self.reason = url, reason


def _fetch(url: str, part: Path, progress: bool | None) -> bool:
    """One request that appends to (or restarts) `part`; True when the body arrived whole, False when
    it stopped short or must start over."""
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
        return False
    with resp:
        start = re.match(r"bytes (\d+)-", resp.headers.get("Content-Range", ""))
        if resp.status != 206:  # the server ignored Range (200): start over
            offset = 0
        elif not start or int(start[1]) != offset:
            part.unlink(missing_ok=True)  # a part, but not the one asked for: appending it would corrupt the file
            return False
        length = resp.headers.get("Content-Length")
        total = offset + int(length) if length else None
        with open(part, "ab" if offset else "wb") as f, logging.progress(
                total=total, initial=offset, unit="B", unit_scale=True, unit_divisor=1024,
                desc=part.name.removesuffix(".part"), enabled=progress, leave=True) as bar:
            while True:
                try:
                    block = resp.read(BLOCK)
                except (OSError, http.client.HTTPException):
                    return False  # a dropped connection: resumed
                if not block:  # also what read() returns on a truncated body, hence the size check
                    return total is None or f.tell() >= total
                f.write(block)
                bar.update(len(block))


def download(url: str, dest: Path, *, progress: bool | None = None) -> Path:
    """Fetch `url` into `dest` (resuming `<dest>.part`) and return `dest`; a `dest` already there is
    returned without the network. `progress` None: a bar on a terminal."""
    dest = Path(dest)
    part = dest.with_name(dest.name + ".part")
    if dest.exists():
        return dest
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        whole = any(_fetch(url, part, progress) for _ in range(ATTEMPTS))  # until one is whole
    except urllib.error.HTTPError as e:
        raise UserError(f"{url}: the server answered HTTP {e.code} {e.reason}; check the URL, or download the "
                        "file yourself and pass a local PATH instead") from None
    except ValueError as e:  # urllib's word for a malformed URL
        raise UserError(f"cannot download {url!r}: {e}") from None
    except (urllib.error.URLError, http.client.HTTPException, TimeoutError, ConnectionError) as e:
        reason = getattr(e, "reason", None) or e
        raise Unreachable(url, str(reason), f" (a partial download, if any, is kept in {part})") from None
    except OSError as e:  # the local side
        raise write_error(e, part) from None
    if not whole:
        raise UserError(f"the download of {url} stopped after {part.stat().st_size if part.exists() else 0} "
                        f"bytes; the partial file {part} is kept: run the command again to resume it")
    replace_file(part, dest)
    return dest
