"""The tutorial notebooks run top to bottom in a real Jupyter kernel (this Python, this checkout) with
no cell error, and are stored without outputs, with a first cell that installs lrngpt when missing.
Their progress bars show and each cell's text output stays small: the kernel runs without
ipywidgets (tqdm's text fallback), where a bar inside a bar once printed every redraw of both
(1,235 stream outputs, 48.8 KB, for the width-study sweep cell)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

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
    if path.stem != "1-embedding-lecture":
        figures = [o for o in outputs if "image/png" in o.get("data", {})]
        assert figures, "no figure was drawn under a cell"
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
