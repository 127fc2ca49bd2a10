"""End to end in a real browser: `streamlit run` on a free localhost port against the demo
database, headless Chromium (Debian's, driven by Playwright) through Ask with a question
in the URL → the paths graph drawn on its canvas → the Hidden page, with no failed request
and nothing fetched from outside this machine. Screenshots go to artifacts/screenshots/.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode, urlparse

import pytest

from explorer.testing import app_database_url

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
LOCAL = {"localhost", "127.0.0.1", "::1"}
QUESTION = "Ağaoğlu Yapı'nın siparişleri hangi faturalarla ödendi?"

pytestmark = [pytest.mark.browser, pytest.mark.timeout(420)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def app_server(server_uri: str, demo_db: str) -> Iterator[str]:
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.skip("no /usr/bin/chromium: run `make browser` (apt-get install chromium) first")
    port = _free_port()
    env = {**os.environ, "DATABASE_URL": app_database_url(server_uri, demo_db)}
    env.pop("BRAIN_EMBEDDER", None)
    log = (ROOT / "artifacts").joinpath("streamlit-browser-test.log")
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", str(port),
             "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"streamlit did not start: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def _canvas_ink(frame) -> int:  # type: ignore[no-untyped-def]
    """How many pixels of the graph's canvas are drawn (not blank)."""
    return int(frame.evaluate("""() => {
        const c = document.querySelector('canvas');
        if (!c || !c.width) return 0;
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
        return n;
    }"""))


def _idle(page) -> None:  # type: ignore[no-untyped-def]
    """Wait until the script run is over (the "running" indicator is gone)."""
    page.wait_for_timeout(300)
    page.wait_for_selector("[data-testid=stStatusWidget]", state="detached")


def _graph_frame(page, marker: str):  # type: ignore[no-untyped-def]
    """Wait for the graph iframe holding `marker` to draw its canvas; return its frame."""
    page.wait_for_selector("iframe")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for frame in page.frames:
            if frame is page.main_frame:
                continue
            try:
                if (frame.query_selector("#mynetwork canvas") and marker in frame.content()
                        and _canvas_ink(frame) > 500):
                    return frame
            except Exception:  # a frame being replaced while we look
                continue
        time.sleep(0.5)
    raise AssertionError("the graph canvas was never drawn")


def test_ask_graph_hidden_in_chromium(app_server: str) -> None:
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    failed: list[str] = []
    outside: list[str] = []

    def on_request(req) -> None:  # type: ignore[no-untyped-def]
        url = urlparse(req.url)
        if url.scheme in ("http", "https", "ws", "wss") and (url.hostname or "") not in LOCAL:
            outside.append(req.url)

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 1500})
            page.set_default_timeout(120_000)  # a loaded 2-core machine can be slow; failures still fail
            page.on("requestfailed", lambda r: failed.append(f"{r.url}: {r.failure}"))
            page.on("request", on_request)
            params = {"workspace": "acme-tr", "as": "u-murat", "now": "2026-11-20", "q": QUESTION}
            page.goto(f"{app_server}/?{urlencode(params)}", wait_until="domcontentloaded")

            # Ask: the question from the link ran, every step is on the page.
            page.get_by_text("1 · Anchors").wait_for()
            page.get_by_text("6 · The context, exactly as an LLM gets it").wait_for()
            _idle(page)
            assert page.locator("[data-testid=stException]").count() == 0
            frame = _graph_frame(page, "on the answer path")
            assert page.locator("[data-testid=stCaptionContainer]", has_text="Murat Çelik · u-murat").count()
            page.wait_for_timeout(1500)
            page.screenshot(path=str(SHOTS / "ask.png"))

            # The graph: scrolled into view, the paths drawn with vis-network from the inlined script.
            page.get_by_text("3 · Paths: the walk from the anchors").scroll_into_view_if_needed()
            iframe = page.locator("iframe").first
            iframe.scroll_into_view_if_needed()
            page.wait_for_timeout(1500)
            assert frame.evaluate("typeof vis") == "object"
            assert frame.evaluate("network.body.data.nodes.length") > 1
            iframe.screenshot(path=str(SHOTS / "graph.png"))

            # Hidden: the same member and question through the owner's eyes.
            page.locator("[data-testid=stSidebarNav] a", has_text="Hidden").click()
            page.get_by_text("Privileged support view").wait_for()
            page.get_by_text("What the rule hid, by reason").wait_for()
            _idle(page)
            _graph_frame(page, "visible to the member")
            assert page.locator("[data-testid=stException]").count() == 0
            page.wait_for_timeout(1500)
            page.screenshot(path=str(SHOTS / "hidden.png"))
        finally:
            browser.close()

    assert not failed, failed
    assert not outside, outside
    for name in ("ask", "graph", "hidden"):
        assert (SHOTS / f"{name}.png").stat().st_size > 10_000
