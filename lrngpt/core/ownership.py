"""What lrn may replace: one ownership rule, called by every command that writes.

lrn replaces or removes only what it wrote, and it knows what it wrote by a mark it left there:

- a run directory carries `.lrn-run` (lrngpt.store.rundir); a config.json alone is not a run;
- a directory lrn fills whole (a Hugging Face export, an embedding export) carries `.lrn-output`,
  a manifest written last that names every file in it with its sha256 (a Hugging Face export keeps
  it as `.cache/huggingface/lrn-output`, which huggingface_hub never uploads);
- an HTML page (a report, an explorer page) carries its generator tag in its head;
- any other file (a stories corpus, a tokenizer.json) has a sidecar `.NAME.lrn` beside it
  holding its sha256.

A file that was changed after lrn wrote it is the user's again: its hash no longer matches.
`--force` replaces only marked things (and removes only the files a mark names), never a user's
file, a run's own files from another command, or the source of an import. A refusal names what
it found; it suggests `--force` only where `--force` would replace nothing but lrn's own output.

Readers are never asked to trust a half-written output: a marked directory is built beside its
target and swapped in whole (lrngpt.core.fsio.atomic_dir), a marked file is replaced in one rename.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from lrngpt.core.fsio import atomic_dir, atomic_open, atomic_write, check_output, has_marker, user_path
from lrngpt.errors import UserError

OUTPUT_MARKER = ".lrn-output"  # the manifest of a directory lrn filled whole
# A directory meant for the Hugging Face Hub keeps its manifest where huggingface_hub's upload_folder
# (and `hf upload`) never uploads from: its DEFAULT_IGNORE_PATTERNS skip .cache/huggingface/, where
# huggingface_hub keeps its own download records. A .gitignore of "*" beside it, as huggingface_hub
# writes there, keeps `git add .` in a clone of the Hub repository from committing it.
HUB_MANIFEST = (".cache", "huggingface", "lrn-output")
HUB_KINDS = ("hf-export",)
RUN_MARKER = ".lrn-run"  # a run directory (lrngpt.store.rundir owns its layout)
SWEEP_FILE = "sweep.json"  # a sweep directory (lrngpt.experiments.runner)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _version() -> str:
    from lrngpt import __version__

    return __version__


def _names(n: list[str], most: int = 3) -> str:
    return ", ".join(n[:most]) + (", ..." if len(n) > most else "")


def lrn_kind(d: Path) -> str | None:
    """What lrn output a directory is: 'run', 'sweep', the kind in its manifest, or None."""
    if (d / RUN_MARKER).is_file():
        return "run"
    if (d / SWEEP_FILE).is_file() and ((d / "runs").is_dir() or _only_sweep_json(d)):
        return "sweep"
    manifest = read_manifest(d)
    return manifest["kind"] if manifest else None


def _only_sweep_json(d: Path) -> bool:
    with contextlib.suppress(OSError):
        return {q.name for q in d.iterdir() if ".tmp-" not in q.name} <= {SWEEP_FILE, "runs"}
    return False


# ---- single files ---------------------------------------------------------------------------

def sidecar(path: Path) -> Path:
    return path.with_name(f".{path.name}.lrn")


def _sidecar_hashes(path: Path) -> list[str]:
    try:
        doc = json.loads(sidecar(path).read_text(encoding="utf-8"))
        hashes = doc.get("sha256", [])
        return [h for h in hashes if isinstance(h, str)] if isinstance(hashes, list) else []
    except (OSError, ValueError, AttributeError):
        return []


def file_is_lrns(path: Path, tag: bytes | None = None) -> bool:
    """True when lrn wrote `path` and nobody changed it since: its generator `tag` is in its head
    (HTML pages), or its sidecar holds its sha256."""
    if tag is not None:
        return has_marker(path, tag)
    hashes = _sidecar_hashes(path)
    if not hashes:
        return False
    try:
        return sha256_file(path) in hashes
    except OSError:
        return False


def _enclosing_output(path: Path) -> tuple[Path, str] | None:
    """The lrn directory output (run, sweep, export) that `path` lies in, if any."""
    for d in path.parents:
        kind = lrn_kind(d) if d.is_dir() else None
        if kind:
            return d, kind
    return None


def check_file_target(path: str | Path, force: bool, what: str, tag: bytes | None = None,
                      replace_own: bool = False, flag: str = "--out", example: str = "out.txt",
                      inside: Callable[[Path, str], bool] | None = None) -> Path:
    """Refuse, before any work, to write `path` unless it is new or an earlier output of lrn.

    `what` names the output ("report", "stories corpus"); `tag` is its generator tag when it can
    carry one; `replace_own`: an earlier output of lrn is replaced without --force (a report is
    rewritten as the run goes on). A file inside a run, a sweep or an export is refused unless
    `inside(dir, kind)` allows it (a report beside a run)."""
    path = check_output(path, "file", flag=flag, example=example)
    enclosing = _enclosing_output(path)
    if enclosing and not (inside and inside(*enclosing)):
        d, kind = enclosing
        raise UserError(f"{flag} {path} lies inside the lrn {kind} in {d}, whose files are its own; "
                        f"choose a path outside it")
    with user_path(path, flag):
        exists = path.exists() or path.is_symlink()
    if not exists:
        return path
    if not path.is_file():
        raise UserError(f"{flag} {path} exists and is not a regular file; choose another {flag}")
    if not file_is_lrns(path, tag):
        if enclosing:
            raise UserError(f"{flag} {path} is one of the files of the lrn {enclosing[1]} in {enclosing[0]}; "
                            f"lrn never replaces it with {what}: choose another {flag}")
        raise UserError(f"{flag} {path} exists and lrn did not write it (or it was changed since); "
                        f"lrn never replaces it, with or without --force: choose another {flag}, "
                        "or move the file away yourself")
    if not (force or replace_own):
        raise UserError(f"{flag} {path} holds an earlier {what} that lrn wrote; add --force to replace it, "
                        f"or choose another {flag}")
    return path


def beside_runs(d: Path, kind: str) -> bool:
    """For check_file_target's `inside`: a page may sit in a run or a sweep directory (not an export)."""
    return kind in ("run", "sweep")


@contextlib.contextmanager
def owned_file(path: str | Path, kind: str, mode: str = "wb", encoding: str | None = None) -> Iterator[IO[Any]]:
    """Write `path` (checked with check_file_target first) and mark it as lrn's with a sidecar.

    The sidecar is written before the rename and names both the new content and the file it
    replaces, so a kill between the two leaves a file that is still known as lrn's."""
    path = Path(path)
    previous = [sha256_file(path)] if path.is_file() and file_is_lrns(path) else []
    with atomic_open(path, mode, encoding=encoding) as f:
        yield f
        f.flush()
        digest = sha256_file(Path(f.name))
        atomic_write(sidecar(path), json.dumps({"kind": kind, "sha256": [digest, *previous],
                                                "lrn_version": _version()}) + "\n")


def write_owned_file(path: str | Path, data: str | bytes, kind: str) -> Path:
    with owned_file(path, kind) as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)
    return Path(path)


# ---- directories lrn fills whole ------------------------------------------------------------

def manifest_path(d: Path, kind: str) -> Path:
    return d.joinpath(*HUB_MANIFEST) if kind in HUB_KINDS else d / OUTPUT_MARKER


def _hub_cache_is_ours(d: Path) -> bool:
    """DIR/.cache holds nothing but the Hub manifest and its .gitignore: lrn's, replaced with the rest."""
    cache = d / HUB_MANIFEST[0]
    if cache.is_symlink() or not cache.is_dir():
        return False
    with contextlib.suppress(OSError):
        found = {p.relative_to(cache).as_posix() for p in cache.rglob("*")}
        return found <= {"huggingface", "huggingface/lrn-output", "huggingface/.gitignore"}
    return False


def read_manifest(d: Path) -> dict | None:
    for path in (d / OUTPUT_MARKER, d.joinpath(*HUB_MANIFEST)):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        ok = isinstance(doc, dict) and isinstance(doc.get("kind"), str) and isinstance(doc.get("files"), dict)
        return doc if ok else None
    return None


def _entries(d: Path) -> list[str]:
    with user_path(d, "--out"):
        return sorted(q.name for q in d.iterdir() if ".tmp-" not in q.name)


def foreign_in(d: Path, kind: str, recognise: Callable[[Path, list[str]], bool] | None = None) -> list[str]:
    """The entries of `d` that are not lrn's `kind` output, unchanged: every name when the
    directory carries no manifest of that kind (and `recognise(d, names)`, how this kind is known without one, says no)."""
    names = [n for n in _entries(d) if n != OUTPUT_MARKER and not (n == HUB_MANIFEST[0] and _hub_cache_is_ours(d))]
    manifest = read_manifest(d)
    if manifest is None or manifest["kind"] != kind:
        return [] if recognise is not None and recognise(d, names) else names
    files = manifest["files"]
    changed = []
    for n in names:
        q = d / n
        try:
            ok = n in files and q.is_file() and not q.is_symlink() and sha256_file(q) == files[n]
        except OSError:
            ok = False
        if not ok:
            changed.append(n)
    return changed


def check_dir_target(out: str | Path, force: bool, what: str, kind: str,
                     recognise: Callable[[Path, list[str]], bool] | None = None, flag: str = "--out",
                     replace_own: bool = False) -> Path:
    """Refuse, before any work, to fill `out` unless it is new, empty, or an earlier `kind` output
    of lrn that nobody changed (and then only with --force, or always with `replace_own`)."""
    out = check_output(out, "dir", flag=flag)
    if not out.is_dir() or not _entries(out):
        return out
    found = lrn_kind(out)
    if found in ("run", "sweep") or (found and found != kind):
        raise UserError(f"{flag} {out} holds an lrn {found}; {what} never writes into one: "
                        f"choose a new or empty {flag}")
    foreign = foreign_in(out, kind, recognise)
    if foreign:
        why = (f"files that are not part of the earlier {what}, or were changed since lrn wrote it"
               if found == kind else "files lrn did not write")
        raise UserError(f"{flag} {out} holds {why} ({_names(foreign)}); lrn replaces only its own "
                        f"output, with or without --force: choose a new or empty {flag}")
    if not (force or replace_own):
        raise UserError(f"{flag} {out} holds an earlier {what} that lrn wrote; add --force to replace it, "
                        f"or choose another {flag}")
    return out


def write_manifest(d: Path, kind: str, extra: dict | None = None) -> None:
    """The manifest of a filled directory: every file in it and its sha256. Written last."""
    files = {q.name: sha256_file(q) for q in sorted(d.iterdir()) if q.is_file() and q.name != OUTPUT_MARKER}
    path = manifest_path(d, kind)
    if path != d / OUTPUT_MARKER:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path.parent / ".gitignore", "*\n")
    atomic_write(path, json.dumps({"kind": kind, "files": files, "lrn_version": _version(),
                                   "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                                   **(extra or {})}, indent=2) + "\n")


@contextlib.contextmanager
def owned_dir(out: str | Path, kind: str) -> Iterator[Path]:
    """A temporary directory to fill; when the block ends it gets its manifest and replaces `out`
    in one step (check_dir_target first). A kill leaves `out` exactly as it was or exactly new."""
    with atomic_dir(out) as tmp:
        yield tmp
        write_manifest(tmp, kind)
