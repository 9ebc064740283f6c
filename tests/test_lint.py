"""`conformance lint`: one fixture per rule under tests/lint_fixtures/, each stating the code
and line it must produce (`# expect: CODE at LINE`, or `# expect: CODE at LINE in NAME` for a
finding about NAME, another entry of the fixture's folder); the corpus lints clean."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance import registry, rules
from conformance.rules import RULES
from conformance.tools.cli import main
from conformance.tools.lint import lint_paths

FIXTURES = Path(__file__).parent / "lint_fixtures"
ROOT = Path(__file__).resolve().parent.parent
EXPECT = re.compile(r"^# expect: (CF\d{3}) at (\d+)(?: in (\S+))?$", re.M)


def fixture_targets() -> list[Path]:
    return sorted(p for p in FIXTURES.iterdir() if p.suffix == ".yaml" or p.is_dir())


def expected_findings(target: Path) -> list[tuple[str, str, int]]:
    files = sorted(target.glob("*.yaml")) if target.is_dir() else [target]
    return [(str(f.parent / name if name else f), code, int(line))
            for f in files for code, line, name in EXPECT.findall(f.read_text())]


@pytest.mark.parametrize("target", fixture_targets(), ids=lambda p: p.stem)
def test_each_fixture_gives_exactly_its_code(target: Path) -> None:
    expected = expected_findings(target)
    assert expected, f"{target} states no '# expect: CODE at LINE'"
    findings = lint_paths([target], registry.vocabulary())
    assert [(f.location.file, f.code, f.location.line) for f in findings] == expected
    for finding in findings:
        assert finding.message and finding.location.column >= 1


def test_every_rule_has_a_fixture() -> None:
    covered = {code for target in fixture_targets() for _, code, _ in expected_findings(target)}
    assert sorted(set(RULES) - covered) == []


def test_each_rule_has_one_home_and_every_rule_is_raised() -> None:
    """A rule's code is written in conformance/rules.py only: the loader, the kinds and lint
    name ``rules.<RULE>.code``; and every rule there is raised by some check."""
    sources = [p for p in (ROOT / "conformance").rglob("*.py") if p != ROOT / "conformance" / "rules.py"]
    literals = [f"{p.relative_to(ROOT)}: {m[0]}" for p in sources
                for m in re.finditer(r"[\"']CF\d{3}[\"']", p.read_text())]
    assert literals == []
    used = {name for p in sources for name in re.findall(r"rules\.([A-Z_]+)\.code", p.read_text())}
    defined = {name for name, value in vars(rules).items() if isinstance(value, rules.Rule)}
    assert used == defined
    assert sorted(RULES.values(), key=lambda r: r.code) == sorted((vars(rules)[n] for n in defined),
                                                                  key=lambda r: r.code)
    assert "CF013" in RULES and all(code == rule.code for code, rule in RULES.items())


def test_cli_output_format_and_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    target = FIXTURES / "CF004_unknown_operation.yaml"
    assert main(["lint", str(target)]) == 1
    out, err = capsys.readouterr()
    assert out == (f"{target}:7:9: CF004 in step 'y = x.veiw(2)': unknown operation method '.veiw()': "
                   "no adapter defines it\n  fix: did you mean 'view'?\n")
    assert "1 file(s), 1 problem(s)" in err


def test_cli_on_a_missing_path_or_no_case_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", str(tmp_path / "nope")]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    assert main(["lint", str(tmp_path)]) == 2
    assert "no case files (*.yaml)" in capsys.readouterr().err


def test_rules_are_listed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", "--rules"]) == 0
    out = capsys.readouterr().out
    assert "CF006  override-identical" in out
    assert "CF010  not-a-case-file" in out


def test_corpus_lints_clean() -> None:
    findings = lint_paths([ROOT / "cases"], registry.vocabulary())
    assert [f.render() for f in findings] == []


def test_lint_reports_every_error_of_a_case_in_one_round(capsys: pytest.CaptureFixture[str]) -> None:
    """Failed before: the first error of the case only (one round per mistake)."""
    target = FIXTURES / "CF000_every_error_of_a_case.yaml"
    assert main(["lint", str(target)]) == 1
    out, err = capsys.readouterr()
    assert [line.split(": ", 1)[0].rsplit(":", 2)[1:] + [line.split()[1]] for line in out.splitlines()
            if not line.startswith("  fix:")] == [
        ["10", "14", "CF007"], ["11", "35", "CF000"], ["13", "9", "CF002"], ["14", "9", "CF004"],
        ["16", "31", "CF000"], ["18", "7", "CF008"]]
    assert "1 file(s), 6 problem(s)" in err
