"""The explorer page's contents, read back without a browser: self-contained, the tables' exact
rows, the numbers of `lrn embed axes` / `purity` and summary.json, frames in width order."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import shutil
import sys

import numpy as np
import pytest

from lrngpt.cli.main import main
from lrngpt.errors import UserError
from lrngpt.explorer import write_explorer
from lrngpt.explorer.views import pca_2d, procrustes
from lrngpt.store.rundir import RunDir, load_run


def read_page(path) -> tuple[dict, dict[str, bytes], str]:
    """The page's JSON data, its base64 blocks decoded, and its text."""
    text = path.read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script type="application/json" id="lrn-data">(.*?)</script>', text, re.S)[1])
    blocks = {m[1]: base64.b64decode(m[2]) for m in
              re.finditer(r'<script type="application/octet-stream" id="([^"]+)">([^<]*)</script>', text)}
    return data, blocks, text


def runs_of(sweep):
    return sorted((sweep / "runs").iterdir(), key=lambda r: int(r.name.split("-")[0][1:]))


def quiet(_msg):
    pass


def test_page_is_self_contained_and_allows_only_its_own_script(tiny_sweep, tmp_path):
    out = tmp_path / "e.html"
    write_explorer([tiny_sweep], out, log=quiet)
    _, _, text = read_page(out)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', text)[1]
    scripts = re.findall(r"<script>(.*?)</script>", text, re.S)
    assert len(scripts) == 1  # the one executable script; the others are data blocks
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    assert csp == f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; img-src data:"
    assert "http://" not in text and "https://" not in text
    assert not re.findall(r'\s(?:src|href)="', text)  # nothing to fetch, not even a local file
    assert '<meta name="generator" content="lrn embed explore">' in text[:4096]


def test_sweep_page_holds_each_widths_exact_rows_and_its_numbers(tiny_sweep, tmp_path, capsys):
    out = tmp_path / "sweep.html"
    r = write_explorer([tiny_sweep], out, log=quiet)
    data, blocks, _ = read_page(out)
    assert r["bytes"] == out.stat().st_size and r["tokens"] == [1024]
    assert [f["label"] for f in data["frames"]] == ["d=8", "d=32"] and data["precision"] == "float32"
    assert data["title"] == "widths"  # the sweep's own name
    (vocab,) = data["vocabs"]
    for frame, run_dir in zip(data["frames"], runs_of(tiny_sweep), strict=True):
        (vi,) = frame["views"]
        v = data["views"][vi]
        table = load_run(run_dir).model.token_embedding.weight.detach().numpy()
        rows = np.frombuffer(blocks[v["vectors"]], dtype="<f4").reshape(-1, v["d"])
        assert np.array_equal(rows, table[vocab["ids"]])  # float32, bit for bit, in the page's order
        assert v["val_bpb"] == RunDir(run_dir).summary()["val_bpb"]
        assert main(["embed", "axes", str(run_dir), "--json"]) == 0
        assert v["used_axes"] == json.loads(capsys.readouterr().out)["used_axes"]
        assert main(["embed", "purity", str(run_dir), "--json"]) == 0
        assert v["purity"] == json.loads(capsys.readouterr().out)["trained"]["overall"]
        assert len(np.frombuffer(blocks[v["coords"]], dtype="<i2")) == 2 * 1024
    lily = load_run(runs_of(tiny_sweep)[0]).tokenizer.encode(" Lily")[0]
    assert vocab["texts"][lily] == " Lily" and vocab["categories"][vocab["cat"][lily]] == "name"


def test_page_tokens_are_the_most_frequent_in_training_with_their_counts(tiny_sweep, tmp_path):
    from lrngpt.data.prepared import data_cache_dir, load_prepared

    run = load_run(runs_of(tiny_sweep)[0])
    counts = np.bincount(np.asarray(load_prepared(data_cache_dir() / run.checkpoint["data_key"]).tokens("train"),
                                    dtype=np.int64), minlength=1024)
    write_explorer([tiny_sweep], tmp_path / "top.html", top=100, log=quiet)
    data, blocks, _ = read_page(tmp_path / "top.html")
    (vocab,) = data["vocabs"]
    assert vocab["ids"] == np.argsort(-counts, kind="stable")[:100].tolist()
    assert vocab["freq"] == counts.tolist() and len(vocab["texts"]) == 1024
    assert len(blocks[data["views"][0]["vectors"]]) == 100 * 8 * 4


def test_run_page_shows_trained_and_untrained_side_by_side(tiny_sweep, tmp_path):
    run_dir = runs_of(tiny_sweep)[1]
    r = write_explorer([run_dir], tmp_path / "run.html", precision="float16", log=quiet)
    data, blocks, _ = read_page(tmp_path / "run.html")
    assert [(v["label"], v["step"]) for v in r["frames"][0]["views"]] == [("trained", 60), ("untrained", 0)]
    trained, untrained = data["views"]
    first_eval = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()
                  if '"val_bpb"' in line][0]
    assert untrained["val_bpb"] == first_eval["val_bpb"] and first_eval["step"] == 0
    init = load_run(run_dir, "init").model.token_embedding.weight.detach().numpy()
    rows = np.frombuffer(blocks[untrained["vectors"]], dtype="<f2").reshape(-1, 32).astype(np.float32)
    assert np.allclose(rows, init[data["vocabs"][0]["ids"]], rtol=1e-3, atol=1e-6)


def test_int8_page_is_a_quarter_of_float32_and_within_a_row_scale(tiny_sweep, tmp_path):
    run_dir = runs_of(tiny_sweep)[1]
    sizes = {}
    for p in ("float32", "int8"):
        write_explorer([run_dir], tmp_path / f"{p}.html", precision=p, log=quiet)
        data, blocks, _ = read_page(tmp_path / f"{p}.html")
        sizes[p] = len(blocks[data["views"][0]["vectors"]])
    assert sizes == {"float32": 1024 * 32 * 4, "int8": 1024 * 32}
    table = load_run(run_dir).model.token_embedding.weight.detach().numpy()[data["vocabs"][0]["ids"]]
    q = np.frombuffer(blocks[data["views"][0]["vectors"]], dtype=np.int8).reshape(-1, 32)
    scale = np.frombuffer(blocks[data["views"][0]["scales"]], dtype="<f4")
    assert np.all(np.abs(q * scale[:, None] - table) <= scale[:, None] / 2 + 1e-7)


def test_pca_map_and_alignment():
    rng = np.random.default_rng(0)
    rows = rng.normal(size=(200, 5)) * np.array([5.0, 2.0, 0.1, 0.1, 0.1])
    coords, share = pca_2d(rows)
    assert share[0] > share[1] > 0 and sum(share) == pytest.approx(np.var(rows[:, :2], 0).sum() / np.var(rows, 0).sum(),
                                                                   abs=0.02)
    turned = coords @ np.array([[0.0, -1.0], [1.0, 0.0]]) * np.array([1.0, -1.0])  # a rotation and a flip
    assert np.allclose(procrustes(turned, coords), coords)
    assert np.allclose(pca_2d(rows[:, :1])[0][:, 1], 0)  # a width-1 table: a line


def test_cli_explore_writes_json_and_refuses_what_it_must_not_replace(tiny_sweep, tmp_path, capsys):
    out = tmp_path / "x.html"
    assert main(["embed", "explore", str(tiny_sweep), "--out", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["path"] == str(out) and [f["label"] for f in doc["frames"]] == ["d=8", "d=32"]
    assert main(["embed", "explore", str(tiny_sweep), "--out", str(out)]) == 0  # its own earlier page
    assert capsys.readouterr().out.startswith(f"wrote {out} (")
    notes = tmp_path / "notes.html"
    notes.write_text("<p>mine</p>")
    for argv, needle in [
        (["--out", str(notes)], "lrn did not write it"),
        (["--out", str(tmp_path)], "is a directory"),
        (["--out", str(out), "--top", "1"], "--top 1"),
    ]:
        assert main(["embed", "explore", str(tiny_sweep), *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and needle in err[0], err
    with pytest.raises(SystemExit) as e:  # no --force: it never replaces yours, and would do nothing else
        main(["embed", "explore", str(tiny_sweep), "--out", str(notes), "--force"])
    assert e.value.code == 2 and "unrecognized arguments: --force" in capsys.readouterr().err
    assert notes.read_text() == "<p>mine</p>"
    assert main(["embed", "explore", str(tmp_path / "nope"), "--out", str(out)]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert notes.read_text() == "<p>mine</p>"


def test_an_empty_sweep_is_a_user_error(tiny_sweep, tmp_path):
    empty = tmp_path / "empty"
    (empty / "runs").mkdir(parents=True)
    shutil.copy(tiny_sweep / "sweep.json", empty / "sweep.json")
    with pytest.raises(UserError, match="no run with a checkpoint"):
        write_explorer([empty], tmp_path / "e.html", log=quiet)



@pytest.mark.parametrize("method, package, needle", [("tsne", "sklearn.manifold", "pip install scikit-learn"),
                                                      ("umap", "umap", "pip install umap-learn")])
def test_a_map_whose_package_is_missing_is_a_user_error(tiny_sweep, tmp_path, monkeypatch, method, package, needle):
    monkeypatch.setitem(sys.modules, package, None)  # import fails as if it were not installed
    with pytest.raises(UserError, match=needle):
        write_explorer([runs_of(tiny_sweep)[0]], tmp_path / "t.html", method=method, log=quiet)


def test_tsne_map_where_scikit_learn_is_installed(tiny_sweep, tmp_path):
    pytest.importorskip("sklearn")
    r = write_explorer([runs_of(tiny_sweep)[0]], tmp_path / "t.html", method="tsne", top=200, log=quiet)
    data, blocks, _ = read_page(tmp_path / "t.html")
    assert r["method"] == data["method"] == "tsne"
    xy = np.frombuffer(blocks[data["views"][0]["coords"]], dtype="<i2").reshape(-1, 2)
    assert xy.shape == (200, 2) and len(np.unique(xy, axis=0)) > 190  # spread out, not collapsed


def test_page_text_escapes_what_could_close_its_script(tiny_sweep, tmp_path):
    d = tmp_path / "<" / "script><b>x"  # its path holds "</script><b>x"
    shutil.copytree(runs_of(tiny_sweep)[0], d)
    write_explorer([d], tmp_path / "esc.html", log=quiet)
    data, _, text = read_page(tmp_path / "esc.html")
    assert data["views"][0]["source"].endswith("</script><b>x") and data["title"] == "script><b>x"
    assert html.escape("script><b>x") in text and "<b>x" not in text
    assert text.count("</script>") == text.count("<script")


@pytest.fixture(scope="module")
def bible_run(tmp_path_factory):
    """A seconds-long run on a text of kings and places (no stories words, no " Lily")."""
    import random

    rng = random.Random(0)
    kings, places = ["David", "Saul", "Solomon", "Ahab"], ["Jerusalem", "Egypt", "Judah", "Israel"]
    words = "and the king went unto said to of in his people land city".split()
    docs = [" ".join(rng.choice(kings + places + words * 3) for _ in range(40)) + "." for _ in range(400)]
    root = tmp_path_factory.mktemp("bible")
    (root / "bible.txt").write_text("\n<|endoftext|>\n".join(docs))
    run = root / "run"
    assert main(["train", "--config", "mlp-tiny", "--corpus", f"text:{root / 'bible.txt'}", "--set",
                 "data.vocab_size=400", "--set", "train.steps=5", "--set", "train.device=cpu", "--out", str(run)]) == 0
    (root / "cats.json").write_text(json.dumps({"king": kings, "place": places}))
    return run, root / "cats.json"


def placeholder_of(text: str) -> str:
    return html.unescape(re.search(r'<input id="q"[^>]*placeholder="([^"]*)"', text)[1])


def test_explore_categories_colour_any_corpus_and_the_search_example_is_the_runs_own_word(bible_run, tmp_path,
                                                                                         capsys):
    run, cats = bible_run
    out = tmp_path / "bible.html"
    assert main(["embed", "explore", str(run), "--categories", str(cats), "--out", str(out)]) == 0
    data, _, text = read_page(out)
    v = data["vocabs"][0]
    assert set(v["categories"]) == {"king", "place"} and v["cat"] is not None
    coloured = {v["texts"][k] for k, c in enumerate(v["cat"]) if c >= 0} if isinstance(v["texts"], list) else None
    assert sum(c >= 0 for c in v["cat"]) == 8 and (coloured is None or " David" in coloured)
    assert all(view["purity"] is not None for view in data["views"])  # scored with the file's categories
    example = placeholder_of(text)
    assert "Lily" not in example
    assert example.startswith('" ') and example.split('"')[1].strip() in {"David", "Saul", "Solomon", "Ahab",
                                                                           "Jerusalem", "Egypt", "Judah", "Israel"}
    # without the file: grey, no purity, and the example is still a frequent word of this text
    plain = tmp_path / "plain.html"
    assert main(["embed", "explore", str(run), "--out", str(plain)]) == 0
    data, _, text = read_page(plain)
    assert data["vocabs"][0]["cat"] is None and "Lily" not in placeholder_of(text)
    capsys.readouterr()
    assert main(["embed", "explore", str(run), "--categories", str(tmp_path / "nope.json"),
                 "--out", str(tmp_path / "x.html")]) == 2
    assert "no such file" in capsys.readouterr().err and not (tmp_path / "x.html").exists()


def test_a_stories_run_still_suggests_a_category_word(tiny_sweep, tmp_path):
    out = tmp_path / "s.html"
    write_explorer([tiny_sweep], out, log=quiet)
    data, _, text = read_page(out)
    word = json.loads(placeholder_of(text).split(" (the leading")[0])
    v = data["vocabs"][0]
    assert word.startswith(" ") and data["vocabs"][0]["cat"] is not None
    assert word.strip() in {w for ws in __import__("lrngpt.corpora.stories", fromlist=["CATEGORIES"])
                            .CATEGORIES.values() for w in ws}, v["categories"]


# ---- what is a run: lrngpt.core.ownership.is_run ----------------------------------------------------

def test_a_config_json_alone_is_no_run_and_a_copied_run_is_shown(tiny_sweep, tmp_path):
    run_dir = runs_of(tiny_sweep)[0]
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(run_dir / "config.json", alone)
    with pytest.raises(UserError, match=r"holds no lrn run \(no \.lrn-output naming it a run\)"):
        write_explorer([alone], tmp_path / "alone.html", log=quiet)
    old = shutil.copytree(run_dir, tmp_path / "old", ignore=shutil.ignore_patterns(".lrn-lock"))
    r = write_explorer([old], tmp_path / "old.html", log=quiet)  # a run copied elsewhere
    assert [v["label"] for v in r["frames"][0]["views"]] == ["trained", "untrained"]
    # in a sweep, a point whose directory holds a config.json alone has not started: left out, unread
    sweep = shutil.copytree(tiny_sweep, tmp_path / "sweep", ignore=shutil.ignore_patterns("report*.html"))
    point = runs_of(sweep)[1]
    shutil.rmtree(point)
    point.mkdir()
    (point / "config.json").write_text("{not json")
    said = []
    r = write_explorer([sweep], tmp_path / "sweep.html", log=said.append)
    assert [f["label"] for f in r["frames"]] == ["d=8"] and not any(point.name in m for m in said)
