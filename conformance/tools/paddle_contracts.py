"""Paddle's declared alias contracts as data (issue 35): the ``inplace:`` and ``view:`` maps of
Paddle's operator definitions, with the Python spellings that reach each, written to
``conformance/data/contracts/paddle.yaml`` (the torch counterpart: conformance/tools/contracts.py).

Paddle declares aliasing per operator in YAML (``paddle/phi/ops/yaml/ops.yaml`` and, for the
operators whose dynamic-graph form differs, ``inconsistent/dygraph_ops.yaml``): ``inplace : (x
-> out)`` says the in-place form of the op (``abs_``) writes ``x`` and returns it as ``out``;
``view : (x -> out)`` says ``out`` shares ``x``'s memory. The CPU stride (view) kernels are
registered in C++ only (``paddle/phi/kernels/stride``), not in the YAML: conformance/tools/
paddle_strided.py reads them from the installed Paddle.

Nothing is fetched at run time, and nothing of Paddle's files is kept but the facts written to
the data file. To write it again: copy the op entries that have an ``inplace`` or ``view`` map,
with their ``op``, ``args``, ``output``, ``inplace`` and ``view`` keys, from those files at the
commits in :data:`SOURCES` into the local scratch files :data:`SOURCES` names (a YAML list of
entries each; this module reads them with ``yaml.safe_load``), then run it where Paddle is
installed. ``conformance contracts --check`` looks each committed spelling up again on the
installed Paddle (:func:`stale`). The commands::

    python -m conformance.tools.paddle_contracts --write   # writes the data file (imports paddle)
    python -m conformance.tools.paddle_contracts --reach   # per kind: declared, reached by cases/

An operator is one (op, kind): ``flatten`` has both maps, so it is a view and an in-place
contract. Its spellings are the Python names that reach that kind: for a view the op's own name,
for in-place the name with a trailing ``_`` (an op whose name already ends in ``_``, ``adam_``,
as it is), each looked up on ``paddle.Tensor``, ``paddle`` and ``paddle.nn.functional`` of the
installed Paddle. It is **excluded**, with the reason, when none exists, or when no map names
the op's first output (the result a Python spelling returns: ``batch_norm``'s ``(mean ->
mean_out)`` is its running statistics, updated in place, not what it returns).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import yaml

from conformance.declared import PADDLE_DATA, PADDLE_NAME, PADDLE_SPELLING

DATA = PADDLE_DATA
KINDS = ("view", "inplace")
REPO = "PaddlePaddle/Paddle"
# (path in the repository, commit of the stored copy read, local scratch copy of its entries)
SOURCES = (
    ("paddle/phi/ops/yaml/ops.yaml", "00685cce02f0c3d67bd1e4e08ac5bae9d78fd1a4", "/tmp/paddle_ops.yaml"),
    ("paddle/phi/ops/yaml/inconsistent/dygraph_ops.yaml", "02b6ae72375dccc1abfb5065a1d2bfbdcce892da",
     "/tmp/paddle_dygraph_ops.yaml"),
)
MAP = re.compile(r"\([^()]*\)")
OUTPUT = re.compile(r"Tensor(?:\[\])?\s*(?:\(\s*(\w+)\s*\))?")
COMMENT = ("# Paddle's declared alias contracts: the inplace: and view: maps of its operator YAML (source:), "
           "with the Python spellings found on the installed Paddle; made by python -m "
           "conformance.tools.paddle_contracts --write (the definition: its docstring); do not edit by hand\n")


def _maps(text: Any) -> list[str]:
    return MAP.findall(str(text)) if text else []


def _first_output(output: str) -> str:
    found = OUTPUT.search(output)
    return (found.group(1) or "out") if found else "out"


def _spellings(name: str, kind: str, modules: Sequence[tuple[str, Any]]) -> list[str]:
    wanted = name if kind == "view" or name.endswith("_") else name + "_"
    return [f"{shown}.{wanted}" for shown, module in modules if callable(getattr(module, wanted, None))]


def entries(paths: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
    """(source path, op entry) for every op entry with an inplace or view map."""
    found = []
    for (path, _commit, local) in (s for s in SOURCES if s[2] in paths):
        for entry in yaml.safe_load(Path(local).read_text(encoding="utf-8")) or []:
            if isinstance(entry, dict) and ("inplace" in entry or "view" in entry):
                found.append((path, entry))
    return found


def build(found: Sequence[tuple[str, Mapping[str, Any]]], version: str,
          modules: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """The data file's document: contracts and exclusions sorted by kind then name."""
    operators: list[dict[str, Any]] = []
    excluded: list[dict[str, Any]] = []
    for path, entry in found:
        name, output = str(entry["op"]), " ".join(str(entry.get("output", "Tensor")).split())
        for kind in KINDS:
            maps = _maps(entry.get(kind))
            if not maps:
                continue
            spellings = _spellings(name, kind, modules)
            first = _first_output(output)
            if not spellings:
                why = ("no Python spelling: no " + (name if kind == "view" or name.endswith("_") else name + "_")
                       + " on paddle.Tensor, paddle or paddle.nn.functional")
            elif not any(m.split("->")[1].strip(" )") == first for m in maps):
                why = (f"no map names the first output {first!r}, the result {', '.join(spellings)} returns: "
                       f"{', '.join(maps)}")
            else:
                operators.append({"name": name, "kind": kind, "spellings": spellings, "maps": maps,
                                  "signature": f"{' '.join(str(entry['args']).split())} -> {output}",
                                  "file": path})
                continue
            excluded.append({"name": name, "kind": kind, "reason": why, "file": path})
    order = {kind: i for i, kind in enumerate(KINDS)}
    operators.sort(key=lambda o: (order[o["kind"]], o["name"]))
    excluded.sort(key=lambda o: (order[o["kind"]], o["name"]))
    return {
        "framework": "paddle",
        "version": version,
        "source": {
            "repo": REPO,
            "files": [{"path": p, "commit": c} for p, c, _ in SOURCES],
            "note": ("the op entries with an inplace: or view: map, read from the stored copies of these files "
                     "at these commits; those commits are not necessarily the v" + version + " tag, whose YAML "
                     "may differ. The CPU stride-kernel registry (paddle/phi/kernels/stride) is C++, not YAML: "
                     "paddle_strided.yaml holds its kernels. Spellings measured on the installed paddle " + version),
        },
        "operators": operators,
        "excluded": excluded,
    }


def keys(contract: Mapping[str, Any], aliases: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Vocabulary keys of a contract's spellings (conformance.declared.paddle_keys)."""
    from conformance.declared import paddle_keys

    return paddle_keys(contract["spellings"], aliases)


class PaddleContractsError(Exception):
    """The data file is missing or not what --write writes."""


NAME, SPELLING = PADDLE_NAME, PADDLE_SPELLING


def read(path: Path | None = None) -> dict[str, Any]:
    """The committed data (:data:`DATA` unless given), its shape checked: its names become
    vocabulary keys that a measurement looks up, never table entries."""
    from conformance.declared import load_data

    path = DATA if path is None else path
    document = load_data(path, PaddleContractsError, "run python -m conformance.tools.paddle_contracts --write where "
                                                     "paddle is installed")
    try:
        for contract in document["operators"]:
            if (contract["kind"] not in KINDS or not NAME.fullmatch(str(contract["name"]))
                    or not all(SPELLING.fullmatch(str(s)) for s in contract["spellings"])):
                raise PaddleContractsError(f"{path}: operator {contract['name']!r}: a kind of {', '.join(KINDS)}, "
                                           "an identifier and paddle spellings (paddle.N, paddle.Tensor.N, "
                                           "paddle.nn.functional.N) are required: write it again with python -m "
                                           "conformance.tools.paddle_contracts --write")
        str(document["version"])
        list(document["excluded"])
    except (KeyError, TypeError) as exc:
        raise PaddleContractsError(f"{path}: not what --write writes (missing or malformed {exc})") from None
    return dict(document)


def reach(document: Mapping[str, Any], cases: Sequence[Any]) -> list[str]:
    """Per kind: declared, reached by ``cases`` on the paddle adapter, and each not reached
    with why (conformance.tools.coverage.measure, as conformance contracts measures torch)."""
    from conformance import registry
    from conformance.adapters.paddle_adapter import INPLACE_ELEMENTWISE_ALIASES as aliases
    from conformance.source import Location
    from conformance.tools import coverage

    adapter = registry.get_adapter("paddle")
    lines = []
    for kind, listed in (("view", "views"), ("inplace", "inplace")):
        mine = [c for c in document["operators"] if c["kind"] == kind]
        reference = coverage.ReferenceList(
            path=str(DATA), framework="paddle", set=listed, title=f"Paddle's declared {kind} contracts",
            source=REPO, version=str(document["version"]),
            entries=tuple(coverage.Entry(name=c["name"], keys=keys(c, aliases), location=Location(str(DATA), 1, 1))
                          for c in mine))
        measured = coverage.measure(reference, cases, {"paddle": adapter})
        gaps = [c for c, m in zip(mine, measured.entries) if not m.covered]
        excluded = sum(1 for e in document["excluded"] if e["kind"] == kind)
        lines.append(f"{kind}: {len(mine) + excluded} declared, {len(mine)} with a Python spelling, "
                     f"{len(mine) - len(gaps)} reached by the corpus")
        lines += [f"  {c['name']} ({', '.join(keys(c, aliases))}): {m.gap()}"
                  for c, m in zip(mine, measured.entries) if not m.covered]
    return lines


def stale(document: Mapping[str, Any]) -> list[str]:
    """Where Paddle is installed: each committed operator's spellings, looked up again on it,
    in words where they differ (the data is a pull request's to change; its version must be
    the installed one). Empty where Paddle is not installed."""
    import importlib.util

    if importlib.util.find_spec("paddle") is None:
        return []
    version, modules = installed()
    problems = []
    if str(document["version"]) != version:
        problems.append(f"{DATA}: made on paddle {document['version']}, the installed one is {version}")
    for contract in document["operators"]:
        found = _spellings(str(contract["name"]), str(contract["kind"]), modules)
        if found != list(contract["spellings"]):
            problems.append(f"{DATA}: {contract['name']} ({contract['kind']}): spelled {found} on the installed "
                            f"paddle, not {list(contract['spellings'])}")
    return problems


def installed() -> tuple[str, tuple[tuple[str, Any], ...]]:
    """The installed Paddle's version and the modules a spelling is looked up on."""
    import paddle

    modules = (("paddle.Tensor", paddle.Tensor), ("paddle", paddle), ("paddle.nn.functional", paddle.nn.functional))
    return paddle.__version__.split("+", 1)[0], modules


def print_reach(reached: Callable[[Sequence[Any]], list[str]]) -> int:
    """--reach: the corpus under cases/, loaded, and the lines ``reached`` gives of it."""
    from conformance.tools import coverage

    cases, problems = coverage.corpus_cases(["cases"])
    print(f"corpus: {len(cases)} cases, {len(problems)} problems")
    print("\n".join(reached(cases)))
    return 0


def dump(document: Mapping[str, Any]) -> str:
    return COMMENT + yaml.safe_dump(dict(document), sort_keys=False, width=1 << 16, allow_unicode=True)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args not in (["--write"], ["--reach"]):
        print("usage: python -m conformance.tools.paddle_contracts --write | --reach", file=sys.stderr)
        return 2
    if args == ["--reach"]:
        return print_reach(lambda cases: reach(read(), cases))
    from conformance.report.outputs import write_files

    version, modules = installed()
    document = build(entries([s[2] for s in SOURCES]), version, modules)
    DATA.parent.mkdir(parents=True, exist_ok=True)
    write_files({DATA: dump(document)})
    for kind in KINDS:
        kept = sum(1 for o in document["operators"] if o["kind"] == kind)
        left = sum(1 for e in document["excluded"] if e["kind"] == kind)
        print(f"{kind}: {kept + left} declared, {kept} with a Python spelling, {left} excluded")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
