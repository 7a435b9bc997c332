"""The stories corpus's words: its categories, their inflections and the FRESH pools slots such as
{any_colour} draw from (data: stories_categories.json and stories.txt beside this module).
"""

from __future__ import annotations

import json
import re
from importlib import resources

_DATA = resources.files("lrngpt.corpora")


def _sections() -> dict[str, str]:
    """stories.txt's sections by name: the text between `== NAME ==` lines (comments before the first)."""
    text = _DATA.joinpath("stories.txt").read_text(encoding="utf-8")
    parts = re.split(r"^== (.*) ==\n", text, flags=re.MULTILINE)[1:]
    return {name: body.removesuffix("\n") for name, body in zip(parts[::2], parts[1::2], strict=True)}


_TEXT = _sections()
_SHIPPED = json.loads(_DATA.joinpath("stories_categories.json").read_text(encoding="utf-8"))
CATEGORIES: dict[str, tuple[str, ...]] = {name: tuple(words) for name, words in _SHIPPED.items()}
GIRLS = tuple(_TEXT["girls"].split())
BOYS = tuple(n for n in CATEGORIES["name"] if n not in GIRLS)
# a template keeps its exact text (with the newlines around it): the corpus fingerprint hashes it
FILLERS, INTRO = (f"\n{_TEXT[k]}\n" for k in ("fillers", "intro"))
ARCS = {k[4:]: f"\n{v}\n" for k, v in _TEXT.items() if k.startswith("arc ")}


# ---- inflection (regular English rules, irregular forms listed) ---------------------------------

_VOWELS = "aeiou"
_IRREGULAR_PLURAL, _IRREGULAR_PAST = (dict(line.split() for line in _TEXT[k].splitlines())
                                     for k in ("irregular_plural", "irregular_past"))
_IRREGULAR_3SG = {"go": "goes", "do": "does", "have": "has"}


def _double_final(w: str) -> bool:
    """One-syllable consonant-vowel-consonant words double it: hop -> hopping, big -> bigger."""
    groups = sum(1 for i, c in enumerate(w) if c in _VOWELS and (i == 0 or w[i - 1] not in _VOWELS))
    return (groups == 1 and len(w) >= 3 and w[-1] not in _VOWELS + "wxy" and w[-2] in _VOWELS
            and w[-3] not in _VOWELS)


def _add_s(w: str) -> str:
    """The regular plural, which is also the regular 3rd person singular: boxes, puppies, cats."""
    if w.endswith(("s", "sh", "ch", "x", "z")):
        return w + "es"
    if w.endswith("y") and w[-2] not in _VOWELS:
        return w[:-1] + "ies"
    return w + "s"


def plural(w: str) -> str:
    return _IRREGULAR_PLURAL.get(w) or _add_s(w)


def _stem(w: str) -> str:
    """What a suffix starting with e joins (-ed, -er, -est): danc-ed, cri-ed, happi-er, bigg-est."""
    if w.endswith("e"):
        return w[:-1]
    if w.endswith("y") and w[-2] not in _VOWELS:
        return w[:-1] + "i"
    return w + w[-1] if _double_final(w) else w


def verb_forms(w: str) -> tuple[str, str, str, str]:
    """(base, 3rd person singular, past, -ing)."""
    s = _IRREGULAR_3SG.get(w) or _add_s(w)
    if w.endswith("ie"):
        ing = w[:-2] + "ying"
    elif w.endswith("e") and not w.endswith(("ee", "oe", "ye")):
        ing = w[:-1] + "ing"
    elif _double_final(w):
        ing = w + w[-1] + "ing"
    else:
        ing = w + "ing"
    return w, s, _IRREGULAR_PAST.get(w) or _stem(w) + "ed", ing


def compare_forms(w: str) -> tuple[str, str]:
    """(comparative, superlative): big -> bigger, biggest; happy -> happier, happiest."""
    return _stem(w) + "er", _stem(w) + "est"


def with_article(w: str) -> str:
    """The indefinite article by sound: an owl, a ukulele."""
    return ("an " if w[0] in _VOWELS and not w.startswith(("uk", "uni", "use")) else "a ") + w


# ---- word pools that sentence slots draw from -------------------------------------------------

def _words(section: str) -> tuple[str, ...]:
    return tuple(_TEXT[section].split())


GOOD, BAD = _words("good"), _words("bad")
FEARS = tuple(_TEXT["fears"].splitlines())
SOUNDS = dict(line.split() for line in _TEXT["sounds"].splitlines())
_COUNTABLE = ("animal", "object", "clothing", "vehicle", "nature", "job", "shape", "instrument", "furniture",
              "bug", "flower", "body", "character", "home")
_VERBS = {"any_action": CATEGORIES["action"]} | {key: _words("verbs_" + section) for key, section in (
    ("vt", "thing"), ("vf", "food"), ("va", "animal"), ("move", "move"), ("about", "about"), ("day", "day"),
    ("noise", "noise"))}

FRESH: dict[str, tuple[str, ...]] = {"any_" + cat: words for cat, words in CATEGORIES.items()}
FRESH.update({f"any_{cat}_pl": tuple(plural(w) for w in CATEGORIES[cat]) for cat in _COUNTABLE})
for _key, _verbs in _VERBS.items():  # {move}, {move_s}, {move_ed}, {move_ing}
    _columns = zip(*map(verb_forms, _verbs), strict=True)  # the bases, 3rd persons, pasts and -ings
    FRESH.update(zip((_key, f"{_key}_s", f"{_key}_ed", f"{_key}_ing"), _columns, strict=True))
FRESH.update({slot: _words(section) for slot, section in (  # (slot, the stories.txt section it draws from)
    ("any_good", "good"), ("any_bad", "bad"), ("adj_thing", "adj_thing"), ("adj_creature", "adj_creature"),
    ("adj_person", "adj_person"), ("adj_place", "adj_place"), ("adv", "adverbs"), ("adj_food", "adj_food"),
    ("say", "say"), ("opener", "openers"), ("ordinal", "ordinals"), ("interj", "interjections"))})
FRESH.update({"food_pl": tuple(plural(w) for w in _words("food_pl")), "count": tuple(str(n) for n in range(11, 101)),
              "Vt": tuple(v.capitalize() for v in _VERBS["vt"]),
              "Action": tuple(v.capitalize() for v in CATEGORIES["action"]),
              "cmp": tuple(compare_forms(w)[0] for w in _words("comparable")),
              "sup": tuple(compare_forms(w)[1] for w in _words("comparable"))})
for _key in list(FRESH):  # "{a_any_animal}" -> "an owl", "{A_any_colour}" -> "An orange"
    FRESH["a_" + _key] = tuple(with_article(w) for w in FRESH[_key])
    FRESH["A_" + _key] = tuple(with_article(w).capitalize() for w in FRESH[_key])
