"""Trained runs and sweeps shared by a test session: each distinct one is trained the first time a test
asks for it and handed to every later test that asks for the same. The key is what decides the
training: the config, the sorted --set overrides (the corpus is one of them) and, for a sweep, its
preset or file, its scale and its axes (in their order, which orders the grid). Under
`pytest -n auto --dist loadfile` each worker has its own session, so a run is shared by the files
that worker runs (always by the tests of one file).

A run handed out is shared: a test that changes it (a file written, removed or damaged) works on a copy
(`copy(run, tmp_path)` or `trained(..., copy_to=tmp_path)`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import NamedTuple

from lrngpt.runconfig.schema import load_config
from lrngpt.training.trainer import train_run
from tests.cli_run import run_cli


def quiet(_message: str) -> None:
    pass


def copy(src: Path, tmp_path: Path, name: str | None = None) -> Path:
    """A copy of a shared run or sweep directory under tmp_path (named as the original, or `name`),
    for a test that changes it."""
    return Path(shutil.copytree(src, tmp_path / (name or src.name)))


def _sets(sets: tuple[str, ...], corpus: str | None) -> tuple[str, ...]:
    """The --set items with the corpus's; one key given twice would make their order matter (the key
    sorts them, so the same run asked for in another order is the same run): refused."""
    items = (*sets, f"data.corpus={corpus}") if corpus else sets
    keys = [item.partition("=")[0] for item in items]
    assert len(set(keys)) == len(keys), f"a key set twice in {items}: say each once"
    return items


class Sweep(NamedTuple):
    """A finished `lrn sweep ... --json`: its directory, the JSON it printed and its stderr."""
    dir: Path
    doc: dict
    err: str


class Factory:
    """Trained runs and sweeps of one test session, under `root` (see the module's docstring)."""

    def __init__(self, root: Path):
        self.root = root
        self._runs: dict[tuple, Path] = {}
        self._sweeps: dict[tuple, Sweep] = {}

    def _fresh(self, kind: str, name: str) -> Path:
        parent = self.root / f"{kind}{len(self._runs) + len(self._sweeps)}"
        parent.mkdir()
        return parent / name

    def run(self, config: str | Path, *sets: str, corpus: str | None = None, name: str = "run",
            copy_to: Path | None = None) -> Path:
        """The run directory of `config` (a preset or a config file) trained with `sets` (`--set` items;
        `corpus` is data.corpus) on the CPU, quietly; a copy under `copy_to` if given."""
        overrides = _sets(("train.device=cpu", *sets), corpus)
        key = (str(config), tuple(sorted(overrides)))
        if key not in self._runs:
            out = self._fresh("run", name)
            train_run(load_config(str(config), list(overrides)), out, progress=False, log=quiet)
            self._runs[key] = out
        return copy(self._runs[key], copy_to) if copy_to else self._runs[key]

    def sweep(self, what: str | dict, *sets: str, scale: str | None = "tiny", axes: tuple[str, ...] = (),
              corpus: str | None = None, name: str = "sweep", copy_to: Path | None = None) -> Sweep:
        """`lrn sweep WHAT --scale SCALE --axis A... --set S... --out DIR --json` run once: WHAT is a
        preset's name or a sweep file's contents (written as `<its name>.json`); `corpus` is data.corpus.
        With `copy_to`, the sweep's directory is a copy there."""
        overrides = _sets(sets, corpus)
        key = (json.dumps(what, sort_keys=True), scale, tuple(axes), tuple(sorted(overrides)))
        if key not in self._sweeps:
            out = self._fresh("sweep", name)
            source = what
            if isinstance(what, dict):
                source = str(out.parent / f"{what.get('name', 'sweep')}.json")
                Path(source).write_text(json.dumps(what))
            argv = [str(source), *(["--scale", scale] if scale else [])]
            argv += [a for axis in axes for a in ("--axis", axis)] + [a for s in overrides for a in ("--set", s)]
            code, stdout, stderr = run_cli("sweep", *argv, "--out", str(out), "--json")
            assert code == 0, stderr
            self._sweeps[key] = Sweep(out, json.loads(stdout), stderr)
        done = self._sweeps[key]
        return done._replace(dir=copy(done.dir, copy_to)) if copy_to else done
