"""Peak memory of `lrn data prepare` on a 10 MB and a 100 MB stories corpus.

Each size runs in its own child process (a fresh cache directory), so peak RSS is that
preparation's alone; the ratio 100 MB / 10 MB shows whether memory grows with the corpus.

    python benchmarks/bench_prepare_memory.py [--sizes 10MB,100MB]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CHILD = """
import json, resource, sys, time
from lrngpt.runconfig.schema import DataConfig
from lrngpt.data.prepared import prepare
t0 = time.perf_counter()
d = prepare(DataConfig(corpus=sys.argv[1], vocab_size=4096), log=lambda m: None)
print(json.dumps({"seconds": time.perf_counter() - t0, "tokens": d.meta["splits"]["train"]["tokens"],
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def measure(spec: str) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "LRN_CACHE_DIR": cache}
        out = subprocess.run([sys.executable, "-c", CHILD, spec], env=env, check=True,
                             capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10MB,100MB")
    args = ap.parse_args()
    rows = {}
    for size in args.sizes.split(","):
        t0 = time.perf_counter()
        rows[size] = measure(f"stories:{size}")
        print(f"stories:{size:>6}: {rows[size]['tokens']:>12,} train tokens, peak RSS "
              f"{rows[size]['peak_rss_mb']:7.0f} MB, {time.perf_counter() - t0:6.1f} s")
    sizes = list(rows)
    if len(sizes) >= 2:
        print(f"peak RSS ratio {sizes[-1]} / {sizes[0]}: {rows[sizes[-1]]['peak_rss_mb'] / rows[sizes[0]]['peak_rss_mb']:.2f}")


if __name__ == "__main__":
    main()
