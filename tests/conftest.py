from __future__ import annotations

import sys
from pathlib import Path

# pytester's in-process runs drop the modules they imported afterwards, and NumPy's C
# extension refuses to be imported twice in one process: import it once up front so that
# it outlives every inline run.
import numpy  # noqa: F401

# the fake adapter lives beside the tests
sys.path.insert(0, str(Path(__file__).parent))

pytest_plugins = ["pytester"]
