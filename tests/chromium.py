"""Debian's Chromium driven by Playwright, for the browser tests of the HTML report
(test_browser.py) and of the site (test_site_browser.py): one browser per test module.

Skips where Chromium or Playwright is absent, unless CONFORMANCE_REQUIRE_BROWSER=1 (set by
.ci/run), where their absence is a failure. conftest.py makes the fixture every test's.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest

CHROMIUM = os.environ.get("CONFORMANCE_CHROMIUM", "/usr/bin/chromium")
# Chromium's own background connections are refused on a closed network; keep it quiet.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]


def _missing() -> str | None:
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        return f"Chromium not found at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[test]')"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    missing = _missing()
    if missing:
        if os.environ.get("CONFORMANCE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser test required (CONFORMANCE_REQUIRE_BROWSER=1) but {missing}")
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()
