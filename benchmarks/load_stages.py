"""Where loading a case file goes, stage by stage, per case: libyaml's events, building the
values, freeing them, and validating (the rest of ``load_text``).

    python benchmarks/load_stages.py [--cases 10000] [--kind corpus|small] [--repeat 3]

In one process, as pytest's process loads files (the GC off, every result kept alive): for
each file of a synthetic corpus (benchmarks/synthetic.py) the events are read, the values
built from them and dropped, then the file is loaded whole with ``load_text``; validation
is the whole load less the first three. The fastest of --repeat fresh processes, since
noise only ever adds to the work. Collection in pytest adds about 45 µs a case for
its 3 items (benchmarks/collection.py).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import write_corpus  # noqa: E402

STAGES = textwrap.dedent("""
    import gc, json, sys, time
    gc.disable()
    from pathlib import Path
    from conformance import registry, yamlsrc
    from conformance.loader import load_text

    vocabulary = registry.vocabulary()
    texts = [(str(p), p.read_text()) for p in sorted(Path(sys.argv[1]).rglob("*.yaml"))]
    kept, totals = [], dict.fromkeys(("events", "build", "free", "load"), 0.0)
    for name, text in texts:
        start = time.perf_counter()
        events = yamlsrc._read_events(text, name)
        read = time.perf_counter()
        values = yamlsrc._Builder(name, events[0]).build()
        built = time.perf_counter()
        del events, values
        freed = time.perf_counter()
        kept.append(load_text(text, name, vocabulary))
        loaded = time.perf_counter()
        totals["events"] += read - start
        totals["build"] += built - read
        totals["free"] += freed - built
        totals["load"] += loaded - freed
    print(json.dumps(totals))
""")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--kind", choices=("corpus", "small"), default="corpus")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        write_corpus(Path(tmp), args.cases, kind=args.kind)
        runs = []
        for _ in range(args.repeat):
            out = subprocess.run([sys.executable, "-c", STAGES, tmp], capture_output=True, text=True, check=True)
            runs.append(json.loads(out.stdout))
    fastest = min(runs, key=lambda run: sum(run.values()))
    best = {stage: seconds / args.cases * 1e6 for stage, seconds in fastest.items()}
    validation = best["load"] - best["events"] - best["build"] - best["free"]
    print(f"{args.cases} {args.kind} cases, µs per case (the fastest of {args.repeat} processes):")
    print(f"  libyaml events {best['events']:6.0f}")
    print(f"  building values {best['build']:5.0f}")
    print(f"  freeing them   {best['free']:6.0f}")
    print(f"  validating     {validation:6.0f}")
    print(f"  load_text      {best['load']:6.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
