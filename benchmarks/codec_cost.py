"""What the case cache's encoding costs: conformance.codec against pickle, per case, on the
corpus's LoadResults (what a cache entry holds).

    python benchmarks/codec_cost.py [--repeat 15]

Every case file under cases/ is loaded once; then, in one process with the GC off (as
collection runs), each way encodes all the results and decodes all of them, alternating,
--repeat times; the fastest round of each is reported (noise only ever adds). "entry"
adds what the cache does around decoding: the HMAC check of the entry's bytes. Sizes are
the encoded bytes of all files.
"""

from __future__ import annotations

import argparse
import gc
import pickle
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conformance import registry  # noqa: E402
from conformance.load.cache import ENTRY_TYPES, CaseCache  # noqa: E402
from conformance.load.reader import load_file  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args(argv)
    vocabulary = registry.vocabulary()
    files = sorted((ROOT / "cases").rglob("*.yaml"))
    results = [load_file(p, vocabulary, display_path=p.relative_to(ROOT).as_posix()) for p in files]
    cases = sum(len(r.cases) for r in results)
    cache = CaseCache.__new__(CaseCache)
    cache.key = b"k" * 32
    entries = [Path(f"{i:064x}.entry") for i in range(len(results))]

    def entry_read(blobs: list[bytes]) -> None:
        for entry, blob in zip(entries, blobs):
            cache._mac(entry, blob)
            ENTRY_TYPES.loads(blob)

    ways = {
        "pickle": (lambda: [pickle.dumps(r, protocol=pickle.HIGHEST_PROTOCOL) for r in results], pickle.loads),
        "codec": (lambda: [ENTRY_TYPES.dumps(r) for r in results], ENTRY_TYPES.loads),
    }
    encoded = {name: encode() for name, (encode, _) in ways.items()}
    best = {name: [float("inf"), float("inf")] for name in [*ways, "entry"]}
    gc.disable()
    for _ in range(args.repeat):
        for name, (encode, decode) in ways.items():
            start = time.perf_counter()
            encode()
            best[name][0] = min(best[name][0], time.perf_counter() - start)
            start = time.perf_counter()
            for blob in encoded[name]:
                decode(blob)
            best[name][1] = min(best[name][1], time.perf_counter() - start)
        start = time.perf_counter()
        entry_read(encoded["codec"])
        best["entry"][1] = min(best["entry"][1], time.perf_counter() - start)
    print(f"{len(files)} files, {cases} cases; per case, fastest of {args.repeat}")
    print(f"{'':8} {'encode':>9} {'decode':>9} {'bytes':>8} {'decode MB/s':>12}")
    for name in best:
        blobs = encoded.get(name, encoded["codec"])
        size = sum(map(len, blobs))
        encode_s = f"{best[name][0] / cases * 1e6:7.1f}us" if best[name][0] != float("inf") else "        -"
        print(f"{name:8} {encode_s:>9} {best[name][1] / cases * 1e6:7.1f}us {size / cases:8.0f} "
              f"{size / best[name][1] / 1e6:12.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
