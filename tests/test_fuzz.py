"""Fuzzing the loader and the linter with generated malformed case files (docs/fuzzing.md).

Four generators, each its own property, and two exact oracles on one mutation each:

1. structure-aware mutation of real cases (cases/**/*.yaml): delete a key, add one, put a
   value of another type anywhere, duplicate or rename, damage step text, shapes, dtypes;
   dumped back to YAML;
2. text-level corruption of real case text: truncation, inserted/deleted characters,
   indentation damage, YAML syntax (anchors, tags, merge keys, '---'), a BOM, CRLF, deep
   nesting, invalid UTF-8 bytes;
3. random YAML-able structures at the top level, from anything to case-shaped mappings;
4. step text from a small grammar of Python-like statements, inside a valid case.

A fifth property, at the end, generates case-folder trees on disk (valid case files,
YAML/Python polyglots, Python files, links to files, folders, loops, nothing, ``/`` and a
device, a doctest file, a pipe): lint and an in-process pytest collection always finish,
import or run no payload, refuse each entry that is not a case file exactly once and keep
every valid case (docs/security.md, "Case folders hold only case files").

Whatever the input, loading returns a :class:`LoadResult` (never raises, never hangs);
every error is a :class:`CaseFormatError` with the file, a line inside the text, a message
and a rule code; lint never raises and its findings are located the same way and include
the loader's errors; a case the loader accepts is well-formed; loading is deterministic.

Two mutations have an exact oracle: a duplicated case is one CF001 error, a required key
removed is one error of that case.

The budget comes from the Hypothesis profiles in conftest.py: "ci" (small, the normal run)
unless a profile is named, e.g. ``--hypothesis-profile=fuzz`` (10,000 examples each).

Bugs found and fixed are in FIXED_BUGS, each reproduction a regression test. Bugs found
and not fixed yet are listed in KNOWN_BUGS: each has a reproduction that is a
strict xfail test below, and the properties tolerate exactly that failure (counted as a
Hypothesis event) while the reproduction still fails, so that they keep looking for other
bugs. (A strict xfail on a property itself would pass or fail by chance, with what the
examples happen to reach, and would stop it at the first known failure.) Once a bug is
fixed its reproduction passes, the xfail turns into a failure, and the entry moves to
FIXED_BUGS.
"""

from __future__ import annotations

import copy
import math
import re
import signal
import tempfile
import traceback
import uuid
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
import yaml

pytest.importorskip("hypothesis")

from hypothesis import event, given, note, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.errors import InvalidArgument  # noqa: E402

from conformance import (
    kinds,  # noqa: E402
    registry,  # noqa: E402
)
from conformance.ir import names_bound, names_read, operations_of, strings_of  # noqa: E402
from conformance.limits import MAX_ELEMENTS  # noqa: E402
from conformance.load.inputs import TENSOR_KEYS  # noqa: E402
from conformance.load.overrides import OVERRIDE_KEYS  # noqa: E402
from conformance.load.reader import CASE_KEYS, LoadResult, load_file, load_text  # noqa: E402
from conformance.load.steplist import MAX_STEPS  # noqa: E402
from conformance.load.steps import BLOCKS, MAX_STEP_CHARS, parse_step_uses  # noqa: E402
from conformance.model import CLAIM_STANCES, DTYPES, ERROR_KINDS, CaseFormatError  # noqa: E402
from conformance.rules import RULES
from conformance.tools.lint import lint_paths  # noqa: E402
from conformance.yamlvalues import yamlerrors, yamlsrc
from conformance.yamlvalues.yamlsrc import YList, YMap, parse  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
VOCAB = registry.vocabulary()
FILE = "cases/fuzz/case.yaml"  # the display path given to load_text
# A load takes milliseconds; this is "it hangs". Generous because a busy machine or a
# garbage collection over Hypothesis' own data (0.7 GB late in a 10,000-example run) can
# stall a load: a 3 s limit once fired inside a collection.
HANG_SECONDS = 10.0

# A named profile (--hypothesis-profile=fuzz) wins; otherwise the small "ci" budget, set
# here rather than loaded globally so that other tests keep Hypothesis' defaults.
BUDGET = settings.get_profile("ci") if settings.get_current_profile_name() == "default" else settings.default

# ast.parse warns on some step texts ("invalid decimal literal" for '1x', "invalid escape
# sequence" for '\ ', a DeprecationWarning before Python 3.12) and re.compile on some
# patterns ("possible nested set"): noise here, each one is still checked for errors
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning", "ignore::FutureWarning",
                                        "ignore:invalid escape sequence:DeprecationWarning")

# the strict patterns an accepted id / input name must match in full (the loader's use '$')
FULL_ID = re.compile(r"[a-z][a-z0-9_]*(\.[a-z0-9_]+)+")
FULL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


# =========================================================================== known bugs


class Hang(BaseException):
    """Raised into a load that runs past HANG_SECONDS. A BaseException, so that no
    ``except Exception`` in the code under test can swallow it."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    if not hasattr(signal, "setitimer"):  # pragma: no cover - not on Windows
        yield
        return

    expired = []

    def on_alarm(signum: int, frame: Any) -> None:
        expired.append(True)
        raise Hang(f"no answer after {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    if expired:  # the Hang was raised where it got swallowed (e.g. in a gc callback): still late
        raise Hang(f"answered, but after more than {seconds} s")


def _frames(exc: BaseException) -> list[traceback.FrameSummary]:
    return traceback.extract_tb(exc.__traceback__)


@dataclass(frozen=True)
class KnownBug:
    """A bug found by these tests and not fixed yet."""

    name: str
    what: str
    text: str  # a minimal case file that shows it
    raised: Callable[[BaseException], bool] = lambda exc: False  # is this exception that bug?
    wrong: Callable[[LoadResult, str], bool] = lambda result, text: False  # is this result (of text) it?

    def reproduces(self) -> bool:
        return _reproduces(self)


@lru_cache(maxsize=None)
def _reproduces(bug: KnownBug) -> bool:
    """Whether the bug is still there (asked once per run)."""
    try:
        with time_limit(HANG_SECONDS):
            result = load_text(bug.text, FILE, VOCAB)
    except BaseException as exc:  # noqa: BLE001 - which one is the question
        return bug.raised(exc)
    return bug.wrong(result, bug.text)


def _case(body: str, case_id: str = "fuzz.known.bug") -> str:
    """A case file with one case; ``body`` holds the case's keys (4-space indented)."""
    return f"cases:\n  - id: {case_id}\n    title: t\n" + body


def _newline_in_names(result: LoadResult, text: str) -> bool:
    return any(c.id.endswith("\n") or any(g.name.endswith("\n") for g in c.given) for c in result.cases)


def _from_re_module(exc: BaseException) -> bool:
    return any(Path(f.filename).parent.name == "re" or "sre_" in f.filename for f in _frames(exc))


FIXED_BUGS = (
    KnownBug(
        "BUG-1", "an unhashable 'error.kind' (a list or mapping) escapes load_text as TypeError: "
        "'kind not in ERROR_KINDS' tests membership in a dict",
        _case("    given:\n      x: [1.0]\n    steps: [y = x + 1]\n"
              "    expect: {error: {at: 1, kind: [other]}}\n"),
        raised=lambda exc: type(exc) is TypeError and "unhashable" in str(exc),
    ),
    KnownBug(
        "BUG-3", "ID_PATTERN and NAME_PATTERN end in '$', which also matches before a final newline: "
        "'id: |' with the id on the next line loads the id 'fuzz.known.bug\\n' (and 'given: {\"x\\n\": ..}' "
        "the input 'x\\n')",
        _case("    given:\n      x: [1.0]\n    steps: [y = x + 1]\n    expect: {shape: {y: [1]}}\n",
              case_id="|\n      fuzz.known.bug"),
        wrong=_newline_in_names,
    ),
    KnownBug(
        "BUG-4", "a 'match' regular expression that re.compile rejects with OverflowError (a repeat "
        "count of 2**32 or more) or RecursionError (about a thousand nested groups) escapes load_text: "
        "_check_regex catches only re.error",
        _case("    given:\n      x: [1.0]\n    steps: [y = x + 1]\n"
              "    expect: {warning: {at: 1, match: 'a{4294967296}'}}\n"),
        raised=lambda exc: isinstance(exc, (OverflowError, RecursionError)) and _from_re_module(exc),
    ),
    KnownBug(
        "BUG-5", "an explicit '!!int' or '!!float' tag on an empty value ('!!int', \"!!int ''\", "
        "\"!!int '-'\", \"!!float '_'\") escapes load_text as IndexError: PyYAML's constructor reads "
        "value[0], and yamlsrc catches only ValueError and KeyError",
        _case("    given:\n      x: [1.0]\n    steps: [y = x + 1]\n    expect: {shape: {y: !!int ''}}\n"),
        raised=lambda exc: type(exc) is IndexError and any(f.filename.endswith("constructor.py")
                                                           for f in _frames(exc)),
    ),
    KnownBug(
        "BUG-6", "the line of an 'unacceptable character' error is counted in bytes: libyaml's "
        "ReaderError.position is an offset into the UTF-8 encoding, and yamlsrc slices the str with "
        "it, so after non-ASCII text the error points further down (here line 3 for a character on "
        "line 2)",
        "# \u00e9\u00e9\u00e9\u00e9\ncases: [\x07]\n",
        wrong=lambda result, text: any(
            m is not None and chr(int(m.group(1), 16)) not in line_at(text, e.location.line)
            for _, e in result.errors for m in [UNACCEPTABLE.search(e.message)]),
    ),
    KnownBug(
        "BUG-7", "a str holding a lone surrogate ('\\ud800', which no file decoded as UTF-8 can hold) "
        "escapes load_text as UnicodeEncodeError when libyaml's parser encodes it",
        _case("    given:\n      x: [1.0]\n    steps: [y = x + 1]\n    expect: {shape: {y: [1]}}\n",
              case_id="fuzz.known.bug\ud800"),
        raised=lambda exc: type(exc) is UnicodeEncodeError and "surrogates" in str(exc),
    ),
    KnownBug(
        "BUG-9", "the column of an error inside a step is counted in bytes: ast's col_offset is a "
        "UTF-8 byte offset, and steps._Parser.fail adds it to the YAML column, so after non-ASCII "
        "text it points past the place (here past the end of the line)",
        _case("    given:\n      x: [1.0]\n    steps:\n      - y = \u00f1\u00f1\u00f1 + _z\n"
              "    expect: {shape: {y: [1]}}\n"),
        wrong=lambda result, text: any(
            e.message.startswith("in step") and e.location.column > len(text.split("\n")[e.location.line - 1]) + 1
            for _, e in result.errors),
    ),
)


FIXED_BUGS += (
    KnownBug(
        "BUG-10", "a 'match' pattern nested too deeply for re (1,200 groups) is refused with the text of "
        "re's RecursionError, which depends on where the recursion struck: in the 10,000-example run "
        "load_file said 'maximum recursion depth exceeded while calling a Python object' and lint, for "
        "the same file, 'maximum recursion depth exceeded' (so lint did not hold the loader's error)",
        _case("    given:\n      x: [1.0]\n    steps: [y = x + 1]\n"
              "    expect: {warning: {at: 1, match: '" + "(" * 1200 + ")" * 1200 + "'}}\n"),
        wrong=lambda result, text: any("recursion" in e.message for _, e in result.errors),
    ),
)


# Bugs found and not fixed yet (none at the moment): the properties tolerate exactly these.
KNOWN_BUGS: tuple[KnownBug, ...] = ()


def tolerated(exc: BaseException) -> bool:
    """Whether this exception is an open known bug (counted as a Hypothesis event)."""
    return _counted(next((bug for bug in KNOWN_BUGS if bug.reproduces() and bug.raised(exc)), None))


def tolerated_result(result: LoadResult, text: str | None) -> bool:
    """Whether this wrong result is an open known bug (counted as a Hypothesis event)."""
    return _counted(next((bug for bug in KNOWN_BUGS
                          if bug.reproduces() and text is not None and bug.wrong(result, text)), None))


def _counted(bug: KnownBug | None) -> bool:
    if bug is not None:
        count(f"known bug {bug.name}")
    return bug is not None


@pytest.mark.parametrize("bug", [pytest.param(b, id=b.name, marks=pytest.mark.xfail(strict=True, reason=b.what))
                                 for b in KNOWN_BUGS])
def test_known_bug_is_fixed(bug: KnownBug) -> None:
    """Strict xfail while the bug is open: when this passes (XPASS fails the run), move the
    bug from KNOWN_BUGS to FIXED_BUGS."""
    assert not bug.reproduces()


@pytest.mark.parametrize("bug", FIXED_BUGS, ids=[b.name for b in FIXED_BUGS])
def test_fixed_bug_stays_fixed(bug: KnownBug) -> None:
    assert not bug.reproduces(), bug.what


# Found while writing these tests and fixed since (with the hostile cases, 5ace2ec): each
# gives one located error, not an exception.
REGRESSIONS = {
    "number-not-convertible": _case("    given:\n      x: [0x_]\n    steps: [y = x + 1]\n"
                                    "    expect: {shape: {y: [1]}}\n"),
    "number-too-long": _case("    given:\n      x: [" + "1" * 5000 + "]\n    steps: [y = x + 1]\n"
                             "    expect: {shape: {y: [1]}}\n"),
    "deep-flow-nesting": _case("    given:\n      x: " + "[" * 400 + "1" + "]" * 400 + "\n"
                               "    steps: [y = x + 1]\n    expect: {shape: {y: [1]}}\n"),
    "deep-block-nesting": "cases:\n" + "".join("  " * i + "-\n" for i in range(400)),
}


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_regression(name: str) -> None:
    text = REGRESSIONS[name]
    result = load_text(text, FILE, VOCAB)
    check_result(result, FILE, text)
    assert not result.cases and len(result.errors) == 1


def test_regression_zero_size_input_with_a_huge_dimension() -> None:
    """BUG-2, fixed: 'shape: [10**9, 0]' holds no element, but the loader expanded fill/arange
    into nested lists, one empty list per row: seconds for 10**7, memory exhausted for 10**9."""
    text = _case("    given:\n      x: {shape: [1000000000, 0], fill: 1}\n    steps: [y = x + 1]\n"
                 "    expect: {shape: {y: [1000000000, 0]}}\n")
    with time_limit(HANG_SECONDS):
        result = load_text(text, FILE, VOCAB)
    check_result(result, FILE, text)


def test_reading_numbers_keeps_no_memory_per_number() -> None:
    """BUG-8 (fixed): SafeConstructor.construct_object memoised every node it converted in
    constructed_objects, which nothing cleared, so a long-lived process grew with every
    distinct number it read; yamlsrc now calls the tag's constructor directly."""
    constructor = getattr(yamlsrc, "_CONSTRUCTOR", None)  # (gone is fine too)

    def kept() -> int:
        return sum(len(getattr(constructor, memo, {})) for memo in ("constructed_objects", "recursive_objects"))

    before = kept()
    nonce = uuid.uuid4().int % 10**9  # numbers no earlier test has read
    numbers = ", ".join(f"{i}.{nonce}" for i in range(2000))
    load_text(_case(f"    given:\n      x: [{numbers}]\n    steps: [y = x + 1]\n    expect: {{shape: {{y: [1]}}}}\n"),
              FILE, VOCAB)
    assert kept() - before < 100


# =========================================================================== checking one load


def count(what: str) -> None:
    """A Hypothesis event (shown by --hypothesis-show-statistics); a no-op outside a property."""
    try:
        event(what)
    except InvalidArgument:
        pass


def line_bound(text: str) -> int:
    """The last line an error may point at: one past the last line (end of stream).
    splitlines() counts every break YAML counts (\\n, \\r, \\r\\n, \\x85, \\u2028, \\u2029)."""
    return len(text.splitlines()) + 1


def check_location(loc: Any, file: str, bound: int) -> None:
    assert isinstance(loc.file, str) and loc.file == file, loc
    assert type(loc.line) is int and 1 <= loc.line <= bound, (loc, bound)
    assert type(loc.column) is int and loc.column >= 1, loc


UNACCEPTABLE = re.compile(r"unacceptable character #x([0-9a-f]+)")


def line_at(text: str, line: int) -> str:
    """Line ``line`` (1-based) as split at '\\n', and as YAML splits lines (also at \\r,
    \\x85, \\u2028, \\u2029): a location may count either way."""
    by_newline = text.split("\n")
    by_yaml = re.split("\r\n|[\r\n\x85\u2028\u2029]", text)
    return "".join(lines[line - 1] for lines in (by_newline, by_yaml) if line <= len(lines))


def check_result(result: Any, file: str, text: str | None) -> None:
    """What every LoadResult of ``text`` must be, whatever the text (None: a file that
    could not be decoded, whose error is at line 1)."""
    bound = 1 if text is None else line_bound(text)
    assert isinstance(result, LoadResult) and result.path == file
    for case_id, err in result.errors:
        assert type(err) is CaseFormatError, err  # each error on its own, none of the reader's own kinds
        assert case_id is None or isinstance(case_id, str)
        check_location(err.location, file, bound)
        bad_char = UNACCEPTABLE.search(err.message)
        if bad_char and text is not None:  # the line shown holds the character
            assert chr(int(bad_char.group(1), 16)) in line_at(text, err.location.line), err
        assert isinstance(err.message, str) and err.message.strip(), err
        assert err.hint is None or (isinstance(err.hint, str) and err.hint.strip()), err
        assert err.code in RULES, err
        assert err.render()
        count(f"error {err.code}")
    # in writing order: a case's errors in order, the cases' in the file's order
    places = [(e.location.line, e.location.column) for _, e in result.errors]
    assert places == sorted(places), [e.render() for _, e in result.errors]
    assert result.refused <= len(result.errors)
    ids = [c.id for c in result.cases]
    assert len(set(ids)) == len(ids), ids
    for case in result.cases:
        check_case(case, file, bound)
    count("outcome: " + ("all accepted" if not result.errors else "some accepted" if result.cases else "refused"))


def _shape_of(values: Any) -> tuple[int, ...]:
    shape: list[int] = []
    while isinstance(values, list):
        shape.append(len(values))
        if not values:
            break
        values = values[0]
    return tuple(shape)


def check_case(case: Any, file: str, bound: int) -> None:
    """A case the loader accepted is well-formed."""
    assert FULL_ID.fullmatch(case.id), case.id
    assert isinstance(case.title, str) and case.title.strip()
    check_location(case.location, file, bound)
    assert all(isinstance(t, str) for t in case.tags + case.references)
    names = [g.name for g in case.given]
    assert len(set(names)) == len(names)
    for spec in case.given:
        assert FULL_NAME.fullmatch(spec.name), spec.name
        if spec.made_by is not None:  # from: an expression of the inputs above it, step 0
            assert spec.made_by.number == 0 and spec.made_by.text.startswith(f"{spec.name} = ")
            assert (spec.values, spec.dtype, spec.shape) == (None, "", ())
            continue
        assert spec.dtype in DTYPES
        assert all(type(d) is int and d >= 0 for d in spec.shape)
        # values nest as the shape says (a zero dimension ends the nesting)
        assert _shape_of(spec.values)[:len(spec.shape)] == spec.shape[:len(_shape_of(spec.values))], spec
        assert math.prod(spec.shape) <= MAX_ELEMENTS
    flat = case.flat_steps()
    assert [s.number for s in flat] == list(range(1, len(flat) + 1))
    assert 1 <= len(flat) <= MAX_STEPS
    defined = set(names)
    for step in flat:
        assert len(step.text) <= MAX_STEP_CHARS
        used = [r.name for r in names_read(step)] + names_bound(step)
        used += [key.partition(":")[2] for key in operations_of(step)]
        assert not any(n.startswith("_") for n in used), step.text  # no dunder reaches an adapter
        assert operations_of(step) <= set(VOCAB.operations), step.text
        # what the parser noted while building the IR is what walking the IR finds
        again, reads, operations, strings = parse_step_uses(step.text, step.number, step.location, defined)
        assert again == step
        assert (reads, operations, strings) == (
            {r.name for r in names_read(step)}, operations_of(step), strings_of(step)), step.text
        defined.update(names_bound(step))
    assert 1 <= case.calls <= 4  # (the steps run once per call, numbered on: Case.called)
    for expect in [case.expect] + [o.expect.expect for o in case.overrides.values() if o.expect]:
        for ref in (expect.checks.get("error"), expect.checks.get("warning")):
            assert ref is None or 1 <= ref.at <= len(flat) * case.calls
    assert set(case.overrides) <= set(VOCAB.frameworks)
    assert set(case.claims.values()) <= set(CLAIM_STANCES)


def load_checked(text: str, file: str = FILE) -> LoadResult | None:
    """load_text under the properties; None when it hit an open known bug."""
    try:
        with time_limit(HANG_SECONDS):
            result = load_text(text, file, VOCAB)
            check_explained(text)
    except BaseException as exc:
        if not tolerated(exc):
            raise
        return None
    if tolerated_result(result, text):
        return None
    check_result(result, file, text)
    return result


def check_explained(text: str) -> None:
    """The explanation of a YAML syntax error (yamlerrors.explain, which the loader calls
    inside a guard) never raises, and is located inside the text, with a message and a fix."""
    try:
        parser = yamlsrc._EventParser(text)
    except UnicodeError:  # a lone surrogate (the loader refuses it before any YAML)
        return
    try:
        while parser.get_event() is not None:
            pass
    except yaml.MarkedYAMLError as exc:
        explained = yamlerrors.explain(text, exc, yamlsrc._EventParser)
        count("yaml error " + ("explained" if explained else "generic"))
        if explained is not None:
            assert 1 <= explained.line <= line_bound(text) and explained.column >= 1, explained
            assert explained.message.startswith("YAML syntax error: ") and explained.hint.strip(), explained
    except (yaml.YAMLError, UnicodeError):
        pass
    finally:
        parser.dispose()


def decoded(data: bytes) -> str | None:
    """What load_file reads (UTF-8, line breaks as they are), or None when it is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def load_and_lint_file(data: bytes) -> LoadResult | None:
    """load_file and lint_paths on a file holding ``data``: both located, lint includes
    every loader error. None when it hit an open known bug."""
    text = decoded(data)
    bound = 1 if text is None else line_bound(text)  # an unreadable file: line 1
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "case.yaml"
        path.write_bytes(data)
        try:
            with time_limit(HANG_SECONDS):
                result = load_file(path, VOCAB)
                findings = lint_paths([path], VOCAB)
        except BaseException as exc:
            if not tolerated(exc):
                raise
            return None
    if text is None:
        assert not result.cases and len(result.errors) == 1, result.errors
    if tolerated_result(result, text):
        return None
    check_result(result, str(path), text)
    for finding in findings:
        assert finding.code in RULES, finding
        check_location(finding.location, str(path), bound)
        assert isinstance(finding.message, str) and finding.message.strip(), finding
        assert finding.render()
    # every error of every case, each as many times as the loader has it
    found = Counter((f.code, f.location, f.message, f.hint) for f in findings)
    loaded = Counter((e.code, e.location, e.message, e.hint) for _, e in result.errors)
    assert not loaded - found, loaded - found
    return result


def outcome(result: LoadResult) -> tuple[list, list]:
    """A result without its file name."""
    return ([(e.code, e.location.line, e.location.column, e.message, e.hint) for _, e in result.errors],
            [c.id for c in result.cases])


def load_text_and_file(text: str, data: bytes | None = None) -> LoadResult | None:
    """load_checked on ``text``, and load_file and lint on a file holding ``data`` (by
    default the text in UTF-8): all located, and load_text and load_file agree where the
    file holds the text."""
    result = load_checked(text)
    if data is None:
        data = text.encode("utf-8", "surrogatepass")  # a lone surrogate: not UTF-8
    via_file = load_and_lint_file(data)
    if result is not None and via_file is not None and decoded(data) == text:
        assert outcome(via_file) == outcome(result)
    return result


# =========================================================================== seeds: the real corpus


CORPUS_FILES = sorted((ROOT / "cases").rglob("*.yaml"))


def _windows(cases: list, size: int) -> list:
    return [cases[i:i + size] for i in range(0, len(cases) - size + 1)]


@lru_cache(maxsize=None)
def corpus_cases() -> tuple[tuple[dict, ...], ...]:
    """Every run of 1 to 3 consecutive cases of a corpus file, as plain data: small
    documents keep an example fast and the mutation close to a case."""
    out = []
    for path in CORPUS_FILES:
        cases = yaml.safe_load(path.read_text(encoding="utf-8"))["cases"]
        for size in (1, 2, 3):
            out += [tuple(w) for w in _windows(cases, size)]
    return tuple(out)


@lru_cache(maxsize=None)
def corpus_snippets() -> tuple[str, ...]:
    """Every case of the corpus as written (its own lines under 'cases:', comments and
    all), one or two at a time, plus the smallest whole files."""
    out = []
    for path in CORPUS_FILES:
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines(keepends=True)
        items = parse(text, str(path))["cases"]
        starts = [items.where(i).line - 1 for i in range(len(items))] + [len(lines)]
        for i in range(len(items)):
            for size in (1, 2):
                if i + size < len(starts):
                    out.append("cases:\n" + "".join(lines[starts[i]:starts[i + size]]))
        if len(lines) < 80:
            out.append(text)
    return tuple(out)


def test_seeds_load_cleanly() -> None:
    """The oracle's premise: unmutated seeds load without errors, whichever YAML style
    they are dumped in."""
    styles = (False, None, True)
    for n, cases in enumerate(corpus_cases()[::13]):
        text = yaml.safe_dump({"cases": list(cases)}, sort_keys=False, default_flow_style=styles[n % 3],
                              allow_unicode=True)
        result = load_text(text, FILE, VOCAB)
        assert result.errors == [] and len(result.cases) == len(cases)
    for text in corpus_snippets()[::9]:
        assert load_text(text, FILE, VOCAB).errors == []


# =========================================================================== values


def choice(items: list) -> st.SearchStrategy[Any]:
    """sampled_from, with a short repr: --hypothesis-show-statistics prints the strategies
    of its events, and a repr of these lists is pages long."""
    def item(i: int) -> Any:
        return items[i]

    item.__name__ = f"one_of_{len(items)}_items"
    return st.integers(0, len(items) - 1).map(item)


SPECIAL_FLOATS = [math.nan, math.inf, -math.inf, -0.0, 1e308, 5e-324]
# 10**4000 still dumps (str() of an int stops at 4300 digits)
HUGE_INTS = [2**31, 2**63, -(2**63) - 1, 10**100, 10**4000]
KNOWN_KEYS = sorted(set(CASE_KEYS + TENSOR_KEYS + OVERRIDE_KEYS + kinds.names())
                    | {"cases", "error", "warning", "at", "kind", "match", "type", "real", "imag"}
                    | set(VOCAB.frameworks) | set(BLOCKS))
# strings that mean something somewhere in a case, and ones YAML or Python treat specially
WORDS = sorted(set(KNOWN_KEYS) | set(DTYPES) | set(ERROR_KINDS) | set(CLAIM_STANCES) | {
    "", " ", "\t", "\n", "x", "y", "y & x", "x &", "&", "a & b & c", "S3-02", "S9-99", "s3-02",
    "views.view.x", "Views.View", "a..b", ".a", "cpu", "cuda", "tpu", "tensor", "ndarray",
    "null", "~", "yes", "no", "on", "off", "0b_", "0x_", "1e3", ".inf", "2001-12-14", "=", "<<",
    "__class__", "__import__('os').system('true')", "_x", "ñ", "ｘ", "\u2028", "\x85", "\ufeff",
    "\x00", "[", "{", "*", "a" * 600, "(", "y = x.view(4)", "float", "Float32", "torch.float32",
    "fuzz.x.y\n", " fuzz.x.y", "holds ", "float32\n", "a{4294967296}",
})
# 'match' patterns: invalid ones, huge repeats, deep groups, ones that warn
REGEXES = ["(", "[", "*", "a{2,1}", "a{4294967296}", "a{99999999999999999999}", "(" * 1200 + ")" * 1200,
           "(?:" * 300 + ")" * 300, "[[a]", "(?<=a+)", "\\", "\\N{nope}", "(?P<a>)(?P<a>)", "a" * 2000,
           "(a+)+$", "RuntimeError", ""]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), choice(HUGE_INTS),
    st.floats(), choice(SPECIAL_FLOATS), st.text(max_size=20), choice(WORDS),
)
dict_keys = st.one_of(choice(KNOWN_KEYS), choice(WORDS), st.text(max_size=12),
                      st.integers(-2, 2), st.booleans(), st.none())


def _nest(depth: int, leaf: Any, kind: str) -> Any:
    for _ in range(depth):
        leaf = [leaf] if kind == "list" else {"a": leaf}
    return leaf


# up to 60 levels: across yamlsrc.MAX_DEPTH (32) but not hundreds, which the text-level
# generator does more cheaply
deeply_nested = st.builds(_nest, st.integers(2, 60), scalars, st.sampled_from(["list", "dict"]))


def small_containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.lists(inner, max_size=4), st.dictionaries(dict_keys, inner, max_size=4))


def containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.lists(inner, max_size=5), st.dictionaries(dict_keys, inner, max_size=5))


values = st.one_of(st.recursive(scalars, small_containers, max_leaves=10), deeply_nested)
dims = st.one_of(
    st.integers(0, 4), st.integers(-3, -1), choice([2**31, 2**63, MAX_ELEMENTS, MAX_ELEMENTS + 1, 10**40]),
    st.booleans(), st.floats(0, 4), st.none(), st.sampled_from(["2", ""]),
)
shapes = st.one_of(st.lists(dims, max_size=6), st.integers(30, 70).map(lambda n: [1] * n), values)
dtypes = st.one_of(choice(list(DTYPES)), choice(WORDS), values)

NAMES = ["x", "y", "z", "t", "a", "b", "out", "relu", "exp", "x0", "X", "_x", "__class__", "ñ", "ｘ",
         "x1_", "1x", "x-y", "x y", "", "None", "True", "lambda", "import", "given", "print"]
tensor_names = st.one_of(choice(NAMES), st.text(max_size=8))


# =========================================================================== step text

OPERATION_NAMES = sorted({k.partition(":")[2] for k in VOCAB.operations} - {""})
METHODS = sorted({k.partition(":")[2] for k in VOCAB.operations if k.startswith("method:")})
FUNCTIONS = sorted({k.partition(":")[2] for k in VOCAB.operations if k.startswith("fn:")})
ATTRS = sorted({k.partition(":")[2] for k in VOCAB.operations if k.startswith("attr:")})
BINOPS = ["+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^", "<<", ">>", "and", "or",
          "<", "<=", ">", ">=", "==", "!=", "is", "in", "not in", "if x else"]
UNARY = ["-", "+", "~", "not ", "*", "**", "await ", "lambda: "]
ATOMS = ["x", "y", "m", "z", "0", "1", "-1", "2.5", "1e999", "1j", "True", "None", "...", "'float64'",
         "b'x'", "f'{x}'", "_x", "__class__", "x.__dict__", "ｘ", "10**10**10", "0x_", "1_000"]
TOKENS = ATOMS + BINOPS + ["(", ")", "[", "]", "{", "}", ",", ":", ";", ".", "=", "+=", "**=", ":=",
                           "\\", "#", "'", '"', "\t", "\n", "\x00", "import os", "del x", "yield",
                           "__import__('os')", "lambda", "for", "ñ", "\u2028", "\ufeff"] + METHODS[:20]

atoms = st.one_of(choice(ATOMS), st.integers(-5, 10**20).map(str))


def _expressions(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    known_or_not = st.one_of(choice(METHODS), st.sampled_from(["veiw", "_x", "__len__", "mro"]))
    args = st.lists(inner, max_size=3).map(", ".join)
    kwargs = st.lists(st.tuples(st.sampled_from(["dim", "out", "inplace", "_k", "x"]), inner),
                      max_size=2).map(lambda kw: "".join(f", {k}={v}" for k, v in kw))
    return st.one_of(
        st.tuples(inner, st.sampled_from(BINOPS), inner).map(" ".join),
        st.tuples(st.sampled_from(UNARY), inner).map("".join),
        st.tuples(inner, known_or_not, args, kwargs).map(lambda t: f"{t[0]}.{t[1]}({t[2]}{t[3]})"),
        st.tuples(choice(FUNCTIONS + ["print", "eval", "open"]), args, kwargs)
        .map(lambda t: f"{t[0]}({t[1]}{t[2]})"),
        st.tuples(inner, choice(ATTRS + ["grad", "_base", "__class__"])).map(".".join),
        st.tuples(inner, st.lists(st.one_of(inner, st.sampled_from([":", "::2", "1:", "...", "None"])),
                                  min_size=1, max_size=3).map(", ".join)).map(lambda t: f"{t[0]}[{t[1]}]"),
        st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.lists(inner, max_size=3).map(lambda xs: "(" + ", ".join(xs) + ",)"),
        inner.map(lambda s: f"({s})"),
    )


expressions = st.recursive(atoms, _expressions, max_leaves=8)
targets = st.one_of(st.sampled_from(["y", "z", "x", "_y", "a, b", "x[0]", "x[1:]", "x.data", "x.requires_grad",
                                     "x.__class__", "y = z", "(y)", "[a, b]", "f()", "1"]), expressions)
statements = st.one_of(
    expressions,
    st.tuples(targets, expressions).map(lambda t: f"{t[0]} = {t[1]}"),
    st.tuples(targets, st.sampled_from(["+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^", "<<"]),
              expressions).map(lambda t: f"{t[0]} {t[1]}= {t[2]}"),
    st.sampled_from(["pass", "import os", "del x", "global x", "assert x", "with x: y", "if x: y",
                     "x; y", "return x", "raise x", "y: int = x", "async def f(): pass"]),
)
token_soup = st.lists(choice(TOKENS), min_size=1, max_size=12).map(" ".join)


@st.composite
def mutated_step_text(draw: st.DrawFn, text: str) -> str:
    """A corpus step with a token inserted, a span cut, or replaced outright."""
    how = draw(st.sampled_from(["insert", "cut", "replace", "soup", "long", "text"]))
    at = draw(st.integers(0, len(text)))
    if how == "insert":
        return text[:at] + draw(choice(TOKENS)) + text[at:]
    if how == "cut":
        return text[:at] + text[draw(st.integers(at, len(text))):]
    if how == "replace":
        return draw(statements)
    if how == "soup":
        return draw(token_soup)
    if how == "long":
        return text + " + x" * draw(st.integers(100, 200))  # around MAX_STEP_CHARS
    return draw(st.text(max_size=30))


# =========================================================================== 1. structure-aware mutation


Path_ = tuple  # a path into plain data: keys and indices


def slots(node: Any, path: Path_ = ()) -> Iterator[Path_]:
    """Every place in ``node`` that holds a value."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in list(items):
        yield path + (key,)
        yield from slots(child, path + (key,))


def get(root: Any, path: Path_) -> Any:
    for key in path:
        root = root[key]
    return root


def put(root: Any, path: Path_, value: Any) -> None:
    get(root, path[:-1])[path[-1]] = value


def pick(draw: st.DrawFn, root: Any, keep: Callable[[Path_, Any], bool] = lambda p, v: True) -> Path_ | None:
    found = [p for p in slots(root) if keep(p, get(root, p))]
    return draw(st.sampled_from(found)) if found else None


def m_delete(draw: st.DrawFn, root: Any) -> str:
    path = pick(draw, root)
    if path is None:
        return "nothing to delete"
    del get(root, path[:-1])[path[-1]]
    return f"delete {path}"


def m_add_key(draw: st.DrawFn, root: Any) -> str:
    maps = [()] if isinstance(root, dict) else []
    maps += [p for p in slots(root) if isinstance(get(root, p), dict)]
    if not maps:
        return "no mapping"
    path, key = draw(st.sampled_from(maps)), draw(dict_keys)
    get(root, path)[key] = draw(values)
    return f"add {key!r} at {path}"


def m_replace(draw: st.DrawFn, root: Any) -> str:
    path = pick(draw, root)
    if path is None:
        return "nothing to replace"
    put(root, path, draw(values))
    return f"replace {path}"


def m_retype_leaf(draw: st.DrawFn, root: Any) -> str:
    path = pick(draw, root, lambda p, v: not isinstance(v, (dict, list)))
    if path is None:
        return "no leaf"
    put(root, path, draw(scalars))
    return f"retype {path}"


def m_whitespace(draw: st.DrawFn, root: Any) -> str:
    """A string with a space, tab or line break before or after it: what a block scalar
    ('id: |') or a stray quote gives."""
    path = pick(draw, root, lambda p, v: isinstance(v, str))
    if path is None:
        return "no string"
    pad = draw(st.sampled_from([" ", "\t", "\n", "\r\n", "\u2028", "\xa0"]))
    put(root, path, pad + get(root, path) if draw(st.booleans()) else get(root, path) + pad)
    return f"pad {path} with {pad!r}"


def m_regex(draw: st.DrawFn, root: Any) -> str:
    path = pick(draw, root, lambda p, v: p[-1] == "match")
    if path is None:
        return "no match"
    put(root, path, draw(st.one_of(choice(REGEXES), st.text(st.sampled_from("()[]{}*+?|\\^$.a0,:<=!P"),
                                                            max_size=12))))
    return f"regex at {path}"


def _given_maps(root: Any) -> list[Path_]:
    return [p for p in slots(root) if p[-1] == "given" and isinstance(get(root, p), dict)]


def m_rename_tensor(draw: st.DrawFn, root: Any) -> str:
    maps = _given_maps(root)
    if not maps:
        return "no given"
    path = draw(st.sampled_from(maps))
    given_ = get(root, path)
    if not given_:
        return "empty given"
    old, new = draw(st.sampled_from(sorted(given_, key=str))), draw(tensor_names)
    put(root, path, {(new if k == old else k): v for k, v in given_.items()})
    return f"rename {old!r} -> {new!r}"


def m_step_text(draw: st.DrawFn, root: Any) -> str:
    path = pick(draw, root, lambda p, v: isinstance(v, str) and "steps" in p)
    if path is None:
        return "no step"
    put(root, path, draw(mutated_step_text(get(root, path))))
    return f"step {path}"


def _tensor_specs(root: Any) -> list[Path_]:
    return [p + (name,) for p in _given_maps(root) for name in get(root, p)]


def m_shape(draw: st.DrawFn, root: Any) -> str:
    specs = _tensor_specs(root) + [p for p in slots(root) if p[-2:-1] == ("shape",) and isinstance(p[-1], str)]
    if not specs:
        return "no tensor"
    path, shape = draw(st.sampled_from(specs)), draw(shapes)
    if path[-2] == "shape" or not isinstance(get(root, path), dict):  # expect.shape, or x: [..] shorthand
        put(root, path, shape)
        return f"shape {path} = {shape!r}"[:200]
    spec = get(root, path)
    spec["shape"] = shape
    if draw(st.booleans()):  # a fill instead of the data, so that the shape is the one used
        for source in ("data", "real", "imag", "arange"):
            spec.pop(source, None)
        spec["fill"] = draw(st.one_of(st.integers(-2, 2), st.sampled_from(SPECIAL_FLOATS), scalars))
    return f"shape of {path} = {shape!r}"[:200]


def m_dtype(draw: st.DrawFn, root: Any) -> str:
    specs = [p for p in _tensor_specs(root) if isinstance(get(root, p), dict)]
    specs += [p for p in slots(root) if p[-2:-1] == ("dtype",) and isinstance(p[-1], str)]
    if not specs:
        return "no tensor"
    path, dtype = draw(st.sampled_from(specs)), draw(dtypes)
    if path[-2] == "dtype":
        put(root, path, dtype)
    else:
        get(root, path)["dtype"] = dtype
    return f"dtype of {path} = {dtype!r}"[:200]


def m_ragged(draw: st.DrawFn, root: Any) -> str:
    path = pick(draw, root, lambda p, v: isinstance(v, list) and bool(v) and any(
        k in p for k in ("data", "real", "imag", "values", "grad")))
    if path is None:
        return "no data"
    target = get(root, path)
    how = draw(st.sampled_from(["append", "pop", "wrap", "str"]))
    if how == "append":
        target.append(draw(st.one_of(st.integers(), st.floats(), st.lists(st.integers(), max_size=3))))
    elif how == "pop":
        target.pop()
    elif how == "wrap":
        target[0] = [target[0]]
    else:
        target[-1] = draw(choice(WORDS))
    return f"{how} data {path}"


def m_alias(draw: st.DrawFn, root: Any) -> str:
    """Put one mapping or list in two places: the dump writes an anchor and an alias."""
    source = pick(draw, root, lambda p, v: isinstance(v, (dict, list)))
    if source is None:
        return "no container"
    target = pick(draw, root, lambda p, v: p[:len(source)] != source and source[:len(p)] != p)
    if target is None:
        return "no place"
    put(root, target, get(root, source))
    return f"alias {source} at {target}"


LOCAL_MUTATIONS = [m_delete, m_add_key, m_replace, m_retype_leaf, m_whitespace, m_rename_tensor, m_step_text,
                   m_step_text, m_shape, m_dtype, m_ragged, m_regex]


def m_duplicate_case(draw: st.DrawFn, doc: Any) -> str:
    cases = doc.get("cases") if isinstance(doc, dict) else None
    if not isinstance(cases, list) or not cases:
        return "no cases"
    i = draw(st.integers(0, len(cases) - 1))
    cases.insert(draw(st.integers(0, len(cases))), copy.deepcopy(cases[i]))
    return f"duplicate case {i}"


def m_same_id(draw: st.DrawFn, doc: Any) -> str:
    cases = doc.get("cases") if isinstance(doc, dict) else None
    if not isinstance(cases, list) or len(cases) < 2 or not all(isinstance(c, dict) for c in cases):
        return "fewer than two cases"
    i, j = draw(st.integers(0, len(cases) - 1)), draw(st.integers(0, len(cases) - 1))
    cases[j]["id"] = copy.deepcopy(cases[i].get("id"))
    return f"case {j} takes the id of case {i}"


GLOBAL_MUTATIONS = LOCAL_MUTATIONS + [m_duplicate_case, m_same_id]


@st.composite
def mutated_documents(draw: st.DrawFn) -> tuple[dict, int | None]:
    """(document, index of the only case the mutations touched, or None)."""
    cases = copy.deepcopy(list(draw(choice(list(corpus_cases())))))
    doc = {"cases": cases}
    target = draw(st.one_of(st.none(), st.integers(0, len(cases) - 1)))
    root, mutations = (doc, GLOBAL_MUTATIONS) if target is None else (cases[target], LOCAL_MUTATIONS)
    for _ in range(draw(st.integers(1, 3))):
        mutate = draw(st.sampled_from(mutations))
        count(mutate.__name__)
        note(mutate(draw, root))
    # last, and never twice: a mutation after an alias could put a container inside itself
    if draw(st.sampled_from([False] * 9 + [True])):  # 1 in 10 (integers() would favour 0)
        count(m_alias.__name__)
        note(m_alias(draw, root))
    return doc, target


def dump(draw: st.DrawFn, doc: Any) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=draw(st.booleans()),
                          default_flow_style=draw(st.sampled_from([False, None, True])))


@st.composite
def dumped_mutations(draw: st.DrawFn) -> tuple[str, dict, int | None]:
    doc, target = draw(mutated_documents())
    return dump(draw, doc), doc, target


def file_level_error(text: str) -> bool:
    """Whether the whole file is refused (YAML-level problem or a bad top level), in
    which case the loader gives the file's errors (one, or one per unknown top-level key)
    and no case."""
    try:
        doc = parse(text, FILE)
    except CaseFormatError:
        return True
    return not (isinstance(doc, YMap) and list(doc) == ["cases"] and isinstance(doc["cases"], YList)
                and doc["cases"])


@BUDGET
@given(dumped_mutations())
def test_mutated_cases(example: tuple[str, dict, int | None]) -> None:
    text, doc, target = example
    note(text)
    result = load_text_and_file(text)
    if result is None:
        return
    again = load_text(text, FILE, VOCAB)  # deterministic
    assert [e.render() for _, e in again.errors] == [e.render() for _, e in result.errors]
    assert [c.id for c in again.cases] == [c.id for c in result.cases]
    if file_level_error(text):  # errors of the file only, and no case
        assert not result.cases and result.errors and result.refused == 0, result.errors
        assert all(case_id is None for case_id, _ in result.errors), result.errors
        return
    # one outcome per case: loaded, or refused with one error or more
    cases = doc["cases"]
    assert len(result.cases) + result.refused == len(cases)
    assert result.refused <= len(result.errors)
    if target is not None:
        # a bad case does not take the others with it
        mutated_id = cases[target].get("id") if isinstance(cases[target], dict) else None
        others = [c["id"] for i, c in enumerate(cases) if i != target and c["id"] != mutated_id]
        assert set(others) <= {c.id for c in result.cases}, result.errors


@BUDGET
@given(choice(list(corpus_cases())), st.data())
def test_duplicated_case_is_one_cf001(cases: tuple[dict, ...], data: st.DataObject) -> None:
    """Exact oracle for one mutation: a copy of a case anywhere in the file gives one
    CF001 error and leaves the other cases loaded."""
    i = data.draw(st.integers(0, len(cases) - 1))
    doc = {"cases": copy.deepcopy(list(cases))}
    doc["cases"].insert(data.draw(st.integers(0, len(cases))), copy.deepcopy(cases[i]))
    result = load_checked(yaml.safe_dump(doc, sort_keys=False))
    assert result is not None
    assert [e.code for _, e in result.errors] == ["CF001"]
    assert sorted(c.id for c in result.cases) == sorted(c["id"] for c in cases)


@BUDGET
@given(choice(list(corpus_cases())), st.data())
def test_required_key_removed_is_an_error(cases: tuple[dict, ...], data: st.DataObject) -> None:
    """Exact oracle: a case without id, title, steps or expect is an error of that case only."""
    i = data.draw(st.integers(0, len(cases) - 1))
    key = data.draw(st.sampled_from(["id", "title", "steps", "expect"]))
    doc = {"cases": copy.deepcopy(list(cases))}
    del doc["cases"][i][key]
    result = load_checked(yaml.safe_dump(doc, sort_keys=False))
    assert result is not None
    assert len(result.errors) == 1 and f"no {key!r}" in result.errors[0][1].message
    assert result.errors[0][0] == (None if key == "id" else cases[i]["id"])
    assert len(result.cases) == len(cases) - 1


# Independent mistakes, each one error whatever else the case holds (the corpus's cases are
# valid): (what it does to a case, the start of its one message). Any of them together in one
# case give exactly their errors, each once: every error of a case, and none downstream.
INDEPENDENT_MISTAKES: dict[str, tuple[Callable[[dict], None], str]] = {
    "id": (lambda c: c.__setitem__("id", "Not An Id"), "invalid id 'Not An Id'"),
    "title": (lambda c: c.__setitem__("title", ["a", "list"]), "'title' must be a non-empty string"),
    "tags": (lambda c: c.__setitem__("tags", {"a": 1}), "'tags' must be a list of strings"),
    "device": (lambda c: c.__setitem__("device", "tpu"), "unknown device 'tpu'"),
    "key": (lambda c: c.__setitem__("fuzz_unknown_key", 1), "unknown key 'fuzz_unknown_key' in a case"),
    "step": (lambda c: c["steps"].append("fuzz_z = fuzz_undefined + 1"),
             "in step 'fuzz_z = fuzz_undefined + 1': 'fuzz_undefined' is not defined"),
    "unparsable step": (lambda c: c["steps"].append("fuzz_w = x.view(("),
                        "in step 'fuzz_w = x.view((': not a valid step"),
    "expect entry": (lambda c: c["expect"].setdefault("dtype", {}).__setitem__("fuzz_nope", "float32"),
                     "'fuzz_nope' is not a tensor of this case"),
    "framework": (lambda c: c.setdefault("frameworks", {}).__setitem__("fuzz_jax", {"reason": "r"}),
                  "unknown framework 'fuzz_jax'"),
}


@BUDGET
@given(choice(list(corpus_cases())), st.data())
def test_independent_mistakes_are_each_one_error(cases: tuple[dict, ...], data: st.DataObject) -> None:
    """Exact oracle: k independent mistakes in one case are its k errors, in writing order,
    and the other cases still load."""
    i = data.draw(st.integers(0, len(cases) - 1))
    chosen = data.draw(st.lists(st.sampled_from(sorted(INDEPENDENT_MISTAKES)), min_size=1, unique=True))
    doc = {"cases": copy.deepcopy(list(cases))}
    for name in chosen:
        INDEPENDENT_MISTAKES[name][0](doc["cases"][i])
    result = load_checked(yaml.safe_dump(doc, sort_keys=False))
    assert result is not None
    assert result.refused == 1 and len(result.cases) == len(cases) - 1
    messages = [e.message for _, e in result.errors]
    assert len(messages) == len(chosen), messages
    assert all(any(m.startswith(INDEPENDENT_MISTAKES[name][1]) for m in messages) for name in chosen), messages


# =========================================================================== 2. text-level corruption


# characters YAML or a reader treats specially, including a lone surrogate (not UTF-8)
NASTY = list(":-?[]{},#&*!|>'\"%@`\t\r\n \\") + ["\x00", "\x07", "\x1b", "\x7f", "\x85", "\xa0", "\u2028",
                                                   "\ufeff", "\ufffe", "\ud800", "é", "😀", "\u202e"]
YAML_TOKENS = [
    "&a ", "*a", "&a [1]\n", "<<: *a\n", "<<: {x: 1}\n", "!!python/object/apply:os.system ['true'] ",
    "!!binary aGk= ", "!!set {a} ", "!!timestamp 2001-12-14 ", "!!omap [] ", "!custom ", "!!str ", "!!int 3 ",
    "!!float x ", "!!int ", "!!int ''", "!!float '-'", "!!bool ''", "!!null x ", "!<tag:yaml.org,2002:str> ", "!!map ", "!!seq ", "\n---\n", "---\n", "\n...\n",  # noqa: E501
    "%YAML 1.2\n---\n", "%TAG ! tag:x,2000:\n", "? ", "? [a]\n: b\n", "0b_", "0x_", "-0b_", "._",
    "1" * 4400, "2001-12-14", ".nan", "~", "null", "yes", "=", "|", ">-", "|+\n", '"\\x00"', '"\\ud800"',
    "'unterminated", '"unterminated', "{", "}", "[", "]", ": ", " #", "\t", "- ", "x: 1\n", "x: 1\nx: 2\n",
]


def c_truncate(draw: st.DrawFn, text: str) -> str:
    return text[:draw(st.integers(0, len(text)))]


def c_insert_chars(draw: st.DrawFn, text: str) -> str:
    at = draw(st.integers(0, len(text)))
    return text[:at] + draw(st.text(st.sampled_from(NASTY), min_size=1, max_size=4)) + text[at:]


def c_insert_token(draw: st.DrawFn, text: str) -> str:
    """At a random point, or (more often useful) right after a key's ': '."""
    if draw(st.booleans()):
        at = draw(st.integers(0, len(text)))
    else:
        spots = [m.end() for m in re.finditer(r": |- ", text)]
        at = draw(st.sampled_from(spots)) if spots else 0
    return text[:at] + draw(choice(YAML_TOKENS)) + text[at:]


def c_delete_span(draw: st.DrawFn, text: str) -> str:
    start = draw(st.integers(0, len(text)))
    return text[:start] + text[draw(st.integers(start, min(len(text), start + 40))):]


def c_lines(draw: st.DrawFn, text: str) -> str:
    lines = text.splitlines(keepends=True)
    if not lines:
        return text
    i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
    how = draw(st.sampled_from(["duplicate", "swap", "delete"]))
    if how == "duplicate":
        lines.insert(j, lines[i])
    elif how == "swap":
        lines[i], lines[j] = lines[j], lines[i]
    else:
        del lines[i]
    return "".join(lines)


def c_indent(draw: st.DrawFn, text: str) -> str:
    lines = text.splitlines(keepends=True)
    if not lines:
        return text
    i = draw(st.integers(0, len(lines) - 1))
    stripped = lines[i].lstrip(" ")
    indent = len(lines[i]) - len(stripped)
    how = draw(st.sampled_from(["more", "less", "tab", "zero"]))
    if how == "more":
        lines[i] = " " * (indent + draw(st.integers(1, 3))) + stripped
    elif how == "less":
        lines[i] = " " * max(0, indent - draw(st.integers(1, 3))) + stripped
    elif how == "tab":
        lines[i] = "\t" * max(1, indent // 2) + stripped
    else:
        lines[i] = stripped
    return "".join(lines)


def c_value(draw: st.DrawFn, text: str) -> str:
    """Replace what follows a key on one line with a special scalar or a bit of YAML."""
    spots = [m for m in re.finditer(r"(?m)^(\s*[-\w& ]+: ).*$", text)]
    if not spots:
        return text
    m = draw(st.sampled_from(spots))
    new = draw(st.one_of(choice(YAML_TOKENS + WORDS), choice(["[", "{a: 1", "[1, [2]", "'a' b", "a: b: c"])))
    return text[:m.start()] + m.group(1) + new.replace("\n", " ") + text[m.end():]


def c_nest(draw: st.DrawFn, text: str) -> str:
    """Flow collections nested deep, after a key: PyYAML composes recursively (yamlsrc.MAX_DEPTH)."""
    spots = [m.end() for m in re.finditer(r": ", text)] or [len(text)]
    at = draw(st.sampled_from(spots))
    depth = draw(st.one_of(st.integers(1, 50), st.sampled_from([100, 200, 300, 500, 2000, 20000])))
    brackets = draw(st.sampled_from(["[]", "{}"]))
    inner = "[" * depth + "1" + "]" * depth if brackets == "[]" else "{a: " * depth + "1" + "}" * depth
    rest = text[at:].partition("\n")[2]  # the value it replaces ends with its line
    return text[:at] + inner + "\n" + rest


def c_whole(draw: st.DrawFn, text: str) -> str:
    how = draw(st.sampled_from(["bom", "crlf", "cr", "separator", "end", "indent_all", "empty", "comment"]))
    if how == "bom":
        return "\ufeff" + text
    if how == "crlf":
        return text.replace("\n", "\r\n")
    if how == "cr":
        return text.replace("\n", "\r")
    if how == "separator":
        return text + "---\n" + text
    if how == "end":
        return text + "...\n" + draw(st.sampled_from(["", "x: 1\n", "cases: []\n"]))
    if how == "indent_all":
        return "".join("  " + line for line in text.splitlines(keepends=True))
    if how == "empty":
        return draw(st.sampled_from(["", "\n", "# only a comment\n", "---\n", "...\n", "cases:\n", "cases: []\n"]))
    return "# yaml-language-server: $schema=x\n" + text


CORRUPTIONS = [c_truncate, c_insert_chars, c_insert_token, c_insert_token, c_delete_span, c_lines, c_indent,
               c_indent, c_value, c_value, c_nest, c_whole]
INVALID_UTF8 = [b"\xff", b"\xfe\xff", b"\xc3", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80"]


@st.composite
def corrupted_files(draw: st.DrawFn) -> tuple[str, bytes]:
    """(corrupted text, the bytes of a file holding it, corrupted further at times)."""
    text = draw(choice(list(corpus_snippets())))
    for _ in range(draw(st.integers(1, 4))):
        corrupt = draw(st.sampled_from(CORRUPTIONS))
        count(corrupt.__name__)
        text = corrupt(draw, text)
    data = text.encode("utf-8", "surrogatepass")  # a lone surrogate becomes invalid UTF-8
    how = draw(st.sampled_from(["none"] * 6 + ["invalid", "bytes", "utf16"]))
    at = draw(st.integers(0, len(data)))
    if how == "invalid":
        data = data[:at] + draw(st.sampled_from(INVALID_UTF8)) + data[at:]
    elif how == "bytes":
        data = data[:at] + draw(st.binary(min_size=1, max_size=4)) + data[at:]
    elif how == "utf16":
        data = text.encode("utf-16", "surrogatepass")
    return text, data


@BUDGET
@given(corrupted_files())
def test_corrupted_files(example: tuple[str, bytes]) -> None:
    text, data = example
    note(repr(text[:2000]))
    note(repr(data[:2000]))
    load_text_and_file(text, data)


# =========================================================================== 3. random structures


def _case_like(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict]:
    """Mappings with the case keys, so that a random document gets past the first checks."""
    ids = st.one_of(st.sampled_from(["fuzz.random.case", "fuzz.random.other", "Fuzz", "a.b", "a"]),
                    st.from_regex(r"[a-z][a-z0-9_]{0,4}(\.[a-z0-9_]{1,4}){1,2}", fullmatch=True), inner)
    step_lists = st.lists(st.one_of(statements, token_soup, inner,
                                    st.fixed_dictionaries({"no_grad": st.lists(statements, max_size=2)})),
                          min_size=1, max_size=4)
    return st.fixed_dictionaries(
        {"id": ids, "title": st.one_of(st.just("t"), inner), "steps": st.one_of(step_lists, inner)},
        optional={
            "given": st.dictionaries(tensor_names, inner, max_size=3),
            "expect": st.dictionaries(st.sampled_from(kinds.names()),
                                      inner, max_size=3),
            "frameworks": st.dictionaries(st.sampled_from(list(VOCAB.frameworks) + ["mxnet"]), inner, max_size=2),
            "tags": inner, "claims": inner, "references": inner, "device": inner,
            "bogus": inner,
        },
    )


random_values = st.recursive(scalars, containers, max_leaves=25)
random_documents = st.one_of(
    random_values,
    st.fixed_dictionaries({"cases": random_values}),
    st.fixed_dictionaries({"cases": st.lists(random_values, min_size=1, max_size=3)}),
    st.fixed_dictionaries({"cases": st.lists(_case_like(random_values), min_size=1, max_size=3)}),
)


@BUDGET
@given(random_documents, st.data())
def test_random_documents(doc: Any, data: st.DataObject) -> None:
    text = dump(data.draw, doc)
    note(text)
    load_text_and_file(text)


# =========================================================================== 4. step text from a grammar


@st.composite
def cases_with_generated_steps(draw: st.DrawFn) -> str:
    step = st.one_of(statements, statements, token_soup, choice(TOKENS))
    steps = draw(st.lists(st.one_of(step, st.lists(step, min_size=1, max_size=2).map(lambda s: {"no_grad": s})),
                          min_size=1, max_size=4))
    case = {
        "id": "fuzz.steps.generated", "title": "generated steps",
        "given": {"x": {"data": [[1.0, 2.0], [3.0, 4.0]], "requires_grad": draw(st.booleans())},
                  "y": [1, 2], "m": [True, False]},
        "steps": steps,
        "expect": draw(st.sampled_from([{"shape": {"x": [2, 2]}}, {"values": {"z": [1.0]}},
                                        {"error": {"at": 1, "kind": "other"}},
                                        {"shares_memory": {"z & x": True}}])),
    }
    return yaml.safe_dump({"cases": [case]}, sort_keys=False, allow_unicode=draw(st.booleans()))


@BUDGET
@given(cases_with_generated_steps())
def test_generated_steps(text: str) -> None:
    note(text)
    result = load_text_and_file(text)
    if result is not None and result.cases:
        count("steps accepted")


# =========================================================================== 5. case-folder trees

import os  # noqa: E402

from hypothesis import HealthCheck  # noqa: E402

from conformance.load.folders import CODE as NOT_A_CASE_FILE  # noqa: E402
from conformance.load.folders import scan  # noqa: E402

# Trees are built on disk and collected by an in-process pytest run each: a tenth of the
# other properties' budget ("ci": 20 trees; "fuzz": 1,000).
TREE_BUDGET = settings(BUDGET, max_examples=max(1, BUDGET.max_examples // 10),
                       suppress_health_check=[*BUDGET.suppress_health_check, HealthCheck.function_scoped_fixture])
TREE_FOLDERS = ["", "f", "f/g", "h"]  # real folders under cases/ ("" is cases/ itself)
TREE_KINDS = ["case", "polyglot", "python", "conftest_link", "test_link", "file_link", "folder_link",
              "outside_link", "loop", "dangling", "self_link", "parent_link", "root_link", "device_link",
              "doctest", "other", "fifo"]
TREE_PAYLOAD = 'import pathlib\npathlib.Path(r"{sentinel}").touch()\n\n\ndef test_payload():\n    pass\n'
TREE_CASE = ('cases:\n  - id: fuzz.tree.{name}\n    title: a valid case\n    given: {{x: [1.0, 2.0]}}\n'
             '    steps: ["y = x.clone()"]\n    expect: {{values: {{y: [1.0, 2.0]}}}}\n')


def tree_polyglot(name: str, sentinel: Path, where: str) -> str:
    """A valid case file that is also a Python module creating ``sentinel`` when imported,
    the payload where ``where`` says (a plain scalar to YAML, an expression to Python)."""
    payload = f'__import__("pathlib").Path(r"{sentinel}").touch() or "x"'
    title = payload if where == "title" else '"a polyglot"'
    references = f"[{payload}]" if where == "references" else "[]"
    return (f'{{"cases": [{{"id": "fuzz.tree.{name}", "title": {title}, "given": {{"x": [1.0]}}, '
            f'"steps": ["y = x.clone()"], "expect": {{"values": {{"y": [1.0]}}}}, "references": {references}}}]}}\n')


@dataclass
class CaseTree:
    root: Path
    refused: list[str]  # entries refused, relative to root ("cases/...")
    case_ids: set[str]  # the ids of the valid cases


def build_tree(root: Path, entries: list[tuple[str, str, str]]) -> CaseTree:
    """Write ``entries`` ((folder, kind, payload position)) under root/cases; payloads write
    to root/sentinels; root/outside holds a test module with a payload."""
    cases, sentinels, outside = root / "cases", root / "sentinels", root / "outside"
    for folder in [cases, sentinels, outside]:
        folder.mkdir(parents=True)
    (outside / "test_outside.py").write_text(TREE_PAYLOAD.format(sentinel=sentinels / "outside"))
    (root / "pytest.ini").write_text("[pytest]\nconformance_paths = cases\n")
    tree = CaseTree(root, [], set())
    polyglots: list[Path] = []
    for i, (folder, kind, where) in enumerate(entries):
        here = cases / folder
        here.mkdir(parents=True, exist_ok=True)
        name = f"e{i}"
        made = []
        if kind == "case":
            (here / f"{name}.yml").write_text(TREE_CASE.format(name=name))
            tree.case_ids.add(f"fuzz.tree.{name}")
        elif kind == "polyglot":
            polyglots.append(here / f"{name}.yaml")
            polyglots[-1].write_text(tree_polyglot(name, sentinels / name, where))
            tree.case_ids.add(f"fuzz.tree.{name}")
        elif kind == "python":
            target = here / ({"title": "conftest.py", "references": "__init__.py"}.get(where) or f"test_{name}.py")
            if not os.path.lexists(target):
                target.write_text(TREE_PAYLOAD.format(sentinel=sentinels / name))
                made.append(target)
        elif kind in ("conftest_link", "test_link", "file_link", "device_link"):
            link = here / {"conftest_link": "conftest.py", "test_link": f"test_{name}.py"}.get(kind, f"{name}.yaml")
            target = "/dev/null" if kind == "device_link" else str(polyglots[-1]) if polyglots else "missing.yaml"
            if not os.path.lexists(link):
                link.symlink_to(target)
                made.append(link)
        elif kind in ("folder_link", "outside_link", "dangling", "self_link", "parent_link", "root_link"):
            target = {"folder_link": str(cases), "outside_link": str(outside), "dangling": "missing",
                      "self_link": name, "parent_link": "..", "root_link": "/"}[kind]
            (here / name).symlink_to(target)
            made.append(here / name)
        elif kind == "loop":
            (here / f"{name}a").symlink_to(f"{name}b")
            (here / f"{name}b").symlink_to(f"{name}a")
            made += [here / f"{name}a", here / f"{name}b"]
        elif kind == "doctest":
            (here / f"test_{name}.txt").write_text(f'>>> import pathlib; pathlib.Path(r"{sentinels / name}").touch()\n')
            made.append(here / f"test_{name}.txt")
        elif kind == "other":
            (here / f"{name}.json").write_text("{}\n")
            made.append(here / f"{name}.json")
        else:  # fifo
            os.mkfifo(here / f"{name}.yaml")
            made.append(here / f"{name}.yaml")
        tree.refused += [str(p.relative_to(root)) for p in made]
    return tree


tree_entries = st.lists(st.tuples(st.sampled_from(TREE_FOLDERS), st.sampled_from(TREE_KINDS),
                                  st.sampled_from(["title", "references", "none"])), min_size=1, max_size=12)


@TREE_BUDGET
@given(tree_entries)
def test_case_folder_trees(pytester: pytest.Pytester, entries: list[tuple[str, str, str]]) -> None:
    """Whatever a case folder holds, lint and collection finish, run no payload, refuse
    each entry that is not a case file or a real folder exactly once (CF010 at line 1), and
    keep every valid case."""
    note(repr(entries))
    root = Path(tempfile.mkdtemp(dir=pytester.path))
    tree = build_tree(root, entries)
    with time_limit(HANG_SECONDS):
        findings = lint_paths([root / "cases"], VOCAB)
        files, _ = scan([root / "cases"])
    assert sorted((f.code, f.location.file, f.location.line) for f in findings) == \
        sorted((NOT_A_CASE_FILE, str(root / entry), 1) for entry in tree.refused)
    assert len(files) == len(tree.case_ids)
    with time_limit(HANG_SECONDS * 3):
        result = pytester.runpytest("-c", str(root / "pytest.ini"), "--rootdir", str(root), str(root / "cases"),
                                    "--collect-only", "-q", "-p", "no:cacheprovider")
    assert result.ret == (pytest.ExitCode.OK if tree.refused or tree.case_ids else pytest.ExitCode.NO_TESTS_COLLECTED)
    nodeids = [line for line in result.outlines if "::" in line]
    refused = [nodeid.split("::")[0] for nodeid in nodeids if nodeid.endswith("[refused]")]
    assert sorted(refused) == sorted(tree.refused)  # each exactly once
    collected = {nodeid.split("::")[1].rpartition("[")[0] for nodeid in nodeids if nodeid.endswith("[numpy]")}
    assert collected == tree.case_ids
    assert sorted(p.name for p in (root / "sentinels").iterdir()) == []
    count(f"{len(tree.refused)} refused")
