"""Case text and framework messages on their way out (conformance/escaping.py): no line of
terminal output is a CI workflow command or holds a control character, and the Markdown
report shows case text as written, checked with GitHub's own Markdown renderer
(cmarkgfm, the bindings to GitHub's fork of cmark); the HTML report escapes it.

The model of what a CI runner runs (:func:`runner_command`) follows the sources:
actions/runner ``src/Runner.Common/ActionCommand.cs`` (``TryParseV2``: ``TrimStart()``, then
``StartsWith("::")`` and a second ``::``; ``TryParse``: ``IndexOf("##[")`` anywhere, then
``]``), lines read with ``StreamReader.ReadLine`` (``\\n``, ``\\r``, ``\\r\\n``); Azure
Pipelines' agent: ``##vso[`` anywhere in a line.
"""

from __future__ import annotations

import html.parser
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from entry_points import TESTS, register, subprocess_env
from results_factory import sample, typed

from conformance.escaping import for_markdown, for_terminal, markdown_code, markdown_url
from conformance.model import Location
from conformance.report import analysis
from conformance.report import html as report_html
from conformance.report import markdown as report_md
from conformance.tools.lint import Finding

# ---- what a CI runner takes for a command


def runner_lines(output: str) -> list[str]:
    """The lines a runner reads: .NET's ReadLine ends a line at \\n, \\r and \\r\\n."""
    return re.split(r"\r\n|\r|\n", output)


def runner_command(line: str) -> bool:
    """Would GitHub's runner or Azure's agent take this line for a command?"""
    trimmed = line.lstrip()  # TrimStart (str.isspace covers char.IsWhiteSpace)
    if trimmed.startswith("::") and trimmed.find("::", 2) >= 0:
        return True
    start = line.find("##[")
    if start >= 0 and line.find("]", start) >= 0:
        return True
    return "##vso[" in line


def commands_in(output: str) -> list[str]:
    return [line for line in runner_lines(output) if runner_command(line)]


HOSTILE_LINES = [
    "::error::pwned",
    "::add-mask::secret",
    "::stop-commands::tok",
    "  ::error file=a.py,line=1::indented",
    "\t::warning::after a tab",
    "\u3000::error::after an ideographic space",  # .NET TrimStart trims it too
    "\u00a0::error::after a no-break space",
    "\ufeff::error::after a BOM",
    "\u00ad::error::after a soft hyphen",
    "\u0301::error::after a combining mark",
    ":\u0301:error::a mark between the colons",
    "::ERROR::upper case",
    "text ##[error]old form anywhere",
    "##[add-mask]x",
    "x ##vso[task.setvariable variable=a]b",
    "##VSO[task.complete result=Failed]",
    "###[error]three hashes",
    "first line\n::error::second line",
    "first line\r::error::after a carriage return",
    "first line\r\n::add-mask::after CR LF",
    "a\u2028::error::after a line separator",
    "\x1b[2K\r::error::after a terminal erase",
]
# neutralised too, though the runners as modelled would not run them: what a culture-aware
# .NET comparison might ignore (BOM, soft hyphen, combining marks), Azure's prefix in upper
# case (its comparison is ordinal), and a line separator some viewers break at
BEYOND_THE_MODEL = {"\ufeff::error::after a BOM", "\u00ad::error::after a soft hyphen",
                    "\u0301::error::after a combining mark", ":\u0301:error::a mark between the colons",
                    "##VSO[task.complete result=Failed]", "a\u2028::error::after a line separator"}


@pytest.mark.parametrize("text", HOSTILE_LINES)
def test_no_line_of_the_terminal_text_is_a_runner_command(text: str) -> None:
    if text not in BEYOND_THE_MODEL:
        assert commands_in(text), "the model of the runner misses this one"  # the check can fail
    out = for_terminal(text)
    assert commands_in(out) == []
    assert for_terminal(out) == out  # twice is once
    assert not any(ord(c) < 0x20 and c not in "\n\t" or 0x7F <= ord(c) <= 0x9F for c in out)


@pytest.mark.parametrize("text, shown", [
    ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
    ("bell\x07 backspace\x08 del\x7f csi\x9b", "bell\\x07 backspace\\x08 del\\x7f csi\\x9b"),
    ("carriage\rreturn", "carriage\\rreturn"),
    ("bidi \u202eevil\u202c", "bidi \\u202eevil\\u202c"),
    ("zero\u200bwidth", "zero\\u200bwidth"),
    ("::error::x", "\\x3a:error::x"),
    ("  ::add-mask::x", "  \\x3a:add-mask::x"),
    ("see ##[error]x", "see \\x23#[error]x"),
    ("##vso[task]", "\\x23#vso[task]"),
])
def test_control_characters_and_commands_are_written_out(text: str, shown: str) -> None:
    assert for_terminal(text) == shown


@pytest.mark.parametrize("text", ["plain text", "a: b # c", "x::y in the middle", "## Summary", "path/to/file.yaml:3:5",
                                  "tab\tand\nnew line", "ünïcödé ✅ 🟦"])
def test_ordinary_text_is_unchanged(text: str) -> None:
    assert for_terminal(text) == text


def test_one_line_text_escapes_line_feeds_and_tabs() -> None:
    assert for_terminal("a\nb\tc", multiline=False) == "a\\nb\\tc"
    assert for_terminal("a\nb\tc") == "a\nb\tc"


def test_any_text_becomes_safe_terminal_text() -> None:
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies
    alphabet = st.sampled_from([":", ":", "#", "#", "[", "]", "v", "s", "o", " ", "\t", "\n", "\r", "\x1b", "\x85",
                                "\u2028", "\u3000", "\ufeff", "\u0301", "a", "\x00", "\u202e"])

    @hypothesis.given(st.text(alphabet) | st.text())
    @hypothesis.settings(max_examples=300, deadline=None, database=None)
    def check(text: str) -> None:
        out = for_terminal(text)
        assert commands_in(out) == []
        assert for_terminal(out) == out
        assert all(c in "\n\t" or not (ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F) for c in out)
        one = for_terminal(text, multiline=False)
        assert "\n" not in one and commands_in(one) == []

    check()


def test_lint_findings_print_safely() -> None:
    finding = Finding("CF000", Location("cases/x.yaml", 3, 5), "unknown key '##[error]x' in a case\n::error::y\x1b[2J",
                      "did you mean '::add-mask::z'?\n::warning::w")
    text = finding.render()
    assert commands_in(text) == []
    assert text.startswith("cases/x.yaml:3:5: CF000 unknown key '\\x23#[error]x' in a case\n\\x3a:error::y\\x1b[2J")


# ---- Markdown, rendered by GitHub's own renderer


def gfm(markdown: str) -> str:
    cmarkgfm = pytest.importorskip("cmarkgfm", reason="cmarkgfm (GitHub's Markdown renderer) is in the test extra")
    from cmarkgfm.cmark import Options

    # raw HTML passes, as on GitHub (whose sanitizer runs after): what the escaping must stop
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


class Html(html.parser.HTMLParser):
    """The tags, links and text of an HTML fragment."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.links: list[tuple[str, str]] = []  # (href, text)
        self.text: list[str] = []
        self.emphasised: list[str] = []  # text inside em, strong, del
        self._link: list[Any] | None = None
        self._emphasis = 0
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self._emphasis += tag in ("em", "strong", "del")
        if tag == "a":
            self._link = [dict(attrs).get("href"), ""]

    def handle_endtag(self, tag: str) -> None:
        self._emphasis -= tag in ("em", "strong", "del")
        if tag == "a" and self._link is not None:
            self.links.append((self._link[0], self._link[1]))
            self._link = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._emphasis:
            self.emphasised.append(data)
        if self._link is not None:
            self._link[1] += data

    def all_text(self) -> str:
        return "".join(self.text)


MARKUP = [
    "[click](http://evil)",
    "![img](http://evil/i.png)",
    "__iadd__ and __init__",
    "snake_case_name, x__y__z and a_*b*_c",
    "*emphasis* and **bold** and _under_",
    "~~struck~~ and ~one~",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<b>bold</b> <!-- comment -->",
    "`code` and ``more``",
    "a | b || c",
    "# heading",
    "&lt;entity&gt; &amp; &#x41; &copy;",
    "\\*escaped\\* \\",
    "$x^2$ and $$y$$",
    "[ref]: http://evil",
    "[link][ref]",
    "<http://evil>",
    "<https://evil.example/a>",
    "www.example.com",
    "x[1](2)",
    ":warning: :+1:",
]


@pytest.mark.parametrize("text", MARKUP)
def test_markdown_shows_case_text_as_written_in_a_table_cell(text: str) -> None:
    page = Html(gfm(f"| a | b |\n|---|---|\n| x | {for_markdown(text)} |\n"))
    assert page.tags.count("td") == 2, page.tags  # still one row of two cells
    assert _cell_text(page) == text
    assert set(page.tags) - {"table", "thead", "tbody", "tr", "th", "td", "a"} == set()
    # a link only where an address is written, and then it shows that address
    for href, shown in page.links:
        assert href in (shown, f"http://{shown}") and href.startswith(("http://", "https://")), (href, shown)


def _cell_text(page: Html) -> str:
    # the text after the header ("a", "b") and the first cell ("x"); whitespace between tags dropped
    parts = [t for t in page.text if t.strip()]
    assert parts[:3] == ["a", "b", "x"], parts
    return "".join(t for t in page.text[page.text.index("x") + 1:] if t != "\n")


@pytest.mark.parametrize("text", ["1. one", "- item", "+ plus", "= under", "> quote", "    indented", "2) two"])
def test_markdown_at_the_start_of_a_line_or_list_item(text: str) -> None:
    for markdown in (for_markdown(text, line_start=True), "- " + for_markdown(text, line_start=True)):
        page = Html(gfm(markdown + "\n"))
        assert page.all_text().strip() == text.strip()
        assert set(page.tags) <= {"p", "ul", "li"}, (markdown, page.tags)


def test_addresses_in_text_stay_clickable_and_show_where_they_go() -> None:
    text = ("NumPy copies (https://numpy.org/doc/stable/reference/generated/numpy.ndarray.astype.html); see "
            "https://github.com/pytorch/pytorch/issues/1_2#issuecomment-3. And (https://en.wikipedia.org/wiki/A_(b)).")
    page = Html(gfm(for_markdown(text)))
    assert page.all_text().strip() == text
    assert page.links == [
        ("https://numpy.org/doc/stable/reference/generated/numpy.ndarray.astype.html",
         "https://numpy.org/doc/stable/reference/generated/numpy.ndarray.astype.html"),
        ("https://github.com/pytorch/pytorch/issues/1_2#issuecomment-3",
         "https://github.com/pytorch/pytorch/issues/1_2#issuecomment-3"),
        ("https://en.wikipedia.org/wiki/A_(b)", "https://en.wikipedia.org/wiki/A_(b)"),
    ]


def test_control_characters_and_line_breaks_are_written_out_in_markdown() -> None:
    page = Html(gfm(for_markdown("one\ntwo\x1b[31m\u202e")))
    assert page.all_text().strip() == "one\\ntwo\\x1b[31m\\u202e"


@pytest.mark.parametrize("text", ["a`b", "``", "x|y", "`lead", "trail`", "__init__", "<b>"])
def test_code_spans_show_their_text(text: str) -> None:
    page = Html(gfm(f"| a |\n|---|\n| {markdown_code(text)} |\n"))
    assert page.tags.count("code") == 1 and page.tags.count("td") == 1
    assert "".join(t for t in page.text if t != "\n")[1:] == text


def test_link_destinations_cannot_end_early() -> None:
    url = "https://example.org/a b)(c)<d>|e\"f'*_[g]\\ä"
    page = Html(gfm(f"| a |\n|---|\n| [1]({markdown_url(url)}) |\n"))
    assert page.tags.count("td") == 1 and page.links[0][1] == "1"
    assert "example.org/a%20b%29%28c%29%3Cd%3E%7Ce%22f%27%2A_%5Bg%5D%5C%C3%A4" in page.links[0][0]


def hostile_results() -> dict[str, Any]:
    doc = sample()
    info = doc["cases"]["copies.clone.broken"]
    info["title"] = "::error::pwned [click](http://evil) ![img](http://evil/i.png) __iadd__ <script>alert(1)</script>"
    info["tags"] = ["<b>tag</b>", "__t__"]
    info["references"] = ["https://example.org/a)![x](http://evil/i.png", "[not a link](http://evil)"]
    info["file"] = "cases/copies/[x](http:evil).yaml"
    for r in doc["results"]:
        if r["case"] == "copies.clone.broken" and r["framework"] == "torch":
            r["reason"] = "##vso[task.setvariable variable=x]y [click](http://evil) *bold* `code` | cell <script>x</script>"  # noqa: E501
        if r["case"] == "views.expand.paddle_copies" and r["framework"] == "paddle":
            r["reason"] = "Paddle copies ![img](http://evil/i.png) (https://example.org/paddle_doc)"
    doc["cases"]["views.expand.paddle_copies"]["overrides"]["paddle"]["reason"] = \
        "Paddle copies ![img](http://evil/i.png) (https://example.org/paddle_doc)"
    doc["claims"]["S3-07"] = "<img src=x onerror=alert(1)> __claim__"
    # a documentation: finding, whose text and link the loader only requires to be one line
    # and http(s)://... without blanks
    info["documentation"] = {"torch": {"says": "__says__ <script>alert(2)</script> ![img](http://evil/i.png) | x",
                                       "source": "https://example.org/x'onmouseover='alert(3)",
                                       "contradicts": "values"}}
    return doc


def test_the_markdown_report_shows_hostile_case_text_as_written() -> None:
    markdown = report_md.render(analysis.build(typed(hostile_results())))
    page = Html(gfm(markdown))
    text = page.all_text()
    assert "img" not in page.tags and "script" not in page.tags
    assert not any(word in "".join(page.emphasised) for word in ("iadd", "bold", "claim", "__t__")), page.emphasised
    for shown in ("::error::pwned [click](http://evil) ![img](http://evil/i.png) __iadd__ <script>alert(1)</script>",
                  "##vso[task.setvariable variable=x]y [click](http://evil) *bold* `code` | cell <script>x</script>",
                  "Paddle copies ![img](http://evil/i.png) (https://example.org/paddle_doc)",
                  "<img src=x onerror=alert(1)> __claim__", "[not a link](http://evil)",
                  "cases/copies/[x](http:evil).yaml:1",
                  "__says__ <script>alert(2)</script> ![img](http://evil/i.png) | x"):
        assert shown in text, shown
    for href, shown in page.links:  # every link: a heading, a case file, the claims file, a numbered ref, or
        # shows its address
        assert href.startswith("#") or href.startswith("../cases/") or shown.isdigit() or shown == href or \
            (href, shown) == ("../conformance/data/claims.yaml", "conformance/data/claims.yaml"), (href, shown)
    # the table rows keep their cells: | inside the text did not split one
    row = next(line for line in markdown.splitlines() if line.startswith("| `copies.clone.broken`"))
    assert len(re.findall(r"(?<!\\)\|", row)) == 5
    assert commands_in(markdown) == []  # `conformance report --check` prints its diff lines


def test_the_html_report_escapes_hostile_case_text() -> None:
    doc = hostile_results()
    doc["environment"]["frameworks"]["x' onmouseover='alert(1)"] = {"version": "<b>1</b>", "devices": ["cpu"]}
    page = report_html.render(analysis.build(typed(doc)))
    parsed = Html(page)
    assert parsed.tags.count("script") == 1 and "img" not in parsed.tags  # the report's own script only
    text = parsed.all_text()
    assert "<b>1</b>" in text
    assert "::error::pwned [click](http://evil) ![img](http://evil/i.png) __iadd__ <script>alert(1)</script>" in text
    assert "<img src=x onerror=alert(1)> __claim__" in text
    assert "__says__ <script>alert(2)</script> ![img](http://evil/i.png) | x" in text

    class Attributes(html.parser.HTMLParser):
        names: set[str] = set()

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.names.update(name for name, _ in attrs)

    attributes = Attributes()
    attributes.feed(page)
    assert not {"onmouseover", "onerror"} & attributes.names, attributes.names


# ---- a failing run's terminal output


PROBE_ADAPTER = '''
"""A test-only framework: NumPy's adapter and an operation that prints and raises text
holding CI commands and control characters."""
import sys
from conformance.adapters.numpy_adapter import NumpyAdapter


def _shout(x):
    print("::error::printed by the framework")
    print("  ##[warning]printed to stderr\\x1b[2J", file=sys.stderr)
    raise RuntimeError("first line\\n::add-mask::secret\\n##vso[task.setvariable variable=a]b\\r::error::cr")


class ShoutAdapter(NumpyAdapter):
    overrides_from = None  # a probe: no framework's case overrides apply to it
    name = "shout"

    def operations(self):
        return {**super().operations(), "fn:shout": _shout}
'''

HOSTILE_CASES = """\
cases:
  - id: hostile.title.error
    title: "::error::pwned"
    given: {x: [1.0, 2.0]}
    steps:
      - y = x.clone()
    expect: {values: {y: [9.0, 9.0]}}
  - id: hostile.title.mask
    title: "  ::add-mask::x"
    given: {x: [1.0, 2.0]}
    steps:
      - y = x.clone()
    expect: {values: {y: [9.0, 9.0]}}
  - id: hostile.title.vso
    title: "##vso[task.setvariable variable=x]y ##[error]z"
    given: {x: [1.0, 2.0]}
    steps:
      - y = x.clone()
    expect: {values: {y: [9.0, 9.0]}}
  - id: hostile.reason.markup
    title: "[click](http://evil) ![img](http://evil/i.png) __iadd__ <script>alert(1)</script>"
    given: {x: [1.0, 2.0]}
    steps:
      - y = x.clone()
    expect: {values: {y: [1.0, 2.0]}}
    frameworks:
      numpy:
        not_applicable: "::error::not applicable ##[error]x [click](http://evil) ![img](http://evil/i.png) __iadd__"
  - id: hostile.framework.shout
    title: "a framework message with commands in it"
    given: {x: [1.0, 2.0]}
    steps:
      - y = shout(x)
    expect: {values: {y: [1.0, 2.0]}}
"""


@pytest.fixture
def hostile_checkout(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    site = tmp_path / "site"
    register(site, "shout-probe", {"shout": "shout_probe:ShoutAdapter"})
    (site / "shout_probe.py").write_text(PROBE_ADAPTER)
    (tmp_path / "cases" / "hostile").mkdir(parents=True)
    (tmp_path / "cases" / "hostile" / "cases.yaml").write_text(HOSTILE_CASES)
    (tmp_path / "pytest.ini").write_text("[pytest]\nconformance_paths = cases\n")
    env = subprocess_env(site, TESTS)
    env["CONFORMANCE_CACHE_DIR"] = "off"
    return tmp_path, env


@pytest.mark.parametrize("how", ["pytest", "pytest -n 2", "conformance run --plain"])
def test_a_failing_run_prints_no_runner_command(hostile_checkout: tuple[Path, dict[str, str]], how: str) -> None:
    folder, env = hostile_checkout
    if how == "pytest -n 2":
        pytest.importorskip("xdist")
    if how.startswith("pytest"):
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "cases", "--frameworks", "shout,numpy",
                   "-rA", "-v", "--conformance-results", "r.json", *how.split()[1:]]
    else:
        command = [sys.executable, "-m", "conformance", "run", "--plain", "--frameworks", "shout,numpy", "-rA"]
    proc = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    # the case text and the framework's words reached the output, written out
    for shown in ("\\x3a:error::printed by the framework", "\\x23#vso[task.setvariable variable=x]y \\x23#[error]z",
                  "\\x23#[warning]printed to stderr\\x1b[2J", "hostile.title.mask[shout] —   ::add-mask::x"):
        assert shown in output, shown
    assert commands_in(output) == [], commands_in(output)
    assert "\x1b[2J" not in output
    # conformance run on two of the frameworks: a partial run, in reports/partial/
    results = "r.json" if how.startswith("pytest") else "reports/partial/results.json"
    data = json.loads((folder / results).read_text())  # the results keep the text as it was
    shout = next(r for r in data["results"] if r["case"] == "hostile.framework.shout" and r["framework"] == "shout")
    assert "::add-mask::secret" in json.dumps(shout)
    if how.startswith("conformance"):
        page = Html(gfm((folder / "reports" / "partial" / "behaviour.md").read_text()))
        assert "img" not in page.tags and "script" not in page.tags and "iadd" not in "".join(page.emphasised)
        assert "[click](http://evil) ![img](http://evil/i.png) __iadd__ <script>alert(1)</script>" in page.all_text()
        # an address in the text is a link that shows it; no link text hides where it goes
        assert all(shown == href for href, shown in page.links if "evil" in href), page.links


def test_the_progress_display_prints_no_runner_command(hostile_checkout: tuple[Path, dict[str, str]]) -> None:
    folder, env = hostile_checkout
    master, slave = pty.openpty()  # conformance run shows its progress display on a terminal
    proc = subprocess.Popen([sys.executable, "-m", "conformance", "run", "--frameworks", "shout,numpy"], cwd=folder,
                            env=dict(env, COLUMNS="200"), stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the other end closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(timeout=300) == 1
    output = b"".join(chunks).decode("utf-8", "replace")
    plain = re.sub("\x1b\\[[0-9;]*m", "", output)  # the display's own colours (a terminal has them)
    assert "FAILED cases/hostile/cases.yaml::hostile.framework.shout[shout]" in plain, output
    # the display drew: the 8 items left after the 2 not applicable ones were decided at collection
    assert re.search(r"\[ ?\d/8\]", plain), output
    assert commands_in(output) == [], commands_in(output)
