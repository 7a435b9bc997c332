"""Tokenizer training and encoding speed on real text (the State of the Union addresses, 10.8 MB, or `--file PATH`).

Prints MB/s of BPE training (vocab 4096, Hugging Face `tokenizers`) and of encoding with
lrn's tiktoken encoder next to `tokenizers`' own `encode_batch` on the same text, in the
same run, with their ratio, and checks both give identical ids. Usage:

    python benchmarks/bench_tokenizer.py [--file PATH] [--vocab-size 4096]
"""

from __future__ import annotations

import argparse
import gzip
import time
from pathlib import Path

from lrngpt.corpora.base import EOT
from lrngpt.tokenizer.bpe import Tokenizer

SOTU = Path(__file__).resolve().parents[2] / "shared" / "data" / "sotu" / "sotu.txt.gz"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--file", default=str(SOTU))
    ap.add_argument("--vocab-size", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    path = Path(args.file)
    if not path.exists():
        raise SystemExit(f"{path} not found: pass --file with a text file")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        text = f.read()
    docs = [d.strip() for d in text.split(EOT) if d.strip()]
    mb = sum(len(d.encode()) for d in docs) / 1e6

    t0 = time.perf_counter()
    tok = Tokenizer.train(docs, args.vocab_size)
    t_train = time.perf_counter() - t0

    best_tt = best_hf = float("inf")
    for _ in range(args.rounds):  # alternate so both see the same machine load
        t0 = time.perf_counter()
        ours = tok.encode_batch(docs)
        best_tt = min(best_tt, time.perf_counter() - t0)
        t0 = time.perf_counter()
        theirs = [e.ids for e in tok.hf.encode_batch(docs)]
        best_hf = min(best_hf, time.perf_counter() - t0)
    n_tokens = sum(map(len, ours))
    print(f"{path.name}: {mb:.1f} MB, {len(docs)} documents, {n_tokens:,} tokens at vocab {tok.vocab_size}")
    print(f"BPE training (tokenizers)     {mb / t_train:6.1f} MB/s")
    print(f"encode, lrn (tiktoken)        {mb / best_tt:6.1f} MB/s")
    print(f"encode, tokenizers batch      {mb / best_hf:6.1f} MB/s")
    print(f"ratio lrn / tokenizers:       {best_hf / best_tt:6.1f}x")
    print(f"identical ids:                {ours == theirs}")


if __name__ == "__main__":
    main()
