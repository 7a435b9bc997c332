"""Which part of a corpus becomes validation, and how to say so.

lrngpt.data.prepared draws whole documents into validation (data.val_split=documents). Two cases move
tokens after encoding instead: `split_tail` (too few documents: the last val_fraction of the tokens,
split_by "tokens") and `split_chunks` (data.val_split=chunks: a seeded draw of chunks of about 1/20 of
the validation size, so validation samples the whole text). `describe_validation` says what became
validation as `lrn data prepare` prints it, `validation_kind` in one word.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from lrngpt.errors import UserError

SPLITS = ("train", "val")
VAL_CHUNKS = 20  # about this many validation chunks: enough places in the text, each long enough to read
MIN_CHUNK_TOKENS = 64


def split_tail(d: Path, dtype, splits: dict, fraction: float, token_bytes: np.ndarray) -> dict:
    """Move the last `fraction` of all tokens (train.bin's: no document went to val) into val (for a
    corpus of one document)."""
    allt = np.fromfile(d / "train.bin", dtype=dtype)
    cut = len(allt) - max(1, int(len(allt) * fraction))
    return _write(d, {"train": allt[:cut], "val": allt[cut:]}, splits, token_bytes)


def _write(d: Path, out: dict[str, np.ndarray], splits: dict, token_bytes: np.ndarray) -> dict:
    """train.bin and val.bin written again; their counts (every document counted in train)."""
    for split in SPLITS:
        out[split].tofile(d / f"{split}.bin")
    return {split: {"documents": splits["train"]["documents"] if split == "train" else 0, "tokens": int(out[split].size),
                    "bytes": int(token_bytes[out[split]].sum())} for split in SPLITS}


def split_chunks(d: Path, dtype, splits: dict, fraction: float, seed: int, token_bytes: np.ndarray,
                 eot_id: int) -> tuple[dict, dict]:
    """Cut all tokens into chunks and draw `fraction` of them, seeded, into val. Each run of
    consecutive chunks of one split starts with <|endoftext|>, so no window reads across a seam as if
    the text went on (all tokens are train.bin's: no document went to val). Returns (splits, meta
    fields: chunk_tokens and val_chunks)."""
    allt = np.fromfile(d / "train.bin", dtype=dtype)
    n = len(allt)
    chunk = max(MIN_CHUNK_TOKENS, int(n * fraction) // VAL_CHUNKS)
    k = -(-n // chunk)
    if k < 2:
        raise UserError(f"the corpus holds {n:,} tokens, too few to cut into chunks of {chunk:,} for "
                        "data.val_split=chunks; give it more text, or use data.val_split=documents")
    m = min(k - 1, max(1, round(k * fraction)))
    val_idx = set(random.Random(seed).sample(range(k), m))
    byte_at = [0, *np.cumsum(np.add.reduceat(token_bytes[allt], np.arange(0, n, chunk))).tolist()]  # chunk i's bytes start
    pieces: dict[str, list[np.ndarray]] = {s: [] for s in SPLITS}
    last = None
    for i in range(k):
        split = "val" if i in val_idx else "train"
        piece = allt[i * chunk:(i + 1) * chunk]
        if split != last and piece[0] != eot_id:  # a seam: the text before it is in the other split
            pieces[split].append(np.array([eot_id], dtype=allt.dtype))
        pieces[split].append(piece)
        last = split
    new = _write(d, {split: np.concatenate(pieces[split]) for split in SPLITS}, splits, token_bytes)
    chunks = [{"tokens": [i * chunk, min(n, (i + 1) * chunk)], "bytes": [byte_at[i], byte_at[i + 1]]}
              for i in sorted(val_idx)]
    return new, {"chunk_tokens": chunk, "val_chunks": chunks}


def val_documents(n_docs: int, fraction: float, seed: int) -> list[int]:
    """The numbers (from 0, in corpus order) of the documents data.split_documents draws into val."""
    rng = random.Random(seed)
    return [i for i in range(n_docs) if rng.random() < fraction]


def _shown(items: list[str], limit: int = 8) -> str:
    return ", ".join(items[:limit]) + (", ..." if len(items) > limit else "")


CHUNKS_HINT = ("for seeded chunks from all over the text instead: --val-split chunks (lrn train / lrn sweep: "
               "--set data.val_split=chunks)")


OWN_SPLIT_KINDS = ("tinystories", "nsmc")  # corpora with a validation split of their own (meta before own_split)


def validation_kind(meta: dict) -> str:
    """What became validation, in one word: documents, tail (too few documents: one book), chunks, or own split."""
    by = meta.get("split_by", "documents")
    if by == "tokens":
        return "tail"
    if by == "chunks":
        return "chunks"
    return "own split" if meta.get("own_split", meta.get("kind") in OWN_SPLIT_KINDS) else "documents"


def describe_validation(meta: dict) -> tuple[dict, str]:
    """(what became validation, as JSON; the same as one line) for a prepared meta.json."""
    train, val = meta["splits"]["train"], meta["splits"]["val"]
    kind = validation_kind(meta)
    fraction, seed = meta.get("val_fraction", 0.05), meta.get("split_seed", 0)
    total = train["bytes"] + val["bytes"]
    pct = f"{fraction * 100:g}%"
    if kind == "own split":
        return ({"by": "own split", "documents": val["documents"]},
                f"validation: the corpus's own validation split ({val['documents']:,} documents)")
    if kind == "documents":
        n = train["documents"] + val["documents"]
        docs = val_documents(n, fraction, seed)
        return ({"by": "documents", "documents": docs},
                f"validation: {len(docs):,} of {n:,} documents drawn with data.split_seed {seed} "
                f"(documents {_shown([str(i) for i in docs])}, numbered from 0 in corpus order)")
    if kind == "tail":
        return ({"by": "tail", "from_byte": train["bytes"], "bytes": total},
                f"validation: the last {pct} of the text, from byte {train['bytes']:,} of {total:,} "
                f"(too few documents to draw whole ones); {CHUNKS_HINT}")
    chunks = meta.get("val_chunks") or []
    spans = [f"{c['bytes'][0]:,}-{c['bytes'][1]:,}" for c in chunks]
    return ({"by": "chunks", "chunk_tokens": meta.get("chunk_tokens"), "chunks": chunks},
            f"validation: {len(chunks)} chunks of {meta.get('chunk_tokens', 0):,} tokens ({pct} of the text) drawn "
            f"with data.split_seed {seed} from all over the text (bytes {_shown(spans, 6)} of {total:,})")
