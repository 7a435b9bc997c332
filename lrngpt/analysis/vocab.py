"""A run's vocabulary as people read it: each token's text (`token_text`: readable UTF-8, the rest
escaped, never a tab or newline), its count in the training split, and `lrn tokenizer show`.
"""

from __future__ import annotations

import numpy as np

from lrngpt.core import log as logging
from lrngpt.data.prepared import check_run_data, prepare
from lrngpt.errors import UserError
from lrngpt.tokenizer.bpe import Tokenizer


def escape_bytes(b: bytes) -> str:
    """Readable text of some bytes: printable UTF-8 as is; backslash, control characters and
    bytes that are no whole UTF-8 character as \\\\, \\n, \\t, \\xNN, \\uNNNN (Python's own escapes)."""
    text = b.replace(b"\\", b"\\\\").decode("utf-8", errors="backslashreplace")  # a stray byte: \\xNN
    # a plain space is printable; other white space is not
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def token_text(tokenizer, i: int) -> str:
    """The readable text of token i (see escape_bytes); <unused:N> for rows past the vocabulary."""
    if not 0 <= i < tokenizer.vocab_size:
        return f"<unused:{i}>"
    return escape_bytes(tokenizer.decode_bytes([i]))


def run_data(run, log=None):
    """The prepared token arrays a run was trained on (found in the cache, else prepared again),
    or None for a run that has none of its own (an imported GPT-2)."""
    if run.checkpoint.get("data_key") is None:
        return None
    check_run_data(run.checkpoint["data_key"], run.config.data, str(run.dir),
                   "its training counts are gone with them (restore the files to count them)")
    data = prepare(run.config.data, log=log or logging.info)
    if data.tokenizer.hash != run.tokenizer.hash:
        raise UserError(f"the prepared data for {run.config.data.corpus} uses another tokenizer than the run "
                        f"in {run.dir}; was the cache rebuilt with other settings?")
    return data


def train_counts(run, rows: int, log=None) -> tuple[np.ndarray | None, str]:
    """How often each id occurs in the training split the run read (cut to data.train_tokens), as
    an int64 array of `rows`; with a sentence saying where the counts come from or why there are none."""
    try:
        data = run_data(run, log)
    except UserError as e:  # the corpus is gone (a text file moved, say): no counts, and say why
        return None, f"no frequencies: {e}"
    if data is None:
        return None, "no frequencies: the run has no training split of its own (an imported model)"
    tokens = data.tokens("train")
    return count_ids(tokens, rows), f"frequencies in the training split ({len(tokens):,} tokens)"


def count_ids(tokens, rows: int, weights: np.ndarray | None = None) -> np.ndarray:
    """How often each id 0..rows-1 occurs in `tokens` (each occurrence counted `weights` times), as int64;
    in chunks, so that the int64 copy of a large split's ids stays in bounds."""
    counts = np.zeros(rows, dtype=np.int64)
    for start in range(0, len(tokens), 1 << 24):
        ids = np.asarray(tokens[start : start + (1 << 24)], dtype=np.int64)
        w = None if weights is None else weights[start : start + (1 << 24)]
        # float64 weights are exact for counts below 2**53
        counts += np.rint(np.bincount(ids, weights=w, minlength=rows)[:rows]).astype(np.int64)
    return counts


def frequency_order(counts: np.ndarray | None, rows: int) -> np.ndarray:
    """Row ids, most frequent first (ties and unknown counts in id order: BPE ids follow merge order)."""
    if counts is None:
        return np.arange(rows)
    return np.argsort(-counts, kind="stable")


# ---- lrn tokenizer show ------------------------------------------------------------------------

def show(path, items: list[str], as_text: bool = False) -> dict:
    """`lrn tokenizer show`: a tokenizer (a run directory, a directory with tokenizer.json, or the
    file) and the lookup of every item (see show_tokens)."""
    tok = Tokenizer.load(path)
    return {"tokenizer": str(path), "vocab_size": tok.vocab_size, "results": show_tokens(tok, items, as_text)}


def show_tokens(tokenizer, items: list[str], as_text: bool = False) -> list[dict]:
    """Each item that is a whole number is an id (-> its token and bytes); any other item, or every
    item with as_text, is text (-> its ids and tokens)."""
    out = []
    for item in items:
        digits = item.strip().lstrip("-")
        if not as_text and digits.isascii() and digits.isdigit():  # ASCII digits only: "١٢٣" is text, not id 123
            i = int(item)
            if not 0 <= i < tokenizer.vocab_size:
                raise UserError(f"id {i} is outside the vocabulary (0..{tokenizer.vocab_size - 1}); "
                                "to look up the digits as text, add --text")
            raw = tokenizer.decode_bytes([i])
            out.append({"query": item, "kind": "id", "id": i, "token": token_text(tokenizer, i),
                        "bytes_hex": raw.hex(), "special": i in tokenizer.special_ids})
        else:
            if not item:
                raise UserError("an empty text has no tokens; give an id such as 15717 or a text such as ' berry'")
            ids = tokenizer.encode(item)
            out.append({"query": item, "kind": "text", "ids": ids,
                        "tokens": [token_text(tokenizer, i) for i in ids]})
    return out
