"""``conformance frameworks``: list the registered frameworks."""

from __future__ import annotations

import argparse
from typing import Any

from conformance.escaping import for_terminal


def add_parser(sub: Any) -> None:
    fws = sub.add_parser("frameworks", help="list the registered frameworks: title, version, capabilities",
                         description="Print a Markdown table of every registered framework and compiled mode "
                                     "(built-in, or a plugin's entry point): its title, installed version (read "
                                     "from the package's metadata, without importing it), whether it has "
                                     "tensor-level autograd (or a functional gradient, which a case's backward() "
                                     "step is read as), mutable arrays, its devices and DLPack support. "
                                     "--frameworks takes these names.")
    fws.set_defaults(func=cmd_frameworks)


def cmd_frameworks(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance import registry

    def yes(flag: bool) -> str:
        return "yes" if flag else "no"

    def autograd(fw: registry.Framework) -> str:
        return "yes" if fw.autograd else f"functional: {fw.functional_gradient}" if fw.functional_gradient else "no"

    print("| framework | title | version | registered | autograd | mutable | devices | DLPack export | DLPack import |")
    print("|---|---|---|---|---|---|---|---|---|")
    for fw in registry.frameworks():
        version = registry.get_adapter(fw.name).version() or "not installed"
        where = "built-in" if fw.builtin else f"entry point ({fw.spec})"
        if not fw.loads:
            where += ": cannot be loaded"
        print(for_terminal(f"| {fw.name} | {fw.title} | {version} | {where} | {autograd(fw)} | {yes(fw.mutable)} | "
                           f"{', '.join(fw.devices) or '-'} | {yes(fw.dlpack_export)} | {yes(fw.dlpack_import)} |",
                           multiline=False))
    return 0
