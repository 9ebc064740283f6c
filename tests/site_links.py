"""A link checker for a built site, on the files on disk (no browser): every ``href`` and
``src`` of every page resolves to a file of the site, and every ``#fragment`` to an element
id on the page it names. Addresses that leave the site (``http(s)://``) are listed, not
fetched."""

from __future__ import annotations

import html.parser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class _Page(html.parser.HTMLParser):
    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(str(values["id"]))
        for name in ("href", "src", "action"):
            if values.get(name) is not None:
                self.links.append(str(values[name]))


def check_links(site: Path) -> tuple[list[str], list[str]]:
    """(broken links as 'page: link (why)', external addresses)."""
    pages = {p.relative_to(site).as_posix(): _Page(p.read_text(encoding="utf-8")) for p in sorted(site.rglob("*.html"))}
    broken, external = [], []
    for name, page in pages.items():
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme in ("http", "https"):
                external.append(link)
                continue
            if parts.scheme or parts.netloc or link.startswith("/"):
                broken.append(f"{name}: {link} (not a relative link: it would not work from disk or another host)")
                continue
            target = (Path(name).parent / unquote(parts.path)).as_posix() if parts.path else name
            target = _normalise(target)
            if target is None or not (site / target).is_file():
                broken.append(f"{name}: {link} (no such file)")
                continue
            if parts.fragment and target.endswith(".html") and unquote(parts.fragment) not in pages[target].ids:
                broken.append(f"{name}: {link} (no element with id {parts.fragment!r} in {target})")
    return broken, external


def _normalise(path: str) -> str | None:
    out: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not out:
                return None  # leaves the site
            out.pop()
        else:
            out.append(part)
    return "/".join(out)
