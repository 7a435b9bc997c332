"""Categories files (JSON or TSV) and how their words become token ids."""

from __future__ import annotations

import json

import pytest

from lrngpt.analysis.categories import (
    load_categories,
    resolve,
    stories_categories,
)
from lrngpt.corpora.stories import CATEGORIES
from lrngpt.errors import UserError


def test_the_shipped_stories_categories_file_equals_the_generators_categories():
    shipped = stories_categories()
    assert shipped == {name: list(words) for name, words in CATEGORIES.items()}
    assert list(shipped) == list(CATEGORIES)  # in the generator's order too


def test_json_and_tsv_files_give_the_same_categories(tmp_path):
    cats = {"president": ["Lincoln", "Washington"], "month": ["January", "March", "May"]}
    (tmp_path / "c.json").write_text(json.dumps(cats))
    tsv = "# category<TAB>word\n\n" + "".join(f"{n}\t{w}\r\n" for n, ws in cats.items() for w in ws)
    (tmp_path / "c.tsv").write_text(tsv)
    (tmp_path / "c.txt").write_text("\ufeff" + json.dumps(cats))  # a byte-order mark and any extension
    assert load_categories(tmp_path / "c.json") == load_categories(tmp_path / "c.tsv") == cats
    assert load_categories(tmp_path / "c.txt") == cats


@pytest.mark.parametrize("text, needle", [
    ("[1, 2]", "not an object"),
    ('{"a": ["x", 3]}', "must be a list of words"),
    ("{}", "names no category"),
    ("a\tx\nb y\n", "line 2 has no tab"),
    ("a\t \n", "line 1 has an empty category or word"),
    ("  \n", "names no category"),  # an empty file: no category, the same fix
])
def test_bad_categories_files_are_named_with_what_to_write(tmp_path, text, needle):
    path = tmp_path / "c"
    path.write_text(text)
    with pytest.raises(UserError, match=needle):
        load_categories(path)


def test_a_file_that_is_not_utf8_or_not_a_file_is_refused(tmp_path):
    (tmp_path / "latin1.tsv").write_bytes("mois\tf\xe9vrier\n".encode("latin-1"))
    with pytest.raises(UserError, match="not UTF-8"):
        load_categories(tmp_path / "latin1.tsv")
    with pytest.raises(UserError, match="is a directory"):
        load_categories(tmp_path)


class WordTokenizer:
    """Each known text is one token; anything else is one token per character."""

    def __init__(self, words):
        self.ids = {w: i for i, w in enumerate(words)}

    def encode(self, text):
        return [self.ids[text]] if text in self.ids else [1000 + ord(c) for c in text]


def test_resolve_looks_words_up_after_a_space_and_sorts_out_the_rest():
    tok = WordTokenizer([" Lily", " Tom", " red", " blue", " cat", "Mia"])
    r = resolve(tok, {"name": ["Lily", "Tom", "Mia", " Lily"], "colour": ["red", "blue", " red"],
                      "animal": ["cat", "zebra"]})
    assert r["ids"] == {"name": [0, 1], "colour": [2, 3]}
    assert r["split_words"] == ["Mia", "zebra"]  # "Mia" is a token, " Mia" is not
    assert r["repeated"] == [" Lily", " red"]  # a word given with its space is taken as written
    assert r["dropped"] == {"animal": 1}
