import gzip
from pathlib import Path

import pytest

from lrngpt.corpora.nsmc import Review, nsmc_corpus, read_reviews
from lrngpt.corpora.registry import load_corpus
from lrngpt.errors import UserError

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
HEADER = "id\tdocument\tlabel\n"
TRAIN = HEADER + "1\t정말 재밌어요\t1\r\n2\t\t0\n3\t지루함\t<tab>\t0\n4\t 최고 \t1\n\n"
TEST = HEADER + "7\t별로\t0\n8\t좋아요\t1\n9\t또 보고 싶다\t1\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode()
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)
    return path


def test_read_reviews_yields_id_text_label_for_every_row(tmp_path):
    f = write(tmp_path / "ratings_train.txt.gz", TRAIN)
    assert list(read_reviews(f)) == [
        Review("1", "정말 재밌어요", 1),
        Review("2", "", 0),
        Review("3", "지루함\t<tab>", 0),  # a tab inside a review stays in the review
        Review("4", " 최고 ", 1),
    ]


@pytest.mark.parametrize(
    "bad, where",
    [("5\tno label\n", "line 3"), ("6\ttext\t2\n", "line 3"), ("just text\n", "line 3")],
)
def test_malformed_line_names_file_and_line(tmp_path, bad, where):
    f = write(tmp_path / "r.txt", HEADER + "1\tok\t1\n" + bad)
    with pytest.raises(UserError, match=rf"r\.txt: {where} is not 'id<TAB>document<TAB>label'"):
        list(read_reviews(f))


def test_missing_header_is_a_user_error(tmp_path):
    f = write(tmp_path / "r.txt", "1\tok\t1\n")
    with pytest.raises(UserError, match="line 1 should be the header"):
        list(read_reviews(f))


def test_invalid_utf8_names_the_line(tmp_path):
    f = tmp_path / "r.txt"
    f.write_bytes(HEADER.encode() + b"1\tok\t1\n2\t\xff\t0\n")
    with pytest.raises(UserError, match=r"r\.txt: line 3: invalid UTF-8"):
        list(read_reviews(f))


def test_directory_gives_own_split_documents_and_label_counts(tmp_path):
    write(tmp_path / "ratings_train.txt", TRAIN)
    write(tmp_path / "ratings_test.txt.gz", TEST)
    corpus = load_corpus(f"nsmc:{tmp_path}")
    assert corpus.kind == "nsmc" and corpus.has_own_split
    assert list(corpus.train_docs()) == ["정말 재밌어요", "지루함\t<tab>", "최고"]  # empty review skipped
    assert list(corpus.val_docs()) == ["별로", "좋아요", "또 보고 싶다"]
    assert corpus.meta["labels"] == {"train": {"negative": 2, "positive": 2}, "val": {"negative": 1, "positive": 2}}


def test_single_file_has_no_own_split(tmp_path):
    f = write(tmp_path / "mine.txt", TEST)
    corpus = nsmc_corpus(str(f))
    assert corpus.val_docs is None
    assert list(corpus.train_docs()) == ["별로", "좋아요", "또 보고 싶다"]


def test_directory_missing_test_file_is_a_user_error(tmp_path):
    write(tmp_path / "ratings_train.txt", TRAIN)
    with pytest.raises(UserError, match=r"has no ratings_test\.txt \(or ratings_test\.txt\.gz\)"):
        nsmc_corpus(str(tmp_path))


def test_missing_path_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="no such directory; give the directory that holds ratings_train.txt"):
        nsmc_corpus(str(tmp_path / "nope"))


def test_download_from_overridden_url_into_cache(http_server, tmp_path, monkeypatch):
    http_server.files.update({"/ratings_train.txt": TRAIN.encode(), "/ratings_test.txt": TEST.encode()})
    monkeypatch.setenv("LRN_NSMC_URL", http_server.url + "/")
    monkeypatch.setenv("LRN_CACHE_DIR", str(tmp_path))
    corpus = load_corpus("nsmc")
    assert corpus.spec == "nsmc" and list(corpus.val_docs()) == ["별로", "좋아요", "또 보고 싶다"]
    assert (tmp_path / "nsmc" / "ratings_train.txt").read_bytes() == TRAIN.encode()
    assert sorted(path for path, _ in http_server.requests) == ["/ratings_test.txt", "/ratings_train.txt"]


def test_real_nsmc_files_have_150000_and_50000_reviews():
    if not (DATA / "nsmc").is_dir():
        pytest.skip("../shared/data is absent")
    corpus = nsmc_corpus(str(DATA / "nsmc"))
    counts = {k: sum(v.values()) for k, v in corpus.meta["labels"].items()}
    assert counts == {"train": 150_000, "val": 50_000}
