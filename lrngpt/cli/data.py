"""`lrn data stories` and `lrn data prepare`."""

from __future__ import annotations

from pathlib import Path

from lrngpt import log as logging
from lrngpt.cli.common import Parser, add_json, emit, seed
from lrngpt.errors import UserError


def register(sub) -> None:
    p = sub.add_parser("data", help="generate the stories corpus, prepare token arrays")
    cmds = p.add_subparsers(dest="data_command", metavar="COMMAND", required=True, parser_class=Parser)

    s = cmds.add_parser("stories", help="write the embedded stories corpus to a file")
    s.add_argument("--size", default="5MB", help="e.g. 5MB, 512KB (default 5MB)")
    s.add_argument("--seed", type=seed, default=0)
    s.add_argument("--out", required=True, help="file to write (documents separated by <|endoftext|>)")
    s.add_argument("--force", action="store_true", help="overwrite an existing file")
    add_json(s)
    s.set_defaults(func=cmd_stories)

    q = cmds.add_parser("prepare", help="train the tokenizer and write memory-mapped token arrays")
    q.add_argument("--corpus", required=True, help="the corpus (required): stories[:SIZE], text:PATH, tinystories[:PATH], nsmc[:PATH], "
                        "jsonl:PATH[:FIELD], parquet:PATH[:COLUMN], hf:NAME[:CONFIG][:SPLIT][:COLUMN]")
    q.add_argument("--vocab-size", type=int, default=4096)
    q.add_argument("--val-fraction", type=float, default=0.05)
    q.add_argument("--split-seed", type=seed, default=0)
    q.add_argument("--out", help="directory (default: the cache, keyed by corpus + tokenizer)")
    q.add_argument("--force", action="store_true",
                   help="replace a directory that holds other prepared data (never files lrn did not write)")
    add_json(q)
    q.set_defaults(func=cmd_prepare)


def cmd_stories(args) -> None:
    from lrngpt.corpora import EOT, parse_size
    from lrngpt.corpora.stories import generate_stories
    from lrngpt.fsio import atomic_open, check_output, user_path

    out = check_output(args.out, "file", example="stories.txt")
    if out.exists() and not args.force:
        raise UserError(f"{out} already exists; choose another --out or pass --force to overwrite it")
    size = parse_size(args.size)
    with user_path(out.parent, "output directory"):
        out.parent.mkdir(parents=True, exist_ok=True)
    n_docs = n_bytes = 0
    with atomic_open(out, "w", encoding="utf-8") as f:
        for i, doc in enumerate(generate_stories(size, args.seed)):
            if i:
                f.write(f"\n{EOT}\n")
            f.write(doc)
            n_docs += 1
            n_bytes += len(doc.encode("utf-8"))
    result = {"path": str(out), "documents": n_docs, "bytes": n_bytes, "seed": args.seed}
    emit(args, result, f"wrote {n_docs:,} stories ({n_bytes:,} bytes) to {out}")


def cmd_prepare(args) -> None:
    from lrngpt.config import DataConfig
    from lrngpt.data import prepare

    cfg = DataConfig(corpus=args.corpus, vocab_size=args.vocab_size, val_fraction=args.val_fraction,
                     split_seed=args.split_seed)
    data = prepare(cfg, Path(args.out) if args.out else None, force=args.force,
                   log=logging.info)  # -q silences it
    m = data.meta
    result = {"dir": str(data.dir), "key": m["key"], "corpus": m["corpus"], "vocab_size": m["vocab_size"],
              "dtype": m["dtype"], "splits": m["splits"]}
    text = (f"{data.dir}: vocabulary {m['vocab_size']}, "
            + ", ".join(f"{s} {v['documents']:,} docs / {v['tokens']:,} tokens / {v['bytes']:,} bytes"
                        for s, v in m["splits"].items()))
    emit(args, result, text)
