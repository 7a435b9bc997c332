import gzip
import hashlib

import pytest

from lrngpt.corpora import EOT, load_corpus
from lrngpt.corpora import tinystories as ts
from lrngpt.errors import UserError

TRAIN = f"Once upon a time, Lily saw a red ball.{EOT}\nTom had a dog.\n{EOT}\n".encode()
VALID = f"Mia liked the park.{EOT}\n".encode()


def test_directory_gives_train_and_own_valid_split(tmp_path):
    (tmp_path / ts.TRAIN).write_bytes(TRAIN)
    (tmp_path / f"{ts.VALID}.gz").write_bytes(gzip.compress(VALID))
    corpus = load_corpus(f"tinystories:{tmp_path}")
    assert corpus.kind == "tinystories" and corpus.has_own_split
    assert list(corpus.train_docs()) == ["Once upon a time, Lily saw a red ball.", "Tom had a dog."]
    assert list(corpus.val_docs()) == ["Mia liked the park."]


def test_missing_valid_file_is_a_user_error(tmp_path):
    (tmp_path / ts.TRAIN).write_bytes(TRAIN)
    with pytest.raises(UserError, match="has no TinyStoriesV2-GPT4-valid.txt"):
        ts.tinystories_corpus(str(tmp_path))


def test_path_that_is_not_a_directory_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="not a directory"):
        ts.tinystories_corpus(str(tmp_path / "nope"))


@pytest.fixture
def mirror(http_server, tmp_path, monkeypatch):
    http_server.files.update({f"/{ts.TRAIN}": TRAIN, f"/{ts.VALID}": VALID})
    monkeypatch.setenv("LRN_TINYSTORIES_URL", http_server.url)
    monkeypatch.setenv("LRN_CACHE_DIR", str(tmp_path))
    return http_server


def test_download_from_overridden_url_checks_and_caches(mirror, tmp_path, monkeypatch):
    expected = {name: (len(b), hashlib.sha256(b).hexdigest()) for name, b in ((ts.TRAIN, TRAIN), (ts.VALID, VALID))}
    monkeypatch.setattr(ts, "EXPECTED", expected)
    corpus = load_corpus("tinystories")
    assert corpus.spec == "tinystories" and list(corpus.val_docs()) == ["Mia liked the park."]
    assert (tmp_path / "tinystories" / ts.TRAIN).read_bytes() == TRAIN
    assert len(mirror.requests) == 2
    assert load_corpus("tinystories").fingerprint == corpus.fingerprint
    assert len(mirror.requests) == 2  # the second load used the cache


def test_download_is_checked_against_the_published_sizes(mirror, tmp_path):
    with pytest.raises(UserError, match=f"wrong size {len(TRAIN)} bytes, expected 2227753162"):
        ts.tinystories_corpus(None)
    assert not (tmp_path / "tinystories" / ts.TRAIN).exists()
