"""Throughput of the `stories` generator, next to a pure-Python reference measured in the same run.

    .venv/bin/python benchmarks/bench_stories.py [MB]

The reference is the cheapest way to make the same number of bytes of random words in Python:
`random.Random.choice` over a word list and one `str.join` per 1,000 words. The ratio says how
close the generator's templates, casts and arcs come to that floor on this machine.
"""

import random
import sys
import time

from lrngpt.corpora.stories import CATEGORIES, generate_stories


def bench_stories(size: int) -> tuple[float, int]:
    t0 = time.perf_counter()
    total = sum(len(doc) for doc in generate_stories(size, seed=0))
    return time.perf_counter() - t0, total


def bench_reference(size: int) -> tuple[float, int]:
    words = [w for ws in CATEGORIES.values() for w in ws]
    rng = random.Random(0)
    choice = rng.choice
    t0 = time.perf_counter()
    total = 0
    while total < size:
        total += len(" ".join([choice(words) for _ in range(1000)])) + 1
    return time.perf_counter() - t0, total


def main() -> None:
    size = int(float(sys.argv[1]) * 1e6) if len(sys.argv) > 1 else 20_000_000
    gen_s, gen_bytes = bench_stories(size)
    ref_s, ref_bytes = bench_reference(size)
    gen_rate, ref_rate = gen_bytes / gen_s / 1e6, ref_bytes / ref_s / 1e6
    print(f"stories generator : {gen_bytes / 1e6:6.1f} MB in {gen_s:5.2f} s = {gen_rate:5.1f} MB/s")
    print(f"reference (choice+join of random words): {ref_rate:5.1f} MB/s")
    print(f"ratio generator / reference: {gen_rate / ref_rate:.2f}")


if __name__ == "__main__":
    main()
