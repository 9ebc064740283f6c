"""Where loading a case file goes, stage by stage, per case: libyaml's events alone, reading
the YAML into values (events included), freeing the values, and validating (the rest of
``load_text``).

    python benchmarks/load_stages.py [--cases 10000] [--kind corpus|small] [--repeat 3]

In one process, as pytest's process loads files (the GC off, every result kept alive): for
each file of a synthetic corpus (benchmarks/synthetic.py) libyaml's events are read and
dropped (the floor of any reading), the values are read (``yamlsrc.parse``) and dropped,
then the file is loaded whole with ``load_text``; validation is the whole load less
reading and freeing. The fastest of --repeat fresh processes, since
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
    import yaml
    from conformance import registry
    from conformance.yamlvalues import yamlsrc
    from conformance.load.reader import load_text

    vocabulary = registry.vocabulary()
    texts = [(str(p), p.read_text()) for p in sorted(Path(sys.argv[1]).rglob("*.yaml"))]
    kept, totals = [], dict.fromkeys(("events", "read", "free", "load"), 0.0)
    for name, text in texts:
        start = time.perf_counter()
        for _ in yaml.parse(text, Loader=yaml.CSafeLoader):  # the same C parser, events only
            pass
        evented = time.perf_counter()
        values = yamlsrc.parse(text, name)
        read = time.perf_counter()
        del values
        freed = time.perf_counter()
        kept.append(load_text(text, name, vocabulary))
        loaded = time.perf_counter()
        totals["events"] += evented - start
        totals["read"] += read - evented
        totals["free"] += freed - read
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
    fastest = min(runs, key=lambda run: run["load"])
    best = {stage: seconds / args.cases * 1e6 for stage, seconds in fastest.items()}
    validation = best["load"] - best["read"] - best["free"]
    print(f"{args.cases} {args.kind} cases, µs per case (the fastest of {args.repeat} processes):")
    print(f"  libyaml's events alone    {best['events']:4.0f}  (the floor of reading)")
    print(f"  reading into values       {best['read']:4.0f}  (events included)")
    print(f"  freeing the values        {best['free']:4.0f}")
    print(f"  validating                {validation:4.0f}")
    print(f"  load_text, all of it      {best['load']:4.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
