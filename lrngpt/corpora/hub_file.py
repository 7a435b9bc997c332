"""One file of a Hugging Face dataset at a pinned commit, downloaded by huggingface_hub and checked.

`pinned_file` returns a file holding exactly the pinned bytes (size and sha256): one already right
needs no network (lrngpt.corpora.stat_cache); otherwise one HEAD request refuses another size, sha256
or commit before a byte comes, and no answer is `Unreachable` at once (not after huggingface_hub's
retries). `endpoint` names the Hub or a mirror; `HF_HUB_OFFLINE=1` downloads nothing.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from lrngpt.core import log as logging
from lrngpt.core.fsio import replace_file
from lrngpt.corpora.download import Unreachable, write_error
from lrngpt.corpora.stat_cache import cached_fingerprint
from lrngpt.errors import UserError

TIMEOUT_S = 30  # the HEAD request's


def sha256_of(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def pinned_problem(path: Path, size: int, sha256: str) -> str | None:
    """What is wrong with `path` against its pinned size and sha256, or None when it matches; the
    sha256 of a file whose stat is unchanged is remembered, not recomputed (lrngpt.corpora.stat_cache)."""
    if (actual := path.stat().st_size) != size:
        return f"size {actual} bytes, expected {size}"
    found = cached_fingerprint("sha256", [(path, path.name)], lambda: sha256_of(path))
    return None if found == sha256.lower() else f"sha256 {found}, expected {sha256}"


def _http_status(e: Exception) -> int | None:
    response = getattr(e, "response", None)
    return getattr(response, "status_code", None)


def _ask(url: str) -> object:
    """The server's metadata for `url` (one HEAD request, no retries), or Unreachable / UserError."""
    import huggingface_hub as hub  # (and its HTTP client) only when a download may happen
    try:
        return hub.get_hf_file_metadata(url, timeout=TIMEOUT_S)
    except Exception as e:  # noqa: BLE001 - the HTTP client's errors differ between huggingface_hub versions
        if _http_status(e) is not None:
            raise UserError(f"{url}: the server answered HTTP {_http_status(e)}; check the mirror "
                            "(LRN_TINYSTORIES_URL, HF_ENDPOINT), or download the file yourself and pass "
                            "a local PATH instead") from None
        if isinstance(e, getattr(hub.utils, "OfflineModeIsEnabled", ())):
            reason = "HF_HUB_OFFLINE is set"
        else:
            reason = ": ".join([type(e).__name__, *str(e).strip().splitlines()[:1]])[:200]
        raise Unreachable(url, reason) from None


def _check_announced(meta, url: str, filename: str, revision: str, size: int, sha256: str) -> None:
    """Refuse, before downloading, a file the server says is not the pinned one."""
    etag = (getattr(meta, "etag", None) or "").strip('"').lower()
    problems = []
    if meta.size is not None and meta.size != size:
        problems.append(f"size {meta.size} bytes, expected {size}")
    if len(etag) == 64 and etag != sha256.lower():  # a large file's ETag: its sha256
        problems.append(f"sha256 {etag}, expected {sha256}")
    commit = getattr(meta, "commit_hash", None)
    if commit and commit != revision:
        problems.append(f"commit {commit}, expected {revision}")
    if problems:
        raise UserError(f"{url} announces {filename} with the wrong {'; '.join(problems)}: it is not the "
                        "pinned file, so nothing was downloaded; check the mirror (LRN_TINYSTORIES_URL, "
                        "HF_ENDPOINT), or pass a local PATH instead")


def pinned_file(repo_id: str, filename: str, revision: str, directory: Path, *, size: int, sha256: str,
                endpoint: str) -> Path:
    """`directory/filename`: the file of `repo_id` at commit `revision`, downloaded when it is not
    there (or not right), checked against `size` and `sha256`."""
    directory = Path(directory)
    dest = directory / filename
    if dest.is_file():
        if pinned_problem(dest, size, sha256) is None:
            logging.debug(f"hub: {dest} is the pinned {filename} (size and sha256 checked), not downloaded")
            return dest
        replace_file(dest, dest.with_name(dest.name + ".bad"))  # stale or corrupt: fetch it again
    import huggingface_hub as hub
    url = hub.hf_hub_url(repo_id, filename, repo_type="dataset", revision=revision, endpoint=endpoint)
    _check_announced(_ask(url), url, filename, revision, size, sha256)
    logging.debug(f"hub: downloading {url} into {directory} (huggingface_hub {hub.__version__})")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with logging.third_party_bars():
            got = Path(hub.hf_hub_download(repo_id, filename, repo_type="dataset", revision=revision,
                                           local_dir=directory, endpoint=endpoint))
    except Exception as e:  # noqa: BLE001 - see _ask
        if isinstance(e, OSError) and e.errno is not None:  # the local side
            raise write_error(e, directory) from None
        if _http_status(e) is not None:
            raise UserError(f"{url}: the server answered HTTP {_http_status(e)} to the download; check the "
                            "mirror, or download the file yourself and pass a local PATH instead") from None
        detail = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
        raise UserError(f"the download of {url} stopped ({detail}); what arrived is kept in "
                        f"{directory / '.cache' / 'huggingface'}: run the command again to resume it") from None
    if problem := pinned_problem(got, size, sha256):
        bad = dest.with_name(dest.name + ".bad")
        replace_file(got, bad)
        raise UserError(f"the file downloaded from {url} has the wrong {problem}; it was moved to {bad} "
                        "and not used. Run again to download it afresh, or pass a local PATH instead")
    return got
