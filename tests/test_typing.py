"""Type checkers read the Python API as documented: mypy (and pyright, where it is installed) check a
script made of the notebook tutorial's Python API block, every example of docs/python-api.md and the example of
every public docstring with no error, and flag exactly the one wrong call added to it.

Only the API is read (`lrngpt` and `lrngpt.api.*`); every other module, torch's and the library's, is
skipped (Any to the checker), so a run takes seconds, not the minutes torch's stubs would. Measured on
the 2-core machine with other jobs on it: mypy 5.7 s of CPU (35 s wall at load 10), pyright 2.9 s of CPU.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PREAMBLE = '''\
from __future__ import annotations

import lrngpt

cfg = lrngpt.config("mlp-tiny")
run = lrngpt.load("runs/tiny")
best = lrngpt.load("runs/tiny", checkpoint="best")
sw = lrngpt.load_sweep("runs/widths")
'''
WRONG = 'run.sample(123)  # the one wrong call: a prompt is a str\n'
MYPY_CONFIG = """\
[mypy]
python_version = 3.11
follow_imports = skip
ignore_missing_imports = True
warn_unused_ignores = False
[mypy-lrngpt]
follow_imports = silent
[mypy-lrngpt.api.*]
follow_imports = silent
"""


def readme_blocks() -> list[str]:
    """The Python API block of the notebook tutorial (the README's front door links to it)."""
    text = (ROOT / "docs" / "tutorials" / "notebooks.md").read_text(encoding="utf-8")
    section = text[text.index("## The Python API"):]
    return re.findall(r"^```python\n(.*?)^```", section, flags=re.S | re.M)


def docs_examples() -> list[str]:
    """The last cell of every row of docs/python-api.md's tables: its example."""
    found = []
    for line in (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("| `") else []
        if len(cells) >= 3 and cells[-1].startswith("`") and cells[-1].endswith("`"):
            found.append(cells[-1].strip("`"))
    return found


def docstring_examples() -> list[str]:
    """The example of every public function's and method's docstring (what help() shows)."""
    import inspect

    import lrngpt

    objects = [getattr(lrngpt, n) for n in lrngpt.__all__ if callable(getattr(lrngpt, n))]
    objects += [m for cls in (lrngpt.Run, lrngpt.Sweep) for n, m in inspect.getmembers(cls) if not n.startswith("_")]
    docs = [inspect.getdoc(o.fget if isinstance(o, property) else o) or "" for o in objects]
    return [m for d in docs for m in re.findall(r"Example: ``(.+?)``", d, flags=re.S)]


def script() -> str:
    """The examples, each in a function of its own (so one example's names do not leak into another)."""
    parts = [PREAMBLE]
    for i, code in enumerate(readme_blocks() + docs_examples() + docstring_examples()):
        if code.startswith("except "):  # `except lrngpt.UserError as e: print(e)`: the clause of a try
            code = f"try:\n    pass\n{code}"
        body = "\n".join("    " + line for line in code.splitlines())
        parts.append(f"def example_{i}() -> None:\n{body}\n")
    return "\n\n".join(parts) + "\n"


def test_the_script_holds_every_documented_example_and_parses():
    import ast

    examples = docs_examples()
    assert len(readme_blocks()) == 1 and len(examples) > 50 and len(docstring_examples()) > 60
    assert any("minutes=25, dry_run=True" in e for e in examples) and any("by_reads=True" in e for e in examples)
    ast.parse(script())


@pytest.fixture
def typed_script(tmp_path) -> Path:
    path = tmp_path / "examples.py"
    path.write_text(script() + WRONG)
    return path


def _wrong_line(path: Path) -> int:
    return path.read_text().splitlines().index(WRONG.rstrip("\n")) + 1


def test_mypy_checks_the_documented_examples_and_flags_the_wrong_call(typed_script, tmp_path):
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install -e '.[dev]')")
    (tmp_path / "mypy.ini").write_text(MYPY_CONFIG)
    r = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(tmp_path / "mypy.ini"), "--no-incremental",
                        "--cache-dir", str(tmp_path / "cache"), str(typed_script)], capture_output=True, text=True,
                       timeout=600, cwd=tmp_path, env={**os.environ, "MYPYPATH": str(ROOT)})
    errors = [line for line in r.stdout.splitlines() if ": error:" in line]
    assert errors == [f"{typed_script.name}:{_wrong_line(typed_script)}: error: Argument 1 to \"sample\" of \"Run\" has "
                      'incompatible type "int"; expected "str"  [arg-type]'], r.stdout + r.stderr


def _pyright() -> list[str] | None:
    if shutil.which("pyright"):
        return ["pyright"]
    if importlib.util.find_spec("pyright") is not None:
        return [sys.executable, "-m", "pyright"]
    return None


def test_pyright_checks_the_documented_examples_and_flags_the_wrong_call(typed_script, tmp_path):
    command = _pyright()
    if command is None:
        pytest.skip("pyright is not installed (pip install pyright)")
    (tmp_path / "pyrightconfig.json").write_text(
        f'{{"extraPaths": ["{ROOT}"], "typeCheckingMode": "basic", "pythonVersion": "3.11"}}')
    r = subprocess.run([*command, "--pythonpath", sys.executable, str(typed_script)], capture_output=True, text=True,
                       timeout=600, cwd=tmp_path)
    errors = [line.strip() for line in r.stdout.splitlines() if " - error:" in line]
    assert len(errors) == 1, r.stdout + r.stderr
    assert errors[0].startswith(f"{typed_script}:{_wrong_line(typed_script)}:") and '"prompt" of type "str"' in errors[0]


USER_SCRIPT = '''\
import lrngpt

run = lrngpt.load("runs/tiny")
run.sample(123)
lrngpt.theory_fourth_root("4096")
cfg = lrngpt.config("mlp-tiny", **{"train.steps": 60})
'''


def test_mypy_in_a_users_own_folder_finds_lrngpt_and_flags_only_the_wrong_calls(tmp_path):
    """What a user gets from `mypy mine.py` in a folder of their own after the README's install: the
    package is found (no "Cannot find implementation"), both wrong calls are flagged by the real
    signatures, and nothing inside lrngpt is reported (its own check: test_lrngpt_is_clean_under_mypy)."""
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install -e '.[dev]')")
    (tmp_path / "mine.py").write_text(USER_SCRIPT)
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    r = subprocess.run([sys.executable, "-m", "mypy", "mine.py"], capture_output=True, text=True, timeout=600,
                       cwd=tmp_path, env=env)
    assert "Cannot find implementation" not in r.stdout, (
        "mypy cannot see lrngpt from this folder: reinstall it as a path, "
        "pip install -e . --config-settings editable_mode=compat\n" + r.stdout)
    errors = [line.split(": error: ")[0] for line in r.stdout.splitlines() if ": error: " in line]
    assert errors == ["mine.py:4", "mine.py:5"], r.stdout
    assert '"sample" of "Run"' in r.stdout and '"theory_fourth_root"' in r.stdout and "lrngpt/" not in r.stdout


def test_lrngpt_is_clean_under_mypy(tmp_path):
    """lrngpt itself type-checks at the strictness pyproject.toml states ([tool.mypy]: mypy's defaults over
    every module, missing stubs read as Any), so a maintainer's change that breaks a type shows here."""
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install -e '.[dev]')")
    r = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")], capture_output=True,
                       text=True, timeout=900, cwd=ROOT)
    assert r.returncode == 0 and ": error:" not in r.stdout, r.stdout + r.stderr
    assert r.stdout.strip().splitlines()[-1].startswith("Success: no issues found"), r.stdout
