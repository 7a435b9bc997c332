"""Shared fixtures."""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before any test imports torch: see lrngpt/__init__.py
# No test reaches the network: datasets, transformers and huggingface_hub read these at import.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"

import hashlib
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.factory import Factory


class _Handler(BaseHTTPRequestHandler):
    """Serves server.files[path]; honours `Range: bytes=N-` unless server.ranges is False (with
    server.range_shift, it answers the part from N + shift instead, labelled as such); on a
    path's first request stops after server.cut_after[path] bytes and closes the connection. HEAD
    answers as the Hugging Face Hub does for `.../resolve/<commit>/<file>` (huggingface_hub's
    hf_hub_download asks it first): the commit, the file's sha256 as its ETag (server.etags[path]
    says another), its size; server.heads lists the HEAD requests."""

    def do_HEAD(self):
        srv = self.server
        srv.heads.append(self.path)
        body = srv.files.get(self.path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        if commit := re.search(r"/resolve/([0-9a-f]{40})/", self.path):
            self.send_header("X-Repo-Commit", commit[1])
        self.send_header("ETag", f'"{srv.etags.get(self.path) or hashlib.sha256(body).hexdigest()}"')
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()

    def do_GET(self):
        srv = self.server
        rng = self.headers.get("Range")
        srv.requests.append((self.path, rng))
        body = srv.files.get(self.path)
        if body is None:
            self.send_error(404)
            return
        start = int(rng.removeprefix("bytes=").split("-")[0]) if rng and srv.ranges else 0
        if start:
            start = min(len(body) - 1, start + srv.range_shift)  # a server that sends another part
        if start >= len(body) > 0:
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{len(body)}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        cut = srv.cut_after.pop(self.path, None)
        self.wfile.write(body[start:] if cut is None else body[start : start + cut])
        self.close_connection = True

    def log_message(self, *args):  # keep test output quiet
        pass


@pytest.fixture
def http_server():
    """A local HTTP server on 127.0.0.1 (no network). Fill .files {"/name": bytes}; read .requests
    [(path, Range header or None)]; .url is its base URL; .ranges, .range_shift, .cut_after: see
    _Handler; .heads, .etags: HEAD requests."""
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.files, srv.requests, srv.cut_after, srv.ranges, srv.range_shift = {}, [], {}, True, 0
    srv.heads, srv.etags = [], {}
    srv.url = f"http://127.0.0.1:{srv.server_address[1]}"
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture(autouse=True, scope="session")
def _outside_slurm_arrays():
    """`lrn sweep` takes its shard from a Slurm job array; tests run inside one still see every point."""
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("SLURM_ARRAY_")}
    yield
    os.environ.update(saved)


@pytest.fixture(autouse=True)
def _no_packed_probe(monkeypatch, request):
    """A sweep here trains one point after another unless its test asks for points at once
    (--points-at-once N) or for the real packed probe (`@pytest.mark.packed_probe`): the probe starts
    worker processes and times the chapter's model, which would make every dry run's plan depend on
    this machine's load."""
    if request.node.get_closest_marker("packed_probe") is None:
        monkeypatch.setattr("lrngpt.experiments.packing.probe_packed", lambda *a, **k: None)


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Every test session gets its own lrn cache, so tests never read or fill ~/.cache."""
    private = {"LRN_CACHE_DIR": "lrn-cache"}
    old = {var: os.environ.get(var) for var in private}
    for var, name in private.items():
        os.environ[var] = str(tmp_path_factory.mktemp(name))
    yield
    for var, value in old.items():
        if value is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = value


WORDS = ("Lily Tom Mia Ben Luna saw a red blue green cat dog bird ball kite in the park garden "
         "was happy sad and said hello to her his friend big small ran jumped played with").split()


@pytest.fixture(scope="session")
def text_corpus(tmp_path_factory):
    """`text:PATH` spec of a small corpus the test session writes: 300 documents of word salad."""
    import random

    rng = random.Random(0)
    docs = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 60))) + "." for _ in range(300)]
    path = tmp_path_factory.mktemp("corpus") / "small.txt"
    path.write_text("\n<|endoftext|>\n".join(docs), encoding="utf-8")
    return f"text:{path}"


@pytest.fixture
def tiny_config(text_corpus):
    """A seconds-long MLP run config on the session corpus; call it with --set style overrides."""
    from lrngpt.runconfig.schema import load_config

    def make(*overrides: str):
        return load_config("mlp-tiny", [f"data.corpus={text_corpus}", "data.vocab_size=300",
                                        "train.device=cpu", *overrides])

    return make


@pytest.fixture(scope="session")
def _factory(tmp_path_factory):
    return Factory(tmp_path_factory.mktemp("trained"))


@pytest.fixture(scope="session")
def trained(_factory):
    """`trained(config, *sets, corpus=None, copy_to=None) -> run dir`: the run trained once per distinct
    config and --set items for the session (tests/factory.py); a test that changes it asks for a copy."""
    return _factory.run


@pytest.fixture(scope="session")
def trained_sweep(_factory):
    """`trained_sweep(preset or sweep-file dict, *sets, scale="tiny", axes=(), corpus=None, copy_to=None)
    -> Sweep(dir, doc, err)`: `lrn sweep ... --json` run once per distinct sweep for the session."""
    return _factory.sweep
