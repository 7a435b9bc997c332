"""Peak memory of training the BPE on one long document against the same text as many documents,
and of refusing a 1 MB .gz that holds one 1 GiB line.

Why lrngpt.corpora caps a document and a line (lrngpt.corpora.base.LIMITS): the BPE
trainer holds one document's pre-tokens at once, so its memory follows the longest document, not
the corpus. Each measurement runs in its own child process, so its peak RSS is its own; the
ratio one document / 1,000 documents is what a long document costs.

    python benchmarks/bench_document_memory.py [--mb 4,8]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile

TRAIN = """
import json, random, resource, sys, time
from lrngpt.tokenizer.bpe import Tokenizer
words = "Lily Tom Mia Ben saw a red blue cat dog in the park was happy and said hello to her friend".split()
rng = random.Random(0)
n = int(float(sys.argv[1]) * 1e6) // 4 // 1000  # words a piece (about 4 characters each)
pieces = [" ".join(rng.choice(words) for _ in range(n)) for _ in range(1000)]
docs = [" ".join(pieces)] if sys.argv[2] == "1" else pieces  # the same words: one document, or 1,000
text = docs[0] if len(docs) == 1 else " ".join(docs)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
Tokenizer.train(iter(docs), 300)
print(json.dumps({"seconds": time.perf_counter() - t0, "chars": len(text),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "before_mb": base / 1024}))
"""

BOMB = """
import gzip, json, resource, sys, time
from pathlib import Path
from lrngpt.corpora.records import jsonl_corpus
from lrngpt.errors import UserError
path = Path(sys.argv[1]) / "bomb.jsonl.gz"
member = gzip.compress(b"a" * (1 << 20), 9)
path.write_bytes(gzip.compress(b'{"text": "') + member * 1024)
t0 = time.perf_counter()
try:
    jsonl_corpus(str(path))
    said = "read"
except UserError as e:
    said = str(e)
print(json.dumps({"seconds": time.perf_counter() - t0, "file_mb": path.stat().st_size / 1e6, "said": said,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def child(code: str, *argv: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *argv], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", default="4,8", help="document sizes in MB (comma-separated)")
    args = ap.parse_args()
    for mb in args.mb.split(","):
        one, many = child(TRAIN, mb, "1"), child(TRAIN, mb, "1000")
        print(f"{mb} MB of text: as 1 document peak RSS {one['peak_rss_mb']:7.0f} MB ({one['seconds']:.1f} s), "
              f"as 1,000 documents {many['peak_rss_mb']:7.0f} MB ({many['seconds']:.1f} s); ratio "
              f"{one['peak_rss_mb'] / many['peak_rss_mb']:.1f}; one document: "
              f"{(one['peak_rss_mb'] - one['before_mb']) * 2**20 / one['chars']:.0f} bytes a character")
    with tempfile.TemporaryDirectory() as d:
        bomb = child(BOMB, d)
    print(f"a {bomb['file_mb']:.1f} MB .jsonl.gz holding one 1 GiB line: refused in {bomb['seconds']:.1f} s at a "
          f"peak RSS of {bomb['peak_rss_mb']:.0f} MB: {bomb['said'][-90:]}")


if __name__ == "__main__":
    main()
