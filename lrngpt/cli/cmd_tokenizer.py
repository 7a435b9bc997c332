"""`lrn tokenizer train | encode | decode | show`."""

from __future__ import annotations

import lrngpt.api as api
from lrngpt.cli.common import add_corpus, add_force, add_out, command, emit, group


def register(sub) -> None:
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
