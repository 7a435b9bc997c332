"""The TinyStories download through huggingface_hub (lrngpt.corpora.hub_file) against the urllib
downloader it replaced (lrngpt.corpora.download, still used for NSMC), on a local server.

    .venv/bin/python benchmarks/bench_hub_download.py [MEGABYTES]

A local HTTP server serves MEGABYTES (default 200) of random bytes at the pinned TinyStories path,
answering HEAD as the Hub does. Per repeat, interleaved so that a busy machine slows both alike:
a fresh download with its size + sha256 check, then two calls with the file in place (what every
later `lrn train` on the corpus does: urllib's hashed the file each time, huggingface_hub's remembers
its sha256 by its stat after one hash), then a call with no server listening (what an offline
machine with an empty cache sees; huggingface_hub's own hf_hub_download retries for about 25 s). The median of each is printed with its ratio to urllib's.
Loopback is no network: the fresh-download row says what each costs in CPU, not what a real
download takes (that is the network's bandwidth for both).
"""

import hashlib
import os
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

os.environ.pop("HF_HUB_OFFLINE", None)  # before huggingface_hub reads it
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"

from lrngpt.corpora import tinystories as ts  # noqa: E402
from lrngpt.corpora.download import download  # noqa: E402
from lrngpt.corpora.hub_file import pinned_file, sha256_of  # noqa: E402
from lrngpt.errors import UserError  # noqa: E402

NAME = "f.txt"
PATH = f"/datasets/{ts.REPOSITORY}/resolve/{ts.REVISION}/{NAME}"


def serve(body: bytes) -> tuple[ThreadingHTTPServer, str]:
    sha = hashlib.sha256(body).hexdigest()

    class Handler(BaseHTTPRequestHandler):
        def _headers(self, code: int, start: int = 0) -> None:
            self.send_response(code)
            self.send_header("X-Repo-Commit", ts.REVISION)
            self.send_header("ETag", f'"{sha}"')
            self.send_header("Content-Length", str(len(body) - start))
            self.end_headers()

        def do_HEAD(self):
            self._headers(200)

        def do_GET(self):
            rng = self.headers.get("Range")
            start = int(rng[6:].split("-")[0]) if rng else 0
            self._headers(206 if start else 200, start)
            view = memoryview(body)[start:]
            for i in range(0, len(view), 1 << 20):
                self.wfile.write(view[i : i + (1 << 20)])

        def log_message(self, *args):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}"


def timed(fn) -> float:
    t0 = time.perf_counter()
    try:
        fn()
    except UserError:
        pass  # the offline row: the error is the result
    return time.perf_counter() - t0


def main() -> None:
    megabytes = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    repeats = 3
    body = os.urandom(megabytes * 1_000_000)
    size, sha = len(body), hashlib.sha256(body).hexdigest()
    srv, url = serve(body)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    work = Path(tempfile.mkdtemp(prefix="lrn-bench-hub-"))
    os.environ["LRN_CACHE_DIR"] = str(work / "lrn-cache")  # the stat cache of the sha256s
    rows: dict[str, dict[str, list[float]]] = {"urllib": {}, "huggingface_hub": {}}
    try:
        for r in range(repeats):
            for how in rows:
                d = work / f"{how}-{r}"
                if how == "urllib":
                    def fetch(base=url, d=d):
                        got = download(f"{base}{PATH}", d / NAME, progress=False)
                        assert sha256_of(got) == sha  # the check a pinned file gets
                else:
                    def fetch(base=url, d=d):
                        pinned_file(ts.REPOSITORY, NAME, ts.REVISION, d, size=size, sha256=sha, endpoint=base)
                rows[how].setdefault("fresh download + check", []).append(timed(fetch))
                time.sleep(2.1)  # later runs: the file's stat is older than the stat cache's racy window
                rows[how].setdefault("file in place, next run", []).append(timed(fetch))
                rows[how].setdefault("file in place, runs after", []).append(timed(fetch))
                empty = work / f"{how}-{r}-offline"
                if how == "urllib":
                    def offline(empty=empty):
                        download(f"{closed}{PATH}", empty / NAME, progress=False)
                else:
                    def offline(empty=empty):
                        pinned_file(ts.REPOSITORY, NAME, ts.REVISION, empty, size=size, sha256=sha, endpoint=closed)
                rows[how].setdefault("nothing listening", []).append(timed(offline))
                shutil.rmtree(d, ignore_errors=True)
    finally:
        srv.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    print(f"{megabytes} MB, median of {repeats}, loopback (load: {os.getloadavg()[0]:.2f})")
    print(f"{'':28}{'urllib':>10}{'huggingface_hub':>17}{'ratio':>8}")
    for what in rows["urllib"]:
        ref, hub = (statistics.median(rows[h][what]) for h in ("urllib", "huggingface_hub"))
        print(f"{what:28}{ref:>9.3f}s{hub:>16.3f}s{hub / ref:>8.2f}")


if __name__ == "__main__":
    main()
