"""`lrn tokenizer train | encode | decode`."""

from __future__ import annotations

from lrngpt import log as logging
from lrngpt.cli.common import Parser, add_json, emit
from lrngpt.errors import UserError


def register(sub) -> None:
    p = sub.add_parser("tokenizer", help="train a byte-level BPE, encode and decode text")
    cmds = p.add_subparsers(dest="tokenizer_command", metavar="COMMAND", required=True, parser_class=Parser)

    t = cmds.add_parser("train", help="train a byte-level BPE on a corpus's training split")
    t.add_argument("--corpus", required=True)
    t.add_argument("--vocab-size", type=int, default=4096)
    t.add_argument("--out", required=True, help="directory to write tokenizer.json into")
    t.add_argument("--force", action="store_true", help="replace an existing DIR/tokenizer.json")
    add_json(t)
    t.set_defaults(func=cmd_train)

    e = cmds.add_parser("encode", help="text -> token ids")
    e.add_argument("--tokenizer", required=True, help="a directory with tokenizer.json (or a run directory)")
    e.add_argument("--text", required=True)
    add_json(e)
    e.set_defaults(func=cmd_encode)

    d = cmds.add_parser("decode", help="token ids -> text")
    d.add_argument("--tokenizer", required=True)
    d.add_argument("--ids", required=True, help="comma-separated ids, e.g. 1,2,3")
    add_json(d)
    d.set_defaults(func=cmd_decode)


def cmd_train(args) -> None:
    from lrngpt.config import DataConfig
    from lrngpt.data import tokenizer_out, train_tokenizer

    tokenizer_out(args.out, args.force)  # refuse before the (slow) training, and again before writing
    tok = train_tokenizer(DataConfig(corpus=args.corpus, vocab_size=args.vocab_size),
                          log=logging.info)  # -q silences it
    path = tok.save(tokenizer_out(args.out, args.force))
    emit(args, {"path": str(path), "vocab_size": tok.vocab_size, "eot_id": tok.eot_id, "hash": tok.hash},
         f"wrote {path} ({tok.vocab_size} tokens)")


def cmd_encode(args) -> None:
    from lrngpt.tokenizer import Tokenizer

    ids = Tokenizer.load(args.tokenizer).encode(args.text)
    emit(args, {"ids": ids}, " ".join(map(str, ids)))


def cmd_decode(args) -> None:
    from lrngpt.tokenizer import Tokenizer

    try:
        ids = [int(x) for x in args.ids.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"--ids {args.ids!r} must be comma-separated integers, e.g. 1,2,3") from None
    text = Tokenizer.load(args.tokenizer).decode(ids)
    emit(args, {"text": text}, text)
