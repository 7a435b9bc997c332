"""Peak memory of a Parquet corpus against the same text as `text:`, in one run.

Writes about 200 MB of generated stories twice, as a `.txt` file (documents separated by
<|endoftext|>) and as a Parquet file of one `text` column (pyarrow's defaults: snappy, row
groups of up to 1Mi rows, so here one big row group), then runs each step below in a child
process of its own (a fresh cache directory), so each peak RSS (getrusage ru_maxrss) is that
child's alone:

- read: every document of the corpus, iterated once (what the reader itself holds), beside two
  references for Parquet: `import pyarrow.parquet` alone (the libraries' own memory, which the
  text reader does not load) and the same file read with pyarrow's defaults (pre-buffering, whole
  column chunks: how lrn read it before);
- prepare: `lrn data prepare` of the corpus (tokenizer training on up to 100 MB, encoding).

It prints both corpora's figures and the ratio Parquet / text; the target is at most 1.3x.
The tokens of the two must be identical (the same documents), which it checks.

    python benchmarks/bench_parquet_memory.py [--size 200MB] [--steps read,prepare]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import lrngpt  # noqa: F401  (sets OMP_WAIT_POLICY before torch loads)

CHILD = """
import json, resource, sys, time
t0 = time.perf_counter()
if sys.argv[2] == "import":
    import pyarrow.parquet
    out = {}
elif sys.argv[2] == "defaults":
    import pyarrow.parquet as pq
    docs = n = 0
    for batch in pq.ParquetFile(sys.argv[1].partition(":")[2]).iter_batches(batch_size=1024, columns=["text"]):
        for doc in batch.column(0).to_pylist():
            docs, n = docs + 1, n + len(doc.strip().encode())
    out = {"docs": docs, "bytes": n}
elif sys.argv[2] == "read":
    from lrngpt.corpora.registry import load_corpus
    docs = n = 0
    for doc in load_corpus(sys.argv[1]).train_docs():
        docs, n = docs + 1, n + len(doc.encode())
    out = {"docs": docs, "bytes": n}
else:
    import hashlib
    from lrngpt.runconfig.schema import DataConfig
    from lrngpt.data.prepared import prepare
    d = prepare(DataConfig(corpus=sys.argv[1], vocab_size=4096), log=lambda m: None)
    out = {"tokens": d.meta["splits"]["train"]["tokens"],
           "sha256": hashlib.sha256(d.tokens("train").tobytes() + d.tokens("val").tobytes()).hexdigest()}
out.update(seconds=time.perf_counter() - t0, peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
print(json.dumps(out))
"""


def measure(spec: str, step: str) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "LRN_CACHE_DIR": cache}
        out = subprocess.run([sys.executable, "-c", CHILD, spec, step], env=env, check=True,
                             capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


WRITER = """
import sys
sys.path.insert(0, sys.argv[3])
from bench_parquet_memory import write_corpora
write_corpora(sys.argv[1], sys.argv[2])
"""


def write_corpora(size: str, d: str) -> tuple[str, str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from lrngpt.corpora.base import EOT, parse_size
    from lrngpt.corpora.stories import generate_stories

    docs = list(generate_stories(parse_size(size), seed=0))
    txt, parquet = os.path.join(d, "stories.txt"), os.path.join(d, "stories.parquet")
    with open(txt, "w", encoding="utf-8") as f:
        f.write(f"\n{EOT}\n".join(docs))
    pq.write_table(pa.table({"text": docs}), parquet)
    return txt, parquet


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="200MB")
    ap.add_argument("--steps", default="read,prepare")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        # in a child: Linux keeps a process's peak RSS across fork and exec, so the parent stays small
        # (holding the 200 MB of documents here would count in every measurement)
        subprocess.run([sys.executable, "-c", WRITER, args.size, d, os.path.dirname(os.path.abspath(__file__))],
                       check=True)
        txt, parquet = os.path.join(d, "stories.txt"), os.path.join(d, "stories.parquet")
        print(f"wrote {os.path.getsize(txt) / 1e6:.0f} MB of text, {os.path.getsize(parquet) / 1e6:.0f} MB of "
              f"Parquet in {time.perf_counter() - t0:.0f} s")
        for step in args.steps.split(","):
            rows = {kind: measure(f"{kind}:{path}", step) for kind, path in (("text", txt), ("parquet", parquet))}
            for kind, r in rows.items():
                print(f"{step:>7} {kind:>7}: peak RSS {r['peak_rss_mb']:6.0f} MB, {r['seconds']:6.1f} s")
            if step == "read":
                for ref, what in (("import", "import pyarrow.parquet alone"),
                                  ("defaults", "pyarrow's defaults (before)")):
                    r = measure(f"parquet:{parquet}", ref)
                    print(f"{'':>7} {'':>7}  {what}: peak RSS {r['peak_rss_mb']:6.0f} MB")
            same = {k: v for k, v in rows["text"].items() if k not in ("seconds", "peak_rss_mb")} == \
                {k: v for k, v in rows["parquet"].items() if k not in ("seconds", "peak_rss_mb")}
            print(f"{step:>7}  ratio parquet / text: {rows['parquet']['peak_rss_mb'] / rows['text']['peak_rss_mb']:.2f} "
                  f"(target <= 1.3); same {'documents' if step == 'read' else 'tokens'}: {same}")


if __name__ == "__main__":
    main()
