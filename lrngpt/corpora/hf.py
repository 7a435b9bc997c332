"""`hf:NAME[@REV][:CONFIG][:SPLIT][:COLUMN][?stream]`: a Hugging Face dataset, one document per row of
COLUMN (default `text`). NAME is a Hub dataset, a local directory `datasets.load_dataset` reads, or a
`save_to_disk` directory. `?stream` streams the rows instead of converting them into the Arrow cache;
a streamed Hub dataset needs `@REV` (its fingerprint is name and revision). With SPLIT that split is
the corpus; without, `train` trains and its own validation split validates. Needs lrngpt[hf].
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lrngpt.core import log as logging
from lrngpt.corpora.base import Corpus
from lrngpt.corpora.records import BATCH_ROWS, DEFAULT_FIELD, column_texts
from lrngpt.corpora.text import CHUNK_SIZE, find_files, fingerprint_files, walk
from lrngpt.errors import UserError

HF_VALIDATION_SPLITS = ("validation", "valid", "val", "test")  # the first one present validates


def _datasets():
    try:
        # optional: its absence is said in one line
        import datasets
    except ImportError:
        raise UserError("hf: corpora need the datasets package: `pip install datasets` "
                        "(or `pip install lrngpt[hf]`)") from None
    return datasets


def parse_spec(arg: str) -> tuple[str, str | None, str | None, str | None, str, bool]:
    """NAME[@REV][:CONFIG][:SPLIT][:COLUMN][?stream] -> (name, revision, config, split, column, stream);
    a local path that exists as written keeps its '@'."""
    spec, stream, option = arg.partition("?")
    if stream and option != "stream":
        raise UserError(f"hf:{arg}: unknown option {option!r}; the one option is ?stream "
                        "(hf:NAME@REV:CONFIG:SPLIT:COLUMN?stream)")
    parts = spec.split(":")
    if not parts[0].strip() or len(parts) > 4:
        raise UserError(f"hf:{spec} must look like hf:NAME[@REV][:CONFIG][:SPLIT][:COLUMN][?stream], e.g. "
                        "hf:roneneldan/TinyStories or hf:path/to/saved::train:text")
    name, config, split, column = (parts + [""] * 3)[:4]
    revision = None
    if "@" in name and not Path(name).expanduser().exists():
        name, _, revision = name.rpartition("@")
        if not name or not revision:
            raise UserError(f"hf:{parts[0]}: write a revision as hf:NAME@REV (a commit sha, tag or branch)")
    return name, revision, config or None, split or None, column or DEFAULT_FIELD, bool(stream)


def _is_saved(path: Path) -> bool:
    return path.is_dir() and ((path / "dataset_dict.json").is_file() or (path / "state.json").is_file())


DATA_SUFFIXES = (".jsonl", ".json", ".parquet", ".csv", ".tsv", ".txt", ".arrow")


def _refuse_empty_local(path: Path, name: str) -> None:
    """datasets itself crashes (IndexError, StopIteration) on a saved split without rows or an empty
    data file; say which one it is instead."""
    if _is_saved(path):
        dirs = [path] if (path / "state.json").is_file() else [
            path / s for s in json.loads((path / "dataset_dict.json").read_text()).get("splits", [])]
        for d in dirs:
            if (d / "state.json").is_file() and not json.loads((d / "state.json").read_text()).get("_data_files"):
                split = f"split {d.name!r}" if d != path else "it"
                raise UserError(f"hf:{name}: {split} has no rows (save_to_disk wrote no data), which datasets "
                                "cannot load; save the dataset without empty splits")
    elif path.is_dir():
        for f in sorted(walk(path, ("",))):
            if f.name.removesuffix(".gz").endswith(DATA_SUFFIXES) and f.stat().st_size == 0:
                raise UserError(f"hf:{name}: {f.relative_to(path)} is empty, and datasets cannot load an empty "
                                "data file; remove it or give it rows")


def load_splits(name: str, config: str | None, revision: str | None = None, stream: bool = False) -> dict:
    """{split name: datasets.Dataset} of a saved-to-disk directory, a local data directory or a Hub name
    (at `revision`); IterableDatasets with `stream`."""
    datasets = _datasets()
    # OSError covers a missing name or an offline miss (ConnectionError); DatasetsError a file it cannot parse
    errors = (OSError, ValueError, getattr(getattr(datasets, "exceptions", None), "DatasetsError", OSError))
    path = Path(name).expanduser()
    _refuse_empty_local(path, name)
    try:
        if _is_saved(path):
            if config:
                raise UserError(f"hf:{name} was written by save_to_disk and has no configs; drop {config!r} "
                                f"(hf:{name}::SPLIT:COLUMN)")
            if stream:
                raise UserError(f"hf:{name} was written by save_to_disk: it is memory-mapped Arrow already; "
                                "drop ?stream")
            with logging.third_party_bars():  # datasets' bars only where lrn's show (not with -q)
                loaded = datasets.load_from_disk(str(path))
        else:
            local = path.is_dir()
            if local and revision:
                raise UserError(f"hf:{name}@{revision}: a local directory has no revisions; drop @{revision}")
            if stream and not local and not revision:
                raise UserError(f"hf:{name}?stream: a streamed Hub dataset needs a pinned revision, "
                                f"hf:{name}@COMMIT...?stream, so that its token cache stays true")
            with logging.third_party_bars():
                loaded = datasets.load_dataset(str(path) if local else name, config, revision=revision,
                                               streaming=stream)
    except errors as e:
        cause = e.__cause__ or e  # DatasetGenerationError says what failed in its cause
        detail = (str(cause).strip().splitlines() or [""])[0][:300]
        raise UserError(f"hf:{name}: cannot load the dataset ({type(cause).__name__}: {detail}); give a Hub "
                        "dataset name (and its config), a local data directory or a save_to_disk directory; "
                        "offline (HF_DATASETS_OFFLINE=1) only cached datasets load") from None
    if isinstance(loaded, datasets.DatasetDict | datasets.IterableDatasetDict):
        return dict(loaded)
    return {"train": loaded}


def choose_splits(splits: dict, split: str | None, spec: str) -> tuple[str, str | None]:
    """(training split, own validation split or None)."""
    names = ", ".join(splits) or "none"
    if split is not None:
        if split not in splits:
            raise UserError(f"{spec}: the dataset has no split {split!r} (its splits: {names})")
        return split, None
    if "train" in splits:
        return "train", next((s for s in HF_VALIDATION_SPLITS if s in splits), None)
    if len(splits) == 1:
        return next(iter(splits)), None
    raise UserError(f"{spec}: the dataset has no 'train' split but {names}; name one with hf:NAME:CONFIG:SPLIT")


def _check_column(ds, column: str, where: str) -> None:
    datasets = _datasets()
    streamed = isinstance(ds, datasets.IterableDataset)
    first = next(iter(ds.take(1)), None) if streamed else None  # a stream's columns: its first row's
    if (first is None) if streamed else (ds.num_rows == 0):
        raise UserError(f"{where} has no rows; choose another split or dataset")
    columns = list(first or ()) if streamed else ds.column_names
    if column not in columns:
        raise UserError(f"{where} has no column {column!r} (columns: {', '.join(columns)}); "
                        "name the text column with hf:NAME:CONFIG:SPLIT:COLUMN")
    feature = None if streamed else ds.features[column]
    if feature is not None and not (isinstance(feature, datasets.Value)
                                    and feature.dtype in ("string", "large_string")):
        raise UserError(f"{where}: column {column!r} holds {feature}, not strings; name a text column "
                        "with hf:NAME:CONFIG:SPLIT:COLUMN")


def documents(ds, column: str, where: str) -> Iterator[str]:
    """The column's strings, a batch of rows at a time (Arrow, memory-mapped), stripped, empty dropped."""
    batches = ds.select_columns([column]).iter(batch_size=BATCH_ROWS)
    return column_texts((batch[column] for batch in batches), where, column)


def fingerprint(parts: list[tuple[str, Any]], column: str) -> str:
    """sha256 over the column name and, per role (train/val), the bytes of the split's Arrow files."""
    h = hashlib.sha256(f"hf\0{column}\0".encode())
    for role, ds in parts:
        h.update(f"{role}\0{ds.num_rows}\0".encode())
        for name in (f["filename"] for f in ds.cache_files):  # (load_dataset and load_from_disk write them)
            with open(name, "rb") as f:
                while block := f.read(CHUNK_SIZE):
                    h.update(block)
    return h.hexdigest()


def stream_fingerprint(name: str, revision: str | None, config: str | None, roles: dict, column: str) -> str:
    """A stream has no Arrow files: a Hub one is named by its pinned revision, a local one hashed by its files."""
    key = json.dumps({"hf-stream": name, "revision": revision, "config": config, "splits": roles,
                      "column": column}, sort_keys=True)
    path = Path(name).expanduser()
    if path.is_dir():  # every file, named relative to it
        return fingerprint_files(key, find_files([path], ("",)))
    return hashlib.sha256(key.encode()).hexdigest()


def hf_corpus(arg: str) -> Corpus:
    """The corpus for `hf:NAME[@REV][:CONFIG][:SPLIT][:COLUMN][?stream]`."""
    spec = f"hf:{arg}"
    name, revision, config, split, column, stream = parse_spec(arg)
    splits = load_splits(name, config, revision, stream)
    roles = dict(zip(("train", "val"), choose_splits(splits, split, spec), strict=True))
    parts = [(role, splits[s]) for role, s in roles.items() if s is not None]
    where = {role: f"{spec} (split {s!r})" for role, s in roles.items()}
    for role, ds in parts:
        _check_column(ds, column, where[role])
    docs = {role: lambda ds=ds, role=role: documents(ds, column, where[role]) for role, ds in parts}
    if next(docs["train"](), None) is None:
        raise UserError(f"{where['train']} has no documents: every row's {column!r} is empty")
    return Corpus(
        spec=spec, kind="hf", fingerprint=stream_fingerprint(name, revision, config, roles, column) if stream
        else fingerprint(parts, column),
        train_docs=docs["train"], val_docs=docs.get("val"),
        meta={"dataset": name, "revision": revision, "config": config, "column": column,
              "train_split": roles["train"], "val_split": roles["val"], "streaming": stream,
              "rows": {role: getattr(ds, "num_rows", None) for role, ds in parts}},  # a stream: unknown
    )
