"""The ``conformance`` command: a thin face over pytest and the library functions.

``conformance --help`` lists every command with what it does (argparse writes the list
from the commands themselves, so none is left out); ``conformance COMMAND --help`` gives a
command's options. ``conformance --version`` prints conformance's version and each
framework's found.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from conformance.escaping import for_terminal  # plain Python: the CLI still starts light
from conformance.tools.commands import COMMANDS


def version_text() -> str:
    """``conformance 0.1.0`` and a line per registered framework with the version installed
    (read from package metadata: no framework is imported)."""
    import platform

    import pytest

    from conformance import __version__, registry

    lines = [f"conformance {__version__} (Python {platform.python_version()}, pytest {pytest.__version__})"]
    names = registry.framework_names()
    width = max(len(name) for name in names) if names else 0
    for name in names:
        version = registry.get_adapter(name).version()
        lines.append(f"  {name:<{width}}  {version or 'not installed'}")
    return "\n".join(lines) + "\n"


class _Version(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        sys.stdout.write(for_terminal(version_text()))
        parser.exit(0)


def build_parser() -> argparse.ArgumentParser:
    """The command line: one subcommand per module of conformance/tools/commands/."""
    parser = argparse.ArgumentParser(prog="conformance", description="The behaviour of array and tensor frameworks: "
                                     "in-place, view and copy semantics, case by case. `conformance COMMAND --help` "
                                     "gives a command's options.")
    parser.add_argument("--version", action=_Version, nargs=0,
                        help="print the version of conformance and of each framework found, and exit")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    # a command's own --help starts with what it does: its line of the list, where it has no
    # longer description of its own
    said = {action.dest: action.help for action in sub._choices_actions}
    for name, command_parser in sub.choices.items():
        command_parser.description = command_parser.description or said.get(name)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command not in ("run", "matrix"):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return args.func(args, extra)
    except BrokenPipeError:  # the reader went away (`conformance list | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
