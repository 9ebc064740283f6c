"""``conformance --help`` lists every command, each with what it does: the list is argparse's,
written from the commands themselves, so a new command cannot be left out of it."""

from __future__ import annotations

import argparse
import re

import pytest

from conformance.tools import cli


def commands(capsys: pytest.CaptureFixture[str]) -> tuple[list[str], str]:
    with pytest.raises(SystemExit) as done:
        cli.main(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    listed = re.search(r"\{([a-z,]+)\}", out)
    assert listed is not None, out
    return listed[1].split(","), out


def test_the_help_lists_every_command_with_what_it_does(capsys: pytest.CaptureFixture[str]) -> None:
    names, out = commands(capsys)
    assert len(names) == len(set(names)) >= 16
    for name in names:
        line = re.search(rf"(?m)^    {name} +(\S.*)$", out)
        assert line is not None, f"{name} is listed without what it does:\n{out}"


def test_every_command_has_its_own_help(capsys: pytest.CaptureFixture[str]) -> None:
    names, _ = commands(capsys)
    for name in names:
        with pytest.raises(SystemExit) as done:
            cli.main([name, "--help"])
        assert done.value.code == 0
        assert capsys.readouterr().out.startswith(f"usage: conformance {name}")


def test_every_command_says_what_it_does_and_what_each_argument_is() -> None:
    (sub,) = [a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    unexplained = []
    for name, command_parser in sub.choices.items():
        if not command_parser.description:
            unexplained.append(f"{name}: no description")
        for action in command_parser._actions:
            if not action.help and not isinstance(action, argparse._HelpAction):
                unexplained.append(f"{name}: {'/'.join(action.option_strings) or action.dest} has no help")
    assert not unexplained, unexplained
