"""Every rule a case file can break, each defined once: its code, its name and what it
catches. The loader raises a :class:`~conformance.source.CaseFormatError` carrying the rule's
code as it reads; ``conformance lint`` (conformance.tools.lint) runs the checks that need a
whole case or the whole corpus, prints each finding as ``path:line:col: CODE message`` and
lists the rules (``conformance lint --rules``). A new rule is one constant here, added to
:data:`RULES`, and the check that raises it; ``tests/test_lint.py`` needs a fixture for it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    code: str  # CF and three digits: what a finding prints and a fixture names
    name: str  # a few words, hyphenated
    summary: str  # what it catches


INVALID_FORMAT = Rule("CF000", "invalid-format",
                      "the file is not a valid case file: YAML syntax, unknown keys, wrong types")
DUPLICATE_ID = Rule("CF001", "duplicate-id", "two cases share an id, in one file or across files")
UNDEFINED_NAME = Rule("CF002", "undefined-name",
                      "a step or an expectation uses a name no input or earlier step defines")
UNUSED_INPUT = Rule("CF003", "unused-input", "an input under 'given' is never used by a step or an expectation")
UNKNOWN_OPERATION = Rule("CF004", "unknown-operation", "a step calls an operation no adapter defines")
UNKNOWN_FRAMEWORK = Rule("CF005", "unknown-framework",
                         "a per-framework override names a framework the suite does not know")
OVERRIDE_IDENTICAL = Rule("CF006", "override-identical",
                          "a per-framework override expects exactly what the case already expects")
UNKNOWN_CLAIM = Rule("CF007", "unknown-claim", "'claims' names a claim ID that is not in the claims list")
MISSING_REASON = Rule("CF008", "missing-reason", "a per-framework override does not say why the framework differs")
EMPTY_EXPECT = Rule("CF009", "empty-expect", "the case expects nothing, so it can never fail")
NOT_A_CASE_FILE = Rule("CF010", "not-a-case-file",
                       "a case folder holds something other than *.yaml case files and real folders: a link, a "
                       "Python or other file, a pipe or device")
UNKNOWN_STRING = Rule("CF011", "unknown-string",
                      "a step passes a string that is not a dtype, a device or a name an adapter declares")
TODO_REASON = Rule("CF012", "todo-reason",
                   "a per-framework override's reason still says TODO (observe's placeholder)")
UNKNOWN_EXCEPTION_TYPE = Rule("CF013", "unknown-exception-type",
                              "an expected error names an exception type its framework cannot raise: neither a "
                              "Python builtin nor one the framework's adapter declares")
UNVERSIONED_TWICE = Rule("CF020", "unversioned-twice",
                         "a framework's list of overrides has more than one without 'versions'")
BAD_VERSIONS = Rule("CF021", "bad-versions", "an override's 'versions' is not a PEP 440 version specifier set")

# code -> rule, in code order
RULES: dict[str, Rule] = {rule.code: rule for rule in (
    INVALID_FORMAT, DUPLICATE_ID, UNDEFINED_NAME, UNUSED_INPUT, UNKNOWN_OPERATION, UNKNOWN_FRAMEWORK,
    OVERRIDE_IDENTICAL, UNKNOWN_CLAIM, MISSING_REASON, EMPTY_EXPECT, NOT_A_CASE_FILE, UNKNOWN_STRING, TODO_REASON,
    UNKNOWN_EXCEPTION_TYPE, UNVERSIONED_TWICE, BAD_VERSIONS)}
