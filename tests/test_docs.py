"""The README and docs/ stand on their own: every relative link and image resolves, every #anchor
names a heading of its page, and nothing points outside the repository; the extras the README names
exist."""

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
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


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
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


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_docs_do_not_point_outside_the_repository(page):
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"\.\./shared|SPEC section|seeds/00", text)


def test_the_readme_opens_with_make_demo_and_make_test_then_the_first_hour_in_commands_that_parse():
    from lrngpt.cli.main import build_parser

    blocks = re.findall(r"```sh\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), flags=re.S)
    first = [line.split("#")[0].strip() for line in blocks[0].splitlines()]
    assert first == ["make demo", "make test"]
    quick = [line.split("  #")[0].strip() for line in blocks[1].splitlines()]
    assert quick[0] == "make demo" and quick[1] == "source .venv/bin/activate"
    lrn = [line.split()[1:] for line in quick if line.startswith("lrn ")]
    assert [argv[0] for argv in lrn] == ["sweep", "sweep", "report", "chapter"]
    assert all("--minutes" in argv for argv in lrn[:2]) and "--minutes" in lrn[3] and "--dry-run" in lrn[0]
    for argv in lrn:  # each one as the CLI reads it: no option the command lacks
        build_parser().parse_args(argv)


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
def test_every_extra_the_readme_names_exists():
    named = set(re.findall(r"`\.\[([a-z0-9-]+)\]`", (ROOT / "README.md").read_text(encoding="utf-8")))
    assert {"dev", "gpt2", "tensorboard", "wandb", "mlflow", "parquet", "hf", "maps", "umap", "yaml",
            "completion"} <= named
    assert named <= set(PROJECT["optional-dependencies"]), named - set(PROJECT["optional-dependencies"])


def test_the_package_says_what_it_is_and_ships_its_type_marker():
    assert (ROOT / "lrngpt" / "py.typed").is_file()
    assert "Typing :: Typed" in PROJECT["classifiers"]
    assert not [c for c in PROJECT["classifiers"] if c.startswith("License ::")]  # the SPDX expression says it
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["lrngpt"]
    assert "py.typed" in data
