"""The site's URL scheme: every page's path, relative to the site's root. Stable: a path
depends only on what it names (an operation's name, a case's id), so a link pasted into an
issue keeps working when the site is built again from newer results.

    index.html                  home
    search.html                 search (search-index.js: the prebuilt index)
    ops/index.html              every operation
    ops/<name>.html             one operation: x.<name>(…), <name>(…) and x.<name> together
    cases/index.html            the families
    cases/<case-id>.html        one case; #<framework> anchors each framework's observation
    families/<family>.html      a family's cases, case × framework
    claims/index.html, claims/<ID>.html
    frameworks/index.html, frameworks/<name>.html   (a compiled mode is a framework page too)
    divergences.html, findings.html, compiled.html
    changelog/index.html, changelog/<framework>.html   (when release results are given)
"""

from __future__ import annotations

import hashlib

# characters kept as they are in a file name; anything else is written as ~<hex>~ (results
# files are data from anywhere: a name must not reach outside its folder or collide)
_KEPT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
# characters of a file name before its extension: file systems allow 255 bytes, and a case
# id may be 200 characters long (conformance.load.reader.MAX_ID_LENGTH), which keeps its
# name; a longer name (a results file from elsewhere) is cut and ends in a digest of it
MAX_NAME = 200
DIGEST_CHARS = 16


def file_name(text: str) -> str:
    """``text`` as one path segment: safe characters kept, others as ``~<hex>~``; never
    empty nor starting with a dot, never longer than :data:`MAX_NAME` characters (a longer
    one: its first characters, ``~`` and 16 hex digits of its SHA-256, so that two long
    names that share a beginning stay apart)."""
    text = str(text)
    name = "".join(c if c in _KEPT else f"~{ord(c):x}~" for c in text)
    name = name if name and not name.startswith(".") else "_" + name
    if len(name) > MAX_NAME:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST_CHARS]
        name = name[:MAX_NAME - DIGEST_CHARS - 1] + "~" + digest
    return name


def operation_name(key: str) -> str:
    """The page an operation-table key is on: ``method:reshape`` and ``fn:reshape`` share
    ``reshape``; ``attr:T`` and ``method:t`` share ``t`` (one page whatever the file system
    does with case); ``index:basic`` is ``index-basic``; ``call`` is ``call``."""
    kind, _, name = key.partition(":")
    if kind == "index":
        return f"index-{name}".lower()
    return (name or kind).lower()  # "call" (a callable called) has no name


def op(name: str) -> str:
    return f"ops/{file_name(name)}.html"


def case(case_id: str) -> str:
    return f"cases/{file_name(case_id)}.html"


def family(name: str) -> str:
    return f"families/{file_name(name)}.html"


def claim(claim_id: str) -> str:
    return f"claims/{file_name(claim_id)}.html"


def framework(name: str) -> str:
    return f"frameworks/{file_name(name)}.html"


def changelog(name: str) -> str:
    return f"changelog/{file_name(name)}.html"


def step(framework: str, old: str, new: str) -> str:
    """The anchor of a step between two releases on a changelog page."""
    return anchor(f"{framework}-{old}-{new}")


def change(framework: str, old: str, new: str, case_id: str, name: str) -> str:
    """The anchor of one item's change in a step on a changelog page (``name``: the framework
    or compiled mode of the item)."""
    return anchor(f"{framework}-{old}-{new}-{case_id}" + ("" if name == framework else f"[{name}]"))


def anchor(text: str) -> str:
    """An element id from a name: the same characters as a file name."""
    return file_name(text)


def relative(from_page: str, to_page: str) -> str:
    """The link from one page to another (both root-relative paths, ``a/b.html``)."""
    depth = from_page.count("/")
    return "../" * depth + to_page
