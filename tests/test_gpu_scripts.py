"""The prepared GPU benchmark scripts run end to end (on the CPU, with --smoke)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_gpt_nsmc_script_smoke_prints_throughput_rows():
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks/gpu/gpt_nsmc.py"), "--smoke"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    final = json.loads(proc.stdout.strip().splitlines()[-1])
    assert final["params"]["total"] == 2_949_504  # configs/nsmc.json's GPT
    assert final["rows"][0]["tokens_per_s"] > 0 and final["rows"][0]["batch"] == 32
