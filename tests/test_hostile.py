"""A hostile user and a failing machine: every case exits 0 or 2 with one line (1 only for the
documented disk-full line), and every piece of advice names an option the command has.

The case tables run in-process through `lrngpt.cli.main.main` on tiny configs; the faults that
need a real file system (a full tmpfs, a read-only mount) are skipped with a reason where the
machine cannot mount one, and have a monkeypatched twin that always runs.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import functools
import json
import os
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lrngpt.cli.main import main
from tests.cli_run import HUNG, lrn, sigterm_after

ROOT = Path(__file__).parents[1]
TINY = ["--set", "data.vocab_size=300", "--set", "train.steps=2", "--set", "train.eval_every=1",
        "--set", "train.eval_tokens=500", "--set", "train.train_eval_tokens=500", "--set", "train.device=cpu"]


def one_line(result, code: int, *needles: str) -> str:
    """Exit `code`, one line on stderr (after any progress lines: the last), holding every needle."""
    got, _, err = result
    lines = err.strip().splitlines()
    assert got == code and lines and "Traceback" not in err and "unexpected" not in err, (got, err)
    assert all(n.lower() in lines[-1].lower() for n in needles), lines[-1]
    return lines[-1]


def temporaries(d: Path) -> list[Path]:
    return [p for p in d.rglob("*") if ".tmp-" in p.name]


@contextlib.contextmanager
def failing_writes(monkeypatch, code: int, after: int = 0, match: str = ""):
    """Every file that lrngpt opens for writing (name containing `match`) fails with errno `code`
    once `after` bytes have gone into it: a disk that fills, the file-size limit, as the OS says it."""
    real_open = builtins.open

    class Failing:
        def __init__(self, f):
            self._f, self._n = f, 0

        def write(self, data):
            self._n += len(data)
            if self._n > after:
                raise OSError(code, os.strerror(code))
            return self._f.write(data)

        def __getattr__(self, name):
            return getattr(self._f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self._f.close()

    def fake_open(file, mode="r", *args, **kwargs):
        f = real_open(file, mode, *args, **kwargs)
        return Failing(f) if any(c in mode for c in "wax") and match in str(file) else f

    with monkeypatch.context() as m:
        for module in ("lrngpt.core.fsio", "lrngpt.data.prepared", "lrngpt.store.rundir",
                       "lrngpt.store.lifecycle"):
            m.setattr(f"{module}.open", fake_open, raising=False)
        yield


@pytest.fixture
def tmpfs(tmp_path):
    """mount(size, ro=False) -> a fresh tmpfs of that many bytes (skips where it cannot mount)."""
    mounted = []

    def mount(size: int, ro: bool = False) -> Path:
        d = tmp_path / f"fs{len(mounted)}"
        d.mkdir()
        opts = f"size={size}" + (",ro" if ro else "")
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(d)], capture_output=True, text=True)
        if r.returncode:
            pytest.skip(f"cannot mount a tmpfs here ({r.stderr.strip() or 'mount failed'}; needs root)")
        mounted.append(d)
        return d

    yield mount
    for d in mounted:
        subprocess.run(["umount", "-l", str(d)], capture_output=True)


# ---- 1. one OS-error mapping for every writer, torch's included ---------------------------------

def test_a_full_disk_inside_torch_save_is_the_disk_full_line_not_torchs_runtime_error(
        text_corpus, tmp_path, capsys, monkeypatch):
    run = tmp_path / "run"
    with failing_writes(monkeypatch, errno.ENOSPC, after=50_000, match="ckpt_"):
        line = one_line(lrn(capsys, "train", "--config", "mlp-tiny", "--set", f"data.corpus={text_corpus}",
                            *TINY, "--out", run), 1, "disk full while writing", "ckpt_init.pt")
    assert "inline_container" not in line and temporaries(tmp_path) == []


def test_a_full_disk_in_a_sweep_is_the_disk_full_line(text_corpus, tmp_path, capsys, monkeypatch):
    with failing_writes(monkeypatch, errno.ENOSPC, after=50_000, match="ckpt_"):
        one_line(lrn(capsys, "sweep", "embed-dim", "--scale", "tiny", "--axis", "model.n_embd=8",
                     "--set", f"data.corpus={text_corpus}", "--set", "data.vocab_size=300", "--set", "train.steps=2",
                     "--out", tmp_path / "sw"), 1, "disk full while writing", ".pt")
    assert temporaries(tmp_path) == []


def test_a_real_full_tmpfs_under_train_and_sweep_is_the_disk_full_line(text_corpus, tmpfs, capsys):
    small = tmpfs(400_000)  # the run's small files fit, its three checkpoints do not
    line = one_line(lrn(capsys, "train", "--config", "mlp-tiny", "--set", f"data.corpus={text_corpus}", *TINY,
                        "--out", small / "run"), 1, "disk full while writing", str(small))
    assert "inline_container" not in line and temporaries(small) == []
    one_line(lrn(capsys, "sweep", "embed-dim", "--scale", "tiny", "--axis", "model.n_embd=8",
                 "--set", f"data.corpus={text_corpus}", "--set", "data.vocab_size=300", "--set", "train.steps=2",
                 "--out", small / "sw"), 1, "disk full while writing")
    assert temporaries(small) == []


def test_a_full_disk_in_data_prepare_leaves_no_cache_entry_a_later_run_would_trust(
        tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LRN_CACHE_DIR", str(tmp_path / "cache"))
    argv = ["data", "prepare", "--corpus", "stories:100KB", "--vocab-size", 300]
    with failing_writes(monkeypatch, errno.ENOSPC, after=10_000, match=".bin"):
        one_line(lrn(capsys, *argv), 1, "disk full while writing", str(tmp_path / "cache" / "data"))
    assert list((tmp_path / "cache" / "data").iterdir()) == [] and temporaries(tmp_path) == []
    code, _, err = lrn(capsys, *argv)  # space again: prepared afresh, not a half entry found "cached"
    assert code == 0 and "data: cached" not in err and "train tokens" not in err.split("encoding")[0]


def test_a_real_full_tmpfs_as_the_data_cache_is_the_disk_full_line(tmpfs, capsys, monkeypatch):
    cache = tmpfs(200_000)
    monkeypatch.setenv("LRN_CACHE_DIR", str(cache))
    one_line(lrn(capsys, "data", "prepare", "--corpus", "stories:2MB", "--vocab-size", 300), 1,
             "disk full while writing", str(cache))
    assert list((cache / "data").iterdir()) == [] and temporaries(cache) == []


@pytest.mark.parametrize("code,needle", [(errno.EROFS, "read-only file system"), (errno.EACCES, "permission denied"),
                                         (errno.EPERM, "not permitted")], ids=["EROFS", "EACCES", "EPERM"])
def test_a_refused_write_exits_2_naming_the_path(code, needle, text_corpus, tmp_path, capsys, monkeypatch):
    with failing_writes(monkeypatch, code, match="ckpt_"):
        line = one_line(lrn(capsys, "train", "--config", "mlp-tiny", "--set", f"data.corpus={text_corpus}", *TINY,
                            "--out", tmp_path / "run"), 2, needle)
    assert str(tmp_path / "run") in line


def test_an_oserror_from_anywhere_is_mapped_by_its_errno(capsys, monkeypatch, tmp_path):
    """What no closer handler caught: a library's own file, an append to metrics.jsonl."""
    import lrngpt.cli.cmd_theory as theory

    for code, exit_code, needle in ((errno.EROFS, 2, "read-only"), (errno.EACCES, 2, "permission denied"),
                                    (errno.ENOSPC, 1, "disk full while writing"), (errno.EFBIG, 2, "file too large")):
        def boom(args, code=code):
            raise OSError(code, os.strerror(code), str(tmp_path / "somewhere.bin"))

        monkeypatch.setattr(theory, "run_jl", boom)
        one_line(lrn(capsys, "theory", "jl", "--n", 10, "--eps", 0.5), exit_code, needle)


def test_a_real_read_only_mount_exits_2_naming_the_path(text_corpus, tmpfs, capsys):
    ro = tmpfs(100_000, ro=True)
    line = one_line(lrn(capsys, "train", "--config", "mlp-tiny", "--set", f"data.corpus={text_corpus}", *TINY,
                        "--out", ro / "run"), 2, "read-only file system")
    assert str(ro / "run") in line
    one_line(lrn(capsys, "data", "stories", "--size", "1KB", "--out", ro / "s.txt"), 2, "read-only", "s.txt")


def _child(argv: list[str], env: dict | None = None, fsize: int | None = None, code: str | None = None):
    """`python -m lrngpt ARGV` in a child process (a file-size limit, a broken temporary directory)."""
    def limit():
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    cmd = [sys.executable, "-c", code, *argv] if code else [sys.executable, "-m", "lrngpt", *argv]
    return subprocess.run(cmd, capture_output=True, text=True, preexec_fn=limit, timeout=HUNG,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def test_the_file_size_limit_exits_2_naming_the_path_not_killed_by_sigxfsz(tmp_path):
    out = tmp_path / "s.txt"
    r = _child(["data", "stories", "--size", "1MB", "--out", str(out)], fsize=100_000)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "file too large" in lines[0] and str(out) in lines[0], r
    assert not out.exists() and temporaries(tmp_path) == []


NO_TMP = ("import sys, tempfile; tempfile.tempdir = None; "
          "tempfile._candidate_tempdir_list = lambda: ['/nonexistent/tmp']; "
          "from lrngpt.cli.main import main; sys.exit(main(sys.argv[1:]))")


def test_no_usable_temporary_directory_exits_2_saying_to_set_tmpdir(tmp_path):
    r = _child(["train", "--config", "mlp-tiny", "--dry-run"], code=NO_TMP, env={"TMPDIR": "/nonexistent/tmp"})
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r
    assert "no usable temporary directory" in lines[0] and "set TMPDIR" in lines[0]


def _deny_memmap(monkeypatch, path: Path):
    import numpy as np

    real = np.memmap

    def fake(filename, *args, **kwargs):
        if str(filename) == str(path):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(filename))
        return real(filename, *args, **kwargs)

    monkeypatch.setattr(np, "memmap", fake)


def test_an_unreadable_cache_file_in_eval_exits_2_naming_it(tiny_config, tmp_path, capsys, monkeypatch):
    from lrngpt.data.prepared import data_cache_dir
    from lrngpt.training.trainer import train_run

    summary = train_run(tiny_config("train.steps=2"), tmp_path / "run", progress=False)
    train_bin = data_cache_dir() / summary["data_key"] / "train.bin"
    _deny_memmap(monkeypatch, train_bin)
    one_line(lrn(capsys, "eval", tmp_path / "run"), 2, "permission denied", str(train_bin))


def test_an_unwritable_cache_directory_in_eval_exits_2_naming_it(tiny_config, tmp_path, capsys, monkeypatch):
    import pathlib

    from lrngpt.training.trainer import train_run

    train_run(tiny_config("train.steps=2"), tmp_path / "run", progress=False)
    cache = tmp_path / "cache"  # an empty cache that cannot be written: the data cannot be prepared there
    monkeypatch.setenv("LRN_CACHE_DIR", str(cache))
    real_mkdir = pathlib.Path.mkdir

    def mkdir(self, *args, **kwargs):
        if str(self).startswith(str(cache)):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(self))
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "mkdir", mkdir)
    one_line(lrn(capsys, "eval", tmp_path / "run"), 2, "permission denied", str(cache))


# ---- 2. inputs checked at the door ----------------------------------------------------------------

def test_a_replaced_cached_tokenizer_is_trained_again_not_used(text_corpus, tmp_path, capsys):
    from lrngpt.data.prepared import data_cache_dir
    from lrngpt.tokenizer.bpe import Tokenizer

    argv = ["tokenizer", "train", "--corpus", text_corpus, "--vocab-size", 290, "--out"]
    assert lrn(capsys, *argv, tmp_path / "first")[0] == 0
    trained = Tokenizer.load(tmp_path / "first").hash
    cached = [p for p in (data_cache_dir().parent / "tokenizers").glob("*.json")
              if Tokenizer.load(p).hash == trained]
    assert len(cached) == 1 and cached[0].with_suffix(".hash").read_text().strip() == trained
    Tokenizer.train(["some other text entirely"] * 20, 260).save(cached[0])  # replaced behind lrn's back
    code, _, err = lrn(capsys, *argv, tmp_path / "second")
    assert code == 0 and "is not the tokenizer trained for this corpus" in err
    assert Tokenizer.load(tmp_path / "second").hash == trained and Tokenizer.load(cached[0]).hash == trained
    cached[0].with_suffix(".hash").unlink()  # a cache from before the record: trained again, then trusted
    code, _, err = lrn(capsys, *argv, tmp_path / "third")
    assert code == 0 and "no record of its hash; training it again" in err
    code, _, err = lrn(capsys, *argv, tmp_path / "fourth")
    assert code == 0 and f"tokenizer: cached {cached[0]}" in err


def _poison(state: dict, name: str, value: float) -> None:
    state[name].view(-1)[0] = value


@pytest.fixture(scope="module")
def gpt_export(text_corpus, tmp_path_factory):
    """A tiny GPT run exported as a Hugging Face GPT-2 directory: what `lrn import-gpt2` reads."""
    from lrngpt.runconfig.schema import load_config
    from lrngpt.training.trainer import train_run

    d = tmp_path_factory.mktemp("gpt")
    cfg = load_config("gpt-default", [f"data.corpus={text_corpus}", "data.vocab_size=300", "model.n_embd=16",
                                      "model.n_head=2", "model.n_layer=1", "model.context_length=16",
                                      "train.batch_size=4", "train.steps=1", "train.eval_every=1",
                                      "train.eval_tokens=200", "train.train_eval_tokens=200", "train.device=cpu"])
    train_run(cfg, d / "run", progress=False, log=lambda m: None)
    assert main(["-q", "export", str(d / "run"), "--format", "hf", "--out", str(d / "hf")]) == 0
    return d / "hf"


@pytest.mark.parametrize("value", [float("nan"), float("inf")], ids=["NaN", "Inf"])
def test_import_gpt2_refuses_non_finite_weights_naming_the_tensor(gpt_export, value, tmp_path, capsys):
    from safetensors.torch import load_file, save_file

    hf = Path(shutil.copytree(gpt_export, tmp_path / "hf"))
    state = load_file(hf / "model.safetensors")
    _poison(state, "transformer.h.0.mlp.c_fc.weight", value)
    save_file(state, hf / "model.safetensors", metadata={"format": "pt"})
    one_line(lrn(capsys, "import-gpt2", hf, "--out", tmp_path / "run"), 2, "'transformer.h.0.mlp.c_fc.weight'",
             "NaN or infinite", "model.safetensors")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("argv", [["eval", "{d}"], ["sample", "{d}", "--prompt", "hi", "--max-new-tokens", "2"],
                                  ["embed", "axes", "{d}"], ["train", "--resume", "--out", "{d}"]],
                         ids=["eval", "sample", "embed axes", "train --resume"])
def test_a_checkpoint_with_non_finite_weights_is_refused_at_load_naming_the_tensor(
        argv, tiny_config, tmp_path, capsys):
    import torch

    from lrngpt.store.checkpoint import load_checkpoint, save_checkpoint
    from lrngpt.training.trainer import train_run

    d = tmp_path / "run"
    train_run(tiny_config("train.steps=4"), d, stop_at=2, progress=False, log=lambda m: None)
    ckpt = load_checkpoint(d / "ckpt_last.pt")
    _poison(ckpt["model"], "head.weight", float("nan"))
    save_checkpoint(ckpt, d / "ckpt_last.pt")
    line = one_line(lrn(capsys, *(a.format(d=d) for a in argv)), 2, "'head.weight'", "NaN or infinite")
    assert "ckpt_last.pt" in line
    assert torch.load(d / "ckpt_last.pt", weights_only=True)["model"]["head.weight"].isnan().any()  # left as found


@pytest.fixture(scope="module")
def finished_sweep(text_corpus, tmp_path_factory):
    d = tmp_path_factory.mktemp("sweep") / "sw"
    argv = ["sweep", "embed-dim", "--scale", "tiny", "--axis", "model.n_embd=8", "--set", f"data.corpus={text_corpus}",
            "--set", "data.vocab_size=300", "--set", "train.steps=2", "--out", str(d)]
    assert main(["-q", *argv]) == 0
    return d, argv


SWEEP_JSON_CASES = {  # field -> a value of the wrong type (an object or a list where a string or number belongs)
    "scale an object": (lambda doc: doc.__setitem__("scale", {"a": 1}), "scale must be"),
    "scale a list": (lambda doc: doc.__setitem__("scale", ["tiny"]), "scale must be"),
    "an axis value an object": (lambda doc: doc["axes"].__setitem__("model.n_embd", [{"a": 1}]), "axes must be"),
    "a point value an object": (lambda doc: doc["points"][0]["values"].__setitem__("model.n_embd", {"a": 1}),
                                "points[0]"),
    "source an object": (lambda doc: doc.__setitem__("source", {"a": 1}), "source must be"),
}
SWEEP_ONLY = {  # what lrn sweep relies on and a report (which reads what it can) does not
    "a point index a boolean": (lambda doc: doc["points"][0].__setitem__("index", True), "points[0]"),
}


SWEEP_JSON = [(c, k) for c in ("sweep", "report") for k in SWEEP_JSON_CASES] + [("sweep", k) for k in SWEEP_ONLY]


@pytest.mark.parametrize("command,case", SWEEP_JSON, ids=[f"{c}:{k}" for c, k in SWEEP_JSON])
def test_a_sweep_json_with_a_value_of_the_wrong_type_exits_2_with_one_line(finished_sweep, case, command,
                                                                          tmp_path, capsys):
    src, argv = finished_sweep
    d = Path(shutil.copytree(src, tmp_path / "sw"))
    doc = json.loads((d / "sweep.json").read_text())
    edit, needle = {**SWEEP_JSON_CASES, **SWEEP_ONLY}[case]
    edit(doc)
    (d / "sweep.json").write_text(json.dumps(doc))
    argv = [*argv[:-1], str(d)] if command == "sweep" else ["report", str(d), "--out", str(tmp_path / "r.html")]
    one_line(lrn(capsys, "-q", *argv), 2, "sweep definition", needle)


@pytest.mark.parametrize("tail", ['{"step": 3, "lo', "garbage\n", "\x00\x00\x00"], ids=["cut by a kill", "garbage",
                                                                                     "zeros"])
def test_a_bad_last_line_of_metrics_jsonl_is_skipped_with_one_warning(tail, tiny_config, tmp_path, capsys):
    from lrngpt.training.trainer import train_run

    d = tmp_path / "run"
    train_run(tiny_config("train.steps=2"), d, progress=False, log=lambda m: None)
    with open(d / "metrics.jsonl", "a") as f:
        f.write(tail)
    code, _, err = lrn(capsys, "report", d, "--out", tmp_path / "r.html")
    warnings = [line for line in err.splitlines() if "metrics.jsonl" in line]
    assert code == 0 and len(warnings) == 1 and "is not JSON" in warnings[0] and "skipped" in warnings[0]
    (d / "metrics.jsonl").write_text('garbage\n{"step": 1}\n')  # the same line mid-file: the file is damaged
    one_line(lrn(capsys, "report", d, "--out", tmp_path / "r.html"), 2, "line 1", "not JSON")


def test_a_lone_surrogate_in_a_jsonl_corpus_is_refused_naming_file_and_line(tmp_path, capsys):
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text('{"text": "a fine pair \\ud83d\\ude00 here"}\n{"text": "half a pair \\ud800 here"}\n')
    line = one_line(lrn(capsys, "data", "prepare", "--corpus", f"jsonl:{corpus}", "--vocab-size", 300,
                        "--out", tmp_path / "p"), 2, "docs.jsonl: line 2", "lone UTF-16 surrogate", "\\ud800")
    assert "UnicodeEncodeError" not in line and not (tmp_path / "p").exists()
    corpus.write_text('{"text": "a fine pair \\ud83d\\ude00 here"}\n' * 50)  # a proper pair is text like any
    assert lrn(capsys, "-q", "data", "prepare", "--corpus", f"jsonl:{corpus}", "--vocab-size", 300,
               "--out", tmp_path / "p")[0] == 0


# ---- 3. bounded work --------------------------------------------------------------------------------

def _grid(tmp_path: Path, text_corpus: str, axes: dict) -> Path:
    spec = tmp_path / "grid.json"
    spec.write_text(json.dumps({"base": "mlp-tiny", "scale": "tiny", "axes": axes,
                                "set": {"data.corpus": text_corpus, "data.vocab_size": 300, "train.device": "cpu"}}))
    return spec


def test_a_dry_run_of_a_huge_axis_is_refused_at_once_above_the_documented_size(text_corpus, tmp_path, capsys):
    import time

    from lrngpt.experiments.grid import MAX_POINTS

    spec = _grid(tmp_path, text_corpus, {"model.n_embd": list(range(4, 100_004))})
    t0 = time.process_time()  # this process's CPU time: what refusing at once costs, whatever else runs
    line = one_line(lrn(capsys, "sweep", spec, "--out", tmp_path / "out", "--dry-run"), 2,
                    "100,000 points", f"{MAX_POINTS:,}")
    assert time.process_time() - t0 < 10 and "split" in line and not (tmp_path / "out").exists()
    assert f"more than {MAX_POINTS} points is refused" in (ROOT / "docs" / "tutorials" / "width-study.md").read_text()


def test_a_dry_run_times_a_few_model_shapes_and_interpolates_the_rest(text_corpus, tmp_path, capsys, monkeypatch):
    import lrngpt.training.timing as run_timing
    from lrngpt.experiments.dry_run import MAX_PROBES

    probed = []
    real = run_timing.probe
    monkeypatch.setattr(run_timing, "probe", lambda cfg, device: probed.append(cfg.model.n_embd) or real(cfg, device))
    widths = list(range(4, 44))  # 40 shapes x 2 seeds: 80 points
    spec = _grid(tmp_path, text_corpus, {"model.n_embd": widths, "train.seed": [1, 2]})
    code, out, err = lrn(capsys, "sweep", spec, "--out", tmp_path / "out", "--dry-run", "--json")
    assert code == 0, err
    points = json.loads(out)["points"]
    # MAX_PROBES shapes timed (the choice of points at once times the two ends again, at once and alone)
    assert len(points) == 80 and len(set(probed)) == MAX_PROBES and min(probed) == 4 and max(probed) == 43
    assert len(probed) <= MAX_PROBES + 2
    est = {p["values"]["model.n_embd"]: p["est_seconds"] for p in points}
    assert all(isinstance(s, float) and s > 0 for s in est.values())
    timed = sorted(probed)  # an untimed width lies between the timed widths around it
    for w in widths:
        lo, hi = max(t for t in timed if t <= w), min(t for t in timed if t >= w)
        assert min(est[lo], est[hi]) * 0.999 <= est[w] <= max(est[lo], est[hi]) * 1.001


@pytest.fixture(scope="module")
def mlp_run(text_corpus, tmp_path_factory):
    from lrngpt.runconfig.schema import load_config
    from lrngpt.training.trainer import train_run

    d = tmp_path_factory.mktemp("mlp") / "run"
    train_run(load_config("mlp-tiny", [f"data.corpus={text_corpus}", "data.vocab_size=300", "train.device=cpu",
                                   "train.steps=2", "train.eval_every=1", "train.eval_tokens=300",
                                   "train.train_eval_tokens=300"]), d, progress=False, log=lambda m: None)
    return d


def test_sample_prints_its_text_as_it_is_generated_and_the_same_text_as_json(mlp_run, capsys):
    from lrngpt.inference.sample import SamplingConfig, sample_texts
    from lrngpt.store.rundir import load_run

    pieces = []
    samples = sample_texts(load_run(mlp_run), "Lily saw", SamplingConfig(max_new_tokens=40, seed=3, stop_at_eot=False),
                           num_samples=2, on_text=lambda i, piece: pieces.append((i, piece)))
    assert len(pieces) > 20  # piece by piece, not one string at the end
    for i, s in enumerate(samples):
        assert "".join(p for j, p in pieces if j == i) == s["text"]
    argv = ["sample", mlp_run, "--prompt", "Lily saw", "--max-new-tokens", 40, "--seed", 3, "--no-stop",
            "--num-samples", 2]
    code, out, _ = lrn(capsys, *argv)
    code_json, doc, _ = lrn(capsys, *argv, "--json")
    assert code == code_json == 0
    assert out == "\n---\n".join(s["text"] for s in json.loads(doc)["samples"]) + "\n"


def test_sample_stops_quietly_when_its_reader_closes_the_pipe(mlp_run):

    cmd = [sys.executable, "-m", "lrngpt", "sample", str(mlp_run), "--prompt", "Lily", "--no-stop",
           "--max-new-tokens", "16000000"]  # hours of text, unless it stops when nobody reads it
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    import threading

    guard = threading.Timer(HUNG, child.kill)  # a sampler that prints nothing until the end must not hang the test
    guard.start()
    try:
        first = child.stdout.read(10)  # `| head -c 10`
        child.stdout.close()
        code = child.wait(timeout=HUNG)
        err = child.stderr.read().decode()
    finally:
        guard.cancel()
        child.kill()
        child.wait()
    assert len(first) == 10 and code in (0, 141) and err == "", (code, err)  # it ended when its reader went away


# ---- 4. advice: every option a message names is one the command has ---------------------------------

def _parsers() -> dict[str, object]:
    """'train', 'data prepare', ... -> the argparse parser lrn builds for it ('' -> lrn's own)."""
    import argparse

    from lrngpt.cli.main import build_parser

    out = {"": build_parser()}

    def walk(parser, prefix: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    out[f"{prefix} {name}".strip()] = sub
                    walk(sub, f"{prefix} {name}".strip())

    walk(out[""], "")
    return out


PARSERS = _parsers()
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def _command_of(words: list[str]) -> str:
    """The longest command path at the start of `words` (options before it skipped)."""
    words = [w for w in words if not w.startswith("-")]
    best = ""
    for n in range(1, len(words) + 1):
        if " ".join(words[:n]) in PARSERS:
            best = " ".join(words[:n])
    return best


def _options(command: str) -> set[str]:
    own = {s for p in (PARSERS[""], PARSERS[command]) for a in p._actions for s in a.option_strings}
    return own | {"--help"}


def wrong_options(argv: list[str], message: str) -> list[str]:
    """Options named in `message` that the command it advises does not take: a backticked `lrn X ...`
    line is checked against X, the rest of the message against the command that printed it."""
    wrong = []
    for span in re.findall(r"`([^`]*)`", message):
        words = span.split()
        if words[:1] == ["lrn"]:
            other = _command_of(words[1:])
            wrong += [o for o in OPTION.findall(span) if o not in _options(other)]
    rest = re.sub(r"`[^`]*`", "", message)
    command = _command_of([str(a) for a in argv])
    return wrong + [o for o in OPTION.findall(rest) if o not in _options(command)]


def test_the_walker_finds_an_option_the_command_lacks():
    assert wrong_options(["eval", "r"], "r is damaged; start it again with --force") == ["--force"]
    assert wrong_options(["eval", "r"], "r is damaged; `lrn train --out r --force` starts it again") == []
    assert wrong_options(["sweep", "x"], "continue with `lrn sweep x --resume`") == ["--resume"]
    assert wrong_options(["-q", "data", "prepare"], "pass --force to prepare it again") == []


def _stopped_before_first_checkpoint(t: Path, **_) -> Path:
    from lrngpt.store.rundir import RunDir

    run = RunDir(t / "stopped")
    run.start()
    run.unlock()
    return run.path


def _truncated_checkpoint(t: Path, mlp_run: Path, **_) -> Path:
    d = Path(shutil.copytree(mlp_run, t / "cut"))
    (d / "ckpt_last.pt").write_bytes((d / "ckpt_last.pt").read_bytes()[:999])
    return d


def _imported(t: Path, gpt_export: Path, **_) -> Path:
    assert main(["-q", "import-gpt2", str(gpt_export), "--out", str(t / "imported")]) == 0
    return t / "imported"


def _edited_corpus(t: Path, **_) -> Path:
    from lrngpt.runconfig.schema import load_config
    from lrngpt.training.trainer import train_run

    corpus = t / "corp.txt"
    corpus.write_text("Lily saw a cat. Tom saw a dog. " * 300)
    train_run(load_config("mlp-tiny", [f"data.corpus=text:{corpus}", "data.vocab_size=300", "train.device=cpu",
                                   "train.steps=4", "train.eval_every=2", "train.eval_tokens=200",
                                   "train.train_eval_tokens=200"]), t / "r", stop_at=2, progress=False,
          log=lambda m: None)
    corpus.write_text("Mia ran to the park. Ben ran home. " * 300)
    return t / "r"


def _fifo(t: Path, **_) -> Path:
    os.mkfifo(t / "pipe.json")
    return t / "pipe.json"


def _dir_named_config(t: Path, **_) -> Path:
    (t / "config.json").mkdir()
    return t / "config.json"


# case -> (make the input: a path given as {x}, argv, the exit code, what the one line must say)
ADVICE = {
    "eval of a run stopped before its first checkpoint":
        (_stopped_before_first_checkpoint, ["eval", "{x}"], 2, "before its first checkpoint"),
    "sample of a run stopped before its first checkpoint":
        (_stopped_before_first_checkpoint, ["sample", "{x}", "--prompt", "hi"], 2, "before its first checkpoint"),
    "resume of a run stopped before its first checkpoint":
        (_stopped_before_first_checkpoint, ["train", "--resume", "--out", "{x}"], 2, "before"),
    "eval of a truncated checkpoint": (_truncated_checkpoint, ["eval", "{x}"], 2, "truncated or corrupted"),
    "resume of a truncated checkpoint":
        (_truncated_checkpoint, ["train", "--resume", "--out", "{x}", "--steps", "4"], 2, "truncated or corrupted"),
    "resume of an import": (_imported, ["train", "--resume", "--out", "{x}"], 2, "cannot be resumed"),
    "--by-reads on an import": (_imported, ["eval", "{x}", "--by-reads"], 2, "no training record"),
    "resume after the corpus content changed": (_edited_corpus, ["train", "--resume", "--out", "{x}"], 2,
                                                "the content of text:"),
    "a FIFO as the config": (_fifo, ["train", "--config", "{x}", "--dry-run"], 2, "special file"),
    "/dev/null as the config": (lambda t, **_: Path("/dev/null"), ["config", "show", "{x}"], 2, "special file"),
    "a directory named config.json": (_dir_named_config, ["train", "--config", "{x}", "--dry-run"], 2,
                                      "is a directory"),
    "model_type gpt on an MLP preset": (None, ["config", "show", "mlp-tiny", "--set", "model_type=gpt"], 2,
                                        "start from a preset of model_type gpt"),
    "model_type mlp on a GPT preset": (None, ["train", "--config", "gpt-default", "--set", "model_type=mlp",
                                              "--dry-run"], 2, "start from a preset of model_type mlp"),
    "a config file that is not JSON": (lambda t, **_: (t / "c.json").write_text("{") and t / "c.json",
                                       ["train", "--config", "{x}", "--dry-run"], 2, "fix it"),
    "a huge sweep grid": (lambda t, text_corpus, **_: _grid(t, text_corpus, {"model.n_embd": list(range(4, 9000))}),
                          ["sweep", "{x}", "--out", "{x}.out", "--dry-run"], 2, "split the grid"),
}


@pytest.mark.parametrize("case", ADVICE)
def test_advice_names_only_options_the_command_has(case, tmp_path, capsys, request):
    make, argv, code, needle = ADVICE[case]
    fixtures = {name: request.getfixturevalue(name) for name in ("mlp_run", "gpt_export", "text_corpus")
                if make is not None and name in make.__code__.co_varnames}
    x = make(tmp_path, **fixtures) if make else None
    argv = [a.format(x=x) for a in argv]
    line = one_line(lrn(capsys, *argv), code, needle)
    assert wrong_options(argv, line) == [], line
    if "delete" in line:
        assert "fix or delete" not in line


def test_tokenizer_show_reads_only_ascii_digits_as_ids(mlp_run, capsys):
    code, out, _ = lrn(capsys, "tokenizer", "show", mlp_run, "١٢٣", "123", "--json")
    assert code == 0
    arabic, ascii_ = json.loads(out)["results"]
    assert arabic["kind"] == "text" and arabic["query"] == "١٢٣" and len(arabic["ids"]) > 1  # its UTF-8, encoded
    assert ascii_["kind"] == "id" and ascii_["id"] == 123


def test_sigterm_of_a_sweep_says_to_run_the_same_sweep_again_not_resume(text_corpus, tmp_path):
    argv = ["sweep", "embed-dim", "--scale", "tiny", "--axis", "model.n_embd=8", "--set", f"data.corpus={text_corpus}",
            "--set", "data.vocab_size=300", "--set", "train.steps=1000000", "--set", "train.eval_every=1000000",
            "--out", str(tmp_path / "sw")]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LRN_CACHE_DIR": os.environ["LRN_CACHE_DIR"]}
    # the step-0 line, then a logged step: the signal lands inside the step loop
    code, lines = sigterm_after(argv, env, ("step 0: val bpb", "step 10/"))
    said = [x for x in lines if "interrupted at step" in x]
    assert code == 130 and len(said) == 1, "".join(lines[-6:])
    assert "running the same `lrn sweep` command again" in said[0] and wrong_options(argv, said[0]) == []


# ---- the Python API: every bad argument is a UserError with one line (issue 28) ----------------------------------
# Every public function and method of lrngpt is called with a value of the wrong type in each of its parameters
# (the others valid): it must raise lrngpt.UserError naming the function and the parameter, in one line, before any
# work. Then the values a notebook gets wrong, each with the message the command line gives for the same mistake.

def _api_callables():
    """(label, the function, a bound instance or None) for every public name and every public method."""
    import inspect

    import lrngpt

    out = []
    for name in lrngpt.__all__:
        obj = getattr(lrngpt, name)
        if inspect.isfunction(obj):
            out.append((name, obj, None))
    for cls in (lrngpt.Run, lrngpt.Sweep):
        out.append((f"{cls.__name__}()", cls, None))
        for name, member in inspect.getmembers(cls, inspect.isfunction):
            if not name.startswith("_"):
                out.append((f"{cls.__name__}.{name}", member, cls.__new__(cls)))
    return out


def _valid(hint, name: str):
    """A value of the annotated type (what it holds does not matter: the types are checked before any work)."""
    import collections.abc as abc
    import typing
    from pathlib import Path

    import lrngpt

    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        return args[0]
    if origin in (typing.Union, __import__("types").UnionType):
        options = [a for a in args if a is not type(None)]
        return _valid(options[0], name) if options else None
    if hint in (str,):
        return "x"
    if hint is Path:
        return Path("x")
    if hint is bool:
        return False
    if hint in (int, float):
        return 1
    if origin is not None and isinstance(origin, type) and issubclass(origin, abc.Mapping):
        return {}
    if origin is not None and isinstance(origin, type) and issubclass(origin, abc.Iterable):
        return [_valid(args[0], name)] if args else []
    if origin in (abc.Callable,) or hint is abc.Callable:
        return print
    if isinstance(hint, type) and hint.__name__ in ("Run", "Sweep"):
        return hint.__new__(hint)
    if isinstance(hint, type) and hint.__name__ == "RunConfig":
        return lrngpt.config("mlp-tiny")
    if isinstance(hint, type):  # a protocol (HasPath): a path will do
        return "x"
    return None


def _wrong_type_calls():
    import inspect
    import typing

    from lrngpt.api.checks import _hints

    calls = []
    for label, fn, self in _api_callables():
        target = fn.__init__ if isinstance(fn, type) else fn
        sig = inspect.signature(target)
        hints, _ = _hints(inspect.unwrap(target))
        params = [p for p in sig.parameters.values() if p.name != "self" and p.kind not in (p.VAR_KEYWORD,
                                                                                            p.VAR_POSITIONAL)]
        for bad in params:
            if hints.get(bad.name, typing.Any) is typing.Any:
                continue
            calls.append((f"{label}:{bad.name}", fn, self, params, hints, bad.name))
    return calls


WRONG_TYPE_CALLS = _wrong_type_calls()


def test_every_public_function_and_method_is_checked():
    import lrngpt

    checked = {c[0].split(":")[0] for c in WRONG_TYPE_CALLS}
    functions = {n for n in lrngpt.__all__ if callable(getattr(lrngpt, n)) and n not in ("Run", "Sweep", "UserError")}
    # every function with an argument is in the table (the three without one: config_list, cost_models, lesson_lookup_grad)
    assert functions - checked == {"config_list", "cost_models", "lesson_lookup_grad"}
    assert {"Run()", "Run.eval", "Run.samples", "Run.sample", "Sweep()", "Sweep.run", "Sweep.figure"} <= checked
    assert len(WRONG_TYPE_CALLS) > 150


@pytest.mark.parametrize("case", WRONG_TYPE_CALLS, ids=[c[0] for c in WRONG_TYPE_CALLS])
def test_a_wrong_type_in_any_parameter_of_the_api_is_a_one_line_user_error(case):
    import lrngpt

    label, fn, self, params, hints, bad = case
    values = {p.name: _valid(hints.get(p.name), p.name) for p in params if p.default is p.empty or p.name == bad}
    values[bad] = object()
    positional = [values.pop(p.name) for p in params if p.kind is p.POSITIONAL_ONLY and p.name in values]
    call = fn if self is None else getattr(self, fn.__name__)
    with pytest.raises(lrngpt.UserError) as e:
        call(*positional, **values)
    message = str(e.value)
    assert "\n" not in message and f"{bad} must be" in message and "got object" in message, message


@pytest.fixture(scope="module")
def api_objects(mlp_run, text_corpus, tmp_path_factory):
    """A Run of the module's tiny run and a Sweep of one finished point, through the API."""
    import lrngpt

    d = tmp_path_factory.mktemp("api-sweep")
    sw = lrngpt.sweep("embed-dim", scale="tiny", out=d / "sw", axes={"model.n_embd": [8]}, progress=False,
                      set={"data.corpus": text_corpus, "data.vocab_size": 300, "train.steps": 2,
                           "train.eval_tokens": 300, "train.train_eval_tokens": 300})
    return lrngpt.load(mlp_run), sw, d


API_VALUE_CASES = {  # call(run, sweep, tmp_dir) -> must raise UserError with this in its one line
    "config(set=5)": (lambda r, s, d: __import__("lrngpt").config("mlp-tiny", set=5), "set must be a mapping"),
    "config of a bad key": (lambda r, s, d: __import__("lrngpt").config("mlp-tiny", **{"model.n_emb": 8}),
                            "unknown config key model.n_emb"),
    "config of no preset": (lambda r, s, d: __import__("lrngpt").config("mlp-tinny"), "did you mean mlp-tiny"),
    "train_run(out=None)": (lambda r, s, d: __import__("lrngpt").train(r.config, None), "give out=RUN_DIR"),
    "train_run(steps=0)": (lambda r, s, d: __import__("lrngpt").train(r.config, d / "t", steps=0), "steps must be at least 1"),
    "train_run(extend=True) alone": (lambda r, s, d: __import__("lrngpt").train(r.config, d / "t", extend=True),
                                 "give it with resume"),
    "train_run(None) without resume": (lambda r, s, d: __import__("lrngpt").train(None, d / "t"), "only resume=True"),
    "train_run(unknown keyword)": (lambda r, s, d: __import__("lrngpt").train(r.config, d / "t", step=3),
                               "did you mean steps?"),
    "load(None)": (lambda r, s, d: __import__("lrngpt").load(None), "path must be a path"),
    "load of no run": (lambda r, s, d: __import__("lrngpt").load(d / "nothing"), "does not exist"),
    "planted_tokens_figure of no study": (lambda r, s, d: __import__("lrngpt").planted_tokens_figure(d / "nothing"), "planted.json"),
    "planted_tokens_figure of a run": (lambda r, s, d: __import__("lrngpt").planted_tokens_figure(r.path), "planted.json"),
    "load(checkpoint=bset)": (lambda r, s, d: __import__("lrngpt").load(r.path, checkpoint="bset"),
                              "did you mean best?"),
    "run.sample(123)": (lambda r, s, d: r.sample(123), "prompt must be a string"),
    "run.sample('')": (lambda r, s, d: r.sample(""), "the prompt is empty"),
    "run.sample(temperature=-1)": (lambda r, s, d: r.sample("Lily", temperature=-1), "temperature must be 0 (greedy"),
    "run.sample(temperature=nan)": (lambda r, s, d: r.sample("Lily", temperature=float("nan")),
                                    "temperature must be 0 (greedy"),
    "run.samples(num_samples=0)": (lambda r, s, d: r.samples("Lily", num_samples=0), "num_samples must be at least 1"),
    "run.eval(split=test)": (lambda r, s, d: r.eval(split="test"), "split must be one of 'val', 'train' or None"),
    "run.eval(max_tokens=0)": (lambda r, s, d: r.eval(max_tokens=0), "max_tokens must be at least 1"),
    "run.eval(by_reads, corpus)": (lambda r, s, d: r.eval(by_reads=True, corpus="stories:10KB"), "drop corpus"),
    "run.neighbors(k=0)": (lambda r, s, d: r.neighbors(" Lily", k=0), "k (-k) must be at least 1"),
    "run.neighbors('')": (lambda r, s, d: r.neighbors(""), "token is empty"),
    "run.axes(energy=2)": (lambda r, s, d: r.axes(energy=2.0), "energy=2.0: must be in (0, 1]"),
    "embed_neighbors([])": (lambda r, s, d: __import__("lrngpt").embed_neighbors(r, []), "at least one token"),
    "sweep(out=None)": (lambda r, s, d: __import__("lrngpt").sweep("embed-dim", out=None), "out must be a path"),
    "sweep of no study": (lambda r, s, d: __import__("lrngpt").sweep("embed-size", out=d / "x"), "unknown sweep preset"),
    "sweep(minutes=-1)": (lambda r, s, d: __import__("lrngpt").sweep("embed-dim", out=d / "x", minutes=-1),
                          "minutes must be a positive number"),
    "sweep(minutes, scale)": (lambda r, s, d: __import__("lrngpt").sweep("embed-dim", "tiny", out=d / "x", minutes=5),
                              "leave out scale"),
    "sweep(shard=(2, 2))": (lambda r, s, d: __import__("lrngpt").sweep("embed-dim", "tiny", out=d / "x", shard=(2, 2),
                                                                      dry_run=True), "outside the range"),
    "sweep into another sweep": (lambda r, s, d: __import__("lrngpt").sweep("seed-variance", "tiny", out=s.path),
                                 "holds a different sweep"),
    "plan(scale=) of a run": (lambda r, s, d: __import__("lrngpt").plan("mlp-tiny", "tiny"), "applies to a sweep"),
    "plan of a sweep without out": (lambda r, s, d: __import__("lrngpt").plan("embed-dim"), "needs out="),
    "load_sweep of no sweep": (lambda r, s, d: __import__("lrngpt").load_sweep(d), "holds no sweep"),
    "sweep.run(999)": (lambda r, s, d: s.run(999), "no finished run of width 999"),
    "sweep.figure(nope)": (lambda r, s, d: s.figure("nope"), "name must be one of"),
    "theory_jl(n=1)": (lambda r, s, d: __import__("lrngpt").theory_jl(1, 0.5), "n=1:"),
    "theory_jl(eps=2)": (lambda r, s, d: __import__("lrngpt").theory_jl(10, 2.0), "eps=2.0:"),
    "cost_gpt(vocab=0)": (lambda r, s, d: __import__("lrngpt").cost_gpt(0, 16), "at least 1"),
    "cost_mlp(widths=[])": (lambda r, s, d: __import__("lrngpt").cost_mlp(widths=[]), "width"),
    "lesson_lookup(batch=0)": (lambda r, s, d: __import__("lrngpt").lesson_lookup(batch=0), "at least 1"),
    "config_keys(rnn)": (lambda r, s, d: __import__("lrngpt").config_keys("rnn"), "model_type must be one of"),
    "data_stories(size=lots)": (lambda r, s, d: __import__("lrngpt").data_stories(d / "s.txt", size="lots"), "lots"),
    "tokenizer_decode(a,b)": (lambda r, s, d: __import__("lrngpt").tokenizer_decode(r.path, "a,b"),
                              "must be comma-separated integers"),
    "demo(steps=0)": (lambda r, s, d: __import__("lrngpt").demo(d / "demo", steps=0), "steps must be at least 1"),
    "doctor(probe_timeout=0)": (lambda r, s, d: __import__("lrngpt").doctor(probe_timeout=0), "probe_timeout must be"),
    "export_hf of an MLP": (lambda r, s, d: __import__("lrngpt").export_hf(r, d / "hf"), "not a GPT run"),
    "Run.export_hf of init": (lambda r, s, d: __import__("lrngpt").load(r.path, "init").export_hf(d / "hf"),
                              "init: export the trained weights, last or best"),
    "write_report([])": (lambda r, s, d: __import__("lrngpt").write_report([]), "give a run directory"),
}


@pytest.mark.parametrize("case", API_VALUE_CASES)
def test_a_bad_value_in_the_api_is_a_one_line_user_error(case, api_objects):
    import lrngpt

    run, sw, d = api_objects
    call, needle = API_VALUE_CASES[case]
    before = sorted(p.name for p in d.iterdir())
    with pytest.raises(lrngpt.UserError) as e:
        call(run, sw, d)
    assert "\n" not in str(e.value) and needle in str(e.value), str(e.value)
    assert sorted(p.name for p in d.iterdir()) == before  # refused before anything was written


# ---- lrn embed undertrained: bad RUN, bad --top, a run without ckpt_init.pt (issue 31) ----------

def _no_run_dir(t: Path, **_) -> Path:
    (t / "empty").mkdir()
    return t / "empty"


def _a_file(t: Path, **_) -> Path:
    (t / "run.txt").write_text("not a run")
    return t / "run.txt"


def _foreign_hf_dir(t: Path, **_) -> Path:
    d = t / "llama"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"model_type": "llama"}))
    (d / "model.safetensors").write_bytes(b"\0" * 16)
    return d


def _hf_dir_without_weights(t: Path, gpt_export: Path, **_) -> Path:
    d = Path(shutil.copytree(gpt_export, t / "hf"))
    for f in d.glob("model.safetensors*"):
        f.unlink()
    return d


UNDERTRAINED_CASES = {
    "a RUN that does not exist": (lambda t, **_: t / "nope", [], "does not exist"),
    "a RUN that is a file": (_a_file, [], "is a file"),
    "a directory holding no run": (_no_run_dir, [], "holds no lrn run"),
    "a Hugging Face directory that is not GPT-2": (_foreign_hf_dir, [], "not 'gpt2'"),
    "a Hugging Face GPT-2 directory without weights": (_hf_dir_without_weights, [], "no model.safetensors"),
    "--top 0": (lambda t, mlp_run, **_: mlp_run, ["--top", "0"], "must be at least 1"),
    "--top -3": (lambda t, mlp_run, **_: mlp_run, ["--top", "-3"], "must be at least 1"),
    "--top many": (lambda t, mlp_run, **_: mlp_run, ["--top", "many"], "is not an integer"),
    "--checkpoint init of an import": (_imported, ["--checkpoint", "init"], "ckpt_init.pt"),
    "the corpus changed after training": (_edited_corpus, [], "changed since the run"),  # not "another tokenizer"
}


@pytest.mark.parametrize("case", UNDERTRAINED_CASES)
def test_embed_undertrained_refuses_bad_input_in_one_line(case, tmp_path, capsys, request):
    make, extra, needle = UNDERTRAINED_CASES[case]
    fixtures = {name: request.getfixturevalue(name) for name in ("mlp_run", "gpt_export")
                if name in make.__code__.co_varnames}
    argv = ["embed", "undertrained", str(make(tmp_path, **fixtures)), *extra]
    line = one_line(lrn(capsys, *argv), 2, needle)
    assert wrong_options(argv, line) == [], line


def test_embed_undertrained_of_a_run_without_ckpt_init_gives_reads_and_norms_and_says_why(mlp_run, tmp_path, capsys):
    d = Path(shutil.copytree(mlp_run, tmp_path / "old"))
    (d / "ckpt_init.pt").unlink()  # as an imported model has none
    before = sorted((p.name, p.stat().st_mtime_ns) for p in d.iterdir())
    code, out, err = lrn(capsys, "embed", "undertrained", d, "--top", "4", "--json")
    assert code == 0 and "Traceback" not in err and "has no ckpt_init.pt" in err
    r = json.loads(out)
    assert r["init"] is False and len(r["tokens"]) == 4 and all("moved" not in t for t in r["tokens"])
    assert all(t["input_reads"] >= 0 and t["norm"] > 0 for t in r["tokens"])
    code, text, _ = lrn(capsys, "embed", "undertrained", d)
    assert code == 0 and "no ckpt_init.pt: how far rows moved cannot be measured" in text
    assert sorted((p.name, p.stat().st_mtime_ns) for p in d.iterdir()) == before  # nothing written


# ---- lrn theory pip and lrn lesson superposition (issue 31) ------------------------------------------

PIP_AND_SUPERPOSITION = {
    "an unknown corpus kind": (["theory", "pip", "nosuch:xyz"], "unknown corpus kind"),
    "a corpus file that is not there": (["theory", "pip", "text:{t}/none.txt"], "no such file"),
    "a stories size that is no size": (["theory", "pip", "stories:abc"], "cannot read size"),
    "a vocabulary below the bytes": (["theory", "pip", "{corpus}", "--vocab-size", "100"], "below 257"),
    "a window of 0": (["theory", "pip", "{corpus}", "--window", "0"], "--window"),
    "a negative window": (["theory", "pip", "{corpus}", "--window", "-3"], "--window"),
    "alpha NaN": (["theory", "pip", "{corpus}", "--alpha", "nan"], "--alpha nan"),
    "alpha 0": (["theory", "pip", "{corpus}", "--alpha", "0"], "in (0, 1]"),
    "alpha above 1": (["theory", "pip", "{corpus}", "--alpha", "2"], "in (0, 1]"),
    "a sweep directory without a summary": (["theory", "pip", "{corpus}", "--sweep", "{t}"], "no summary.json"),
    "a file as the sweep": (["theory", "pip", "{corpus}", "--sweep", "{t}/file.txt"], "is a file"),
    "a sweep summary that is not JSON": (["theory", "pip", "{corpus}", "--sweep", "{t}/badsweep"], "summary"),
    "a sweep summary without widths": (["theory", "pip", "{corpus}", "--sweep", "{t}/nowidths"], "no finished rows"),
    "a training prefix too short to halve": (["theory", "pip", "{corpus}", "--vocab-size", "300", "--window", "6",
                                             "--train-tokens", "5"], "at least 14"),
    "dims equal to features": (["lesson", "superposition", "--dims", "20"], "not below --features"),
    "dims above features": (["lesson", "superposition", "--features", "4", "--dims", "9"], "not below --features"),
    "sparsity 1": (["lesson", "superposition", "--sparsity", "1"], "[0, 1)"),
    "a negative sparsity": (["lesson", "superposition", "--sparsity", "0,-0.5"], "--sparsity -0.5"),
    "sparsity NaN": (["lesson", "superposition", "--sparsity", "nan"], "--sparsity nan"),
    "a sparsity that is no number": (["lesson", "superposition", "--sparsity", "0,abc"], "comma-separated"),
    "zero steps": (["lesson", "superposition", "--steps", "0"], "--steps"),
    "a directory as the figure": (["lesson", "superposition", "--steps", "2", "--out", "{t}"], "is a directory"),
    "a user's file as the figure": (["lesson", "superposition", "--steps", "2", "--out", "{t}/file.txt", "--force"],
                                    "lrn did not write it"),
}


@pytest.mark.parametrize("case", PIP_AND_SUPERPOSITION)
def test_pip_and_superposition_refuse_bad_input_in_one_line(case, text_corpus, tmp_path, capsys):
    argv, needle = PIP_AND_SUPERPOSITION[case]
    (tmp_path / "file.txt").write_text("mine")
    (tmp_path / "badsweep").mkdir()
    (tmp_path / "badsweep" / "summary.json").write_text("{")
    (tmp_path / "nowidths").mkdir()
    (tmp_path / "nowidths" / "summary.json").write_text(json.dumps({"rows": [{"name": "x", "val_bpb": 1.0}]}))
    argv = [a.format(t=tmp_path, corpus=text_corpus) for a in argv]
    line = one_line(lrn(capsys, *argv), 2, needle)
    assert wrong_options(argv, line) == [], line
    assert (tmp_path / "file.txt").read_text() == "mine"


@pytest.mark.parametrize("call, needle", [
    (lambda: __import__("lrngpt").theory_pip(123), "theory_pip(): corpus must be a string, got int 123"),
    (lambda: __import__("lrngpt").theory_pip("stories:5MB", window=2.5), "window must be an integer"),
    (lambda: __import__("lrngpt").theory_pip("stories:5MB", sweep=3), "sweep must be a Sweep"),
    (lambda: __import__("lrngpt").theory_pip("stories:5MB", top=1), "top=1: keep at least"),
    (lambda: __import__("lrngpt").theory_pip("stories:5MB", alpha=float("nan")), "alpha=nan: the exponent"),
    (lambda: __import__("lrngpt").lesson_superposition(features=5, dims=5), "not below"),
    (lambda: __import__("lrngpt").lesson_superposition(sparsity=[0.5, float("inf")]), "sparsity=inf: the share"),
    (lambda: __import__("lrngpt").lesson_superposition(sparsity="0.9"), "sparsity must be a list of numbers"),
    (lambda: __import__("lrngpt").lesson_superposition_figure([1]), "result must be a dict"),
    (lambda: __import__("lrngpt").theory_pip_figure([1]), "result must be a dict"),
    (lambda: __import__("lrngpt").theory_pip_figure({}), "result must be what lrngpt.theory_pip() returns"),
    (lambda: __import__("lrngpt").theory_pip_figure({"curve": {"pip_loss": "abc"}, "optimal": {"k": 1}}),
     "result must be what lrngpt.theory_pip() returns"),
])
def test_pip_and_superposition_api_raise_user_errors(call, needle):
    with pytest.raises(__import__("lrngpt").UserError, match=re.escape(needle)):
        call()


# ---- 5. advice walked for every refusal: right for what was found, never "delete" what is lrn's -------
# Every refusal that says "delete", "remove", "--force" or names an option, met where it is said wrong:
# the option walker above checks that each option exists for the command; these check that the
# advice fits what was found (a sweep with finished runs, another process, a FIFO, a cut file), and
# that the refusal left the directory it was about byte for byte as it was.

BUDGET_SETS = ["--set", "data.vocab_size=300", "--set", "model.n_hidden=16", "--set", "model.block_size=3",
               "--set", "train.seq_len=16", "--set", "train.device=cpu"]


def _stub_plan(steps: int = 2, widths=(4, 8, 16, 32)):
    """What plan_budget returns, without its timing probe: tiny points (the budget path is the same)."""
    from lrngpt.experiments.budget import Budget

    def plan(source, minutes, sets, axes, probe_fn=None, log=None, points_at_once=None, passes=None, out="DIR"):
        return Budget(minutes, {"train.steps": steps, "train.batch_size": 4, "train.eval_every": 1,
                                "train.eval_tokens": 300, "train.train_eval_tokens": 300},
                      {"model.n_embd": list(widths)}, 60.0, {"points": 60.0}, 0.05, ["fewer steps"], {})
    return plan


def _quick_figures(out, doc) -> dict[str, bytes]:
    return {"val_bpb_by_width.png": b"\x89PNG " + str(len(doc["rows"])).encode()}


@pytest.fixture(scope="module")
def budget_sweep(text_corpus, tmp_path_factory):
    """A sweep planned for --minutes 25 (4 tiny points), three of them finished, the fourth killed."""
    d = tmp_path_factory.mktemp("budget") / "sw"
    argv = ["sweep", "embed-dim", "--set", f"data.corpus={text_corpus}", *BUDGET_SETS]
    with pytest.MonkeyPatch.context() as m:
        m.setattr("lrngpt.experiments.budget.plan_budget", _stub_plan())
        m.setattr("lrngpt.experiments.figures.figure_files", _quick_figures)
        assert main(["-q", *argv, "--minutes", "25", "--out", str(d)]) == 0
    (d / "runs" / "d32-s1337-t2" / "summary.json").unlink()  # killed after its last checkpoint
    return d, argv


def _copy(src: Path, t: Path) -> Path:
    return Path(shutil.copytree(src, t / src.name))


def _fifo_at(path: Path) -> Path:
    if path.exists():
        path.unlink()
    os.mkfifo(path)
    return path


def _cut(t: Path, mlp_run: Path, n: int) -> Path:
    d = Path(shutil.copytree(mlp_run, t / f"cut{n}"))
    (d / "ckpt_last.pt").write_bytes((d / "ckpt_last.pt").read_bytes()[:n])
    return d


def _raced_plan(t: Path, budget_sweep, monkeypatch, **_) -> Path:
    """Two `lrn sweep --minutes 25` at once: the other one writes its plan while this one is timing."""
    src, _ = budget_sweep
    out = t / "raced"
    other = json.loads((src / "sweep.json").read_text())

    def plan(*args, **kwargs):
        out.mkdir()
        (out / "sweep.json").write_text(json.dumps(other))
        return _stub_plan(steps=3, widths=(4, 8))(*args, **kwargs)

    monkeypatch.setattr("lrngpt.experiments.budget.plan_budget", plan)
    return out


def _damaged_optimizer(t: Path, finished_sweep, **_) -> Path:
    import torch

    d = _copy(finished_sweep[0], t)
    point = next((d / "runs").iterdir())
    (point / "summary.json").unlink()
    ckpt = torch.load(point / "ckpt_last.pt", weights_only=True)
    ckpt["optimizer"] = {"state": 5, "param_groups": []}
    torch.save(ckpt, point / "ckpt_last.pt")
    return d


def _changed_corpus(t: Path, mlp_run: Path, text_corpus: str, **_) -> Path:
    from lrngpt.runconfig.schema import load_config
    from lrngpt.training.trainer import train_run

    corpus = t / "corpus.txt"
    corpus.write_text(Path(text_corpus.removeprefix("text:")).read_text())
    train_run(load_config("mlp-tiny", [f"data.corpus=text:{corpus}", "data.vocab_size=300", "train.device=cpu",
                                   "train.steps=2", "train.eval_every=1", "train.eval_tokens=300",
                                   "train.train_eval_tokens=300"]), t / "r", progress=False, log=lambda m: None)
    corpus.write_text(corpus.read_text().replace("cat", "cow"))
    return t / "r"


def _unrecorded(t: Path, mlp_run: Path, **_) -> Path:
    d = _copy(mlp_run, t)
    (d / ".lrn-output").unlink()
    return d


def _edited_config(t: Path, mlp_run: Path, **_) -> Path:
    d = _copy(mlp_run, t)
    (d / "config.json").write_text((d / "config.json").read_text() + "\n")
    return d


def _in_run(name: str, make):
    def setup(t: Path, mlp_run: Path, **_) -> Path:
        d = _copy(mlp_run, t)
        make(d / name)
        return d
    return setup


def _in_sweep(name: str, make):
    def setup(t: Path, finished_sweep, **_) -> Path:
        d = _copy(finished_sweep[0], t)
        make(d / name)
        return d
    return setup


def _prepared(t: Path, text_corpus: str, **_) -> Path:
    assert main(["-q", "data", "prepare", "--corpus", text_corpus, "--vocab-size", "300", "--out", str(t / "p")]) == 0
    return t / "p"


FIFO = _fifo_at
DEV_LINK = lambda p: p.symlink_to("/dev/zero")  # noqa: E731
B = ["sweep", "embed-dim", "--set", "data.corpus={corpus}", *BUDGET_SETS]
TINY_RUN = ["--config", "mlp-tiny", "--set", "data.corpus={corpus}", "--set", "data.vocab_size=300"]
SW = ["sweep", "embed-dim", "--scale", "tiny", "--axis", "model.n_embd=8", "--set", "data.corpus={corpus}",
      "--set", "data.vocab_size=300", "--set", "train.steps=2"]

# case -> (make {x}, argv, what the one line must say, what it must not say)
ADVICE_WALK = {
    "a budgeted sweep run again with another --minutes, 3 of 4 finished":
        (lambda t, budget_sweep, **_: _copy(budget_sweep[0], t), [*B, "--minutes", "10", "--out", "{x}"],
         ["3 of 4 points finished", "with --minutes 25 (or without --minutes) to resume it", "another --out"],
         ["delete", "remove"]),
    "its --dry-run says what the real run would do":
        (lambda t, budget_sweep, **_: _copy(budget_sweep[0], t), [*B, "--minutes", "10", "--out", "{x}", "--dry-run"],
         ["3 of 4 points finished", "to resume it"], ["delete", "remove"]),
    "two budgeted sweeps started at once": (_raced_plan, [*B, "--minutes", "25", "--out", "{x}"],
                                            ["another `lrn sweep embed-dim --minutes 25`", "run the same command again"],
                                            ["delete", "remove"]),
    "another --scale over a budgeted sweep": (lambda t, budget_sweep, **_: _copy(budget_sweep[0], t),
                                              [*SW, "--out", "{x}"], ["holds a different sweep", "sweep.json"],
                                              ["delete", "remove"]),
    "a damaged point of a sweep (lrn sweep has no --force)":
        (_damaged_optimizer, [*SW, "--out", "{x}"], ["cannot be resumed", "run the same `lrn sweep` command again"],
         ["delete"]),
    "train into a sweep": (lambda t, finished_sweep, **_: finished_sweep[0], ["train", *TINY_RUN, "--out", "{x}"],
                           ["holds lrn's sweep"], ["did not write"]),
    "train --force into an HF export": (lambda t, gpt_export, **_: gpt_export,
                                        ["train", *TINY_RUN, "--out", "{x}", "--force"],
                                        ["holds lrn's Hugging Face export"], ["did not write"]),
    "data prepare --force into a run": (lambda t, mlp_run, **_: mlp_run, ["data", "prepare", "--corpus", "{corpus}",
                                                                          "--vocab-size", "290", "--out", "{x}",
                                                                          "--force"], ["holds lrn's run"],
                                        ["did not write"]),
    "export --force into prepared data": (_prepared, ["export", "{gpt_run}", "--out", "{x}", "--force"],
                                          ["holds lrn's prepared data"], ["did not write"]),
    "embed export into an HF export": (lambda t, gpt_export, **_: gpt_export,
                                               ["embed", "export", "{mlp_run}", "--out", "{x}"],
                                               ["holds lrn's Hugging Face export"], ["did not write"]),
    "a sweep into a run": (lambda t, mlp_run, **_: mlp_run, [*SW, "--out", "{x}"], ["holds no sweep", "lrn's run"],
                           ["did not write"]),
    "import-gpt2 --force into a sweep": (lambda t, finished_sweep, **_: finished_sweep[0],
                                         ["import-gpt2", "{gpt_export}", "--out", "{x}", "--force"],
                                         ["holds lrn's sweep"], ["did not write"]),
    "tokenizer train --force into a sweep": (lambda t, finished_sweep, **_: finished_sweep[0],
                                             ["tokenizer", "train", "--corpus", "{corpus}", "--vocab-size", "280",
                                              "--out", "{x}", "--force"], ["lies inside the lrn sweep"],
                                             ["did not write"]),
    "a report over a sweep's lines.txt": (lambda t, finished_sweep, **_: finished_sweep[0],
                                          ["report", "{x}", "--out", "{x}/lines.txt"],
                                          ["lies inside the lrn sweep"], ["did not write it"]),
    "train --force over a run whose record is gone": (_unrecorded, ["train", *TINY_RUN, "--out", "{x}", "--force"],
                                                      ["files lrn did not write", "with or without --force"],
                                                      ["use --force", "add --force"]),
    "train over a run whose record is gone": (_unrecorded, ["train", *TINY_RUN, "--out", "{x}"],
                                              ["files lrn did not write"], ["use --force", "add --force"]),
    "train --force over a run whose config.json was edited":
        (_edited_config, ["train", *TINY_RUN, "--out", "{x}", "--force"],
         ["config.json lrn may not remove", "changed since lrn wrote it"], ["use --force", "add --force"]),
    "a FIFO as the corpus": (lambda t, **_: _fifo_at(t / "c.txt"),
                             ["data", "prepare", "--corpus", "text:{x}", "--vocab-size", "300"], ["special file"],
                             ["no such file"]),
    "/dev/zero as the corpus": (lambda t, **_: Path("/dev/zero"),
                                ["data", "prepare", "--corpus", "text:{x}", "--vocab-size", "300"],
                                ["special file"], ["no such file"]),
    "a broken link as the corpus": (lambda t, **_: (t / "c.txt").symlink_to(t / "gone.txt") or t / "c.txt",
                                    ["data", "prepare", "--corpus", "jsonl:{x}", "--vocab-size", "300"],
                                    ["corpus file", "no such file"], []),
    "a link to /dev/zero as the config": (lambda t, **_: DEV_LINK(t / "c.json") or t / "c.json",
                                          ["train", "--config", "{x}", "--dry-run"], ["special file"],
                                          ["not valid JSON"]),
    "a FIFO named x.yaml as the config": (lambda t, **_: _fifo_at(t / "x.yaml"), ["config", "show", "{x}"],
                                          ["special file"], []),
    "a FIFO as the categories file": (lambda t, **_: _fifo_at(t / "cats.json"),
                                      ["embed", "explore", "{mlp_run}", "--out", "{t}/e.html", "--categories", "{x}"],
                                      ["special file"], ["names no category"]),
    "/dev/zero as the categories file": (lambda t, **_: Path("/dev/zero"),
                                         ["embed", "explore", "{mlp_run}", "--out", "{t}/e.html", "--categories",
                                          "{x}"], ["special file"], []),
    "a FIFO as a tokenizer": (lambda t, **_: _fifo_at(t / "tokenizer.json"), ["tokenizer", "show", "{x}", "hi"],
                              ["special file"], ["not a valid tokenizer"]),
    "a FIFO as a run's checkpoint": (_in_run("ckpt_last.pt", FIFO), ["eval", "{x}"], ["special file"], []),
    "a link to /dev/zero as a run's checkpoint": (_in_run("ckpt_last.pt", lambda p: p.unlink() or DEV_LINK(p)),
                                                  ["eval", "{x}"], ["special file"], []),
    "a FIFO as a run's metrics.jsonl": (_in_run("metrics.jsonl", FIFO), ["report", "{x}", "--out", "{t}/r.html"],
                                        ["special file"], []),
    "a FIFO as sweep.json": (_in_sweep("sweep.json", FIFO), ["report", "{x}", "--out", "{t}/r.html"],
                             ["special file"], ["no sweep.json"]),
    "a FIFO as the sweep file": (lambda t, **_: _fifo_at(t / "grid.json"), ["sweep", "{x}", "--out", "{t}/sw"],
                                 ["special file"], ["does not exist"]),
    "a FIFO as an import's weights": (lambda t, gpt_export, **_: _fifo_at(_copy(gpt_export, t) / "model.safetensors")
                                      .parent, ["import-gpt2", "{x}", "--out", "{t}/imported"], ["special file"],
                                      ["has no model.safetensors"]),
    "a FIFO as an import's config.json": (lambda t, gpt_export, **_: _fifo_at(_copy(gpt_export, t) / "config.json")
                                          .parent, ["import-gpt2", "{x}", "--out", "{t}/imported"], ["special file"],
                                          ["has no config.json"]),
    "a FIFO where a report would go": (lambda t, **_: _fifo_at(t / "page.html"),
                                       ["report", "{mlp_run}", "--out", "{x}"],
                                       ["is a special file (a pipe, a device or a socket), not a file lrn wrote"], ["--force"]),
    "a checkpoint cut at 5,000 bytes (eval)": (lambda t, mlp_run, **_: _cut(t, mlp_run, 5000), ["eval", "{x}"],
                                               ["truncated or corrupted"], []),
    "a checkpoint cut at 20,000 bytes (resume)": (lambda t, mlp_run, **_: _cut(t, mlp_run, 20000),
                                                  ["train", "--out", "{x}", "--resume", "--steps", "4"],
                                                  ["truncated or corrupted"], []),
    "a checkpoint cut at 5,000 bytes (embed export)": (lambda t, mlp_run, **_: _cut(t, mlp_run, 5000),
                                                       ["embed", "export", "{x}", "--out", "{t}/ee"],
                                                       ["truncated or corrupted"], []),
    "eval after the corpus file changed": (_changed_corpus, ["eval", "{x}"],
                                           ["the content of text:", "changed since the run", "--corpus"],
                                           ["another tokenizer"]),
    "--resume --extend --set train.steps below the checkpoint's step":
        (lambda t, mlp_run, **_: _copy(mlp_run, t), ["train", "--out", "{x}", "--resume", "--extend", "--set",
                                                     "train.steps=1"], ["train.steps=1", "--set train.steps=2"],
         ["--steps"]),
}


@contextlib.contextmanager
def _never_waits_on_a_fifo(t: Path):
    """A command that opens a FIFO of the case for reading gets end-of-file a moment later, so a wrong
    case fails instead of hanging the suite; `opened` counts such opens (each is a defect)."""
    import threading

    fifos = [p for p in t.rglob("*") if p.is_fifo()]
    opened, stop = [], threading.Event()

    def unblock():
        while not stop.wait(0.5):
            for p in fifos:
                try:
                    os.close(os.open(p, os.O_WRONLY | os.O_NONBLOCK))  # succeeds only with a reader waiting
                    opened.append(p)
                except OSError:
                    pass

    thread = threading.Thread(target=unblock, daemon=True)
    thread.start()
    try:
        yield opened
    finally:
        stop.set()
        thread.join()


@contextlib.contextmanager
def _bounded_memory(extra: int = 3 << 30):
    """Address space capped at what the process holds now + `extra`: a reader of /dev/zero fails, never
    takes the machine (it once read 21 GB)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as f:
        now = int(f.read().split()[0]) * resource.getpagesize()
    cap = now + extra if hard == resource.RLIM_INFINITY else min(hard, now + extra)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


FIXTURES = ("mlp_run", "gpt_export", "text_corpus", "finished_sweep", "budget_sweep")
PLACES = {"{mlp_run}": "mlp_run", "{gpt_export}": "gpt_export", "{gpt_run}": "gpt_export", "{corpus}": "text_corpus"}


@pytest.mark.parametrize("case", ADVICE_WALK)
def test_every_refusal_gives_advice_that_fits_what_it_found(case, tmp_path, capsys, request, monkeypatch):
    make, argv, needles, never = ADVICE_WALK[case]
    params = make.__code__.co_varnames[:make.__code__.co_argcount]
    names = {n for n in FIXTURES if n in params} | {v for k, v in PLACES.items() if any(k in a for a in argv)}
    fx = {n: request.getfixturevalue(n) for n in sorted(names)}
    if {"budget_sweep", "finished_sweep"} & names:  # the summary's figures: bytes in no time, owned the same
        monkeypatch.setattr("lrngpt.experiments.figures.figure_files", _quick_figures)
    x = make(tmp_path, **{n: fx[n] for n in params if n in fx},
             **({"monkeypatch": monkeypatch} if "monkeypatch" in params else {}))
    fill = {"x": x, "t": tmp_path, "corpus": fx.get("text_corpus"), "mlp_run": fx.get("mlp_run"),
            "gpt_export": fx.get("gpt_export"), "gpt_run": fx["gpt_export"].parent / "run" if "gpt_export" in fx else None}
    argv = [a.format(**fill) for a in argv]
    watched = x if isinstance(x, Path) and x.is_dir() and not x.is_symlink() else None
    before = _tree(watched) if watched else None
    with _never_waits_on_a_fifo(tmp_path) as opened, _bounded_memory():
        line = one_line(lrn(capsys, *argv), 2, *needles)
    assert not opened, f"{case}: opened a FIFO for reading (it would wait for ever)"
    assert wrong_options(argv, line) == [], line
    assert not [w for w in never if w.lower() in line.lower()], line
    assert "delete it" not in line and not line.rstrip().endswith("Invalid argument"), line
    if watched:
        assert _tree(watched) == before, f"{case}: the refusal changed {watched}"


def _tree(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): (b"<fifo>" if p.is_fifo() else p.read_bytes() if p.is_file() else b"<dir>")
            for p in sorted(d.rglob("*")) if not p.name.startswith(".lrn-lock")}


def test_a_budgeted_sweep_started_twice_shares_its_points_and_resumes_with_its_own_minutes(budget_sweep, tmp_path,
                                                                                            capsys, monkeypatch):
    """Another process training a point: this one leaves it and says so; the dry run of the same
    command shows what the real run then does; the real run finishes the point."""
    from lrngpt.store.rundir import RunDir

    d = _copy(budget_sweep[0], tmp_path)
    argv = [a.format(corpus=request_corpus(budget_sweep)) for a in budget_sweep[1]] + ["--minutes", "25", "--out", d]
    monkeypatch.setattr("lrngpt.experiments.figures.figure_files", _quick_figures)
    busy = RunDir(d / "runs" / "d32-s1337-t2").lock()  # flock per open file: a second writer, as another process
    try:
        code, out, err = lrn(capsys, *argv, "--json")
    finally:
        busy.unlock()
    said = [line for line in err.splitlines() if "d32-s1337-t2" in line]
    assert code == 0 and any("another process is training it" in line for line in said), err
    assert json.loads(out)["busy"] == ["d32-s1337-t2"] and len(json.loads(out)["rows"]) == 3
    code, out, _ = lrn(capsys, *argv, "--dry-run", "--json")
    states = {p["name"]: p["state"] for p in json.loads(out)["points"]}
    assert code == 0 and sorted(states.values()) == ["finished", "finished", "finished", "partial"]
    code, out, _ = lrn(capsys, *argv, "--json")
    assert code == 0 and json.loads(out)["trained"] == ["d32-s1337-t2"] and len(json.loads(out)["rows"]) == 4


def request_corpus(budget_sweep) -> str:
    """The corpus the budget sweep was made with (its argv holds it)."""
    return next(a.split("=", 1)[1] for a in budget_sweep[1] if a.startswith("data.corpus="))


def test_a_config_named_x_yaml_is_read_as_yaml(tmp_path, capsys):
    pytest.importorskip("ruamel.yaml")
    f = tmp_path / "x.YAML"
    f.write_text("model_type: mlp\nmodel:\n  n_embd: 24\n")
    code, out, err = lrn(capsys, "config", "show", f, "--json")
    assert code == 0, err
    assert '"model.n_embd"' in out and "24" in out


def test_the_advice_for_a_damaged_summary_json_works_when_followed(mlp_run, tmp_path, capsys):
    d = _copy(mlp_run, tmp_path)
    doc = json.loads((d / "summary.json").read_text())
    del doc["val_bpb"]
    (d / "summary.json").write_text(json.dumps(doc))
    line = one_line(lrn(capsys, "report", d, "--out", tmp_path / "r.html"), 2, "move it away", "--resume")
    assert "delete" not in line and wrong_options(["train"], re.search(r"`([^`]*)`", line)[1]) == []
    (d / "summary.json").rename(tmp_path / "summary.damaged.json")
    assert lrn(capsys, "-q", "train", "--out", d, "--resume")[0] == 0
    assert json.loads((d / "summary.json").read_text())["val_bpb"] is not None


# ---- trackers: every misconfiguration is exit 2 and one line, in bounded time; a failed start leaves
# no run behind that would need --force ----------------------------------------------------------------

def _train_argv(text_corpus: str, out: Path, logger: str) -> list:
    return ["train", "--config", "mlp-tiny", "--set", f"data.corpus={text_corpus}", *TINY,
            "--set", f"train.logger={logger}", "--out", out]


@pytest.fixture
def no_wandb_login(tmp_path, monkeypatch):
    """W&B with no key anywhere it looks (the environment, ~/.netrc, its settings file)."""
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.setenv("NETRC", str(tmp_path / "no-netrc"))
    monkeypatch.setenv("WANDB_CONFIG_DIR", str(tmp_path / "wandb-config"))
    monkeypatch.setenv("WANDB_DIR", str(tmp_path / "wandb-home"))
    monkeypatch.setenv("WANDB_SILENT", "true")


TRACKER_ENV = {
    "MLFLOW_TRACKING_URI=/dev/null/x": ("mlflow", {"MLFLOW_TRACKING_URI": "/dev/null/x"}, "MLFLOW_ALLOW_FILE_STORE"),
    "MLFLOW_TRACKING_URI=/dev/null/x, file store allowed":
        ("mlflow", {"MLFLOW_TRACKING_URI": "/dev/null/x", "MLFLOW_ALLOW_FILE_STORE": "true"}, "not a directory"),
    "MLFLOW_TRACKING_URI=sqlite:////dev/null/x.db":
        ("mlflow", {"MLFLOW_TRACKING_URI": "sqlite:////dev/null/x.db"}, "MLFLOW_TRACKING_URI"),
    "WANDB_MODE=online without a key": ("wandb", {"WANDB_MODE": "online"}, "wandb login"),
    "WANDB_MODE unset without a key": ("wandb", {"WANDB_MODE": None}, "WANDB_API_KEY"),
    "WANDB_MODE=bogus": ("wandb", {"WANDB_MODE": "bogus"}, "WANDB_MODE='bogus' is not a W&B setting"),
    "WANDB_API_KEY malformed": ("wandb", {"WANDB_MODE": "online", "WANDB_API_KEY": "x y"}, "WANDB_API_KEY"),
}


@pytest.mark.parametrize("case", TRACKER_ENV)
def test_a_tracker_misconfigured_in_the_environment_exits_2_before_any_work(case, text_corpus, tmp_path, capsys,
                                                                           monkeypatch, no_wandb_login):
    logger, env, needle = TRACKER_ENV[case]
    pytest.importorskip(logger)
    for key, value in env.items():
        if value is None:
            monkeypatch.delenv(key, raising=False)
        else:
            monkeypatch.setenv(key, value)
    if logger == "mlflow" and "sqlite" in env["MLFLOW_TRACKING_URI"]:
        pytest.importorskip("sqlalchemy")
    line = one_line(lrn(capsys, *_train_argv(text_corpus, tmp_path / "run", logger)), 2, f"train.logger {logger}",
                    needle)
    assert "\n" not in line and not (tmp_path / "run").exists()  # refused before the directory was taken


def test_mlflow_as_a_database_without_sqlalchemy_says_what_to_install(text_corpus, tmp_path, capsys, monkeypatch):
    pytest.importorskip("mlflow")
    monkeypatch.setitem(sys.modules, "sqlalchemy", None)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    one_line(lrn(capsys, *_train_argv(text_corpus, tmp_path / "run", "mlflow")), 2, "SQLAlchemy",
             "pip install 'lrngpt[mlflow]'")
    assert not (tmp_path / "run").exists()


def _silent_server():
    """A port that takes connections and never answers (a hung tracking server)."""
    import socket

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    return srv


def _closed_port() -> int:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.mark.parametrize("kind", ["refused", "silent"])
def test_an_unreachable_mlflow_server_is_exit_2_within_seconds(kind, text_corpus, tmp_path, capsys, monkeypatch):
    import time

    pytest.importorskip("mlflow")
    srv = _silent_server()
    port = srv.getsockname()[1] if kind == "silent" else _closed_port()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "1")  # MLflow's own setting, honoured (lrn's default: 10 s)
    t0 = time.monotonic()
    try:
        line = one_line(lrn(capsys, *_train_argv(text_corpus, tmp_path / "run", "mlflow")), 2, "train.logger mlflow",
                        f"127.0.0.1:{port}", "sqlite:///mlflow.db")
    finally:
        srv.close()
    assert time.monotonic() - t0 < 30, line  # MLflow's defaults: 120 s a request, 7 retries
    assert not (tmp_path / "run").exists()  # the run it started (a checkpoint at step 0) was taken back


def test_an_unreachable_wandb_server_is_exit_2_within_its_timeout(text_corpus, tmp_path, capsys, monkeypatch,
                                                                 no_wandb_login):
    import time

    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "online")
    monkeypatch.setenv("WANDB_API_KEY", "a" * 40)
    monkeypatch.setenv("WANDB_BASE_URL", f"http://127.0.0.1:{_closed_port()}")
    monkeypatch.setenv("WANDB_INIT_TIMEOUT", "1.5")
    t0 = time.monotonic()
    one_line(lrn(capsys, *_train_argv(text_corpus, tmp_path / "run", "wandb")), 2, "train.logger wandb",
             "did not start", "WANDB_MODE=offline")
    assert time.monotonic() - t0 < 60  # W&B's default: 90 s
    assert not (tmp_path / "run").exists()


@pytest.fixture(scope="module")
def resumable_run(text_corpus, tmp_path_factory):
    """A run stopped at step 2 of 4 (a checkpoint there), with csv and tensorboard trackers."""
    from lrngpt.runconfig.schema import load_config
    from lrngpt.training.trainer import train_run

    d = tmp_path_factory.mktemp("resumable") / "run"
    logger = "csv,tensorboard" if _has("tensorboard") else "csv"
    train_run(load_config("mlp-tiny", [f"data.corpus={text_corpus}", "data.vocab_size=300", "train.device=cpu",
                                   "train.steps=4", "train.eval_every=2", "train.eval_tokens=300",
                                   "train.train_eval_tokens=300", f"train.logger={logger}"]),
          d, stop_at=2, progress=False, log=lambda m: None)
    return d


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _break_state(text: str):
    def make(d: Path) -> None:
        (d / "trackers.json").write_text(text)
    return make


def _replace_with(name: str, kind: str):
    def make(d: Path) -> None:
        shutil.rmtree(d / name, ignore_errors=True)
        (d / name).unlink(missing_ok=True)
        if kind == "dir":
            (d / name).mkdir()
        else:
            (d / name).write_text("not a directory")
    return make


TRACKER_FILES = {
    "trackers.json a string": ("csv", _break_state('"a string"'), "a JSON str, not an object"),
    "trackers.json a list": ("csv", _break_state("[1, 2]"), "a JSON list, not an object"),
    "trackers.json wandb a string": ("csv", _break_state('{"wandb": "abc"}'), "wandb must be an object"),
    "trackers.json wandb a list": ("csv", _break_state('{"wandb": ["abc"]}'), "wandb must be an object"),
    "trackers.json id a number": ("csv", _break_state('{"wandb": {"id": 12}}'), "wandb.id must be a run id"),
    "trackers.json ../ in an id": ("csv", _break_state('{"wandb": {"id": "../../../etc/x"}}'), "wandb.id must be"),
    "trackers.json ../ in an MLflow id": ("csv", _break_state('{"mlflow": {"run_id": "../x"}}'), "mlflow.run_id"),
    "trackers.json a 5 MB id": ("csv", _break_state(json.dumps({"wandb": {"id": "a" * 5_000_000}})),
                                "not the small file lrn writes"),
    "trackers.json not JSON": ("csv", _break_state('{"wandb": '), "not valid JSON"),
    "trackers.json a negative finished step": ("csv", _break_state('{"finished": -3}'), "finished must be a step"),
    "metrics.csv a directory": ("csv", _replace_with("metrics.csv", "dir"), "is a directory"),
    "RUN/tensorboard a file": ("tensorboard", _replace_with("tensorboard", "file"), "is a file"),
}


@pytest.mark.parametrize("case", TRACKER_FILES)
def test_a_broken_tracker_file_in_a_run_is_exit_2_naming_it_and_the_fix(case, resumable_run, tmp_path, capsys):
    logger, make, needle = TRACKER_FILES[case]
    pytest.importorskip(EXTRA_MODULE.get(logger, "csv"))
    d = Path(shutil.copytree(resumable_run, tmp_path / "run"))
    make(d)
    line = one_line(lrn(capsys, "train", "--out", d, "--resume", "--set", f"train.logger={logger}"), 2, needle)
    assert str(d) in line and len(line) < 400
    assert ("remove" in line or "move" in line or "fix" in line) and wrong_options(["train"], line) == []


EXTRA_MODULE = {"tensorboard": "tensorboard", "csv": "csv"}


def test_tensorboards_writer_failing_on_an_immutable_directory_is_one_line(resumable_run, tmp_path, capsys):
    pytest.importorskip("tensorboard")
    d = Path(shutil.copytree(resumable_run, tmp_path / "run"))
    if subprocess.run(["chattr", "+i", str(d / "tensorboard")], capture_output=True).returncode != 0:
        pytest.skip("chattr +i needs root and a filesystem that has the attribute")
    try:
        result = lrn(capsys, "train", "--out", d, "--resume", "--set", "train.logger=tensorboard")
    finally:
        subprocess.run(["chattr", "-i", str(d / "tensorboard")], check=True)
    one_line(result, 2, "not permitted", str(d / "tensorboard"))
    assert "Exception in thread" not in result[2]  # (nothing from the writer's thread either)


def test_tensorboards_writer_raising_with_a_bytes_path_is_one_line(resumable_run, tmp_path, capsys, monkeypatch):
    """Its event-file writer names the file as bytes: lrn's handler reports it (it once failed on it, 102 lines)."""
    pytest.importorskip("tensorboard")
    import torch.utils.tensorboard

    d = Path(shutil.copytree(resumable_run, tmp_path / "run"))

    def refuse(log_dir, **kwargs):
        name = os.fsencode(log_dir) + b"/events.out.tfevents.\xff"
        raise PermissionError(errno.EPERM, "Operation not permitted", name)

    monkeypatch.setattr(torch.utils.tensorboard, "SummaryWriter", refuse)
    one_line(lrn(capsys, "train", "--out", d, "--resume", "--set", "train.logger=tensorboard"), 2,
             "not permitted", str(d / "tensorboard"))


@pytest.mark.parametrize("code", [errno.EPERM, errno.EACCES, errno.EROFS, errno.ENOSPC])
def test_the_error_handler_reports_an_oserror_with_a_bytes_path(code, capsys, monkeypatch):
    import lrngpt.cli.cmd_theory as theory

    def boom(args):
        raise OSError(code, os.strerror(code), b"/tmp/some\xffwhere/file.bin")

    monkeypatch.setattr(theory, "run_jl", boom)
    line = one_line(lrn(capsys, "theory", "jl", "--n", 10, "--eps", 0.5), 1 if code == errno.ENOSPC else 2)
    assert "/tmp/some" in line and "file.bin" in line


def test_a_missing_tracker_extra_leaves_no_run_behind(text_corpus, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "wandb", None)
    one_line(lrn(capsys, *_train_argv(text_corpus, tmp_path / "run", "wandb")), 2, "pip install 'lrngpt[wandb]'")
    assert not (tmp_path / "run").exists()
    (tmp_path / "mine").mkdir()  # a directory the user made: it stays, as empty as it was
    one_line(lrn(capsys, *_train_argv(text_corpus, tmp_path / "mine", "wandb")), 2, "pip install 'lrngpt[wandb]'")
    assert list((tmp_path / "mine").iterdir()) == []


def test_a_start_killed_at_once_is_started_again_without_force(text_corpus, tmp_path, capsys):
    from lrngpt.store.rundir import RunDir

    run = RunDir(tmp_path / "run")
    run.start()  # what a SIGKILL just after the start leaves: the marker (a lock file the OS released)
    (run.path / "metrics.jsonl").write_text("")
    run.unlock()
    assert lrn(capsys, *_train_argv(text_corpus, run.path, "csv"))[0] == 0
    assert (run.path / "summary.json").exists() and (run.path / "metrics.csv").exists()


# ---- 6. bounded parsing and hostile values: YAML, --set, corpora, huge values ------------------------
# Every case: exit 2, exactly one line on stderr (-q), no traceback, and the directory it ran in
# exactly as it was (no file written, none changed: sha256 of every file).

def _hashes(d: Path) -> dict[str, str]:
    import hashlib

    return {str(p.relative_to(d)): "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(d.rglob("*"))}


def refused(capsys, tmp_path: Path, argv: list, needle: str) -> str:
    """Exit 2 with one line holding `needle` (or one of its '|'-separated forms); nothing written."""
    before = _hashes(tmp_path)
    code, _, err = lrn(capsys, "-q", *argv)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err and "unexpected error" not in err, (code, err[-3000:])
    assert any(n.lower() in lines[0].lower() for n in needle.split("|")), lines[0]
    assert _hashes(tmp_path) == before
    return lines[0]


def _laughs(levels: int, width: int = 9) -> str:
    """The 'billion laughs': each level an anchored list of `width` aliases of the one before."""
    lines = [f"l0: &l0 [{', '.join(['lol'] * width)}]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + f"\nname: *l{levels - 1}\n"


def _nested_blocks(depth: int) -> str:
    return "".join(f"{'  ' * i}k{i}:\n" for i in range(depth)) + "  " * depth + "x: 1\n"


NINES = "9" * 5000
YAML_CASES = {  # file text -> what the line says
    "billion laughs, 9 levels of 9 aliases": (_laughs(9), "more than 10,000 values"),
    "billion laughs, 7 levels": (_laughs(7), "more than 10,000 values"),
    "billion laughs, 30 levels of 2": (_laughs(30, 2), "more than 10,000 values"),
    "laughs inside the train section": ("train:\n  a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n"
                                        + "".join(f"  {c}: &{c} [{', '.join([f'*{p}'] * 10)}]\n"
                                                  for p, c in zip("abcde", "bcdef", strict=True)), "more than 10,000 values"),
    "an alias that holds itself": ("name: &a [1, *a]\n", "name[1][1][1]"),
    "a mapping alias that holds itself": ("name: &m {x: *m}\n", "name.x.x.x"),
    "an alias with no anchor": ("name: *nowhere\n", "undefined alias 'nowhere'"),
    "flow lists 100,000 deep": ("name: " + "[" * 100_000 + "]" * 100_000 + "\n", "nested more than 32|nesting depth"),
    "flow lists 40 deep": ("name: " + "[" * 40 + "]" * 40 + "\n", "nested more than 32 deep"),
    "flow mappings 40 deep": ("name: " + "{a: " * 40 + "1" + "}" * 40 + "\n", "nested more than 32 deep"),
    "block mappings 40 deep": (_nested_blocks(40), "nested more than 32 deep"),
    "block lists 40 deep": ("name:\n" + "".join(f"{'  ' * i}-\n" for i in range(40)) + "  " * 40 + "- 1\n",
                            "nested more than 32 deep"),
    "an alias nested past the depth limit": ("a: &a " + "[" * 20 + "1" + "]" * 20 + "\nname: " + "[" * 20 + "*a"
                                             + "]" * 20 + "\n", "nested more than 32 deep"),
    "10,001 values in a list": ("name: [" + ", ".join(["1"] * 10_001) + "]\n", "more than 10,000 values"),
    "a 5,000-digit steps": (f"train:\n  steps: {NINES}\n", "5,000 digits"),
    "a 10,001-digit seed": ("train:\n  seed: " + "9" * 10_001 + "\n", "10,001 digits"),
    "a negative 5,000-digit seed": (f"train:\n  seed: -{NINES}\n", "5,000 digits"),
    "a 5,000-digit integer in a list": (f"name: [{NINES}]\n", "5,000 digits"),
    "a 5,000-digit integer as a quoted !!int": (f"train:\n  seed: !!int '{NINES}'\n", "5,000 digits"),
    "a 200-digit hex seed": ("train:\n  seed: 0x" + "f" * 200 + "\n", "an integer of 241 digits"),
    "a 23-digit seed": ("train:\n  seed: " + "9" * 23 + "\n", "fit in 64 bits"),
    "a 5,000-digit float lr": (f"train:\n  lr: {NINES}.5\n", "finite"),
    "!!binary": ("name: !!binary aGVsbG8=\n", "name is bytes"),
    "!!set": ("name: !!set {a, b}\n", "name is a set"),
    "!!timestamp": ("name: !!timestamp 2020-01-01\n", "name is a python date"),
    "!!omap": ("name: !!omap [a: 1]\n", "name must be a string"),
    "!!pairs": ("name: !!pairs [a: 1]\n", "name must be a string"),
    "!!python/object": ("name: !!python/object:os.system {}\n", "constructor for the tag 'tag:yaml.org,2002:python/object:os.system'"),
    "!!python/name": ("name: !!python/name:os.system ''\n", "constructor for the tag 'tag:yaml.org,2002:python/name:os.system'"),
    "!!python/tuple": ("name: !!python/tuple [1, 2]\n", "tag 'tag:yaml.org,2002:python/tuple'"),
    "!!python/bytes": ("name: !!python/bytes aGk=\n", "tag 'tag:yaml.org,2002:python/bytes'"),
    "a local tag": ("name: !mine x\n", "!mine"),
    "a verbatim tag": ("name: !<tag:example.com,2024:x> x\n", "tag:example.com,2024:x"),
    "!!float on a word": ("train:\n  lr: !!float fast\n", "does not read as the type its tag gives (could not convert string to float: 'fast')"),
    "!!int on a word": ("train:\n  steps: !!int many\n", "does not read as the type its tag gives (invalid literal for int()"),
    "!!null on a word": ("name: !!null x\n", "name must be a string, got null"),
    "a repeated key": ("train:\n  steps: 1\n  steps: 2\n", '(line 3: found duplicate key "steps"'),
    "a repeated section": ("train:\n  steps: 1\ntrain:\n  lr: 0.1\n", 'duplicate key "train"'),
    "a repeated model_type": ("model_type: mlp\nmodel_type: gpt\n", 'duplicate key "model_type"'),
    "a repeated key in flow style": ("train: {steps: 1, steps: 2}\n", 'duplicate key "steps"'),
    "a key repeated by quoting": ("train:\n  steps: 1\n  'steps': 2\n", 'duplicate key "steps"'),
    "a number as a key": ("1: x\n", "the key 1 is a number, not a name"),
    "null as a key": ("~: x\n", "the key None is null, not a name"),
    "true as a key": ("true: x\n", "the key True is true/false, not a name"),
    "a float as a key": ("train:\n  1.5: x\n", "the key 1.5 is a number, not a name"),
    "a list as a key": ("? [a, b]\n: x\n", "is a list or object, not a name"),
    "two documents": ("train: {steps: 3}\n---\ntrain: {steps: 4}\n", "(line 2: found another document)"),
    "1:30 as steps": ("train:\n  steps: 1:30\n", 'must be an integer, got "1:30" (1:30 is a string in yaml 1.2'),
    "190:20:30 as steps": ("train:\n  steps: 190:20:30\n", 'got "190:20:30"'),
    "yes as compile": ("train:\n  compile: yes\n", 'must be true or false, got "yes" (yes, no, on and off are strings'),
    "on as compile": ("train:\n  compile: on\n", 'got "on" (yes, no, on and off'),
    "no as tf32": ("train:\n  tf32: no\n", 'got "no"'),
    "off as tf32": ("train:\n  tf32: off\n", 'got "off"'),
    "y as compile": ("train:\n  compile: y\n", 'got "y"'),
    "Yes as compile": ("train:\n  compile: Yes\n", 'got "yes"'),
    "a date as steps": ("train:\n  steps: 2020-01-01\n", "train.steps is a python date"),
    "a date-time as the seed": ("train:\n  seed: 2001-12-14t21:59:43.10-05:00\n", "train.seed is a python datetime"),
    "an old-style octal 0o-less 0777 vs mode": ("train:\n  steps: 0777x\n", 'got "0777x"'),
    ".nan as lr": ("train:\n  lr: .nan\n", "finite"),
    ".inf as lr": ("train:\n  lr: .inf\n", "finite"),
    "-.inf as weight_decay": ("train:\n  weight_decay: -.inf\n", "finite"),
    ".inf as steps": ("train:\n  steps: .inf\n", "must be an integer"),
    "a list at the top": ("- 1\n- 2\n", "must hold a mapping"),
    "a string at the top": ("hello\n", "must hold a mapping"),
    "a number at the top": ("17\n", "must hold a mapping"),
    "an empty file": ("", "got nothing"),
    "only a comment": ("# nothing here\n", "got nothing"),
    "only ---": ("---\n", "got nothing"),
    "an unclosed flow list": ("train:\n  steps: [1,\n  lr: 2\n", "is not valid yaml (line"),
    "a tab for indentation": ("train:\n\tsteps: 3\n", "is not valid yaml"),
    "an unclosed quote": ("name: 'abc\n", "is not valid yaml"),
    "a bad indentation": ("train:\n  steps: 3\n lr: 2\n", "is not valid yaml"),
    "not UTF-8": (b"train:\n  steps: \xff\xfe\n", "not utf-8"),
    "over the size limit": ("# " + "x" * (1 << 20) + "\n", "above the limit of 1,048,576"),
    "a section that is a list": ("train: [1, 2]\n", "section 'train'"),
    "a section that is null": ("data:\n", "section 'data'"),
    "a section that is a string": ("model: big\n", "section 'model'"),
    "name a list": ("name: [a]\n", "name must be a string"),
    "model_type a number": ("model_type: 1\n", "model_type must be"),
    "an unknown section": ("optim:\n  lr: 1\n", "unknown config section"),
    "an unknown key": ("train:\n  stepz: 3\n", "did you mean train.steps"),
    "a GPT key on an MLP": ("model:\n  n_head: 4\n", "model.n_head"),
}
YAML_ARGV = {"config show": ["config", "show", "{f}"], "train": ["train", "--config", "{f}", "--out", "{run}"]}
YAML_TABLE = [(c, k) for k in YAML_CASES for c in YAML_ARGV]


@pytest.mark.parametrize("command,case", YAML_TABLE, ids=[f"{c}:{k}" for c, k in YAML_TABLE])
def test_a_hostile_yaml_config_exits_2_with_one_line_and_writes_nothing(command, case, tmp_path, capsys):
    pytest.importorskip("ruamel.yaml")
    text, needle = YAML_CASES[case]
    f = tmp_path / "hostile.yaml"
    f.write_bytes(text if isinstance(text, bytes) else text.encode())
    argv = [a.format(f=f, run=tmp_path / "run") for a in YAML_ARGV[command]]
    refused(capsys, tmp_path, argv, needle)


JSON_CASES = {
    "config show --json output with no keys": ('{"keys": []}', "'keys' must be the list of {key, value} rows"),
    "a repeated key": ('{"train": {"steps": 1, "steps": 2}}', "'steps' appears twice"),
    "a repeated section": ('{"train": {}, "train": {"lr": 1}}', "'train' appears twice"),
    "a 5,000-digit integer": ('{"train": {"steps": ' + NINES + "}}", "5,000 digits"),
    "a negative 10,001-digit seed": ('{"train": {"seed": -' + "9" * 10_001 + "}}", "10,001 digits"),
    "lists 100,000 deep": ('{"name": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deep to read"),
    "lists 40 deep": ('{"name": ' + "[" * 40 + "]" * 40 + "}", "nested more than 32 deep"),
    "objects 40 deep": ('{"name": ' + '{"a": ' * 40 + "1" + "}" * 40 + "}", "nested more than 32 deep"),
    "10,001 values": ('{"name": [' + ", ".join(["1"] * 10_001) + "]}", "more than 10,000 values"),
    "over the size limit": ('{"name": "' + "x" * (1 << 20) + '"}', "above the limit of 1,048,576"),
    "NaN as lr": ('{"train": {"lr": NaN}}', "finite"),
    "Infinity as the seed": ('{"train": {"seed": Infinity}}', "train.seed must be an integer"),
    "a key row with a 5,000-digit value": ('{"keys": [{"key": "train.steps", "value": ' + NINES + "}]}", "5,000 digits"),
    "key rows repeating a key": ('{"keys": [{"key": "train.steps", "value": 1, "value": 2}]}', "'value' appears twice"),
    "a key row nested 40 deep": ('{"keys": [{"key": "name", "value": ' + "[" * 40 + "]" * 40 + "}]}",
                                 "nested more than 32 deep"),
}
JSON_TABLE = [(c, k) for k in JSON_CASES for c in YAML_ARGV]


@pytest.mark.parametrize("command,case", JSON_TABLE, ids=[f"{c}:{k}" for c, k in JSON_TABLE])
def test_a_hostile_json_config_exits_2_with_one_line_and_writes_nothing(command, case, tmp_path, capsys):
    text, needle = JSON_CASES[case]
    f = tmp_path / "hostile.json"
    f.write_text(text)
    refused(capsys, tmp_path, [a.format(f=f, run=tmp_path / "run") for a in YAML_ARGV[command]], needle)


SET_CASES = {  # --set KEY=VALUE -> what the line says
    "lists 40,000 deep": ("train.steps", "[" * 40_000 + "]" * 40_000, "nested too deep to read"),
    "lists 40 deep": ("train.steps", "[" * 40 + "]" * 40, "nested more than 32 deep"),
    "Python lists 40 deep": ("train.steps", "[" * 40 + "True" + "]" * 40, "nested more than 32 deep"),
    "a 10,001-digit integer": ("train.steps", "9" * 10_001, "10,001 digits"),
    "a negative 10,001-digit seed": ("train.seed", "-" + "9" * 10_001, "10,001 digits"),
    "10,001 digits with separators": ("train.steps", "1_" + "0" * 10_000, "10,001 digits"),
    "a 10,001-digit hex seed": ("train.seed", "0x" + "f" * 10_001, "10,001 digits"),
    "a 10,001-digit octal seed": ("train.seed", "0o" + "7" * 10_001, "10,001 digits"),
    "a 10,001-digit binary seed": ("train.seed", "0b" + "1" * 10_001, "10,001 digits"),
    "a 200-digit integer in a list": ("train.steps", "[" + "9" * 200 + "]", "200 digits"),
    "a 200-digit hex integer in a tuple": ("train.steps", "(0x" + "f" * 200 + ", 1)", "200 digits"),
    "a 10,001-digit float": ("train.lr", "9" * 10_001 + ".5", "finite"),
    "1e999": ("train.lr", "1e999", "finite"),
    "b'bytes'": ("train.steps", "b'bytes'", "is bytes"),
    "bytes as the name": ("name", "b'x'", "is bytes"),
    "bytes as model_type": ("model_type", "b'mlp'", "is bytes"),
    "bytes as the corpus": ("data.corpus", 'b"stories:5MB"', "is bytes"),
    "raw bytes": ("data.corpus", "rb'x'", "is bytes"),
    "bytes in a list": ("train.steps", "[b'x']", "is bytes"),
    "bytes in an object": ("train.steps", "{'a': b'x'}", "is bytes"),
    "a set": ("train.steps", "{1, 2}", "is a set"),
    "an empty set": ("train.steps", "set()", "is a set"),
    "a complex number": ("train.lr", "1j", "complex number"),
    "a complex sum": ("train.lr", "1+2j", "complex number"),
    "an Ellipsis": ("train.steps", "...", "ellipsis"),
    "a number as a key": ("train.steps", "{1: 2}", "the key 1 is a number"),
    "None as a key": ("train.steps", "{None: 2}", "the key None is null"),
    "a tuple as a key": ("train.steps", "{(1, 2): 3}", "the key (1, 2)"),
    "100,001 characters": ("name", "x" * 100_001, "above the limit of 100,000"),
    "a JSON object with a repeated key": ("train.steps", '{"a": 1, "a": 2}', "'a' appears twice"),
    "yes for a boolean": ("train.compile", "yes", 'got "yes" (yes, no, on and off'),
    "NaN": ("train.lr", "NaN", "finite"),
    "-Infinity": ("train.min_lr", "-Infinity", "finite"),
    "a huge seed": ("train.seed", "2**64", 'must be an integer, got "2**64"'),
}
SET_ARGV = {"config show": ["config", "show", "mlp-tiny"], "train": ["train", "--config", "mlp-tiny", "--out", "{run}"]}
SET_TABLE = [(c, k) for k in SET_CASES for c in SET_ARGV]


@pytest.mark.parametrize("command,case", SET_TABLE, ids=[f"{c}:{k}" for c, k in SET_TABLE])
def test_a_hostile_set_value_exits_2_with_one_line_and_writes_nothing(command, case, tmp_path, capsys):
    key, value, needle = SET_CASES[case]
    argv = [a.format(run=tmp_path / "run") for a in SET_ARGV[command]] + ["--set", f"{key}={value}"]
    refused(capsys, tmp_path, argv, needle)


def _gzip_members(path: Path, head: bytes, mib: int) -> str:
    """A .gz of `head` and then `mib` MiB of 'a' with no newline, as concatenated gzip members: a 1 GiB
    line in about 1 MB of file, written in milliseconds."""
    import gzip

    member = gzip.compress(b"a" * (1 << 20), 9)
    with open(path, "wb") as f:
        f.write(gzip.compress(head))
        for _ in range(mib):
            f.write(member)
    return str(path)


def _parquet(t: Path, texts: list[str], name: str = "good.parquet") -> Path:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = t / name
    pq.write_table(pa.table({"text": texts}), path, row_group_size=1000)
    return path


def _damaged_parquet(where: float, t: Path) -> str:
    """A Parquet file of 5 row groups with 256 bytes flipped at `where` of its length (inside the pages)."""
    path = _parquet(t, [f"document number {i} " * 20 for i in range(5000)])
    data = bytearray(path.read_bytes())
    start = int(len(data) * where)
    data[start:start + 256] = bytes(b ^ 0x5A for b in data[start:start + 256])
    path.write_bytes(bytes(data))
    return f"parquet:{path}"


def _file(kind: str, name: str, data: str | bytes):
    """make(t) for a corpus of one file: writes `data` to t/name, returns 'KIND:PATH'."""
    def make(t: Path) -> str:
        path = t / name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
        return f"{kind}:{t / name.split('/')[0] if '/' in name else path}"
    return make


def _records(*records) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def _nsmc(review: str) -> str:
    return "id\tdocument\tlabel\n" + f"1\t{review}\t1\n"


KB = 1 << 10
DEEP_JSON = "[" * 100_000 + "]" * 100_000
PARQUET_DAMAGE = "the file is damaged|cannot be read as parquet"
CORPUS_CASES = {  # make(tmp) -> corpus; the limits of lrngpt.corpora set for the case; what the line says
    "a 1 MB .gz JSONL holding one 1 GiB line": (
        lambda t: "jsonl:" + _gzip_members(t / "bomb.jsonl.gz", b'{"text": "', 1024), {"max_line_bytes": 1 << 20},
        "line 1 of the uncompressed text is longer than 1,048,576 bytes"),
    "a 1 MB .txt.gz holding one 1 GiB document": (
        lambda t: "text:" + _gzip_members(t / "bomb.txt.gz", b"", 1024), {"max_document_chars": 1 << 20},
        "document 1 (from 1) is longer than 1,048,576 characters"),
    "a long third document": (_file("text", "long.txt", "one<|endoftext|>two<|endoftext|>" + "x" * 8 * KB),
                              {"max_document_chars": 4 * KB}, "document 3 (from 1) is longer than 4,096 characters"),
    "a long document in a directory of files": (_file("text", "docs/b.txt", "y" * 8 * KB), {"max_document_chars": 4 * KB},
                                                "b.txt: document 1"),
    "a JSONL record with a text over the limit": (_file("jsonl", "big.jsonl", _records({"text": "ok"}, {"text": "x" * 8 * KB})),
                                                  {"max_document_chars": 4 * KB}, "line 2: 'text' is 8,192 characters long"),
    "a JSONL line over the limit after good ones": (_file("jsonl", "long.jsonl", _records(*[{"text": "a b"}] * 3) + "z" * 8 * KB),
                                                    {"max_line_bytes": 4 * KB}, "line 4 is longer than 4,096 bytes"),
    "a JSONL line nested 100,000 deep": (_file("jsonl", "deep.jsonl", '{"text": ' + DEEP_JSON + "}\n"), {},
                                         "line 1 nests lists or objects too deep to read"),
    "a JSONL line that is a list 100,000 deep": (_file("jsonl", "deeper.jsonl", DEEP_JSON + "\n"), {},
                                                 "too deep to read"),
    "a JSONL text that is a 5,000-digit number": (_file("jsonl", "n.jsonl", '{"text": ' + NINES + "}\n"), {},
                                                  "'text' is a number, not a string"),
    "a JSONL text that is a list": (_file("jsonl", "l.jsonl", _records({"text": ["a"]})), {},
                                    "'text' is a list, not a string"),
    "an NSMC line over the limit": (_file("nsmc", "ratings.txt", _nsmc("w" * 8 * KB)), {"max_line_bytes": 4 * KB},
                                    "line 2 is longer than 4,096 bytes"),
    "a Parquet file damaged at 1/5": (lambda t: _damaged_parquet(0.2, t), {}, PARQUET_DAMAGE),
    "a Parquet file damaged at 1/3": (lambda t: _damaged_parquet(0.33, t), {}, PARQUET_DAMAGE),
    "a Parquet file damaged at 1/2": (lambda t: _damaged_parquet(0.5, t), {}, PARQUET_DAMAGE),
    "a Parquet file damaged at 2/3": (lambda t: _damaged_parquet(0.66, t), {}, PARQUET_DAMAGE),
    "a Parquet file cut short": (lambda t: _cut_parquet(t), {}, "cannot be read as parquet"),
    "a Parquet cell over the limit": (lambda t: f"parquet:{_parquet(t, ['fine'] * 10 + ['q' * 8 * KB])}",
                                      {"max_document_chars": 4 * KB}, "row 10 (from 0): 'text' is 8,192 characters long"),
}


def _cut_parquet(t: Path) -> str:
    whole = _parquet(t, ["a b c"] * 100, "whole.parquet")
    cut = t / "cut.parquet"
    data = whole.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    whole.unlink()
    return f"parquet:{cut}"


@pytest.mark.parametrize("case", CORPUS_CASES)
def test_a_hostile_corpus_exits_2_with_one_line_and_prepares_nothing(case, tmp_path, capsys, monkeypatch):
    from lrngpt.corpora.base import LIMITS

    make, limits, needle = CORPUS_CASES[case]
    corpus = make(tmp_path)
    for name, value in limits.items():
        monkeypatch.setattr(LIMITS, name, value)
    refused(capsys, tmp_path, ["data", "prepare", "--corpus", corpus, "--vocab-size", 300,
                               "--out", tmp_path / "prepared"], needle)


HUGE = ["--set", "train.device=cpu"]
HUGE_CASES = {  # argv ({run}: a path inside the test's directory) -> what the line says
    "train.steps=99999999999999": (["train", "--config", "mlp-tiny", "--set", "train.steps=99999999999999", *HUGE,
                                    "--out", "{run}"], "would take about|years on cpu|more than train.max_days=7 days"),
    "train.steps at the 64-bit limit": (["train", "--config", "mlp-tiny", "--set", f"train.steps={2**63 - 1}", *HUGE,
                                         "--out", "{run}"], "raise train.max_days (0: no limit)"),
    "a GPT of 10**12 steps": (["train", "--config", "gpt-default", "--set", "train.steps=1000000000000", *HUGE,
                               "--set", "model.n_layer=1", "--set", "model.n_embd=16", "--set", "model.n_head=2",
                               "--set", "model.context_length=16", "--set", "train.batch_size=2", "--out", "{run}"],
                              "lower train.steps"),
    "a run past a one-second limit": (["train", "--config", "mlp-tiny", "--set", "train.steps=10000000",
                                       "--set", "train.max_days=0.00001", *HUGE, "--out", "{run}"],
                                      "more than train.max_days=1e-05 days"),
    "a sweep point of 99999999999999 steps": (["sweep", "embed-dim", "--scale", "tiny", "--axis", "model.n_embd=8",
                                               "--set", "train.steps=99999999999999", *HUGE, "--out", "{run}"],
                                              "point n_embd=8|point"),
    "train.max_days=-1": (["train", "--config", "mlp-tiny", "--set", "train.max_days=-1", "--out", "{run}"],
                          "train.max_days must not be negative"),
    "train.max_days=NaN": (["train", "--config", "mlp-tiny", "--set", "train.max_days=NaN", "--out", "{run}"], "finite"),
    "train.max_days=Infinity": (["train", "--config", "mlp-tiny", "--set", "train.max_days=Infinity", "--out", "{run}"],
                                "finite"),
    "doctor --probe-timeout=inf": (["doctor", "--probe-timeout=inf"], "finite number of seconds"),
    "doctor --probe-timeout=infinity": (["doctor", "--probe-timeout", "infinity"], "finite number of seconds"),
    "doctor --probe-timeout=1e309": (["doctor", "--probe-timeout", "1e309"], "finite number of seconds"),
    "doctor --probe-timeout=nan": (["doctor", "--probe-timeout", "nan"], "finite number of seconds"),
    "doctor --probe-timeout=-inf": (["doctor", "--probe-timeout=-inf"], "finite number of seconds"),
    "doctor --probe-timeout=0": (["doctor", "--probe-timeout", "0"], "positive"),
    "doctor --probe-timeout=1e300": (["doctor", "--probe-timeout", "1e300"], "up to 86,400"),
}


@pytest.mark.parametrize("case", HUGE_CASES)
def test_a_huge_value_exits_2_with_one_line_and_writes_nothing(case, tmp_path, capsys):
    argv, needle = HUGE_CASES[case]
    line = refused(capsys, tmp_path, [str(a).format(run=tmp_path / "run") for a in argv], needle)
    assert wrong_options(argv, line) == [], line


def test_the_new_hostile_tables_hold_at_least_150_cases():
    n = len(YAML_TABLE) + len(JSON_TABLE) + len(SET_TABLE) + len(CORPUS_CASES) + len(HUGE_CASES)
    assert n >= 150, n


LAUGHS_CHILD = """
import json, resource, sys, time
from pathlib import Path
from lrngpt.errors import UserError
from lrngpt.runconfig.yaml12 import load_yaml
load_yaml(Path(sys.argv[1]).read_text(), "small.yaml")  # the same-run reference: a small valid file
base, t0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.process_time()
try:
    load_yaml(Path(sys.argv[2]).read_text(), "laughs.yaml")
    said = None
except UserError as e:
    said = str(e)
print(json.dumps({"said": said, "seconds": time.process_time() - t0, "base_kb": base,
                  "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def test_a_billion_laughs_yaml_is_refused_within_a_time_and_memory_bound(tmp_path, capsys):
    """9 levels of 9 aliases (387,420,489 strings once expanded) in --config and config show: refused
    at once with a few MB: through lrn in-process (time, tracemalloc's peak) and the YAML reader in a
    child process (its peak RSS against the same process reading a small file first, C allocations
    included). Before, it printed nothing for 120 s (7 levels: 9 s and 789 MB)."""
    import time
    import tracemalloc

    pytest.importorskip("ruamel.yaml")
    f = tmp_path / "laughs.yaml"
    f.write_text(_laughs(9))
    for argv in (["config", "show", f], ["train", "--config", f, "--out", tmp_path / "run"]):
        lrn(capsys, "-q", *argv)  # once untraced: what it imports is not what is measured
        tracemalloc.start()
        t0 = time.process_time()  # CPU time: a bomb refused costs little of it, however busy the machine
        try:
            code, _, err = lrn(capsys, "-q", *argv)
            seconds, peak = time.process_time() - t0, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert code == 2 and "more than 10,000 values" in err and seconds < 5 and peak < 20e6, (code, err, seconds, peak)
    assert not (tmp_path / "run").exists()
    (tmp_path / "small.yaml").write_text("train:\n  steps: 3\n")
    r = subprocess.run([sys.executable, "-c", LAUGHS_CHILD, str(tmp_path / "small.yaml"), str(f)], capture_output=True,
                       text=True, timeout=HUNG, env={**os.environ, "PYTHONPATH": str(ROOT)})
    doc = json.loads(r.stdout.strip().splitlines()[-1])
    assert "more than 10,000 values" in doc["said"] and doc["seconds"] < 5, doc
    assert (doc["peak_kb"] - doc["base_kb"]) * 1024 < 20e6, doc  # the process's peak RSS grew by < 20 MB


def test_sigterm_during_yaml_parsing_interrupts_it(tmp_path, capsys, monkeypatch):
    """The YAML is read by ruamel.yaml's pure-Python parser, so a SIGTERM that arrives while it is read
    is handled there (exit 130, 'interrupted'), not after a C call that ignores it."""
    import signal

    pytest.importorskip("ruamel.yaml")
    from ruamel.yaml.composer import Composer as composer

    f = tmp_path / "long.yaml"
    f.write_text("name: [" + ", ".join(["x"] * 5000) + "]\n")
    real, sent, composed = composer.compose_node, [], []

    def compose_node(self, parent, index):
        composed.append(index)
        if len(composed) == 1000 and not sent:
            assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None)  # lrn's handler, never pytest's death
            sent.append(signal.SIGTERM)  # (before the kill: its handler raises as os.kill returns)
            os.kill(os.getpid(), signal.SIGTERM)
        return real(self, parent, index)

    monkeypatch.setattr(composer, "compose_node", compose_node)
    old = signal.signal(signal.SIGTERM, signal.SIG_DFL)  # main() installs its own handler in place of the default
    try:
        code, _, err = lrn(capsys, "config", "show", f)
    finally:
        signal.signal(signal.SIGTERM, old)
    assert sent and code == 130 and err.strip().splitlines() == ["lrn config: interrupted"], (code, err)


def test_train_with_huge_steps_plans_first_and_trains_when_the_limit_allows(text_corpus, tmp_path, capsys):
    argv = ["train", "--config", "mlp-tiny", "--set", f"data.corpus={text_corpus}", "--set", "data.vocab_size=300",
            "--set", "train.device=cpu", "--set", "train.steps=99999999999999", "--set", "train.eval_every=1",
            "--set", "train.eval_tokens=300", "--set", "train.train_eval_tokens=300"]
    line = refused(capsys, tmp_path, [*argv, "--out", tmp_path / "run"], "would take about")
    assert "99,999,999,999,999 steps of 8 x 64 tokens" in line and "a step)" in line
    code, _, err = lrn(capsys, *argv, "--set", "train.max_days=0", "--steps", 1, "--out", tmp_path / "run")
    assert code == 0, err  # no limit: trains (one step here); the estimate is logged only when it is timed


def test_a_long_run_that_the_limit_allows_logs_its_plan_before_training(tiny_config, tmp_path):
    from lrngpt.training.trainer import train_run

    class Enough(Exception):
        pass

    def stop(row):
        raise Enough  # the first metrics row (step 0): the plan was said before it

    logged = []
    with pytest.raises(Enough):
        train_run(tiny_config("train.steps=2000000", "train.max_days=0"), tmp_path / "run", log=logged.append,
              progress=False, on_metric=stop)
    plans = [m for m in logged if m.startswith("plan: ")]
    assert len(plans) == 1 and plans[0].startswith("plan: 2,000,000 steps of 8 x 64 tokens take about ")
    assert "on cpu (timed here: " in plans[0] and "max_days" not in plans[0]  # 0: no limit, none said
    assert logged.index(plans[0]) < next(i for i, m in enumerate(logged) if m.startswith("model "))


def test_sample_on_finite_but_huge_weights_exits_2_saying_what_is_wrong(mlp_run, tmp_path, capsys):
    import torch

    from lrngpt.store.checkpoint import load_checkpoint, save_checkpoint

    d = Path(shutil.copytree(mlp_run, tmp_path / "run"))
    ckpt = load_checkpoint(d / "ckpt_last.pt")
    for tensor in ckpt["model"].values():
        if tensor.is_floating_point():  # finite (float32 reaches 3.4e38), and of both signs: their products and
            tensor.copy_(torch.sign(tensor) * 3e38)  # sums are inf - inf = NaN
    assert all(torch.isfinite(t).all() for t in ckpt["model"].values())
    save_checkpoint(ckpt, d / "ckpt_last.pt")
    line = refused(capsys, tmp_path, ["sample", d, "--prompt", "Lily saw", "--max-new-tokens", 3],
                   "scores for the next token are not finite")
    assert "too large for float32" in line and "probability tensor" not in line


def test_sample_at_a_tiny_temperature_is_greedy_not_a_crash(mlp_run, capsys):
    argv = ["sample", mlp_run, "--prompt", "Lily saw", "--max-new-tokens", 12, "--no-stop", "--seed", 5]
    code, tiny, err = lrn(capsys, *argv, "--temperature", "1e-300")
    assert code == 0, err
    code, greedy, _ = lrn(capsys, *argv, "--top-k", 1)
    assert code == 0 and tiny == greedy


API_VALUES = {  # lrngpt.config(PRESET, **{key: value}) with a value no config holds -> what the UserError says
    "bytes as the name": ("name", b"x", "is bytes"),
    "a set": ("train.steps", {1, 2}, "is a set"),
    "a complex number": ("train.lr", 1j, "complex number"),
    "a 5,001-digit integer": ("train.steps", 10**5000, "5,001 digits"),
    "lists 40 deep": ("train.steps", functools.reduce(lambda v, _: [v], range(40), 1), "nested more than 32 deep"),
    "an object with a number as a key": ("train.steps", {1: 2}, "not a name"),
    "a list that holds itself": ("train.steps", (lambda v: v.append(v) or v)([]), "nested more than 32 deep"),
    "an Ellipsis": ("train.steps", ..., "ellipsis"),
}


@pytest.mark.parametrize("case", API_VALUES)
def test_a_hostile_value_through_the_python_api_is_a_user_error(case):
    import lrngpt

    key, value, needle = API_VALUES[case]
    with pytest.raises(lrngpt.UserError) as e:
        lrngpt.config("mlp-tiny", **{key: value})
    assert needle.lower() in str(e.value).lower() and "\n" not in str(e.value), str(e.value)


# ---- issue 29: a budget's timing record, a run's by-reads record, the API's minutes ------------------

def test_a_damaged_timing_record_is_named_in_one_line(tmp_path, capsys):
    from lrngpt.experiments.grid import resolve_sweep
    from lrngpt.experiments.sweepdir import SweepDir

    sweep = resolve_sweep("embed-dim", "budget", ["train.steps=10"], ["model.n_embd=4,8"])
    sweep.budget = {"minutes": 1.0, "sets": {"train.steps": 10}, "axes": {}, "est_seconds": 50.0,
                    "point_seconds": {p.name: 20.0 for p in sweep.points}}
    SweepDir(tmp_path / "sw").create_or_check(sweep.definition())
    (tmp_path / "sw" / "timing.jsonl").write_text('["not", "an object"]\n{"event": "run", "seconds": 3}\n')
    line = one_line(lrn(capsys, "report", tmp_path / "sw"), 2, "timing record", "line 1", "delete the line")
    assert str(tmp_path / "sw" / "timing.jsonl") in line
    # a last line cut by a kill mid-write is only dropped
    (tmp_path / "sw" / "timing.jsonl").write_text('{"event": "run", "seconds": 3}\n{"event": "po')
    from lrngpt.experiments.sweepdir import SweepDir

    assert SweepDir(tmp_path / "sw").timing() == [{"event": "run", "seconds": 3}]


@pytest.mark.parametrize("damage", ['{"step": 2, "train_bpb_read": "low"}', '[1, 2]', '{"train_bpb_read": 1.0}'])
def test_a_damaged_by_reads_record_is_named_in_one_line(damage, mlp_run, tmp_path, capsys):
    import shutil

    d = tmp_path / "sweep"
    shutil.copytree(mlp_run, d / "runs" / "a")
    summary = json.loads((d / "runs" / "a" / "summary.json").read_text())
    summary.pop("train_bpb_read")  # as a run trained without a train evaluation: by_reads.json is read
    (d / "runs" / "a" / "summary.json").write_text(json.dumps(summary))
    (d / "sweep.json").write_text(json.dumps({"version": 1, "name": "p", "scale": "tiny", "points": [{"name": "a"}]}))
    (d / "runs" / "a" / "by_reads.json").write_text(damage)
    one_line(lrn(capsys, "report", d), 2, "by_reads.json", "lrn eval RUN --by-reads" if damage[0] == "{" else "")


def test_the_api_plans_minutes_as_lrn_sweep_does_and_refuses_a_bad_budget(tmp_path):
    import lrngpt

    with pytest.raises(lrngpt.UserError, match="^minutes must be a positive number of minutes"):
        lrngpt.sweep("embed-dim", minutes=0, out=tmp_path / "w")
    with pytest.raises(lrngpt.UserError, match="^minutes plans a study"):
        lrngpt.sweep(str(tmp_path / "file.json"), minutes=3, out=tmp_path / "w")
    assert not (tmp_path / "w").exists()


# ---- width against depth: model.aspect_ratio, model.head_dim, the width-depth study's shapes ----------------

ASPECT_CASES = {
    "aspect_ratio 0": (["--set", "model.aspect_ratio=0"], ["model.aspect_ratio must be at least 1"]),
    "aspect_ratio -64": (["--set", "model.aspect_ratio=-64"], ["model.aspect_ratio must be at least 1"]),
    "aspect_ratio 64.5": (["--set", "model.aspect_ratio=64.5"], ["model.aspect_ratio must be an integer"]),
    "aspect_ratio wide": (["--set", "model.aspect_ratio=wide"], ["model.aspect_ratio must be an integer"]),
    "aspect_ratio true": (["--set", "model.aspect_ratio=true"], ["model.aspect_ratio must be an integer"]),
    "aspect_ratio huge": (["--set", "model.aspect_ratio=100000000"], ["model.aspect_ratio", "above the limit"]),
    "aspect_ratio with n_embd": (["--set", "model.aspect_ratio=64", "--set", "model.n_embd=512"],
                                 ["model.n_embd", "model.aspect_ratio", "give one of them"]),
    "aspect_ratio with n_head that disagrees": (["--set", "model.aspect_ratio=64", "--set", "model.n_head=8"],
                                                ["model.n_head 8", "model.aspect_ratio 64", "head_dim"]),
    "head_dim 0 with aspect_ratio": (["--set", "model.aspect_ratio=64", "--set", "model.head_dim=0"],
                                     ["model.head_dim must be at least 1"]),
    "head_dim that does not divide the width": (["--set", "model.head_dim=48"],
                                                ["model.head_dim 48", "n_embd 256 / model.n_head 8 = 32"]),
    "aspect_ratio on the MLP": (["--config", "mlp-tiny", "--set", "model.aspect_ratio=64"],
                                ["model_type is mlp", "model.aspect_ratio"]),
}


@pytest.mark.parametrize("case", ASPECT_CASES)
def test_aspect_ratio_refuses_bad_input_in_one_line(case, capsys):
    extra, needles = ASPECT_CASES[case]
    argv = ["config", "show", *(["gpt-default"] if "--config" not in extra else []), *extra]
    if "--config" in extra:  # config show takes the preset as its argument
        i = argv.index("--config")
        argv[i:i + 2] = [argv[i + 1]]
    one_line(lrn(capsys, *argv), 2, *needles)


def test_aspect_ratio_and_n_embd_in_one_config_file_that_disagree_name_both(tmp_path, capsys):
    path = tmp_path / "both.json"
    path.write_text(json.dumps({"model_type": "gpt", "model": {"context_length": 32, "n_layer": 4,
                                                               "aspect_ratio": 64, "n_embd": 512}}))
    one_line(lrn(capsys, "train", "--config", str(path), "--dry-run"), 2, "model.n_embd 512", "model.aspect_ratio 64",
             "256")


WIDTH_DEPTH_SWEEP_CASES = {
    "a shape with too few values": (["--axis", "model.n_layer+model.n_embd+model.n_head=2:120"],
                                    ["gives 2 values for the 3 keys"]),
    "n_embd on a second axis": (["--axis", "model.n_embd=64"], ["model.n_embd is on two axes"]),
    "a linked key that is not a config key": (["--axis", "model.dropout+model.depth=0.1:3"],
                                              ["unknown config key model.depth"]),
    "a linked key of the wrong form": (["--axis", "model.n_layer+depth=2:3"], ["depth", "must be data.KEY"]),
    "a shape whose heads do not divide it": (["--axis", "model.n_layer+model.n_embd+model.n_head=2:120:7"],
                                             ["n_embd 120 is not divisible by n_head 7"]),
    "--minutes": (["--minutes", "20"], ["--minutes plans the MLP width studies", "--scale full, cpu, tiny"]),
}


@pytest.mark.parametrize("case", WIDTH_DEPTH_SWEEP_CASES)
def test_width_depth_sweep_refuses_bad_input_in_one_line(case, tmp_path, capsys):
    extra, needles = WIDTH_DEPTH_SWEEP_CASES[case]
    scale = [] if "--minutes" in extra else ["--scale", "tiny"]
    one_line(lrn(capsys, "sweep", "width-depth", *scale, "--out", str(tmp_path / "wd"), "--dry-run", *extra), 2,
             *needles)
    assert not (tmp_path / "wd").exists()  # refused before anything is written


def test_width_depth_finding_of_a_directory_without_a_sweep_is_one_line(tmp_path):
    import lrngpt

    with pytest.raises(lrngpt.UserError, match="holds no sweep"):
        lrngpt.width_depth_finding(tmp_path)
    with pytest.raises(lrngpt.UserError, match=r"n_layer must be at least 1 \(got 0\)"):
        lrngpt.width_from_depth(0)
    with pytest.raises(lrngpt.UserError, match=r"width_from_depth\(\): aspect_ratio must be an integer, got float 6.5"):
        lrngpt.width_from_depth(4, aspect_ratio=6.5)  # the API's type check, as for every function
    with pytest.raises(lrngpt.UserError, match=r"head_dim must be at least 1 \(got -128\)"):
        lrngpt.width_from_depth(4, head_dim=-128)
    with pytest.raises(lrngpt.UserError, match=r"width_depth_finding\(\): sweep must be"):
        lrngpt.width_depth_finding(None)


# ---- red team (issue 30) ----------------------------------------------------------------------------------
# Each case below is one that `python benchmarks/red_team.py` found: before its fix, an exit 1, a traceback,
# a hang or data loss; now a one-line refusal.

RED_TEAM_API = {  # call -> what its one line says
    "cost_gpt(context=10**10000)": (lambda lrngpt: lrngpt.cost_gpt(300, 10**10000), "context: an integer of 10,001 digits"),
    "cost_mlp(widths=[10**200])": (lambda lrngpt: lrngpt.cost_mlp(widths=[10**200]), "widths: an integer of 201 digits"),
    "theory_jl(n=10**400)": (lambda lrngpt: lrngpt.theory_jl(10**400, 0.5), "n: an integer of 401 digits"),
    "lesson_lookup(seed=10**5000)": (lambda lrngpt: lrngpt.lesson_lookup(seed=10**5000), "seed: an integer of 5,001"),
    "lesson_superposition_figure({})": (lambda lrngpt: lrngpt.lesson_superposition_figure({}),
                                        "result must be what lrngpt.lesson_superposition() returns"),
    "lesson_superposition_figure(rows of nothing)": (
        lambda lrngpt: lrngpt.lesson_superposition_figure({"features": 5, "dims": 2, "sparsities": [{}]}),
        "a row per sparsity"),
}


@pytest.mark.parametrize("case", RED_TEAM_API)
def test_red_team_an_api_integer_past_100_digits_is_one_user_error(case):
    import lrngpt

    call, needle = RED_TEAM_API[case]
    with pytest.raises(lrngpt.UserError) as e:
        call(lrngpt)
    assert needle in str(e.value) and "\n" not in str(e.value), str(e.value)


@pytest.mark.parametrize("command", [["report"], ["embed", "explore"]])
def test_red_team_a_page_of_a_run_whose_name_is_not_utf8_is_written(command, mlp_run, tmp_path, capsys):
    import shutil

    run = tmp_path / "run-\udcff"  # the name's byte 0xff, as Python holds a file name that is not UTF-8
    shutil.copytree(mlp_run, run)
    code, _, err = lrn(capsys, "-q", *command, run, "--out", tmp_path / "page.html")
    assert code == 0 and "Traceback" not in err, err
    assert "run-\\udcff" in (tmp_path / "page.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("argv,needle", [
    (["train", "--config", "mlp-tiny", "--corpus=", "--out", "{t}/run"], "--corpus is an empty string: give a corpus"),
    (["train", "--config", "mlp-tiny", "--device=", "--out", "{t}/run"], "--device is an empty string: give a device"),
    (["sweep", "embed-dim", "--scale", "tiny", "--corpus=", "--out", "{t}/sw", "--dry-run"],
     "--corpus is an empty string"),
    (["eval", "{run}", "--corpus="], "--corpus is an empty string"),
    (["report", "{run}", "--out="], "--out is an empty string: give a path"),
], ids=["train --corpus=", "train --device=", "sweep --corpus=", "eval --corpus=", "report --out="])
def test_red_team_an_empty_corpus_or_device_is_refused_not_read_as_the_default(argv, needle, mlp_run, tmp_path,
                                                                               capsys):
    # `--corpus "$CORPUS"` with CORPUS unset: it trained on the config's corpus without a word
    refused(capsys, tmp_path, [a.format(t=tmp_path, run=mlp_run) for a in argv], needle)


@pytest.mark.parametrize("where,needle", [("/dev/zero", "is a special file"), ("fifo", "is a special file"),
                                          ("file", "is a file, not a run directory")])
def test_red_team_a_device_or_fifo_given_as_a_run_is_named_as_such(where, needle, tmp_path, capsys):
    path = {"/dev/zero": Path("/dev/zero"), "fifo": tmp_path / "f", "file": tmp_path / "x.txt"}[where]
    if where == "fifo":
        os.mkfifo(path)
    elif where == "file":
        path.write_text("x")
    one_line(lrn(capsys, "sample", path, "--prompt", "Lily"), 2, needle, "not a run directory")


# ---- issue 38: advice that leads somewhere, bounds before work, the API in its own words ------------

def test_a_record_that_is_a_directory_is_named_and_the_fix_works(tmp_path, capsys):
    (tmp_path / ".lrn-output").mkdir()
    out = tmp_path / "s.txt"
    one_line(lrn(capsys, "data", "stories", "--size", "2KB", "--out", out), 2,
             ".lrn-output is not a regular file, so not lrn's record", "move it away")
    assert not out.exists()
    (tmp_path / ".lrn-output").rename(tmp_path / "was-the-record")  # what the advice says
    assert lrn(capsys, "-q", "data", "stories", "--size", "2KB", "--out", out)[0] == 0


def test_a_damaged_record_is_named_as_damaged_and_the_fix_works(tmp_path, capsys):
    (tmp_path / ".lrn-output").write_text("{not json")
    out = tmp_path / "s.txt"
    out.write_text("mine")
    one_line(lrn(capsys, "data", "stories", "--size", "2KB", "--out", out, "--force"), 2,
             ".lrn-output is damaged", "move the file away yourself")
    assert out.read_text() == "mine"
    out.rename(tmp_path / "mine.txt")
    assert lrn(capsys, "-q", "data", "stories", "--size", "2KB", "--out", out)[0] == 0


@pytest.mark.parametrize("out,needle", [("/proc/x.txt", "cannot create a file in /proc"),
                                        ("/sys/x.txt", "cannot create a file in /sys"),
                                        ("/proc/1/x.txt", "cannot create a file in /proc/1")])
def test_an_output_in_a_kernel_file_system_is_refused_before_any_work(out, needle, capsys, monkeypatch):
    import lrngpt.api.lessons as lessons

    monkeypatch.setattr(lessons, "train_toy", lambda *a, **k: pytest.fail("trained before checking --out"))
    one_line(lrn(capsys, "lesson", "superposition", "--out", out), 2, needle, "choose a")
    one_line(lrn(capsys, "data", "stories", "--size", "2KB", "--out", out), 2, needle)


@pytest.mark.parametrize("corpus,needle", [("text:/proc", "corpus directory /proc"),
                                           ("text:/sys/kernel", "/sys/kernel"),
                                           ("nsmc:/dev/null", "is a special file"),
                                           ("nsmc:/no/such/dir", "ratings_train.txt")])
def test_a_corpus_in_a_kernel_file_system_or_a_device_is_named(corpus, needle, tmp_path, capsys):
    one_line(lrn(capsys, "data", "prepare", "--corpus", corpus, "--out", tmp_path / "p"), 2, needle)


def test_a_corpus_walk_is_bounded_and_names_the_limit(tmp_path, monkeypatch, capsys):
    import lrngpt.corpora.text as text

    for i in range(8):
        (tmp_path / f"d{i}").mkdir()
        (tmp_path / f"d{i}" / "a.txt").write_text("Lily saw a cat.")
    monkeypatch.setattr(text, "MAX_WALK_ENTRIES", 10)
    one_line(lrn(capsys, "data", "prepare", "--corpus", f"text:{tmp_path}", "--out", tmp_path / "p"), 2,
             "more than 10 files and directories", "the directory that holds the corpus itself")
    monkeypatch.setattr(text, "MAX_WALK_ENTRIES", 100)
    assert [f.name for f in text.walk(tmp_path, (".txt",))] == ["a.txt"] * 8


def test_a_dash_value_is_hinted_with_the_equals_form_which_then_parses(capsys):
    one_line(lrn(capsys, "lesson", "superposition", "--sparsity", "-0.5,0.9"), 2,
             "a value that starts with - is read as an option: write --sparsity=-0.5,0.9")
    # the advice parses: what it meets then is the value's own range
    one_line(lrn(capsys, "lesson", "superposition", "--sparsity=-0.5,0.9"), 2, "--sparsity -0.5", "[0, 1)")


@pytest.mark.parametrize("keys", ['{"model.n_embd": 8}', "null", '"x"'])
def test_a_config_show_json_whose_keys_is_no_list_is_named(keys, tmp_path, capsys):
    path = tmp_path / "c.json"
    path.write_text(f'{{"about": "mlp-tiny", "keys": {keys}}}')
    one_line(lrn(capsys, "train", "--config", path, "--dry-run"), 2, "'keys' must be the list of {key, value} rows",
             "lrn config show PRESET --json")


@pytest.mark.parametrize("argv", [["train", "--config", "mlp-tiny", "--set", "data.vocab_size=1000000000", "--dry-run"],
                                  ["tokenizer", "train", "--corpus", "stories:2KB", "--vocab-size", "1000000000",
                                   "--out", "tok"],
                                  ["data", "prepare", "--corpus", "stories:2KB", "--vocab-size", "1048577"]])
def test_a_vocabulary_past_the_bound_is_refused_before_the_tokenizer_runs(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    one_line(lrn(capsys, *argv), 2, "above lrn's limit of 1,048,576 tokens", "tokenizer trainer allocates")
    assert not (tmp_path / "tok").exists()


def test_the_api_names_its_parameters_not_lrns_options(mlp_run, tmp_path):
    import lrngpt

    with pytest.raises(lrngpt.UserError, match=r"^by_reads=True needs the run's own training text; drop corpus$"):
        lrngpt.load(mlp_run).eval(corpus="stories:2KB", by_reads=True)
    with pytest.raises(lrngpt.UserError, match=r"^shard=3/2 is outside the range"):
        lrngpt.sweep("embed-dim", scale="tiny", shard="3/2", out=tmp_path / "w", dry_run=True)
    with pytest.raises(lrngpt.UserError) as e:
        lrngpt.sweep("embed-dim", minutes=0, out=tmp_path / "w")
    assert "--" not in str(e.value) and "minutes=25" in str(e.value)
    assert not (tmp_path / "w").exists()


def test_the_cli_still_names_its_options_for_the_same_refusals(mlp_run, tmp_path, capsys):
    one_line(lrn(capsys, "eval", mlp_run, "--corpus", "stories:2KB", "--by-reads"), 2, "--by-reads", "drop --corpus")
    one_line(lrn(capsys, "sweep", "embed-dim", "--minutes", "0", "--out", tmp_path / "w"), 2, "--minutes 25")


def test_api_type_names_are_spelled_right_and_lrngpt_shows_only_its_public_names():
    from typing import Any

    import lrngpt
    from lrngpt.api.checks import describe

    assert describe(list[list[str]]) == "a list of lists of strings"
    assert describe(list[list[Any]]) == "a list of lists of values"
    assert describe(list[Any]) == "a list of values"
    assert {n for n in dir(lrngpt) if not n.startswith("__")} == set(lrngpt.__all__) - {"__version__"}
    for private in ("os", "importlib", "TYPE_CHECKING"):
        assert not hasattr(lrngpt, private)


def test_eval_by_reads_with_the_default_split_measures_the_train_split_it_needs(mlp_run):
    import lrngpt

    r = lrngpt.load(mlp_run).eval(by_reads=True, device="cpu")
    assert {"val_bpb", "train_bpb", "train_bpb_read", "train_bpb_unread", "read_share"} <= set(r)
    assert 0 < r["read_share"] <= 1 and "gap" not in r


# ---- issue 35/38: points at once, and a timing record whose times are not times -------------------------

@pytest.mark.parametrize("value,needle", [("0", "from 1 to 64"), ("-1", "from 1 to 64"), ("65", "from 1 to 64"),
                                          ("9" * 40, "from 1 to 64"), ("abc", "invalid int value"),
                                          ("1.5", "invalid int value"), ("", "invalid int value")])
def test_points_at_once_out_of_bounds_is_refused_in_one_line(value, needle, tmp_path, capsys):
    out = tmp_path / "sw"
    one_line(lrn(capsys, "sweep", "embed-dim", "--scale", "tiny", "--out", out, "--points-at-once", value),
             2, "--points-at-once", needle)
    assert not out.exists()  # refused before anything is written


@pytest.mark.parametrize("value", [0, 65, True, "2", 2.0, -(10**100)])
def test_the_apis_points_at_once_is_checked_like_the_option(value, tmp_path):
    import lrngpt

    with pytest.raises(lrngpt.UserError) as e:
        lrngpt.sweep("embed-dim", "tiny", out=tmp_path / "sw", points_at_once=value)
    assert "points_at_once" in str(e.value).replace("-", "_") and "\n" not in str(e.value), str(e.value)
    assert not (tmp_path / "sw").exists()


@pytest.mark.parametrize("seconds", ["NaN", "Infinity", "-Infinity", "1e308", "-3"])
def test_a_timing_row_whose_seconds_are_not_a_time_is_refused_alike_by_the_dry_run_and_the_resume(
        seconds, tmp_path, capsys):
    from lrngpt.experiments.grid import resolve_sweep
    from lrngpt.experiments.sweepdir import SweepDir

    sweep = resolve_sweep("embed-dim", "budget", ["train.steps=10"], ["model.n_embd=4,8"])
    sweep.budget = {"minutes": 1.0, "sets": {"train.steps": 10}, "axes": {}, "est_seconds": 50.0,
                    "point_seconds": {p.name: 20.0 for p in sweep.points}}
    SweepDir(tmp_path / "sw").create_or_check(sweep.definition())
    record = tmp_path / "sw" / "timing.jsonl"
    record.write_text(f'{{"event": "point", "name": "{sweep.points[0].name}", "seconds": 3, "estimate": 20}}\n'
                      f'{{"event": "point", "name": "{sweep.points[1].name}", "seconds": {seconds}, "estimate": 20}}\n'
                      '{"event": "run", "seconds": 30}\n')
    before = record.read_bytes()
    lines = [one_line(lrn(capsys, "sweep", "embed-dim", "--out", tmp_path / "sw", *dry), 2, "timing record",
                      "line 2", "delete the line") for dry in (["--dry-run"], [])]
    assert lines[0] == lines[1] and str(record) in lines[0] and "years" not in lines[0]
    assert record.read_bytes() == before and not (tmp_path / "sw" / "runs").exists()  # nothing trained


# ---- the planted-tokens study: a planted.json edited to nonsense, a plan that is not one ------------

def _planted_result(vocab: int = 4) -> dict:
    """The smallest planted.json the finding and the figure read: two runs, one score each."""
    share = {"precision": 1.0, "recall": 0.5}
    score = {t: {"planted": share, "vocabulary": share} for t in ("under_trained", "never_read")}
    run = {"tied": True, "step": 10, "n_embd": 16, "vocab": vocab, "reads_exact": True, "reference": [3],
           "scores": {"own_movement": score, "cosine_no_first_pc": score},
           "tokens": {"input_reads": [0, 1, 10, 200][:vocab], "own": [0.0, 0.1, 0.2, 0.3][:vocab],
                      "init_norm": [1.0] * vocab}}
    return {"groups": {"0": [0], "1": [1]}, "main": "cosine_no_first_pc",
            "runs": {"tied": run, "untied": {**run, "tied": False}}}


PLANTED_NONSENSE = {
    "not JSON": "{not json",
    "a list": "[1, 2]",
    "no runs": json.dumps({"groups": {}}),
    "a precision of 7": json.dumps(_planted_result() | {"runs": {"tied": {**_planted_result()["runs"]["tied"], "scores": {
        "own_movement": {t: {"planted": {"precision": 7, "recall": 1}, "vocabulary": {"precision": 1, "recall": 1}}
                         for t in ("under_trained", "never_read")}}}, "untied": _planted_result()["runs"]["untied"]}}),
    "a recall that is text": json.dumps(_planted_result()).replace('"recall": 0.5', '"recall": "half"', 1),
    "a planted id past the vocabulary": json.dumps(_planted_result() | {"groups": {"0": [99]}}),
    "reads that are not numbers": json.dumps(_planted_result()).replace('"input_reads": [0, 1, 10, 200]',
                                                                        '"input_reads": ["a", 1, 10, 200]'),
    "a reference id that is text": json.dumps(_planted_result()).replace('"reference": [3]', '"reference": ["3"]', 1),
    "a step that is text": json.dumps(_planted_result()).replace('"step": 10', '"step": "ten"', 1),
    "a column too short": json.dumps(_planted_result()).replace('"own": [0.0, 0.1, 0.2, 0.3]', '"own": [0.0]'),
}


@pytest.mark.parametrize("case", PLANTED_NONSENSE)
def test_a_planted_json_edited_to_nonsense_is_refused_in_one_line_by_the_finding_and_the_figure(case, tmp_path):
    from lrngpt.errors import UserError
    from lrngpt.experiments.planted import planted_findings
    from lrngpt.experiments.planted_figure import plot_planted

    (tmp_path / "planted.json").write_text(PLANTED_NONSENSE[case])
    for reader in (planted_findings, plot_planted):
        with pytest.raises(UserError) as e:
            reader(tmp_path)
        assert "planted.json" in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_a_planted_json_the_finding_can_read_is_not_refused(tmp_path):
    from lrngpt.experiments.planted import planted_scores

    (tmp_path / "planted.json").write_text(json.dumps(_planted_result()))
    assert planted_scores(tmp_path)["tied"]["verdicts"]["own_movement"]["under_trained"]["verdict"] == "fails"  # recall 50%


@pytest.mark.parametrize("kwargs", [{"scale": "huge"}, {"minutes": -1}, {"minutes": True}, {"minutes": "5"},
                                    {"minutes": float("nan")}])
def test_a_planted_plan_of_an_unknown_scale_or_a_time_that_is_no_time_is_refused_in_one_line(kwargs):
    from lrngpt.errors import UserError
    from lrngpt.experiments.planted import planted_plan

    with pytest.raises(UserError) as e:
        planted_plan(**kwargs)
    assert "\n" not in str(e.value) and ("scale" in str(e.value) or "minutes" in str(e.value))


@pytest.mark.parametrize("plan", [None, {}, {"scale": "tiny"}, "cpu"])
def test_run_planted_refuses_what_is_not_a_plan_before_writing_anything(plan, tmp_path):
    from lrngpt.errors import UserError
    from lrngpt.experiments.planted import run_planted

    with pytest.raises(UserError, match="planted_plan"):
        run_planted(tmp_path / "out", plan)
    assert not (tmp_path / "out").exists()

# ---- the width-depth scale series (lrngpt.experiments.depth_series, shape_findings) ----------------------------


@pytest.mark.parametrize("minutes", [0, -5, float("nan"), float("inf"), "ten", None, True])
def test_depth_series_plan_refuses_minutes_that_are_not_a_time(minutes):
    from lrngpt.errors import UserError
    from lrngpt.experiments.depth_series import plan_series

    def never(*a, **k):
        raise AssertionError("probed before the minutes were checked")

    with pytest.raises(UserError, match="minutes must be a positive number"):
        plan_series(minutes, probe_fn=never)


@pytest.mark.parametrize("content, needle", [
    (None, "no summary.json there"),  # a directory with nothing in it
    ("{not json", "summary"),
    ("[1, 2]", "must hold a JSON object"),
    ('{"rows": 3}', "no rows list"),
])
def test_depth_series_judge_refuses_a_level_that_is_not_a_finished_sweep_in_one_line(content, needle, tmp_path):
    from lrngpt.errors import UserError
    from lrngpt.experiments.shape_findings import judge_series

    level = tmp_path / "tpp-4"
    level.mkdir()
    if content is not None:
        (level / "summary.json").write_text(content)
    with pytest.raises(UserError, match=re.escape(needle)) as err:
        judge_series([level])
    assert "\n" not in str(err.value)


def test_depth_series_judge_refuses_a_file_given_as_a_level(tmp_path):
    from lrngpt.errors import UserError
    from lrngpt.experiments.shape_findings import judge_series

    path = tmp_path / "summary.json"
    path.write_text('{"rows": []}')
    with pytest.raises(UserError, match="is a file|no summary.json there"):
        judge_series([path])


# ---- lrn chapter: refused before a probe, one line each --------------------------------------------

@pytest.fixture
def no_probe(monkeypatch):
    """A refusal that comes before any probe: timing anything fails the test."""
    def never(*a, **k):
        raise AssertionError("probed before the options were checked")
    monkeypatch.setattr("lrngpt.training.timing._measure", never)

def _chapter_plan(d: Path, minutes: float = 60.0) -> Path:
    from lrngpt.experiments import chapter_plan as cp
    from lrngpt.experiments.chapter_dir import ChapterDir

    ChapterDir(d).start(cp.ChapterPlan.from_dict({"version": cp.VERSION, "scale": "laptop", "minutes": minutes, "out": str(d), "est_seconds": 1.0,
                 "parts": [{"name": "width", "kind": "sweep", "what": "findings 1 and 2", "est_seconds": 1.0}]}))
    return d


@pytest.mark.parametrize("argv, needles", [
    (["--minutes", "3"], ["--minutes 3 is too short for the whole chapter on any machine",
                          "`lrn chapter --scale tiny --out DIR` runs every part in about", "quiet 2-core machine"]),
    (["--minutes", "1e308"], ["--minutes 1e+308 is past the longest budget planned: at most --minutes 10080"]),
    (["--minutes", "nan"], ["--minutes must be a positive number of minutes", "--minutes 60"]),
    (["--minutes", "inf"], ["--minutes must be a positive number of minutes"]),
    (["--minutes", "-3"], ["--minutes must be a positive number of minutes"]),
    (["--minutes", "60", "--scale", "tiny"], ["--minutes plans the laptop protocol", "leave out --scale"]),
    (["--corpus", "stories:1MB"], ["--corpus goes with --scale full or tiny", "lrn sweep STUDY --minutes N"]),
    (["--scale", "huge"], ["unknown choice 'huge'", "choose from tiny, full"]),
], ids=["too short", "past a week", "NaN", "Inf", "negative", "minutes with scale", "corpus without scale",
        "unknown scale"])
def test_chapter_options_that_cannot_be_planned_are_one_line(argv, needles, tmp_path, capsys, no_probe):
    one_line(lrn(capsys, "chapter", "--out", tmp_path / "ch", *argv), 2, *needles)
    assert not (tmp_path / "ch").exists()


def test_chapter_into_a_file_a_sweep_or_a_folder_of_yours_is_refused_and_nothing_written(tmp_path, capsys):
    (tmp_path / "file").write_text("mine")
    one_line(lrn(capsys, "chapter", "--scale", "tiny", "--out", tmp_path / "file"), 2, "file")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    one_line(lrn(capsys, "chapter", "--scale", "tiny", "--out", tmp_path / "mine"), 2, "notes.txt", "new or empty")
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["notes.txt"]
    assert (tmp_path / "file").read_text() == "mine"


def test_chapter_again_with_another_budget_names_the_command_that_resumes(tmp_path, capsys):
    d = _chapter_plan(tmp_path / "ch")
    before = (d / "chapter.json").read_bytes()
    one_line(lrn(capsys, "chapter", "--minutes", "30", "--out", d), 2, "planned with --minutes 60, not --minutes 30",
             f"lrn chapter --minutes 60 --out {d}")
    one_line(lrn(capsys, "chapter", "--scale", "tiny", "--out", d), 2, "not --scale tiny")
    assert (d / "chapter.json").read_bytes() == before


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", json.dumps({"version": 1, "scale": "laptop", "parts": []})],
                         ids=["not JSON", "a list", "no parts"])
def test_an_edited_chapter_plan_is_one_line_naming_it(text, tmp_path, capsys):
    d = _chapter_plan(tmp_path / "ch")
    (d / "chapter.json").write_text(text)
    one_line(lrn(capsys, "chapter", "--out", d), 2, "chapter.json")


def test_report_of_an_unfinished_or_edited_chapter_is_one_line(tmp_path, capsys):
    d = _chapter_plan(tmp_path / "ch")
    one_line(lrn(capsys, "report", d), 2, "has not finished", "run the same `lrn chapter` command again")
    (d / "verdicts.json").write_text(json.dumps({"verdicts": [{"study": "width", "verdict": 3}]}))
    one_line(lrn(capsys, "report", d), 2, "verdicts.json", "not the findings lrn writes", "move it away")
    assert not (d / "report.html").exists()


@pytest.mark.parametrize("text", ["{not json", "[1, 2]"], ids=["not JSON", "a list"])
def test_a_damaged_verdicts_json_says_lrn_wrote_it_move_it_away_not_fix_it(text, tmp_path, capsys):
    """verdicts.json is lrn's own (the chapter's last step writes it): damaged, it is no file to fix."""
    d = _chapter_plan(tmp_path / "ch")
    (d / "verdicts.json").write_text(text)
    line = one_line(lrn(capsys, "report", d), 2, f"lrn wrote chapter verdicts {d / 'verdicts.json'} and it is damaged",
                    "move it away and run the same command again")
    assert "fix it" not in line
    assert not (d / "report.html").exists()


def test_a_budget_past_a_week_is_one_line_naming_the_most_before_any_probe(tmp_path, capsys, no_probe):
    import lrngpt

    one_line(lrn(capsys, "sweep", "embed-dim", "--minutes", "1e308", "--out", tmp_path / "w"), 2,
             "at most --minutes 10080 (a week)")
    with pytest.raises(lrngpt.UserError, match=r"^minutes=1e\+308 is past the longest budget planned: at most minutes=10080"):
        lrngpt.sweep("embed-dim", minutes=1e308, out=tmp_path / "w", dry_run=True)
    with pytest.raises(lrngpt.UserError, match="at most minutes=10080"):
        lrngpt.run_chapter(tmp_path / "ch", minutes=1e308, dry_run=True)
    assert not (tmp_path / "w").exists() and not (tmp_path / "ch").exists()


def test_run_chapter_refuses_passes_without_minutes_and_passes_out_of_range(tmp_path):
    import lrngpt

    with pytest.raises(lrngpt.UserError, match="passes sizes the text of a budget: give minutes with it"):
        lrngpt.sweep("embed-dim", scale="tiny", out=tmp_path / "sw", passes=0.12)
    for bad in (0, 1.5, float("nan")):
        with pytest.raises(lrngpt.UserError, match=r"passes must be a number of passes over the training text in \(0, 1\]"):
            lrngpt.sweep("embed-dim", out=tmp_path / "sw", minutes=10, passes=bad, dry_run=True)
    assert not (tmp_path / "sw").exists()


EMPTY_CASES = {  # call(tmp_dir) -> must raise UserError naming the parameter, in one line
    "sweep(axes={k: None})": (lambda d: __import__("lrngpt").sweep(
        "embed-dim", "tiny", out=d / "sw", axes={"model.n_embd": None}, dry_run=True),
        "axes['model.n_embd'] must be a list of values, got None"),
    "sweep(axes={k: []})": (lambda d: __import__("lrngpt").sweep(
        "embed-dim", "tiny", out=d / "sw", axes={"model.n_embd": []}, dry_run=True), "axes['model.n_embd'] is an empty list"),
    "sweep(axes={k: 'abc'})": (lambda d: __import__("lrngpt").sweep(
        "embed-dim", "tiny", out=d / "sw", axes={"model.n_embd": "8,64"}, dry_run=True),
        "axes['model.n_embd'] must be a list of values, got str"),
    "sweep(axes={k: 5})": (lambda d: __import__("lrngpt").sweep(
        "embed-dim", "tiny", out=d / "sw", axes={"model.n_embd": 5}, dry_run=True),
        "axes['model.n_embd'] must be a list of values, got int 5"),
    "sweep(axes={5: [8]})": (lambda d: __import__("lrngpt").sweep(
        "embed-dim", "tiny", out=d / "sw", axes={5: [8]}, dry_run=True), "axes takes keys that are strings, got int 5"),
    "sweep(axes=[''])": (lambda d: __import__("lrngpt").sweep(
        "embed-dim", "tiny", out=d / "sw", axes=[""], dry_run=True), "axes[0] is an empty string"),
    "sweep(out='')": (lambda d: __import__("lrngpt").sweep("embed-dim", "tiny", out="", dry_run=True),
                      "out is an empty string"),
    "sweep(corpus='')": (lambda d: __import__("lrngpt").sweep("embed-dim", "tiny", out=d / "sw", corpus="", dry_run=True),
                         "corpus is an empty string"),
    "plan(axes={k: None})": (lambda d: __import__("lrngpt").plan(
        "embed-dim", "tiny", out=d / "sw", axes={"model.n_embd": None}), "axes['model.n_embd'] must be a list of values"),
    "train(out='')": (lambda d: __import__("lrngpt").train("mlp-tiny", ""), "out is an empty string"),
    "train(corpus=' ')": (lambda d: __import__("lrngpt").train("mlp-tiny", d / "t", corpus=" "),
                          "corpus is an empty string"),
    "load('')": (lambda d: __import__("lrngpt").load(""), "path is an empty string"),
    "data_prepare('')": (lambda d: __import__("lrngpt").data_prepare(""), "corpus is an empty string"),
    "tokenizer_train(out='')": (lambda d: __import__("lrngpt").tokenizer_train("stories:300KB", ""),
                                "out is an empty string"),
}


@pytest.mark.parametrize("case", EMPTY_CASES, ids=list(EMPTY_CASES))
def test_an_empty_or_none_value_in_the_api_is_a_user_error_naming_the_parameter(case, tmp_path):
    """`axes={"model.n_embd": None}` raised TypeError ('NoneType' object is not iterable); out="" swept into
    the current directory (Path("") is "."); an empty axis said `--axis`, an option the API has not."""
    import lrngpt

    call, needle = EMPTY_CASES[case]
    with pytest.raises(lrngpt.UserError) as e:
        call(tmp_path)
    message = str(e.value)
    assert "\n" not in message and needle in message and "--axis" not in message, message


TIME_OPTIONS = {  # every option of lrn that is a time or a budget -> a command line it is valid in, the most it takes
    ("sweep", "--minutes"): (["sweep", "embed-dim", "--out", "{d}/sw", "--dry-run"], "at most --minutes 10080"),
    ("chapter", "--minutes"): (["chapter", "--out", "{d}/ch", "--dry-run"], "at most --minutes 10080"),
    ("doctor", "--probe-timeout"): (["doctor"], "up to 86,400"),
}


def test_every_time_or_budget_option_has_an_upper_bound(tmp_path, capsys, no_probe):
    """--minutes 1e308 (or any time past the most lrn plans or waits) is one line before any probe, for every
    option of every command whose name says it is a time or a budget (a new one must be added here)."""
    found = {(command, s) for command, p in PARSERS.items() for a in p._actions for s in a.option_strings
             if re.search(r"minute|second|timeout|hour|budget|time", s)}
    assert found == set(TIME_OPTIONS)
    for (_, option), (argv, most) in TIME_OPTIONS.items():
        for value in ("1e308", "1e18"):
            one_line(lrn(capsys, *[a.format(d=tmp_path) for a in argv], option, value), 2, option, most)
    assert not list(tmp_path.iterdir())
