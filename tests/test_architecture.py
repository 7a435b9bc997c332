"""The package's layers: a module never imports one above it; nothing outside cli/ imports cli/;
atomic renames live in one helper; commands that need no torch start without it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_run import HUNG

PACKAGE = Path(__file__).resolve().parents[1] / "lrngpt"

# Bottom to top, as the README's "Architecture" section draws them. The package's __init__ re-exports
# the Python API (loaded on first use, so importing any module stays as cheap as it was).
LAYERS = [
    {"errors", "core"},
    {"corpora", "tokenizer", "models"},
    {"runconfig"},
    {"data", "store", "device"},
    {"training", "inference", "interop"},
    {"analysis"},
    {"experiments", "explorer"},
    {"report"},
    {"api", "__init__"},
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


def cli_imports(path: Path) -> list[str]:
    """Every lrngpt name one module of cli/ imports, anywhere in it: `lrngpt.x.y` for a module, `lrngpt:NAME`
    for `from lrngpt import NAME`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == "lrngpt":
            found += [f"lrngpt:{a.name}" for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("lrngpt."):
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "lrngpt"]
    return found


def test_cli_imports_only_the_api_its_own_modules_and_errors():
    """`lrn` is a front end: each command parses, makes one call of the Python API and prints, so the
    command line and a notebook run the same workflow. Nothing below the API is imported from cli/."""
    import lrngpt

    allowed = ("lrngpt.api", "lrngpt.cli", "lrngpt.errors")
    wrong = [f"{p.relative_to(PACKAGE)} imports {name}" for p in sorted((PACKAGE / "cli").glob("*.py"))
             for name in cli_imports(p)
             if not (name in allowed or name.startswith(tuple(a + "." for a in allowed))
                     or (name.startswith("lrngpt:") and name.split(":")[1] in lrngpt.__all__))]
    assert wrong == []
    assert any("lrngpt.api" in cli_imports(p) for p in (PACKAGE / "cli").glob("cmd_*.py"))  # the rule has users


def test_the_top_level_holds_only_subpackages_the_api_and_errors():
    """Every module sits in the subpackage of its layer; the top level is the API's face."""
    loose = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert loose == ["__init__.py", "__main__.py", "errors.py"]


def test_no_module_is_named_like_an_api_name():
    """lrngpt.train is the API's function and nothing else: no module anywhere in the package shares
    a name with a name the API exports, so an attribute never means two things."""
    import lrngpt

    names = {n for n in lrngpt.__all__ if not n.startswith("_")}
    clashes = sorted(module_name(p) for p in PACKAGE.rglob("*.py") if p.stem in names
                     or (p.name == "__init__.py" and p.parent.name in names))
    assert clashes == []


def test_no_library_function_is_named_like_an_api_function():
    """lrngpt.write_report checks, writes and judges; the library's writer of the pages is named for
    what it does (write_report_pages), so neither reads as the other and no import needs an alias.
    The API's own modules and the names the API exports from below (UserError, __version__) are
    not clashes."""
    import lrngpt.api as api

    names = {n for n in api.__all__ if api.WHERE[n].startswith("lrngpt.api.")}
    clashes = sorted(f"{module_name(p)}.{node.name}" for p, top in modules() if top not in ("api", "cli")
                     for node in ast.parse(p.read_text()).body
                     if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name in names)
    assert clashes == []


def test_atomic_renames_live_in_fsio_only():
    users = [p.relative_to(PACKAGE).as_posix() for p, _ in modules()
             if any(s in p.read_text() for s in ("os.replace(", "os.rename(", ".rename(", "os.link("))]
    assert users == ["core/fsio.py"]


@pytest.mark.parametrize("argv", [["--help"], ["theory", "fourth-root", "--n", "4096"],
                                  ["cost", "mlp", "--n-embd", "64"], ["data", "stories", "--help"]])
def test_commands_that_need_no_torch_do_not_import_it(argv):
    code = (f"import sys\nfrom lrngpt.cli.main import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'matplotlib', 'tokenizers')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HUNG)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stderr


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the lrngpt modules it imports anywhere in it, lazy imports inside functions included."""
    paths = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    graph = {}
    for name, path in paths.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "lrngpt":
                found.add(node.module)
                found.update(f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in paths)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.split(".")[0] == "lrngpt")
        # a package's __init__ is not an edge of its own submodules (importing a.b runs a/__init__ first)
        graph[name] = {m for m in found if m in paths and m != name and not name.startswith(m + ".")}
    return graph


def test_the_import_graph_has_no_cycle_lazy_imports_included():
    graph = import_graph()
    state: dict[str, int] = {}
    cycles = []

    def visit(node, stack):
        state[node] = 1
        for other in sorted(graph[node]):
            if state.get(other) == 1:
                cycles.append(" -> ".join(stack[stack.index(other):] + [other]))
            elif other not in state:
                visit(other, [*stack, other])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert cycles == []


def test_no_module_re_exports_another_modules_names():
    """A name is imported from the module that defines it: no shim keeps an old import path working
    (an unused import kept with `noqa: F401`), so a reader finds a name where it is written. The
    package's face (lrngpt/__init__.py, lrngpt/api/__init__.py) re-exports by its __all__ instead."""
    shims = [f"{p.relative_to(PACKAGE).as_posix()}:{i}" for p, _ in modules()
             for i, line in enumerate(p.read_text().splitlines(), 1) if "noqa: F401" in line]
    assert shims == []
    assert not (PACKAGE / "experiments" / "estimate.py").exists()  # timing is lrngpt.training.timing's


def test_the_package_imports_nothing_that_ties_it_to_one_system_or_a_key():
    """Portable to macOS and Windows, and no secret to keep: no POSIX-only lock (fcntl; file locks are
    filelock's), no C call into one libc (ctypes), no signature (hmac: lrn's record needs no key)."""
    banned = ("fcntl", "ctypes", "hmac")
    found = [f"{path}:{line} imports {name}" for path, line, name in imports_anywhere() if name.split(".")[0] in banned]
    assert found == []


def imports_anywhere() -> list[tuple[str, int, str]]:
    found = set()
    for path, _ in modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {(path.relative_to(PACKAGE).as_posix(), node.lineno, a.name) for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                found.add((path.relative_to(PACKAGE).as_posix(), node.lineno, node.module))
    return sorted(found)


# Imports that may sit inside a function: a package lrn-gpt runs without (an extra, or one OS's module)
OPTIONAL = ("pandas", "transformers", "safetensors", "tensorboard", "torch.utils.tensorboard", "wandb", "mlflow",
            "pyarrow", "datasets", "huggingface_hub", "ruamel", "shtab", "umap", "sklearn", "IPython", "ipywidgets",
            "playwright", "nbformat", "resource", "requests")
# The modules `lrn --help`, `lrn theory` and `lrn cost` load (the API's lazy face): here an import
# inside a function keeps torch (or what loads it) out of their start-up
LIGHT = ("__init__.py", "__main__.py", "api/__init__.py", "api/frontend.py", "api/checks.py", "api/theory.py", "core/", "cli/",
         "errors.py", "analysis/costs.py", "analysis/theory.py", "experiments/presets.py", "experiments/thresholds.py",
         "data/sizing.py", "store/layout.py")
MOST_INSIDE = 40


def imports_inside_functions() -> list[tuple[str, int, str]]:
    found = set()
    for path, _ in modules():
        for fn in ast.walk(ast.parse(path.read_text())):
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                for node in ast.walk(fn):
                    if isinstance(node, ast.Import | ast.ImportFrom):
                        name = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                        found.add((path.relative_to(PACKAGE).as_posix(), node.lineno, name or ""))
    return sorted(found)


def test_imports_sit_at_the_top_but_for_optional_packages_and_the_lazy_face():
    """A module imports what it needs at its top, so a reader sees its dependencies in one place. An
    import stays inside a function only for a package lrn-gpt runs without (an extra, an OS's own
    module) or, in the few light modules `lrn --help` loads, to keep torch out of start-up (the guard:
    test_commands_that_need_no_torch_do_not_import_it)."""
    inside = imports_inside_functions()
    wrong = [f"{path}:{line} imports {name}" for path, line, name in inside
             if not (name.split(".")[0] in OPTIONAL or name.startswith(OPTIONAL) or path.startswith(LIGHT))]
    assert wrong == []
    assert len(inside) <= MOST_INSIDE, len(inside)
