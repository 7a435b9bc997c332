"""The explorer in a real headless Chromium (Playwright): searching in the page gives exactly
`lrn embed neighbors`, the width control changes map and numbers, keyboard and phone width work."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lrngpt.cli.main import main
from lrngpt.explorer import write_explorer
from lrngpt.store.rundir import load_run
from tests import browser

pytestmark = [pytest.mark.browser, browser.requires_chromium, browser.requires_playwright]


@pytest.fixture(scope="module")
def chromium():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(browser.CHROMIUM), args=browser.PLAYWRIGHT_ARGS)
        yield b
        b.close()


def runs_of(sweep):
    return sorted((sweep / "runs").iterdir(), key=lambda r: int(r.name.split("-")[0][1:]))


@pytest.fixture(scope="module")
def pages(tiny_sweep, tmp_path_factory):
    d = tmp_path_factory.mktemp("explorer-pages")
    write_explorer([tiny_sweep], d / "sweep.html", log=lambda m: None)
    write_explorer([runs_of(tiny_sweep)[1]], d / "run.html", log=lambda m: None)
    return d


def open_page(chromium, path, **size) -> browser.Page:
    p = browser.Page(chromium, path.resolve().as_uri(), **size)
    p.page.wait_for_selector("html[data-ready='1']")  # (Page's default timeout: only a stuck page hits it)
    return p


def shown(page, panel: int = 0) -> list[tuple[int, float]]:
    return page.eval_on_selector_all(f".panel >> nth={panel} >> .nbrs li",
                                     "lis => lis.map(li => [Number(li.dataset.id), Number(li.dataset.cos)])")


def cli_neighbors(capsys, run_dir, token, k=10, untrained=False) -> list[tuple[int, float]]:
    argv = ["embed", "neighbors", str(run_dir), "--token", token, "-k", str(k), "--json"]
    assert main(argv + (["--untrained"] if untrained else [])) == 0
    return [(n["id"], n["cosine"]) for n in json.loads(capsys.readouterr().out)["results"][0]["neighbors"]]


def same(page_list, cli_list) -> bool:
    """Same ids in the same order; cosines equal to the CLI's 4 decimals."""
    return ([i for i, _ in page_list] == [i for i, _ in cli_list]
            and all(abs(a - b) <= 5e-5 + 1e-9 for (_, a), (_, b) in zip(page_list, cli_list, strict=True)))


def canvas(page, panel: int = 0) -> str:
    return page.eval_on_selector(f".panel >> nth={panel} >> canvas", "c => c.toDataURL()")


def test_sweep_search_equals_lrn_embed_neighbors_and_the_width_control_changes_map_and_numbers(
        chromium, pages, tiny_sweep, tmp_path, capsys):
    d8, d32 = runs_of(tiny_sweep)
    p = open_page(chromium, pages / "sweep.html")
    page = p.page
    assert page.text_content("#frame-label") == "d=8 (1 of 2)"
    before = (canvas(page), page.get_attribute(".stats", "data-used-axes"), page.get_attribute(".stats", "data-val-bpb"))
    page.fill("#q", " Lily")
    assert page.text_content("#pieces").startswith("' Lily': id ")
    assert same(shown(page), cli_neighbors(capsys, d8, " Lily"))
    assert canvas(page) != before[0]  # the query and its neighbours are drawn
    page.fill("#q", " Lilyxyzzy")  # split by the BPE: the mean of its pieces
    assert "tokens, neighbours of their mean" in page.text_content("#pieces")
    assert same(shown(page), cli_neighbors(capsys, d8, " Lilyxyzzy"))
    page.fill("#q", "")
    assert shown(page) == [] and canvas(page) == before[0]

    page.click("#next")
    assert page.text_content("#frame-label") == "d=32 (2 of 2)"
    after = (canvas(page), page.get_attribute(".stats", "data-used-axes"), page.get_attribute(".stats", "data-val-bpb"))
    assert after[0] != before[0] and after[1:] != before[1:]
    assert page.text_content(".panel h2") == "d=32, trained"
    assert page.get_attribute("#views tbody tr[aria-current]", "data-frame") == "1"
    page.fill("#k", "5")
    page.fill("#q", " cat")
    assert same(shown(page), cli_neighbors(capsys, d32, " cat", k=5))
    page.screenshot(path=str(tmp_path / "sweep.png"))
    assert browser.png_size(tmp_path / "sweep.png") == (1280, 900)
    assert p.errors == []
    p.close()


def test_run_page_compares_trained_and_untrained_each_equal_to_the_cli(chromium, pages, tiny_sweep, tmp_path, capsys):
    run_dir = runs_of(tiny_sweep)[1]
    p = open_page(chromium, pages / "run.html")
    page = p.page
    assert page.is_hidden("#stepper")  # one frame: nothing to step through
    assert page.eval_on_selector_all(".panel h2", "hs => hs.map(h => h.textContent)") == ["trained", "untrained"]
    for token in (" Tom", " red"):
        page.fill("#q", token)
        assert same(shown(page, 0), cli_neighbors(capsys, run_dir, token))
        assert same(shown(page, 1), cli_neighbors(capsys, run_dir, token, untrained=True))
    page.screenshot(path=str(tmp_path / "run.png"))
    assert p.errors == []
    p.close()


@pytest.mark.parametrize("precision", ["float16", "int8"])
def test_smaller_pages_decode_the_rows_python_stored(chromium, tiny_sweep, tmp_path, precision):
    from lrngpt.explorer.page import encode_vectors

    run_dir = runs_of(tiny_sweep)[0]
    write_explorer([run_dir], tmp_path / "p.html", precision=precision, log=lambda m: None)
    p = open_page(chromium, tmp_path / "p.html")
    rows = np.array(p.page.evaluate("Array.from(lrnExplorer.view(0).rows)"), dtype=np.float32).reshape(-1, 8)
    ids = p.page.evaluate("lrnExplorer.DATA.vocabs[0].ids")
    table = load_run(run_dir).model.token_embedding.weight.detach().numpy()[ids]
    q, scale = encode_vectors(table, precision)
    want = q.astype(np.float32) * (scale[:, None] if scale is not None else 1)
    assert np.allclose(rows, want, rtol=1e-6, atol=1e-9) and not np.array_equal(rows, table)
    p.page.fill("#q", " Lily")
    assert len(shown(p.page)) == 10 and p.errors == []
    p.close()


def test_the_pages_bpe_encodes_exactly_as_the_tokenizer(chromium, pages, tiny_sweep):
    tok = load_run(runs_of(tiny_sweep)[0]).tokenizer
    texts = [" Lily", "Lily saw a red cat.", "  two  spaces\n\nnew line", "don't we'll I'm", "12345 6.5%",
             "été naïve “quoted” — ok", "emoji 🙂 and 中文", "<|endoftext|>", "tab\there", " ", "",
             "Lily's cat's ball", "\"Hi!\" said Tom.", "Tom   and    Lily", "ran,jumped;played", "Once upon a time"]
    p = open_page(chromium, pages / "sweep.html")
    got = p.page.evaluate("texts => texts.map(t => lrnExplorer.encode(0, t))", texts)
    assert got == [tok.encode(t) for t in texts]
    p.close()


def test_hover_names_a_token_and_a_click_searches_from_it(chromium, pages, tiny_sweep, capsys):
    tok = load_run(runs_of(tiny_sweep)[0]).tokenizer
    p = open_page(chromium, pages / "sweep.html")
    page = p.page
    lily = tok.encode(" Lily")[0]
    x, y = page.evaluate("""id => { const panel = lrnExplorer.state.panels[0];
        const p = lrnExplorer.DATA.vocabs[0].ids.indexOf(id);
        const r = panel.canvas.getBoundingClientRect(); return [r.left + panel.px[p], r.top + panel.py[p]]; }""", lily)
    page.mouse.move(x, y)
    assert page.is_visible("#tip") and "' Lily' · id" in page.text_content("#tip")  # or a token drawn on top of it
    page.mouse.click(x, y)
    clicked = int(page.get_attribute(".panel", "data-query"))
    assert page.input_value("#q") == tok.decode([clicked])
    assert len(shown(page)) == 10
    p.close()


def test_keyboard_controls_and_phone_width(chromium, pages):
    p = open_page(chromium, pages / "sweep.html", width=375, height=800)
    page = p.page
    assert page.evaluate("document.documentElement.scrollWidth") <= 375  # nothing wider than the phone
    assert page.eval_on_selector("canvas", "c => c.getBoundingClientRect().width") <= 375
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "q"
    page.keyboard.type(" Tom")
    assert len(shown(page)) == 10
    page.keyboard.press("Escape")
    assert page.input_value("#q") == "" and shown(page) == []
    page.focus("#frame")
    page.keyboard.press("ArrowRight")
    assert page.text_content("#frame-label") == "d=32 (2 of 2)"
    page.keyboard.press("[")
    assert page.text_content("#frame-label") == "d=8 (1 of 2)"
    page.focus("#views tbody tr:nth-child(2) button")
    page.keyboard.press("Enter")
    assert page.text_content("#frame-label") == "d=32 (2 of 2)"
    legend = page.locator("#legend .chip").first
    legend.focus()
    page.keyboard.press("Enter")
    assert legend.get_attribute("aria-pressed") == "true"
    assert p.errors == []
    p.close()


def test_a_page_of_4096_tokens_and_8_widths_opens_and_answers_quickly(chromium, tmp_path):
    """A page built from random tables of the chapter's shape: open it, search, step every width."""
    from lrngpt.explorer.page import page as render_page

    data, blocks = _synthetic(4096, [4, 8, 16, 32, 64, 128, 256, 512])
    path = tmp_path / "big.html"
    path.write_text(render_page("synthetic", data, blocks), encoding="utf-8")
    p = open_page(chromium, path)
    page = p.page
    ms = page.evaluate("""() => { const t0 = performance.now();
        for (let f = 0; f < 8; f++) { lrnExplorer.setFrame(f); }
        const t1 = performance.now();
        document.querySelector('#q').value = 'a'; document.querySelector('#q').dispatchEvent(new Event('input'));
        return [t1 - t0, performance.now() - t1]; }""")
    assert len(shown(page)) == 10
    assert max(ms) < 2000, ms  # generous: the machine may be busy; a visible pause is ~100 ms when idle
    assert p.errors == []
    p.close()


def _synthetic(n: int, widths: list[int]):
    """Page data for random tables: n byte-level tokens (every single byte, then 2-byte pairs)."""
    import base64

    rng = np.random.default_rng(0)
    raw = [bytes([b]) for b in range(256)] + [bytes([97 + i % 26, 97 + (i // 26) % 26]) for i in range(n - 256)]
    blocks = [("lrn-b0", base64.b64encode(b"".join(raw)).decode())]
    views = []
    for d in widths:
        coords = rng.integers(-32767, 32767, size=(n, 2)).astype("<i2")
        vectors = rng.normal(size=(n, d)).astype("<f4")
        blocks += [(f"lrn-b{len(blocks)}", base64.b64encode(coords.tobytes()).decode()),
                   (f"lrn-b{len(blocks) + 1}", base64.b64encode(vectors.tobytes()).decode())]
        views.append({"label": f"d={d}", "source": "-", "step": 1, "d": d, "vocab": 0, "val_bpb": 1.0,
                      "bpb_note": "-", "used_axes": d, "purity": None, "chance": None, "variance": [0.1, 0.1],
                      "coords": blocks[-2][0], "vectors": blocks[-1][0], "scales": None})
    vocab = {"rows": n, "ids": list(range(n)), "texts": [r.decode("latin-1") for r in raw], "note": "random",
             "freq": None, "categories": [], "cat": None, "special": [], "bytes": "lrn-b0",
             "lengths": [len(r) for r in raw]}
    data = {"title": "synthetic", "method": "pca", "precision": "float32", "vocabs": [vocab], "views": views,
            "frames": [{"label": v["label"], "views": [i]} for i, v in enumerate(views)]}
    return data, blocks


def test_a_page_of_several_runs_names_each_run_in_its_table(chromium, tiny_sweep, tmp_path):
    a, b = runs_of(tiny_sweep)
    write_explorer([a, b], tmp_path / "two.html", log=lambda m: None)
    p = open_page(chromium, tmp_path / "two.html")
    labels = p.page.eval_on_selector_all("#views tbody td:first-child", "tds => tds.map(td => td.textContent)")
    assert labels == [f"{a.name}: trained", f"{a.name}: untrained", f"{b.name}: trained", f"{b.name}: untrained"]
    p.page.keyboard.press("]")
    assert p.page.text_content("#frame-label") == f"{b.name} (2 of 2)"
    assert p.errors == []
    p.close()
