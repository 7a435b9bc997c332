"""The HTML report (`lrn report`), the Hugging Face export (`lrn export`) and the GPT-2 import (`lrn
import-gpt2`); each returns what its command prints with --json."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from lrngpt.api.checks import Checkpoint, HasPath, checked
from lrngpt.api.results import Run, as_run
from lrngpt.errors import UserError, option
from lrngpt.experiments.findings import judge
from lrngpt.interop.gpt2 import convert_gpt2
from lrngpt.interop.hf_export import export_run_hf
from lrngpt.report import kind_of, write_report_pages
from lrngpt.report.sweeps import sweep_docs


def paths_of(dirs, empty: str = "give a run directory, or one or more sweep directories") -> list[Path]:
    """One or several Runs, Sweeps or directories as paths (UserError `empty` for none)."""
    many = [dirs] if isinstance(dirs, str | Path | HasPath) else list(dirs)
    if not many:
        raise UserError(empty)
    return [Path(d.path if isinstance(d, HasPath) else d) for d in many]


@checked
def write_report(dirs: Sequence[HasPath | str | Path] | HasPath | str | Path,
                 out: str | Path | None = None, tokens: Sequence[str] | None = None, checkpoint: Checkpoint | None = None) -> dict:
    """Write the HTML report of a run, or of one or more sweeps on one page, and its explorer (`lrn report`);
    `dirs` are Runs, Sweeps or their directories. Returns path, sections and explorer, and for sweeps the
    book chapter's findings judged on them ("findings").

    Example: ``lrngpt.write_report(["runs/embed-dim", "runs/embed-dim-small"])["findings"][2]["verdict"]``"""
    paths = paths_of(dirs)
    sweeps = all(kind_of(p) == "sweep" for p in paths)  # else the writer below says what is wrong, as it did
    findings = judge(sweep_docs(paths)) if sweeps else None
    result = write_report_pages(paths, out, tokens=list(tokens) if tokens else None, checkpoint=checkpoint,
                                findings=findings)
    if findings is not None:
        result["findings"] = [f.as_dict() for f in findings]
    return result


@checked
def export_hf(run: Run | str | Path, out: str | Path, checkpoint: Literal["last", "best"] | None = None, force: bool = False,
              license: str | None = None) -> dict:
    """Write a GPT run as a Hugging Face GPT-2 directory that transformers loads (`lrn export --format hf`);
    `checkpoint` None: the Run's own, else last; `license` a Hub licence id for the model card.

    Example: ``lrngpt.export_hf("runs/gpt-cpu", "exports/gpt-cpu", checkpoint="best")["params"]``"""
    r = as_run(run, checkpoint)
    if r.checkpoint == "init":
        raise UserError(f"{option('checkpoint')} init: export the trained weights, last or best")
    return export_run_hf(r.path, out, checkpoint=r.checkpoint, force=force, license=license)


@checked
def import_gpt2(hf_dir: str | Path, out: str | Path, force: bool = False) -> dict:
    """Read a local Hugging Face GPT-2 directory into the run directory `out` (`lrn import-gpt2`), which
    lrngpt.load(out) then reads; `force` replaces an lrn run in `out`.

    Example: ``lrngpt.load(lrngpt.import_gpt2("path/to/hf-gpt2", "runs/gpt2")["run_dir"])``"""
    return convert_gpt2(hf_dir, out, force=force)
