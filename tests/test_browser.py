"""The HTML report in a real browser (Debian's Chromium driven by Playwright), opened from
disk: the matrix renders, the filters hide and show the right rows, nothing is fetched.

Skips where Chromium or Playwright is absent, unless CONFORMANCE_REQUIRE_BROWSER=1 (set by
.ci/run), where their absence is a failure.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from results_factory import sample, typed

from conformance.report import analysis
from conformance.report import html as report_html


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "behaviour.html"
    path.write_text(report_html.render(analysis.build(typed(sample()))), encoding="utf-8")
    return path


@pytest.fixture
def page(browser: Any, report_file: Path) -> Iterator[Any]:
    page = browser.new_page()
    page.problems = []
    page.on("pageerror", lambda exc: page.problems.append(f"script error: {exc}"))
    page.on("request", lambda req: None if req.url.startswith("file:") else page.problems.append(
        f"network request: {req.url}"))
    page.goto(report_file.as_uri())
    yield page
    assert page.problems == []
    page.close()


def visible_cases(page: Any) -> list[str]:
    return [row.get_attribute("data-case") for row in page.locator("#matrix tr[data-case]").all() if row.is_visible()]


def test_matrix_renders_offline(page: Any) -> None:
    assert visible_cases(page) == ["copies.clone.broken", "views.reshape.agree", "views.expand.paddle_copies"]
    assert page.locator("#shown").inner_text() == "3 of 3 cases shown"
    cell = page.locator("#case-views\\.expand\\.paddle_copies td[data-fw=paddle]")
    assert cell.inner_text() == "y↔x: copy"
    assert "k-copy" in cell.get_attribute("class")


def test_only_divergences_filter(page: Any) -> None:
    page.check("input[name=divergent]")
    assert visible_cases(page) == ["views.expand.paddle_copies"]
    assert page.locator("#shown").inner_text() == "1 of 3 cases shown"
    assert not page.locator("#family-copies").is_visible()  # a family with no row left is hidden
    page.uncheck("input[name=divergent]")
    assert len(visible_cases(page)) == 3


def test_only_failures_follows_the_shown_frameworks(page: Any) -> None:
    page.check("input[name=failing]")
    assert visible_cases(page) == ["copies.clone.broken"]  # fails on torch
    page.uncheck("input[value=torch]")
    assert visible_cases(page) == []  # ... and on no other framework
    page.check("input[value=torch]")
    assert visible_cases(page) == ["copies.clone.broken"]


def test_framework_filter_hides_its_column(page: Any) -> None:
    row = page.locator("#case-views\\.reshape\\.agree")
    page.uncheck("input[value=torch]")
    assert not row.locator("td[data-fw=torch]").is_visible()
    assert row.locator("td[data-fw=paddle]").is_visible()
    assert not page.locator("#matrix th[data-fw=torch]").first.is_visible()
    assert not page.locator("tr[data-fw-row=torch]").is_visible()
    page.check("input[value=torch]")
    assert row.locator("td[data-fw=torch]").is_visible()


def test_family_filter(page: Any) -> None:
    page.select_option("select[name=family]", "copies")
    assert visible_cases(page) == ["copies.clone.broken"]
    page.select_option("select[name=family]", "")
    assert len(visible_cases(page)) == 3


# ---- hostile case text (docs/security.md, output escaping)


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from test_escaping import hostile_results

    doc = hostile_results()
    info = doc["cases"]["copies.clone.broken"]
    info["title"] += " <img src=x onerror=\"window.pwned='img'\"><script>window.pwned='script'</script>"
    odd = "we\"ird'fw"  # a framework name that is not an identifier: filters and selectors still work
    doc["environment"]["frameworks"][odd] = {"version": "1.0", "devices": ["cpu"]}
    extra = json.loads(json.dumps(next(r for r in doc["results"] if r["case"] == "views.reshape.agree")))
    doc["results"].append(dict(extra, framework=odd, nodeid=f"cases/x.yaml::views.reshape.agree[{odd}]"))
    path = tmp_path_factory.mktemp("hostile") / "behaviour.html"
    path.write_text(report_html.render(analysis.build(typed(doc))), encoding="utf-8")
    return path


def test_hostile_case_text_is_shown_as_text(browser: Any, hostile_report: Path) -> None:
    page = browser.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(f"script error: {exc}"))
    page.on("request", lambda req: None if req.url.startswith("file:") else problems.append(req.url))
    page.goto(hostile_report.as_uri())
    try:
        assert page.evaluate("window.pwned") is None  # no script of the case's ran
        assert page.locator("img").count() == 0
        title = page.locator("#case-copies\\.clone\\.broken td").first.inner_text()
        assert ("::error::pwned [click](http://evil) ![img](http://evil/i.png) __iadd__ <script>alert(1)</script> "
                "<img src=x onerror=\"window.pwned='img'\"><script>window.pwned='script'</script>") in title
        reason = page.locator("#case-copies\\.clone\\.broken td[data-fw=torch]").inner_text()
        assert "##vso[task.setvariable variable=x]y [click](http://evil) *bold* `code` | cell <script>x</script>" in reason  # noqa: E501
        for href in page.eval_on_selector_all("a[href]", "links => links.map(a => a.getAttribute('href'))"):
            assert href.startswith(("#", "../cases/", "https://example.org/")), href
        # the odd framework's column hides with its box
        box = page.locator("input[name=fw]").nth(3)
        assert box.get_attribute("value") == "we\"ird'fw"
        cell = page.locator("#case-views\\.reshape\\.agree td").nth(4)
        assert cell.get_attribute("data-fw") == "we\"ird'fw" and cell.is_visible()
        box.uncheck()
        assert not cell.is_visible()
        page.check("input[name=failing]")
        assert visible_cases(page) == ["copies.clone.broken"]
        assert problems == []
    finally:
        page.close()
