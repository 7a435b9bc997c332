"""`stories[:SIZE[:SEED]]`: the embedded corpus, a seeded generator of simple children's stories.

A slot draws uniformly from its word category, so every word of a category shares the same frames:
what lets embeddings cluster names with names (meta["categories"]). Words and templates are data
(lrngpt.corpora.stories_words, stories.txt). An arc is paragraphs of beats (lines); " | " separates
alternatives ("| " continues a beat), "? " makes a beat optional, "~" is a filler sentence; {Name}
is story-level, {any_colour}-like slots draw per sentence (a trailing digit: a second draw).
Templates compile once to `str.format_map` strings. All text is ASCII: len(text) is its UTF-8 size.
"""

from __future__ import annotations

import hashlib
import random
import string
from collections.abc import Iterator
from pathlib import Path

from lrngpt.core.fsio import atomic_open, user_path
from lrngpt.core.ownership import check_file_target, recorded
from lrngpt.corpora.base import EOT, UNITS, Corpus, parse_size
from lrngpt.corpora.stories_words import (
    ARCS,
    BAD,
    CATEGORIES,
    FEARS,
    FILLERS,
    FRESH,
    GIRLS,
    GOOD,
    INTRO,
    SOUNDS,
    plural,
    verb_forms,
    with_article,
)
from lrngpt.errors import UserError

GENERATOR_VERSION = 1  # bump when the text a (size, seed) produces changes
DEFAULT_SIZE = 5_000_000

# ---- the cast ----------------------------------------------------------------------------------

_GIRL_SET = frozenset(GIRLS)
_PRONOUNS = {True: ("She", "she", "Her", "her", "her", "herself", "girl"),
             False: ("He", "he", "His", "his", "him", "himself", "boy")}


# story-level slots drawn from a word pool, in draw order (the stories' bytes depend on it)
_POOLS = CATEGORIES | {"good": GOOD, "bad": BAD, "fear": FEARS, "age": CATEGORIES["number"][1:6]}
_DRAWN = {"pet": "animal", "critter": "animal", "toy": "object", "colour": "colour", "act": "action",
          "act2": "action", "job": "job", "place": "place", "place2": "place", "room": "room",
          "furniture": "furniture", "food": "food", "good": "good", "bad": "bad", "cloth": "clothing",
          "vehicle": "vehicle", "instrument": "instrument", "weather": "weather", "Day": "day",
          "season": "season", "age": "age", "game": "game", "family": "family", "fear": "fear"}


def _cast(rng: random.Random) -> dict[str, str]:
    """The story-level slots: who and what the story is about, reused sentence after sentence."""
    choice = rng.choice
    names = CATEGORIES["name"]
    name = choice(names)
    friend = choice(names)
    while friend == name:
        friend = choice(names)
    ctx = dict(zip(("He", "he", "His", "his", "him", "self", "kid"), _PRONOUNS[name in _GIRL_SET], strict=True))
    ctx.update(zip(("fHe", "fhe", "fHis", "fhis", "fhim", "fself", "fkid"), _PRONOUNS[friend in _GIRL_SET],
                   strict=True))
    mom = rng.random() < 0.5
    ctx.update({slot: choice(_POOLS[pool]) for slot, pool in _DRAWN.items()})
    ctx.update({f"a_{slot}": with_article(ctx[slot]) for slot in ("pet", "critter", "toy", "colour", "job")})
    sound = SOUNDS.get(ctx["pet"], "Squeak")
    ctx.update({
        "Name": name, "Friend": friend, "Parent": "Mom" if mom else "Dad", "phe": "she" if mom else "he",
        "pets": plural(ctx["pet"]), "Sound": sound, "sound": sound.lower(), "A_critter": ctx["a_critter"].capitalize(),
        "act_ed": verb_forms(ctx["act"])[2], "act_ing": verb_forms(ctx["act"])[3],
        "act2_ed": verb_forms(ctx["act2"])[2],
    })
    return ctx


CAST_KEYS = frozenset(_cast(random.Random(0)))


# ---- compiling and generating ---------------------------------------------------------------

Template = tuple[str, tuple[tuple[str, tuple[str, ...]], ...]]  # (format string, fresh slots)
Beat = tuple[bool, tuple[Template, ...]]  # (optional, alternatives)


def _compile(text: str) -> Template:
    fresh: list[tuple[str, tuple[str, ...]]] = []
    for _, field, _, _ in string.Formatter().parse(text):
        if field is None or field in CAST_KEYS:
            continue
        pool = FRESH.get(field.rstrip("0123456789"))
        if pool is None:
            raise ValueError(f"template slot {{{field}}} is neither a cast key nor a word pool: {text!r}")
        if field not in (f for f, _ in fresh):
            fresh.append((field, pool))
    return text, tuple(fresh)


def _beats(text: str) -> list[list]:
    """Lines of ' | '-separated alternatives ('| ' continues the line above) -> [optional, [alts]]."""
    beats: list[list] = []
    for line in text.strip().splitlines():
        line = line.strip()
        if line.startswith("| "):
            beats[-1][1].extend(line[2:].split(" | "))
            continue
        optional = line.startswith("? ")
        beats.append([optional, (line[2:] if optional else line).split(" | ")])
    return beats


FILLER_TEMPLATES: tuple[Template, ...] = tuple(_compile(t) for _, alts in _beats(FILLERS) for t in alts)


def _compile_paragraph(text: str) -> tuple[Beat, ...]:
    beats = []
    for optional, alts in _beats(text):
        if "~" in alts and len(alts) > 1:
            raise ValueError(f"'~' (a filler) must be a beat of its own: {alts!r}")
        beats.append((optional, FILLER_TEMPLATES if alts == ["~"] else tuple(_compile(t) for t in alts)))
    return tuple(beats)


_INTRO = _compile_paragraph(INTRO)
_ARCS = tuple(tuple(_compile_paragraph(p) for p in text.strip().split("\n\n")) for text in ARCS.values())


def _story(rng: random.Random) -> str:
    choice, rand = rng.choice, rng.random
    ctx = _cast(rng)
    paragraphs = []
    for paragraph in (_INTRO, *choice(_ARCS)):
        sentences = []
        for optional, alternatives in paragraph:
            if optional and rand() < 0.5:
                continue
            fmt, fresh = choice(alternatives)
            for key, pool in fresh:
                ctx[key] = choice(pool)
            sentences.append(fmt.format_map(ctx))
        paragraphs.append(" ".join(sentences))
    return "\n\n".join(paragraphs)


def generate_stories(size_bytes: int, seed: int = 0) -> Iterator[str]:
    """Stories, one document each, until their total UTF-8 size reaches size_bytes (streamed)."""
    rng = random.Random(seed)
    total = 0
    while total < size_bytes:
        doc = _story(rng)
        total += len(doc)  # ASCII only, so characters are bytes
        yield doc


def write_stories(out: str | Path, size_bytes: int, seed: int = 0, force: bool = False) -> dict:
    """Write the stories to one UTF-8 file, documents separated by EOT (`lrn data stories`); a file there
    is replaced only when lrn wrote it, unchanged, and with `force` (lrngpt.core.ownership)."""

    out = check_file_target(out, force, "stories corpus", example="stories.txt")
    with user_path(out.parent, "output directory"):
        out.parent.mkdir(parents=True, exist_ok=True)
    n_docs = n_bytes = 0
    with atomic_open(out, "w", encoding="utf-8", replace=recorded("stories corpus")) as f:
        for doc in generate_stories(size_bytes, seed):
            f.write(f"\n{EOT}\n{doc}" if n_docs else doc)
            n_docs, n_bytes = n_docs + 1, n_bytes + len(doc)  # ASCII only, so characters are bytes
    return {"path": str(out), "documents": n_docs, "bytes": n_bytes, "seed": seed}


def _digest() -> str:
    """Hash of the word lists and templates, so an edit that forgets GENERATOR_VERSION still shows."""
    h = hashlib.sha256(repr((sorted(CATEGORIES.items()), sorted(FRESH.items()), FILLERS, INTRO, ARCS,
                             SOUNDS, FEARS)).encode())
    return h.hexdigest()[:16]


def stories_corpus(arg: str) -> Corpus:
    """The corpus for `stories[:SIZE[:SEED]]`: "" (5 MB, seed 0), "2MB", "2MB:3"."""
    size_text, _, seed_text = arg.strip().partition(":")
    how = "write it as stories, stories:SIZE or stories:SIZE:SEED, e.g. stories:5MB:0"
    try:
        size = parse_size(size_text) if size_text else DEFAULT_SIZE
    except UserError as e:
        raise UserError(f"stories:{arg}: {e.text}; {how}") from None
    if ":" in seed_text:
        raise UserError(f"stories:{arg}: too many parts; {how}")
    if seed_text and not seed_text.isdigit():
        raise UserError(f"stories:{arg}: seed {seed_text!r} is not a whole number >= 0; {how}")
    seed = int(seed_text) if seed_text else 0
    spec = f"stories:{_format_size(size)}:{seed}"
    return Corpus(spec=spec, kind="stories",
                  fingerprint=f"stories-v{GENERATOR_VERSION}-{_digest()}-{size}-{seed}",
                  train_docs=lambda: generate_stories(size, seed), val_docs=None,
                  meta={"categories": list(CATEGORIES), "size_bytes": size, "seed": seed,
                        "generator_version": GENERATOR_VERSION})


def _format_size(size: int) -> str:
    return next((f"{size // mult}{unit}" for unit, mult in UNITS.items() if size % mult == 0), str(size))
