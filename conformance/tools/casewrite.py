"""``conformance observe --write``: put what observe saw into the case file itself.

The observed expectations (:func:`conformance.tools.observe.expect_lines`, the same YAML that
``observe`` prints) go under the case's ``expect:``, and each per-framework override, with
its TODO reason, under ``frameworks:``; everything else in the file (comments, key order,
quoting, flow or block style, blank lines) is left as it was. That takes a round-trip YAML
library: ruamel.yaml, imported here only, and only when a file is written. Cases are never
*read* through it: the file was loaded by the suite's own safe reader before this runs
(a file with a problem is refused), and the text ruamel.yaml writes is loaded again by that
reader before anything is written. Nothing is written (:class:`WriteRefused`, saying why)
when

- ruamel.yaml would not give the file back byte for byte without a change (an indentation
  or layout it does not keep): it would rewrite more than the expectations;
- the rewritten text does not load, or a line outside the rewritten cases' expectations
  changed, or a comment outside them went missing;
- a case already expects something and ``force`` is not given (:func:`existing`): a
  rerun replaces, it never merges, so no stale expectation survives beside new ones.

With ``force``, the case's ``expect`` is replaced whole, and so is the override of each
framework that ran (an override that now agrees with the shared expectation goes; a
hand-written reason is kept inside the new TODO reason, to reuse). Overrides of frameworks
that did not run (not applicable, not installed, not selected) are kept as they are.
"""

from __future__ import annotations

import contextlib
import copy
import difflib
import io
import os
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.load.reader import Vocabulary, load_bytes
from conformance.model import Case


class WriteRefused(Exception):
    """Nothing was written; the message says why."""


@dataclass
class Update:
    """What to write into one case: ``lines``, observe's ``expect:`` (and ``frameworks:``)
    YAML; ``ran``, the frameworks observed, whose overrides the new ones replace;
    ``overrides``, the frameworks the lines give an override (with a TODO reason)."""

    case: Case
    lines: list[str]
    ran: set[str] = field(default_factory=set)
    overrides: list[str] = field(default_factory=list)


def existing(case: Case) -> list[str]:
    """What the case already expects (``expect`` keys, overrides with an ``expect``), which
    a write replaces only with ``force``."""
    found = [f"expect.{kind}" for kind, value in case.expect.checks.items() if value is not None]
    found += [f"frameworks.{fw}.expect" for fw, o in sorted(case.overrides.items()) if o.expect is not None]
    return found


def _yaml() -> Any:
    """ruamel.yaml's round-trip reader and writer, set up the corpus's way: two-space
    mappings, sequences indented four with the dash at two, no line wrapping, quotes kept,
    ``null`` written as the corpus writes it."""
    try:
        from ruamel.yaml import YAML
    except ImportError as exc:  # an environment installed before the dependency
        raise WriteRefused(f"--write needs ruamel.yaml ({exc}): pip install 'ruamel.yaml>=0.18.6', "
                           "or reinstall conformance") from None

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 1 << 16
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.representer.add_representer(type(None), lambda r, _: r.represent_scalar("tag:yaml.org,2002:null", "null"))
    return yaml


def _dump(yaml: Any, doc: Any) -> str:
    out = io.StringIO()
    yaml.dump(doc, out)
    return out.getvalue()


def rewrite(text: str, file: str, updates: list[Update], vocabulary: Vocabulary) -> str:
    """The file's text with each update made; raises :class:`WriteRefused`."""
    # the text ruamel.yaml reads is one the suite's reader loads without a problem (checked
    # here again: the file may have changed while the frameworks ran)
    before = load_bytes(text.encode("utf-8"), file, vocabulary, draft=True)
    if before.errors:
        _, error = before.errors[0]
        raise WriteRefused(f"{file} has a problem, so nothing was written: {error.render()}")
    yaml = _yaml()
    doc = yaml.load(text)
    unchanged = _dump(yaml, doc)
    if unchanged != text:
        line = _first_difference(text, unchanged)
        raise WriteRefused(f"{file}:{line}: ruamel.yaml would rewrite this line even with nothing changed (an "
                           "indentation or layout it does not keep), so writing would reformat the file; paste "
                           "what `conformance observe` prints instead")
    items = doc["cases"]
    regions, spans = [], []
    for update in updates:
        index = next((i for i, item in enumerate(items) if isinstance(item, dict) and item.get("id") == update.case.id),
                     None)
        if index is None:
            raise WriteRefused(f"{file}: ruamel.yaml does not find the case {update.case.id!r} the suite's reader "
                               "read, so nothing was written")
        node = items[index]
        end = _case_end(text, items, index)
        keys = [k for k in ("expect", "frameworks") if k in node]
        start = min((node.lc.key(k)[0] for k in keys), default=end)
        regions.append((start, end))
        spans += _replaced_spans(node, update.ran, end)
        _update_case(yaml, node, update)
    new = _dump(yaml, doc)
    _check_elsewhere(text, new, regions, spans, file)
    result = load_bytes(new.encode("utf-8"), file, vocabulary, draft=True)
    if result.errors:
        _, error = result.errors[0]
        raise WriteRefused(f"the rewritten file would not load, so nothing was written: {error.render()}")
    loaded = {c.id for c in result.cases}
    missing = [u.case.id for u in updates if u.case.id not in loaded]
    if missing:
        raise WriteRefused(f"the rewritten file lacks {', '.join(missing)}, so nothing was written")
    return new


def write_file(path: Path, text: str) -> None:
    """Replace the file's contents at once (a temporary file beside it, renamed over it),
    keeping its permissions."""
    mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# ---- the edit


def _update_case(yaml: Any, node: Any, update: Update) -> None:
    """``expect`` replaced (in its place, or after ``steps``), and in ``frameworks`` the
    overrides of the frameworks that ran replaced by the new ones (``frameworks`` added
    after ``expect``, or removed when nothing is left in it)."""
    snippet = yaml.load("\n".join(update.lines) + "\n")
    tail, on_expect = _take_tail(node)
    _edit(node, snippet, update.ran)
    _put_tail(node, tail, on_expect)


def _edit(node: Any, snippet: Any, ran: set[str]) -> None:
    if "expect" in node:
        node["expect"] = snippet["expect"]
    else:
        keys = list(node)
        after = max((keys.index(k) for k in ("given", "steps") if k in node), default=len(keys) - 1)
        node.insert(after + 1, "expect", snippet["expect"])
    new = snippet.get("frameworks") or {}
    old = node.get("frameworks")
    if old is None:
        if new:
            node.insert(list(node).index("expect") + 1, "frameworks", new)
        return
    for fw in list(old):
        if fw in ran and not (isinstance(old[fw], dict) and "not_applicable" in old[fw]):
            if fw in new:
                old[fw] = new[fw]  # in its place
            else:
                del old[fw]
    for fw in new:
        if fw not in old:
            old[fw] = new[fw]
    if not old:
        del node["frameworks"]


# ruamel.yaml keeps what follows a case's last line (blank lines, the comments before the
# next case) in the comment token of that line's entry when the line ends in a comment
# (``expect: {}  # to do``): replacing the entry would take them along, or leave them
# between the new ``expect`` and ``frameworks``. So the token is taken off before the edit:
# the comment on ``expect:`` itself stays on that line, and the rest goes to the case's new
# last entry.


def _tail(node: Any) -> tuple[Any, Any] | None:
    """(mapping, key) of the entry that holds the case's last line, through block mappings
    (None where it is not a mapping entry, e.g. a block sequence's item)."""
    mapping = node
    while True:
        if not isinstance(mapping, dict) or not mapping:
            return None
        key = list(mapping)[-1]
        value = mapping[key]
        if isinstance(value, dict) and _block(value):
            mapping = value
            continue
        if isinstance(value, list) and _block(value):
            return None
        return mapping, key


def _block(collection: Any) -> bool:
    """Whether a mapping or sequence ruamel.yaml read is written in block style."""
    return bool(collection) and not collection.fa.flow_style()


def _take_tail(node: Any) -> tuple[Any, bool]:
    """(the comment token after the case's last line, whether its first line is a comment on
    ``expect:`` itself), taken off the case when its last entry is replaced, or when
    ``expect`` goes after a last entry that is a block sequence (``steps`` of a case with no
    ``expect`` yet: its last item holds the lines after the case)."""
    last = list(node)[-1:]
    if last == ["steps"] and isinstance(node["steps"], list) and _block(node["steps"]):
        steps: Any = node["steps"]
        slots = steps.ca.items.get(len(steps) - 1)
        token = slots[0] if slots else None
        if token is None:
            return None, False
        inline, rest = _line_and_after(token.value)
        if not inline:
            slots[0] = None
            return token, False
        # a comment on the last step's own line stays there; the lines after it move
        kept, moved = copy.copy(token), copy.copy(token)
        kept.value = inline + "\n"
        slots[0] = kept
        moved.value = "\n" + rest
        return (moved if rest else None), False
    if last not in (["expect"], ["frameworks"]):
        return None, False
    found = _tail(node)
    if found is None:
        return None, False
    mapping, key = found
    slots = mapping.ca.items.get(key)
    token = slots[2] if slots and len(slots) > 2 else None
    if token is not None:
        slots[2] = None
    return token, mapping is node and key == "expect"


def _line_and_after(value: str) -> tuple[str, str]:
    """A comment token's value as (the comment on its line, "" for none; the lines after it).
    The value ends the line ("\n"), then holds the lines after it: "# a note\n\n" is a
    comment on the line and one blank line; "\n\n" no comment and one blank line."""
    if not value.startswith("#"):
        return "", value[1:]
    inline, _, rest = value.partition("\n")
    return inline, rest


def _put_tail(node: Any, token: Any, on_expect: bool) -> None:
    """Put back what :func:`_take_tail` took: the comment on ``expect:``'s line there, the
    lines after it on the case's new last entry."""
    if token is None:
        return
    inline, rest = _line_and_after(token.value)
    if inline and on_expect:
        kept = copy.copy(token)
        kept.value = inline + "\n"
        node.ca.items.setdefault("expect", [None, None, None, None])[2] = kept
    found = _tail(node) if rest else None
    if found is None:
        return
    mapping, key = found
    slots = mapping.ca.items.setdefault(key, [None, None, None, None])
    if slots[2] is not None:  # a comment observe wrote there (the claims' TODO)
        slots[2].value += rest
    else:
        after = copy.copy(token)
        after.value = "\n" + rest
        slots[2] = after


def _replaced_spans(node: Any, ran: set[str], end: int) -> list[tuple[int, int]]:
    """The lines (0-based, inclusive) of what the update replaces: the ``expect`` entry, and
    the ``frameworks`` entries of the frameworks that ran; comments in them may go."""
    keys = list(node)
    spans = []
    if "expect" in node:
        spans.append(_entry_span(node, keys, "expect", end))
    if "frameworks" in node:
        fws = node["frameworks"]
        fw_end = _entry_span(node, keys, "frameworks", end)[1]
        names = list(fws)
        spans += [_entry_span(fws, names, fw, fw_end) for fw in names
                  if fw in ran and not (isinstance(fws[fw], dict) and "not_applicable" in fws[fw])]
    return spans


def _entry_span(mapping: Any, keys: list[Any], key: Any, end: int) -> tuple[int, int]:
    i = keys.index(key)
    first = mapping.lc.key(key)[0]
    last = mapping.lc.key(keys[i + 1])[0] - 1 if i + 1 < len(keys) else end
    return first, last


def _case_end(text: str, items: Any, index: int) -> int:
    """The last line (0-based) of the case's own text: up to the next case (or the end of the
    file), less the blank and comment lines just before it, which belong to what follows."""
    lines = text.splitlines()
    last = items.lc.item(index + 1)[0] - 1 if index + 1 < len(items) else len(lines) - 1
    while last > 0 and (not lines[last].strip() or lines[last].lstrip().startswith("#")):
        last -= 1
    return last


def _check_elsewhere(old: str, new: str, regions: list[tuple[int, int]], spans: list[tuple[int, int]],
                     file: str) -> None:
    """Refuse a rewrite that changed a line outside the rewritten cases' expectations, or
    lost a comment line outside what it replaced."""
    a, b = old.splitlines(), new.splitlines()
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        # changed or removed lines a[i1:i2], or lines inserted before a[i1]
        touched = range(i1, i2) if i2 > i1 else [i1 - 1]
        outside = [n for n in touched if not any(s <= n <= e for s, e in regions)]
        if outside:
            raise WriteRefused(f"{file}:{outside[0] + 1}: the rewrite would change this line too, outside the "
                               "case's expectations, so nothing was written; paste what `conformance observe` "
                               "prints instead")

    def comments(lines: list[str], skip: list[tuple[int, int]]) -> Counter[str]:
        return Counter(line.strip() for n, line in enumerate(lines)
                       if line.lstrip().startswith("#") and not any(s <= n <= e for s, e in skip))

    lost = comments(a, spans) - comments(b, [])
    if lost:
        raise WriteRefused(f"{file}: the rewrite would lose the comment {next(iter(lost))!r}, so nothing was "
                           "written; paste what `conformance observe` prints instead")


def _first_difference(a: str, b: str) -> int:
    """The first line (1-based) where two texts differ."""
    for n, (x, y) in enumerate(zip(a.splitlines(), b.splitlines()), 1):
        if x != y:
            return n
    return min(len(a.splitlines()), len(b.splitlines())) + 1
