"""Where a value was written in a case file, and what is wrong there: shared by every
stage that reads case text (the YAML reader, the step parser, the case reader) and by what
reports on it. Imports nothing of the suite but the rules' list (conformance.rules)."""

from __future__ import annotations

from typing import NamedTuple

from conformance import rules


class Location(NamedTuple):
    """Where something was written: file, 1-based line and column. A named tuple, not a
    dataclass: the reader makes one for every value of every case file."""

    file: str
    line: int
    column: int = 1

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


class CaseFormatError(Exception):
    """A case file is not valid. Carries where, what, how to fix it, and the code of the
    rule it breaks (:data:`conformance.rules.RULES`; CF000 for the format itself)."""

    def __init__(self, location: Location, message: str, hint: str | None = None,
                 code: str = rules.INVALID_FORMAT.code) -> None:
        self.location = location
        self.message = message
        self.hint = hint
        self.code = code
        super().__init__(self.render())

    # the parts it travels as (conformance.codec: the case cache, the sandbox's messages)
    __codec_fields__ = ("location", "message", "hint", "code")

    def __reduce__(self) -> tuple:
        # pickled (the collection helper's messages) with its parts, not the rendered text
        return (type(self), (self.location, self.message, self.hint, self.code))

    def render(self) -> str:
        text = f"{self.location.file}:{self.location.line}:{self.location.column}: {self.message}"
        if self.hint:
            text += f"\n  fix: {self.hint}"
        return text


class CaseFormatErrors(CaseFormatError):
    """Several errors at once: every error of one case, or of one part of it that reads
    on past a mistake (an ``expect`` kind's entries, the keys of a mapping). ``errors``
    holds them in writing order; as a :class:`CaseFormatError` it is the first of them, so
    that a caller that wants one error has it. It never travels (the loader's results
    hold each error on its own): it has no codec fields."""

    def __init__(self, errors: list[CaseFormatError]) -> None:
        self.errors = [e for error in errors for e in split(error)]
        first = self.errors[0]
        super().__init__(first.location, first.message, first.hint, first.code)

    def __reduce__(self) -> tuple:
        return (type(self), (self.errors,))

    def render(self) -> str:
        return "\n".join(error.render() for error in self.errors)


def split(error: CaseFormatError) -> list[CaseFormatError]:
    """The single errors an error stands for (itself, or those of a :class:`CaseFormatErrors`)."""
    return error.errors if isinstance(error, CaseFormatErrors) else [error]


def raise_all(errors: list[CaseFormatError]) -> None:
    """Raise the errors collected (one as itself, several as :class:`CaseFormatErrors`), if any."""
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise CaseFormatErrors(errors)
