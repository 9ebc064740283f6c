"""The site in a real browser (Debian's Chromium driven by Playwright), opened from disk: no
page overflows sideways from 360 to 1920 px, search finds and opens pages, links lead from
operation to case to claim pages and back, the keyboard reaches everything, dark mode
follows the system, and nothing is fetched from the network.

Skips where Chromium or Playwright is absent, unless CONFORMANCE_REQUIRE_BROWSER=1 (set by
.ci/run), where their absence is a failure (as test_browser.py). The site is built once, from
hand-made results (test_site.site_sample); the link checker over every page is in
test_site.py, on the files (no browser needed).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from results_factory import case_info, record
from test_site import release, site_sample

from conformance.tools.cli import main

WIDTHS = (360, 390, 768, 1440, 1920)
# one page of each kind
PAGES = ("index.html", "ops/expand.html", "cases/views.expand.paddle_copies.html", "claims/S3-03.html",
         "frameworks/paddle.html", "search.html", "families/views.html", "divergences.html",
         "changelog/numpy.html", "cases/views.view.contiguous.html")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("site")
    doc = site_sample()
    # a long unbroken address and a long id: the text that made the old report overflow
    doc["cases"]["views.expand.paddle_copies"]["overrides"]["paddle"]["reason"] += (
        " (https://example.org/a/very/long/address/" + "segment-" * 30 + "end)")
    # a case of JAX's own conversion, whose reasons carry a word nothing else has (search)
    doc["cases"]["interop.asarray.jnp_copies"] = dict(case_info("interop.asarray.jnp_copies"),
                                                     operations=["fn:jnp_asarray"])
    doc["results"] += [record("interop.asarray.jnp_copies", fw, "not_applicable",
                              reason="jnp.asarray is JAX's: XLA keeps no buffer donation here") for fw in
                       ("numpy", "paddle", "torch")]
    # a case of the corpus, whose page gets repro snippets (read from cases/views/basic.yaml)
    doc["cases"]["views.view.contiguous"] = dict(
        case_info("views.view.contiguous"), file="cases/views/basic.yaml", operations=["method:view"],
        title="view() of a contiguous tensor changes the shape and shares its memory")
    doc["results"] += [record("views.view.contiguous", fw, pairs={("y", "x"): "view"}) for fw in
                       ("numpy", "paddle", "torch")]
    # the operation page's table by the input's layout, a row of it
    doc["cases"]["views.expand.paddle_copies"]["productions"][0]["layout"] = "transposed"
    doc["results"].sort(key=lambda r: r["nodeid"])
    doc["run"]["items"] = len(doc["results"])
    (folder / "results.json").write_text(json.dumps(doc))
    (folder / "1.26.4.json").write_text(json.dumps(release("1.26.4", "copy")))
    (folder / "2.4.6.json").write_text(json.dumps(release("2.4.6", "view")))
    assert main(["site", str(folder / "results.json"), "--out", str(folder / "site"), "--releases",
                 str(folder / "1.26.4.json"), str(folder / "2.4.6.json")]) == 0
    return folder / "site"


class Watched:
    """A page whose script errors and network requests are collected."""

    def __init__(self, browser: Any, **options: Any) -> None:
        self.page = browser.new_page(**options)
        self.problems: list[str] = []
        self.page.on("pageerror", lambda exc: self.problems.append(f"script error: {exc}"))
        self.page.on("request", lambda req: None if req.url.startswith("file:") else self.problems.append(
            f"network request: {req.url}"))

    def close(self) -> None:
        self.page.close()
        assert self.problems == []


@pytest.fixture
def tab(browser: Any) -> Iterator[Any]:
    watched = Watched(browser, viewport={"width": 1440, "height": 900})
    yield watched.page
    watched.close()


def test_no_page_overflows_sideways_at_any_width(browser: Any, site: Path) -> None:
    overflowing = []
    for width in WIDTHS:
        watched = Watched(browser, viewport={"width": width, "height": 800})
        for name in PAGES:
            watched.page.goto((site / name).as_uri())
            scroll = watched.page.evaluate("document.documentElement.scrollWidth")
            if scroll > width:
                overflowing.append(f"{name} at {width} px: {scroll} px wide")
        watched.close()
    assert overflowing == []


def test_search_finds_cases_operations_and_claims_and_opens_them(tab: Any, site: Path) -> None:
    tab.goto((site / "search.html").as_uri())
    tab.fill("#q", "expand")
    results = tab.locator("#results li")
    assert results.first.locator("a").inner_text() == "expand"  # the operation's name matches best
    names = [a.inner_text() for a in tab.locator("#results li a").all()]
    assert "views.expand.paddle_copies" in names
    assert tab.locator("#count").inner_text() == f"{len(names)} matches"
    tab.fill("#q", "shares memory S3")  # every word must occur: the claims' texts
    assert {a.inner_text() for a in tab.locator("#results li a").all()} >= {"S3-03", "S3-07"}
    tab.fill("#q", "reshape agree")
    tab.locator("#results li a", has_text="views.reshape.agree").click()
    assert tab.url.endswith("/cases/views.reshape.agree.html")
    assert tab.locator("h1").inner_text() == "views.reshape.agree"


# the names people use (issue 38): a framework's own spelling of an operation, a compiled
# mode's call, a dotted name the index holds only in parts, a release, a word of a reason
NAMED_QUERIES = {
    "paddle.reshape": ("operation", "reshape"),  # paddle.Tensor.reshape, in parts
    "torch.compile": ("framework", "torch_compile"),
    "torch.compile expand": ("operation", "expand"),
    "jnp.asarray numpy": ("operation", "jnp_asarray"),  # jax.numpy.asarray
    "numpy 1.26": ("release", "numpy 1.26.4"),
    "donation": ("case", "interop.asarray.jnp_copies"),  # only in the reasons
}


@pytest.mark.parametrize("query", NAMED_QUERIES)
def test_search_finds_what_people_call_an_api_first(tab: Any, site: Path, query: str) -> None:
    tab.goto((site / "search.html").as_uri())
    tab.fill("#q", query)
    first = tab.locator("#results li").first
    assert (first.locator(".badge").inner_text(), first.locator("a").inner_text()) == NAMED_QUERIES[query]


def test_a_repro_snippet_opens_and_its_button_copies_its_text(browser: Any, site: Path) -> None:
    context = browser.new_context(viewport={"width": 360, "height": 800})
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.goto((site / "cases/views.view.contiguous.html").as_uri())
    page.click("#repro-torch summary")
    assert page.evaluate("document.documentElement.scrollWidth") <= 360  # the snippet scrolls in its box
    assert page.locator("details.repro button.copy").count() == page.locator("details.repro").count() > 1
    page.click("#repro-torch button.copy")
    page.wait_for_function("document.querySelector('#repro-torch button.copy').textContent !== 'Copy'")
    assert page.inner_text("#repro-torch button.copy") == "Copied"
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == page.inner_text("#repro-torch code") and "import torch" in copied and "x.view(3, 2)" in copied
    context.close()
    assert problems == []


def test_the_search_box_of_every_page_opens_the_search_with_the_words(tab: Any, site: Path) -> None:
    tab.goto((site / "cases/views.reshape.agree.html").as_uri())
    tab.fill("#q-top", "paddle")
    tab.press("#q-top", "Enter")
    tab.wait_for_url("**/search.html?q=paddle")
    assert tab.input_value("#q") == "paddle"
    assert "paddle" in [a.inner_text() for a in tab.locator("#results li a").all()]


def test_links_lead_between_operation_case_and_claim_pages(tab: Any, site: Path) -> None:
    tab.goto((site / "index.html").as_uri())
    tab.locator("#claims a", has_text="S3-03").first.click()
    assert tab.url.endswith("/claims/S3-03.html")
    tab.locator("main a", has_text="views.expand.paddle_copies").first.click()
    assert "/cases/views.expand.paddle_copies.html" in tab.url
    tab.locator("dl.meta a", has_text="x.reshape(…)").click()
    assert tab.url.endswith("/ops/reshape.html")
    tab.goto((site / "ops/expand.html").as_uri())
    tab.locator("#summary table.grid a[href$='-paddle']").click()  # paddle's cell: its evidence, opened
    evidence = tab.locator("details[id$='-paddle']")
    assert evidence.evaluate("d => d.open") is True
    # the cell of the table by the input's layout leads to the same evidence
    assert tab.locator("table.layouts a[href$='-paddle']").get_attribute("href") == "#method~3a~expand-paddle"
    evidence.locator("a", has_text="views.expand.paddle_copies").first.click()
    assert tab.url.endswith("/cases/views.expand.paddle_copies.html#paddle")
    assert tab.locator("#paddle h3").inner_text().startswith("paddle")
    tab.locator("#paddle a", has_text="paddle").first.click()
    assert tab.url.endswith("/frameworks/paddle.html")


def test_the_keyboard_reaches_the_content_and_the_search(tab: Any, site: Path) -> None:
    tab.goto((site / "ops/expand.html").as_uri())
    tab.keyboard.press("Tab")
    assert tab.evaluate("document.activeElement.textContent") == "Skip to content"
    tab.keyboard.press("Enter")
    # a key press does not wait for the navigation it starts (a click does): under load the
    # fragment reaches the URL a moment later (a whole CI run once read it before)
    tab.wait_for_url("**#main", timeout=10_000)
    assert tab.url.endswith("#main")
    tab.keyboard.press("Tab")
    focused = tab.evaluate("document.activeElement.closest('main') !== null")
    assert focused  # the next stop is inside the page's content, past the navigation
    tab.goto((site / "index.html").as_uri())
    for _ in range(3):
        tab.keyboard.press("Tab")
    assert tab.evaluate("document.activeElement.id") == "q-top"  # skip link, home link, search
    outline = tab.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"  # where the focus is, is shown


def test_dark_mode_follows_the_system_setting(browser: Any, site: Path) -> None:
    colours = {}
    for scheme in ("light", "dark"):
        watched = Watched(browser, viewport={"width": 1440, "height": 900}, color_scheme=scheme)
        watched.page.goto((site / "cases/views.expand.paddle_copies.html").as_uri())
        colours[scheme] = watched.page.evaluate("getComputedStyle(document.body).backgroundColor")
        watched.close()
    assert colours == {"light": "rgb(255, 255, 255)", "dark": "rgb(20, 21, 23)"}


def test_the_chart_is_drawn_and_its_labels_are_links(tab: Any, site: Path) -> None:
    tab.goto((site / "index.html").as_uri())
    chart = tab.locator("svg.chart")
    box = chart.bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 100
    tab.locator("svg.chart a", has_text="copies").click()
    assert tab.url.endswith("/families/copies.html")


def test_control_a_page_wider_than_the_window_is_found(browser: Any, tmp_path: Path) -> None:
    wide = tmp_path / "wide.html"
    wide.write_text("<!DOCTYPE html><meta name='viewport' content='width=device-width'><pre>" + "x" * 400 + "</pre>")
    watched = Watched(browser, viewport={"width": 390, "height": 800})
    watched.page.goto(wide.as_uri())
    assert watched.page.evaluate("document.documentElement.scrollWidth") > 390
    watched.close()


def test_the_screenshots_command_writes_the_home_and_an_operation_page_at_two_widths(
        browser: Any, site: Path, tmp_path: Path) -> None:
    from conformance.site.screenshots import screenshots

    shots = screenshots(site, tmp_path / "shots", op="expand", browser=browser)
    assert [p.name for p in shots] == ["home-390.png", "op-expand-390.png", "home-1440.png", "op-expand-1440.png"]
    for shot in shots:
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        width = int.from_bytes(data[16:20], "big")  # the IHDR chunk: width, then height
        assert width == int(shot.stem.rsplit("-", 1)[1])
