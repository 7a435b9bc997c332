"""`lrn data stories` and `lrn data prepare`."""

from __future__ import annotations

import lrngpt.api as api
from lrngpt.api.frontend import VAL_SPLIT_MODES
from lrngpt.cli.common import add_corpus, add_force, add_out, command, emit, group, seed


def register(sub) -> None:
    cmds = group(sub, "data", "generate the stories corpus, prepare token arrays",
        "The corpus side of the pipeline: write the embedded stories generator's text to a file, or turn any "
        "corpus into a trained tokenizer and memory-mapped token arrays (cached).",
        "examples:\n  lrn data stories --size 5MB --out stories.txt\n"
        "  lrn data prepare --corpus stories:5MB --vocab-size 4096")
    s = command(cmds, "stories", cmd_stories, "write the embedded stories corpus to a file",
        "Generate children's stories with the embedded generator (the corpus `stories:SIZE` reads) into one "
        "UTF-8 file, documents separated by <|endoftext|>; the same size and seed give the same bytes.",
        "examples:\n  lrn data stories --size 5MB --out stories.txt\n"
        "  lrn data stories --size 512KB --seed 3 --out small.txt --json")
    s.add_argument("--size", default="5MB", help="how much text to write, e.g. 5MB, 512KB or 100000 (bytes)")
    s.add_argument("--seed", type=seed, default=0, help="seed of the generator; another seed, other stories")
    add_out(s, "the file to write (documents separated by <|endoftext|>)", metavar="FILE")
    add_force(s, "--out when it is an earlier stories file lrn wrote")
    q = command(cmds, "prepare", cmd_prepare, "train the tokenizer and write memory-mapped token arrays",
        "Split the corpus into train and validation documents (its own split when it has one), train a "
        "byte-level BPE on the training split and encode both splits into train.bin and val.bin. The result is "
        "cached by corpus content and settings: preparing the same thing again does no work.",
        "examples:\n  lrn data prepare --corpus stories:5MB\n"
        "  lrn data prepare --corpus text:my_books/ --vocab-size 8192 --out data/books --json\n"
        "  lrn data prepare --corpus text:bible.txt --val-split chunks   # one long text: validation from all over it")
    add_corpus(q, required=True)
    q.add_argument("--vocab-size", type=int, default=4096, help="tokens in the BPE vocabulary (at least 257)")
    q.add_argument("--val-fraction", type=float, default=0.05,
                   help="share of documents drawn into validation, for corpora without their own split")
    q.add_argument("--split-seed", type=seed, default=0, help="seed of the train/validation draw")
    q.add_argument("--val-split", choices=VAL_SPLIT_MODES, default=VAL_SPLIT_MODES[0],
                   help="documents: a seeded draw of whole documents (too few documents: the last "
                        "--val-fraction of the text); chunks: seeded chunks from all over the text, for a "
                        "corpus of one document (data.val_split)")
    add_out(q, "the directory to write (default: the cache, keyed by corpus and tokenizer)", required=False)
    add_force(q, "a directory that holds other prepared data")
    q.add_argument("--verify", action="store_true",
                   help="read and hash the corpus files again even when their size, mtime and inode are those of "
                        "an earlier hash (LRN_VERIFY=1 does the same for every command)")


def cmd_stories(args) -> None:
    result = api.data_stories(args.out, args.size, args.seed, args.force)
    emit(args, result, f"wrote {result['documents']:,} stories ({result['bytes']:,} bytes) to {result['path']}")


def cmd_prepare(args) -> None:
    r = api.data_prepare(args.corpus, args.vocab_size, args.val_fraction, args.split_seed, args.val_split, args.out,
                     args.force, args.verify)
    text = (f"{r['dir']}: vocabulary {r['vocab_size']}, "
            + ", ".join(f"{s} {v['documents']:,} docs / {v['tokens']:,} tokens / {v['bytes']:,} bytes"
                        for s, v in r["splits"].items()) + "\n" + r["validation_note"])
    emit(args, r, text)
