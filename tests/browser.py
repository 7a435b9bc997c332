"""Headless Chromium for tests: what a page renders to, its console messages, a screenshot.

No WebDriver and no new dependency: `chromium --headless --dump-dom` prints the DOM after the
load event, so `render` loads a copy of the page with a small script appended that writes what
it measured (headings, tables, images and whether they decoded, whether anything is wider than
the window with every <details> open) into the DOM, and the same
launch takes the screenshot. Console messages (script errors, Content-Security-Policy
violations) come from `--enable-logging=stderr` as `:CONSOLE` lines. Mark tests that use it
`@requires_chromium`: they skip cleanly where it is missing (Debian: `apt-get install -y
chromium chromium-driver`).
"""

from __future__ import annotations

import html
import json
import os
import re
import struct
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.cli_run import HUNG

CHROMIUM = Path(os.environ.get("LRN_CHROMIUM", "/usr/bin/chromium"))
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-quic", "--hide-scrollbars",
         "--enable-logging=stderr", "--v=0"]

requires_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"no headless browser at {CHROMIUM}")

# Runs after load; the page under test has no script of its own.
_PROBE = """<script>
window.addEventListener("load", () => {
  const text = (sel) => [...document.querySelectorAll(sel)].map((e) => e.textContent.trim());
  const out = {
    title: document.title, h1: text("h1"), h2: text("h2"),
    tables: [...document.querySelectorAll("table")].map((t) => t.rows.length),
    images: [...document.images].map((i) => ({alt: i.alt, complete: i.complete, width: i.naturalWidth,
                                             height: i.naturalHeight, src: i.src.slice(0, 22)})),
    links: [...document.querySelectorAll("[href]")].map((e) => e.getAttribute("href")),
    height: document.documentElement.scrollHeight,
    text: document.body.innerText,
  };
  // horizontal fit, with every <details> open: the document and each scroll box (.wide, pre)
  const closed = [...document.querySelectorAll("details:not([open])")];
  closed.forEach((d) => { d.open = true; });
  const root = document.documentElement;
  out.scrollWidth = root.scrollWidth;
  out.clientWidth = root.clientWidth;
  out.overflowing = [...document.querySelectorAll(".wide, pre, table, img, figure")]
    .filter((e) => e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().right > root.clientWidth + 1)
    .map((e) => `${e.tagName.toLowerCase()}${e.className ? "." + e.className : ""}: ${e.scrollWidth} > ${e.clientWidth}`);
  closed.forEach((d) => { d.open = false; });
  const pre = document.createElement("pre");
  pre.id = "lrn-probe";
  pre.hidden = true;  // kept out of the screenshot
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def run_chromium(args: list[str], workdir: Path, timeout: float = HUNG) -> tuple[str, list[str]]:
    """Chromium's stdout and its console lines; a fresh profile each time, so no state carries over."""
    profile = tempfile.mkdtemp(prefix="chromium-profile-", dir=workdir)
    proc = subprocess.run([str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"chromium exited {proc.returncode}: {proc.stderr[-2000:]}")
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
    return proc.stdout, console


def render(html_file: Path, workdir: Path, screenshot: Path | None = None,
           size: tuple[int, int] = (1200, 3000)) -> dict:
    """Load a copy of the page with the probe script; what it measured, plus "console" lines.

    The copy's Content-Security-Policy gains only `script-src 'unsafe-inline'` (for the probe), so
    anything the page would fetch from elsewhere is still blocked and shows as a console message.
    With `screenshot`, the same load is saved there as a PNG of `size` (width, height).
    """
    text = Path(html_file).read_text(encoding="utf-8")
    text = re.sub(r'(http-equiv="Content-Security-Policy" content=")([^"]*)"',
                  lambda m: f"{m[1]}{m[2]}; script-src 'unsafe-inline'\"", text, count=1)
    if "</body>" not in text:
        raise AssertionError(f"{html_file} has no </body>")
    copy = Path(workdir) / f"probe-{Path(html_file).name}"
    copy.write_text(text.replace("</body>", _PROBE + "</body>", 1), encoding="utf-8")
    args = ["--dump-dom", copy.resolve().as_uri()]
    if screenshot is not None:
        args[:0] = [f"--screenshot={Path(screenshot).resolve()}", f"--window-size={size[0]},{size[1]}"]
    dom, console = run_chromium(args, workdir)
    m = re.search(r'<pre id="lrn-probe" hidden="">(.*?)</pre>', dom, re.S)
    if not m:
        raise AssertionError(f"the probe did not run; console: {console}")
    result = json.loads(html.unescape(m[1]))
    result["console"] = console
    return result


def png_size(png: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    head = Path(png).read_bytes()[:24]
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        raise AssertionError(f"{png} is not a PNG")
    return struct.unpack(">II", head[16:24])


# ---- Playwright: pages that are used, not only rendered ------------------------------------------

PLAYWRIGHT_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                   "--disable-sync", "--disable-quic", "--no-first-run"]


def _has_playwright() -> bool:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return False
    return True


# Playwright drives Debian's chromium (never a downloaded browser): `pip install playwright` is enough.
requires_playwright = pytest.mark.skipif(not _has_playwright(),
                                         reason="playwright is not installed (pip install -e '.[dev]')")


class Page:
    """A Playwright page that records console errors and uncaught exceptions in `errors`."""

    def __init__(self, browser, url: str, width: int = 1280, height: int = 900):
        self.page = browser.new_page(viewport={"width": width, "height": height})
        # a loaded machine only makes the page slower: Playwright's waits (30 s by default) last until it is
        # there, HUNG only ends one stuck for good
        self.page.set_default_timeout(HUNG * 1000)
        self.page.set_default_navigation_timeout(HUNG * 1000)
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(f"{m.type}: {m.text}") if m.type in ("error", "warning")
                     else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        self.page.goto(url)

    def close(self):
        self.page.close()
