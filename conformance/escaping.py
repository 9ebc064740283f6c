"""Case text and framework messages on their way out: to a terminal or CI log, and into the
Markdown report. One rule per output, used everywhere such text is written.

Case files are contributed (docs/security.md), and framework messages can hold anything,
so neither may be taken as markup or as a command by what shows it:

- :func:`for_terminal`: a CI log runs some lines as commands. GitHub's runner
  (actions/runner, ``src/Runner.Common/ActionCommand.cs``) reads each line
  (``StreamReader.ReadLine``: ``\\n``, ``\\r`` and ``\\r\\n`` end a line) and runs it as a
  command when, after ``TrimStart()``, it starts with ``::`` and has a second ``::``
  (``::error::``, ``::add-mask::``, ``::stop-commands::``), or when it holds ``##[`` anywhere
  followed by a registered command name and ``]`` (the old form). Azure Pipelines' agent runs
  ``##vso[`` anywhere in a line. Terminals act on control characters (ESC sequences move the
  cursor, rewrite the title, hide text).
- :func:`for_markdown`: GitHub-flavoured Markdown turns ``[text](url)`` into a link whose
  text need not be its address, ``![x](url)`` into an image fetched when the page is shown,
  ``__name__`` into bold, ``<tag>`` into HTML and ``|`` into a new table cell.

HTML is escaped where it is written (the behaviour report's page, ``conformance.report.html``,
uses ``html.escape`` on every text).
"""

from __future__ import annotations

import re
import unicodedata

# Characters a terminal or a log reader acts on, or does not show: C0 controls, DEL, C1
# controls (category Cc), format characters (Cf: bidi overrides, zero-width characters, the
# BOM, the soft hyphen), and the Unicode line and paragraph separators (Zl, Zp).
_HIDDEN_CATEGORIES = frozenset(("Cc", "Cf", "Zl", "Zp", "Cs"))
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# a fast check: text made of these alone needs nothing done for a terminal
_PLAIN = re.compile(r"[\n\t\x20-\x7e]*")
# neutralised by writing their first character as an escape: ::command:: at the start of
# a line (after blanks), and ##[ / ##vso[ anywhere (case-insensitive, as the agents compare
# command names)
_LOG_COMMAND_ANYWHERE = re.compile(r"#(?=#(?:vso)?\[)", re.IGNORECASE)


def escape_char(ch: str) -> str:
    """``\\x1b``, ``\\r``, ``\\u202e``: a character written out as text."""
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def is_hidden(ch: str) -> bool:
    """A control, format or line-separator character (escaped on every output)."""
    return unicodedata.category(ch) in _HIDDEN_CATEGORIES


def escape_hidden(text: str, keep: str = "") -> str:
    """Every hidden character (see :func:`is_hidden`) but those in ``keep`` as its escape."""
    return "".join(escape_char(c) if c not in keep and is_hidden(c) else c for c in text)


def for_terminal(text: str, *, multiline: bool = True) -> str:
    """``text`` safe to print on a terminal or into a CI log.

    Control and invisible characters are written as escapes (``\\x1b``, ``\\r``,
    ``\\u202e``); line feeds are kept when ``multiline`` (tabs too), else escaped. A line
    whose first visible characters are ``::`` gets its first ``:`` written as ``\\x3a``,
    and the first ``#`` of every ``##[`` or ``##vso[`` is written as ``\\x23``, so that no
    CI runner takes the line for a workflow command. Applying it twice changes nothing more.
    """
    text = str(text)
    keep = "\n\t" if multiline else ""
    if _PLAIN.fullmatch(text) and (multiline or not ("\n" in text or "\t" in text)) \
            and "::" not in text and "#" not in text:
        return text
    text = escape_hidden(text, keep)
    text = _LOG_COMMAND_ANYWHERE.sub(r"\\x23", text)
    return "\n".join(_neutralise_line_start(line) for line in text.split("\n"))


def _neutralise_line_start(line: str) -> str:
    stripped = line.lstrip()  # str.isspace covers .NET's char.IsWhiteSpace (TrimStart)
    # combining marks between the colons could be ignored by a culture-aware comparison
    visible = "".join(c for c in stripped[:16] if unicodedata.category(c) not in ("Mn", "Me"))
    if visible.startswith("::"):
        at = line.index(":", len(line) - len(stripped))
        return line[:at] + "\\x3a" + line[at + 1:]
    return line


# ---- Markdown (GitHub-flavoured, as the committed reports/behaviour.md is read)

# Backslash-escaped wherever they appear: every character that starts or ends inline markup
# in GFM (emphasis, strikethrough, code, links and images, table cells, GitHub's $math$) and
# the heading mark. < > & are written as entities (raw HTML, autolinks, entity references).
# "_" is the exception: a run of underscores between two letters or digits can neither open
# nor close emphasis (CommonMark's intraword rule for "_"), so requires_grad stays as it is
# and only __iadd__'s are escaped.
_MARKDOWN_SPECIAL = frozenset("\\`*[]#!|~$")
_UNDERSCORES = re.compile(r"_+")
# ... and at the start of the text, what would begin a list item or a setext underline
_MARKDOWN_LINE_START = re.compile(r"\s*(?:\d{1,9}[.)]|[-+=])")
_MARKDOWN_ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}
# an address in running text: shown as it is written and clickable, as a CommonMark
# autolink <...> (inside which nothing is markup). Characters GFM would not take as part of
# an address (blanks, < > | \ ` ") end it; trailing punctuation is not part of it, nor a
# closing parenthesis without its opening one. An underscore stays: addresses end in one
# (an anchor such as #__getitem__) far more often than a sentence does.
_URL = re.compile(r"https?://[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")
_URL_TRAILING = ".,:;!?'*~"


def for_markdown(text: str, *, line_start: bool = False) -> str:
    """``text`` as Markdown that GitHub shows exactly as written, on one line.

    Line breaks and other control or invisible characters are written as escapes (as in
    :func:`for_terminal`), ``< > &`` as entities, and every other ASCII punctuation character
    that can make markup (``\\ ` * _ [ ] # ! | ~`` and the rest) with a backslash. An
    ``http://`` or ``https://`` address is written as an autolink ``<address>``: it stays
    clickable, and what is shown is where it goes. ``line_start``: the text begins a line or
    a list item, where ``1.``, ``-``, ``+`` and ``=`` would start a list or a heading: that
    mark is escaped too."""
    out: list[str] = []
    at = 0
    for match in _URL.finditer(text):
        url = _trim_url(match.group())
        if not url:
            continue
        out.append(_markdown_text(text[at:match.start()], start=line_start and not at))
        out.append(f"<{url}>")
        at = match.start() + len(url)
    out.append(_markdown_text(text[at:], start=line_start and not at))
    return "".join(out)


def split_addresses(text: str) -> list[tuple[bool, str]]:
    """``text`` as ``[(is_address, part)]``: each ``http(s)://`` address in running text (as
    :func:`for_markdown` finds it) and the text between, in order."""
    out: list[tuple[bool, str]] = []
    at = 0
    for match in _URL.finditer(text):
        url = _trim_url(match.group())
        if not url:
            continue
        if match.start() > at:
            out.append((False, text[at:match.start()]))
        out.append((True, url))
        at = match.start() + len(url)
    if at < len(text):
        out.append((False, text[at:]))
    return out


def _trim_url(url: str) -> str:
    while url and (url[-1] in _URL_TRAILING or (url[-1] == ")" and url.count(")") > url.count("("))):
        url = url[:-1]
    scheme_end = url.index("://") + 3 if "://" in url else len(url)
    return url if len(url) > scheme_end else ""


def _markdown_text(text: str, start: bool = False) -> str:
    text = escape_hidden(text)
    loose = {i for m in _UNDERSCORES.finditer(text) if not _inside_a_word(text, m.start(), m.end())
             for i in range(m.start(), m.end())}
    text = "".join(_MARKDOWN_ENTITIES.get(c) or ("\\" + c if c in _MARKDOWN_SPECIAL or i in loose else c)
                   for i, c in enumerate(text))
    if start:  # four blanks at the start of a line begin a code block
        text = text.lstrip()
    marker = _MARKDOWN_LINE_START.match(text) if start else None
    if marker:  # "1." -> "1\.", "- x" -> "\- x": the marker's last character escaped
        text = text[:marker.end() - 1] + "\\" + text[marker.end() - 1:]
    return text


def _inside_a_word(text: str, start: int, end: int) -> bool:
    return start > 0 and end < len(text) and text[start - 1].isalnum() and text[end].isalnum()


def markdown_code(text: str, *, in_table: bool = True) -> str:
    """``text`` as an inline code span (shown literally, in a monospaced font): fenced with
    more backticks than any run inside it; ``|`` escaped inside a table, where GFM splits
    cells before it reads code spans."""
    text = escape_hidden(" ".join(str(text).split()))
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    if text.startswith("`") or text.endswith("`") or (text.startswith(" ") and text.endswith(" ") and text.strip()):
        text = f" {text} "
    if in_table:
        text = text.replace("|", "\\|")
    return f"{fence}{text}{fence}" if text else "` `"


_URL_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#@!$&+,;=%")


def markdown_url(url: str) -> str:
    """``url`` as a Markdown link destination: every character that could end the
    destination or start markup (blanks, parentheses, brackets, quotes, ``< > | \\ *`` and
    anything not ASCII) percent-encoded."""
    return "".join(c if c in _URL_SAFE else "".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass"))
                   for c in str(url))
