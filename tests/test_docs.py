"""The README and docs/ stand on their own: every relative link and image resolves, every #anchor
names a heading of its page, and nothing points outside the repository; the extras the README names
exist. The README is the front door (at most 250 lines, every config and sweep preset named); the
documentation site builds strictly and offline, with a reference entry for every `lrn` command and
every name of `lrngpt.__all__`; the commands of the first-hour tutorial run (those that take seconds)
or parse with their --help (those that take minutes); the Optuna how-to's script runs."""

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return {slug(m) for m in re.findall(r"^#+ (.+)$", text, flags=re.M)}


def links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+://|mailto:", t)]


def test_slug_follows_githubs_rule():
    assert slug("The study on real text: State of the Union addresses (measured)") == \
        "the-study-on-real-text-state-of-the-union-addresses-measured"
    assert slug("The embedding-width study (`lrn sweep`)") == "the-embedding-width-study-lrn-sweep"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_resolves(page):
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no file {dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.name}")
        elif not dest.is_relative_to(ROOT):
            broken.append(f"{target}: outside the repository")
    assert not broken, broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_do_not_point_outside_the_repository(page):
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"\.\./shared|SPEC section|seeds/00", text)


def sh_lines(page: Path) -> list[str]:
    """The command lines of a page's ```sh blocks, comments dropped, continuation lines joined."""
    blocks = re.findall(r"```sh\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)
    lines = [line.split("  #")[0].strip() for b in blocks for line in b.replace("\\\n", " ").splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def test_the_readme_is_a_front_door_of_at_most_250_lines():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 250


def test_the_readme_opens_with_make_demo_and_make_test_then_the_next_three_commands_that_parse():
    from lrngpt.cli.main import build_parser

    blocks = re.findall(r"```sh\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), flags=re.S)
    first = [line.split("#")[0].strip() for line in blocks[0].splitlines()]
    assert first == ["make demo", "make test"]
    nxt = [line.split("  #")[0].strip() for line in blocks[1].splitlines()]
    assert nxt[0] == "source .venv/bin/activate"
    lrn = [shlex.split(line)[1:] for line in nxt if line.startswith("lrn ")]
    assert [argv[0] for argv in lrn] == ["sweep", "sweep", "report"] and "--dry-run" in lrn[0]
    for argv in [*lrn, *(shlex.split(line)[1:] for line in sh_lines(ROOT / "README.md") if line.startswith("lrn "))]:
        build_parser().parse_args(argv)  # each one as the CLI reads it: no option the command lacks


def named(text: str, kind: str) -> set[str]:
    """The backticked names of the README's line that starts with `kind` ("Named configs", "Sweep presets")."""
    flat = " ".join(text.split())
    part = flat.split(kind, 1)[1].split(". ", 1)[0]
    return set(re.findall(r"`([a-z0-9][a-z0-9-]*)`", part))


def test_the_readme_and_the_configs_page_name_every_config_and_every_sweep_preset():
    from lrngpt.experiments.presets import STUDIES
    from lrngpt.runconfig.schema import PRESET_DIR

    configs = {p.stem for p in PRESET_DIR.glob("*.json")}
    presets = set(STUDIES)
    assert {"mlp-chapter", "gpt-book-8"} <= configs and {"embed-dim", "width-depth"} <= presets
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert named(readme, "Named configs") - {"lrn"} == configs
    assert named(readme, "Sweep presets") - {"lrn"} == presets
    page = (ROOT / "docs" / "reference" / "configs.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `([a-z0-9-]+)` \|", page, flags=re.M))
    assert rows == configs | presets


# ---- the first hour, as a student types it --------------------------------------------------------

MINUTES = {"demo", "sweep", "chapter"}  # what takes minutes: checked by its parse and its --help


@pytest.fixture(scope="module")
def first_hour_places(trained, trained_sweep, tmp_path_factory):
    """runs/demo and runs/width of the tutorial: a seconds-long MLP run and a tiny width sweep."""
    here = tmp_path_factory.mktemp("first-hour")
    demo = trained("mlp-tiny", copy_to=here)
    width = trained_sweep("embed-dim", "train.steps=6", "train.eval_tokens=300", "train.train_eval_tokens=300",
                          axes=("model.n_embd=8,16",), copy_to=here).dir
    return {"runs/demo": str(demo), "runs/width": str(width)}


def test_the_first_hours_commands_run_or_parse_with_their_help(first_hour_places, capsys):
    from lrngpt.cli.main import build_parser, main

    lines = sh_lines(ROOT / "docs" / "tutorials" / "first-hour.md")
    assert lines[:2] == ["make demo", "source .venv/bin/activate"]
    assert "demo:" in (ROOT / "Makefile").read_text()
    ran, parsed = [], []
    for line in lines[2:]:
        argv = shlex.split(line)
        assert argv[0] == "lrn", line
        argv = [first_hour_places.get(a, a) for a in argv[1:]]
        build_parser().parse_args(argv)
        if argv[0] in MINUTES:
            with pytest.raises(SystemExit) as e:
                main([argv[0], "--help"])
            assert e.value.code == 0
            parsed.append(argv[0])
        else:
            code = main(argv)
            out, err = capsys.readouterr()
            assert code == 0, (line, err)
            assert out.strip(), line  # each prints what it found
            ran.append(argv[0])
    assert ran.count("sample") == 2 and {"embed", "eval", "theory", "cost", "report"} <= set(ran)
    assert parsed == ["sweep", "sweep"]


def test_the_tutorials_and_how_tos_commands_parse():
    from lrngpt.cli.main import build_parser

    pages = [*sorted((ROOT / "docs" / "tutorials").glob("*.md")), *sorted((ROOT / "docs" / "how-to").glob("*.md")),
             ROOT / "docs" / "explanation" / "theory.md"]
    checked = 0
    for page in pages:
        for line in sh_lines(page):
            if line.startswith("lrn ") and "$" not in line:
                build_parser().parse_args(shlex.split(line)[1:])
                checked += 1
    assert checked >= 25


# ---- the documentation site -------------------------------------------------------------------------

def mkdocs(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    pytest.importorskip("mkdocstrings_handlers.python")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run([sys.executable, "-m", "mkdocs", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The documentation site, built as `make docs` builds it: strictly (any warning fails)."""
    out = tmp_path_factory.mktemp("site")
    r = mkdocs("build", "--strict", "--site-dir", str(out))
    assert r.returncode == 0, r.stderr[-4000:]
    return out


def ids(html: Path) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', html.read_text(encoding="utf-8")))


def test_the_site_builds_strictly_and_holds_every_page_of_its_nav(site):
    import yaml

    def pages(nav):
        for item in nav:
            for value in item.values():
                yield from pages(value) if isinstance(value, list) else [value]

    # the nav lists every page under docs/ (a page outside it would be built but never reached)
    nav = list(pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]))
    on_disk = sorted(str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md"))
    assert sorted(nav) == on_disk
    for page in nav:
        built = site / (page[:-3] + "/index.html" if page != "index.md" else "index.html")
        assert built.is_file(), page
    assert (site / "notebooks" / "2-width-study.ipynb").is_file()  # the tutorials' links to the notebooks


def test_the_site_needs_no_network_to_read(site):
    """No font, script or style from another host (mkdocs-material's Google Fonts are off)."""
    remote = re.compile(r'<(?:link|script|img)\b[^>]*\b(?:href|src)="(?:https?:)?//', re.I)
    found = {str(p.relative_to(site)): m.group(0) for p in site.rglob("*.html") for m in [remote.search(p.read_text())] if m}
    assert not found, found


def test_every_lrn_command_has_its_reference_entry(site):
    from lrngpt.cli.main import build_parser

    def paths(parser, path=("lrn",)):
        for action in parser._actions:
            if action.__class__.__name__ == "_SubParsersAction":
                for name in [a.dest for a in action._choices_actions]:
                    yield (*path, name)
                    yield from paths(action.choices[name], (*path, name))

    commands = list(paths(build_parser()))
    assert len(commands) > 40 and ("lrn", "embed", "undertrained") in commands
    page = site / "reference" / "cli" / "index.html"
    missing = ["-".join(c) for c in commands if "-".join(c) not in ids(page)]
    assert not missing, missing
    text = page.read_text(encoding="utf-8")
    assert "--temperature" in text and "greedy" in text  # each entry is the command's own help


def test_every_name_of_lrngpt_all_has_its_reference_entry_from_its_docstring(site):
    import inspect

    import lrngpt
    import lrngpt.api as api

    page = site / "reference" / "api" / "index.html"
    found = ids(page)
    missing = [n for n in lrngpt.__all__ if f"{api.WHERE[n]}.{n}" not in found]
    assert not missing, missing
    text = " ".join(re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8")).split())
    for name in ("train", "planted_tokens_figure", "sweep"):  # the docstring's own words are on the page
        first = " ".join(inspect.getdoc(getattr(lrngpt, name)).split())[:40]
        assert first.split("`")[0][:25] in text, name


@pytest.mark.parametrize("broken", ["a link to a page that is not there", "an anchor no heading has",
                                    "a name mkdocstrings cannot find"])
def test_the_strict_build_fails_on_a_broken_link_or_a_missing_reference(broken, tmp_path):
    """The site's own settings (strict, every link check a warning), on a two-page site with one fault."""
    import yaml

    settings = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "other.md").write_text("# Other\n\n## Here\n")
    body = {"a link to a page that is not there": "[gone](gone.md)",
            "an anchor no heading has": "[there](other.md#not-here)",
            "a name mkdocstrings cannot find": "::: lrngpt.api.runs.no_such_name"}[broken]
    (docs / "index.md").write_text(f"# Home\n\n[other](other.md)\n\n{body}\n")
    plugins = [{"mkdocstrings": {"handlers": {"python": {"paths": [str(ROOT)]}}}}]
    keep = {k: settings[k] for k in ("strict", "validation", "theme", "markdown_extensions")}
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump({**keep, "site_name": "t", "plugins": plugins,
                                                         "nav": ["index.md", "other.md"]}))
    r = mkdocs("build", "--strict", "--site-dir", str(tmp_path / "site"), cwd=tmp_path)
    assert r.returncode != 0, r.stderr
    assert {"a link to a page that is not there": "gone.md", "an anchor no heading has": "not-here",
            "a name mkdocstrings cannot find": "no_such_name"}[broken] in r.stderr


@pytest.mark.slow
def test_the_optuna_how_tos_search_runs_trains_and_keeps_its_trials(tmp_path, monkeypatch, capsys):
    """The page's script as written, with 4 trials instead of 20: each trial one run directory whose
    config holds the trial's values, the study in its sqlite file, a best value that is a val bpb."""
    pytest.importorskip("optuna")
    (block,) = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "how-to" / "optuna.md").read_text(), flags=re.S)
    assert "n_trials=20" in block and "lrngpt.train(" in block
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    namespace: dict = {}
    exec(compile(block.replace("n_trials=20", "n_trials=4"), "optuna.md", "exec"), namespace)
    study = namespace["study"]
    assert len(study.trials) == 4
    done = [t for t in study.trials if t.state.name == "COMPLETE"]
    assert done and all(0 < t.value < 10 for t in done)
    for t in done:
        config = json.loads((tmp_path / "runs" / "search" / f"trial-{t.number}" / "config.json").read_text())
        assert config["model"]["n_embd"] == t.params["n_embd"] and config["train"]["lr"] == pytest.approx(t.params["lr"])
    assert (tmp_path / "runs" / "search.db").is_file()
    assert str(study.best_params) in capsys.readouterr().out


def test_every_setting_the_chapter_does_not_state_switches_back_with_its_set():
    """The study's table of mlp-chapter's own choices: each row's --set is a valid override that changes
    the preset's value (so the table cannot name a key or value that does nothing)."""
    from lrngpt.runconfig.schema import load_config, read_config_dict

    text = (ROOT / "docs" / "embedding-width-study.md").read_text(encoding="utf-8")
    table = text.split("### What the chapter does not state", 1)[1].split("\n\n", 3)[2]
    sets = re.findall(r"`--set ([a-z_]+\.[a-z_0-9]+=[^`]+)`", table)
    keys = {s.split("=")[0] for s in sets}
    assert {"model.emb_init_std", "train.beta2", "train.weight_decay", "train.min_lr", "train.dtype",
            "train.tf32"} <= keys, sets
    base = load_config("mlp-chapter").to_dict()
    assert read_config_dict("mlp-chapter")["model"]["emb_init_std"] == 0.1
    for item in sets:
        section, name = item.split("=")[0].split(".")
        changed = load_config("mlp-chapter", [item]).to_dict()
        assert changed[section][name] != base[section][name], item
def test_every_extra_the_install_page_names_exists():
    text = (ROOT / "README.md").read_text(encoding="utf-8") + (ROOT / "docs" / "how-to" / "install.md").read_text()
    named = set(re.findall(r"`\.\[([a-z0-9-]+)\]`", text))
    assert {"dev", "gpt2", "tensorboard", "wandb", "mlflow", "parquet", "hf", "maps", "umap", "yaml",
            "completion"} <= named
    assert named <= set(PROJECT["optional-dependencies"]), named - set(PROJECT["optional-dependencies"])


def test_the_package_says_what_it_is_and_ships_its_type_marker():
    assert (ROOT / "lrngpt" / "py.typed").is_file()
    assert "Typing :: Typed" in PROJECT["classifiers"]
    assert not [c for c in PROJECT["classifiers"] if c.startswith("License ::")]  # the SPDX expression says it
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["lrngpt"]
    assert "py.typed" in data
