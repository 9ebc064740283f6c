"""Case files -> :class:`~conformance.model.Case` objects, with precise errors.

A bad case gives every mistake in it, each a :class:`CaseFormatError` (file, line,
column, what, fix, code), in writing order, and does not load; the other cases of the
same file still do. Each independent part of a case is read on its own (its keys, id,
title, tags, references, claims, device, each input, each step, each expectation entry,
each override), and a mistake that makes another part unreadable is reported once, not
again at every use of what it would have defined (:class:`~conformance.load.steplist.StepListReader`
says how). A file that is not valid YAML makes one error for the file. Nothing here
imports a framework; the names of known operations, frameworks, claims and exception
types come in through :class:`Vocabulary`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from conformance import rules
from conformance.ir import GRADIENT_KEYS, Step, operations_of, repeated
from conformance.kinds.base import ParseContext
from conformance.load.expect import read_expect
from conformance.load.inputs import TENSOR_KEYS, read_given
from conformance.load.overrides import read_claims, read_documentation, read_overrides
from conformance.load.steplist import StepListReader
from conformance.model import Case, Expect
from conformance.registry import Vocabulary
from conformance.source import CaseFormatError, Location, raise_all, split
from conformance.yamlvalues import fields
from conformance.yamlvalues.yamlsrc import MAX_FILE_BYTES, YList, YMap, find_text, folded_into, parse, too_large

ID_PATTERN = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")
# characters of a case id: it names the case's page of the site (conformance.site.urls) and
# its anchors; the corpus's longest is 63
MAX_ID_LENGTH = 200
CASE_KEYS = ("id", "title", "tags", "claims", "references", "device", "given", "steps",
             "functional_steps", "calls", "expect", "frameworks", "documentation")
# ``calls``: how many times a case's program may be called (docs/case-format.md, "Calling the
# program again"): a compiled mode's second call is the question; a few more add nothing
MAX_CALLS = 4
REQUIRED_CASE_KEYS = ("id", "title", "steps", "expect")
DEVICES = ("cpu", "cuda")


@dataclass
class LoadResult:
    path: str
    cases: list[Case] = field(default_factory=list)
    # (case id or None when the case's id is unknown, the error): every error of every case
    # that did not load, a case's errors together and in writing order, then the file's
    errors: list[tuple[str | None, CaseFormatError]] = field(default_factory=list)
    refused: int = 0  # how many cases did not load (each has one error or more above)


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
        result.errors += [(None, e) for e in split(exc)]
        return result
    seen: dict[str, Location] = {}
    for index, raw in enumerate(cases):
        where = cases.where(index)
        case_id = raw.get("id") if isinstance(raw, YMap) and isinstance(raw.get("id"), str) else None
        try:
            case = _CaseReader(file, vocabulary, draft).read(raw, where)
        except CaseFormatError as exc:
            # in writing order; stable, so that mistakes at one place keep the order they were found in
            placed = sorted((_placed(e, text) for e in split(exc)), key=_written_at)
            result.errors += [(case_id, e) for e in placed]
            result.refused += 1
            continue
        duplicate = duplicate_id(seen, case)
        if duplicate is not None:
            result.errors.append((case.id, duplicate))
            result.refused += 1
            continue
        result.cases.append(case)
    return result


def duplicate_id(first_seen: dict[str, Location], case: Case) -> CaseFormatError | None:
    """The duplicate-id rule (CF001), the one check of it: None the first time ``case.id`` is
    seen (remembered in ``first_seen``, by the loader within a file, by lint and the plugin
    across files), else the error, at the case, naming where the id was first defined."""
    first = first_seen.setdefault(case.id, case.location)
    if first is case.location:
        return None
    where = f"at line {first.line}" if first.file == case.location.file else f"defined at {first}"
    return CaseFormatError(case.location, f"duplicate case id {case.id!r} (first {where})",
                           "give each case a unique id", code=rules.DUPLICATE_ID.code)


def _placed(error: CaseFormatError, text: str) -> CaseFormatError:
    """An error about a text value (:class:`fields.WrittenAs`) moved from the key that holds
    it to where the text is written; a step that could not be parsed because YAML folded the
    next line into it (:class:`fields.StepText`) said as such, at that line; any other error
    as it is."""
    if type(error) is CaseFormatError:
        return error
    where = error.location
    if isinstance(error, fields.WrittenAs):
        where = find_text(text, error.text, error.location) or where
    elif isinstance(error, fields.StepText):
        folded = folded_into(text, error.text, error.step)
        if folded is not None:
            return folded
    return CaseFormatError(where, error.message, error.hint, error.code)


def _top_level(doc: Any, file: str) -> YList:
    """The file's ``cases`` list. Errors here are the file's (no case is read): every
    unknown top-level key, or a ``cases`` that is not a non-empty list."""
    if not isinstance(doc, YMap):
        raise CaseFormatError(Location(file, 1), "a case file must be a mapping with a 'cases' list",
                              "start the file with 'cases:' and list the cases under it")
    errors = [CaseFormatError(doc.where(key), f"unknown top-level key {key!r}", fields.did_you_mean(key, ["cases"])
                              or "only 'cases' is allowed at the top of a case file") for key in doc if key != "cases"]
    cases = doc.get("cases")
    if (not isinstance(cases, YList) or not cases) and not (errors and "cases" not in doc):
        errors.append(CaseFormatError(doc.where("cases") if "cases" in doc else doc.location,
                                      "'cases' must be a non-empty list", "add at least one case under 'cases:'"))
    raise_all(sorted(errors, key=_written_at))
    return cast(YList, cases)


class _CaseReader:
    """One case: its keys in order, each part read by its unit (inputs, steplist, expect
    through the assertion kinds, overrides), then the checks that need the whole case.
    Every part is read whatever the others hold; the mistakes are raised together at the
    end, in writing order."""

    def __init__(self, file: str, vocabulary: Vocabulary, draft: bool = False) -> None:
        self.file = file
        self.vocab = vocabulary
        self.draft = draft

    def read(self, raw: Any, where: Location) -> Case:
        m = fields.mapping(raw, where, "a case")
        errors: list[CaseFormatError] = []
        found: list[CaseFormatError] = []
        unknown = fields.unknown_keys(m, CASE_KEYS, "a case", found)
        # an input that lost its indentation under 'given' ('    w: [3.0]' beside 'given:'):
        # said so, and its name taken as defined (its uses are not errors of their own)
        strays = {key for key in unknown if _looks_like_input(m[key])}
        errors += [CaseFormatError(e.location, e.message, f"an input? indent it under 'given', like the others "
                                   f"({e.hint})", e.code) if key in strays else e for key, e in zip(unknown, found)]
        for key in REQUIRED_CASE_KEYS:
            if key not in m and not unknown and not (self.draft and key == "expect"):
                errors.append(CaseFormatError(m.location, f"the case has no {key!r}", f"add '{key}:' to the case"))
        case_id = title = ""
        tags: tuple[str, ...] = ()
        references: tuple[str, ...] = ()
        if "id" in m:
            try:
                case_id = self.case_id(m)
            except CaseFormatError as exc:
                errors += split(exc)
        if "title" in m:
            try:
                title = fields.string(m, "title", "'title'")
            except CaseFormatError as exc:
                errors += split(exc)
        if "tags" in m:
            try:
                tags = fields.strings(m, "tags", "'tags'")
            except CaseFormatError as exc:
                errors += split(exc)
        if "references" in m:
            try:
                references = fields.strings(m, "references", "'references'")
            except CaseFormatError as exc:
                errors += split(exc)
        claims: dict[str, str] | None
        before = len(errors)
        claims = read_claims(m, "'claims'", self.vocab.claims, errors)
        if len(errors) > before:
            claims = None  # an override's stances are not checked against claims in error
        device = m.get("device", "cpu")
        if device not in DEVICES:
            errors.append(CaseFormatError(m.where("device"), f"unknown device {device!r}", fields.did_you_mean(
                str(device), DEVICES) or f"use one of {', '.join(DEVICES)}"))
        inputs = read_given(m, errors)
        given, names = inputs.specs, inputs.names
        if strays and names is not None:
            names |= strays
        step_reader = StepListReader(errors)
        steps = step_reader.read(m, names)
        # an input made from others uses operations and strings as a step does: checked alike
        step_reader.step_operations[:0] = inputs.operations
        step_reader.step_strings[:0] = inputs.strings
        calls = self.calls(m, steps, errors)
        # an expectation's step numbers are those of the program called 'calls' times
        flat = [s for step in repeated(tuple(steps), calls) for s in step.flat()]
        bound = fields.OpenNames(step_reader.defined) if step_reader.open else step_reader.defined
        ctx = ParseContext(flat if step_reader.read_all else fields.OpenSteps(), bound,
                           tuple(self.vocab.frameworks), self.vocab.exception_types)
        expect = Expect()
        expect_read = False  # (what documentation: names is checked against a read expect only)
        if "expect" in m:
            try:
                expect = read_expect(m["expect"], m.where("expect"), ctx, "'expect'", partial=self.draft)
                expect_read = True
            except CaseFormatError as exc:
                errors += split(exc)
        overrides: dict = {}
        versioned: dict = {}
        try:
            overrides, versioned = read_overrides(m, ctx, claims, errors)
        except CaseFormatError as exc:
            errors += split(exc)
        documentation = read_documentation(m, ctx, expect if expect_read else None, overrides, errors)
        # the same program without in-place writes, for frameworks whose arrays are immutable:
        # read and checked as 'steps' are, from the same inputs
        functional: list = []
        functional_reader = StepListReader(errors)
        if "functional_steps" in m:
            functional = functional_reader.read(m, names, "functional_steps")
        for reader in (step_reader, functional_reader):
            if self.vocab.operations is not None:
                reader.check_operations(self.vocab.operations or ())
            reader.check_strings(self.vocab.strings)
        raise_all(errors)  # (load_text puts them in writing order)
        return Case(
            id=case_id, title=title, location=Location(self.file, m.location.line, m.location.column),
            steps=tuple(steps), expect=expect, given=tuple(given), tags=tags, claims=claims or {},
            references=references, device=device, overrides=overrides, documentation=documentation,
            versioned=versioned, functional_steps=tuple(functional), calls=calls,
        )

    def calls(self, m: YMap, steps: list[Step], errors: list[CaseFormatError]) -> int:
        """How many times the program is called: ``calls``, 1 when absent (or in error)."""
        if "calls" not in m:
            return 1
        calls = m["calls"]
        if type(calls) is not int or not 1 <= calls <= MAX_CALLS:
            errors.append(CaseFormatError(m.where("calls"), f"'calls' must be a whole number from 1 to {MAX_CALLS}, "
                                          f"got {fields.kind_of(calls) if type(calls) is not int else calls}",
                                          "e.g. calls: 2 (the program called twice on the same inputs)"))
            return 1
        gradient = next((s for step in steps for s in step.flat() if GRADIENT_KEYS & operations_of(s)), None)
        if calls > 1 and gradient is not None:
            errors.append(CaseFormatError(m.where("calls"), f"'calls: {calls}' with a gradient step "
                                          f"({gradient.text!r}, {gradient.location}) is not supported: a framework "
                                          "whose gradients are functional reads each gradient step as the gradient of "
                                          "the steps before it, which a second call would not be",
                                          "call a program without backward() or autograd_grad more than once, or "
                                          "write the second call's steps out"))
            return 1
        return calls

    def case_id(self, m: YMap) -> str:
        case_id = fields.string(m, "id", "'id'")
        if len(case_id) > MAX_ID_LENGTH:
            raise CaseFormatError(m.where("id"), f"id {case_id[:40]!r}... is {len(case_id)} characters long; at most "
                                  f"{MAX_ID_LENGTH}", "shorten it: an id names the case in reports, links and the "
                                  "site's file names (family.topic.detail, e.g. views.reshape.contiguous)")
        if not ID_PATTERN.fullmatch(case_id):
            raise CaseFormatError(m.where("id"), f"invalid id {case_id!r}",
                                  "use lowercase dotted words: family.topic.detail, e.g. views.reshape.contiguous")
        return case_id


def _looks_like_input(value: Any) -> bool:
    """A case key's value that reads as an input: a list, or a mapping of an input's keys."""
    return isinstance(value, YList) or (isinstance(value, YMap) and bool(value) and set(value) <= set(TENSOR_KEYS))


def _written_at(error: CaseFormatError) -> tuple[int, int]:
    return error.location.line, error.location.column
