"""What a YAML syntax error in a case file is, where it is written, and how to fix it.

libyaml reports where it could not go on, which is often past the mistake: the line after
a key that lost the space after its ':', the end of the file for a quote never closed, the
colon of a key indented one space too far. :func:`explain` looks at the text around that
place for the mistakes case writers make (a tab, a key or list item indented differently
from the ones it belongs with, no space after ':' or '-', a quote or bracket never closed,
a second ': ' on one line, a '- ' among keys or a key among items, a character YAML
reserves), and says which it is, where it is written and how to fix it.

Each guess that is not certain from the text alone is tried before it is said: the fix it
implies is applied to a copy of the text, and the guess stands only if libyaml then gets
past the line where it stopped. Nothing here runs for a valid file; a syntax error costs a
few more parses of the file (at most :data:`MAX_TRIALS`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import yaml

MAX_TRIALS = 12  # parses of a repaired copy per syntax error
_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")  # what YAML counts as a line break
# a block mapping key at the start of a line's content ('title: t', '- id: a.b'): (indent)(dashes)(key)
_KEY_LINE = re.compile(r"( *)((?:- +)*)([^\s#'\"\[\]{}:-][^:#]*?) *:(?: |$)")
# a word glued to its value by ':' ('title:t', 'x:[1.0]'); not 'http://', not '::'
_GLUED_COLON = re.compile(r"( *)((?:- +)*)([A-Za-z_][\w.&-]*):(?=[^\s:/])")
# a '-' glued to its item ('-y = x'), not a negative number or '---'
_GLUED_DASH = re.compile(r"( *)-(?=[^\s\d.-])")
_CLOSERS = {"[": "]", "{": "}"}
_RESERVED = "@`%"  # characters that cannot start a plain YAML value


@dataclass(frozen=True)
class Explained:
    """A syntax error as a case writer reads it: where (1-based), what, how to fix it."""

    line: int
    column: int
    message: str
    hint: str


@dataclass(frozen=True)
class _Line:
    """One line of the file as far as block structure goes."""

    index: int  # 0-based
    text: str
    indent: int  # leading spaces
    dashes: tuple[int, ...]  # the columns (0-based) of the '- ' indicators it starts with
    key: str | None  # the mapping key it holds, after its dashes
    key_column: int | None
    value_column: int  # where its value starts: after 'key: ', after its dashes, or its indentation

    @property
    def blank(self) -> bool:
        stripped = self.text.strip()
        return not stripped or stripped.startswith("#")


def _read_line(index: int, text: str) -> _Line:
    indent = len(text) - len(text.lstrip(" "))
    dashes: list[int] = []
    column = indent
    while text.startswith("- ", column) or text[column:].rstrip() == "-":
        dashes.append(column)
        column += 1
        while text.startswith(" ", column):
            column += 1
    key_match = _KEY_LINE.match(text)
    if key_match:
        value = key_match.end()
        while text.startswith(" ", value):
            value += 1
        return _Line(index, text, indent, tuple(dashes), key_match.group(3).strip(), key_match.start(3), value)
    return _Line(index, text, indent, tuple(dashes), None, None, column)


class _Source:
    """The file's lines, the place libyaml stopped, and trials of repaired copies."""

    def __init__(self, text: str, stop: tuple[int, int], parser: Callable[[str], Any]) -> None:
        self.lines = _BREAK.split(text)
        self.stop = stop  # (line, column), 0-based
        self.parser = parser
        self.trials = 0

    def line(self, index: int) -> _Line | None:
        return _read_line(index, self.lines[index]) if 0 <= index < len(self.lines) else None

    def text(self, line: int) -> str:
        """Line ``line`` (0-based), empty past the end (libyaml's end-of-file mark)."""
        return self.lines[line] if 0 <= line < len(self.lines) else ""

    def char(self, line: int, column: int) -> str:
        return self.text(line)[column:column + 1]

    def above(self, index: int) -> Iterator[_Line]:
        """The non-blank lines before line ``index``, nearest first."""
        for i in range(min(index, len(self.lines)) - 1, -1, -1):
            line = self.line(i)
            if line is not None and not line.blank:
                yield line

    def owners(self, index: int) -> list[tuple[int, str, _Line]]:
        """The block levels open at line ``index``: (column, "key" or "item", the line
        that opened it), nearest first: the keys and list items a line there may line up
        with (the lines above with less indentation than every line between)."""
        levels: list[tuple[int, str, _Line]] = []
        limit = None
        for line in self.above(index):
            if limit is not None and line.indent >= limit:
                continue
            if line.key_column is not None:
                levels.append((line.key_column, "key", line))
            levels += [(column, "item", line) for column in reversed(line.dashes)]
            limit = line.indent
            if limit == 0:
                break
        return levels

    def fixes(self, index: int, new: str) -> bool:
        """Whether line ``index`` written as ``new`` gets libyaml past where it stopped."""
        if self.trials >= MAX_TRIALS or not 0 <= index < len(self.lines):
            return False
        self.trials += 1
        lines = list(self.lines)
        lines[index] = new
        stop = _stops_at("\n".join(lines), self.parser)
        return stop is None or stop[0] > self.stop[0]


def _stops_at(text: str, parser_class: Callable[[str], Any]) -> tuple[int, int] | None:
    """Where libyaml stops on ``text`` with a syntax error (0-based), or None if it reads it."""
    try:
        parser = parser_class(text)
    except (yaml.YAMLError, UnicodeError):
        return (0, 0)
    try:
        while True:
            event = parser.get_event()
            if event is None or isinstance(event, yaml.StreamEndEvent):
                return None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        return (mark.line, mark.column) if mark else (0, 0)
    except (yaml.YAMLError, UnicodeError, RecursionError, MemoryError):
        return (0, 0)
    finally:
        parser.dispose()


def explain(text: str, error: yaml.MarkedYAMLError, parser: Callable[[str], Any]) -> Explained | None:
    """The mistake behind a syntax error, or None when it is none of those known here."""
    mark = error.problem_mark or error.context_mark
    if mark is None:
        return None
    source = _Source(text, (mark.line, mark.column), parser)
    context = error.context_mark if error.context_mark is not None and error.problem_mark is not None else None
    found = (_tab(source) or _quoted(source, error, context) or _flow(source, error, context) or
             _open_quote_above(source) or _glued(source, error, context) or _second_colon(source, error) or
             _after_quote(source) or _unmatched(source, context) or _reserved(source, error) or
             _structure(source, context))
    return found


def _at(line: int, column: int, message: str, hint: str) -> Explained:
    return Explained(line + 1, column + 1, "YAML syntax error: " + message, hint)


def _shown(text: str, limit: int = 40) -> str:
    text = text.strip()
    return repr(text if len(text) <= limit else text[:limit - 3] + "...")


# ---- certain from the text: a tab, a quoted string's own problem, a bracket's


def _tab(source: _Source) -> Explained | None:
    line, column = source.stop
    if source.char(line, column) != "\t":
        return None
    before = source.text(line)[:column]
    if not before.strip(" "):
        return _at(line, column, "a tab in the indentation: YAML indents with spaces only",
                   "replace the tab with spaces (editors: indent with spaces in YAML files)")
    after = before.rstrip(" ")[-1:]
    where = {"-": "after '-'", ":": "after ':'", ",": "after ','"}.get(after, "here")
    return _at(line, column, f"a tab {where}: YAML separates with spaces, and allows tabs only inside quoted text",
               "replace the tab with a space")


def _quoted(source: _Source, error: yaml.MarkedYAMLError, context: Any) -> Explained | None:
    if context is None or "quoted scalar" not in str(error.context):
        return None
    line, column = source.stop
    problem = str(error.problem)
    if problem.startswith("found unknown escape character"):
        escape = source.text(line)[column:column + 2]
        return _at(line, column, f"'{escape}' is not an escape in a double-quoted string",
                   f"write the backslash twice ('\\{escape}'), or use single quotes, where a backslash is itself "
                   "(a regular expression: match: 'a\\d+')")
    quote = source.char(context.line, context.column)
    return _at(context.line, context.column, f"the string opened here with {quote} is never closed",
               f"close it with {quote} where the text ends, on this line")


def _flow(source: _Source, error: yaml.MarkedYAMLError, context: Any) -> Explained | None:
    """A '[' or '{' never closed, or closed by the other bracket; a second ':' inside."""
    if context is None or "flow" not in str(error.context):
        return None
    opener = source.char(context.line, context.column)
    closer = _CLOSERS.get(opener)
    if closer is None:
        return None
    line, column = source.stop
    char = source.char(line, column)
    if char in ("]", "}") and char != closer:
        return _at(line, column, f"{char!r} where the {opener!r} opened at column {context.column + 1} is still open",
                   f"close the {opener!r} with {closer!r} first")
    if char == ":" and line == context.line:
        return _at(line, column, f"a second ':' in one entry of {opener}...{closer}",
                   "put the value that holds ': ' in quotes")
    if line > context.line or line >= len(source.lines) - 1:
        text = source.text(context.line)
        end = len(text.split(" #", 1)[0].rstrip())
        if line > context.line and not source.fixes(context.line, text[:end] + closer + text[end:]):
            return None
        return _at(context.line, context.column, f"the {opener!r} opened here is never closed",
                   f"close it with {closer!r} (a list or mapping in brackets is best kept on one line)")
    return None


# ---- guesses, each tried on a repaired copy before it is said


def _open_quote_above(source: _Source) -> Explained | None:
    """A quoted value left open on an earlier line, which YAML read on into the lines
    below until the next quote of its kind."""
    for line in source.above(source.stop[0]):
        if line.index < source.stop[0] - 50:
            break
        column = line.value_column
        quote = line.text[column:column + 1]
        if quote not in ("'", '"') or _closed(line.text[column + 1:], quote):
            continue
        if source.fixes(line.index, line.text.rstrip() + quote):
            return _at(line.index, column, f"the string opened here with {quote} is not closed on its line, so YAML "
                                           f"read on into the lines below",
                       f"close it with {quote} at the end of the text")
    return None


def _closed(rest: str, quote: str) -> bool:
    if quote == "'":
        return "'" in rest.replace("''", "")
    return re.search(r'(?<!\\)(?:\\\\)*"', rest) is not None


def _region(source: _Source, context: Any) -> list[int]:
    """The lines a mistake behind the error may be on: where libyaml stopped and the line
    before it, and where what it was reading began."""
    stop = source.stop[0]
    lines = [stop, *[line.index for line in source.above(stop)][:1]]
    if context is not None and context.line not in lines:
        lines.append(context.line)
    return [i for i in lines if 0 <= i < len(source.lines)]


def _glued(source: _Source, error: yaml.MarkedYAMLError, context: Any) -> Explained | None:
    """No space after a key's ':' or after a list item's '-'. Certain on the line of the
    key libyaml was reading when it found no ':' ('while scanning a simple key'), tried
    anywhere else."""
    key_line = context.line if context is not None and "simple key" in str(error.context) else None
    line, column = source.stop
    text = source.text(line)
    if source.char(line, column) == ":" and text[column + 1:column + 2] not in ("", " ") and \
            source.fixes(line, text[:column + 1] + " " + text[column + 1:]):  # '{y:[1.0]}'
        word = re.search(r"[^\s{\[,]*$", text[:column])
        key, value = text[word.start() if word else column:column], _flow_value(text[column + 1:])
        return _at(line, column, f"no space after ':' in {_shown(key + ':' + value)}: YAML reads it as one text, not a "
                                 "key and its value", f"write '{key}: {value}'")
    for index in _region(source, context):
        text = source.text(index)
        colon = _GLUED_COLON.match(text)
        if colon and (index == key_line or source.fixes(index, text[:colon.end()] + " " + text[colon.end():])):
            key, value = colon.group(3), text[colon.end():].strip()
            return _at(index, colon.end() - 1, f"no space after ':' in {_shown(key + ':' + value)}: YAML reads it as "
                                               "one text, not a key and its value",
                       f"write '{key}: {value[:40]}'")
        dash = _GLUED_DASH.match(text)
        if dash and (index == key_line or source.fixes(index, text[:dash.end()] + " " + text[dash.end():])):
            item = text[dash.end():].strip()
            return _at(index, dash.end() - 1, f"no space after '-' in {_shown('-' + item)}: YAML reads it as text, "
                                              "not a list item",
                       f"write '- {item[:40]}'")
    return None


def _flow_value(text: str) -> str:
    """The value at the start of ``text`` inside a flow collection: up to its matching
    bracket, or to the next ',' or closing bracket."""
    depth = 0
    for i, char in enumerate(text):
        if char in "[{":
            depth += 1
        elif char in "]}":
            if depth == 0:
                return text[:i].strip()
            depth -= 1
            if depth == 0:
                return text[:i + 1].strip()
        elif char == "," and depth == 0:
            return text[:i].strip()
    return text.strip()


def _second_colon(source: _Source, error: yaml.MarkedYAMLError) -> Explained | None:
    """``key: value: more``: a second ': ' on the line of a key."""
    line, column = source.stop
    if "mapping values are not allowed" not in str(error.problem) or source.char(line, column) != ":":
        return None
    text = source.text(line)
    first = _KEY_LINE.match(text)
    if first is None or first.end() > column:
        return None
    value = text[first.end():].strip()
    if not source.fixes(line, text[:first.end()] + " " + _quote(value)):
        return None
    return _at(line, column, f"a second ': ' on the line of '{first.group(3).strip()}': YAML cannot read "
                             f"{_shown(value)} as one value",
               f"put the value in quotes ({first.group(3).strip()}: {_quote(value)}), or write a mapping it holds "
               "on the lines below, indented, or in braces ({data: [1.0]})")


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _after_quote(source: _Source) -> Explained | None:
    """``title: "t" more``: text after a quoted value's closing quote."""
    line, column = source.stop
    text = source.text(line)
    before = text[:column].rstrip()
    start = _read_line(line, text).value_column
    if not before or before[-1] not in ("'", '"') or text[start:start + 1] != before[-1] or start >= len(before) - 1:
        return None
    return _at(line, column, f"text after the closing {before[-1]} of a quoted value",
               "put the whole value inside the quotes")


def _unmatched(source: _Source, context: Any) -> Explained | None:
    """``x: [1.0, 2.0]]``: a closing bracket outside any brackets."""
    line, column = source.stop
    char = source.char(line, column)
    if char not in ("]", "}") or (context is not None and source.char(context.line, context.column) in _CLOSERS):
        return None
    opener = {"]": "[", "}": "{"}[char]
    return _at(line, column, f"{char!r} closes nothing: no {opener!r} is open here",
               f"remove it, or open the list or mapping it closes with {opener!r}")


def _reserved(source: _Source, error: yaml.MarkedYAMLError) -> Explained | None:
    """``title: @t``: a value starting with a character YAML reserves."""
    line, column = source.stop
    char = source.char(line, column)
    if "cannot start any token" not in str(error.problem) or char not in _RESERVED:
        return None
    text = source.text(line)
    if not source.fixes(line, text[:column] + _quote(text[column:].rstrip())):
        return None
    return _at(line, column, f"a value cannot start with {char!r} in YAML (it is reserved)",
               f"put the value in quotes: {_quote(text[column:].strip()[:40])}")


def _structure(source: _Source, context: Any) -> Explained | None:
    """A key or list item that lines up with nothing it can belong to, a '- ' among the
    keys of a mapping, a line among list items without its '- ', a line with no ':'."""
    for index in _region(source, context):
        line = source.line(index)
        if line is None or line.blank:
            continue
        found = _stray_dash(source, line) or _missing_dash(source, line) or _indentation(source, line) or \
            _no_colon(source, line)
        if found:
            return found
    return None


def _subject(line: _Line) -> str:
    if line.key is not None and not line.dashes:
        return f"'{line.key}'"
    return f"the list item {_shown(line.text, 30)}"


def _owner(kind: str, line: _Line) -> str:
    return f"'{line.key}'" if kind == "key" else "the list item"


def _indentation(source: _Source, line: _Line) -> Explained | None:
    kind = "item" if line.dashes else "key"
    levels = [(column, level_kind, owner) for column, level_kind, owner in source.owners(line.index)
              if column != line.indent and (level_kind == kind or kind == "item")]
    # the nearest line first (its keys and items are what a line most often belongs with), then
    # the nearest column
    for column, level_kind, owner in sorted(levels, key=lambda level: (-level[2].index, abs(level[0] - line.indent))):
        if not source.fixes(line.index, " " * column + line.text[line.indent:]):
            continue
        why = {("key", "key"): ": the keys of one mapping line up",
               ("item", "item"): ": the items of one list line up"}.get((kind, level_kind), "")
        return _at(line.index, line.indent, f"{_subject(line)} is indented {line.indent} spaces, but "
                                            f"{_owner(level_kind, owner)} above it (line {owner.index + 1}) is "
                                            f"indented {column}{why}",
                   f"indent it by {column} spaces, like {_owner(level_kind, owner)} on line {owner.index + 1}")
    return None


def _stray_dash(source: _Source, line: _Line) -> Explained | None:
    """``- w: [3.0]`` among the keys of a mapping."""
    if not line.dashes or line.key is None:
        return None
    for column, kind, owner in source.owners(line.index):
        if kind == "key" and column == line.indent and source.fixes(line.index, " " * line.indent +
                                                                    line.text[line.key_column:]):
            return _at(line.index, line.indent, f"a list item ('- ') among the keys of a mapping ('{owner.key}', "
                                                f"line {owner.index + 1})",
                       "remove the '- ' (the entry is a key of that mapping), or write every entry as a list item")
    return None


def _missing_dash(source: _Source, line: _Line) -> Explained | None:
    """A line among the items of a list without its '- '."""
    if line.dashes:
        return None
    for column, kind, owner in source.owners(line.index):
        if kind == "item" and column == line.indent and source.fixes(line.index, " " * line.indent + "- " +
                                                                     line.text[line.indent:]):
            return _at(line.index, line.indent, f"{_shown(line.text)} lines up with the list item on line "
                                                f"{owner.index + 1} but has no '- '",
                       "start it with '- ' (an item of that list), or indent it as what it belongs to")
    return None


def _no_colon(source: _Source, line: _Line) -> Explained | None:
    """``title t``: a line of a mapping with no ':' after its key."""
    if line.key is not None or line.dashes:
        return None
    words = line.text.strip().split(" ", 1)
    if len(words) != 2 or not re.fullmatch(r"[A-Za-z_]\w*", words[0]):
        return None
    if not source.fixes(line.index, " " * line.indent + f"{words[0]}: {words[1]}"):
        return None
    return _at(line.index, line.indent + len(words[0]), f"no ':' after '{words[0]}': a line of a mapping is "
                                                        "'key: value'",
               f"write '{words[0]}: {words[1].strip()[:40]}'")
