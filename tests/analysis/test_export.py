"""`lrn embed export`: TSV files that hold the table exactly, and a directory TensorBoard's projector opens."""

from __future__ import annotations

import json
from urllib.parse import quote

import numpy as np
import pytest

from lrngpt.analysis.export import export_table
from lrngpt.analysis.vocab import token_text
from lrngpt.cli.main import main
from lrngpt.errors import UserError
from lrngpt.store.rundir import load_run


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A tiny stories run (vocabulary 1024, so category words are single tokens)."""
    from lrngpt.runconfig.schema import load_config
    from lrngpt.training.trainer import train_run

    d = tmp_path_factory.mktemp("export") / "run"
    cfg = load_config("mlp-tiny", ["data.corpus=stories:300KB", "data.vocab_size=1024", "train.device=cpu",
                                   "train.steps=10", "train.eval_every=10"])
    train_run(cfg, d, progress=False, log=lambda m: None)
    return d


def train_counts_by_hand(run) -> np.ndarray:
    from lrngpt.data.prepared import data_cache_dir, load_prepared

    data = load_prepared(data_cache_dir() / run.checkpoint["data_key"])
    return np.bincount(np.asarray(data.tokens("train"), dtype=np.int64), minlength=run.tokenizer.vocab_size)


def read_metadata(path) -> list[list[str]]:
    return [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]


def test_tsv_export_holds_every_row_exactly_with_token_id_frequency_and_category(run_dir, tmp_path):
    out = tmp_path / "tsv"
    r = export_table(run_dir, out, log=lambda m: None)
    run = load_run(run_dir)
    table = run.model.token_embedding.weight.detach().numpy()
    assert (r["rows"], r["n_embd"], r["format"]) == (1024, 16, "tsv")
    assert sorted(p.name for p in out.iterdir()) == [".lrn-output", "lrn-export.json", "metadata.tsv", "vectors.tsv"]
    vectors = np.loadtxt(out / "vectors.tsv", delimiter="\t", dtype=np.float32)
    assert np.array_equal(vectors, table)  # %.9g reads back bit for bit
    meta = read_metadata(out / "metadata.tsv")
    assert meta[0] == ["token", "id", "frequency", "category"] and len(meta) == 1025
    counts = train_counts_by_hand(run)
    assert [int(m[1]) for m in meta[1:]] == list(range(1024))
    assert [int(m[2]) for m in meta[1:]] == counts.tolist()
    assert all(m[0] == token_text(run.tokenizer, i) for i, m in enumerate(meta[1:]))
    lily, red = run.tokenizer.encode(" Lily"), run.tokenizer.encode(" red")
    assert len(lily) == len(red) == 1
    assert meta[1 + lily[0]][3] == "name" and meta[1 + red[0]][3] == "colour"
    assert meta[1 + run.tokenizer.eot_id][:2] == ["<|endoftext|>", str(run.tokenizer.eot_id)]


def test_top_keeps_the_most_frequent_tokens_in_id_order(run_dir, tmp_path):
    r = export_table(run_dir, tmp_path / "top", top=50, log=lambda m: None)
    counts = train_counts_by_hand(load_run(run_dir))
    want = sorted(np.argsort(-counts, kind="stable")[:50].tolist())
    meta = read_metadata(tmp_path / "top" / "metadata.tsv")
    assert r["rows"] == 50 and [int(m[1]) for m in meta[1:]] == want
    assert np.loadtxt(tmp_path / "top" / "vectors.tsv", delimiter="\t").shape == (50, 16)


def test_projector_export_is_what_tensorboards_projector_serves(run_dir, tmp_path):
    """TensorBoard's own projector plugin reads the directory: one run '.', the trained and the
    untrained table with their shapes, the tensors' bytes and the metadata."""
    pytest.importorskip("tensorboard")
    from tensorboard.plugins import base_plugin
    from tensorboard.plugins.projector.projector_plugin import ProjectorPlugin
    from werkzeug.test import Client

    out = tmp_path / "projector"
    r = export_table(run_dir, out, fmt="projector", log=lambda m: None)
    assert r["files"] == ["vectors.tsv", "metadata.tsv", "vectors_init.tsv", "projector_config.pbtxt",
                          "lrn-export.json"]
    apps = ProjectorPlugin(base_plugin.TBContext(logdir=str(out))).get_plugin_apps()

    def get(route, query=""):
        resp = Client(apps[route]).get(route + query)
        assert resp.status_code == 200, resp.get_data(as_text=True)
        return resp.get_data()

    assert json.loads(get("/runs")) == ["."]
    embeddings = json.loads(get("/info", "?run=."))["embeddings"]
    assert [e["tensorName"] for e in embeddings] == ["run trained (step 10)", "run untrained (step 0)"]
    assert all(e["tensorShape"] == [1024, 16] and e["metadataPath"] == "metadata.tsv" for e in embeddings)
    trained = load_run(run_dir).model.token_embedding.weight.detach().numpy()
    init = load_run(run_dir, "init").model.token_embedding.weight.detach().numpy()
    for e, table in zip(embeddings, (trained, init), strict=True):
        served = np.frombuffer(get("/tensor", f"?run=.&name={quote(e['tensorName'])}"), dtype=np.float32)
        assert np.array_equal(served.reshape(1024, 16), table)
    meta = get("/metadata", f"?run=.&name={quote(embeddings[0]['tensorName'])}").decode()
    assert meta == (out / "metadata.tsv").read_text(encoding="utf-8")


def test_export_refuses_a_directory_lrn_did_not_write_even_with_force(run_dir, tmp_path, capsys):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    (mine / "vectors.tsv").write_text("my own vectors")
    assert main(["embed", "export", str(run_dir), "--out", str(mine)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "lrn did not write (notes.txt, vectors.tsv)" in err[0], err
    assert "--force" not in err[0].replace("with or without --force", "")  # never advice that would destroy them
    with pytest.raises(SystemExit) as e:  # and there is no --force that could: it would do nothing
        main(["embed", "export", str(run_dir), "--out", str(mine), "--force"])
    assert e.value.code == 2 and "unrecognized arguments: --force" in capsys.readouterr().err
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt", "vectors.tsv"]
    assert (mine / "vectors.tsv").read_text() == "my own vectors"
    with pytest.raises(UserError, match="is not a directory"):
        export_table(run_dir, mine / "notes.txt")


def test_export_again_into_an_earlier_export_replaces_it_without_leftovers(run_dir, tmp_path, capsys):
    out = tmp_path / "again"
    assert main(["embed", "export", str(run_dir), "--out", str(out), "--format", "projector"]) == 0
    assert "tensorboard --logdir" in capsys.readouterr().out
    assert main(["embed", "export", str(run_dir), "--out", str(out), "--top", "10"]) == 0  # no --force needed
    assert sorted(p.name for p in out.iterdir()) == [".lrn-output", "lrn-export.json", "metadata.tsv", "vectors.tsv"]
    assert json.loads((out / "lrn-export.json").read_text())["rows"] == 10
    (out / "metadata.tsv").write_text("edited by hand")  # changed since lrn wrote it: the user's now
    assert main(["embed", "export", str(run_dir), "--out", str(out)]) == 2
    assert "were changed since lrn wrote it (metadata.tsv)" in capsys.readouterr().err
    assert (out / "metadata.tsv").read_text() == "edited by hand"
