import re
from collections import Counter, defaultdict
from collections.abc import Iterator

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

from lrngpt.corpora import stories as S
from lrngpt.corpora import stories_words as W
from lrngpt.corpora.base import EOT
from lrngpt.corpora.registry import load_corpus
from lrngpt.corpora.stories import CATEGORIES, generate_stories, stories_corpus
from lrngpt.corpora.stories_words import BOYS, GIRLS, compare_forms, plural, verb_forms
from lrngpt.errors import UserError

MINIMUMS = {"name": 40, "colour": 12, "animal": 25, "object": 40, "place": 15, "feeling": 10}


@pytest.fixture(scope="module")
def two_mb_words() -> list[str]:
    text = "\n".join(generate_stories(2_000_000, seed=0))
    return re.findall(r"[A-Za-z]+|[^\sA-Za-z]", text)


def test_same_seed_gives_byte_identical_text():
    assert "".join(generate_stories(200_000, seed=5)) == "".join(generate_stories(200_000, seed=5))


def test_different_seeds_give_different_text():
    a, b = next(generate_stories(10**6, seed=0)), next(generate_stories(10**6, seed=1))
    assert a != b
    assert "".join(generate_stories(50_000, seed=0)) != "".join(generate_stories(50_000, seed=1))


@pytest.mark.parametrize("size", [1, 50_000, 123_457])
def test_size_is_reached_and_overshot_by_less_than_one_story(size):
    docs = list(generate_stories(size, seed=2))
    total = sum(len(d.encode("utf-8")) for d in docs)
    assert total >= size
    assert total - len(docs[-1].encode("utf-8")) < size


def test_generate_stories_streams():
    docs = generate_stories(10**15, seed=0)  # would never fit in memory as a list
    assert isinstance(docs, Iterator)
    assert len(next(docs)) > 200


def test_documents_are_plain_ascii_stories_without_eot_or_template_leftovers():
    docs = list(generate_stories(300_000, seed=3))
    assert len(docs) > 200
    for doc in docs:
        assert EOT not in doc
        assert doc.isascii()  # so len(doc) is its UTF-8 size
        assert not set("{}~|") & set(doc), doc
        assert "  " not in doc and doc == doc.strip()
        assert doc.count('"') % 2 == 0, doc  # dialogue quotes are closed
    text = "\n".join(docs)
    assert re.findall(r"\b[aA] [aeioAEIO]\w*|\b[aA]n [^aeiouAEIOU\s]\w*", text) == []  # a cat, an owl
    lengths = sorted(len(d) for d in docs)
    assert 300 < lengths[len(lengths) // 2] < 2000


def test_category_sizes_meet_the_minimums_and_entries_are_single_words():
    for cat, n in MINIMUMS.items():
        assert len(CATEGORIES[cat]) >= n, cat
    assert {"Lily", "Mia", "Luna"} <= set(GIRLS) and {"Tom", "Ben"} <= set(BOYS)
    assert len(GIRLS) >= 20 and len(BOYS) >= 20
    for words in CATEGORIES.values():
        for w in words:
            assert re.fullmatch(r"[A-Za-z]+", w), w
    lower = Counter(w.lower() for words in CATEGORIES.values() for w in words)
    assert [w for w, n in lower.items() if n > 1] == []  # a word (and so a token) has one category


_CATEGORY_OF = {w: cat for cat, words in CATEGORIES.items() for w in words}


def category_of(word: str) -> str | None:
    """The category of a word (" Lily" and "Lily" alike; case-insensitive as a fallback), else None."""
    w = word.strip()
    return _CATEGORY_OF.get(w) or {x.lower(): cat for x, cat in _CATEGORY_OF.items()}.get(w.lower())


def test_category_of_finds_words_with_or_without_the_leading_space():
    assert category_of(" Lily") == "name"
    assert category_of("red") == "colour"
    assert category_of(" Red") == "colour"
    assert category_of("March") == "month"
    assert category_of("owl") == "animal"
    assert category_of(" the") is None
    assert category_of("") is None


def test_every_category_word_appears_in_2mb(two_mb_words):
    counts = Counter(two_mb_words)
    missing = {cat: [w for w in words if counts[w] == 0] for cat, words in CATEGORIES.items()}
    assert {cat: m for cat, m in missing.items() if m} == {}
    assert min(counts[w] for w in CATEGORIES["name"]) >= 50


def test_words_of_a_category_share_sentence_frames(two_mb_words):
    # a frame is the word before and the word after; each category word must share at least one
    # frame with 3 other words of its category (all others for tiny categories)
    frames: dict[str, dict[tuple[str, str], set[str]]] = defaultdict(lambda: defaultdict(set))
    for i in range(1, len(two_mb_words) - 1):
        cat = _CATEGORY_OF.get(two_mb_words[i])
        if cat:
            frames[cat][two_mb_words[i - 1], two_mb_words[i + 1]].add(two_mb_words[i])
    for cat, words in CATEGORIES.items():
        need = min(3, len(words) - 1)
        alone = [w for w in words if not any(w in fill and len(fill) > need for fill in frames[cat].values())]
        assert alone == [], (cat, alone)
    # the frame "... a {colour} {animal} ..." holds every colour
    animals = set(CATEGORIES["animal"])
    seen = {fill for (before, after), fills in frames["colour"].items() if before in ("a", "an") and after in animals
            for fill in fills}
    assert seen == set(CATEGORIES["colour"])


def test_bpe_trained_on_2mb_reaches_4096_tokens_with_every_category_word_one_token():
    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=4096, special_tokens=[EOT], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    hf.train_from_iterator(generate_stories(2_000_000, seed=0), trainer=trainer)
    assert hf.get_vocab_size() == 4096
    split = [w for words in CATEGORIES.values() for w in words if len(hf.encode(" " + w).ids) != 1]
    assert split == []


def test_stories_corpus_defaults_and_normalised_spec():
    c = stories_corpus("")
    assert (c.spec, c.kind, c.val_docs, c.has_own_split) == ("stories:5MB:0", "stories", None, False)
    assert c.meta["categories"] == list(CATEGORIES)
    assert stories_corpus("5000000").spec == "stories:5MB:0"
    assert stories_corpus("5000000").fingerprint == c.fingerprint
    assert stories_corpus("0.5MB:3").spec == "stories:500KB:3"
    assert load_corpus("stories:2MB:7").spec == "stories:2MB:7"


def test_stories_corpus_documents_are_the_generator_documents():
    c = stories_corpus("20KB:4")
    assert list(c.train_docs()) == list(generate_stories(20_000, 4))
    assert list(c.train_docs()) == list(c.train_docs())  # a fresh iterator each call


def test_fingerprint_changes_with_size_seed_and_generator_version(monkeypatch):
    base = stories_corpus("2MB:1").fingerprint
    assert stories_corpus("3MB:1").fingerprint != base
    assert stories_corpus("2MB:2").fingerprint != base
    monkeypatch.setattr(S, "GENERATOR_VERSION", S.GENERATOR_VERSION + 1)
    assert stories_corpus("2MB:1").fingerprint != base


@pytest.mark.parametrize("arg", ["abc", "5MB:x", "5MB:1:2", "-5MB", "5MB:-1", "0"])
def test_bad_arg_raises_user_error_that_shows_how_to_write_it(arg):
    with pytest.raises(UserError, match=r"stories:SIZE:SEED, e\.g\. stories:5MB:0"):
        stories_corpus(arg)


def test_inflection_rules():
    assert verb_forms("hop") == ("hop", "hops", "hopped", "hopping")
    assert verb_forms("dance") == ("dance", "dances", "danced", "dancing")
    assert verb_forms("cry") == ("cry", "cries", "cried", "crying")
    assert verb_forms("tiptoe") == ("tiptoe", "tiptoes", "tiptoed", "tiptoeing")
    assert verb_forms("visit") == ("visit", "visits", "visited", "visiting")
    assert verb_forms("catch") == ("catch", "catches", "caught", "catching")
    assert [plural(w) for w in ("bunny", "fox", "mouse", "monkey", "leaf")] == [
        "bunnies", "foxes", "mice", "monkeys", "leaves"]
    assert compare_forms("big") == ("bigger", "biggest")
    assert compare_forms("happy") == ("happier", "happiest")
    assert compare_forms("nice") == ("nicer", "nicest")
    assert [W.with_article(w) for w in ("owl", "ukulele", "cat")] == ["an owl", "a ukulele", "a cat"]


def test_word_pools_hold_each_word_once_so_draws_are_uniform():
    dup = {k: v for k, v in W.FRESH.items() if len(set(v)) != len(v)}
    assert dup == {}
