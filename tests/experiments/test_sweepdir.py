"""SweepDir, the owner of a sweep directory: its readers of lines.txt and summary.json (the figures
folder every writer takes from it: test_figures.py)."""

from __future__ import annotations

import json

import pytest

from lrngpt.errors import UserError
from lrngpt.experiments.sweepdir import SweepDir


def test_lines_text_is_the_file_and_a_huge_one_is_cut_at_a_line_saying_how_much_is_left(tmp_path):
    d = SweepDir(tmp_path)
    assert d.lines_text() == ""  # no lines.txt yet
    (tmp_path / "lines.txt").write_text("d=8 | a\nd=16 | b\n")
    assert d.lines_text() == "d=8 | a\nd=16 | b\n"
    line = "d=8 | " + "x" * 93 + "\n"  # 100 bytes
    (tmp_path / "lines.txt").write_text(line * 50)  # 5,000 bytes
    text = d.lines_text(most=1_050)
    assert text.startswith(line * 10) and text.count(line) == 10  # whole lines only: 1,000 bytes of them
    assert text.endswith(f"... (4,000 more bytes of {tmp_path / 'lines.txt'} not shown)\n")
    assert len(text.encode()) < 1_200


def test_summary_rows_are_read_by_the_owner_with_one_line_refusals(tmp_path):
    d = SweepDir(tmp_path / "sweep")
    with pytest.raises(UserError, match=r"^--sweep .*sweep: no summary.json there; run `lrn sweep \.\.\. --out"):
        d.summary_rows(flag="--sweep")
    (tmp_path / "sweep").write_text("a file")
    with pytest.raises(UserError, match=r"sweep is a file; give the sweep directory"):
        d.summary_rows()
    (tmp_path / "sweep").unlink()
    (tmp_path / "sweep").mkdir()
    rows = [{"n_embd": 64, "val_bpb": 0.93}, "not a row"]
    (tmp_path / "sweep" / "summary.json").write_text(json.dumps({"rows": rows, "scale": "cpu"}))
    assert d.summary_rows() == rows
    (tmp_path / "sweep" / "summary.json").write_text(json.dumps(rows))  # a table written by hand: a bare list
    assert d.summary_rows() == rows
    (tmp_path / "sweep" / "summary.json").write_text('{"rows": 5}')
    assert d.summary_rows() == []
    (tmp_path / "sweep" / "summary.json").write_text("{broken")
    with pytest.raises(UserError, match="is not valid JSON"):
        d.summary_rows()
