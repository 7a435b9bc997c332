import dataclasses
import gzip
import hashlib

import pytest

from lrngpt.corpora import tinystories as ts
from lrngpt.corpora.base import EOT
from lrngpt.corpora.registry import load_corpus
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
    with pytest.raises(UserError, match="no such directory; give the directory that holds TinyStoriesV2-GPT4-train.txt"):
        ts.tinystories_corpus(str(tmp_path / "nope"))


PINNED = f"/datasets/roneneldan/TinyStories/resolve/{ts.REVISION}"


@pytest.fixture
def mirror(http_server, tmp_path, monkeypatch):
    """A local stand-in for huggingface.co serving the files at the pinned revision's paths, reached
    through huggingface_hub (the test session is offline for it otherwise: see conftest)."""
    constants = pytest.importorskip("huggingface_hub.constants")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    http_server.files.update({f"{PINNED}/{ts.TRAIN}": TRAIN, f"{PINNED}/{ts.VALID}": VALID})
    monkeypatch.setenv("LRN_TINYSTORIES_URL", http_server.url)
    monkeypatch.setenv("LRN_CACHE_DIR", str(tmp_path))
    return http_server


@pytest.fixture
def small_expected(monkeypatch):
    expected = {name: (len(b), hashlib.sha256(b).hexdigest()) for name, b in ((ts.TRAIN, TRAIN), (ts.VALID, VALID))}
    monkeypatch.setattr(ts, "EXPECTED", expected)


def test_the_download_url_names_the_pinned_commit_not_main(monkeypatch):
    monkeypatch.delenv("LRN_TINYSTORIES_URL", raising=False)
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    assert ts.REVISION == "f54c09fd23315a6f9c86f9dc80f725de7d8f9c64"
    assert ts.base_url() == f"https://huggingface.co{PINNED}"
    assert "resolve/main" not in ts.base_url()
    assert ts.EXPECTED == {ts.TRAIN: (2_227_753_162, "6418d412de72888f52b5142c761ac21a582f7d1166f0bfbdb5f03ccfdec90443"),
                           ts.VALID: (22_502_601, "6874bae9a4c1a4e7edcf0e53b86c17817e9cf881fc75ff2368da457b80c0585d")}
    monkeypatch.setenv("HF_ENDPOINT", "http://hub.example")  # huggingface_hub's own variable ...
    assert ts.base_url() == f"http://hub.example{PINNED}"
    monkeypatch.setenv("LRN_TINYSTORIES_URL", "http://mirror.example/")  # ... which lrn's own one overrides
    assert ts.base_url() == f"http://mirror.example{PINNED}"


def test_the_server_sees_the_revision_in_every_path(mirror, small_expected, tmp_path):
    ts.tinystories_corpus(None)
    assert sorted(path for path, _ in mirror.requests) == [f"{PINNED}/{ts.TRAIN}", f"{PINNED}/{ts.VALID}"]
    assert set(mirror.heads) == {f"{PINNED}/{ts.TRAIN}", f"{PINNED}/{ts.VALID}"}  # asked before downloading
    # huggingface_hub's own record of each file (its commit), in the cache directory
    assert (tmp_path / "tinystories" / ".cache" / "huggingface" / "download" / f"{ts.TRAIN}.metadata").is_file()


def test_hf_endpoint_alone_reaches_the_mirror(mirror, small_expected, tmp_path, monkeypatch):
    monkeypatch.delenv("LRN_TINYSTORIES_URL")
    monkeypatch.setenv("HF_ENDPOINT", mirror.url)
    assert list(load_corpus("tinystories").val_docs()) == ["Mia liked the park."]
    assert len(mirror.requests) == 2


def test_a_cut_transfer_resumes_at_the_pinned_url(mirror, tmp_path, monkeypatch):
    """huggingface_hub writes what arrives in blocks of DOWNLOAD_CHUNK_SIZE (10 MiB) and, when the
    connection drops, asks for the rest from there (Range), at the same pinned URL."""
    from huggingface_hub.constants import DOWNLOAD_CHUNK_SIZE

    big = TRAIN * (DOWNLOAD_CHUNK_SIZE // len(TRAIN) + 100)  # a block, and 5 KB more
    mirror.files[f"{PINNED}/{ts.TRAIN}"] = big
    monkeypatch.setattr(ts, "EXPECTED", {ts.TRAIN: (len(big), hashlib.sha256(big).hexdigest()),
                                         ts.VALID: (len(VALID), hashlib.sha256(VALID).hexdigest())})
    mirror.cut_after[f"{PINNED}/{ts.TRAIN}"] = DOWNLOAD_CHUNK_SIZE + 100
    corpus = ts.tinystories_corpus(None)
    assert (f"{PINNED}/{ts.TRAIN}", f"bytes={DOWNLOAD_CHUNK_SIZE}-") in mirror.requests
    assert (tmp_path / "tinystories" / ts.TRAIN).read_bytes() == big
    assert corpus.meta["revision"] == ts.REVISION


def test_a_file_the_server_announces_with_another_sha256_is_not_downloaded(mirror, small_expected, tmp_path,
                                                                           monkeypatch):
    monkeypatch.setitem(ts.EXPECTED, ts.VALID, (len(VALID), "0" * 64))
    with pytest.raises(UserError, match="announces TinyStoriesV2-GPT4-valid.txt with the wrong sha256 .*nothing "
                                        "was downloaded"):
        ts.tinystories_corpus(None)
    assert (f"{PINNED}/{ts.VALID}", None) not in mirror.requests
    assert not (tmp_path / "tinystories" / ts.VALID).exists()


def test_bytes_that_do_not_match_their_sha256_are_refused_and_kept_aside(mirror, small_expected, tmp_path):
    wrong = b"Mia liked the dark.<|endoftext|>\n"  # the size and the announced sha256 of VALID, other bytes
    mirror.files[f"{PINNED}/{ts.VALID}"] = wrong
    mirror.etags[f"{PINNED}/{ts.VALID}"] = hashlib.sha256(VALID).hexdigest()
    with pytest.raises(UserError, match="wrong sha256"):
        ts.tinystories_corpus(None)
    assert (tmp_path / "tinystories" / f"{ts.VALID}.bad").read_bytes() == wrong
    assert not (tmp_path / "tinystories" / ts.VALID).exists()
    mirror.files[f"{PINNED}/{ts.VALID}"] = VALID  # the mirror repaired: the next run downloads it afresh
    assert list(ts.tinystories_corpus(None).val_docs()) == ["Mia liked the park."]


def test_download_from_overridden_url_checks_and_caches(mirror, small_expected, tmp_path):
    corpus = load_corpus("tinystories")
    assert corpus.spec == "tinystories" and list(corpus.val_docs()) == ["Mia liked the park."]
    assert (tmp_path / "tinystories" / ts.TRAIN).read_bytes() == TRAIN
    assert len(mirror.requests) == 2
    assert load_corpus("tinystories").fingerprint == corpus.fingerprint
    assert len(mirror.requests) == 2 and len(mirror.heads) == 4  # the second load used the cache: no request


def test_download_is_checked_against_the_published_sizes(mirror, tmp_path):
    with pytest.raises(UserError, match=f"wrong size {len(TRAIN)} bytes, expected 2227753162"):
        ts.tinystories_corpus(None)
    assert not (tmp_path / "tinystories" / ts.TRAIN).exists() and mirror.requests == []  # refused before it


def test_a_changed_file_in_the_cache_is_moved_aside_and_fetched_again(mirror, small_expected, tmp_path):
    ts.tinystories_corpus(None)
    (tmp_path / "tinystories" / ts.TRAIN).write_bytes(TRAIN[:-3] + b"XYZ")  # same size, other bytes
    mirror.requests.clear()
    ts.tinystories_corpus(None)
    assert (tmp_path / "tinystories" / ts.TRAIN).read_bytes() == TRAIN
    assert (tmp_path / "tinystories" / f"{ts.TRAIN}.bad").read_bytes() == TRAIN[:-3] + b"XYZ"
    assert [p for p, _ in mirror.requests] == [f"{PINNED}/{ts.TRAIN}"]


def test_a_mirror_without_the_file_or_at_another_commit_is_refused_in_one_line(mirror, small_expected, tmp_path,
                                                                                monkeypatch):
    del mirror.files[f"{PINNED}/{ts.VALID}"]
    with pytest.raises(UserError, match=r"resolve/f54c09fd.*/TinyStoriesV2-GPT4-valid.txt: the server answered "
                                        r"HTTP 404; check the mirror") as e:
        ts.tinystories_corpus(None)
    assert "\n" not in str(e.value)
    mirror.files[f"{PINNED}/{ts.VALID}"] = VALID
    from lrngpt.corpora import hub_file

    real = hub_file._ask

    def another_commit(url):  # what a mirror of another revision answers
        return dataclasses.replace(real(url), commit_hash="0" * 40)

    monkeypatch.setattr(hub_file, "_ask", another_commit)
    with pytest.raises(UserError, match=f"wrong commit {'0' * 40}, expected {ts.REVISION}"):
        ts.tinystories_corpus(None)
    assert not (tmp_path / "tinystories" / ts.VALID).exists()


def test_a_pinned_file_is_checked_by_size_then_sha256(tmp_path):
    from lrngpt.corpora.hub_file import pinned_problem

    f = tmp_path / "corpus.txt"
    f.write_bytes(b"once upon a time")
    digest = hashlib.sha256(b"once upon a time").hexdigest()
    assert pinned_problem(f, 16, digest.upper()) is None
    assert pinned_problem(f, 17, digest) == "size 16 bytes, expected 17"
    assert pinned_problem(f, 16, "0" * 64) == f"sha256 {digest}, expected {'0' * 64}"
