"""Configs: `config` (a checked RunConfig), what `lrn config list | show | keys` print, and
`resolve_config`, the one place a run's config is put together (lrngpt.train, lrngpt.plan)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from lrngpt.api.checks import check, checked
from lrngpt.errors import UserError, option
from lrngpt.models.kinds import ModelType
from lrngpt.runconfig.help import PRESET_ABOUT, describe, key_table
from lrngpt.runconfig.schema import RunConfig, load_config, preset_names, validated
from lrngpt.runconfig.values import check_plain
from lrngpt.store.rundir import RunDir

# config overrides: {"model.n_embd": 128}, ["model.n_embd=128"] (the --set form) or one such string
Overrides = Mapping[str, Any] | Iterable[str] | str | None


def override_list(overrides: Overrides, what: str = "set") -> list[str]:
    """`set=` as "KEY=VALUE" strings: a mapping's values are written as JSON, which --set parses back."""
    if isinstance(overrides, Iterator):  # (a generator: read once, so its items can be checked)
        overrides = list(overrides)
    check(overrides, Overrides, what)  # string keys, string items
    if isinstance(overrides, Mapping):
        for key, value in overrides.items():
            check_plain(value, f"{what} {key}")  # bytes, sets, a 5,000-digit int: refused before JSON is tried
        return [f"{key}={json.dumps(value)}" for key, value in overrides.items()]
    return [overrides] if isinstance(overrides, str) else list(overrides or [])


def run_sets(set: Overrides, corpus: str | None, device: str | None) -> list[str]:
    """The overrides, then corpus and device as data.corpus and train.device (an empty one is refused, as
    --set would refuse it, not taken for the default)."""
    return override_list(set) + [f"data.corpus={corpus}"] * (corpus is not None) + [
        f"train.device={device}"] * (device is not None)


@checked
def config(name_or_path: str | Path | RunConfig, /, **overrides: Any) -> RunConfig:
    """A checked run config: a preset name (`lrn config list`), a JSON or YAML file or a RunConfig, with
    overrides (the keys of `lrn config keys`) as `set={"model.n_embd": 128}`, `set=["model.n_embd=128"]`
    or keyword arguments `**{"model.n_embd": 128}`. Raises UserError as `--set` does.

    Example: ``cfg = lrngpt.config("mlp-cpu", **{"model.n_embd": 128, "train.steps": 200})``"""
    items = override_list(overrides.pop("set", None), "config(): set") + override_list(overrides, "config()")
    return resolve_config(name_or_path, items)


def resolve_config(cfg: RunConfig | str | Path | None, set: Overrides = None, corpus: str | None = None,
                   device: str | None = None, resume_from: str | Path | None = None) -> RunConfig:
    """`cfg` (a preset, a file or a RunConfig, checked again as a file is; None: the config.json of the
    run `resume_from`) with the overrides, then the corpus and the device, as `--set` would."""
    items = run_sets(set, corpus, device)
    if isinstance(cfg, RunConfig):
        return validated(cfg) if not items else load_config(validated(cfg).to_dict(), items, "the config")
    if cfg is not None:
        return load_config(str(cfg), items)
    if resume_from is not None:
        run = RunDir(resume_from)
        run.check_is_run()  # a resume of a directory that holds no run: say that, not "give a config"
        return load_config(run.config_dict(), items, str(run / "config.json"))
    raise UserError(f"give {option('config', 'NAME_OR_FILE')} (names: {', '.join(preset_names())}; lrn config list; in Python "
                    f"lrngpt.config(NAME)); only resume=True ({option('resume', True)}) may leave it out")


@checked
def config_list() -> list[dict]:
    """The named configs (`lrn config list`): name, model_type, corpus and what each is for.

    Example: ``[c["name"] for c in lrngpt.config_list()]``"""
    rows = []
    for name in preset_names():
        cfg = load_config(name)
        rows.append({"name": name, "model_type": cfg.model_type, "corpus": cfg.data.corpus,
                     "about": PRESET_ABOUT.get(name, "")})
    return rows


@checked
def config_show(name_or_path: str | Path, set: Overrides = None) -> dict:
    """Every key of a resolved config with its value and description (`lrn config show`).

    Example: ``{r["key"]: r["value"] for r in lrngpt.config_show("mlp-cpu")["keys"]}["model.n_embd"]``"""
    items = override_list(set, "config_show(): set")
    name = str(name_or_path)
    cfg = load_config(name, items)
    preset = name if name in preset_names() else None
    return {"config": name, "preset": preset, "about": PRESET_ABOUT.get(preset) if preset else None,
            "overrides": items, "keys": describe(cfg)}


@checked
def config_keys(model_type: ModelType = "mlp") -> list[dict]:
    """Every key a config of `model_type` takes: type, default, required or derived, description
    (`lrn config keys`).

    Example: ``[r["key"] for r in lrngpt.config_keys("gpt")][:3]``"""
    return key_table(model_type)
