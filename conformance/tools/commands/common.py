"""What several commands share: where results and reports go by default, the case roots, errors."""

from __future__ import annotations

import sys
from pathlib import Path

from conformance.escaping import for_terminal

DEFAULT_RESULTS = Path("reports") / "results.json"


# where a run that is not a full run of the corpus writes its results and reports (git-ignored)
DEFAULT_PARTIAL = Path("reports") / "partial"


def case_roots() -> list[str]:
    """The checkout's cases/ when run from one, else the cases shipped in the package."""
    local = Path("cases")
    if local.is_dir():
        return [str(local)]
    from conformance.plugin.roots import CASES_PACKAGE_DIR

    return [str(CASES_PACKAGE_DIR)]


def print_error(message: str) -> None:

    print(for_terminal(message), file=sys.stderr)


def framework_list(option: str | None) -> list[str]:
    from conformance import registry

    names = [n.strip() for n in option.split(",") if n.strip()] if option else registry.framework_names()
    problem = registry.unknown_frameworks(names)
    if problem:
        raise SystemExit(f"conformance: {problem}")
    return names
