"""The tutorial notebooks run top to bottom in a real Jupyter kernel (this Python, this checkout) with
no cell error, and are stored without outputs, with a first cell that installs lrngpt when missing.
Every figure the API returns is saved as an image, with no `%matplotlib inline` anywhere (a Figure
made without pyplot was saved as the text `<Figure size ...>` before `import lrngpt` taught IPython).
Their progress bars show and each cell's text output stays small: the kernel runs without
ipywidgets (tqdm's text fallback), where a bar inside a bar once printed every redraw of both
(1,235 stream outputs, 48.8 KB, for the width-study sweep cell)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli_run import HUNG

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# Per code cell: the stream outputs (stdout and stderr messages) and their bytes. Measured with the
# bounded bars: 21 outputs / 977 bytes for the sweep cell, 24 / 1,136 for the 4-pass training cell.
MAX_STREAM_OUTPUTS, MAX_STREAM_BYTES = 60, 8_000


def test_there_are_the_three_tutorials():
    assert [p.stem for p in NOTEBOOKS] == ["1-embedding-lecture", "2-width-study", "3-your-own-text"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_without_outputs_and_installs_lrngpt_first(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code)
    assert not [c for c in code if "%matplotlib" in "".join(c["source"])]  # figures show without the magic
    first = "".join(code[0]["source"])
    assert "import lrngpt" in first and "except ImportError" in first and "%pip install" in first


@pytest.fixture
def kernel_env(tmp_path, monkeypatch):
    """A kernel spec that runs this interpreter (not whichever python3 is first on PATH) with this
    checkout first on its path; Jupyter's and IPython's own files go to tmp_path."""
    spec = tmp_path / "jupyter" / "kernels" / "lrngpt-test"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "lrngpt test", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    # without ipywidgets, as in the plain install: tqdm's text bars, the output whose size is bounded
    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-no-widgets.py").write_text("import sys\nsys.modules['ipywidgets'] = None\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    return "lrngpt-test"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_top_to_bottom(path, kernel_env, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("print('package at', lrngpt.__file__)"))  # which lrngpt ran
    work = tmp_path / "work"
    work.mkdir()
    start = time.perf_counter()
    # a cell that raises fails the test with the cell and its traceback (CellExecutionError)
    nbclient.NotebookClient(nb, timeout=600, kernel_name=kernel_env, resources={"metadata": {"path": str(work)}}).execute()
    seconds = time.perf_counter() - start
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs)
    assert f"package at {ROOT / 'lrngpt' / '__init__.py'}" in text  # this checkout's, not an installed one
    figures = [o for o in outputs if "image/png" in o.get("data", {})]
    # every Figure a cell returned is an image (its text/plain, "<Figure size ...>", beside it)
    as_text = [o for o in outputs if o.get("data", {}).get("text/plain", "").startswith("<Figure")]
    assert all("image/png" in o["data"] for o in as_text) and len(figures) == len(as_text)
    assert len(figures) == {"1-embedding-lecture": 2, "2-width-study": 3, "3-your-own-text": 1}[path.stem]
    if path.stem != "1-embedding-lecture":
        html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
        assert any("lrngpt-run" in h or "lrngpt-sweep" in h for h in html)  # a Run / Sweep rendered inline
        # the progress bar shows in the notebook (stderr is no terminal there): the sweep's over its
        # points, a lone run's over its steps
        bar = "sweep embed-dim:" if path.stem == "2-width-study" else "step/s"
        assert any(o.get("name") == "stderr" and bar in o.get("text", "") and "%|" in o.get("text", "")
                   for o in outputs), f"no {bar!r} progress bar in the notebook"
    for cell in nb.cells:
        streams = [o for o in getattr(cell, "outputs", []) if o.output_type == "stream"]
        size = sum(len(o.text.encode("utf-8")) for o in streams)
        assert len(streams) <= MAX_STREAM_OUTPUTS and size <= MAX_STREAM_BYTES, (
            f"{path.stem}: a cell printed {len(streams)} stream outputs, {size} bytes: {cell.source[:80]!r}")
    print(f"{path.name}: {seconds:.0f} s")


FIGURES = ("import lrngpt\n"
           "pip = {'corpus': 'text:a.txt', 'curve': {'pip_loss': [9.0, 5.0, 3.0, 2.5, 2.8, 3.5]}, 'optimal': {'k': 3}}\n"
           "lrngpt.theory_pip_figure(pip)",
           "sup = lrngpt.lesson_superposition(features=6, dims=2, sparsity=[0.0, 0.9], steps=20, batch=64)\n"
           "lrngpt.lesson_superposition_figure(sup)",
           "from matplotlib.figure import Figure\n"
           "fig = Figure()\n"
           "fig.add_subplot().plot([1, 2, 3])\n"
           "fig")


@pytest.mark.slow
def test_the_apis_figures_are_saved_as_images_with_no_matplotlib_magic(kernel_env):
    """Without `%matplotlib inline` and without pyplot, a Figure the API returns is an image/png output
    (and so is any matplotlib Figure, once lrngpt is imported), in the notebook a reader opens later."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in FIGURES])
    nbclient.NotebookClient(nb, timeout=HUNG, kernel_name=kernel_env).execute()
    saved = nbformat.reads(nbformat.writes(nb), as_version=4)
    for cell in saved.cells:
        (out,) = [o for o in cell.outputs if o.output_type == "execute_result"]
        assert "image/png" in out["data"] and out["data"]["text/plain"].startswith("<Figure"), cell.source
        assert __import__("base64").b64decode(out["data"]["image/png"])[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_a_backend_the_user_chose_keeps_its_own_way_of_drawing_figures(kernel_env):
    """`%matplotlib inline` before `import lrngpt`: its printer stays the one IPython uses for a Figure."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    cell = ("%matplotlib inline\n"
            "from matplotlib.figure import Figure\n"
            "png = get_ipython().display_formatter.formatters['image/png']\n"
            "before = png.lookup_by_type(Figure)\n"
            "import lrngpt\n"
            "print(png.lookup_by_type(Figure) is before, before.__module__ if hasattr(before, '__module__') else '')")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
    nbclient.NotebookClient(nb, timeout=HUNG, kernel_name=kernel_env).execute()
    text = "".join(o.get("text", "") for o in nb.cells[0].outputs)
    assert text.startswith("True") and "lrngpt" not in text, nb.cells[0].outputs


TWO_BARS = ("from lrngpt.core import log\n"
            "for leave in (False, True):\n"
            "    with log.progress(total=7, desc=f'leave={leave}', unit='step', enabled=True, leave=leave) as bar:\n"
            "        for _ in range(7):\n"
            "            bar.update()\n")


@pytest.mark.slow
def test_a_widget_bar_is_saved_at_its_final_state_not_at_zero(kernel_env, tmp_path):
    """With ipywidgets (the notebook extra), tqdm draws a widget, and a saved notebook keeps the
    text the widget had when first shown: every bar read later says "0%". lrn's bar replaces its
    output with its last line when it closes, whether it was to leave or to clear itself."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipywidgets")
    (tmp_path / "ipython" / "profile_default" / "startup" / "00-no-widgets.py").unlink()  # widgets on
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(TWO_BARS)])
    nbclient.NotebookClient(nb, timeout=HUNG, kernel_name=kernel_env).execute()
    saved = nbformat.reads(nbformat.writes(nb), as_version=4)  # what a reader of the file gets
    texts = [o["data"]["text/plain"] for o in saved.cells[0].outputs if "text/plain" in o.get("data", {})]
    assert len(texts) == 2, saved.cells[0].outputs
    for leave, text in zip((False, True), texts, strict=True):
        assert text.startswith(f"leave={leave}: 100%") and "7/7" in text, text
    assert not [o for o in saved.cells[0].outputs if o.output_type == "error"]


@pytest.mark.slow
def test_jupyter_nbconvert_execute_runs_a_notebook_and_saves_the_bars_final_state(kernel_env, tmp_path):
    """The notebook extra brings nbconvert, so `jupyter nbconvert --to notebook --execute` (the usual
    way to run a notebook from a shell) works, and the file it writes shows where each bar ended and
    each figure as an image."""
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbconvert")
    pytest.importorskip("ipywidgets")
    (tmp_path / "ipython" / "profile_default" / "startup" / "00-no-widgets.py").unlink()
    source = tmp_path / "bars.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(TWO_BARS),
                                                   nbformat.v4.new_code_cell("import lrngpt\n" + FIGURES[1])]), source)
    jupyter = Path(sys.executable).parent / "jupyter"
    r = subprocess.run([str(jupyter), "nbconvert", "--to", "notebook", "--execute", str(source),
                        f"--ExecutePreprocessor.kernel_name={kernel_env}", "--output", "ran.ipynb"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=HUNG)
    assert r.returncode == 0, r.stderr
    ran = nbformat.read(tmp_path / "ran.ipynb", as_version=4)
    (figure,) = [o for o in ran.cells[1].outputs if o.output_type == "execute_result"]
    assert "image/png" in figure["data"]  # the figure is in the file as an image, with no magic line
    outputs = ran.cells[0].outputs
    texts = [o["data"]["text/plain"] for o in outputs if "text/plain" in o.get("data", {})]
    assert [t.split(":")[0] for t in texts] == ["leave=False", "leave=True"]
    assert all(": 100%" in t and "7/7" in t for t in texts), texts


def test_the_width_study_notebook_draws_the_pip_prediction_beside_its_sweep():
    nb = json.loads((ROOT / "notebooks" / "2-width-study.ipynb").read_text(encoding="utf-8"))
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    cell = next(c for c in code if "theory_pip_figure" in c)
    assert 'lrngpt.theory_pip("stories:300KB", vocab_size=512, sweep=sweep)' in cell  # the tiny scale's text
    assert cell.rstrip().endswith("lrngpt.theory_pip_figure(pip)")  # the figure is the cell's output
    assert code.index(cell) > next(i for i, c in enumerate(code) if "lrngpt.sweep(" in c)
