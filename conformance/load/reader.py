"""Case files -> :class:`~conformance.model.Case` objects, with precise errors.

A bad case makes one :class:`CaseFormatError` (file, line, column, what, fix) and the
other cases of the same file still load; a file that is not valid YAML makes one error
for the file. Nothing here imports a framework; the names of known operations,
frameworks and claims come in through :class:`Vocabulary`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection

from conformance.ir import names_bound
from conformance.kinds.base import ParseContext
from conformance.load import fields
from conformance.load.expect import read_expect
from conformance.load.inputs import read_given
from conformance.load.overrides import read_claims, read_overrides
from conformance.load.steplist import StepListReader
from conformance.load.yamlsrc import MAX_FILE_BYTES, YList, YMap, parse, too_large
from conformance.model import Case, Expect
from conformance.source import CaseFormatError, Location

ID_PATTERN = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")
CASE_KEYS = ("id", "title", "tags", "claims", "references", "device", "given", "steps",
             "expect", "frameworks")
REQUIRED_CASE_KEYS = ("id", "title", "steps", "expect")
DEVICES = ("cpu", "cuda")


def _registered_frameworks() -> tuple[str, ...]:
    from conformance import registry  # which imports this module: asked when a Vocabulary is made

    return tuple(registry.framework_names())


@dataclass(frozen=True)
class Vocabulary:
    """What names are valid. ``frameworks``: by default the registered ones
    (conformance.registry). ``operations=None`` skips the operation check. ``strings``: the
    strings a step may pass besides dtype and device names (those some adapter's operations
    take, e.g. a test adapter's state names)."""

    frameworks: Collection[str] = field(default_factory=_registered_frameworks)
    operations: Collection[str] | None = None
    claims: Collection[str] | None = None
    strings: Collection[str] = ()


@dataclass
class LoadResult:
    path: str
    cases: list[Case] = field(default_factory=list)
    # (case id or None when the case's id is unknown, the error)
    errors: list[tuple[str | None, CaseFormatError]] = field(default_factory=list)


def load_file(path: str | Path, vocabulary: Vocabulary, display_path: str | None = None,
              draft: bool = False) -> LoadResult:
    """Load a case file. ``draft``: accept cases whose ``expect`` is still empty (for
    ``conformance observe``, which is how expectations get written)."""
    file = display_path or str(path)
    try:
        data = read_case_file(path)
    except OSError as exc:
        return unreadable(file, exc)
    return load_bytes(data, file, vocabulary, draft)


def unreadable(file: str, exc: Exception) -> LoadResult:
    """The result for a file that cannot be read or is not UTF-8."""
    return LoadResult(file, errors=[(None, CaseFormatError(Location(file, 1), f"cannot read file: {exc}"))])


def read_case_file(path: str | Path) -> bytes:
    """The file's bytes, at most one past the size limit: a huge file is never read whole.

    Only a regular file is read. A symbolic link is never followed (``O_NOFOLLOW``) and a
    named pipe or a device is never waited on (opened ``O_NONBLOCK``, then refused after
    ``fstat``): each raises an :class:`OSError` saying what the path is, so that a link (to
    ``/dev/stdin``, ``/dev/zero`` or a file elsewhere) or a FIFO is refused wherever a case
    file is read (pytest, lint, list, observe, the collection helper, the case cache)."""
    import os
    import stat

    link = "it is a symbolic link, and links are never followed; put the case file itself here"
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    if not nofollow and os.path.islink(path):  # no O_NOFOLLOW (Windows): ask first
        raise OSError(link)
    flags = os.O_RDONLY | nofollow | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | \
        getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        if nofollow and os.path.islink(path):  # O_NOFOLLOW refused it (ELOOP; EMLINK on FreeBSD)
            raise OSError(link) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
                    else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
                    else "a folder" if stat.S_ISDIR(mode) else "something else")
            raise OSError(f"it is {kind}, not a regular file; a case file is read only from a regular file")
        stream = open(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with stream:  # closes fd
        return stream.read(MAX_FILE_BYTES + 1)


def load_bytes(data: bytes, file: str, vocabulary: Vocabulary, draft: bool = False) -> LoadResult:
    if len(data) > MAX_FILE_BYTES:
        return LoadResult(file, errors=[(None, too_large(file))])
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return unreadable(file, exc)
    return load_text(text, file, vocabulary, draft)


def load_text(text: str, file: str, vocabulary: Vocabulary, draft: bool = False) -> LoadResult:
    result = LoadResult(file)
    try:
        doc = parse(text, file)
        cases = _top_level(doc, file)
    except CaseFormatError as exc:
        result.errors.append((None, exc))
        return result
    seen: dict[str, Location] = {}
    for index, raw in enumerate(cases):
        where = cases.where(index)
        case_id = raw.get("id") if isinstance(raw, YMap) and isinstance(raw.get("id"), str) else None
        try:
            case = _CaseReader(file, vocabulary, draft).read(raw, where)
        except CaseFormatError as exc:
            result.errors.append((case_id, exc))
            continue
        if case.id in seen:
            result.errors.append((case.id, CaseFormatError(
                case.location, f"duplicate case id {case.id!r} (first at line {seen[case.id].line})",
                "give each case a unique id", code="CF001")))
            continue
        seen[case.id] = case.location
        result.cases.append(case)
    return result


def _top_level(doc: Any, file: str) -> YList:
    if not isinstance(doc, YMap):
        raise CaseFormatError(Location(file, 1), "a case file must be a mapping with a 'cases' list",
                              "start the file with 'cases:' and list the cases under it")
    extra = [k for k in doc if k != "cases"]
    if extra:
        raise CaseFormatError(doc.where(extra[0]), f"unknown top-level key {extra[0]!r}",
                              "only 'cases' is allowed at the top of a case file")
    cases = doc.get("cases")
    if not isinstance(cases, YList) or not cases:
        raise CaseFormatError(doc.where("cases") if "cases" in doc else doc.location,
                              "'cases' must be a non-empty list", "add at least one case under 'cases:'")
    return cases


class _CaseReader:
    """One case: its keys in order, each part read by its unit (inputs, steplist, expect
    through the assertion kinds, overrides), then the checks that need the whole case."""

    def __init__(self, file: str, vocabulary: Vocabulary, draft: bool = False) -> None:
        self.file = file
        self.vocab = vocabulary
        self.draft = draft

    def read(self, raw: Any, where: Location) -> Case:
        m = fields.mapping(raw, where, "a case")
        fields.keys(m, CASE_KEYS, "a case")
        for key in REQUIRED_CASE_KEYS:
            if key not in m and not (self.draft and key == "expect"):
                raise CaseFormatError(m.location, f"the case has no {key!r}", f"add '{key}:' to the case")
        case_id = fields.string(m, "id", "'id'")
        if not ID_PATTERN.fullmatch(case_id):
            raise CaseFormatError(m.where("id"), f"invalid id {case_id!r}",
                                  "use lowercase dotted words: family.topic.detail, e.g. views.reshape.contiguous")
        location = Location(self.file, m.location.line, m.location.column)
        claims = read_claims(m, "'claims'", self.vocab.claims)
        device = m.get("device", "cpu")
        if device not in DEVICES:
            raise CaseFormatError(m.where("device"), f"unknown device {device!r}", f"use one of {', '.join(DEVICES)}")
        given = read_given(m)
        step_reader = StepListReader()
        steps = step_reader.read(m, {g.name for g in given})
        flat = [s for step in steps for s in step.flat()]
        bound = {g.name for g in given} | {n for s in flat for n in names_bound(s)}
        ctx = ParseContext(flat, bound, tuple(self.vocab.frameworks))
        expect = read_expect(m["expect"], m.where("expect"), ctx, "'expect'",
                             partial=self.draft) if "expect" in m else Expect()
        overrides = read_overrides(m, ctx, claims)
        if self.vocab.operations is not None:
            step_reader.check_operations(self.vocab.operations or ())
        step_reader.check_strings(self.vocab.strings)
        return Case(
            id=case_id, title=fields.string(m, "title", "'title'"), location=location,
            steps=tuple(steps), expect=expect, given=tuple(given),
            tags=fields.strings(m, "tags", "'tags'"), claims=claims,
            references=fields.strings(m, "references", "'references'"), device=device,
            overrides=overrides,
        )
