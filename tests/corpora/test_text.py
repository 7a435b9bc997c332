import gzip
from pathlib import Path

import pytest

from lrngpt.corpora.base import EOT, LIMITS
from lrngpt.corpora.registry import load_corpus
from lrngpt.corpora.text import iter_documents, split_documents, text_corpus
from lrngpt.errors import UserError

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode() if isinstance(text, str) else text
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)
    return path


def test_separators_at_start_end_and_doubled_give_stripped_nonempty_documents(tmp_path):
    f = write(tmp_path / "a.txt", f"{EOT}one{EOT}  two \n{EOT}{EOT}\n three{EOT}\n")
    assert list(iter_documents([f])) == ["one", "two", "three"]


def test_file_without_separator_is_one_document(tmp_path):
    f = write(tmp_path / "a.txt", "\n Line one.\nLine two.\n\n")
    assert list(iter_documents([f])) == ["Line one.\nLine two."]


def test_every_chunk_size_gives_the_same_documents(tmp_path):
    # separators and multi-byte characters land across chunk boundaries for some chunk size
    text = f"안녕 Lily{EOT}é{EOT}{EOT}하늘은 파랗다 <|endof text{EOT}Tom <|"
    f = write(tmp_path / "a.txt", text)
    expected = ["안녕 Lily", "é", "하늘은 파랗다 <|endof text", "Tom <|"]
    for chunk_size in range(1, len(text.encode()) + 2):
        assert list(iter_documents([f], chunk_size=chunk_size)) == expected, chunk_size


def test_split_documents_finds_a_separator_split_over_chunks():
    chunks = ["ab<|endof", "text|>cd<", "|endoftext|", "><|endoftext|>", "ef"]
    assert list(split_documents(chunks)) == ["ab", "cd", "", "ef"]


def test_byte_order_mark_is_not_part_of_the_first_document(tmp_path):
    f = write(tmp_path / "a.txt", f"\ufeffhi{EOT}there")
    assert list(iter_documents([f])) == ["hi", "there"]


def test_gz_files_are_read(tmp_path):
    f = write(tmp_path / "a.txt.gz", f"x{EOT}y")
    assert list(iter_documents([f])) == ["x", "y"]


def test_directory_is_read_recursively_in_sorted_order_txt_only(tmp_path):
    write(tmp_path / "d" / "b" / "2.txt", "B2")
    write(tmp_path / "d" / "a.txt", "A")
    write(tmp_path / "d" / "sub" / "x.txt.gz", "X")
    write(tmp_path / "d" / "notes.md", "ignored")
    write(tmp_path / "e.txt", "E")
    corpus = text_corpus(f"{tmp_path / 'd'},{tmp_path / 'e.txt'}")
    assert list(corpus.train_docs()) == ["A", "B2", "X", "E"]
    assert corpus.val_docs is None and corpus.kind == "text"


def test_invalid_utf8_names_file_and_byte_offset(tmp_path):
    f = write(tmp_path / "x.txt", "héllo wörld".encode() + b"\xff rest")
    for chunk_size in (1, 4, 1 << 20):
        with pytest.raises(UserError, match=r"x\.txt: invalid UTF-8 at byte 13; re-save the file as UTF-8"):
            list(iter_documents([f], chunk_size=chunk_size))


def test_truncated_character_at_end_is_invalid_utf8(tmp_path):
    f = write(tmp_path / "x.txt.gz", b"ab" + "가".encode()[:2])
    with pytest.raises(UserError, match="invalid UTF-8 at byte 2 of the uncompressed text"):
        list(iter_documents([f], chunk_size=3))


def test_missing_path_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="no such file"):
        text_corpus(str(tmp_path / "nope.txt"))


def test_directory_without_txt_files_is_a_user_error(tmp_path):
    write(tmp_path / "d" / "a.md", "x")
    with pytest.raises(UserError, match="no .txt or .txt.gz files"):
        text_corpus(str(tmp_path / "d"))


def test_all_empty_files_is_a_user_error(tmp_path):
    write(tmp_path / "a.txt", "")
    write(tmp_path / "b.txt.gz", "")
    with pytest.raises(UserError, match="text:.* has no documents: every file is empty; give files that contain"):
        text_corpus(str(tmp_path))


def test_empty_spec_is_a_user_error():
    with pytest.raises(UserError, match="text needs a path"):
        load_corpus("text:")


def test_fingerprint_follows_content_not_location(tmp_path):
    a = write(tmp_path / "one" / "c.txt", "same")
    b = write(tmp_path / "two" / "c.txt", "same")
    assert text_corpus(str(a)).fingerprint == text_corpus(str(b)).fingerprint
    write(b, "changed")
    assert text_corpus(str(a)).fingerprint != text_corpus(str(b)).fingerprint


def test_load_corpus_dispatches_text_and_documents_can_be_read_twice(tmp_path):
    write(tmp_path / "a.txt", f"p{EOT}q")
    corpus = load_corpus(f"text:{tmp_path / 'a.txt'}")
    assert corpus.spec == f"text:{tmp_path / 'a.txt'}"
    assert list(corpus.train_docs()) == list(corpus.train_docs()) == ["p", "q"]


def test_real_sotu_file_has_233_addresses():
    f = DATA / "sotu" / "sotu.txt.gz"
    if not f.exists():
        pytest.skip("../shared/data is absent")
    docs = list(text_corpus(str(f)).train_docs())
    assert len(docs) == 233


# ---- bounded documents and lines ------------------------------------------------------------------

@pytest.mark.parametrize("chunk_size", [1, 5, 13, 4096])
def test_a_document_at_the_limit_is_read_and_one_past_it_refused_whatever_the_chunks(tmp_path, chunk_size,
                                                                                     monkeypatch):
    monkeypatch.setattr(LIMITS, "max_document_chars", 40)
    at = write(tmp_path / "at.txt", f"{'a' * 40}{EOT}{'b' * 40}{EOT}short")
    assert list(iter_documents([at], chunk_size=chunk_size)) == ["a" * 40, "b" * 40, "short"]
    past = write(tmp_path / "past.txt", f"{'a' * 40}{EOT}{'b' * 41}{EOT}short")
    with pytest.raises(UserError, match="past.txt: document 2 \\(from 1\\) is longer than 40 characters"):
        list(iter_documents([past], chunk_size=chunk_size))


def test_one_huge_document_in_a_small_gz_is_refused_with_bounded_memory(tmp_path):
    """A 1 MB .txt.gz of 1 GiB without a separator: refused once the default limit (33.5M characters)
    is read, holding about that much, never the gigabyte (it was read whole and OOM-killed)."""
    import time
    import tracemalloc

    member = gzip.compress(b"a" * (1 << 20), 9)
    path = tmp_path / "bomb.txt.gz"
    path.write_bytes(member * 1024)  # concatenated members: one stream of 1 GiB
    assert path.stat().st_size < 2 << 20
    tracemalloc.start()
    t0 = time.process_time()  # CPU time: the work done, not how busy the machine is with other programs
    try:
        with pytest.raises(UserError, match="bomb.txt.gz \\(uncompressed\\): document 1 \\(from 1\\) is longer than "
                                            "33,554,432 characters"):
            for _ in iter_documents([path]):
                pass
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * LIMITS.max_document_chars and time.process_time() - t0 < 30, peak


@pytest.mark.parametrize("chunk_size", [1, 3, 64])
def test_bounded_lines_gives_every_line_and_refuses_one_past_the_limit(tmp_path, chunk_size, monkeypatch):
    import io

    import lrngpt.corpora.text as text

    monkeypatch.setattr(text, "CHUNK_SIZE", chunk_size)
    data = b"a\n" + b"x" * 9 + b"\n\nlast"  # the second line is 10 bytes with its newline
    assert list(text.bounded_lines(io.BytesIO(data), Path("f.jsonl"), max_bytes=10)) == \
        [(1, b"a\n"), (2, b"x" * 9 + b"\n"), (3, b"\n"), (4, b"last")]
    with pytest.raises(UserError, match="f.jsonl: line 2 is longer than 9 bytes"):
        list(text.bounded_lines(io.BytesIO(data), Path("f.jsonl"), max_bytes=9))
    with pytest.raises(UserError, match="line 1 of the uncompressed text is longer than 4 bytes"):
        list(text.bounded_lines(io.BytesIO(b"no newline at all"), Path("f.jsonl.gz"), max_bytes=4))
