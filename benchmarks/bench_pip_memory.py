"""Peak memory of `lrn theory pip` (the PIP-loss width estimate) by vocabulary size.

Each size runs in its own child process, so peak RSS is that estimate's alone; the reference,
measured the same way, is a child that loads the same libraries and runs the estimate on a
60-token vocabulary. What the estimate adds above it is printed beside the size of one n x n
float32 matrix (n: the tokens that occur): bounded memory is a few such matrices and the
counting blocks, whatever the length of the text.

    python benchmarks/bench_pip_memory.py [--corpus stories:5MB] [--vocab-sizes 1024,2048,4096]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = """
import json, sys
import numpy as np
from lrngpt.analysis.pip import corpus_estimate, estimate
if sys.argv[2] == "reference":
    r = estimate(np.random.default_rng(0).integers(0, 60, 20_000), 60)
else:
    r = corpus_estimate(sys.argv[1], int(sys.argv[2]))
print(json.dumps({k: r[k] for k in ("rows", "tokens", "seconds", "peak_rss_mb")} | {"k": r["optimal"]["k"]}))
"""


def measure(corpus: str, vocab: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, corpus, vocab], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="stories:5MB")
    ap.add_argument("--vocab-sizes", default="1024,2048,4096")
    args = ap.parse_args()
    ref = measure(args.corpus, "reference")
    print(f"reference (the same libraries, a 60-token estimate): peak RSS {ref['peak_rss_mb']:.0f} MB")
    for v in args.vocab_sizes.split(","):
        r = measure(args.corpus, v)
        n = r["rows"]
        matrix = 4 * n * n / 2**20
        extra = r["peak_rss_mb"] - ref["peak_rss_mb"]
        print(f"{args.corpus} --vocab-size {v}: {n:,} tokens occur, {r['tokens']:,} tokens, k = {r['k']}; "
              f"peak RSS {r['peak_rss_mb']:.0f} MB, {r['seconds']:.0f} s; above the reference {extra:.0f} MB, "
              f"one n x n float32 matrix {matrix:.0f} MB: ratio {extra / matrix:.1f}")


if __name__ == "__main__":
    main()
