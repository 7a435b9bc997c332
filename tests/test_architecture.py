"""The package's layers: a module never imports one above it; nothing outside cli/ imports cli/;
atomic renames live in one helper; commands that need no torch start without it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "lrngpt"

# Bottom to top, as the README's "Architecture" section draws them.
LAYERS = [
    {"errors", "fsio", "ownership", "log", "validate", "__init__"},
    {"corpora", "tokenizer", "models"},
    {"config", "config_help", "config_files"},
    {"data", "checkpoint", "distributed", "run", "run_files"},
    {"train", "trackers", "evaluate", "sample", "interop"},
    {"analysis"},
    {"demo", "experiments", "explorer"},
    {"report"},
    {"cli", "__main__"},
]
LEVEL = {name: i for i, names in enumerate(LAYERS) for name in names}


def modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        top = rel.parts[0].removesuffix(".py")
        yield path, top


def imported_tops(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("lrngpt."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.ImportFrom) and node.module == "lrngpt":
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("lrngpt."))
    return found


def test_every_module_has_a_layer():
    assert {top for _, top in modules()} <= set(LEVEL)


def test_no_module_imports_a_layer_above_its_own():
    wrong = []
    for path, top in modules():
        for other in imported_tops(path):
            if other in LEVEL and LEVEL[other] > LEVEL[top]:
                wrong.append(f"{path.relative_to(PACKAGE)} imports lrngpt.{other}")
    assert wrong == []


def test_nothing_outside_cli_imports_cli():
    assert [p for p, top in modules() if top not in ("cli", "__main__") and "cli" in imported_tops(p)] == []


def test_atomic_renames_live_in_fsio_only():
    users = [p.relative_to(PACKAGE).as_posix() for p, _ in modules()
             if any(s in p.read_text() for s in ("os.replace(", "os.rename(", ".rename(", "os.link("))]
    assert users == ["fsio.py"]


@pytest.mark.parametrize("argv", [["--help"], ["theory", "fourth-root", "--n", "4096"],
                                  ["cost", "mlp", "--n-embd", "64"], ["data", "stories", "--help"]])
def test_commands_that_need_no_torch_do_not_import_it(argv):
    code = (f"import sys\nfrom lrngpt.cli.main import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'matplotlib', 'tokenizers')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stderr
