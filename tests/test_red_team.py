"""benchmarks/red_team.py --quick: its cheap cases (every command's --help, argparse refusals, a few
files of the user's, a few API calls) pass, and the table it prints holds the counts its JSON records."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_run import HUNG

ROOT = Path(__file__).parents[1]


@pytest.mark.slow  # 51 subprocesses: 24 s at load 4 on the 2-core machine (each command's --help among them)
def test_the_quick_red_team_pass_is_clean_and_its_table_matches_its_record(tmp_path):
    out = tmp_path / "red.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "red_team.py"), "--quick", "--jobs", "2",
                        "--out", str(out)], capture_output=True, text=True, env=env, timeout=HUNG)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    doc = json.loads(out.read_text())
    lines = r.stdout.splitlines()
    head = next(line for line in lines if line.startswith("command"))
    total = next(line for line in lines if line.startswith("all "))
    columns, numbers = head.split()[1:], [int(n) for n in total.split()[1:]]
    assert dict(zip(columns, numbers, strict=True)) == {**doc["counts"], "all": doc["cases"]}
    assert doc["cases"] == len(doc["records"]) >= 40 and doc["failing"] == 0
    # every command of lrn's parser is in the pass (its --help at least)
    from lrngpt.cli.main import build_parser  # noqa: F401  (the parser the script walks)

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import red_team_cases

    assert set(red_team_cases.leaf_commands()) <= {rec["command"] for rec in doc["records"]}
    assert sum(doc["counts"].values()) == doc["cases"]
