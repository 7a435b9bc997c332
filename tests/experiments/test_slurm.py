"""Cluster sweeps: in a Slurm job array `lrn sweep` takes its shard from SLURM_ARRAY_TASK_*, and
the sbatch scripts in docs/how-to/slurm.md are valid bash whose array covers the grid once."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from lrngpt.cli.main import build_parser, main
from lrngpt.errors import UserError
from lrngpt.experiments.grid import resolve_shard, resolve_sweep, slurm_shard
from lrngpt.experiments.presets import WIDTHS
from lrngpt.experiments.sweepdir import same_sweep
from tests.cli_run import HUNG

DOC = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "slurm.md"


def dry_run(monkeypatch, env: dict, *argv: str) -> tuple[int, dict | None, str]:
    for name in ("ID", "COUNT", "MIN", "MAX", "STEP"):
        monkeypatch.delenv(f"SLURM_ARRAY_TASK_{name}", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    # the dry run times 3 steps of every full-scale model; the shard tests need only its point list
    monkeypatch.setattr("lrngpt.training.timing.probe",
                        lambda cfg, device: {"train_s_per_token": 1e-4, "eval_s_per_token": 3e-5})
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["sweep", *argv, "--dry-run", "--json"])
    return code, json.loads(out.getvalue()) if code == 0 else None, err.getvalue()


FULL = ("embed-dim", "--scale", "full")


def slurm(task: int, count: int, low: int = 0, **extra) -> dict:
    env = {"SLURM_ARRAY_TASK_ID": str(task), "SLURM_ARRAY_TASK_COUNT": str(count),
           "SLURM_ARRAY_TASK_MIN": str(low), "SLURM_ARRAY_TASK_MAX": str(low + count - 1)}
    return env | {f"SLURM_ARRAY_TASK_{k.upper()}": str(v) for k, v in extra.items()}


def test_an_array_task_runs_its_shard_counted_from_the_array_minimum(monkeypatch, tmp_path):
    code, doc, err = dry_run(monkeypatch, slurm(3, 8, low=1), *FULL, "--out", str(tmp_path))  # --array=1-8
    assert code == 0
    assert doc["shard"] == "2/8" and [p["name"] for p in doc["points"]] == ["d16-s1337-t4000"]
    # one line naming the shard and the variables it was read from, with their values
    assert err.count("\n") == 1 and err.startswith("lrn sweep: shard 2/8 from Slurm: ")
    assert all(v in err for v in ("SLURM_ARRAY_TASK_ID 3", "SLURM_ARRAY_TASK_MIN 1", "SLURM_ARRAY_TASK_COUNT 8"))


def test_an_explicit_shard_wins_and_outside_an_array_it_is_everything(monkeypatch, tmp_path):
    code, doc, err = dry_run(monkeypatch, slurm(3, 8), *FULL, "--out", str(tmp_path), "--shard", "1/2")
    assert code == 0 and doc["shard"] == "1/2" and len(doc["points"]) == 4 and err == ""
    code, doc, err = dry_run(monkeypatch, {}, *FULL, "--out", str(tmp_path))
    assert code == 0 and doc["shard"] == "0/1" and len(doc["points"]) == 8 and err == ""


def test_stepped_arrays_map_ids_to_consecutive_shards():
    assert [slurm_shard(slurm(t, 4, STEP=2))[0] for t in (0, 2, 4, 6)] == [(0, 4), (1, 4), (2, 4), (3, 4)]
    assert resolve_shard(None, {}) == ((0, 1), None)
    assert resolve_shard("1/3", slurm(0, 8)) == ((1, 3), None)


@pytest.mark.parametrize("env, message", [
    (slurm(9, 8, low=1), "SLURM_ARRAY_TASK_ID 9 is not one of the 8 tasks of an array from 1 in steps of 1"),
    (slurm(0, 8, low=1), "SLURM_ARRAY_TASK_ID 0 is not one of the 8 tasks"),
    (slurm(3, 4, STEP=2), "SLURM_ARRAY_TASK_ID 3 is not one of the 4 tasks of an array from 0 in steps of 2"),
    (slurm(5, 3, low=1) | {"SLURM_ARRAY_TASK_MAX": "9"}, "is not one of the 3 tasks"),  # --array=1,5,9
    ({"SLURM_ARRAY_TASK_ID": "x", "SLURM_ARRAY_TASK_COUNT": "8"}, "SLURM_ARRAY_TASK_ID='x' is not an integer"),
    ({"SLURM_ARRAY_TASK_ID": "2"}, "SLURM_ARRAY_TASK_COUNT is not set"),
    (slurm(0, 0), "is not one of the 0 tasks"),
])
def test_bad_slurm_variables_exit_2_with_one_line(monkeypatch, tmp_path, env, message):
    code, _, err = dry_run(monkeypatch, env, *FULL, "--out", str(tmp_path))
    assert code == 2 and err.count("\n") == 1 and message in err and "--shard i/n" in err, err
    with pytest.raises(UserError, match=re.escape(message)):
        slurm_shard(env)


# ---- the scripts in docs/how-to/slurm.md --------------------------------------------------------

def doc_blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(), flags=re.S)


def test_doc_sbatch_scripts_are_valid_bash_with_the_multi_node_torchrun_line():
    scripts = [b for b in doc_blocks("bash") if b.startswith("#!/bin/bash\n#SBATCH")]
    assert len(scripts) == 2
    for script in scripts:
        check = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True, timeout=HUNG)
        assert check.returncode == 0, check.stderr
    (torchrun,) = [s for s in scripts if "torchrun" in s]
    for flag in ('--nnodes "$SLURM_NNODES"', '--node-rank "$SLURM_NODEID"', "--rdzv-backend c10d",
                 '--rdzv-endpoint "$HEAD:29500"', "-m lrngpt train", "#SBATCH --nodes=2",
                 "#SBATCH --ntasks-per-node=1"):
        assert flag in torchrun, flag


def test_doc_array_script_covers_the_eight_widths_once_and_matches_the_summary_job(monkeypatch, tmp_path):
    (script,) = [b for b in doc_blocks("bash") if "#SBATCH --array" in b]
    low, high = map(int, re.search(r"#SBATCH --array=(\d+)-(\d+)\s", script).groups())
    assert "#SBATCH --gpus=1" in script
    (line,) = [ln for ln in script.splitlines() if ln.startswith("lrn sweep")]
    args = [str(tmp_path) if a == "$SWEEP_DIR" else a for a in shlex.split(line)[2:]]
    assert "--shard" not in args
    seen = []
    for task in range(low, high + 1):
        code, doc, err = dry_run(monkeypatch, slurm(task, high - low + 1, low=low), *args)
        assert code == 0 and f"shard {task - low}/{high - low + 1} from Slurm" in err, err
        seen += [p["values"]["model.n_embd"] for p in doc["points"]]
    assert seen == WIDTHS  # each width once, task k -> point k
    # the dependent summary job reads the same directory (--summary-only needs nothing else of the sweep's flags;
    # the documented job still names the same sweep, so it reads as the one the array ran)
    (follow_up,) = [b for b in doc_blocks("sh") if "--summary-only" in b]
    summary = shlex.split(re.search(r'&& (lrn sweep .*?)"', follow_up, flags=re.S).group(1))

    def definition(argv):
        a = build_parser().parse_args(argv)
        sets = a.overrides + ([f"train.device={a.device}"] if a.device else [])
        return resolve_sweep(a.source, a.scale, sets, a.axes).definition()

    assert same_sweep(definition(summary[1:]), definition(["sweep", *args]))
