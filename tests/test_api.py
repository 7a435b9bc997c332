"""The Python API (lrngpt.api): the same numbers as `lrn`, configs checked when used, library-style
logging, inline HTML, plain data, and a package that imports without torch and documents itself."""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

import lrngpt
from lrngpt.cli.main import main
from tests.cli_run import HUNG

ROOT = Path(__file__).resolve().parents[1]
FUNCTIONS = [n for n in lrngpt.__all__ if n not in ("__version__", "Run", "Sweep", "UserError")]


def settings(corpus: str, **more) -> dict:
    return {"data.corpus": corpus, "data.vocab_size": 300, "train.device": "cpu", **more}


def cli_sets(values: dict) -> list[str]:
    return [arg for k, v in values.items() for arg in ("--set", f"{k}={v}")]


def python(code: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env_path = str(ROOT)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HUNG, cwd=cwd,
                          env={**__import__("os").environ, "PYTHONPATH": env_path})


@pytest.fixture(scope="module")
def api_run(text_corpus, tmp_path_factory):
    """A run trained through the API, with the rows its callback saw."""
    rows: list[dict] = []
    out = tmp_path_factory.mktemp("api") / "run"
    run = lrngpt.train(lrngpt.config("mlp-tiny", set=settings(text_corpus, **{"train.steps": 12})), out,
                       on_metric=rows.append, progress=False)
    return run, rows


# ---- the package -----------------------------------------------------------------------------

def test_import_lrngpt_and_touching_the_light_api_imports_no_torch():
    """A name loads its module on first use (lrngpt.api.WHERE): the API's face and the names that need
    no torch (theory, cost) stay light; lrngpt.train loads lrngpt.api.runs, and torch with it."""
    r = python("import sys, lrngpt\ndir(lrngpt); lrngpt.__all__; lrngpt.UserError; lrngpt.__version__\n"
               "lrngpt.theory_jl; lrngpt.cost_mlp; lrngpt.cost_gpt; lrngpt.theory_fourth_root\n"
               "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'matplotlib', 'pandas')))")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_api_names_are_the_api_functions():
    importlib.import_module("lrngpt.training.trainer"), importlib.import_module("lrngpt.runconfig.schema")
    assert lrngpt.train is lrngpt.api.train and lrngpt.config is lrngpt.api.config
    assert set(lrngpt.api.__all__) == set(lrngpt.__all__)  # the package re-exports the API, its version included


def test_every_public_function_has_type_hints_and_a_docstring_with_an_example():
    for name in FUNCTIONS:
        fn = getattr(lrngpt, name)
        assert "Example" in (fn.__doc__ or ""), name
        hints = inspect.signature(fn)
        assert hints.return_annotation is not inspect.Signature.empty, name
        missing = [p for p, v in hints.parameters.items() if v.annotation is inspect.Parameter.empty]
        assert missing == [], (name, missing)
    for cls in (lrngpt.Run, lrngpt.Sweep):
        public = [n for n, _ in inspect.getmembers(cls) if not n.startswith("_") and n not in ("COLUMNS",)]
        assert public and all("Example" in (getattr(cls, n).__doc__ or "") for n in public), cls


def test_help_lists_the_api_with_its_docstrings():
    r = python("import lrngpt; help(lrngpt)")
    assert r.returncode == 0, r.stderr
    for name in FUNCTIONS:
        first = getattr(lrngpt, name).__doc__.strip().splitlines()[0]
        assert f"{name}(" in r.stdout and first in r.stdout, name
    assert "class Run" in r.stdout and "class Sweep" in r.stdout and "class UserError" in r.stdout


# ---- configs ---------------------------------------------------------------------------------

def test_overrides_in_every_spelling_give_the_same_config():
    want = lrngpt.config("mlp-tiny", set=["model.n_embd=24", "train.lr=0.02"])
    assert lrngpt.config("mlp-tiny", **{"model.n_embd": 24, "train.lr": 0.02}) == want
    assert lrngpt.config("mlp-tiny", set={"model.n_embd": 24}, **{"train.lr": 0.02}) == want
    assert lrngpt.config(lrngpt.config("mlp-tiny"), **{"model.n_embd": 24, "train.lr": 0.02}) == want
    assert want.model.n_embd == 24 and want.train.lr == 0.02


@pytest.mark.parametrize(("key", "value"), [("train.lr", "fast"), ("model.n_embd", 0), ("train.device", "gpu"),
                                            ("data.val_fraction", 1.5)])
def test_a_bad_value_set_on_a_built_config_fails_as_set_does(key, value, text_corpus, tmp_path, capsys):
    base = settings(text_corpus)
    assert main(["train", "--config", "mlp-tiny", *cli_sets(base), "--set", f"{key}={value}",
                 "--out", str(tmp_path / "cli")]) == 2
    err = capsys.readouterr().err
    cfg = lrngpt.config("mlp-tiny", set=base)
    section, name = key.split(".")
    setattr(getattr(cfg, section), name, value)
    with pytest.raises(lrngpt.UserError) as e:
        lrngpt.train(cfg, tmp_path / "api", progress=False)
    assert err == f"lrn train: error: {e.value}\n"
    assert "\n" not in str(e.value) and not (tmp_path / "api").exists()


def test_a_bad_key_fails_as_set_does(capsys):
    assert main(["config", "show", "mlp-tiny", "--set", "model.n_emb=8"]) == 2
    with pytest.raises(lrngpt.UserError) as e:
        lrngpt.config("mlp-tiny", **{"model.n_emb": 8})
    assert capsys.readouterr().err == f"lrn config: error: {e.value}\n"


# ---- the same code path as lrn -----------------------------------------------------------------

def test_train_through_the_api_and_through_lrn_train_give_identical_summaries(api_run, text_corpus, tmp_path):
    run, rows = api_run
    cli = tmp_path / "cli"
    assert main(["-q", "train", "--config", "mlp-tiny", *cli_sets(settings(text_corpus, **{"train.steps": 12})),
                 "--out", str(cli)]) == 0
    a, b = run.summary, json.loads((cli / "summary.json").read_text())
    for key in ("val_bpb", "train_bpb", "gap", "best_val_bpb", "best_step", "val_tokens", "passes", "step"):
        assert a[key] == b[key], key
    def metrics(d: Path) -> list[dict]:  # every row but its timing
        return [{k: v for k, v in json.loads(line).items() if k != "tokens_per_s"}
                for line in (d / "metrics.jsonl").read_text().splitlines()]

    assert metrics(run.path) == metrics(cli)
    # the callback saw every row metrics.jsonl holds, in order, as written
    written = [json.loads(line) for line in (run.path / "metrics.jsonl").read_text().splitlines()]
    assert rows == written and len(rows) > 3 and rows[-1]["final"] is True


def test_run_methods_give_what_the_commands_print(api_run, capsys):
    run, _ = api_run
    path = str(run.path)
    assert main(["eval", path, "--split", "val", "--json"]) == 0
    assert run.eval()["val_bpb"] == json.loads(capsys.readouterr().out)["val_bpb"]
    assert main(["sample", path, "--prompt", "Lily saw", "--seed", "3", "--max-new-tokens", "12", "--json"]) == 0
    assert run.sample("Lily saw", max_new_tokens=12, seed=3) == json.loads(capsys.readouterr().out)["samples"][0]["text"]
    assert main(["embed", "neighbors", path, "--token", " Lily", "-k", "4", "--json"]) == 0
    assert run.neighbors(" Lily", k=4) == json.loads(capsys.readouterr().out)["results"][0]["neighbors"]
    assert main(["embed", "axes", path, "--json"]) == 0
    assert run.axes() == json.loads(capsys.readouterr().out)
    cats = {"some": ["Tom", "bird", "a"], "others": ["sad", "hello", "her"]}  # single tokens of its 300-token BPE
    cat_file = run.path.parent / "cats.json"
    cat_file.write_text(json.dumps(cats))
    assert main(["embed", "purity", path, "--categories", str(cat_file), "--json"]) == 0
    assert run.purity(cats)["trained"] == json.loads(capsys.readouterr().out)["trained"]
    best = lrngpt.load(path, checkpoint="best")
    assert best.eval()["val_bpb"] == run.summary["best_val_bpb"]  # the val split is below train.eval_tokens
    assert run.step == run.summary["step"] and run.config.data.vocab_size == run.tokenizer.vocab_size == 300


def test_resume_continues_the_run_with_its_own_config(text_corpus, tmp_path):
    cfg = lrngpt.config("mlp-tiny", set=settings(text_corpus, **{"train.steps": 8}))
    lrngpt.train(cfg, tmp_path / "r", steps=4, progress=False)
    resumed = lrngpt.train(None, tmp_path / "r", resume=True, progress=False)
    straight = lrngpt.train(cfg, tmp_path / "s", progress=False)
    assert resumed.summary["step"] == 8 and resumed.summary["val_bpb"] == straight.summary["val_bpb"]
    with pytest.raises(lrngpt.UserError, match="only resume=True"):
        lrngpt.train(None, tmp_path / "x")


# ---- results as data, tables and figures -----------------------------------------------------------

def test_metrics_and_tables_are_lists_of_dicts_without_pandas(api_run, monkeypatch):
    run, rows = api_run
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` now raises ImportError
    assert run.metrics == rows and lrngpt.table([{"a": 1}]) == [{"a": 1}]


def test_run_renders_its_headline_and_curves_inline(api_run):
    run, rows = api_run
    html = run._repr_html_()
    untrained = next(r["val_bpb"] for r in rows if r["step"] == 0)
    assert f"{untrained:.4f} &rarr; {run.summary['val_bpb']:.4f}" in html
    assert f"train bpb <b>{run.summary['train_bpb']:.4f}</b>" in html
    assert html.count('src="data:image/png;base64,') == 1
    fig = run.figure()
    assert [ax.get_title() for ax in fig.axes] == ["training loss", "validation bpb"]
    assert repr(run) == f"Run({str(run.path)!r}, checkpoint='last': step 12, val bpb {run.summary['val_bpb']:.4f})"


@pytest.fixture(scope="module")
def api_sweep(text_corpus, tmp_path_factory):
    """A tiny width sweep through the API (d = 4, 8), with the rows its callback saw."""
    rows: list[dict] = []
    out = tmp_path_factory.mktemp("api-sweep") / "sw"
    sw = lrngpt.sweep("embed-dim", scale="tiny", out=out, set=settings(text_corpus, **{"train.steps": 4}),
                      axes={"model.n_embd": [4, 8]}, on_metric=rows.append, progress=False)
    return sw, rows


def test_sweep_through_the_api_table_figure_and_html(api_sweep):
    sw, rows = api_sweep
    table = sw.table
    records = table.to_dict("records") if hasattr(table, "to_dict") else table
    assert [r["n_embd"] for r in records] == [4, 8]
    for r in records:
        assert r["val_bpb"] == json.loads((sw.path / "runs" / r["name"] / "summary.json").read_text())["val_bpb"]
    assert {r["run"] for r in rows} == {r["name"] for r in records}
    html = sw._repr_html_()
    best = min(records, key=lambda r: r["val_bpb"])
    assert f"lowest val bpb <b>{best['val_bpb']:.4f} at d = {best['n_embd']}</b>" in html
    assert "data:image/png;base64," in html and f"{records[0]['val_bpb']:.4f}" in html
    assert sw.figure().axes and sw.figure("val_bpb_by_step") is not None
    with pytest.raises(lrngpt.UserError, match="name must be one of .val_bpb_by_width., .train_vs_val., .val_bpb_by_shape., .val_bpb_by_step."):
        sw.figure("nope")
    assert sw.run(8).summary["val_bpb"] == records[1]["val_bpb"]
    again = lrngpt.load_sweep(sw.path)
    assert again.rows == sw.rows and "2 of 2 runs finished" in repr(again)


def test_lessons_theory_and_costs_are_plain_data():
    results = [lrngpt.lesson_lookup(batch=1, length=2, n_embd=8, vocab=10), lrngpt.lesson_lookup_grad(),
               lrngpt.lesson_tying(), lrngpt.theory_random_cosine(n=50, dims=[4, 8]), lrngpt.theory_jl(4096, 0.5),
               lrngpt.theory_fourth_root(4096), lrngpt.cost_mlp(widths=[4, 8]), lrngpt.cost_models(),
               lrngpt.cost_gpt(50257, 1024, n_embd=768, heads=12, layers=12, tied=True)]
    for r in results:
        json.dumps(r, allow_nan=False)  # no tensors, arrays or NaN: plain data
    lookup, grad = results[0], results[1]
    assert lookup["equal"] and grad["match"] and grad["grad"][1] == [0.0, 0.0]
    import math

    assert results[4] == pytest.approx(24 * math.log(4096) / (3 * 0.25 - 2 * 0.125))
    assert [r["model"] for r in results[7]][:2] == ["GPT-2 small", "GPT-2 medium"]
    assert results[8]["params"]["token_embedding"] == 50257 * 768


# ---- logging like a library ----------------------------------------------------------------------

@pytest.mark.slow
def test_an_application_s_basicconfig_receives_lrn_s_log_lines(text_corpus, tmp_path):
    code = f"""
import logging, lrngpt
logging.basicConfig(filename="app.log", level=logging.INFO, format="%(name)s %(levelname)s %(message)s")
cfg = lrngpt.config("mlp-tiny", set={settings(text_corpus, **{"train.steps": 4})!r})
lrngpt.train(cfg, "run")
"""
    r = python(code, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    log = (tmp_path / "app.log").read_text()
    assert "lrngpt INFO step 0: val bpb" in log and "lrngpt INFO data: " in log and "lrngpt INFO step 4: val bpb" in log
    assert "val bpb" not in r.stderr  # the library itself writes nothing to stderr


def test_an_application_that_configures_nothing_gets_no_lines():
    r = python("from lrngpt.core import log\nlog.info('hello'); log.warning('careful')\n"
               "print(log.logger.propagate, [type(h).__name__ for h in log.logger.handlers])")
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.strip() == "True ['NullHandler']"


def test_the_docs_page_lists_every_public_name():
    page = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    names = [n for n in lrngpt.__all__ if n not in ("Run", "Sweep")]
    members = [f"{cls.__name__}.{n}" for cls in (lrngpt.Run, lrngpt.Sweep)
               for n, _ in inspect.getmembers(cls) if not n.startswith("_") and n != "COLUMNS"]
    missing = [n for n in names if f"`{n}" not in page] + [m for m in members if m not in page]
    assert missing == []


# ---- a notebook reaches what `lrn` answers (issue 28) --------------------------------------------------------------

def plain(doc):
    """As --json prints it: strict JSON (width keys as strings, NaN as null)."""
    from lrngpt.api.frontend import json_safe

    return json.loads(json.dumps(json_safe(doc)))


def test_a_budget_dry_run_in_a_notebook_is_the_plan_lrn_sweep_prints(text_corpus, tmp_path, capsys, monkeypatch):
    """lrngpt.sweep(minutes=N, dry_run=True) plans the study into N minutes (with a probe of known times, as in
    tests/experiments/test_budget.py), trains and writes nothing, and is the document of `lrn sweep --minutes N
    --dry-run --json`; lrngpt.plan of the same sweep is that document too."""
    import lrngpt.training.timing as run_timing

    def probe(cfg, device, max_tokens=512, steps=3):
        return {"train_s_per_token": 2e-6, "eval_s_per_token": 1e-6, "probe_batch": cfg.train.batch_size,
                "probe_steps": steps}

    monkeypatch.setattr(run_timing, "probe", probe)
    # the bfloat16 offer's timing too: two measurements of one step never agree on a loaded machine
    monkeypatch.setattr("lrngpt.experiments.bf16_offer.dtype_step_seconds",
                        lambda cfg, device, *a, **k: {"float32": 3e-3, "bfloat16": 2e-3})
    own = settings(text_corpus, **{"train.batch_size": 1, "train.seq_len": 32})  # your own text caps the steps
    out = tmp_path / "evening"
    notes: list[str] = []
    r = lrngpt.sweep("embed-dim", out=out, minutes=2, set=own, dry_run=True, notes=notes.append)
    assert r["scale"] == "budget" and r["budget"]["minutes"] == 2 and r["budget"]["est_seconds"] <= 120
    assert r["budget"]["passes"] <= 0.25 and {p["state"] for p in r["points"]} == {"new"}
    assert not out.exists() and any("timing the chapter's MLP" in n for n in notes)
    assert main(["sweep", "embed-dim", "--minutes", "2", *cli_sets(own), "--out", str(out), "--dry-run", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    unstable = ("est_seconds", "parts", "point_seconds")  # the plan's estimates include the probe's own wall time
    def same(doc):
        return {**{k: v for k, v in doc.items() if k not in ("est_seconds", "points", "budget")},
                "points": [{k: v for k, v in p.items() if k != "est_seconds"} for p in doc["points"]],
                "budget": {k: v for k, v in doc["budget"].items() if k not in unstable}}

    assert same(plain(r)) == same(cli)
    assert same(plain(lrngpt.plan("embed-dim", out=out, minutes=2, set=own))) == same(cli)


def test_a_sweeps_findings_are_the_same_from_the_notebook_lrn_sweep_and_lrn_report(api_sweep, capsys):
    sw, _ = api_sweep
    findings = plain(sw.findings)
    assert [f["number"] for f in findings] == [1, 2, 3] and findings[0]["verdict"] == "cannot tell"
    assert plain(sw.result["findings"]) == findings  # what the sweep call itself judged
    assert plain(lrngpt.load_sweep(sw.path).findings) == findings  # from the directory alone
    # lrn sweep --summary-only and lrn report read the same verdicts from the directory alone: other flags (a
    # different study, scale and --set) are not needed, not used, and never met with advice to delete anything
    assert main(["sweep", "seed-variance", "--scale", "cpu", "--set", "train.steps=99", "--out", str(sw.path),
                 "--summary-only", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["findings"] == findings and "delete" not in err
    assert main(["report", str(sw.path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["findings"] == findings
    html = sw._repr_html_()  # the inline view shows them too
    assert "The book chapter on choosing the embedding width makes three findings" in html
    assert html.count('<div class="finding">') == 3


def test_eval_by_reads_in_a_notebook_is_lrn_eval_by_reads(api_run, capsys):
    run, _ = api_run
    r = run.eval(split=None, by_reads=True)
    assert main(["eval", str(run.path), "--by-reads", "--json"]) == 0
    assert plain(r) == json.loads(capsys.readouterr().out)
    assert 0 < r["read_share"] <= 1 and r["train_bpb_read"] != r["train_bpb_unread"]


def test_train_extends_a_finished_run_with_a_new_schedule_as_lrn_train_extend(text_corpus, tmp_path, capsys):
    cfg = lrngpt.config("mlp-tiny", set=settings(text_corpus, **{"train.steps": 4}))
    run = lrngpt.train(cfg, tmp_path / "r", progress=False)
    assert run.result["step"] == 4 and not run.result.get("already_finished")
    assert lrngpt.train(None, tmp_path / "r", resume=True, progress=False).result["already_finished"] is True
    with pytest.raises(lrngpt.UserError, match="pass extend=True to continue with the new schedule"):
        lrngpt.train(None, tmp_path / "r", resume=True, set={"train.steps": 6}, progress=False)
    longer = lrngpt.train(None, tmp_path / "r", resume=True, extend=True, set={"train.steps": 6}, progress=False)
    assert longer.summary["step"] == 6 and [c["step"] for c in longer.summary["schedule_changes"]] == [4]
    assert lrngpt.plan(None, out=tmp_path / "r")["steps"] == 6  # a resume's plan: the run's own config, as it is now


def test_the_choices_lrn_offers_are_the_librarys():
    """lrngpt.api.frontend names choices for `lrn --help` without importing torch; they are the library's own."""
    from lrngpt.analysis.export import FORMATS
    from lrngpt.api import frontend
    from lrngpt.explorer.page import PRECISIONS
    from lrngpt.explorer.views import METHODS
    from lrngpt.models.kinds import MODEL_TYPES

    assert (frontend.MODEL_TYPES, frontend.MAPS, frontend.PRECISIONS, frontend.EXPORT_FORMATS) == (
        MODEL_TYPES, METHODS, PRECISIONS, FORMATS)
