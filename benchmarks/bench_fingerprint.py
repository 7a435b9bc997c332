"""Hash once: a corpus's fingerprint the first time, on a cache hit, and `sha256sum` of the same file.

    .venv/bin/python benchmarks/bench_fingerprint.py [GB]        # default 1 GB

Writes a ~1 GB corpus in the TinyStories layout into a temporary directory (10 MB of the stories
generator, seed 0, repeated with a counter so no two blocks are the same text), waits out the
racy window (a just-written file is not remembered, see lrngpt/corpora/stat_cache.py), then
measures, each with its wall time and the bytes this process read (`rchar` of /proc/self/io):

  first        `fingerprint_files` with an empty fingerprint cache: reads and hashes the file
  cache hit    the same call as a new process makes it (the in-process memo cleared): stats the
               file and reads the small cache file
  load_corpus  `load_corpus("text:FILE")` on a hit: the whole corpus object a run builds
  sha256sum    the coreutils tool on the same file (child process), the floor of any full hash

and deletes the corpus. Linux only (/proc/self/io).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def rchar() -> int:
    with open("/proc/self/io") as f:
        return int(next(line for line in f if line.startswith("rchar")).split()[1])


def measure(fn):
    r0, t0 = rchar(), time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0, rchar() - r0


def write_corpus(path: Path, size: int) -> int:
    from lrngpt.corpora.stories import generate_stories

    block = "<|endoftext|>".join(generate_stories(10_000_000, seed=0))
    written, i = 0, 0
    with open(path, "w", encoding="utf-8") as f:
        while written < size:
            piece = f"Story book {i}.\n{block}<|endoftext|>"
            f.write(piece)
            written += len(piece.encode())
            i += 1
    return written


def main() -> None:
    size = int(float(sys.argv[1]) * 1e9) if len(sys.argv) > 1 else 1_000_000_000
    tmp = Path(tempfile.mkdtemp(prefix="bench-fingerprint-"))
    os.environ["LRN_CACHE_DIR"] = str(tmp / "cache")  # an empty fingerprint cache
    from lrngpt.corpora.registry import load_corpus
    from lrngpt.corpora import stat_cache
    from lrngpt.corpora.text import fingerprint_files

    try:
        corpus = tmp / "TinyStoriesV2-GPT4-train.txt"
        t0 = time.perf_counter()
        n = write_corpus(corpus, size)
        print(f"corpus: {n / 1e9:.2f} GB in {time.perf_counter() - t0:.1f} s ({corpus})")
        time.sleep(stat_cache.RACY_NS / 1e9 + 0.2)  # past the racy window
        files = [(corpus, corpus.name)]
        first, t_first, r_first = measure(lambda: fingerprint_files("text", files))
        hit, t_hit, r_hit = measure(lambda: fingerprint_files("text", files))
        loaded, t_load, r_load = measure(lambda: load_corpus(f"text:{corpus}"))
        assert hit == first == loaded.fingerprint
        t0 = time.perf_counter()
        subprocess.run(["sha256sum", str(corpus)], check=True, capture_output=True)
        t_sum = time.perf_counter() - t0
        print(f"first fingerprint : {t_first:7.3f} s, {r_first:>14,} bytes read ({n / t_first / 1e6:,.0f} MB/s)")
        print(f"cache hit         : {t_hit:7.4f} s, {r_hit:>14,} bytes read")
        print(f"load_corpus (hit) : {t_load:7.4f} s, {r_load:>14,} bytes read")
        print(f"sha256sum         : {t_sum:7.3f} s (same file, same run)")
        print(f"ratios: first / sha256sum {t_first / t_sum:.2f}; hit / sha256sum {t_hit / t_sum:.5f}; "
              f"hit bytes / corpus bytes {r_hit / n:.2e}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
