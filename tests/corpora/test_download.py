import os
import socket

import pytest

from lrngpt.corpora import download as dl
from lrngpt.corpora.download import cache_dir, download
from lrngpt.errors import UserError

BODY = os.urandom(300_000)


@pytest.fixture
def server(http_server):
    http_server.files["/f.bin"] = BODY
    return http_server


def fetch(server, dest, **kw):
    return download(f"{server.url}/f.bin", dest, **{"progress": False} | kw)


def test_complete_download_lands_at_dest_without_part_file(server, tmp_path):
    dest = tmp_path / "sub" / "f.bin"
    assert fetch(server, dest) == dest
    assert dest.read_bytes() == BODY
    assert not (tmp_path / "sub" / "f.bin.part").exists()
    assert server.requests == [("/f.bin", None)]


def test_existing_good_file_is_returned_without_network(server, tmp_path):
    dest = tmp_path / "f.bin"
    fetch(server, dest)
    server.requests.clear()
    assert fetch(server, dest) == dest
    assert server.requests == []


def test_interrupted_transfer_is_resumed_with_range(server, tmp_path):
    server.cut_after["/f.bin"] = 70_000
    dest = tmp_path / "f.bin"
    fetch(server, dest)
    assert server.requests == [("/f.bin", None), ("/f.bin", "bytes=70000-")]
    assert dest.read_bytes() == BODY


def test_partial_file_is_kept_and_resumed_by_next_call(server, tmp_path, monkeypatch):
    monkeypatch.setattr(dl, "ATTEMPTS", 1)
    server.cut_after["/f.bin"] = 1234
    dest = tmp_path / "f.bin"
    with pytest.raises(UserError, match="stopped after 1234 bytes.*run the command again"):
        fetch(server, dest)
    part = tmp_path / "f.bin.part"
    assert part.read_bytes() == BODY[:1234] and not dest.exists()
    fetch(server, dest)
    assert server.requests[-1] == ("/f.bin", "bytes=1234-")
    assert dest.read_bytes() == BODY and not part.exists()


def test_server_ignoring_range_restarts_from_zero(server, tmp_path):
    server.ranges = False
    (tmp_path / "f.bin.part").write_bytes(b"x" * 500)  # would corrupt the file if appended to
    dest = fetch(server, tmp_path / "f.bin")
    assert server.requests == [("/f.bin", "bytes=500-")]
    assert dest.read_bytes() == BODY


def test_unreachable_server_says_so_and_suggests_local_path(tmp_path):
    with socket.socket() as s:  # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(UserError, match=f"could not reach http://127.0.0.1:{port}/f.bin.*local PATH"):
        download(f"http://127.0.0.1:{port}/f.bin", tmp_path / "f.bin", progress=False)


def test_http_error_is_a_user_error(server, tmp_path):
    with pytest.raises(UserError, match="HTTP 404"):
        download(f"{server.url}/missing", tmp_path / "m", progress=False)


def test_cache_dir_prefers_lrn_cache_dir_then_xdg_then_home(monkeypatch, tmp_path):
    monkeypatch.setenv("LRN_CACHE_DIR", str(tmp_path / "a"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert cache_dir() == tmp_path / "a"
    monkeypatch.delenv("LRN_CACHE_DIR")
    assert cache_dir() == tmp_path / "x" / "lrngpt"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert cache_dir() == tmp_path / "h" / ".cache" / "lrngpt"


def test_part_file_the_server_cannot_resume_is_restarted(server, tmp_path):
    (tmp_path / "f.bin.part").write_bytes(b"x" * (len(BODY) + 10))  # server answers 416
    dest = fetch(server, tmp_path / "f.bin")
    assert [rng for _, rng in server.requests] == [f"bytes={len(BODY) + 10}-", None]
    assert dest.read_bytes() == BODY


def test_progress_bar_goes_to_stderr(server, tmp_path, capsys):
    fetch(server, tmp_path / "f.bin", progress=True)
    out, err = capsys.readouterr()
    assert out == "" and "f.bin: 100%" in err


def test_unwritable_destination_is_a_user_error(server, tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(UserError, match="cannot write .*LRN_CACHE_DIR"):
        fetch(server, tmp_path / "file" / "f.bin")  # a parent that is a file


@pytest.mark.parametrize("shift", [100, -100])
def test_part_that_does_not_start_where_asked_restarts_from_zero(server, tmp_path, shift):
    server.range_shift = shift  # 206 with a Content-Range that starts elsewhere than asked
    (tmp_path / "f.bin.part").write_bytes(BODY[:500])
    dest = fetch(server, tmp_path / "f.bin")
    assert server.requests == [("/f.bin", "bytes=500-"), ("/f.bin", None)]
    assert dest.read_bytes() == BODY


def test_part_with_the_asked_start_is_appended(server, tmp_path):
    (tmp_path / "f.bin.part").write_bytes(BODY[:500])
    dest = fetch(server, tmp_path / "f.bin")
    assert server.requests == [("/f.bin", "bytes=500-")]
    assert dest.read_bytes() == BODY
