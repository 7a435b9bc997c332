"""Files: every write atomic (a temporary `.NAME.tmp-PID-RANDOM` beside the target, fsynced and
renamed over it), every OS error on a user's path one line (`describe_os_error` words them all): a
full disk is `DiskFull` (exit 1, the earlier file intact), an error the user can fix a UserError.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import re
import secrets
import shutil
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from lrngpt.core import log as logging
from lrngpt.errors import UserError, option

_TEMP = re.compile(r"^\.(?P<name>.+)\.tmp-(?P<pid>\d+)(-[0-9a-f]+)?$")
MAX_INT_DIGITS = 100  # an integer lrn takes fits in 64 bits (19 digits); past 4,300 Python refuses str()


class DiskFull(OSError):
    """No space left while writing; the earlier file is untouched."""


FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
# OS errors that say something about the path itself (not its bytes): a checkpoint that fails with another is damaged
USER_ERRNOS = {errno.ENOENT, errno.EEXIST, errno.EISDIR, errno.ENOTDIR, errno.EACCES, errno.EPERM, errno.EROFS,
               errno.EFBIG, errno.ELOOP, errno.ENAMETOOLONG}


def disk_full_message(path: str | Path | None) -> str:
    """The one disk-full line (the README documents it): where, how much is free, what to do."""
    if path is None:
        return "disk full; free some space and run the command again"
    path = Path(path)
    free = next((shutil.disk_usage(p).free for p in (path.parent, *path.parents) if p.is_dir()), 0)
    return (f"disk full while writing {path} ({free:,} bytes free); "
            "free some space and run the command again (the earlier file is intact)")


def describe_os_error(path: str | Path | None, e: OSError, what: str = "path") -> str:
    """The one line for any OSError on `path` (None: not known): the path and the system's reason, which
    says what to fix (a full disk: where, and how much is free). A library may name it in bytes."""
    path = path.decode("utf-8", "backslashreplace") if isinstance(path, bytes) else path
    if e.errno in FULL_ERRNOS:
        return disk_full_message(path)
    return ((f"{what} {path}" if path else "a path lrn uses") + f": {(e.strerror or str(e)).lower()}; correct the path "
            "or its permissions, or choose another path")


@contextlib.contextmanager
def user_path(path: str | Path, what: str = "path", own: Path | None = None) -> Iterator[None]:
    """Turn an OS error on a path the user gave (or lrn writes) into one line naming it: a UserError,
    or DiskFull (exit 1) when the disk is full. `own`: lrn writes `path` through this temporary name;
    an error about another path is left as it is (the CLI says it with that path)."""
    try:
        yield
    except UnicodeDecodeError as e:
        if own:  # (what lrn writes is no text it reads)
            raise
        raise UserError(f"{what} {path} is not UTF-8 text (byte {e.start}); re-save it as UTF-8") from None
    except DiskFull:
        raise
    except OSError as e:
        if e.errno in FULL_ERRNOS:
            raise DiskFull(e.errno, disk_full_message(path)) from None
        name = Path(os.fsdecode(e.filename)) if isinstance(e.filename, str | bytes) else None
        if own and name and not (name in {Path(path), *Path(path).parents, own} or own in name.parents):
            raise
        raise UserError(describe_os_error(path, e, what)) from None


def writing(path: str | Path, own: Path | None = None) -> contextlib.AbstractContextManager[None]:
    """user_path for what lrn writes at `path` (files inside it, temporary names of it: said as `path`)."""
    return user_path(path, "output", own)


def os_error_exit(e: OSError) -> tuple[int, str]:
    """(exit code, line) for an OSError no closer handler worded: the environment caused it (a full
    disk: exit 1; anything else, a path that cannot be read or written: exit 2, the path and the reason)."""
    return (1 if e.errno in FULL_ERRNOS else 2), describe_os_error(e.filename, e)


# ---- writing ------------------------------------------------------------------------------

def temp_name(path: Path) -> Path:
    return path.with_name(f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")


def _fsync_dir(d: Path) -> None:
    with contextlib.suppress(OSError):  # some filesystems do not open directories; the rename is still atomic
        fd = os.open(d, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _unlink(p: Path) -> None:
    with contextlib.suppress(OSError):
        p.unlink()


Replace = Callable[[Path, Path], None]  # (temporary file, path): how a finished file takes its place


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "wb", encoding: str | None = None,
                replace: Replace | None = None) -> Iterator[IO[Any]]:
    """A file to write that replaces `path` only when the block ends without an exception; `replace`
    renames it instead of os.replace (lrngpt.core.ownership.recorded: records it as lrn's first)."""
    path = Path(path)
    tmp = temp_name(path)
    try:
        with writing(path, tmp):
            with open(tmp, mode, encoding=encoding) as f:
                yield f
                f.flush()
                os.fsync(f.fileno())
            (replace or os.replace)(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise
    _fsync_dir(path.parent)


def replace_file(src: str | Path, dst: str | Path) -> None:
    """Rename `src` over `dst` (same filesystem) and make the rename durable."""
    os.replace(src, dst)
    _fsync_dir(Path(dst).parent)


def atomic_write(path: str | Path, data: str | bytes, replace: Replace | None = None) -> Path:
    """Replace `path` with `data` (text is written as UTF-8)."""
    with atomic_open(path, "wb", replace=replace) as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)
    return Path(path)


def create_exclusive(path: str | Path, data: str | bytes) -> bool:
    """Create `path` whole with `data` unless it exists (linked into place from a temporary file:
    processes starting together see no file or the complete one); True when this call created it."""
    path, created = Path(path), []

    def link(tmp: Path, path: Path) -> None:
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
            created.append(path)
        _unlink(tmp)  # (another error: atomic_open removes it)
    atomic_write(path, data, link)
    if not created and path.is_symlink() and not path.exists():  # a link to nothing: no file another process made
        raise UserError(f"output {path} is a link to a path that does not exist; remove the link or choose another path")
    return bool(created)


def json_safe(obj: Any) -> Any:
    """NaN and infinities as null: strict JSON, which every reader accepts."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    return [json_safe(v) for v in obj] if isinstance(obj, list | tuple) else obj


def write_json(path: str | Path, obj: Any, replace: Replace | None = None) -> Path:
    return atomic_write(path, json.dumps(json_safe(obj), indent=2, ensure_ascii=False) + "\n", replace)


@contextlib.contextmanager
def atomic_dir(path: str | Path) -> Iterator[Path]:
    """A temporary directory to fill that becomes `path` (new, or a directory the caller owns, never
    the working directory) when the block ends without an exception. The old one is moved aside, the
    new renamed in, the old removed: a kill leaves exactly the old or the new content (or the old under
    a temporary name, which the next writer removes)."""
    path = Path(os.path.realpath(path))  # a link to a directory: fill the directory, keep the link
    check_not_cwd(path)
    tmp = temp_name(path)
    try:
        with writing(path, tmp):
            path.parent.mkdir(parents=True, exist_ok=True)
            clean_stale_temps(path.parent)
            tmp.mkdir()
            yield tmp
        old = temp_name(path) if path.exists() else None
        if old:
            os.replace(path, old)  # out of the way first, so the new one appears in one rename
        os.replace(tmp, path)
        if old:
            shutil.rmtree(old, ignore_errors=True)
        _fsync_dir(path.parent)
        logging.debug(f"{path}: filled beside it and renamed into place")
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def clean_stale_temps(d: str | Path) -> list[Path]:
    """Remove temporary files and directories that a killed process left in `d`."""
    removed: list[Path] = []
    with contextlib.suppress(OSError):
        for p in Path(d).iterdir():
            m = _TEMP.match(p.name)
            if m and int(m["pid"]) != os.getpid() and not _alive(int(m["pid"])):
                shutil.rmtree(p, ignore_errors=True) if p.is_dir() and not p.is_symlink() else _unlink(p)
                removed.append(p)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        pass
    return True


# ---- before a command writes -------------------------------------------------------------

def check_output(path: str | Path, kind: str = "dir", flag: str = option('out'), example: str = "out.txt") -> Path:
    """Refuse, before any work, an output path that cannot be what the command writes (`kind`: "dir" or
    "file"): one that is the other kind, or one where no file can be created (tried: the system says why)."""
    path = Path(path)
    if os.path.lexists(path) and not path.exists():  # (filled through, it would make what the link names)
        raise UserError(f"{flag} {path} is a link to a path that does not exist; create it or remove the link")
    if kind == "dir" and path.exists() and not path.is_dir():
        raise UserError(f"{flag} {path} is not a directory; give a directory (a new one, or one lrn wrote)")
    if kind == "file" and path.is_dir():
        raise UserError(f"{flag} {path} is a directory; give a file name, such as {path / example}")
    parent = next((p for p in path.parents if os.path.lexists(p)), None)
    if parent is not None and not (path.exists() and special_kind(path)):  # (/dev/null: said by the caller)
        probe = parent / f".lrn-probe.tmp-{os.getpid()}-{secrets.token_hex(4)}"
        try:
            os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except OSError as e:
            raise UserError(f"{flag} {path}: lrn cannot create a file in {parent} ({(e.strerror or str(e)).lower()}); "
                            f"choose a directory you can write to, e.g. {flag} out/{path.name}") from None
        _unlink(probe)
    return path


def check_not_cwd(path: str | Path) -> None:
    """A directory that a command replaces whole must not hold the working directory."""
    target, here = os.path.realpath(path), os.path.realpath(os.getcwd())
    if here == target or here.startswith(target.rstrip(os.sep) + os.sep):
        raise UserError(f"{option('out')} {path} is the current directory (or holds it), which this command would "
                        f"replace; give a new directory, e.g. {option('out')} data/prepared")


# ---- reading ------------------------------------------------------------------------------

def special_kind(path: str | Path) -> str | None:
    """'a special file (...)' for a path that is neither a regular file nor a directory (links followed):
    a pipe, a device or a socket; None otherwise, or when it cannot be told."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else "a special file (a pipe, a device or a socket)"


def check_regular(path: Path, what: str = "file") -> None:
    """Refuse a path that is no regular file or directory before opening it: a named pipe waits for a
    writer for ever, a device like /dev/null reads as an empty file."""
    kind = special_kind(path)
    if kind:
        raise UserError(f"{what} {path} is {kind}, not a file; give a regular file")


def is_regular(path: str | Path) -> bool:
    """A regular file (no link followed): what lrn reads of its own without asking (a record, meta.json)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def read_regular(path: str | Path, what: str = "file") -> bytes:
    """The bytes of a regular file; anything else, missing or unreadable, a UserError naming it."""
    check_regular(Path(path), what)
    with user_path(path, what):
        return Path(path).read_bytes()


def int_digits(text: str) -> int:
    """How many digits an integer literal has (sign, prefix and underscores left out)."""
    body = text.strip().lstrip("+-").replace("_", "")
    return len(body) - 2 if body[:2].lower() in ("0x", "0o", "0b") else len(body)


def too_many_digits(digits: int, where: str) -> UserError:
    return UserError(f"{where}: an integer of {digits:,} digits is no config value (integers fit in 64 bits, "
                     "19 digits); write a smaller number")


def loads_json(text: str, where: str) -> Any:
    """json.loads within bounds: an integer past MAX_INT_DIGITS digits (refused before Python converts
    it, in quadratic time), a key twice in one object, or nesting too deep are UserErrors naming `where`
    (a malformed document raises json.JSONDecodeError, for the caller to place by line)."""
    def parse_int(digits: str) -> int:
        if len(digits) > MAX_INT_DIGITS:
            raise too_many_digits(int_digits(digits), where)
        return int(digits)

    def unique(pairs: list[tuple[str, Any]]) -> dict:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            keys = [k for k, _ in pairs]
            twice = next(k for i, k in enumerate(keys) if k in keys[:i])
            raise UserError(f"{where}: the key {twice!r} appears twice in one object, and only one can hold; "
                            "keep one")
        return obj

    try:
        return json.loads(text, parse_int=parse_int, object_pairs_hook=unique)
    except RecursionError:
        raise UserError(f"{where}: lists and objects nested too deep to read (a config value is a few levels "
                        "deep at most)") from None


def damaged(path: str | Path, what: str, why: str) -> UserError:
    """A file lrn wrote that does not read: not the user's to fix, lrn writes it again once moved away."""
    return UserError(f"lrn wrote {what} {path} and it is damaged ({why}): move it away and run the same "
                     "command again")


def read_json(path: str | Path, what: str = "file", own: bool = False) -> Any:
    """A JSON document; a missing, unreadable or malformed file is a UserError naming it (`own`: a file
    lrn wrote, said `damaged`, never "fix it")."""
    with user_path(path, what):
        text = read_regular(path, what).decode("utf-8")
    try:
        return loads_json(text, f"{what} {path}")
    except json.JSONDecodeError as e:  # (never "delete it": it may be the user's own file)
        if own:
            raise damaged(path, what, f"not valid JSON at line {e.lineno}: {e.msg}") from None
        raise UserError(f"{what} {path} is not valid JSON (line {e.lineno}: {e.msg}); fix it") from None


def read_json_object(path: str | Path, what: str = "file", own: bool = False) -> dict:
    doc = read_json(path, what, own)
    if not isinstance(doc, dict):
        if own:
            raise damaged(path, what, f"a JSON {type(doc).__name__}, not an object")
        raise UserError(f"{what} {path} must hold a JSON object, not {type(doc).__name__}")
    return doc
