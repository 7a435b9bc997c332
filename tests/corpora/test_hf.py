"""`hf:` corpora, offline: datasets saved with save_to_disk and local data directories. A dataset's
own validation split is used; a second prepare finds the cache; bad input exits 2 naming it."""

from __future__ import annotations

import json
import random
import re
import sys

import pytest

from lrngpt.cli.main import main
from lrngpt.corpora.registry import load_corpus
from lrngpt.errors import UserError

datasets = pytest.importorskip("datasets", reason="hf: corpora need datasets (pip install lrngpt[hf])")

WORDS = "Lily Tom saw a red cat dog in the park was happy and said hello to her friend ran".split()


@pytest.fixture(autouse=True)
def _private_hf_cache(tmp_path, monkeypatch):
    """load_dataset's Arrow cache goes to the test's directory, never ~/.cache/huggingface."""
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    assert datasets.config.HF_HUB_OFFLINE  # set in conftest: no test reaches the network


def salad(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(10, 30))) + "." for _ in range(n)]


def saved(tmp_path, name="saved", **splits) -> str:
    """A DatasetDict of {split: list of texts or a column dict} written with save_to_disk."""
    cols = {s: v if isinstance(v, dict) else {"text": v} for s, v in splits.items()}
    dd = datasets.DatasetDict({s: datasets.Dataset.from_dict(c) for s, c in cols.items()})
    dd.save_to_disk(str(tmp_path / name))
    return str(tmp_path / name)


def prepare_cli(spec: str, capsys) -> tuple[int, dict | None, str]:
    code = main(["data", "prepare", "--corpus", spec, "--vocab-size", "300", "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out) if code == 0 else None, err


def test_saved_dataset_dict_uses_its_own_validation_split(tmp_path):
    d = saved(tmp_path, train=["  a train doc ", "", "another"], validation=["a val doc"], test=["a test doc"])
    corpus = load_corpus(f"hf:{d}")
    assert corpus.has_own_split
    assert list(corpus.train_docs()) == ["a train doc", "another"] and list(corpus.val_docs()) == ["a val doc"]
    assert corpus.meta | {"dataset": None} == {"dataset": None, "config": None, "column": "text",
                                              "train_split": "train", "val_split": "validation",
                                              "rows": {"train": 3, "val": 1}, "revision": None,
                                              "streaming": False}
    only_test = load_corpus(f"hf:{saved(tmp_path, 'b', train=['t'], test=['held out'])}")
    assert list(only_test.val_docs()) == ["held out"]


def test_a_named_split_or_a_single_dataset_is_split_by_the_pipeline(tmp_path):
    d = saved(tmp_path, train=["t"], validation=["v1", "v2"])
    corpus = load_corpus(f"hf:{d}::validation")
    assert not corpus.has_own_split and list(corpus.train_docs()) == ["v1", "v2"]
    datasets.Dataset.from_dict({"story": ["only one split"]}).save_to_disk(str(tmp_path / "single"))
    single = load_corpus(f"hf:{tmp_path / 'single'}:::story")
    assert not single.has_own_split and list(single.train_docs()) == ["only one split"]


def test_local_data_files_load_through_load_dataset_with_their_splits(tmp_path):
    files = tmp_path / "files"
    files.mkdir()
    for split, texts in (("train", ["doc one", "doc two"]), ("validation", ["held out"])):
        (files / f"{split}.jsonl").write_text("".join(json.dumps({"body": t}) + "\n" for t in texts))
    corpus = load_corpus(f"hf:{files}:::body")
    assert list(corpus.train_docs()) == ["doc one", "doc two"] and list(corpus.val_docs()) == ["held out"]
    assert list((tmp_path / "hf-cache").iterdir())  # datasets' own cache, here the test's


def test_a_streamed_local_directory_gives_the_same_documents_without_the_arrow_cache(tmp_path):
    files = tmp_path / "files"
    files.mkdir()
    train, val = salad(300), salad(30, seed=1)
    for split, texts in (("train", train), ("validation", val)):
        (files / f"{split}.jsonl").write_text("".join(json.dumps({"body": t}) + "\n" for t in texts))
    streamed = load_corpus(f"hf:{files}:::body?stream")
    assert not list(tmp_path.glob("hf-cache/**/*.arrow"))  # nothing was converted into datasets' cache
    assert list(streamed.train_docs()) == train and list(streamed.val_docs()) == val
    assert streamed.meta["streaming"] and streamed.meta["rows"] == {"train": None, "val": None}
    again = load_corpus(f"hf:{files}:::body?stream")
    assert again.fingerprint == streamed.fingerprint
    (files / "train.jsonl").write_text(json.dumps({"body": "changed"}) + "\n")
    assert load_corpus(f"hf:{files}:::body?stream").fingerprint != streamed.fingerprint  # the files' bytes
    plain = load_corpus(f"hf:{files}:::body")
    assert list(plain.train_docs()) == ["changed"] and not plain.meta["streaming"]
    assert list(tmp_path.glob("hf-cache/**/*.arrow"))  # without ?stream, datasets converts it first
    with pytest.raises(UserError, match="has no column 'text' \\(columns: body\\)"):
        load_corpus(f"hf:{files}?stream")


def test_a_revision_reaches_load_dataset_and_a_hub_stream_needs_one(tmp_path, monkeypatch):
    d = saved(tmp_path, train=["pinned text"], validation=["held out"])
    calls = []

    def fake_load_dataset(name, config=None, revision=None, streaming=False):
        calls.append((name, config, revision, streaming))
        return datasets.load_from_disk(d)  # what the Hub would give at that revision

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    corpus = load_corpus("hf:user/data@abc123:default")
    assert calls == [("user/data", "default", "abc123", False)]
    assert corpus.meta["revision"] == "abc123" and list(corpus.train_docs()) == ["pinned text"]
    load_corpus("hf:user/data@abc123?stream")
    assert calls[-1] == ("user/data", None, "abc123", True)
    for spec, message in (("hf:user/data?stream", "needs a pinned revision, hf:user/data@COMMIT"),
                          (f"hf:{tmp_path}@v1", "a local directory has no revisions"),
                          (f"hf:{d}?stream", "memory-mapped Arrow already; drop ?stream"),
                          ("hf:user/data@abc?fast", "unknown option 'fast'"),
                          ("hf:user/data@", "write a revision as hf:NAME@REV")):
        with pytest.raises(UserError, match=re.escape(message)):
            load_corpus(spec)
    assert len(calls) == 2


def test_prepare_twice_does_the_work_once_and_content_changes_the_fingerprint(tmp_path, capsys):
    d = saved(tmp_path, train=salad(150), validation=salad(20, seed=1))
    code, first, err = prepare_cli(f"hf:{d}", capsys)
    assert code == 0 and "training a 300-token BPE" in err
    assert (first["splits"]["train"]["documents"], first["splits"]["val"]["documents"]) == (150, 20)
    code, second, err = prepare_cli(f"hf:{d}", capsys)
    assert code == 0 and second == first and "data: cached" in err and "encoding" not in err
    fp = load_corpus(f"hf:{d}").fingerprint
    assert load_corpus(f"hf:{saved(tmp_path, 'copy', train=salad(150), validation=salad(20, seed=1))}").fingerprint == fp
    changed = saved(tmp_path, "changed", train=salad(150), validation=salad(20, seed=2))
    assert load_corpus(f"hf:{changed}").fingerprint != fp


def bad_specs(tmp_path):
    d = saved(tmp_path, train=["a", "b"], validation=["c"])
    yield "unknown split", f"hf:{d}::dev", r"has no split 'dev' \(its splits: train, validation\)"
    yield "missing column", f"hf:{d}:::story", \
        r"\(split 'train'\) has no column 'story' \(columns: text\); name the text column"
    ints = saved(tmp_path, "ints", train={"text": [1, 2]})
    yield "non-string column", f"hf:{ints}", r"column 'text' holds Value\('int64'\), not strings"
    nulls = saved(tmp_path, "nulls", train={"text": ["a", "b", None]})
    yield "null row", f"hf:{nulls}", r"row 2 \(from 0\): 'text' is null, not a string"
    empty = saved(tmp_path, "empty", train={"text": []})
    yield "empty saved dataset", f"hf:{empty}", r"split 'train' has no rows"
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "train.jsonl").write_text("")
    yield "empty data file", f"hf:{tmp_path / 'files'}", r"train\.jsonl is empty"
    blank = saved(tmp_path, "blank", train=["", "  "])
    yield "only empty documents", f"hf:{blank}", r"has no documents: every row's 'text' is empty"
    many = saved(tmp_path, "many", a=["x"], b=["y"])
    yield "no train split", f"hf:{many}", r"no 'train' split but a, b; name one"
    yield "config on a saved dataset", f"hf:{d}:wiki", r"written by save_to_disk and has no configs"
    yield "not on the hub, offline", "hf:no-such-user/no-such-dataset", \
        r"hf:no-such-user/no-such-dataset: cannot load the dataset \(.*\); give a Hub dataset name"
    yield "too many parts", "hf:a:b:c:d:e", r"must look like hf:NAME\[@REV\]\[:CONFIG\]\[:SPLIT\]\[:COLUMN\]"


def test_bad_datasets_exit_2_with_one_line_naming_the_problem(tmp_path, capsys):
    cases = list(bad_specs(tmp_path))
    assert len(cases) == 11
    for what, spec, message in cases:
        code, _, err = prepare_cli(spec, capsys)
        errors = [line for line in err.splitlines() if line.startswith("lrn data: error: ")]
        assert code == 2 and len(errors) == 1 and err.endswith(errors[0] + "\n"), (what, err)
        assert re.search(message, errors[0]), (what, errors[0])


def test_without_datasets_it_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(UserError, match=r"pip install datasets.*lrngpt\[hf\]"):
        load_corpus("hf:roneneldan/TinyStories")
