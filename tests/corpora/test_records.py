"""`jsonl:` and `parquet:` corpora: documents from files the test writes, prepared once and then
found in the cache; every kind of bad record exits 2 naming the file and the line or row."""

from __future__ import annotations

import gzip
import json
import random
import re
import sys

import pytest

from lrngpt.cli.main import main
from lrngpt.corpora.registry import load_corpus
from lrngpt.data.prepared import prepare
from lrngpt.errors import UserError
from lrngpt.runconfig.schema import DataConfig

WORDS = "Lily Tom saw a red cat dog in the park was happy and said hello to her friend ran".split()


def salad(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(10, 30))) + "." for _ in range(n)]


def write_jsonl(path, records) -> str:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return str(path)


def prepare_cli(spec: str, capsys, *extra: str) -> tuple[int, dict | None, str]:
    code = main(["data", "prepare", "--corpus", spec, "--vocab-size", "300", "--json", *extra])
    out, err = capsys.readouterr()
    return code, json.loads(out) if code == 0 else None, err


def error_line(err: str) -> str:
    """The one error line (progress lines may come before it)."""
    errors = [line for line in err.splitlines() if line.startswith("lrn data: error: ")]
    assert len(errors) == 1 and err.endswith(errors[0] + "\n"), err
    return errors[0]


# ---- JSON Lines --------------------------------------------------------------------------------

def test_jsonl_documents_come_from_the_field_stripped_blank_and_empty_dropped(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"text": "  first doc \n", "id": 1}, "", "   ",
                                              {"text": ""}, {"text": "second", "body": "other"}])
    assert list(load_corpus(f"jsonl:{path}").train_docs()) == ["first doc", "second"]


def test_jsonl_field_gz_and_directories(tmp_path):
    write_jsonl(tmp_path / "b.jsonl", [{"body": "from b", "text": 3}])
    with gzip.open(tmp_path / "a.jsonl.gz", "wt", encoding="utf-8") as f:
        f.write(json.dumps({"body": "from a, gzipped"}) + "\n")
    (tmp_path / "sub").mkdir()
    write_jsonl(tmp_path / "sub" / "c.jsonl", [{"body": "from sub/c"}])
    (tmp_path / "notes.txt").write_text("not read")
    corpus = load_corpus(f"jsonl:{tmp_path}:body")
    assert list(corpus.train_docs()) == ["from a, gzipped", "from b", "from sub/c"]
    assert corpus.meta["field"] == "body" and not corpus.has_own_split


def test_jsonl_fingerprint_follows_content_and_field_not_location(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    a = write_jsonl(tmp_path / "x" / "d.jsonl", [{"text": "one", "body": "two"}])
    b = write_jsonl(tmp_path / "y" / "d.jsonl", [{"text": "one", "body": "two"}])
    fp = lambda spec: load_corpus(spec).fingerprint  # noqa: E731
    assert fp(f"jsonl:{a}") == fp(f"jsonl:{b}")
    assert fp(f"jsonl:{a}") != fp(f"jsonl:{a}:body")
    write_jsonl(tmp_path / "y" / "d.jsonl", [{"text": "one!", "body": "two"}])
    assert fp(f"jsonl:{a}") != fp(f"jsonl:{b}")


def test_jsonl_prepare_works_and_a_second_prepare_does_no_work(tmp_path, capsys):
    path = write_jsonl(tmp_path / "d.jsonl", [{"text": t} for t in salad(200)])
    code, first, err = prepare_cli(f"jsonl:{path}", capsys)
    assert code == 0 and "training a 300-token BPE" in err
    assert first["splits"]["train"]["documents"] + first["splits"]["val"]["documents"] == 200
    code, second, err = prepare_cli(f"jsonl:{path}", capsys)
    assert code == 0 and second == first
    assert "data: cached" in err and "encoding" not in err and "training" not in err


def bad_jsonl(tmp_path):
    good = [{"text": t} for t in salad(6)]
    yield "missing file", str(tmp_path / "nope.jsonl"), "nope.jsonl: no such file"
    yield "malformed line", write_jsonl(tmp_path / "m.jsonl", [*good, '{"text": "cut off'] + good), \
        r"m\.jsonl: line 7 is not valid JSON \(.*\); each line must hold one JSON object"
    yield "missing field", write_jsonl(tmp_path / "f.jsonl", [*good, {"body": "x", "id": 2}]), \
        r"f\.jsonl: line 7 has no field 'text' \(it has 'body', 'id'\); name the field to read with jsonl:PATH:FIELD"
    yield "non-string field", write_jsonl(tmp_path / "n.jsonl", [{"text": 42}]), \
        r"n\.jsonl: line 1: 'text' is a number, not a string"
    yield "null field", write_jsonl(tmp_path / "z.jsonl", [*good[:2], {"text": None}]), \
        r"z\.jsonl: line 3: 'text' is null, not a string"
    yield "not an object", write_jsonl(tmp_path / "o.jsonl", ['["a", "list"]']), \
        r"o\.jsonl: line 1 is a list, not a JSON object with a 'text' field"
    yield "empty", write_jsonl(tmp_path / "e.jsonl", ["", {"text": "  "}]), "has no documents"
    (tmp_path / "u.jsonl").write_bytes(b'{"text": "caf\xe9"}\n')
    yield "invalid utf-8", str(tmp_path / "u.jsonl"), r"u\.jsonl: line 1: invalid UTF-8"
    (tmp_path / "dir").mkdir()
    yield "directory without jsonl", str(tmp_path / "dir"), r"no \.jsonl or \.jsonl\.gz files"


def test_bad_jsonl_exits_2_with_one_line_naming_file_and_line(tmp_path, capsys):
    cases = list(bad_jsonl(tmp_path))
    assert len(cases) == 9
    for what, path, message in cases:
        code, _, err = prepare_cli(f"jsonl:{path}", capsys)
        assert code == 2, (what, err)
        assert re.search(message, error_line(err)), (what, err)


def test_a_bad_line_after_the_tokenizer_was_trained_leaves_no_prepared_data(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LRN_CACHE_DIR", str(tmp_path / "cache"))
    path = write_jsonl(tmp_path / "d.jsonl", [{"text": t} for t in salad(300)] + ['{"text": 1}'])
    code, _, err = prepare_cli(f"jsonl:{path}", capsys, "--out", str(tmp_path / "prepared"))
    assert code == 2 and "line 301: 'text' is a number" in error_line(err)
    assert not (tmp_path / "prepared").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".prepared.tmp")]


# ---- Parquet -----------------------------------------------------------------------------------

@pytest.fixture
def pa():
    return pytest.importorskip("pyarrow", reason="parquet: corpora need pyarrow (pip install lrngpt[parquet])")


def write_parquet(pa, path, columns: dict, row_group_size: int | None = None) -> str:
    import pyarrow.parquet as pq

    pq.write_table(pa.table(columns), path, row_group_size=row_group_size)
    return str(path)


def test_parquet_documents_from_the_column_in_row_groups(pa, tmp_path):
    texts = [f" doc {i} " if i % 3 else "" for i in range(10)]
    path = write_parquet(pa, tmp_path / "d.parquet", {"text": texts, "story": [f"s{i}" for i in range(10)]},
                         row_group_size=4)
    assert list(load_corpus(f"parquet:{path}").train_docs()) == [t.strip() for t in texts if t]
    corpus = load_corpus(f"parquet:{path}:story")
    assert list(corpus.train_docs()) == [f"s{i}" for i in range(10)]
    assert corpus.meta["rows"] == 10 and corpus.fingerprint != load_corpus(f"parquet:{path}").fingerprint


def test_parquet_streams_each_column_chunk_without_pre_buffering_and_gives_every_row(pa, tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    from lrngpt.corpora import records

    texts = [f"document {i} " + "word " * (i % 50) for i in range(5000)]
    path = write_parquet(pa, tmp_path / "d.parquet", {"text": texts}, row_group_size=1700)
    assert pq.ParquetFile(path).metadata.num_row_groups == 3
    opened = []
    real = pq.ParquetFile

    def spy(*args, **kwargs):
        opened.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(pq, "ParquetFile", spy)
    monkeypatch.setattr(records, "PARQUET_BUFFER", 4096)  # many buffer refills per column chunk
    docs = list(load_corpus(f"parquet:{path}").train_docs())
    assert docs == [t.strip() for t in texts]  # byte for byte, in order, across row groups and refills
    assert opened and all(k["pre_buffer"] is False and k["buffer_size"] == 4096 for k in opened)


def test_parquet_directory_and_large_strings(pa, tmp_path):
    write_parquet(pa, tmp_path / "b.parquet", {"text": pa.array(["from b"], pa.large_string())})
    write_parquet(pa, tmp_path / "a.parquet", {"text": ["from a"]})
    assert list(load_corpus(f"parquet:{tmp_path}").train_docs()) == ["from a", "from b"]


def test_parquet_prepare_works_and_a_second_prepare_does_no_work(pa, tmp_path, capsys):
    path = write_parquet(pa, tmp_path / "d.parquet", {"text": salad(200, seed=1)}, row_group_size=50)
    code, first, err = prepare_cli(f"parquet:{path}", capsys)
    assert code == 0 and "training a 300-token BPE" in err
    assert first["splits"]["train"]["documents"] + first["splits"]["val"]["documents"] == 200
    code, second, err = prepare_cli(f"parquet:{path}", capsys)
    assert code == 0 and second == first and "data: cached" in err and "encoding" not in err


def bad_parquet(pa, tmp_path):
    yield "missing file", str(tmp_path / "nope.parquet"), "nope.parquet: no such file"
    yield "missing column", write_parquet(pa, tmp_path / "c.parquet", {"body": ["x"], "id": [1]}), \
        r"c\.parquet has no column 'text' \(columns: body, id\); name the column to read with parquet:PATH:COLUMN"
    yield "non-string column", write_parquet(pa, tmp_path / "n.parquet", {"text": [1, 2]}), \
        r"n\.parquet: column 'text' holds int64, not strings"
    yield "null value", write_parquet(pa, tmp_path / "z.parquet", {"text": ["a", "b", None]}), \
        r"z\.parquet: row 2 \(from 0\): 'text' is null, not a string"
    yield "no rows", write_parquet(pa, tmp_path / "e.parquet", {"text": pa.array([], pa.string())}), \
        r"e\.parquet has no rows"
    (tmp_path / "x.parquet").write_bytes(b"not parquet at all")
    yield "not parquet", str(tmp_path / "x.parquet"), r"x\.parquet cannot be read as Parquet"


def test_bad_parquet_exits_2_with_one_line_naming_it(pa, tmp_path, capsys):
    cases = list(bad_parquet(pa, tmp_path))
    assert len(cases) == 6
    for what, path, message in cases:
        code, _, err = prepare_cli(f"parquet:{path}", capsys)
        assert code == 2, (what, err)
        assert re.search(message, error_line(err)), (what, err)


def test_without_pyarrow_parquet_says_how_to_install_it(tmp_path, monkeypatch):
    (tmp_path / "d.parquet").write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(UserError, match=r"pip install pyarrow.*lrngpt\[parquet\]"):
        load_corpus(f"parquet:{tmp_path / 'd.parquet'}")


def test_prepare_reads_jsonl_through_the_data_config(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"text": t} for t in salad(120, seed=2)])
    data = prepare(DataConfig(corpus=f"jsonl:{path}", vocab_size=300), tmp_path / "out", log=lambda m: None)
    assert data.meta["kind"] == "jsonl" and data.meta["corpus_meta"]["field"] == "text"
    assert data.tokens("train")[0] == data.tokenizer.eot_id
