"""Where a run's item time goes: the seconds its items took (each record's ``duration_s``),
summed by framework or compiled mode and by family, from a results file.

    python benchmarks/item_time.py RESULTS.json [RESULTS.json ...]

A CI run's results (``.ci/run`` keeps them in a temporary folder) show what a cold compiler
cache costs: torch_inductor compiles C++ kernels there from nothing (docs/performance.md,
"Where CI's time goes now"). Reads the JSON only; imports no framework.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path


def item_time(path: Path) -> tuple[Counter[str], Counter[str]]:
    """(seconds by framework, seconds by family) of one results file."""
    data = json.loads(path.read_text(encoding="utf-8"))
    by_framework: Counter[str] = Counter()
    by_family: Counter[str] = Counter()
    for record in data.get("results", []):
        seconds = record.get("duration_s") or 0.0
        by_framework[str(record.get("framework"))] += seconds
        by_family[str(record.get("case", "")).split(".", 1)[0]] += seconds
    return by_framework, by_family


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    for name in argv:
        by_framework, by_family = item_time(Path(name))
        print(f"{name}: {sum(by_framework.values()):.0f} s of item time")
        for label, counts in (("framework", by_framework), ("family", by_family)):
            print(f"  by {label}: " + ", ".join(f"{key} {seconds:.0f} s" for key, seconds in counts.most_common()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
