"""What a step raises or warns: ``error`` and ``warning``, each about the case as a whole
(replaced whole by an override, ``null`` for none)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Collection, Mapping, Sequence

from conformance import rules
from conformance.kinds.base import ERRORS, WARNINGS, Checking, ParseContext, WholeKind
from conformance.model import ERROR_KINDS, ResultKey
from conformance.source import CaseFormatError, Location, raise_all, split
from conformance.yamlvalues import fields


@dataclass(frozen=True)
class ErrorDetail:
    """Per-framework detail of an expected error: exception type name and message regex."""

    type: str | None = None
    match: str | None = None


@dataclass(frozen=True)
class ErrorExpectation:
    at: int  # step number
    kind: str
    details: Mapping[str, ErrorDetail] = field(default_factory=dict)
    location: Location | None = None


@dataclass(frozen=True)
class WarningExpectation:
    at: int
    match: str
    location: Location | None = None


STEP_REF_SCHEMA: dict[str, Any] = {
    "description": "A step: its number (from 1, in the order steps run) or its exact text.",
    "anyOf": [{"type": "integer", "minimum": 1}, {"type": "string"}],
}


class ExpectedError(WholeKind):
    """The step that raises, with the neutral kind of its exception (the adapter's
    ``classify_error``) and, per framework, the exception's type and a message regex. Checked
    in every case: a step that raises when no error is expected fails it."""

    name = "error"
    description = ("The step that raises, the neutral kind, and optionally per framework the exception type and a "
                   "message regex. null: no error (in an override, removes the shared expected error).")
    phase = ERRORS
    always_checked = True
    value_types = (ErrorExpectation, ErrorDetail)
    observe_order = 10

    def parse_value(self, raw: Any, loc: Location, ctx: ParseContext) -> Any:
        m = fields.mapping(raw, loc, "'error'")
        errors: list[CaseFormatError] = []  # at, kind and each framework's detail on their own
        unknown = fields.unknown_keys(m, ("at", "kind") + tuple(ctx.frameworks), "'error'", errors)
        for key in ("at", "kind"):
            if key not in m and not unknown:
                errors.append(CaseFormatError(m.location, f"'error' needs {key!r}",
                                              "e.g. error: {at: 3, kind: inplace_on_leaf}"))
        at = 0
        if "at" in m:
            try:
                at = fields.step_ref(m["at"], m.where("at"), ctx.steps, "'error.at'")
            except CaseFormatError as exc:
                errors += split(exc)
        kind = m.get("kind", "")
        if "kind" in m and (not isinstance(kind, str) or kind not in ERROR_KINDS):
            errors.append(CaseFormatError(m.where("kind"), f"unknown error kind {kind!r}",
                                          fields.did_you_mean(str(kind), ERROR_KINDS) or
                                          f"kinds: {', '.join(ERROR_KINDS)}"))
        details = {}
        for fw in ctx.frameworks:
            if fw in m:
                try:
                    details[fw] = self.detail(m, fw, ctx)
                except CaseFormatError as exc:
                    errors += split(exc)
        if errors:
            raise_all(errors)
        return ErrorExpectation(at=at, kind=kind, details=details, location=loc)

    def detail(self, m: Any, fw: str, ctx: ParseContext) -> ErrorDetail:
        """``{type, match}`` of one framework: a type name it can raise, a regex; both are
        checked, each on its own."""
        d = fields.mapping(m[fw], m.where(fw), f"'error.{fw}'")
        fields.keys(d, ("type", "match"), f"'error.{fw}'")
        errors: list[CaseFormatError] = []
        name = d.get("type")
        if name is not None:
            if not isinstance(name, str):
                errors.append(CaseFormatError(d.where("type"), f"'error.{fw}.type' must be an exception type name, "
                                              f"got {fields.kind_of(name)}", "e.g. type: RuntimeError"))
            else:
                known = ctx.exception_types.get(fw) if ctx.exception_types is not None else None
                if known is not None and name not in known:
                    errors.append(unknown_exception_type(name, fw, known, d.where("type")))
        match = d.get("match")
        if match is not None:
            try:
                fields.regex(match, d.where("match"))
            except CaseFormatError as exc:
                errors.append(exc)
        if errors:
            raise_all(errors)
        return ErrorDetail(type=name, match=match)

    def check(self, expected: Any, run: Checking) -> None:
        failed, key = run.failed, self.key()
        if expected is None:
            if failed is not None:
                e = failed.error
                run.miss(f"step {failed.number} raised", "no error", f"{e.type}: {e.message}",
                         detail=f"error kind: {e.kind}", step=failed.number, location=failed.location)
            return
        wanted = f"{expected.kind} at step {expected.at}"
        run.record(key, None if failed is None else {"at": failed.number, "kind": failed.error.kind,
                                                     "type": failed.error.type, "message": failed.error.message})
        if failed is None:
            run.miss("error", wanted, "no error: every step completed", key)
            return
        e = failed.error
        if failed.number != expected.at or e.kind != expected.kind:
            # an error the case wrote as 'other' that the adapter now names: the suite learned
            # the message since, not a change of the framework's (docs/case-format-changes.md)
            learned = ("the adapter now names this error's kind: write kind: " + e.kind +
                       " (docs/case-format-changes.md)") if expected.kind == "other" and \
                failed.number == expected.at else ""
            run.miss("error", wanted, f"{e.kind} at step {failed.number} ({e.type}: {e.message})", key,
                     step=failed.number, detail=learned)
            return
        detail = expected.details.get(run.adapter.name)
        if detail is not None:
            if detail.type and detail.type not in (e.type, e.type.rsplit(".", 1)[-1]):
                run.miss("error type", detail.type, e.type, key, detail=e.message)
            if detail.match and not re.search(detail.match, e.message):
                run.miss("error message", f"matching /{detail.match}/", e.message, key)

    def schema(self, frameworks: Sequence[str]) -> tuple[dict[str, Any], dict[str, Any]]:
        defs = {
            "stepRef": STEP_REF_SCHEMA,
            "errorKind": {
                "description": ("A framework-neutral error kind; each adapter maps its framework's exceptions "
                                "onto these."),
                "enum": list(ERROR_KINDS),
            },
            "error": {
                "description": "An expected error: at (step), kind, and optionally per framework {type, match}.",
                "type": "object",
                "required": ["at", "kind"],
                "additionalProperties": False,
                "properties": {"at": {"$ref": "#/$defs/stepRef"}, "kind": {"$ref": "#/$defs/errorKind"},
                               **{fw: {"$ref": "#/$defs/errorDetail"} for fw in frameworks}},
            },
            "errorDetail": {
                "description": "On this framework: the exception's type name and a regex its message must match.",
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "type": {"description": "The exception class name, e.g. RuntimeError.", "type": ["string", "null"]},
                    "match": {"description": "A regular expression searched in the exception message.",
                              "anyOf": [{"type": "null"}, {"type": "string", "format": "regex"}]},
                },
            },
        }
        return {"description": self.description, "anyOf": [{"type": "null"}, {"$ref": "#/$defs/error"}]}, defs

    def yaml_lines(self, entries: Sequence[tuple[ResultKey, Any]]) -> list[str]:
        """``error: {at, kind}`` with, per framework that raised it, its type and a regex for
        the start of its message; ``null`` for none."""
        ((_, error),) = entries
        if error is None:
            return ["error: null"]
        out = ["error:", f"  at: {error['at']}", f"  kind: {error['kind']}"]
        for fw, e in error.items():
            if isinstance(e, dict):
                match = message_pattern(e["message"])
                out.append(f"  {fw}: {{type: {e['type'].rsplit('.', 1)[-1]}, match: {json.dumps(match)}}}")
        return out


def unknown_exception_type(name: str, fw: str, known: Collection[str], loc: Location) -> CaseFormatError:
    """An ``error.<fw>.type`` that names no exception ``fw`` can raise: neither one of
    Python's builtin exceptions nor one its adapter declares (``exception_types``)."""
    hint = fields.did_you_mean(name, known) or (
        f"name the exception's class as {fw} raises it: a Python builtin such as RuntimeError or ValueError, or "
        f"one of {fw}'s own (its adapter's exception_types); run `conformance observe` to see what a step raises")
    return CaseFormatError(loc, f"'error.{fw}.type': unknown exception type {name!r}: neither a Python builtin "
                                f"exception nor one {fw} defines", hint, code=rules.UNKNOWN_EXCEPTION_TYPE.code)


REGEX_SPECIAL = re.compile(r"([.^$*+?{}\[\]\\|()])")


def message_pattern(message: str) -> str:
    """A regex for the start of an error message: its first line, cut at a word, escaped."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    if len(first) > 60:
        first = first[:60].rsplit(" ", 1)[0]
    return REGEX_SPECIAL.sub(r"\\\1", first)


class ExpectedWarning(WholeKind):
    """A warning a step emits, whose ``Category: message`` matches a regex."""

    name = "warning"
    description = ("The step that emits a warning whose 'Category: message' matches the regex. null: none (in an "
                   "override, removes the shared expected warning).")
    phase = WARNINGS
    value_types = (WarningExpectation,)
    observe_order = 11

    def parse_value(self, raw: Any, loc: Location, ctx: ParseContext) -> Any:
        m = fields.mapping(raw, loc, "'warning'")
        fields.keys(m, ("at", "match"), "'warning'")
        if "at" not in m or "match" not in m:
            raise CaseFormatError(m.location, "'warning' needs 'at' and 'match'",
                                  "e.g. warning: {at: 2, match: deprecated}")
        fields.regex(m["match"], m.where("match"))
        return WarningExpectation(at=fields.step_ref(m["at"], m.where("at"), ctx.steps, "'warning.at'"),
                                  match=m["match"], location=loc)

    def check(self, expected: Any, run: Checking) -> None:
        if expected is None:
            return
        record, key = run.steps[expected.at - 1], self.key()
        run.record(key, record.warnings)
        if not any(re.search(expected.match, w) for w in record.warnings):
            run.miss("warning", f"a warning matching /{expected.match}/ at step {expected.at}",
                     record.warnings or "no warning", key)

    def schema(self, frameworks: Sequence[str]) -> tuple[dict[str, Any], dict[str, Any]]:
        defs = {
            "stepRef": STEP_REF_SCHEMA,
            "warning": {
                "description": "An expected warning: at (step) and match (regex on 'Category: message').",
                "type": "object",
                "required": ["at", "match"],
                "additionalProperties": False,
                "properties": {
                    "at": {"$ref": "#/$defs/stepRef"},
                    "match": {"description": "A regular expression searched in 'Category: message'.", "type": "string",
                              "format": "regex"},
                },
            },
        }
        return {"description": self.description, "anyOf": [{"type": "null"}, {"$ref": "#/$defs/warning"}]}, defs

    def yaml_lines(self, entries: Sequence[tuple[ResultKey, Any]]) -> list[str]:
        """``warning: {at, match}`` with a regex for the start of the warning's
        ``Category: message`` (as an error's message gets); ``null`` for none."""
        ((_, warning),) = entries
        if warning is None:
            return ["warning: null"]
        return [f"warning: {{at: {warning['at']}, match: {json.dumps(message_pattern(warning['message']))}}}"]
