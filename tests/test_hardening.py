"""Bad input of every kind exits 2 with one line that says what and how to fix; nothing a user
owns is lost; work is bounded. In-process through `lrngpt.cli.main.main` (fast), table-driven."""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import shutil
import time
from pathlib import Path

import pytest
import torch

from lrngpt.cli.main import main
from lrngpt.models.gpt import GPTConfig
from lrngpt.models.mlp import MLPConfig
from lrngpt.runconfig.schema import DataConfig, TrainConfig, load_config
from lrngpt.runconfig.values import DERIVED
from lrngpt.store.rundir import RunDir
from tests.cli_run import lrn, sigterm_after

# ---- helpers ---------------------------------------------------------------------------------


def assert_exit_2(result, needle: str | tuple[str, ...] = "") -> str:
    """Exit 2, one line on stderr, holding the needle (or one of them)."""
    code, _, err = result
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err and "unexpected" not in err, (code, err)
    needles = (needle,) if isinstance(needle, str) else needle
    assert any(n.lower() in lines[0].lower() for n in needles), lines[0]
    return lines[0]


def deny(monkeypatch, target, name: str, path: Path, exc=PermissionError):
    """Make `target.name` (a module's `open` falls back to the builtin) raise as the OS does (errno,
    message, the path) when it touches `path` or its temporary files: tests may run as root, where
    chmod does not stop a read or a write."""
    import builtins

    real = getattr(target, name, None) or getattr(builtins, name)

    def fake(*args, **kwargs):
        touched = [a for a in args if isinstance(a, str | os.PathLike)]
        if any(str(path) == str(a) or str(a).startswith(str(path) + os.sep) or
               (Path(a).name.startswith(f".{path.name}.tmp-") and Path(a).parent == path.parent) for a in touched):
            code = errno.EACCES if exc is PermissionError else errno.EROFS
            raise exc(code, os.strerror(code), str(touched[0]))
        return real(*args, **kwargs)

    monkeypatch.setattr(target, name, fake, raising=False)


TINY = ["data.corpus=stories:300KB", "data.vocab_size=1024", "train.device=cpu", "train.steps=6",
        "train.eval_every=3", "train.log_every=3", "train.eval_tokens=2000", "train.train_eval_tokens=2000"]


@pytest.fixture(scope="module")
def base_run(tmp_path_factory):
    """An mlp-tiny run on the stories corpus, stopped at step 3 of 6: every run file, resumable."""
    from lrngpt.training.trainer import train_run

    run = tmp_path_factory.mktemp("base") / "run"
    train_run(load_config("mlp-tiny", TINY), run, stop_at=3, progress=False, log=lambda m: None)
    return run


@pytest.fixture
def run_copy(base_run, tmp_path):
    def make(name: str = "run") -> Path:
        return Path(shutil.copytree(base_run, tmp_path / name))
    return make


# ---- 1. every --set key of both model types --------------------------------------------------

# Raw --set values (JSON where it parses, else a string), each wrong for most keys
FUZZ = ["NaN", "Infinity", "-Infinity", "1e400", "-1", "0", "2.5", "1e30", "99999999999999999999999",
        "-99999999999999999999999", "abc", '""', "true", "null", "[1]", '{"a": 1}']
BIG_FLOATS = {"2.5", "1e30", "99999999999999999999999"}  # finite and positive: a valid float
# The values of FUZZ that are legitimately valid for a key (every other one must exit 2)
VALID = {
    "data.split_seed": {"-1", "0"}, "data.train_tokens": {"null"},
    "train.seq_len@gpt": {"null"}, "train.lr": BIG_FLOATS, "train.min_lr": {"0"}, "train.warmup_steps": {"0"},
    "train.weight_decay": {"0"} | BIG_FLOATS, "train.grad_clip": {"0"} | BIG_FLOATS,
    "train.beta1": {"0"}, "train.beta2": {"0"}, "train.eval_tokens": {"null"}, "train.train_eval_tokens": {"0"},
    "train.seed": {"-1", "0"}, "train.compile": {"true"}, "train.tf32": {"true"}, "train.save_every": {"0"},
    "train.tensorboard": {"true"}, "train.max_days": {"0"} | BIG_FLOATS,
    "model.emb_init_std": {"null"} | BIG_FLOATS,
    "model.dropout": {"0"}, "model.qkv_bias": {"true"}, "model.tie_embeddings": {"true"}, "model.bias": {"true"},
    "model.init_std": BIG_FLOATS, "model.layer_norm_eps": BIG_FLOATS,
    "model.aspect_ratio": {"null"}, "model.head_dim": {"null"},  # null: not used / n_embd / n_head
    "name": {"abc", '""'},
}


def _keys():
    for preset, model_cls in (("mlp-tiny", MLPConfig), ("gpt-default", GPTConfig)):
        for section, cls in (("data", DataConfig), ("train", TrainConfig), ("model", model_cls)):
            for f in dataclasses.fields(cls):
                yield preset, f"{section}.{f.name}"
        for key in ("model_type", "name"):
            yield preset, key


KEYS = list(_keys())


def test_the_fuzz_table_covers_every_field_of_every_config_class():
    fields = {f"{s}.{f.name}" for s, c in (("data", DataConfig), ("train", TrainConfig), ("model", MLPConfig),
                                         ("model", GPTConfig)) for f in dataclasses.fields(c)}
    assert fields <= {k for _, k in KEYS}
    assert len(KEYS) * len(FUZZ) > 1000


@pytest.mark.parametrize("preset,key", KEYS, ids=[f"{p}:{k}" for p, k in KEYS])
def test_every_set_key_refuses_wrong_types_nan_infinities_negatives_and_huge_values_with_one_line(
        preset, key, capsys):
    valid = VALID.get(f"{key}@{preset.split('-')[0]}", VALID.get(key, set()))
    if key in DERIVED:
        valid = set()
    wrong = []
    for value in FUZZ:
        code, out, err = lrn(capsys, "train", "--config", preset, "--set", f"{key}={value}", "--dry-run", "--json")
        lines = err.strip().splitlines()
        if value in valid:
            if code != 0:
                wrong.append(f"{key}={value}: valid, but exit {code}: {err.strip()}")
            else:
                json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in --json output"))
        elif code != 2 or len(lines) != 1 or "unexpected" in err:
            wrong.append(f"{key}={value}: exit {code}, stderr {lines}")
    assert wrong == []


# ---- 2. malformed files to every command that reads them ------------------------------------

def _json_edit(name: str, change):
    def edit(d: Path):
        doc = json.loads((d / name).read_text())
        change(doc)
        (d / name).write_text(json.dumps(doc))
    return edit


def _ckpt_edit(change, which: str = "ckpt_last.pt"):
    def edit(d: Path):
        ckpt = torch.load(d / which, weights_only=True)
        change(ckpt)
        torch.save(ckpt, d / which)
    return edit


def _write(name: str, data):
    def edit(d: Path):
        (d / name).write_bytes(data if isinstance(data, bytes) else data.encode())
    return edit


def _set(key, value):
    return lambda doc: doc.__setitem__(key, value)


def _del(key):
    return lambda doc: doc.pop(key)


def _with_model(change):
    return lambda doc: change(doc["model"])


RUN_FILE_CASES = {
    "config not JSON": (_write("config.json", "{broken"), "not valid JSON"),
    "config a list": (_write("config.json", "[1, 2]"), "must hold a JSON object"),
    "config not UTF-8": (_write("config.json", b"\xff\xfe{}"), "not UTF-8"),
    "config model null": (_json_edit("config.json", _set("model", None)), "section 'model' must be an object"),
    "config data a string": (_json_edit("config.json", _set("data", "str")), "section 'data' must be an object"),
    "config train a string": (_json_edit("config.json", _set("train", "fast")), "section 'train'"),
    "config n_embd NaN": (_json_edit("config.json", _with_model(_set("n_embd", float("nan")))), "model.n_embd"),
    "config another model": (_json_edit("config.json", _with_model(_set("n_embd", 32))),
                             ("does not belong", "model config changed")),
    "summary not JSON": (_write("summary.json", "{"), "not valid JSON"),
    "summary a list": (_write("summary.json", "[]"), "must hold a JSON object"),
    "summary without params": (_json_edit("summary.json", _del("params")), "no 'params'"),
    "summary val_bpb a string": (_json_edit("summary.json", _set("val_bpb", "x")), "val_bpb"),
    "checkpoint truncated": (lambda d: (d / "ckpt_last.pt").write_bytes((d / "ckpt_last.pt").read_bytes()[:999]),
                             "truncated or corrupted"),
    "checkpoint without step": (_ckpt_edit(_del("step")), "has no 'step'"),
    "checkpoint without tokenizer": (_ckpt_edit(_del("tokenizer")), "has no 'tokenizer'"),
    "checkpoint tokenizer junk": (_ckpt_edit(_set("tokenizer", "not json")), "not a valid tokenizer"),
    "checkpoint model a list": (_ckpt_edit(_set("model", [1, 2])), "model must map"),
    "checkpoint config model null": (_ckpt_edit(lambda c: c["config"].__setitem__("model", None)),
                                     "its config is not valid"),
    "checkpoint a directory": (lambda d: ((d / "ckpt_last.pt").unlink(), (d / "ckpt_last.pt").mkdir()),
                               "is a directory"),
}
METRICS_CASES = {
    "metrics line a bare number": (_write("metrics.jsonl", '5\n{"step": 1, "loss": 2.0}\n'), "is a number"),
    "metrics loss a string": (_write("metrics.jsonl", '{"step": 1, "loss": "x"}\n{"step": 2}\n'), "loss"),
    "metrics broken line mid-file": (_write("metrics.jsonl", '{"step": 1, \n{"step": 2}\n'), "not JSON"),
    "metrics step missing": (_write("metrics.jsonl", '{"loss": 1.0}\n{"step": 2}\n'), "step"),
}
RESUME_CASES = {
    "checkpoint optimizer damaged": (_ckpt_edit(_set("optimizer", {"state": 5, "param_groups": 3})),
                                     "cannot be resumed"),
    "checkpoint rng damaged": (_ckpt_edit(_set("rng", {"torch": "x", "sampler": "y"})), "cannot be resumed"),
}
# (command, the files it reads)
READERS = {
    "eval": (["eval", "{d}", "--max-tokens", "200"], {"config", "summary", "checkpoint"}),
    "sample": (["sample", "{d}", "--prompt", "Lily", "--max-new-tokens", "3"], {"config", "checkpoint"}),
    "embed neighbors": (["embed", "neighbors", "{d}", "--token", " Lily"], {"config", "checkpoint"}),
    "embed axes": (["embed", "axes", "{d}"], {"config", "checkpoint"}),
    "embed purity": (["embed", "purity", "{d}"], {"config", "checkpoint"}),
    "report": (["report", "{d}", "--out", "{d}.html"], {"config", "summary", "checkpoint", "metrics"}),
    "embed export": (["-q", "embed", "export", "{d}", "--out", "{d}-export"], {"config", "checkpoint"}),
    "embed explore": (["-q", "embed", "explore", "{d}", "--out", "{d}-explorer.html"],
                      {"config", "summary", "checkpoint", "metrics"}),
    "lesson softmax-bottleneck": (["-q", "lesson", "softmax-bottleneck", "{d}", "--contexts", "64"], {"config", "checkpoint"}),
    "lesson renumber": (["-q", "lesson", "renumber", "{d}", "--max-tokens", "500"], {"config", "checkpoint"}),
    "train --resume": (["train", "--resume", "--out", "{d}"], {"config", "summary", "checkpoint", "metrics", "resume"}),
}


# A resume takes its tokenizer from the prepared data (the hash must match), not from the checkpoint,
# and writes the next checkpoint whole: a junk tokenizer string there is never read
NOT_READ = {("train --resume", "checkpoint tokenizer junk")}


def _file_cases():
    for command, (_, reads) in READERS.items():
        cases = {**RUN_FILE_CASES, **METRICS_CASES, **RESUME_CASES}
        for case in cases:
            kind = ("metrics" if case in METRICS_CASES else "resume" if case in RESUME_CASES
                    else case.split()[0])
            if kind in reads and (command, case) not in NOT_READ:
                yield command, case


FILE_CASES = list(_file_cases())


def test_every_reader_succeeds_on_the_intact_run(run_copy, capsys):
    for command, (argv, _) in READERS.items():
        d = run_copy(command.replace(" ", "-"))
        code, _, err = lrn(capsys, *(a.format(d=d) for a in argv))
        assert code == 0, (command, err)


@pytest.mark.parametrize("command,case", FILE_CASES, ids=[f"{c}:{k}" for c, k in FILE_CASES])
def test_a_malformed_run_file_exits_2_with_one_line_naming_it(run_copy, capsys, command, case):
    edit, needle = {**RUN_FILE_CASES, **METRICS_CASES, **RESUME_CASES}[case]
    d = run_copy()
    edit(d)
    argv = READERS[command][0]
    assert_exit_2(lrn(capsys, *(a.format(d=d) for a in argv)), needle)


# ckpt_init.pt, the untrained reference: a run without one (an imported model) is answered
# without it; a damaged one is an error like any damaged checkpoint, never a silent "no reference"
INIT_READERS = {  # -q: their progress lines (the prepared data found in the cache) are not the point here
    "embed purity": ["-q", "embed", "purity", "{d}"],
    "embed axes": ["-q", "embed", "axes", "{d}"],
    "embed export": ["-q", "embed", "export", "{d}", "--out", "{d}-export", "--format", "projector"],
    "embed explore": ["-q", "embed", "explore", "{d}", "--out", "{d}-explorer.html"],
    "report": ["-q", "report", "{d}", "--out", "{d}.html"],
}


@pytest.mark.parametrize("command", INIT_READERS)
def test_a_damaged_ckpt_init_is_named_and_a_missing_one_is_left_out(run_copy, capsys, command):
    argv = INIT_READERS[command]
    d = run_copy("damaged")
    (d / "ckpt_init.pt").write_bytes((d / "ckpt_init.pt").read_bytes()[:999])
    line = assert_exit_2(lrn(capsys, *(a.format(d=d) for a in argv)), "truncated or corrupted")
    assert "ckpt_init.pt" in line
    d = run_copy("missing")
    (d / "ckpt_init.pt").unlink()
    code, _, err = lrn(capsys, *(a.format(d=d) for a in argv))
    assert code == 0, err


BAD_CONFIG_FILES = {
    "not JSON": ("{", "not valid JSON"), "a list": ("[1]", "must hold a JSON object"),
    "not UTF-8": (b"\xff\xfe{}", "not UTF-8"), "model null": ('{"model": null}', "section 'model'"),
    "data a list": ('{"data": [1, 2]}', "section 'data'"), "train a string": ('{"train": "fast"}', "section 'train'"),
    "unknown section": ('{"optim": {}}', "unknown config section"), "model_type a number": ('{"model_type": 5}', "model_type"),
    "name a list": ('{"name": [1]}', "name must be a string"),
    "gpt without context": ('{"model_type": "gpt", "model": {"n_embd": 64}}', "model.context_length is required"),
    "seed beyond 64 bits": ('{"train": {"seed": 1e30}}', "64 bits"),
    "grad_clip NaN": ('{"train": {"grad_clip": NaN}}', "finite"),
}


@pytest.mark.parametrize("case", BAD_CONFIG_FILES)
def test_a_malformed_config_file_exits_2_naming_the_file(case, tmp_path, capsys):
    text, needle = BAD_CONFIG_FILES[case]
    path = tmp_path / "bad.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    line = assert_exit_2(lrn(capsys, "train", "--config", path, "--dry-run"), needle)
    assert "bad.json" in line
    assert_exit_2(lrn(capsys, "train", "--config", tmp_path, "--dry-run"), "is a directory")


@pytest.fixture(scope="module")
def base_sweep(tmp_path_factory):
    """A finished one-point sweep, its file, and what `lrn sweep` was given."""
    d = tmp_path_factory.mktemp("sweep")
    cfg = load_config("mlp-tiny", [*TINY, "train.steps=3"]).to_dict()
    spec = d / "grid.json"
    spec.write_text(json.dumps({"base": cfg, "axes": {"model.n_embd": [16]}, "scale": "full"}))
    code = main(["-q", "sweep", str(spec), "--out", str(d / "out")])
    assert code == 0
    return spec, d / "out"


SWEEP_FILES = {
    "not JSON": ("{", "not valid JSON"), "a list": ("[1]", "must hold a JSON object"),
    "base data null": ({"base": {"data": None}, "axes": {"model.n_embd": [8]}}, "base: config section 'data'"),
    "scale a list": ({"axes": {"model.n_embd": [8]}, "scale": ["tiny"]}, "scale must be a string"),
    "study a list": ({"axes": {"model.n_embd": [8]}, "study": ["x"]}, "study must be a string"),
    "axes a number": ({"axes": 5}, "axes must be an object"),
    "axis values a number": ({"axes": {"model.n_embd": 8}}, "axis model.n_embd has no values"),
    "set a list": ({"set": [1], "axes": {"model.n_embd": [8]}}, "set must be an object"),
    "unknown key": ({"axis": {}}, "unknown key 'axis'"),
    "bad axis value": ({"axes": {"model.n_embd": [8, "NaN"]}}, "model.n_embd"),
}


@pytest.mark.parametrize("case", SWEEP_FILES)
def test_a_malformed_sweep_file_exits_2_with_one_line(case, tmp_path, capsys):
    doc, needle = SWEEP_FILES[case]
    path = tmp_path / "s.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    assert_exit_2(lrn(capsys, "sweep", path, "--out", tmp_path / "out", "--dry-run"), needle)


SWEEP_DIR_CASES = {
    "sweep.json a list": (lambda d: (d / "sweep.json").write_text("[]"), "must hold a JSON object"),
    "sweep.json points a number": (_json_edit("sweep.json", _set("points", 5)), "points must be a list"),
    "sweep.json point outside runs/": (
        _json_edit("sweep.json", lambda doc: doc["points"][0].__setitem__("name", "../../x")), "points[0]"),
    "a point's config.json broken": (lambda d: next((d / "runs").iterdir()).joinpath("config.json").write_text("{"),
                                     "config.json is not valid JSON"),
    "a point's summary.json without params": (
        lambda d: _json_edit("summary.json", _del("params"))(next((d / "runs").iterdir())), "no 'params'"),
    "a point's metrics.jsonl line a number": (
        lambda d: next((d / "runs").iterdir()).joinpath("metrics.jsonl").write_text('7\n{"step": 1}\n'), "is a number"),
}
SWEEP_READERS = {
    "sweep": ["sweep", "{spec}", "--out", "{d}"],
    "sweep --summary-only": ["sweep", "{spec}", "--out", "{d}", "--summary-only"],
    "report": ["report", "{d}"],
}


@pytest.mark.parametrize("command", SWEEP_READERS)
@pytest.mark.parametrize("case", SWEEP_DIR_CASES)
def test_a_damaged_sweep_directory_exits_2_with_one_line(base_sweep, tmp_path, capsys, command, case):
    spec, out = base_sweep
    edit, needle = SWEEP_DIR_CASES[case]
    d = Path(shutil.copytree(out, tmp_path / "copy"))
    edit(d)
    assert_exit_2(lrn(capsys, *(a.format(spec=spec, d=d) for a in SWEEP_READERS[command])), needle)


def test_the_intact_sweep_directory_reads_with_exit_0(base_sweep, tmp_path, capsys):
    spec, out = base_sweep
    d = Path(shutil.copytree(out, tmp_path / "copy"))
    for argv in SWEEP_READERS.values():
        code, _, err = lrn(capsys, "-q", *(a.format(spec=spec, d=d) for a in argv))
        assert code == 0, err
    assert lrn(capsys, "cost", "mlp", "--sweep", d)[0] == 0


@pytest.mark.parametrize("content,needle", [
    ("{", "not valid JSON"), (b"\xff", "not UTF-8"), ('{"rows": 5}', "no rows with both"),
    ('[{"n_embd": "x"}]', "no rows with both"),
])
def test_cost_mlp_sweep_with_a_malformed_summary_exits_2(tmp_path, capsys, content, needle):
    (tmp_path / "summary.json").write_bytes(content if isinstance(content, bytes) else content.encode())
    assert_exit_2(lrn(capsys, "cost", "mlp", "--sweep", tmp_path), needle)


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    out = tmp_path_factory.mktemp("prep") / "data"
    assert main(["-q", "data", "prepare", "--corpus", "stories:100KB", "--vocab-size", "300", "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("edit,needle", [
    (_write("meta.json", "{"), "(meta.json)"),
    (_json_edit("meta.json", _del("corpus")), "(meta.json)"),
    (_json_edit("meta.json", _set("splits", 5)), "(meta.json)"),
    (lambda d: (d / "train.bin").write_bytes((d / "train.bin").read_bytes()[:101]), "(train.bin)"),
], ids=["meta not JSON", "meta without corpus", "meta splits a number", "train.bin truncated"])
def test_data_prepare_out_with_changed_files_exits_2_with_or_without_force(prepared, tmp_path, capsys, edit, needle):
    """A prepared directory whose files changed since lrn wrote them is not lrn's to replace (its
    record, .lrn-output, says so), damaged or edited alike; once it is gone, prepare writes it afresh."""
    d = Path(shutil.copytree(prepared, tmp_path / "data"))
    edit(d)
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    argv = ["data", "prepare", "--corpus", "stories:100KB", "--vocab-size", "300", "--out", d]
    for force in ([], ["--force"]):
        assert_exit_2(lrn(capsys, "-q", *argv, *force), "changed since lrn wrote it " + needle)
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before
    shutil.rmtree(d)
    assert lrn(capsys, "-q", *argv)[0] == 0


def test_a_damaged_cache_entry_is_rebuilt_not_blamed_on_the_user(capsys, tmp_path):
    from lrngpt.data.prepared import prepare
    from lrngpt.runconfig.schema import DataConfig

    cfg = DataConfig(corpus="stories:50KB:7", vocab_size=300)
    first = prepare(cfg, log=lambda m: None)
    meta = json.loads((first.dir / "meta.json").read_text())
    del meta["corpus"]
    (first.dir / "meta.json").write_text(json.dumps(meta))
    again = prepare(cfg, log=lambda m: None)
    assert again.dir == first.dir and again.meta["corpus"] == "stories:50KB:7"


def test_a_corrupt_gzip_corpus_is_named(tmp_path, capsys):
    import gzip

    good = gzip.compress(b"Lily saw a cat. " * 200)
    (tmp_path / "cut.txt.gz").write_bytes(good[: len(good) // 2])
    (tmp_path / "plain.txt.gz").write_text("not gzip at all")
    for name in ("cut.txt.gz", "plain.txt.gz"):
        # -q: a file cut short is found where the stream ends, after the progress lines of the work so far
        line = assert_exit_2(lrn(capsys, "-q", "data", "prepare", "--corpus", f"text:{tmp_path / name}",
                                 "--vocab-size", 300, "--out", tmp_path / "p"), "not a valid gzip file")
        assert name in line
    assert not (tmp_path / "p").exists()


# ---- wrong advice, hangs, integrity ----------------------------------------------------------

@pytest.mark.parametrize("command", [["eval", "{d}"], ["sample", "{d}", "--prompt", "hi"]])
def test_an_unknown_device_is_named_as_such(base_run, capsys, command):
    line = assert_exit_2(lrn(capsys, *(a.format(d=base_run) for a in command), "--device", "foo"), "unknown device")
    assert "corrupt" not in line


def test_an_unreadable_checkpoint_says_permission_not_corruption(base_run, capsys, monkeypatch):
    deny(monkeypatch, torch, "load", base_run / "ckpt_last.pt")
    for argv in (["eval", base_run], ["sample", base_run, "--prompt", "hi"], ["embed", "axes", base_run]):
        line = assert_exit_2(lrn(capsys, *argv), "permission denied")
        assert "ckpt_last.pt" in line and "corrupt" not in line


def test_cost_gpt_with_a_huge_width_returns_at_once(capsys):
    t0 = time.process_time()  # CPU time (here and below): the work done, not how busy the machine is
    code, out, _ = lrn(capsys, "cost", "gpt", "--vocab", 100, "--context", 10, "--n-embd", 10**12, "--heads", 7)
    assert code == 0 and "169 in all" in out
    assert_exit_2(lrn(capsys, "cost", "gpt", "--vocab", 100, "--context", 10, "--n-embd", 10**30), "above the limit")
    assert time.process_time() - t0 < 5


def test_head_count_advice_is_bounded_for_any_width(capsys):
    t0 = time.process_time()
    line = assert_exit_2(lrn(capsys, "train", "--config", "gpt-default", "--set", "model.n_embd=16777215",
                             "--set", "model.n_head=2", "--dry-run"), "valid head counts for 16777215")
    assert line.count(",") <= 12 and "in all" in line
    assert_exit_2(lrn(capsys, "train", "--config", "gpt-default", "--set", "model.n_embd=1e30", "--dry-run"), "64 bits")
    assert_exit_2(lrn(capsys, "train", "--config", "gpt-default", "--set", f"model.n_embd={2**40}", "--dry-run"),
                  "above the limit")
    assert time.process_time() - t0 < 5


def test_mlp_sampling_feeds_only_the_last_block_and_gives_the_same_tokens(base_run):
    from lrngpt.inference.sample import SamplingConfig, generate
    from lrngpt.store.rundir import load_run

    run = load_run(base_run)
    cfg = SamplingConfig(max_new_tokens=300, seed=3, stop_at_eot=False)
    prompt = run.tokenizer.encode("Once upon a time Lily")
    widths = []
    forward = run.model.forward

    def spy(idx, *args, **kwargs):
        widths.append(idx.size(1))
        return forward(idx, *args, **kwargs)

    run.model.forward = spy
    cropped = generate(run.model, prompt, cfg)
    assert max(widths) == run.config.model.block_size
    whole = generate(run.model, prompt, cfg, crop=False)
    assert max(widths) == len(prompt) + 299  # the uncropped path fed the whole text
    assert cropped == whole and len(cropped) == 300


def test_a_run_stopped_before_its_first_checkpoint_is_started_again_without_force(tmp_path, capsys):
    from lrngpt.core.ownership import write_owned_file
    from lrngpt.store.layout import RUN_FILE

    d = tmp_path / "r"
    run = RunDir(d)
    run.start()  # Ctrl-C during data preparation: the marker only
    run.unlock()
    line = assert_exit_2(lrn(capsys, "train", "--resume", "--out", d), "start it again")
    assert "--force" not in line  # nothing in it to resume or read: a new start replaces it as it is
    config = json.dumps(load_config("mlp-tiny", TINY).to_dict())
    write_owned_file(d / "config.json", config, RUN_FILE)  # stopped after writing its config
    line = assert_exit_2(lrn(capsys, "train", "--resume", "--out", d), "start it again")
    assert "--force" not in line
    code, _, err = lrn(capsys, "train", "--config", "mlp-tiny", *sum((["--set", s] for s in TINY), []), "--out", d)
    assert code == 0, err
    assert (d / "summary.json").exists()


def test_a_checkpoint_from_another_run_is_named(base_run, tmp_path, capsys, run_copy):
    from lrngpt.training.trainer import train_run

    other = tmp_path / "other"
    train_run(load_config("mlp-tiny", [*TINY, "model.n_embd=8", "train.steps=1"]), other, progress=False, log=lambda m: None)
    d = run_copy()
    shutil.copy(other / "ckpt_last.pt", d / "ckpt_last.pt")
    line = assert_exit_2(lrn(capsys, "eval", d), "does not belong to the run")
    assert "model.n_embd is 8, config.json says 16" in line


def test_eval_json_is_strict_with_null_for_nan(base_run, capsys):
    code, out, _ = lrn(capsys, "eval", base_run, "--max-tokens", 1, "--json")
    assert code == 0
    doc = json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in --json output"))
    assert all(v is None or isinstance(v, int | float | str) for v in doc.values())


@pytest.mark.parametrize("argv,needle", [
    (["data", "stories", "--size", "0.5", "--out", "{t}/s.txt"], "must be between 1 byte and"),
    (["data", "stories", "--size", "nan", "--out", "{t}/s.txt"], "must be between 1 byte and"),
    (["data", "stories", "--size", "inf", "--out", "{t}/s.txt"], "GB; write it like 5MB"),
    (["data", "prepare", "--corpus", "stories:nan"], "must be between 1 byte and"),
    (["sample", "{run}", "--prompt", "hi", "--seed", "99999999999999999999999"], "64 bits"),
    (["sample", "{run}", "--prompt", "hi", "--seed", str(2**63 - 2), "--num-samples", "3"], "64 bits"),
    (["theory", "random-cosine", "--seed", "99999999999999999999999"], "64 bits"),
    (["theory", "random-cosine", "--n", "10000000", "--dims", "4"], "pairs"),
    (["lesson", "lookup", "--seed", "-99999999999999999999999"], "64 bits"),
    (["lesson", "lookup", "--batch", "100000", "--length", "100000"], "memory"),
    (["lesson", "tying", "--vocab", "100000000", "--n-embd", "100000"], "memory"),
    (["theory", "jl", "--n", "10", "--eps", "1e-200"], "beyond what a float holds"),
    (["theory", "jl", "--n", "10", "--eps", "nan"], "strictly between 0 and 1"),
    (["train", "--config", "mlp-tiny", "--set", "train.device=foo", "--dry-run"], "train.device"),
    (["train", "--config", "mlp-tiny", "--set", "data.corpus=bogus:x", "--dry-run"], "unknown corpus kind"),
    (["data", "prepare", "--corpus", "stories:10KB", "--val-fraction", "nan"], "val_fraction"),
    (["data", "prepare", "--corpus", "stories:10KB", "--split-seed", str(2**64)], "64 bits"),
    (["embed", "axes", "{run}", "--energy", "nan"], "--energy"),
    (["sample", "{run}", "--prompt", "hi", "--temperature", "nan"], "--temperature"),
    (["sample", "{run}", "--prompt", "hi", "--max-new-tokens", str(10**20)], "above the limit"),
    (["train", "--resume", "--out", "{run}", "--steps", str(10**20)], "64 bits"),
])
def test_bad_values_on_the_command_line_exit_2_with_one_line(base_run, tmp_path, capsys, argv, needle):
    assert_exit_2(lrn(capsys, *(a.format(t=tmp_path, run=base_run) for a in argv)), needle)


def test_large_but_valid_values_answer(base_run, capsys):
    code, out, _ = lrn(capsys, "theory", "fourth-root", "--n", 10**96, "--json")
    assert code == 0 and json.loads(out)["d"] == pytest.approx(1e24)
    code, _, err = lrn(capsys, "theory", "fourth-root", "--n", 10**400, "--json")  # past lrn's 100 digits: one line
    assert code == 2 and "401 digits is past what lrn takes (at most 100 digits)" in err and "Traceback" not in err
    code, out, _ = lrn(capsys, "theory", "jl", "--n", 10, "--eps", "1e-150", "--json")
    assert code == 0 and json.loads(out)["k"] > 1e300
    for argv in (["sample", base_run, "--prompt", "hi", "--seed", -5, "--max-new-tokens", 2],
                 ["lesson", "tying", "--seed", -3], ["theory", "random-cosine", "--n", 8, "--dims", 4, "--seed", -(2**62)]):
        assert lrn(capsys, *argv)[0] == 0


def test_theory_per_width_seeds_draw_as_before_for_seeds_that_fitted():
    from lrngpt.analysis.theory import cosine_pair_stats, random_cosine_stats

    for seed in (0, 7, -3):
        gen = torch.Generator().manual_seed(seed * 1_000_003 + 4)
        x = torch.randn(16, 4, generator=gen)
        assert random_cosine_stats(16, [4], seed=seed)[0]["std"] == cosine_pair_stats(x)["std"]


# ---- GPT-2 import and tokenizers --------------------------------------------------------------

GPT2 = {"model_type": "gpt2", "vocab_size": 300, "n_embd": 8, "n_positions": 16, "n_head": 2, "n_layer": 1}


@pytest.mark.parametrize("change,needle", [
    ({"n_inner": "abc"}, "n_inner"), ({"activation_function": ["gelu"]}, "activation_function"),
    ({"layer_norm_epsilon": float("nan")}, "layer_norm_eps"), ({"initializer_range": 1e400}, "finite"),
    ({"tie_word_embeddings": "yes"}, "tie_word_embeddings"), ({"n_head": 3}, "not divisible"),
    ({"n_embd": 2**40}, "above the limit"), ({"scale_attn_weights": "no"}, "scale_attn_weights"),
], ids=["n_inner", "activation", "eps-nan", "std-inf", "tie", "heads", "huge", "flag"])
def test_import_gpt2_refuses_a_config_with_wrong_types_or_values(tmp_path, capsys, change, needle):
    hf = tmp_path / "hf"
    hf.mkdir()
    (hf / "config.json").write_text(json.dumps({**GPT2, **change}).replace("Infinity", "1e400"))
    line = assert_exit_2(lrn(capsys, "import-gpt2", hf, "--out", tmp_path / "run"), needle)
    assert "config.json" in line
    assert not (tmp_path / "run").exists()


def _word_level_tokenizer(path: Path) -> None:
    from tokenizers import Tokenizer, models

    tok = Tokenizer(models.WordLevel({"<|endoftext|>": 0, "hello": 1, "[UNK]": 2}, unk_token="[UNK]"))
    tok.add_special_tokens(["<|endoftext|>"])
    tok.save(str(path))


def _char_bpe_tokenizer(path: Path) -> None:
    from tokenizers import Tokenizer, models, trainers

    tok = Tokenizer(models.BPE())
    tok.train_from_iterator(["héllo wörld 日本語"] * 10, trainers.BpeTrainer(vocab_size=40, special_tokens=["<|endoftext|>"]))
    tok.save(str(path))


@pytest.mark.parametrize("make,needle", [(_word_level_tokenizer, "WordLevel"), (_char_bpe_tokenizer, "not byte-level")])
def test_a_tokenizer_that_is_not_byte_level_bpe_is_refused(tmp_path, capsys, make, needle):
    make(tmp_path / "tokenizer.json")
    line = assert_exit_2(lrn(capsys, "tokenizer", "encode", "--tokenizer", tmp_path, "--text", "hello"), needle)
    assert "tokenizer.json" in line


# ---- outputs: never lose what a user owns ----------------------------------------------------

WRITERS = {
    "train": ["train", "--config", "mlp-tiny", "--set", "data.corpus=stories:100KB", "--set", "data.vocab_size=300",
              "--set", "train.steps=1", "--out", "{out}"],
    "data prepare": ["data", "prepare", "--corpus", "stories:100KB", "--vocab-size", "300", "--out", "{out}"],
    "sweep": ["sweep", "embed-dim", "--scale", "tiny", "--axis", "model.n_embd=8", "--out", "{out}"],
    "demo": ["demo", "--steps", "1", "--out", "{out}"],
    "tokenizer train": ["tokenizer", "train", "--corpus", "stories:100KB", "--vocab-size", "300", "--out", "{out}"],
    "import-gpt2": ["import-gpt2", "{t}/hf", "--out", "{out}"],
    "embed export": ["embed", "export", "{run}", "--out", "{out}"],
}
FILE_WRITERS = {
    "data stories": ["data", "stories", "--size", "1KB", "--out", "{out}"],
    "report": ["report", "{run}", "--out", "{out}"],
    "embed explore": ["embed", "explore", "{run}", "--out", "{out}"],
}


@pytest.mark.parametrize("command", [*WRITERS, *FILE_WRITERS])
def test_an_output_path_of_the_wrong_kind_or_a_broken_link_is_refused_before_any_work(
        command, base_run, tmp_path, capsys):
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "config.json").write_text(json.dumps(GPT2))
    (tmp_path / "a-file").write_text("mine")
    (tmp_path / "a-dir").mkdir()
    (tmp_path / "a-dir" / "mine.txt").write_text("mine")
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    argv = {**WRITERS, **FILE_WRITERS}[command]
    wrong = "a-dir" if command in FILE_WRITERS else "a-file"
    cases = {wrong: "is a directory" if command in FILE_WRITERS else "is not a directory", "link": "link",
             "a-file/under": "not a directory"}
    if command in FILE_WRITERS:
        cases["."] = "is a directory"
    extra = ["--force"] if command in FILE_WRITERS and command not in ("report", "embed explore") else []  # (these
    # two replace only their own earlier page, always: they have no --force)
    for out, needle in cases.items():
        assert_exit_2(lrn(capsys, *(a.format(out=tmp_path / out if out != "." else ".", t=tmp_path, run=base_run)
                                    for a in argv), *extra), needle)
    assert (tmp_path / "a-file").read_text() == "mine" and (tmp_path / "a-dir" / "mine.txt").read_text() == "mine"
    assert not (tmp_path / "nowhere").exists()


def test_data_prepare_force_never_replaces_a_users_files(tmp_path, capsys, monkeypatch):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("precious")
    argv = ["data", "prepare", "--corpus", "stories:100KB", "--vocab-size", 300, "--force", "--out"]
    assert_exit_2(lrn(capsys, *argv, mine), "lrn did not write (notes.txt)")
    assert (mine / "notes.txt").read_text() == "precious"
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    assert_exit_2(lrn(capsys, *argv, "."), "current directory")
    assert_exit_2(lrn(capsys, *argv, ".."), "current directory")
    assert empty.is_dir() and (mine / "notes.txt").read_text() == "precious"


def test_permission_errors_on_a_users_paths_name_the_path(base_run, tmp_path, capsys, monkeypatch, run_copy):
    import pathlib

    import lrngpt.core.fsio as fsio
    import lrngpt.corpora.text as text_corpus

    config = tmp_path / "cfg.json"
    config.write_text(json.dumps(load_config("mlp-tiny", TINY).to_dict()))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Lily saw a cat. " * 100)
    run = run_copy()
    with monkeypatch.context() as m:
        deny(m, pathlib.Path, "read_text", config)
        assert_exit_2(lrn(capsys, "train", "--config", config, "--dry-run"), "permission denied")
    with monkeypatch.context() as m:
        deny(m, text_corpus, "open", corpus)
        assert_exit_2(lrn(capsys, "data", "prepare", "--corpus", f"text:{corpus}", "--vocab-size", 300,
                          "--out", tmp_path / "p"), "permission denied")
    with monkeypatch.context() as m:
        deny(m, pathlib.Path, "read_bytes", run / "metrics.jsonl")  # (read as bytes: lrngpt.core.fsio.read_regular)
        assert_exit_2(lrn(capsys, "report", run), "permission denied")
    with monkeypatch.context() as m:
        deny(m, pathlib.Path, "read_bytes", run / "tokenizer.json")
        assert_exit_2(lrn(capsys, "tokenizer", "encode", "--tokenizer", run, "--text", "hi"), "permission denied")
    ro = tmp_path / "ro"
    ro.mkdir()
    with monkeypatch.context() as m:  # a read-only output directory: the temporary file cannot be created
        deny(m, fsio, "open", ro / "s.txt")
        line = assert_exit_2(lrn(capsys, "data", "stories", "--size", "1KB", "--out", ro / "s.txt"), "permission denied")
        assert str(ro / "s.txt") in line
    with monkeypatch.context() as m:
        deny(m, fsio, "open", run / "report.html", exc=OSError)
        assert_exit_2(lrn(capsys, "report", run), "read-only file system")
    with monkeypatch.context() as m:
        deny(m, pathlib.Path, "mkdir", ro / "newrun")
        assert_exit_2(lrn(capsys, "train", "--config", config, "--out", ro / "newrun"), "permission denied")
    assert sorted(p.name for p in ro.iterdir()) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads and writes every file whatever its permissions")
def test_real_permissions_on_a_users_paths_exit_2(base_run, tmp_path, capsys, run_copy):
    config = tmp_path / "cfg.json"
    config.write_text(json.dumps(load_config("mlp-tiny", TINY).to_dict()))
    config.chmod(0)
    assert_exit_2(lrn(capsys, "train", "--config", config, "--dry-run"), "permission denied")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    assert_exit_2(lrn(capsys, "data", "stories", "--size", "1KB", "--out", ro / "s.txt"), "permission denied")
    run = run_copy()
    (run / "ckpt_last.pt").chmod(0)
    assert_exit_2(lrn(capsys, "eval", run), "permission denied")


# ---- SIGTERM ---------------------------------------------------------------------------------

def test_sigterm_during_data_prepare_exits_130_with_one_line_and_leaves_no_temporary_files(tmp_path):
    env = {**os.environ, "LRN_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(Path(__file__).parents[1])}
    code, lines = sigterm_after(["data", "prepare", "--corpus", "stories:3MB"], env, "encoding the train split")
    assert code == 130, lines
    assert lines[-1].strip() == "lrn data: interrupted" and not any("Traceback" in x for x in lines)
    left = [p for p in (tmp_path / "cache").rglob("*") if ".tmp-" in p.name]
    assert left == []
    assert not list((tmp_path / "cache" / "data").iterdir())  # no half-built entry either
