"""W&B for train.logger. W&B's service writes its transaction log in 32 KiB blocks and dies with its
parent, so after a kill the log holds a prefix: a resume reads back the steps it holds (`history`)
and sends the rest; online, the server's `run.step` counts instead.
"""

from __future__ import annotations

import json
import os
import re
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

from lrngpt.core.fsio import user_path
from lrngpt.errors import UserError
from lrngpt.store.layout import WANDB

INIT_TIMEOUT = 30.0  # seconds for wandb.init to reach its server; WANDB_INIT_TIMEOUT overrides
ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")  # a run id as W&B and MLflow make them; never a path
OFFLINE_MODES = ("offline", "dryrun")
FIX = "set WANDB_MODE=offline to keep the run in RUN_DIR/wandb (`wandb sync` uploads it later)"

# The transaction log: LevelDB's log format (32 KiB blocks of records with 7-byte headers:
# checksum, length, type), after a 7-byte file header.
_FILE_HEADER, _BLOCK, _HEADER = b":W&B\xe1\xbe\x00", 32768, 7
_FULL, _LAST = 1, 4  # (2 and 3: a first and a middle piece)
_SEED = [zlib.crc32(bytes([kind])) for kind in range(5)]  # each record's checksum starts from its type's


def first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0][:200]


def settings():
    """W&B's settings as wandb.init reads them (its settings file, then WANDB_* variables), read afresh
    (W&B's own copy is kept for the process), or a UserError naming the variable W&B refuses."""
    import wandb

    try:
        s = wandb.Settings()
        config_dir = os.environ.get("WANDB_CONFIG_DIR")
        s.settings_system = str(Path(config_dir or "~/.config/wandb").expanduser() / "settings")
        s.update_from_system_settings()
        s.update_from_env_vars(dict(os.environ))
        return s
    except AttributeError:  # an older W&B, without these: its environment says what matters here
        mode = os.environ.get("WANDB_MODE") or "online"
        if mode not in (*OFFLINE_MODES, "online", "disabled", "run", "shared"):
            raise UserError(f"train.logger wandb: WANDB_MODE={mode!r} is not a W&B mode; {FIX}") from None
        return SimpleNamespace(mode=mode, base_url=os.environ.get("WANDB_BASE_URL") or "https://api.wandb.ai")
    except Exception as e:  # pydantic's ValidationError: a WANDB_* value W&B does not accept
        errors = getattr(e, "errors", None)
        if callable(errors) and errors():
            err = errors()[0]
            key = ".".join(str(x) for x in err.get("loc", ()))
            env = f"WANDB_{key.upper()}"
            got = os.environ.get(env, err.get("input"))
            raise UserError(f"train.logger wandb: {env}={got!r} is not a W&B setting ({err.get('msg')}); "
                            f"fix or unset it ({FIX})") from None
        raise UserError(f"train.logger wandb: W&B's settings cannot be read ({first_line(e)}); {FIX}") from None


def check() -> None:
    """What would stop W&B at its start, found before lrn takes a run directory."""
    s = settings()
    if s.mode in (*OFFLINE_MODES, "disabled"):
        return
    auth: object  # W&B's Auth, or an older W&B's key
    try:
        # optional: its absence is said in one line
        from wandb.sdk.lib import wbauth

        auth = wbauth.authenticate_session(host=s.base_url, source="lrn", prompt=False, update_session=False)
    except ImportError:  # an older W&B: its key lives in the environment or ~/.netrc ($NETRC), read as W&B does
        from requests.utils import get_netrc_auth  # (W&B's own dependency)

        auth = os.environ.get("WANDB_API_KEY") or (get_netrc_auth(s.base_url) or ("", ""))[1]
    except Exception as e:  # a key in the wrong form
        raise UserError(f"train.logger wandb: {first_line(e)}; fix WANDB_API_KEY (or run `wandb login`), "
                        f"or {FIX}") from None
    if not auth:
        raise UserError(f"train.logger wandb: W&B is online (WANDB_MODE={os.environ.get('WANDB_MODE', '') or 'unset'}) "
                        f"and has no API key for {s.base_url}; run `wandb login` or set WANDB_API_KEY, or {FIX}")


def records(path: Path) -> Iterator[bytes]:
    """The records of one transaction log, in order, up to the first that is cut short or fails its
    checksum (what a kill leaves at the end)."""
    with user_path(path, "W&B log"):
        data = path.read_bytes()
    if len(data) < len(_FILE_HEADER):  # killed before W&B wrote even its header: it holds nothing
        return
    if not data.startswith(_FILE_HEADER[:6]):
        raise UserError(f"W&B log {path} is not a W&B transaction log; move it out of {path.parent.parent}")
    pos, pending = len(_FILE_HEADER), b""
    while pos + _HEADER <= len(data):
        room = _BLOCK - pos % _BLOCK
        if room < _HEADER:  # a block's tail too short for a header is padding
            pos += room
            continue
        checksum, length, kind = struct.unpack_from("<IHB", data, pos)
        payload = data[pos + _HEADER:pos + _HEADER + length]
        if not _FULL <= kind <= _LAST or len(payload) < length or zlib.crc32(payload, _SEED[kind]) != checksum:
            return
        pos += _HEADER + length
        pending += payload  # a whole record, or its first, middle or last piece
        if kind in (_FULL, _LAST):
            yield pending
            pending = b""


def held_steps(run_dir: Path, run_id: str) -> set[int]:
    """The steps whose history rows the transaction logs of W&B run `run_id` in RUN_DIR/wandb hold
    (one log a segment: (offline-)run-YYYYMMDD_HHMMSS-ID/run-ID.wandb)."""
    from wandb.proto import wandb_internal_pb2

    steps: set[int] = set()
    for path in (run_dir / WANDB).glob(f"*-{run_id}/run-{run_id}.wandb"):
        for data in records(path):
            record = wandb_internal_pb2.Record()  # type: ignore[attr-defined]  # (a generated proto: no stub)
            try:
                record.ParseFromString(data)
            except Exception:  # a whole record that does not parse: the log ends here for us, as for W&B
                break
            if record.WhichOneof("record_type") == "history":  # (W&B names a key as a path: nested_key)
                steps.update(int(json.loads(item.value_json)) for item in record.history.item
                             if (item.key or "/".join(item.nested_key)) == "_step")
    return steps


class WandBSink:
    def __init__(self, run_dir: Path, run_id: str, config: dict, name: str, sent: list[tuple[int, dict]]):
        """W&B run `run_id` (kept in trackers.json before it is made: an ID) started or resumed, sent
        what it lacks of `sent` (the rows a resume restarts from)."""
        import wandb

        held = held_steps(run_dir, run_id)  # read before this segment's log exists
        timeout = float(os.environ.get("WANDB_INIT_TIMEOUT") or INIT_TIMEOUT)
        try:
            self.run = wandb.init(project=os.environ.get("WANDB_PROJECT") or "lrn-gpt", name=name,
                                  dir=str(run_dir), id=run_id, resume="allow",
                                  config=config, settings=wandb.Settings(init_timeout=timeout))
        except Exception as e:  # W&B's own errors (CommError, UsageError, ...) and its settings' ValueErrors
            raise UserError(f"train.logger wandb: W&B did not start ({type(e).__name__}: {first_line(e)}); "
                            f"check WANDB_BASE_URL and the network (WANDB_INIT_TIMEOUT={timeout:g}s), or {FIX}") from None
        if getattr(self.run, "offline", False) or getattr(self.run, "disabled", False):
            self.done = max(held, default=-1)
        else:  # the server's history is what counts; W&B drops a step below the one it holds
            try:
                self.done = int(self.run.step) - 1
            except Exception:  # a mode without a step of its own ("shared")
                self.done = -1
        for step, values in sent:
            self.log(step, values)

    def log(self, step: int, values: dict) -> None:
        if step > self.done:
            self.run.log(values, step=step)

    def flush(self) -> None:
        pass  # W&B has no flush that says its log reached the disk: a resume reads the log back instead

    def close(self, failed: bool) -> None:
        self.run.finish(exit_code=1 if failed else 0)
