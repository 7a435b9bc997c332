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
