"""Register test-only adapters the way ``pip install`` of a package declaring the
``conformance.adapters`` entry point would, for subprocesses only: a ``*.dist-info`` in a
temporary folder that goes on the subprocess's PYTHONPATH. The test process itself, and
every other test in it, keeps seeing the three built-in frameworks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

TESTS = Path(__file__).resolve().parent


def register(site: Path, distribution: str, adapters: Mapping[str, str]) -> None:
    """Write ``site/<distribution>-0.1.dist-info`` declaring ``name = "module:Class"``."""
    info = site / f"{distribution.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[conformance.adapters]\n" + "".join(f"{name} = {spec}\n" for name, spec in adapters.items()))


def subprocess_env(*paths: Path) -> dict[str, str]:
    """This environment with ``paths`` first on PYTHONPATH, without the parent run's pytest
    options (e.g. -n 2) and plugin settings, which are not the child's."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTEST_ADDOPTS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTEST_PLUGINS")}
    env["PYTHONPATH"] = os.pathsep.join([*(str(p) for p in paths), *filter(None, [os.environ.get("PYTHONPATH")])])
    return env
