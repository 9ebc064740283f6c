"""PNGs of the built site for people to look at: the home page and one operation page at a
phone's width (390 px) and a desktop's (1440 px), whole pages, taken in Chromium (through
Playwright, the test extra) from the files on disk. Colour scheme: light.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

CHROMIUM = os.environ.get("CONFORMANCE_CHROMIUM", "/usr/bin/chromium")
# Chromium's own background connections would go nowhere on a closed network
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
WIDTHS = (390, 1440)


class ScreenshotError(Exception):
    pass


def screenshots(site: Path, out: Path, op: str = "transpose") -> list[Path]:
    from conformance.site import urls

    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        raise ScreenshotError(f"no Chromium at {CHROMIUM} for the screenshots (apt-get install chromium, or set "
                              "CONFORMANCE_CHROMIUM to its path)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise ScreenshotError("the screenshots need the playwright package (pip install -e '.[test]')") from None
    pages = {"home": site / "index.html", f"op-{op}": site / urls.op(op)}
    if not pages[f"op-{op}"].is_file():
        raise ScreenshotError(f"{pages[f'op-{op}']}: no page for the operation {op!r} (--screenshot-op names one "
                              f"of {site / 'ops' / 'index.html'})")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for width in WIDTHS:
                page = browser.new_page(viewport={"width": width, "height": 900}, color_scheme="light")
                for name, path in pages.items():
                    page.goto(path.resolve().as_uri())
                    target = out / f"{name}-{width}.png"
                    page.screenshot(path=str(target), full_page=True)
                    written.append(target)
                page.close()
        finally:
            browser.close()
    return written
