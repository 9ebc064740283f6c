"""conformance: a cross-framework suite for in-place, view and copy semantics."""

from __future__ import annotations

from pathlib import Path

__version__ = "0.1.0"

# In the source checkout the adapters and cases live in the top-level folders adapters/ and
# cases/, which the installed package ships as conformance.adapters and conformance.cases
# (pyproject's package-dir mapping). When this package is imported straight from the
# checkout (``python -m pytest`` from the repo root puts the checkout first on sys.path),
# make the same subpackage names resolve to those folders.
_checkout = Path(__file__).resolve().parent.parent
if not (Path(__file__).parent / "adapters").is_dir() and (_checkout / "adapters" / "__init__.py").is_file():
    __path__.append(str(_checkout))  # noqa: F821 - a package's __path__, which pyflakes does not know
