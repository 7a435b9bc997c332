"""`lrn data stories | prepare` and `lrn tokenizer train | encode | decode | show`: the corpus side
(lrngpt.api.corpus)."""

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
    cmds = group(sub, "tokenizer", "train a byte-level BPE, encode and decode text, look up tokens",
        "Byte-level BPE tokenizers (one tokenizer.json, Hugging Face format): train one on a corpus, "
        "turn text into ids and back, look up what an id stands for. Every place that takes a "
        "tokenizer also takes a run directory, whose tokenizer it uses.",
        "examples:\n  lrn tokenizer train --corpus stories:5MB --out tok/\n"
        "  lrn tokenizer encode --tokenizer tok/ --text 'Lily saw a cat'\n"
        "  lrn tokenizer show runs/demo ' Lily'")
    t = command(cmds, "train", cmd_train, "train a byte-level BPE on a corpus's training split",
        "Train a byte-level BPE on the training split of a corpus (the same split `lrn data "
        "prepare` makes) and write DIR/tokenizer.json. Byte-level: every string encodes, nothing is "
        "unknown; <|endoftext|> is the one special token.",
        "examples:\n  lrn tokenizer train --corpus stories:5MB --out tok/\n"
        "  lrn tokenizer train --corpus text:my_books/ --vocab-size 8192 --out tok8k/ --json")
    add_corpus(t, required=True)
    t.add_argument("--vocab-size", type=int, default=4096,
                   help="tokens in the vocabulary: 256 bytes, <|endoftext|> and the merges")
    add_out(t, "the directory to write tokenizer.json into")
    add_force(t, "DIR/tokenizer.json when lrn wrote it")
    e = command(cmds, "encode", cmd_encode, "text -> token ids",
        "Encode a text with a tokenizer and print its token ids. The literal text <|endoftext|> "
        "inside it is ordinary text, so every string round-trips through decode.",
        "examples:\n  lrn tokenizer encode --tokenizer tok/ --text 'Lily saw a cat'\n"
        "  lrn tokenizer encode --tokenizer runs/demo --text 'Once upon a time' --json")
    e.add_argument("--tokenizer", required=True, help="a directory with tokenizer.json, or a run directory")
    e.add_argument("--text", required=True, help="the text to encode (quote it in the shell)")
    d = command(cmds, "decode", cmd_decode, "token ids -> text",
        "Decode comma-separated token ids back into text with a tokenizer.",
        "examples:\n  lrn tokenizer decode --tokenizer tok/ --ids 12,345,6\n"
        "  lrn tokenizer decode --tokenizer runs/demo --ids 1191,1012 --json")
    d.add_argument("--tokenizer", required=True, help="a directory with tokenizer.json, or a run directory")
    d.add_argument("--ids", required=True, help="comma-separated token ids, e.g. 1,2,3")
    s = command(cmds, "show", cmd_show, "id -> token text and bytes; text -> ids",
        "Look up tokens both ways: a whole number is an id and shows its token's text (bytes that are "
        "no whole UTF-8 character escaped as \\xNN) and bytes; anything else is text and shows its ids "
        "and tokens. Works on any run, an imported GPT-2 included.",
        "examples:\n  lrn tokenizer show runs/gpt2 15717 ' berry'      # id 15717 is ' berry'\n"
        "  lrn tokenizer show runs/demo ' Lily' 'Lilyxyzzy' 0\n"
        "  lrn tokenizer show runs/demo 2024 --text                # the digits as text")
    s.add_argument("tokenizer", metavar="RUN_OR_TOKENIZER",
                   help="a run directory, a directory with tokenizer.json, or a tokenizer.json file")
    s.add_argument("items", nargs="+", metavar="ID_OR_TEXT", help="ids (whole numbers) or texts, in any mix")
    s.add_argument("--text", action="store_true", help="read every item as text, numbers too (default: numbers are ids)")


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


def cmd_train(args) -> None:
    r = api.tokenizer_train(args.corpus, args.out, args.vocab_size, args.force)
    emit(args, r, f"wrote {r['path']} ({r['vocab_size']} tokens)")


def cmd_encode(args) -> None:
    ids = api.tokenizer_encode(args.tokenizer, args.text)
    emit(args, {"ids": ids}, " ".join(map(str, ids)))


def cmd_decode(args) -> None:
    text = api.tokenizer_decode(args.tokenizer, args.ids)
    emit(args, {"text": text}, text)


def cmd_show(args) -> None:
    r = api.tokenizer_show(args.tokenizer, args.items, args.text)
    lines = []
    for x in r["results"]:
        if x["kind"] == "id":
            special = " (special)" if x["special"] else ""
            lines.append(f"{x['id']} -> '{x['token']}'{special}  bytes {bytes.fromhex(x['bytes_hex']).hex(' ')}")
        else:
            lines.append(f"{x['query']!r} -> {' '.join(map(str, x['ids']))}  ("
                         + " + ".join(f"'{t}'" for t in x["tokens"]) + ")")
    emit(args, r, "\n".join(lines))
