"""PNGs of the built site for people to look at: the home page and one operation page at a
phone's width (390 px) and a desktop's (1440 px), whole pages, taken in Chromium (through
Playwright, the test extra) from the files on disk. Colour scheme: light.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from conformance.report.outputs import write_files

CHROMIUM = os.environ.get("CONFORMANCE_CHROMIUM", "/usr/bin/chromium")
# Chromium's own background connections would go nowhere on a closed network
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
WIDTHS = (390, 1440)


class ScreenshotError(Exception):
    pass


def screenshots(site: Path, out: Path, op: str = "transpose", browser: Any = None) -> list[Path]:
    """Write the PNGs; ``browser``: a Playwright browser to use (else Chromium is started)."""
    from conformance.site import urls

    pages = {"home": site / "index.html", f"op-{op}": site / urls.op(op)}
    if not pages[f"op-{op}"].is_file():
        raise ScreenshotError(f"{pages[f'op-{op}']}: no page for the operation {op!r} (--screenshot-op names one "
                              f"of {site / 'ops' / 'index.html'})")
    if browser is not None:
        return _take(browser, pages, out)
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        raise ScreenshotError(f"no Chromium at {CHROMIUM} for the screenshots (apt-get install chromium, or set "
                              "CONFORMANCE_CHROMIUM to its path)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise ScreenshotError("the screenshots need the playwright package (pip install -e '.[test]')") from None
    with sync_playwright() as pw:
        started = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            return _take(started, pages, out)
        finally:
            started.close()


def _take(browser: Any, pages: dict[str, Path], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for width in WIDTHS:
        page = browser.new_page(viewport={"width": width, "height": 900}, color_scheme="light")
        try:
            for name, path in pages.items():
                page.goto(path.resolve().as_uri())
                target = out / f"{name}-{width}.png"
                # written beside it and renamed into place: a link at its name is replaced, never followed
                write_files({target: page.screenshot(full_page=True)})
                written.append(target)
        finally:
            page.close()
    return written
