"""The package as a user gets it: a wheel, installed into a fresh virtual environment outside the
repository, runs `lrn` with the shipped presets (the seed project's configs included) by name."""

from __future__ import annotations

import json
import os
import re
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.cli_run import HUNG

ROOT = Path(__file__).resolve().parents[1]


def clean_env() -> dict:
    """The environment without the repository on the path (and with byte-compiling allowed, whose
    absence setuptools reports as a warning)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    env["PIP_NO_INDEX"] = "1"  # nothing is downloaded
    return env


@pytest.mark.slow
def test_wheel_builds_without_warnings_and_runs_from_a_fresh_venv(tmp_path):
    pytest.importorskip("build")
    src = tmp_path / "src"  # a copy, so the build leaves nothing in the repository
    shutil.copytree(ROOT / "lrngpt", src / "lrngpt", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    env = clean_env()
    built = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir",
                            str(tmp_path / "dist"), str(src)], capture_output=True, text=True, env=env)
    log = built.stdout + built.stderr
    assert built.returncode == 0, log
    assert not re.search(r"(?im)^\s*(\S*warning\b|warning:)", log), log
    wheel = next((tmp_path / "dist").glob("lrngpt-*.whl"))
    import zipfile

    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "lrngpt/py.typed" in names  # type checkers read lrngpt's annotations
    assert {"lrngpt/corpora/stories.txt", "lrngpt/corpora/stories_categories.json"} <= set(names)
    assert "Classifier: Typing :: Typed" in meta
    assert "Provides-Extra: wandb" in meta and "Provides-Extra: umap" in meta

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, env=env)
    py = venv / "bin" / "python"
    # torch and the other dependencies come from the environment running the tests, after the new
    # venv's own site-packages, so lrngpt is the wheel's (a .pth adds paths without their .pth files)
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    shared = [p for p in {*site.getsitepackages(), sysconfig.get_paths()["purelib"]} if Path(p).is_dir()]
    Path(purelib, "_test_shared_env.pth").write_text("\n".join(shared) + "\n")
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True, env=env)

    work = tmp_path / "work"  # a directory with no configs/ and no lrngpt/ in it
    work.mkdir()

    def lrn(*argv) -> str:
        r = subprocess.run([str(venv / "bin" / "lrn"), *argv], capture_output=True, text=True, cwd=work, env=env)
        assert r.returncode == 0, r.stderr
        return r.stdout

    where = subprocess.run([str(py), "-c", "import lrngpt; print(lrngpt.__file__)"], capture_output=True,
                           text=True, cwd=work, env=env, check=True).stdout.strip()
    assert Path(where).is_relative_to(venv), where
    import lrngpt

    assert lrn("--version").strip() == f"lrn {lrngpt.__version__}"
    shown = json.loads(lrn("config", "show", "mlp-cpu", "--json"))
    assert {r["key"] for r in shown["keys"]} >= {"data.corpus", "model.n_embd", "train.lr"}
    assert all(r["help"] for r in shown["keys"])
    dry = json.loads(lrn("train", "--config", "cpu", "--dry-run", "--json"))
    assert dry["config"]["name"] == "cpu" and dry["params"]["total"] == 86_112
    assert "nsmc" in json.dumps(json.loads(lrn("config", "list", "--json")))


FAKE_PYTHON = """#!/bin/bash
echo "$*" >> "$FAKE_LOG"
if [ "$1" = "-c" ]; then exit "$HAS_TORCH"; fi
"""


@pytest.mark.parametrize("has_torch", [False, True], ids=["no-torch", "a-torch-of-the-users"])
@pytest.mark.parametrize("torch_arg", [None, "torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"],
                         ids=["default", "cpu-index"])
def test_make_installs_torch_from_its_one_variable_says_so_first_and_leaves_a_users_torch_alone(
        has_torch, torch_arg, tmp_path):
    """`make setup`'s recipe run for real, with a stand-in .venv/bin/python that records what it is asked:
    pip gets the TORCH variable's words (a version, or a version and an index), after a line saying
    what it installs; with a torch already in the venv, torch is not installed at all."""
    root = Path(__file__).resolve().parents[1]
    if shutil.which("make") is None:
        pytest.skip("no make here")
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(root / name, tmp_path / name)
    fake = tmp_path / ".venv" / "bin" / "python"
    fake.parent.mkdir(parents=True)
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    log = tmp_path / "calls.log"
    env = {**os.environ, "FAKE_LOG": str(log), "HAS_TORCH": "0" if has_torch else "1"}
    r = subprocess.run(["make", "setup", *([f"TORCH={torch_arg}"] if torch_arg else [])], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=HUNG)
    assert r.returncode == 0, r.stderr
    calls = log.read_text().splitlines()
    installs = [c for c in calls if c.startswith("-m pip install -q torch")]
    if has_torch:
        assert installs == [] and not [line for line in r.stdout.splitlines() if line.startswith("installing torch")]
    else:
        words = torch_arg or "torch==2.13.0"
        assert installs == [f"-m pip install -q {words}"]  # the words as pip arguments, not one quoted string
        said = next(line for line in r.stdout.splitlines() if line.startswith("installing torch"))
        assert f"pip install {words}" in said and "CUDA build" in said and "/whl/cpu" in said
    assert calls[-1].startswith("-m pip install -q -e .[dev,") and (tmp_path / ".venv" / ".installed").exists()


def test_the_version_is_defined_once_and_pyproject_states_the_same():
    import tomllib

    from lrngpt.core.version import __version__

    root = Path(__file__).resolve().parents[1]
    assert tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"] == __version__
    import lrngpt

    assert lrngpt.__version__ == __version__
    defined = [p for p in (root / "lrngpt").rglob("*.py") if "__version__ = " in p.read_text(encoding="utf-8")]
    assert [p.relative_to(root).as_posix() for p in defined] == ["lrngpt/core/version.py"]
