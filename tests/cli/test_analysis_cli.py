"""`lrn theory`, `lrn cost` and `lrn lesson`: JSON contracts, seed-like text, one-line errors."""

from __future__ import annotations

import json

import pytest

from lrngpt.cli.main import main


def run_json(capsys, *argv):
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def run_text(capsys, *argv):
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def assert_user_error(capsys, *argv, match: str):
    try:
        code = main(list(argv))
    except SystemExit as e:  # argparse rejects a value before a handler runs
        code = e.code
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert match in err


def test_random_cosine_defaults_cover_the_chapter_widths(capsys):
    doc = run_json(capsys, "theory", "random-cosine")
    assert [r["d"] for r in doc["rows"]] == [4, 8, 16, 64, 256]
    assert set(doc["rows"][0]) == {"d", "std", "inv_sqrt_d", "max", "share_abs_gt_0_5", "count_abs_gt_0_5", "pairs"}
    assert abs(doc["rows"][0]["share_abs_gt_0_5"] - 0.391) < 0.002


def test_random_cosine_text_looks_like_the_chapter(capsys):
    out = run_text(capsys, "theory", "random-cosine", "--n", "300", "--dims", "4,64", "--seed", "2")
    assert "(44,850 distinct pairs, seed 2)" in out
    assert "d=   4: std 0." in out and "(1/sqrt(d) = 0.5000)" in out
    assert "d=  64: std 0.12" in out and "% of pairs" in out


def test_jl_and_fourth_root_json(capsys):
    assert round(run_json(capsys, "theory", "jl", "--n", "4096", "--eps", "0.5")["k"], 1) == 399.3
    assert round(run_json(capsys, "theory", "jl", "--n", "4096", "--eps", "0.1")["k"], 1) == 7129.5
    assert run_json(capsys, "theory", "fourth-root", "--n", "4096") == {"d": 8.0}
    assert "k >= 399.3" in run_text(capsys, "theory", "jl", "--n", "4096", "--eps", "0.5")
    assert "4,096^0.25 = 8" in run_text(capsys, "theory", "fourth-root", "--n", "4096")


@pytest.mark.parametrize("argv, match", [
    (["theory", "jl", "--n", "4096", "--eps", "1"], "--eps"),
    (["theory", "jl", "--n", "4096", "--eps", "0"], "--eps"),
    (["theory", "jl", "--n", "1", "--eps", "0.5"], "--n 1"),
    (["theory", "jl", "--n", "4096", "--eps", "half"], "--eps"),
    (["theory", "random-cosine", "--n", "1"], "--n 1"),
    (["theory", "random-cosine", "--dims", ""], "--dims"),
    (["theory", "random-cosine", "--dims", "4,0"], "--dims 0"),
    (["theory", "fourth-root", "--n", "0"], "--n 0"),
    (["cost", "mlp", "--n-embd", "4,x"], "--n-embd"),
    (["cost", "gpt", "--vocab", "100", "--context", "8", "--length", "9"], "--length 9"),
    (["cost", "gpt", "--vocab", "100", "--context", "8", "--heads", "0"], "--heads"),
    (["cost", "gpt", "--vocab", "100", "--context", "8", "--ffn", "tanh"], "--ffn"),
    (["lesson", "tying", "--used", "16"], "--used 16"),
])
def test_bad_values_exit_2_with_one_line(capsys, argv, match):
    assert_user_error(capsys, *argv, match=match)


def test_cost_mlp_reproduces_the_chapter_table(capsys):
    doc = run_json(capsys, "cost", "mlp", "--vocab", "4096", "--block", "6", "--hidden", "512",
                   "--n-embd", "4,8,16,32,64,128,256,512")
    assert [r["total"] for r in doc["rows"]] == [2_130_432, 2_159_104, 2_216_448, 2_331_136,
                                                 2_560_512, 3_019_264, 3_936_768, 5_771_776]
    assert doc["rows"][4] | {"added": None} == {"n_embd": 64, "total": 2_560_512, "embedding": 262_144,
                                                 "hidden": 197_120, "output": 2_101_248, "added": None}
    assert doc["params_per_width_unit"] == 7168
    out = run_text(capsys, "cost", "mlp")
    assert "d=  64 | parameters  2,560,512 (embedding   262,144, hidden   197,120, output 2,101,248)" in out
    assert "7,168*d" in out


def test_cost_mlp_with_sweep_prints_saving_per_million(tmp_path, capsys):
    rows = [{"n_embd": 64, "val_bpb": 0.9326, "extra": [1, 2]}, {"n_embd": 128, "val_bpb": 0.9033}]
    (tmp_path / "summary.json").write_text(json.dumps({"rows": rows}))
    doc = run_json(capsys, "cost", "mlp", "--n-embd", "64,128", "--sweep", str(tmp_path))
    assert round(doc["rows"][1]["bpb_saved_per_million"], 4) == 0.0639
    out = run_text(capsys, "cost", "mlp", "--n-embd", "64,128", "--sweep", str(tmp_path))
    assert "saved 0.0293 (0.0639 per million added)" in out
    assert_user_error(capsys, "cost", "mlp", "--sweep", str(tmp_path / "missing"), match="summary.json")


def test_cost_gpt_gpt2_small(capsys):
    argv = ["cost", "gpt", "--vocab", "50257", "--context", "1024", "--n-embd", "768", "--heads", "12",
            "--layers", "12", "--tied"]
    doc = run_json(capsys, *argv)
    assert doc["params"]["token_embedding"] == 38_597_376
    assert doc["params"]["position_embedding"] == 786_432
    assert doc["params"]["lm_head"] == 0
    assert doc["bytes"]["fp32"]["weights"] == 4 * doc["params"]["total"]
    assert "convention" in doc["bytes"]
    assert doc["head_split"]["head_dim"] == 64
    out = run_text(capsys, *argv)
    assert "(fp32 154,389,504 bytes)" in out
    assert "D=768, heads=12: head_dim=64" in out


def test_cost_gpt_reports_an_invalid_head_split_without_failing(capsys):
    argv = ["cost", "gpt", "--vocab", "50257", "--context", "1024", "--n-embd", "256", "--heads", "7",
            "--batch", "2", "--length", "4"]
    out = run_text(capsys, *argv)
    assert "D=256, heads=7: head_dim=invalid equal split" in out
    assert "1, 2, 4, 8, 16, 32, 64, 128, 256" in out
    assert "projection_ffn_macs" in out and "D:256->512 ratio=4.0" in out
    doc = run_json(capsys, *argv)
    assert doc["ratio_when_width_doubles"]["attention_pair_macs"] == 2.0
    assert doc["ratio_when_width_doubles"]["lm_head_macs"] == 2.0


def test_cost_models_table(capsys):
    doc = run_json(capsys, "cost", "models")
    assert [r["model"] for r in doc["rows"]] == ["GPT-2 small", "GPT-2 medium", "GPT-2 large", "GPT-2 XL", "BERT-base",
                                                 "Llama-3-8B", "GPT-3 175B"]
    assert [r["table"] for r in doc["rows"]] == [38_597_376, 51_463_168, 64_328_960, 80_411_200, 23_440_896,
                                                 525_336_576, 617_558_016]
    assert [r["n_layer"] for r in doc["rows"]] == [12, 24, 36, 48, 12, 32, 96]
    out = run_text(capsys, "cost", "models")
    assert "31.02%" in out and "13.08%" in out and "0.35%" in out
    assert "GPT-2 XL         48   1,600  33.3" in out  # depth, width and width / depth


def test_lessons_json(capsys):
    doc = run_json(capsys, "lesson", "lookup")
    assert doc["equal"] is True and doc["shapes"]["output"] == [2, 4, 256]
    doc = run_json(capsys, "lesson", "lookup-grad")
    assert doc["lookup"] == [[0.5, 0.5], [1.0, 0.0], [0.5, 0.5]]
    assert doc["grad"] == [[3.0, 4.0], [0.0, 0.0], [6.0, 8.0]] == doc["hand_grad"]
    assert doc["match"] is True
    doc = run_json(capsys, "lesson", "tying")
    changed = {s["setting"]: s["unused_changed"] for s in doc["settings"]}
    assert changed["sgd"] == 0 and min(changed["tied"], changed["adamw_decay"], changed["sgd_momentum"]) > 0


def test_lessons_text_like_the_seed(capsys):
    assert "shape: ids(2,4) -> token(2,4,256) + position(4,256) -> output(2,4,256)" in run_text(
        capsys, "lesson", "lookup")
    out = run_text(capsys, "lesson", "lookup-grad")
    assert "lookup [[0.5, 0.5], [1.0, 0.0], [0.5, 0.5]]" in out
    assert "lookup_gradient [[3.0, 4.0], [0.0, 0.0], [6.0, 8.0]]" in out


@pytest.mark.parametrize("argv", [["theory", "--help"], ["theory", "random-cosine", "--help"],
                                  ["cost", "gpt", "--help"], ["lesson", "tying", "--help"]])
def test_help_exits_0(capsys, argv):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 0
    assert "usage:" in capsys.readouterr().out


def test_cost_mlp_with_a_sweep_of_its_own_widths_prices_every_step_and_each_doubling(tmp_path, capsys):
    rows = [{"n_embd": d, "val_bpb": v} for d, v in ((4, 1.30), (16, 1.10), (64, 1.00), (256, 0.96))]
    (tmp_path / "summary.json").write_text(json.dumps({"rows": rows}))
    doc = run_json(capsys, "cost", "mlp", "--sweep", str(tmp_path))  # no --n-embd: the sweep's widths
    assert [r["n_embd"] for r in doc["rows"]] == [4, 16, 64, 256]
    step = doc["rows"][1]
    assert step["added"] == 7168 * 12 and step["doublings"] == 2
    assert step["bpb_saved"] == pytest.approx(0.20) and step["bpb_saved_per_doubling"] == pytest.approx(0.10)
    assert step["bpb_saved_per_million"] == pytest.approx(0.20 / (7168 * 12 / 1e6))
    out = run_text(capsys, "cost", "mlp", "--sweep", str(tmp_path))
    assert f"saved 0.2000 ({0.20 / (7168 * 12 / 1e6):.4f} per million added), 0.1000 per doubling over 2" in out
    assert out.count("per million added") == 3


def test_random_cosine_share_comes_with_its_count_so_a_zero_share_does_not_hide_pairs(capsys):
    doc = run_json(capsys, "theory", "random-cosine", "--n", "500", "--dims", "64")
    r = doc["rows"][0]
    assert r["pairs"] == 124_750 and r["count_abs_gt_0_5"] == round(r["share_abs_gt_0_5"] * r["pairs"])
    out = run_text(capsys, "theory", "random-cosine", "--n", "500", "--dims", "64")
    assert f"|cos| > 0.5 in {100 * r['share_abs_gt_0_5']:.2f}% of pairs ({r['count_abs_gt_0_5']:,} of 124,750)" in out
    assert r["max"] > 0.5 and r["count_abs_gt_0_5"] > 0  # the max above 0.5 is one of the counted pairs


def test_a_mistyped_option_gets_a_did_you_mean(capsys):
    from lrngpt.cli.main import main as lrn_main

    for argv, want in ((["sample", "runs/x", "--prompt", "hi", "--temprature", "0.8"], "--temperature"),
                       (["train", "--config", "mlp-tiny", "--stepz", "3"], "--steps"),
                       (["--quiett", "demo"], "--quiet")):
        with pytest.raises(SystemExit) as e:
            lrn_main(argv)
        err = capsys.readouterr().err
        assert e.value.code == 2 and len(err.strip().splitlines()) == 1
        assert f"did you mean {want}?" in err


@pytest.mark.parametrize("argv", [["lookup"], ["lookup-grad"], ["tying"], ["softmax-bottleneck"], ["renumber"],
                                  ["superposition", "--steps", "20", "--sparsity", "0,0.99"]])
def test_each_lessons_output_ends_with_one_sentence_saying_what_it_showed(capsys, argv):
    out = run_text(capsys, "lesson", *argv).strip().splitlines()
    # 20 steps do not train the toy to the paper's picture: that lesson says so ("not shown: ...")
    assert out[-1].startswith("not shown: " if argv[0] == "superposition" else "shown: ")
    assert out[-1].count(". ") == 0 and len(out[-1]) > 40
    doc = run_json(capsys, "lesson", *argv)
    assert "shown" not in json.dumps(doc)  # the sentence is for the reader; the JSON keeps the numbers


def test_a_mistyped_command_choice_key_or_preset_gets_the_same_did_you_mean(capsys):
    from lrngpt.cli.main import main as lrn_main

    cases = ((["evall", "runs/x"], "unknown command 'evall'; did you mean eval?"),
             (["sample", "runs/x", "--checkpoint", "bestt"], "unknown choice 'bestt'; did you mean best?"),
             (["config", "show", "mlp-tinyy"], "did you mean mlp-tiny?"),
             (["config", "show", "mlp-tiny", "--set", "model.n_embdd=8"], "did you mean model.n_embd?"))
    for argv, want in cases:
        try:
            code = lrn_main(argv)
        except SystemExit as e:
            code = e.code
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1 and want in err, err


# ---- lrn theory pip and lrn lesson superposition --------------------------------------------------

@pytest.fixture(scope="module")
def pip_doc(text_corpus):
    from lrngpt.api import theory_pip

    return theory_pip(text_corpus, vocab_size=300)


def test_theory_pip_prints_the_predicted_width_with_its_bias_and_variance(pip_doc, text_corpus, capsys):
    r = pip_doc
    assert r["corpus"] == text_corpus and r["window"] == 6 and r["alpha"] == 0.5
    assert 2 <= r["rows"] <= r["vocab_size"] <= 300
    curve = r["curve"]["pip_loss"]
    assert curve[r["optimal"]["k"]] == min(curve) and r["optimal"]["pip_loss"] == min(curve)
    assert r["within"]["5%"][0] <= r["optimal"]["k"] <= r["within"]["5%"][1] <= r["within"]["10%"][1]
    assert r["threshold"] == pytest.approx(2 * r["noise_sigma"] * r["rows"] ** 0.5)
    out = run_text(capsys, "theory", "pip", text_corpus, "--vocab-size", "300")
    o = r["optimal"]
    assert (f"PIP-optimal width k = {o['k']}: PIP loss {o['pip_loss']:,.1f}, bias {o['bias']:,.1f}, variance "
            f"{o['variance']:,.1f}") in out
    assert f"noise sigma {r['noise_sigma']:.4f} = std(PMI of half 1 - PMI of half 2) / 2" in out
    assert f"signal rank {r['signal_rank']}" in out and "the paper's upper bound (main theorem)" in out
    assert "peak RSS" in out and "(the paper's exponent for skip-gram and GloVe)" in out
    doc = run_json(capsys, "theory", "pip", text_corpus, "--vocab-size", "300")
    assert doc["optimal"] == r["optimal"] and doc["curve"]["pip_loss"] == curve  # seeded: the same numbers


def _sweep_summary(path, corpus, bpb: dict, train_tokens=None):
    rows = [{"n_embd": d, "val_bpb": v, "steps": 400, "train_tokens": train_tokens, "corpus": corpus, "seed": s}
            for d, vs in bpb.items() for s, v in enumerate(vs if isinstance(vs, list) else [vs])]
    path.mkdir()
    (path / "summary.json").write_text(json.dumps({"scale": "cpu", "corpus": corpus, "rows": rows}))
    return str(path)


def test_theory_pip_beside_a_sweep_compares_the_prediction_with_the_measured_best(pip_doc, text_corpus, tmp_path,
                                                                                   capsys):
    k = pip_doc["optimal"]["k"]
    # width 8 is best once its two seeds are averaged (0.6 and 0.4: 0.5 < 0.55)
    sw = _sweep_summary(tmp_path / "sw", text_corpus, {4: 0.9, 8: [0.6, 0.4], 16: 0.55, 32: 0.7})
    doc = run_json(capsys, "theory", "pip", text_corpus, "--vocab-size", "300", "--sweep", sw)
    s = doc["sweep"]
    assert s["best_width"] == 8 and s["best_val_bpb"] == pytest.approx(0.5) and s["predicted_width"] == k
    assert s["ratio"] == pytest.approx(k / 8) and s["same_text"] is True and s["scale"] == "cpu"
    curve = doc["curve"]["pip_loss"]
    assert s["pip_loss_at_best_width"] == pytest.approx(curve[8] / curve[k])
    assert s["best_width_within_5%"] == (doc["within"]["5%"][0] <= 8 <= doc["within"]["5%"][1])
    out = run_text(capsys, "theory", "pip", text_corpus, "--vocab-size", "300", "--sweep", sw)
    assert f"measured best width d = 8 (val bpb 0.5000); predicted k = {k}, {k / 8:.2f}x it" in out
    assert "the yardsticks differ" in out and "set by the model and the amount of text together" in out
    assert "not on this text" not in out
    other = _sweep_summary(tmp_path / "other", "stories:1MB", {4: 0.9, 8: 0.6})
    out = run_text(capsys, "theory", "pip", text_corpus, "--vocab-size", "300", "--sweep", other)
    assert "note: the sweep trained on stories:1MB, not on this text" in out


def test_theory_pip_on_a_training_prefix_says_so(text_corpus, capsys):
    doc = run_json(capsys, "theory", "pip", text_corpus, "--vocab-size", "300", "--train-tokens", "3000")
    assert doc["tokens"] == 3000 and doc["train_tokens"] == 3000
    out = run_text(capsys, "theory", "pip", text_corpus, "--vocab-size", "300", "--train-tokens", "3000")
    assert "the first 3,000 training tokens: 3,000 tokens" in out
    doc = run_json(capsys, "theory", "pip", text_corpus, "--vocab-size", "300", "--top", "20")
    assert doc["rows"] == 20 < doc["occurring"] and doc["top"] == 20
    out = run_text(capsys, "theory", "pip", text_corpus, "--vocab-size", "300", "--top", "20")
    assert f"{doc['occurring']:,} of the {doc['vocab_size']:,} tokens occur, the 20 most frequent kept (--top)" in out


def test_lesson_superposition_writes_its_figure_and_refuses_a_file_it_did_not_write(tmp_path, capsys):
    png = tmp_path / "sup.png"
    doc = run_json(capsys, "lesson", "superposition", "--steps", "10", "--sparsity", "0,0.9", "--out", str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and doc["figure"] == str(png)
    assert [s["sparsity"] for s in doc["sparsities"]] == [0.0, 0.9] and doc["features"] == 20 and doc["dims"] == 5
    assert_user_error(capsys, "lesson", "superposition", "--steps", "10", "--out", str(png), match="add --force")
    assert main(["lesson", "superposition", "--steps", "10", "--sparsity", "0.5", "--out", str(png), "--force"]) == 0
    capsys.readouterr()
    mine = tmp_path / "mine.png"
    mine.write_bytes(b"not lrn's")
    assert_user_error(capsys, "lesson", "superposition", "--steps", "10", "--out", str(mine), "--force",
                      match="lrn did not write it")
    assert mine.read_bytes() == b"not lrn's"


def test_theory_pip_says_why_a_best_width_far_from_k_differs_and_quotes_the_chapter(pip_doc, text_corpus, tmp_path,
                                                                                     capsys):
    from lrngpt.analysis.pip import far_apart
    from lrngpt.experiments.chapter import quote

    k = pip_doc["optimal"]["k"]
    far = 8 * k  # 8x the prediction: the sentence; 2x or less: none
    sw = _sweep_summary(tmp_path / "far", text_corpus, {k: 0.9, far: 0.5, 16 * k: 0.6})
    out = run_text(capsys, "theory", "pip", text_corpus, "--vocab-size", "300", "--sweep", sw).splitlines()
    doc = run_json(capsys, "theory", "pip", text_corpus, "--vocab-size", "300", "--sweep", sw)
    sentence = far_apart(doc, doc["sweep"])
    assert sentence.startswith(f"the measured best d = {far} is 8.0x above the PIP prediction k = {k}")
    assert doc["sweep"]["far_apart"] == sentence and sentence in out
    assert out[out.index(sentence) + 1] == doc["sweep"]["chapter"] == f"the chapter: {quote('yardsticks')}"
    near = _sweep_summary(tmp_path / "near", text_corpus, {k: 0.6, 2 * k: 0.5})
    near_doc = run_json(capsys, "theory", "pip", text_corpus, "--vocab-size", "300", "--sweep", near)
    assert near_doc["sweep"]["far_apart"] is None
    assert "a different model and a different yardstick" not in run_text(capsys, "theory", "pip", text_corpus,
                                                                         "--vocab-size", "300", "--sweep", near)
    # with or without a sweep: why 300 is common, beside this text's k
    assert (f'the chapter on Yin & Shen: {quote("word2vec")}; this text\'s PIP-optimal k = {k}') in out
    assert "probably because the first word2vec paper chose 300" in pip_doc["word2vec"]


def test_theory_pip_figure_draws_the_prediction_beside_the_sweep(pip_doc, text_corpus, tmp_path):
    import lrngpt

    sw = _sweep_summary(tmp_path / "sw", text_corpus, {4: 0.9, 8: 0.6, 16: 0.55})
    fig = lrngpt.theory_pip_figure(lrngpt.theory_pip(text_corpus, vocab_size=300, sweep=sw))
    ax, ax2 = fig.axes
    assert ax2.get_lines()[0].get_xdata().tolist() == [4, 8, 16] and ax.get_ylabel() == "PIP loss"
    assert len(lrngpt.theory_pip_figure(pip_doc).axes) == 1  # no sweep: the PIP loss alone
