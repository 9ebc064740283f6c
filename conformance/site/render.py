"""The site's pages as HTML: Jinja2 templates (``templates/``) with autoescaping on, so every
value from the results (case text, framework messages, names) is shown as text, never as
markup; the style sheet and the search script are files of their own (``static/``).

Jinja2 is imported here only, and this module only by ``conformance site``: importing the
plugin or the other commands does not load it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from conformance.escaping import split_addresses
from conformance.outcomes import OUTCOMES
from conformance.report.analysis import CLASS_WORDS, OPERATION_KIND, OUTCOME_WORDS, operation_label, pair_score
from conformance.site import urls
from conformance.site.pages import KIND_MARKS, VERDICT_MARKS, Site, Stamp

HERE = Path(__file__).resolve().parent
STATIC = ("style.css", "search.js", "copy.js")


def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    env.filters.update(value=value_text, linked=linked, ticks=ticks, anchor=urls.anchor, slug=verdict_slug,
                       kind_class=kind_class)
    env.globals.update(urls=urls, op_label=operation_label, class_words=CLASS_WORDS, outcome_words=OUTCOME_WORDS,
                       kind_marks=KIND_MARKS, verdict_marks=VERDICT_MARKS, stamp_text=stamp_text, outcome_list=OUTCOMES,
                       pair_text=lambda report, a, b: pair_score(report, a, b).short())
    return env


def render(site: Site) -> dict[str, str]:
    """Root-relative path -> text of every file of the site."""
    env = environment()
    files: dict[str, str] = {}
    for page in site.pages:
        template = env.get_template(page.template)
        root = "../" * page.path.count("/")
        files[page.path] = template.render(page=page, root=root, site=site, stamp=site.stamp,
                                           report=site.report, **page.values)
    for name in STATIC:
        files[name] = (HERE / "static" / name).read_text(encoding="utf-8")
    files.update(site.files)
    return dict(sorted(files.items()))


def value_text(value: Any) -> str:
    """An observed or expected value as JSON (``true``, ``[1.0, 2.0]``, ``"copy"``)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def linked(text: Any) -> Markup:
    """Text with each ``http(s)://`` address in it a link that shows where it goes."""
    out = []
    for is_address, part in split_addresses(str(text)):
        out.append(Markup("<a href='{0}'>{0}</a>").format(part) if is_address else escape(part))
    return Markup("").join(out)


def ticks(text: Any) -> Markup:
    """A claim's text with its `backticked` spans as code (the claims are written so, as
    Markdown); text with an unpaired backtick is shown as written."""
    parts = str(text).split("`")
    if len(parts) % 2 == 0:
        return escape(str(text))
    return Markup("").join(Markup("<code>{0}</code>").format(p) if i % 2 else escape(p) for i, p in enumerate(parts))


def verdict_slug(text: str) -> str:
    """A class name from words: ``does not hold`` -> ``does-not-hold``."""
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")


# an operation kind's words (analysis.OPERATION_KIND) -> the colour class of the aliasing class
_KIND_CLASSES = {words: cls for cls, words in OPERATION_KIND.items() if cls != "disjoint_view"}


def kind_class(words: str) -> str:
    return "error" if str(words).startswith("raises") else _KIND_CLASSES.get(str(words), "none")


def stamp_text(stamp: Stamp) -> str:
    date = f"results of {stamp.date}" if stamp.date else "results date not recorded"
    if stamp.commit:
        commit = f"suite commit {stamp.commit[:12]}" + (" with modified case files" if stamp.modified else "")
    else:
        commit = "suite commit not recorded"
    corpus = f"corpus revision {stamp.corpus}" if stamp.corpus else "corpus revision not recorded"
    return f"{date} · {commit} · {corpus}"
