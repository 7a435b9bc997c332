"""Files: every write atomic, every OS error on a user's path a one-line UserError.

`atomic_write(path, data)` and `atomic_open(path)` write to a temporary file in the same
directory with a name unique to this process and call (`.NAME.tmp-PID-RANDOM`), fsync it,
rename it over `path` and fsync the directory, so readers see the old file or the new one,
never half of either, and two processes never share a temporary file. On any failure,
SIGTERM included (the command line turns it into an exception), the temporary file is
removed; one left by a killed process (`kill -9`) is removed by the next writer that finds
it (`clean_stale_temps`).

A full disk is reported as `DiskFull` (exit 1: it is not the user's input, but the message
names the path and the space needed) and leaves the earlier file intact. Any other error a
user can fix (permission denied, a read-only filesystem, a file where a directory belongs, a
broken symbolic link, the file-size limit of `ulimit -f`) is a `UserError` naming the path:
`user_path` on reads, the write helpers here (and `writing` around any other writer) on
writes, `check_output` before a command starts writing. `os_error_exit` is the same mapping
for an OSError that reaches the command line from anywhere else (a library's own file, say).
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
from typing import IO, Any, NoReturn, overload

from lrngpt.core import log as logging
from lrngpt.core.bounded import loads_json
from lrngpt.errors import UserError, option

_TEMP = re.compile(r"^\.(?P<name>.+)\.tmp-(?P<pid>\d+)(-[0-9a-f]+)?$")


class DiskFull(OSError):
    """No space left while writing; the earlier file is untouched."""


# OS errors that the user fixes (a path, a permission, a mount): reported as UserError, exit 2.
USER_ERRNOS = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EISDIR, errno.ENOENT,
               errno.EEXIST, errno.ELOOP, errno.ENAMETOOLONG, errno.EFBIG}
FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
# What the environment, never lrn's own logic, causes wherever the error comes from: os_error_exit's set
ENVIRONMENT_ERRNOS = {*FULL_ERRNOS, errno.EACCES, errno.EPERM, errno.EROFS, errno.EFBIG}


def disk_full_message(path: str | Path | None) -> str:
    """The one disk-full line (the README documents it): where, how much is free, what to do."""
    if path is None:
        return "disk full; free some space and run the command again"
    path = Path(path)
    free = next((shutil.disk_usage(p).free for p in (path.parent, *path.parents) if p.is_dir()), 0)
    return (f"disk full while writing {path} ({free:,} bytes free); "
            "free some space and run the command again (the earlier file is intact)")


def _raise_write_error(e: OSError, path: Path, *own: Path) -> NoReturn:
    """Raise an OSError met while writing `path` (through temporary names `own`): a full disk as
    DiskFull, a path the user can fix as a UserError, anything else as it is."""
    if e.errno in FULL_ERRNOS:
        raise DiskFull(e.errno, disk_full_message(path)) from None
    name = None if e.filename is None else Path(_path_text(e.filename))
    about = name is None or name in {path, *path.parents} or any(name == o or o in name.parents for o in own)
    if e.errno in USER_ERRNOS and about:
        raise UserError(describe_os_error(path, e, "output")) from None
    raise e


@contextlib.contextmanager
def writing(path: str | Path) -> Iterator[None]:
    """Report an OSError met while the block writes `path` (or files inside it, a directory being
    built) like the write helpers here: DiskFull, or a UserError naming the path."""
    try:
        yield
    except (DiskFull, UserError):
        raise
    except OSError as e:  # (a file inside `path`, a temporary name of it: told as `path`)
        _raise_write_error(e, Path(path), *([Path(_path_text(e.filename))] if e.filename else []))


def os_error_exit(e: OSError) -> tuple[int, str] | None:
    """(exit code, line) for an OSError that no closer handler turned into a message, when the
    environment caused it (a full disk, a permission, a read-only mount, the file-size limit);
    None for anything else (a bug of ours: the command line reports it as unexpected)."""
    if e.errno not in ENVIRONMENT_ERRNOS:
        return None
    path = _path_text(e.filename)
    if e.errno in FULL_ERRNOS:
        return 1, disk_full_message(path)
    if path is None:
        return 2, (f"{e.strerror or e}; " + ("raise the file-size limit (ulimit -f unlimited) and run the command again"
                                            if e.errno == errno.EFBIG else "check the permissions of the paths given"))
    return 2, describe_os_error(path, e, "path")


def temp_name(path: Path) -> Path:
    return path.with_name(f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:  # some filesystems do not open directories; the rename is still atomic
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


Replace = Callable[[Path, Path], None]  # (temporary file, path): how a finished file takes its place


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "wb", encoding: str | None = None,
                replace: Replace | None = None) -> Iterator[IO[Any]]:
    """A file to write that replaces `path` only when the block ends without an exception.

    `replace(tmp, path)` does the final rename instead of os.replace: lrngpt.core.ownership's records
    the new file as lrn's (and refuses a file that is not lrn's) in the same step."""
    path = Path(path)
    tmp = temp_name(path)
    try:
        with open(tmp, mode, encoding=encoding) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        (replace or os.replace)(tmp, path)
    except OSError as e:
        _unlink(tmp)
        _raise_write_error(e, path, tmp)
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
    path = Path(path)
    with atomic_open(path, "wb", replace=replace) as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def create_exclusive(path: str | Path, data: str | bytes) -> bool:
    """Create `path` whole with `data` unless it exists; True when this call created it.

    The content is written to a temporary file first and linked into place, so processes
    starting together see either no file or the complete one, and exactly one of them wins.
    """
    path = Path(path)
    tmp = temp_name(path)
    try:
        with open(tmp, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.link(tmp, path)
        return True
    except FileExistsError as e:
        if path.is_symlink() and not path.exists():
            raise UserError(describe_os_error(path, e, "output")) from None
        return False
    except OSError as e:
        _raise_write_error(e, path, tmp)
    finally:
        _unlink(tmp)


def json_safe(obj: Any) -> Any:
    """NaN and infinities as null: strict JSON, which every reader accepts."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_safe(v) for v in obj]
    return obj


def write_json(path: str | Path, obj: Any, replace: Replace | None = None) -> Path:
    return atomic_write(path, json.dumps(json_safe(obj), indent=2, ensure_ascii=False) + "\n", replace)


def read_json(path: str | Path, what: str = "file") -> Any:
    """A JSON document; a missing, unreadable or malformed file is a UserError naming it."""
    path = Path(path)
    check_regular(path, what)
    with user_path(path, what):
        text = path.read_text(encoding="utf-8")
    try:  # bounded: a huge integer, a repeated key or deep nesting is a UserError naming the file
        return loads_json(text, f"{what} {path}")
    except json.JSONDecodeError as e:  # (never "delete it": it may be the user's own file)
        raise UserError(f"{what} {path} is not valid JSON (line {e.lineno}: {e.msg}); fix it") from None


def special_kind(path: str | Path) -> str | None:
    """'a named pipe (FIFO)', 'a character device (like /dev/null)', ... for a path that is neither a
    regular file nor a directory (links followed); None otherwise, or when it cannot be told."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    kinds = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device (like /dev/null)"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
    return next((kind for test, kind in kinds if test(mode)), None)


def check_regular(path: Path, what: str = "file") -> None:
    """Refuse a path that exists but is no regular file or directory, before opening it: reading a
    named pipe waits for a writer for ever, a device like /dev/null reads as an empty file."""
    kind = special_kind(path)
    if kind:
        raise UserError(f"{what} {path} is {kind}, not a file; give a regular file")


def read_regular(path: str | Path, what: str = "file") -> bytes:
    """The bytes of a regular file; a named pipe or a device (it would wait for ever, or never end), a
    missing or unreadable path is a UserError naming what is there."""
    path = Path(path)
    check_regular(path, what)
    with user_path(path, what):
        return path.read_bytes()


def is_regular(path: str | Path) -> bool:
    """A regular file (no link followed): what lrn reads of its own without asking (a record, meta.json)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def read_json_object(path: str | Path, what: str = "file") -> dict:
    doc = read_json(path, what)
    if not isinstance(doc, dict):
        raise UserError(f"{what} {path} must hold a JSON object, not {type(doc).__name__}")
    return doc


@contextlib.contextmanager
def user_path(path: str | Path, what: str = "path") -> Iterator[None]:
    """Turn an OS error on a path the user gave into a UserError that says how to fix it."""
    try:
        yield
    except UnicodeDecodeError as e:
        raise UserError(f"{what} {path} is not UTF-8 text (byte {e.start}); re-save it as UTF-8") from None
    except DiskFull:
        raise
    except OSError as e:
        raise UserError(describe_os_error(path, e, what)) from None


@overload
def _path_text(name: None) -> None: ...
@overload
def _path_text(name: str | os.PathLike | bytes | int) -> str: ...
def _path_text(name: Any) -> str | None:
    """An OSError's filename as text to print: a library may give bytes (TensorBoard's writer does),
    which need not be UTF-8, or a descriptor."""
    if name is None or isinstance(name, str):
        return name
    if isinstance(name, os.PathLike):
        name = os.fspath(name)
    return name.decode("utf-8", "backslashreplace") if isinstance(name, bytes) else str(name)


def describe_os_error(path: str | Path, e: OSError, what: str = "path") -> str:
    path = _path_text(path)
    broken = _broken_link(Path(path))
    if broken:
        return broken.replace("PATH", f"{what} {path}")
    if isinstance(e, FileNotFoundError):
        return f"{what} {path} does not exist (or a directory above it is missing); check the path"
    if isinstance(e, FileExistsError):
        return f"{what} {path} already exists and is in the way; choose another path or remove it"
    if isinstance(e, IsADirectoryError):
        return f"{what} {path} is a directory where a file is expected; give a file"
    if isinstance(e, NotADirectoryError):
        return f"{what} {path} is a file (or lies under one) where a directory is expected; give a directory"
    if isinstance(e, PermissionError):
        return f"{what} {path}: permission denied; change its permissions or choose another path"
    if e.errno in FULL_ERRNOS:
        return disk_full_message(path)
    if e.errno == errno.EFBIG:
        return (f"{what} {path}: the file-size limit (ulimit -f) was hit writing it; raise it "
                "(ulimit -f unlimited, or a size above the file's) and run the command again")
    if e.errno == errno.ELOOP:
        return f"{what} {path} is a symbolic link loop; fix the link"
    if e.errno == errno.EROFS:
        return f"{what} {path} is on a read-only filesystem; choose another path"
    if e.errno == errno.ENAMETOOLONG:
        return f"{what} {path}: the name is too long for the filesystem; choose a shorter one"
    return f"{what} {path}: {e.strerror or e}"


def _broken_link(path: Path) -> str | None:
    """'PATH is a symbolic link to T, which does not exist; ...' when `path` or a directory above it is one."""
    for p in (path, *path.parents):
        try:
            if p.is_symlink() and not p.exists():
                target = os.readlink(p)
                where = "" if p == path else f" (in the path, {p})"
                return (f"PATH is a symbolic link{where} to {target}, which does not exist; "
                        "create its target or remove the link")
        except OSError:
            return None
    return None


def check_output(path: str | Path, kind: str = "dir", flag: str = option('out'), example: str = "out.txt") -> Path:
    """Refuse an output path that cannot be what the command writes, before any work.

    kind "dir": `path` is to be a directory; "file": a file. A broken symbolic link, a file
    where a directory belongs (also above the path) or a directory where a file belongs is a
    UserError that says how to fix it.
    """
    path = Path(path)
    broken = _broken_link(path)
    if broken:
        raise UserError(broken.replace("PATH", f"{flag} {path}"))
    if kind == "dir" and path.exists() and not path.is_dir():
        raise UserError(f"{flag} {path} is {special_kind(path) or 'a file'}; give a directory (a new one, or one lrn "
                        "wrote)")
    if kind == "file" and path.is_dir():
        raise UserError(f"{flag} {path} is a directory; give a file name, such as {path / example}")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise UserError(f"{flag} {path} lies under {parent}, which is a file; choose another path")
            _check_writable(path, parent, flag)
            break
    return path


def _check_writable(path: Path, parent: Path, flag: str) -> None:
    """Refuse, before any work, an output whose nearest existing directory cannot take a new file: one
    is created there and removed, and what the system says to that is the reason (a read-only disk, a
    permission, a kernel's file system like /proc), so no list of special places is kept."""
    if path.exists() and special_kind(path):
        return  # (/dev/null itself is said by the caller)
    try:
        fd, probe = _probe_file(parent)
    except OSError as e:
        denied = "permission denied; choose a directory you can write to, or change its permissions"
        why = {errno.EROFS: "it is on a read-only filesystem; choose a path on a writable disk",
               errno.EACCES: denied, errno.EPERM: denied}.get(
            e.errno or 0, f"{e.strerror or e}; choose a path on a disk you can write to, e.g. {flag} out/{path.name}")
        raise UserError(f"{flag} {path}: lrn cannot create a file in {parent}: {why}") from None
    os.close(fd)
    _unlink(probe)


def _probe_file(parent: Path) -> tuple[int, Path]:
    probe = parent / f".lrn-probe.tmp-{os.getpid()}-{secrets.token_hex(4)}"
    return os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), probe


def check_not_cwd(path: str | Path, flag: str = option('out')) -> None:
    """A directory that a command replaces whole must not hold the working directory."""
    target = os.path.realpath(path)
    here = os.path.realpath(os.getcwd())
    if here == target or here.startswith(target.rstrip(os.sep) + os.sep):
        raise UserError(f"{flag} {path} is the current directory (or holds it), which this command would "
                        f"replace; give a new directory, e.g. {option('out')} data/prepared")


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def clean_stale_temps(d: str | Path) -> list[Path]:
    """Remove temporary files and directories that a killed process left in `d`."""
    d = Path(d)
    removed: list[Path] = []
    try:
        entries = list(d.iterdir())
    except OSError:
        return removed
    for p in entries:
        m = _TEMP.match(p.name)
        if m and int(m["pid"]) != os.getpid() and not pid_alive(int(m["pid"])):
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            else:
                _unlink(p)
            removed.append(p)
    return removed


def _unlink(p: Path) -> None:
    with contextlib.suppress(OSError):
        p.unlink()


@contextlib.contextmanager
def atomic_dir(path: str | Path) -> Iterator[Path]:
    """A temporary directory to fill that becomes `path` when the block ends without an exception.

    `path` must not exist or be a directory the caller owns (it is replaced whole); never the
    working directory or one above it. An existing `path` is moved aside and the new directory
    renamed into its place (two renames, portable), so a kill at any moment leaves `path` holding
    exactly the old content or exactly the new, or, between the two renames, the old content
    under a temporary name beside it; the old content is then removed (a kill before that leaves
    a temporary directory, which the next writer removes). OS errors while filling it are
    reported like any write's.
    """
    path = Path(os.path.realpath(path))  # a link to a directory: fill the directory, keep the link
    check_not_cwd(path)
    tmp = temp_name(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        clean_stale_temps(path.parent)
        tmp.mkdir()
    except OSError as e:
        _raise_write_error(e, path, tmp)
    try:
        try:
            yield tmp
        except OSError as e:
            _raise_write_error(e, path, tmp)
        if path.exists():
            old = temp_name(path)
            os.replace(path, old)  # out of the way first, so the new one appears in one rename
            os.replace(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
            how = "renamed over the old one (moved aside first)"
        else:
            os.replace(tmp, path)
            how = "renamed into place"
        _fsync_dir(path.parent)
        logging.debug(f"{path}: filled beside it and {how}")
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
