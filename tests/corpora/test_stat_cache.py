"""A corpus is hashed once: a later fingerprint of unchanged files reads none of them; a changed stat,
LRN_VERIFY=1 or --verify re-hashes; the fingerprint is the one the full hash gives (old keys stay valid)."""

from __future__ import annotations

import json
import os
import time

import pytest

from lrngpt.corpora import stat_cache
from lrngpt.corpora import text as text_mod
from lrngpt.corpora.registry import load_corpus
from lrngpt.corpora.text import fingerprint_files, hash_files

OLD = time.time() - 3600  # an mtime well before the hash: not racy


@pytest.fixture
def corpus_file(tmp_path, monkeypatch):
    monkeypatch.setattr(stat_cache, "RACY_NS", 0)  # os.utime just set the ctime: racy under the real 2 s
    path = tmp_path / "c.txt"
    path.write_text("Lily saw a cat.<|endoftext|>Tom ran." * 2000, encoding="utf-8")
    os.utime(path, (OLD, OLD))
    return path


@pytest.fixture
def reads(monkeypatch):
    """The files opened for hashing."""
    opened = []
    real = text_mod.open_bytes

    def spy(path, raw=False):
        opened.append(path)
        return real(path, raw)

    monkeypatch.setattr(text_mod, "open_bytes", spy)
    return opened


def test_a_cache_hit_opens_no_corpus_file_and_gives_the_full_hash(corpus_file, reads, monkeypatch):
    files = [(corpus_file, "c.txt")]
    first = fingerprint_files("text", files)
    assert first == hash_files("text", files) and len(reads) == 2  # the first call hashed it (and so did we)
    reads.clear()
    assert fingerprint_files("text", files) == first and reads == []
    doc = json.loads(stat_cache.cache_path().read_text())
    assert [e["fingerprint"] for e in doc["entries"].values()].count(first) == 1


def test_same_size_new_mtime_is_hashed_again(corpus_file, reads, monkeypatch):
    files = [(corpus_file, "c.txt")]
    first = fingerprint_files("text", files)
    size = corpus_file.stat().st_size
    corpus_file.write_text(corpus_file.read_text().replace("Lily", "Mila"), encoding="utf-8")
    os.utime(corpus_file, (OLD + 10, OLD + 10))
    assert corpus_file.stat().st_size == size
    reads.clear()
    second = fingerprint_files("text", files)
    assert reads == [corpus_file] and second != first and second == hash_files("text", files)


def test_verify_rehashes_and_a_just_written_file_is_not_remembered(corpus_file, reads, monkeypatch):
    files = [(corpus_file, "c.txt")]
    fingerprint_files("text", files)
    reads.clear()
    monkeypatch.setenv("LRN_VERIFY", "1")
    fingerprint_files("text", files)
    assert reads == [corpus_file]
    monkeypatch.delenv("LRN_VERIFY")
    stat_cache.set_verify(True)
    try:
        fingerprint_files("text", files)
        assert len(reads) == 2
    finally:
        stat_cache.set_verify(False)
    monkeypatch.setattr(stat_cache, "RACY_NS", 2_000_000_000)
    fresh = corpus_file.with_name("fresh.txt")
    fresh.write_text("just written", encoding="utf-8")  # racy: its mtime is now, a change may not show
    reads.clear()
    fingerprint_files("text", [(fresh, "fresh.txt")])
    fingerprint_files("text", [(fresh, "fresh.txt")])
    assert reads == [fresh, fresh]


def test_a_damaged_or_unwritable_cache_file_only_costs_a_hash(corpus_file, reads, monkeypatch):
    stat_cache.cache_path().parent.mkdir(parents=True, exist_ok=True)
    stat_cache.cache_path().write_text("{not json")
    files = [(corpus_file, "c.txt")]
    assert fingerprint_files("text", files) == hash_files("text", files)
    assert json.loads(stat_cache.cache_path().read_text())["version"] == 1  # rewritten whole


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="Linux: bytes read from /proc/self/io")
def test_loading_a_corpus_again_reads_a_few_bytes_not_the_file(corpus_file, monkeypatch):
    big = corpus_file.with_name("big.txt")
    with open(big, "w", encoding="utf-8") as f:
        for _ in range(200):
            f.write("Once upon a time there was a cat.<|endoftext|>" * 500)  # ~4.7 MB
    os.utime(big, (OLD, OLD))
    first = load_corpus(f"text:{big}").fingerprint

    def rchar() -> int:
        with open("/proc/self/io") as f:
            return int(next(line for line in f if line.startswith("rchar")).split()[1])

    before = rchar()
    again = load_corpus(f"text:{big}").fingerprint
    read = rchar() - before
    assert again == first and read < big.stat().st_size / 20, read  # the cache file and one byte, not 4.7 MB
