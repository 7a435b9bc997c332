"""Nothing a user owns is ever lost: every command that writes, pointed at the user's files (with
--force where a user would add it), refuses with one line that suggests no destructive --force,
and leaves every byte (and every name: not even a lock file) as it was. Then the other half of
the rule: what lrn wrote is replaced whole, and a kill mid-write leaves exactly the old or the new.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lrngpt.cli.main import main
from lrngpt.data.prepared import data_cache_dir
from lrngpt.runconfig.schema import PRESET_DIR, load_config
from lrngpt.store.layout import METRICS
from lrngpt.training.trainer import train_run
from tests.cli_run import HUNG, lrn, run_cli, wait_for

ROOT = Path(__file__).resolve().parents[1]


def snapshot(d: Path) -> dict[str, bytes]:
    """Every file and directory under d (hidden ones too), with the bytes of each file."""
    out = {}
    for p in sorted(d.rglob("*")):
        out[str(p.relative_to(d))] = p.read_bytes() if p.is_file() and not p.is_symlink() else b"<dir>"
    return out


GPT_SETS = ("data.vocab_size=300", "model.n_embd=16", "model.n_head=2", "model.n_layer=1", "model.context_length=16",
            "train.batch_size=4", "train.eval_every=2", "train.eval_tokens=300", "train.train_eval_tokens=300")


@pytest.fixture(scope="module")
def runs(text_corpus, trained, tmp_path_factory):
    """A tiny GPT run and a second one with other weights (for the old/new export), an export of
    the first (an import source), all quiet."""
    gpt = trained(PRESET_DIR / "cpu.json", *GPT_SETS, "train.steps=2", corpus=text_corpus, name="gpt")
    other = trained(PRESET_DIR / "cpu.json", *GPT_SETS, "train.steps=4", "train.seed=7", corpus=text_corpus, name="gpt2")
    export = tmp_path_factory.mktemp("own") / "export"
    assert main(["export", str(gpt), "--out", str(export)]) == 0
    return {"gpt": gpt, "other": other, "export": export}


@pytest.fixture
def user_dir(tmp_path):
    """A folder of the user's own files, named as lrn's outputs name theirs."""
    d = tmp_path / "home"
    d.mkdir()
    files = {
        "README.md": "# my model card\n", "config.json": '{"model_type": "gpt2", "n_embd": 768}\n',
        "tokenizer.json": '{"mine": true}\n', "pytorch_model.bin": "my weights", "notes.txt": "my notes\n",
        "vectors.tsv": "0.1\t0.2\n", "train.bin": "nanoGPT tokens", "val.bin": "nanoGPT val tokens",
        "mycorpus.txt": "my own corpus\n", "user.html": "<html>mine</html>\n",
        "tensorboard/events.out.tfevents.1": "my events",
    }
    for name, text in files.items():
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_text(text)
    return d


# (case, argv with {run} {export} {user} {corpus}, the directory whose every byte must stay, a word of the refusal);
# report, embed explore and embed export have no --force: they replace only their own earlier output, always
CASES = [
    ("hf export into a folder of the user's", ["export", "{run}", "--format", "hf", "--out", "{user}", "--force"],
     "user", "lrn did not write"),
    ("hf export into the run itself", ["export", "{run}", "--out", "{run}", "--force"], "run", "holds lrn's run"),
    ("hf export into the working directory", ["export", "{run}", "--out", ".", "--force"], "user", "lrn did not write"),
    ("train into a folder with a config.json", ["train", "--config", "mlp-tiny", "--set", "data.corpus={corpus}",
                                                "--out", "{user}", "--force"], "user", "lrn did not write"),
    ("resume a folder that is no run", ["train", "--out", "{user}", "--resume"], "user", "holds no lrn run"),
    ("import into a folder of the user's", ["import-gpt2", "{export}", "--out", "{user}", "--force"], "user",
     "lrn did not write"),
    ("import over its own source", ["import-gpt2", "{export}", "--out", "{export}", "--force"], "export",
     "the import source"),
    ("stories over the user's corpus", ["data", "stories", "--size", "10KB", "--out", "{user}/mycorpus.txt", "--force"],
     "user", "lrn did not write it"),
    ("explorer over the user's notes", ["embed", "explore", "{run}", "--out", "{user}/notes.txt"], "user",
     "lrn did not write it"),
    ("report over the user's page", ["report", "{run}", "--out", "{user}/user.html"], "user",
     "lrn did not write it"),
    ("report over the run's config", ["report", "{run}", "--out", "{run}/config.json"], "run",
     "lies inside the lrn run"),
    ("explorer over the run's checkpoint", ["embed", "explore", "{run}", "--out", "{run}/ckpt_last.pt"],
     "run", "lies inside the lrn run"),
    ("tokenizer over the user's tokenizer.json", ["tokenizer", "train", "--corpus", "{corpus}", "--vocab-size", "280",
                                                  "--out", "{user}", "--force"], "user", "lrn did not write it"),
    ("tokenizer into a run", ["tokenizer", "train", "--corpus", "{corpus}", "--vocab-size", "280", "--out", "{run}",
                              "--force"], "run", "holds lrn's run"),
    ("embedding export over the user's vectors", ["embed", "export", "{run}", "--out", "{user}"], "user",
     "lrn did not write"),
    ("embedding export into the run", ["embed", "export", "{run}", "--out", "{run}"], "run",
     "holds lrn's run"),
    ("prepare over nanoGPT's train.bin", ["data", "prepare", "--corpus", "{corpus}", "--vocab-size", "280", "--out",
                                          "{user}", "--force"], "user", "lrn did not write"),
    ("demo into a folder of the user's", ["demo", "--out", "{user}", "--steps", "1"], "user", "lrn did not write"),
    ("sweep into a folder of the user's", ["sweep", "embed-dim", "--scale", "tiny", "--out", "{user}"], "user",
     "holds no sweep"),
]


@pytest.mark.parametrize("case,argv,kept,needle", CASES, ids=[c[0] for c in CASES])
def test_a_users_files_survive_every_writer(case, argv, kept, needle, runs, user_dir, text_corpus, capsys,
                                            monkeypatch):
    monkeypatch.chdir(user_dir if "." in argv else user_dir.parent)  # `--out .`: the user's working directory
    where = {"run": runs["gpt"], "export": runs["export"], "user": user_dir}
    argv = [a.format(run=runs["gpt"], export=runs["export"], user=user_dir, corpus=text_corpus) for a in argv]
    before = snapshot(where[kept])
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.strip().splitlines() if "error" in line]
    assert code == 2 and len(lines) == 1 and needle in lines[0], err
    assert "Traceback" not in err
    advice = re.search(r"\b(add|pass|use|with|try|give) (the )?--force", lines[0].replace("with or without --force", ""))
    assert advice is None, f"{case}: the refusal suggests a --force that would destroy it: {lines[0]}"
    assert snapshot(where[kept]) == before, f"{case}: files changed"


def test_resume_after_the_corpus_changed_refuses_before_touching_anything(tiny_config, tmp_path, capsys):
    corpus = tmp_path / "corp.txt"
    corpus.write_text("\n<|endoftext|>\n".join(f"story {i} about a cat and a dog." * 3 for i in range(200)))
    cfg = tiny_config(f"data.corpus=text:{corpus}", "train.steps=4", "train.eval_every=2")
    run = tmp_path / "run"
    train_run(cfg, run, progress=False, log=lambda m: None)
    corpus.write_text(corpus.read_text() + " one more sentence the run never saw.")
    before, cache = snapshot(run), snapshot(data_cache_dir().parent)
    assert main(["train", "--out", str(run), "--resume", "--steps", "6"]) == 2
    err = capsys.readouterr().err
    assert "training data changed since this run started" in err and "the content of text:" in err, err
    assert f"text:{corpus} -> text:{corpus}" not in err  # it says what changed, not the same name twice
    assert snapshot(run) == before  # the final evaluation row of metrics.jsonl included
    assert snapshot(data_cache_dir().parent) == cache  # no tokenizer trained, nothing cached
    assert (run / METRICS).read_bytes() == before[METRICS]


# ---- what lrn wrote: replaced whole ----------------------------------------------------------

def digests(d: Path) -> dict[str, str]:
    """Each file's sha256; the manifest's own (it carries the time of writing) by the files it names."""
    from lrngpt.core.ownership import read_record

    files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in d.iterdir() if p.is_file()}
    files.pop(".lrn-output", None)  # (an HF export keeps its manifest in .cache/huggingface/)
    assert read_record(d)["files"] == files
    return files


# `lrn ARGV` in a child that holds still at one MOMENT of replacing its --out directory: it writes HELD
# and waits there for the test's SIGKILL, so the kill lands at that moment however slowly the machine runs.
GATED_LRN = r"""
import os, pathlib, sys, threading
moment, held, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
out = os.path.realpath(argv[argv.index("--out") + 1])
temp = os.path.join(os.path.dirname(out), "." + os.path.basename(out) + ".tmp-")
write_bytes, replace, writes = pathlib.Path.write_bytes, os.replace, [0]

def hold():
    open(held, "w").close()
    threading.Event().wait()  # until the SIGKILL

def gated_write(self, data):
    n = write_bytes(self, data)
    if str(self).startswith(temp):
        writes[0] += 1
        if moment == f"after file {writes[0]}":
            hold()
    return n

def gated_replace(src, dst):
    if moment == "writing the record" and str(dst).startswith(temp):
        hold()
    replace(src, dst)
    if (moment == "old moved aside" and str(src) == out) or (moment == "new renamed in" and str(dst) == out):
        hold()

pathlib.Path.write_bytes, os.replace = gated_write, gated_replace
from lrngpt.cli.main import main
sys.exit(main(argv))
"""


@pytest.mark.slow
@pytest.mark.parametrize("moment", ["start-up", "after file 1", "after file 4", "after file 8", "writing the record",
                                    "old moved aside", "new renamed in", "the end"])
def test_a_killed_export_leaves_exactly_the_old_or_exactly_the_new_model(moment, runs, tmp_path):
    """SIGKILL `lrn export --force` over an earlier export at each moment of its writing: the directory
    holds one whole export, the old or the new (in the one instant between the two renames, the new one
    whole under its temporary name), and the next export leaves no temporary file behind."""
    transformers = pytest.importorskip("transformers")
    out, new = tmp_path / "hf", tmp_path / "hf-new"
    assert main(["export", str(runs["gpt"]), "--out", str(out)]) == 0
    assert main(["export", str(runs["other"]), "--out", str(new)]) == 0
    old_files, new_files = digests(out), digests(new)
    assert old_files["model.safetensors"] != new_files["model.safetensors"]
    held = tmp_path / "held"
    argv = ["export", str(runs["other"]), "--out", str(out), "--force"]
    child = subprocess.Popen([sys.executable, "-c", GATED_LRN, moment, str(held), *argv], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    if moment == "the end":
        assert child.wait(timeout=HUNG) == 0, child.stdout.read()
    elif moment != "start-up":
        wait_for(held.exists, child, f"the moment {moment!r}")
    child.kill()
    child.wait()
    temps = [p for p in tmp_path.iterdir() if ".tmp-" in p.name]
    if moment == "old moved aside":
        assert not out.exists() and [digests(p) for p in temps].count(new_files) == 1
    else:
        want = new_files if moment in ("new renamed in", "the end") else old_files
        assert digests(out) == want, "a killed export left a mix of two exports"
    assert main(["export", str(runs["gpt"]), "--out", str(out), "--force"]) == 0
    assert digests(out) == old_files
    assert not [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name]  # the next export cleaned up
    assert not [p.name for p in out.iterdir() if ".tmp-" in p.name]
    assert transformers.AutoModelForCausalLM.from_pretrained(out).config.n_embd == 16


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MB tmpfs (root only, as in CI); skipped where the machine cannot mount one."""
    d = tmp_path / "disk"
    d.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(d)],
                                           capture_output=True).returncode != 0:
        pytest.skip("mounting a small tmpfs needs root (and a machine that allows mounts)")
    yield d
    subprocess.run(["umount", "-l", str(d)], check=False)


@pytest.mark.parametrize("argv", [["embed", "export", "{run}", "--format", "projector"],
                                  ["export", "{run}", "--format", "hf", "--force"]], ids=["embed-export", "hf-export"])
def test_a_full_disk_leaves_the_earlier_export_whole(argv, runs, small_disk, capsys):
    out = small_disk / "out"
    argv = [a.format(run=runs["gpt"]) for a in argv] + ["--out", str(out)]
    assert main(argv) == 0
    before = snapshot(out)
    free = os.statvfs(small_disk).f_bavail * os.statvfs(small_disk).f_frsize
    (small_disk / "filler").write_bytes(b"x" * max(0, free - 16_384))  # room for less than a second copy
    capsys.readouterr()
    assert main(argv) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert len(err) == 1 and "disk full while writing" in err[0] and "earlier file is intact" in err[0], err
    assert snapshot(out) == before
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler", "out"]  # no temporary left to fill the disk
    (small_disk / "filler").unlink()
    assert main(argv) == 0  # and with room again, the export goes through


# ---- the ownership record: lrn knows what it wrote by its record, never by a mark in the content ----

def shas(d: Path) -> dict[str, str]:
    """sha256 of every file under d (hidden ones, the record, included)."""
    return {str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(d.rglob("*")) if p.is_file()}


def refusal(result, *needles: str) -> str:
    """The one error line of a refused `lrn(...)` (code, out, err), holding every needle."""
    code, _, err = result
    lines = [line for line in err.strip().splitlines() if "error" in line]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert all(n in lines[0] for n in needles), lines[0]
    return lines[0]


def _fake_figures(out, doc) -> dict[str, bytes]:
    """Two figures as a sweep draws them, in no time (matplotlib takes seconds; what is owned is the same)."""
    return {"val_bpb_by_width.png": b"\x89PNG width " + str(len(doc["rows"])).encode(), "train_vs_val.png": b"\x89PNG tv"}


@pytest.fixture(scope="module")
def small_sweep(text_corpus, tmp_path_factory):
    d = tmp_path_factory.mktemp("owned-sweep") / "sw"
    argv = ["sweep", "embed-dim", "--scale", "tiny", "--axis", "model.n_embd=8", "--set", f"data.corpus={text_corpus}",
            "--set", "data.vocab_size=300", "--set", "train.steps=2"]
    with pytest.MonkeyPatch.context() as m:
        m.setattr("lrngpt.experiments.figures.figure_files", _fake_figures)
        assert main(["-q", *argv, "--out", str(d)]) == 0
    return d, argv


@pytest.fixture
def fast_figures(monkeypatch):
    monkeypatch.setattr("lrngpt.experiments.figures.figure_files", _fake_figures)


def test_summary_only_never_overwrites_a_lines_txt_you_edited(small_sweep, tmp_path, capsys, fast_figures):
    src, argv = small_sweep
    d = Path(shutil.copytree(src, tmp_path / "sw"))
    assert main(["-q", *argv, "--out", str(d), "--summary-only"]) == 0  # lrn's own, unchanged: rewritten
    (d / "lines.txt").write_text((d / "lines.txt").read_text() + "d=8 looks best to me\n")
    before = shas(d)
    line = refusal(lrn(capsys, *argv, "--out", d, "--summary-only"), "lines.txt was changed since lrn wrote it",
                   "lrn never replaces it", "run the same `lrn sweep` command again")
    assert "--force" not in line and "delete" not in line  # (lrn sweep has no --force)
    assert shas(d) == before  # not one summary file written, lines.txt byte for byte the user's
    # a sweep run (the runs are what matters) keeps it as it is, writes the rest, and says so
    code, out, err = lrn(capsys, *argv, "--out", d, "--json")
    assert code == 0 and "lines.txt was changed since lrn wrote it" in err
    assert json.loads(out)["kept"] == [str(d / "lines.txt")]
    assert shas(d)["lines.txt"] == before["lines.txt"]


def test_a_sweep_whose_record_is_gone_keeps_its_summary_files_as_the_users(small_sweep, tmp_path, capsys,
                                                                         fast_figures):
    src, argv = small_sweep
    d = Path(shutil.copytree(src, tmp_path / "sw"))
    assert main(["-q", *argv, "--out", str(d), "--summary-only"]) == 0  # a copy: its record came with it
    for record in (d / ".lrn-output", d / "figures" / ".lrn-output"):
        record.unlink()  # nothing names the summary files as lrn's any more: they are the user's
    before = shas(d)
    refusal(lrn(capsys, *argv, "--out", d, "--summary-only"), "lines.txt exists and lrn did not write it")
    assert shas(d) == before  # nothing taken as lrn's, nothing written: not even the record


def test_report_again_over_a_page_you_edited_is_refused_saying_why(runs, tmp_path, capsys):
    page = tmp_path / "page.html"
    assert main(["-q", "report", str(runs["gpt"]), "--out", str(page)]) == 0
    explorer = tmp_path / "page-explorer.html"
    record = json.loads((tmp_path / ".lrn-output").read_text())
    assert record["files"]["page.html"] == hashlib.sha256(page.read_bytes()).hexdigest()
    assert main(["-q", "report", str(runs["gpt"]), "--out", str(page)]) == 0  # lrn's, unchanged: no --force needed
    page.write_text(page.read_text().replace("</body>", "<p>my notes on this run</p></body>"))
    before = shas(tmp_path)
    line = refusal(lrn(capsys, "report", runs["gpt"], "--out", page),
                   "page.html was changed since lrn wrote it, so it is yours now",
                   "choose another --out, or move the file away yourself")
    assert "--force" not in line  # (lrn report has none: a page lrn wrote is replaced as it runs again)
    assert shas(tmp_path) == before and explorer.is_file()


def test_an_explorer_page_you_edited_survives_running_it_again(runs, tmp_path, capsys):
    page = tmp_path / "ex.html"
    assert main(["-q", "embed", "explore", str(runs["gpt"]), "--out", str(page)]) == 0
    page.write_text(page.read_text() + "<!-- mine -->")
    before = shas(tmp_path)
    refusal(lrn(capsys, "embed", "explore", runs["gpt"], "--out", page),
            "ex.html was changed since lrn wrote it")
    assert shas(tmp_path) == before


@pytest.mark.parametrize("command,tag", [("report", '<meta name="generator" content="lrn report">'),
                                         ("explore", '<meta name="generator" content="lrn embed explore">')])
def test_a_page_that_only_carries_lrns_generator_tag_is_yours(command, tag, runs, tmp_path, capsys):
    page = tmp_path / "mine.html"
    page.write_text(f"<!doctype html><html><head>{tag}</head><body>my page</body></html>\n")
    before = shas(tmp_path)
    argv = ["report", runs["gpt"]] if command == "report" else ["embed", "explore", runs["gpt"]]
    refusal(lrn(capsys, *argv, "--out", page), "mine.html exists and lrn did not write it")
    assert shas(tmp_path) == before


def test_an_edited_meta_json_of_prepared_data_survives_force(text_corpus, tmp_path, capsys):
    out = tmp_path / "prep"
    argv = ["data", "prepare", "--corpus", text_corpus, "--vocab-size", "290", "--out", str(out)]
    assert main(["-q", *argv]) == 0
    meta = json.loads((out / "meta.json").read_text())
    (out / "meta.json").write_text(json.dumps({**meta, "my_note": "the run of 3 May"}, indent=2))
    before = shas(out)
    for vocab in ("290", "280"):  # the same data (reused, read only) and other data (would replace it)
        args = [*argv[:5], vocab, *argv[6:], "--force"]
        result = lrn(capsys, *args)
        if vocab == "290":
            assert result[0] == 0 and "data: cached" in result[2]  # read, not written
        else:
            refusal(result, "that were changed since lrn wrote it (meta.json)", "with or without --force")
    assert shas(out) == before


def test_force_never_replaces_a_run_whose_record_is_gone_or_a_run_file_you_edited(runs, tmp_path, capsys,
                                                                                text_corpus):
    old = Path(shutil.copytree(runs["gpt"], tmp_path / "old"))
    (old / ".lrn-output").unlink()  # no run any more: nothing names the files as lrn's
    before = shas(old)
    argv = ["train", "--config", str(old / "config.json"), "--force"]
    refusal(lrn(capsys, *argv, "--out", old), "holds files lrn did not write (ckpt_best.pt",
            "with or without --force")
    assert shas(old) == before
    edited = Path(shutil.copytree(runs["gpt"], tmp_path / "edited"))
    (edited / "config.json").write_text((edited / "config.json").read_text().replace("{", "{\n  \"note\": 1,", 1))
    before = shas(edited)
    refusal(lrn(capsys, *argv, "--out", edited), "config.json lrn may not remove",
            "it was changed since lrn wrote it", "move it out of the run")
    assert shas(edited) == before
    kept = shas(old)
    refusal(lrn(capsys, "train", "--out", old, "--resume", "--steps", "3"), "holds no lrn run")
    assert shas(old) == kept


def test_force_over_an_unchanged_run_hashes_no_checkpoint(tiny_config, tmp_path, monkeypatch):
    """size, mtime and inode as recorded prove a file unchanged; only a file whose stamp moved is hashed."""
    import lrngpt.core.ownership as record
    from lrngpt.store.rundir import RunDir

    train_run(tiny_config("train.steps=2"), tmp_path / "r", progress=False, log=lambda m: None)
    run = RunDir(tmp_path / "r")
    hashed = []
    real = record.sha256_file
    monkeypatch.setattr(record, "sha256_file", lambda p, limit=None: hashed.append(Path(p).name) or real(p, limit))
    assert run.kept_files() == {}
    assert not [n for n in hashed if n.endswith(".pt")], hashed
    os.utime(run / "ckpt_last.pt")  # touched, not changed: hashed once, still lrn's
    assert run.kept_files() == {} and hashed.count("ckpt_last.pt") == 1


def test_a_kill_between_the_record_and_the_rename_leaves_a_file_lrn_still_knows(tmp_path, monkeypatch):
    import lrngpt.core.ownership as ownership
    from lrngpt.core.ownership import OURS, state

    page = tmp_path / "p.html"
    ownership.write_owned_file(page, "first", "report")
    monkeypatch.setattr(ownership, "replace_file", lambda src, dst: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        ownership.write_owned_file(page, "second", "report")  # killed after its record entry, before the rename
    monkeypatch.undo()
    assert page.read_text() == "first" and state(page)[0] == OURS
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]
    ownership.write_owned_file(page, "third", "report")
    assert page.read_text() == "third" and state(page)[0] == OURS


# ---- train.logger as a list in the user's config files ---------------------------------------------

@pytest.mark.parametrize("suffix,text", [
    ("json", '{"data": {"corpus": "CORPUS"}, "train": {"logger": ["csv", "tensorboard"]}}'),
    ("yaml", "data:\n  corpus: CORPUS\ntrain:\n  logger: [csv, tensorboard]\n"),
    ("yml", "data:\n  corpus: CORPUS\ntrain:\n  logger:\n    - all\n"),
])
def test_train_logger_as_a_list_in_a_config_file(suffix, text, text_corpus, tmp_path, capsys):
    if suffix != "json":
        pytest.importorskip("ruamel.yaml")
    path = tmp_path / f"c.{suffix}"
    path.write_text(text.replace("CORPUS", text_corpus))
    want = ("tensorboard", "wandb", "mlflow", "csv") if "all" in text else ("csv", "tensorboard")
    assert load_config(str(path)).train.loggers == want
    assert main(["config", "show", str(path), "--json"]) == 0  # shown as config.json keeps it: the names, joined
    assert '"csv,tensorboard"' in capsys.readouterr().out or "all" in text


@pytest.mark.parametrize("value", ['[]', '["csv", 3]', '[["csv"]]', '{"csv": true}'])
def test_train_logger_of_another_shape_in_a_config_file_is_exit_2(value, text_corpus, tmp_path, capsys):
    path = tmp_path / "c.json"
    path.write_text(f'{{"data": {{"corpus": "{text_corpus}"}}, "train": {{"logger": {value}}}}}')
    assert main(["config", "show", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "train.logger" in err[0], err


# ---- issue 29: a budget on a text of your own -------------------------------------------------------

def test_a_budget_on_a_text_too_small_for_one_window_is_refused_before_anything_is_timed(tmp_path, capsys, monkeypatch):
    import lrngpt.training.timing as run_timing

    def no_probe(*args, **kwargs):
        raise AssertionError("nothing is timed for a text that holds no window")

    monkeypatch.setattr(run_timing, "probe", no_probe)
    text = tmp_path / "tiny.txt"
    text.write_text("just a few words here", encoding="utf-8")
    code = main(["sweep", "embed-dim", "--minutes", "8", "--set", f"data.corpus=text:{text}", "--set",
                 "data.vocab_size=300", "--out", str(tmp_path / "w"), "--dry-run"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and "too few for one window of 257; give it more text" in err[-1] and "Traceback" not in "".join(err)
    assert not (tmp_path / "w").exists()


# ---- width against depth: sweep files with a shape axis, configs with an aspect ratio ---------------------

SHAPE_FILE_CASES = {
    "a shape that is a number": ({"model.n_layer+model.n_embd": [2, 4]}, "each value must be a list of 2"),
    "a shape with three values for two keys": ({"model.n_layer+model.n_embd": [[2, 120, 15]]},
                                               "each value must be a list of 2"),
    "a shape holding a list": ({"model.n_layer+model.n_embd": [[2, [120]]]}, "each value must be a list of 2"),
    "a repeated shape": ({"model.n_layer+model.n_embd": [[2, 128], [2, 128]]}, "repeats a value"),
    "a shape with a key of the wrong form": ({"model.n_layer+n_embd": [[2, 128]]}, "must be data.KEY"),
}


@pytest.mark.parametrize("case", SHAPE_FILE_CASES)
def test_a_sweep_file_with_a_bad_shape_axis_is_one_line(case, tmp_path, capsys):
    axes, needle = SHAPE_FILE_CASES[case]
    path = tmp_path / "shapes.json"
    path.write_text(json.dumps({"base": "gpt-default", "scale": "cpu", "axes": axes}))
    assert main(["sweep", str(path), "--out", str(tmp_path / "out"), "--dry-run"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err and needle in err[-1] and "Traceback" not in "\n".join(err), err
    assert not (tmp_path / "out").exists()


def test_a_sweep_file_with_a_shape_axis_reads_as_its_shapes(tmp_path):
    from lrngpt.experiments.grid import resolve_sweep

    path = tmp_path / "shapes.json"
    path.write_text(json.dumps({"base": "gpt-default", "scale": "cpu",
                                "axes": {"model.n_layer+model.n_embd+model.n_head": [[2, 120, 15], [28, 32, 4]]}}))
    sweep = resolve_sweep(str(path))
    assert [(p.config.model.n_layer, p.config.model.n_embd, p.config.model.n_head) for p in sweep.points] == \
        [(2, 120, 15), (28, 32, 4)]
    assert [p.values for p in sweep.points][0] == {"model.n_layer": 2, "model.n_embd": 120, "model.n_head": 15}


def test_a_damaged_sweep_json_with_a_shape_axis_is_named(tmp_path, capsys):
    from lrngpt.experiments.sweepdir import check_definition

    good = {"version": 1, "scale": "cpu", "name": "x", "base": {"data": {}}, "points": [],
            "axes": {"model.n_layer+model.n_embd": [[2, 128], [8, 64]]}}
    assert check_definition(good, tmp_path / "sweep.json") is good
    for bad in ({"model.n_layer+model.n_embd": [[2, {"d": 128}]]}, {"model.n_layer": [[2, 128]]}):
        with pytest.raises(Exception, match="axes must be an object of key"):
            check_definition({**good, "axes": bad}, tmp_path / "sweep.json")


def test_a_config_file_in_the_aspect_form_and_its_run_config_read_alike(tmp_path, capsys):
    path = tmp_path / "deep.json"
    path.write_text(json.dumps({"model_type": "gpt", "data": {"corpus": "stories:300KB", "vocab_size": 512},
                                "model": {"context_length": 32, "n_layer": 3, "aspect_ratio": 48, "head_dim": 16},
                                "train": {"seq_len": None}}))
    cfg = load_config(str(path))
    assert (cfg.model.n_embd, cfg.model.n_head) == (144, 9)  # 3 x 48 = 144, a multiple of 16
    saved = tmp_path / "config.json"
    saved.write_text(json.dumps(cfg.to_dict()))  # what a run directory keeps: both forms, in agreement
    assert load_config(str(saved)).model == cfg.model
    assert load_config(str(saved), ["model.n_layer=4"]).model.n_embd == 192  # a new depth, a new width


def test_a_sweep_with_points_at_once_leaves_the_users_text_and_files_as_they_were(text_corpus, tmp_path):
    """Points trained in worker processes write only their own run directories: the corpus a sweep reads
    and a file of yours beside it keep their bytes."""
    out = tmp_path / "sw"
    note = tmp_path / "notes.txt"  # beside the sweep (a sweep refuses a directory holding files of yours)
    note.write_text("my notes\n")
    text = Path(text_corpus.removeprefix("text:"))
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (note, text)}
    code, _, err = run_cli("sweep", "embed-dim", "--scale", "tiny", "--axis", "model.n_embd=4,8", "--set",
                           "train.steps=5", "--corpus", text_corpus, "--out", str(out), "--points-at-once", "2")
    assert code == 0, err
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (note, text)} == before
    assert sorted(p.name for p in (out / "runs").iterdir()) == ["d4-s1337-t5", "d8-s1337-t5"]


@pytest.mark.parametrize("kind", ["missing", "a directory", "a FIFO", "not UTF-8"])
def test_the_planted_finding_of_an_out_without_a_readable_planted_json_says_so_in_one_line(kind, tmp_path):
    from lrngpt.errors import UserError
    from lrngpt.experiments.planted import planted_findings

    path = tmp_path / "planted.json"
    if kind == "a directory":
        path.mkdir()
    elif kind == "a FIFO":
        os.mkfifo(path)
    elif kind == "not UTF-8":
        path.write_bytes(b"\xff\xfe{}")
    before = snapshot(tmp_path)
    with pytest.raises(UserError) as e:
        planted_findings(tmp_path)
    assert str(path) in str(e.value) and "\n" not in str(e.value), str(e.value)
    assert snapshot(tmp_path) == before  # nothing written (a FIFO is never opened)


@pytest.mark.parametrize("make", ["directory", "fifo", "not utf-8"])
def test_a_chapter_plan_that_is_not_a_json_file_is_one_line(make, tmp_path, capsys):
    """DIR/chapter.json replaced by a directory, a FIFO or bytes that are not UTF-8: named, never opened or
    replaced, before anything is planned."""
    from lrngpt.experiments import chapter_plan as cp
    from lrngpt.experiments.chapter_dir import ChapterDir

    d = tmp_path / "ch"
    ChapterDir(d).start(cp.ChapterPlan.from_dict({"version": cp.VERSION, "scale": "tiny", "minutes": None, "out": str(d), "est_seconds": 1.0,
                 "parts": [{"name": "width", "kind": "sweep", "what": "findings 1 and 2", "est_seconds": 1.0}]}))
    plan = d / "chapter.json"
    plan.unlink()
    if make == "directory":
        plan.mkdir()
    elif make == "fifo":
        os.mkfifo(plan)
    else:
        plan.write_bytes(b"\xff\xfe{")
    code, _, err = lrn(capsys, "chapter", "--scale", "tiny", "--out", d)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "chapter.json" in err or str(d) in err
