"""The prepared GPU benchmark scripts run end to end (on the CPU, with --smoke)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.cli_run import HUNG

ROOT = Path(__file__).resolve().parents[1]


def test_gpt_nsmc_script_smoke_prints_throughput_rows():
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks/gpu/gpt_nsmc.py"), "--smoke"],
                          capture_output=True, text=True, timeout=HUNG, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    final = json.loads(proc.stdout.strip().splitlines()[-1])
    assert final["params"]["total"] == 2_949_504  # configs/nsmc.json's GPT
    assert final["rows"][0]["tokens_per_s"] > 0 and final["rows"][0]["batch"] == 32


def test_run_all_smoke_runs_the_chapter_check_on_cpu_and_writes_its_results(tmp_path):
    """`bash benchmarks/gpu/run_all.sh --smoke`: the sweep (2 tiny widths, auto) and the d = 64 variants
    through the same code the GPU runs; results in $OUT, no checkpoints copied there."""
    out = tmp_path / "out"
    proc = subprocess.run(["bash", str(ROOT / "benchmarks/gpu/run_all.sh"), "--smoke"], capture_output=True,
                          text=True, timeout=HUNG, env={**os.environ, "OUT": str(out), "PYTHON": sys.executable})
    assert proc.returncode == 0, proc.stdout[-3000:]
    r = json.loads((out / "results.json").read_text())
    assert r["device"] == "cpu" and r["gpu"] is None and r["train_tokens"] > 0
    assert [s["label"] for s in r["sweeps"]] == ["auto", "float32+tf32", "bfloat16"] and r["refused"] == {}
    auto = r["sweeps"][0]
    assert [row["d"] for row in auto["rows"]] == [8, 64] and {row["dtype"] for row in auto["rows"]} == {"float32"}
    assert r["sweeps"][2]["rows"][0]["dtype"] == "bfloat16"  # CPU autocast
    for sweep in r["sweeps"]:
        assert sweep["wall_seconds"] >= sum(row["wall_seconds"] for row in sweep["rows"])
        for row in sweep["rows"]:
            assert row["steps"] == 6 and row["tokens_per_s"] > 0 and 0 < row["val_bpb"] < 20
            assert row["wall_seconds"] >= row["train_seconds"] + row["eval_seconds"] - 0.01
            assert row["mfu"] is None  # no peak for a CPU
    assert "| auto | d64-s1337-t6 | float32 |" in (out / "results.md").read_text()
    assert (out / "auto" / "lines.txt").read_text().count("d=") == 2
    assert (out / "auto" / "runs" / "d64-s1337-t6" / "summary.json").exists()
    assert not list(out.rglob("*.pt"))


def test_run_all_chapter_smoke_runs_lrn_chapter_and_leaves_its_verdicts_in_out(tmp_path):
    """`run_all.sh --smoke --chapter`: the GPU's one call for the whole book chapter, at the tiny scale."""
    out = tmp_path / "out"
    proc = subprocess.run(["bash", str(ROOT / "benchmarks/gpu/run_all.sh"), "--smoke", "--chapter"],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "OUT": str(out), "PYTHON": sys.executable})
    assert proc.returncode == 0, proc.stdout[-3000:]
    r = json.loads((out / "chapter.json").read_text())
    assert {v["study"] for v in r["verdicts"]} >= {"width", "small-data", "width-depth", "planted", "pip"}
    assert (out / "chapter" / "report.html").is_file() and (out / "chapter" / "verdicts.json").is_file()
    bad = subprocess.run(["bash", str(ROOT / "benchmarks/gpu/run_all.sh"), "--chapters"], capture_output=True,
                         text=True, env={**os.environ, "OUT": str(out)})
    assert bad.returncode == 2 and "unknown option --chapters" in bad.stdout


def test_peak_flops_by_gpu_name_and_dtype():
    import importlib.util

    spec = importlib.util.spec_from_file_location("chapter_check", ROOT / "benchmarks/gpu/chapter_check.py")
    cc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cc)
    assert cc.peak_tflops("NVIDIA H200", "bfloat16", False) == 989.0
    assert cc.peak_tflops("NVIDIA A100-SXM4-80GB", "float32", True) == 156.0  # TF32
    assert cc.peak_tflops("NVIDIA A100-SXM4-80GB", "float32", False) == 19.5
    assert cc.peak_tflops("NVIDIA L4", "float32", True) == 60.0
    assert cc.peak_tflops("NVIDIA L40S", "bfloat16", False) is None  # not the L4
    assert cc.peak_tflops("Tesla T4", "float16", False) == 65.0 and cc.peak_tflops("Tesla T4", "bfloat16", False) is None
    assert cc.peak_tflops("Tesla V100-SXM2-16GB", "float16", False) == 125.0
    assert cc.peak_tflops(None, "float32", False) is None
    # the MLP's training FLOPs per token at the chapter's d = 64: 6 x (6*64*512 + 512*4096)
    assert cc.flops_per_token({"block_size": 6, "n_embd": 64, "n_hidden": 512}, 4096) == 6 * (196_608 + 2_097_152)
