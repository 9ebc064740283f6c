"""The in-place surface of the tensor types: the reference lists
``conformance/data/coverage/{torch,paddle,mindspore}-inplace.yaml``, made by introspection.

``python -m conformance.tools.inplace_surface`` asks each framework, in a fresh Python process
of its own (MindSpore 2.10 cannot be imported into a process that imported Paddle or torch
first), for the public methods of its tensor type whose names end in ``_``, and rewrites the
three lists from what they say, merged with what the lists already hold:

- the names are the introspected ones: a new name is added, a vanished one dropped;
- the curated fields of an entry (``counterparts``, ``no_counterpart``, ``note``, ``source``)
  are hand-edited data and kept as they are. A new torch entry gets only the counterparts
  that the same name gives (``paddle.Tensor.add_`` for ``add_``); any other counterpart (an
  alias of the same meaning, ``equal_`` for ``eq_``) or a ``no_counterpart`` reason is for a
  person to write, and the tool lists the torch entries that have neither;
- ``keys`` are derived, never curated: a torch entry's is ``method:<name>``; a Paddle or
  MindSpore entry's are the torch names whose counterpart in that framework it is (the keys of
  the neutral vocabulary that call it in that adapter's table), else ``method:<name>``.

A framework that is not installed (or fails to import) keeps its list as it is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from conformance.report.outputs import write_files

FRAMEWORKS = {  # framework -> (module, the tensor type's qualified name, distribution)
    "torch": ("torch", "torch.Tensor", "torch"),
    "paddle": ("paddle", "paddle.Tensor", "paddlepaddle"),
    "mindspore": ("mindspore", "mindspore.Tensor", "mindspore"),
}
OTHERS = ("paddle", "mindspore")   # the frameworks a torch entry names counterparts in
CURATED = ("counterparts", "no_counterpart", "note", "source")
FIELD_ORDER = ("name", "keys") + CURATED
DATA = Path(__file__).resolve().parent.parent / "data" / "coverage"
MARK = "@@inplace-surface@@"

# run in the framework's own process: print the version and the public in-place methods
_INTROSPECT = r"""
import json, os, sys, warnings
from conformance.report.outputs import write_files
os.environ.setdefault("GLOG_minloglevel", "2")
warnings.simplefilter("ignore")
module = __import__(sys.argv[1])
tensor = module.Tensor
names = sorted(n for n in dir(tensor)
               if n.endswith("_") and not n.startswith("_") and callable(getattr(tensor, n, None)))
print(sys.argv[2] + json.dumps({"version": module.__version__, "names": names}))
"""


def introspect(framework: str) -> dict[str, Any] | None:
    """``{"version": ..., "names": [...]}`` from a fresh process, or None where the framework
    cannot be imported (not installed, or its import fails)."""
    module = FRAMEWORKS[framework][0]
    env = dict(os.environ, GLOG_minloglevel="2")
    done = subprocess.run([sys.executable, "-c", _INTROSPECT, module, MARK], capture_output=True,
                          text=True, env=env, timeout=600)
    for line in reversed(done.stdout.splitlines()):
        if line.startswith(MARK):
            return json.loads(line[len(MARK):])
    return None


def release(version: str) -> str:
    """The release without a local build tag: ``2.13.0+cpu`` is ``2.13.0``."""
    return version.split("+", 1)[0]


def merge(existing: Iterable[Mapping[str, Any]] | None, names: Iterable[str],
          same_name: Mapping[str, Iterable[str]] | None = None) -> list[dict[str, Any]]:
    """The entries for ``names`` (sorted): each name's existing entry with its curated fields
    kept, a new name as a new entry whose ``counterparts`` are the frameworks of ``same_name``
    (framework -> its names) that have a method of the same name. Names not in ``names`` are
    dropped. ``keys`` are not set here (``derive_keys``)."""
    old = {entry["name"]: entry for entry in existing or ()}
    others = {fw: set(ns) for fw, ns in (same_name or {}).items()}
    merged = []
    for name in sorted(set(names)):
        entry: dict[str, Any] = {"name": name}
        if name in old:
            entry.update({k: old[name][k] for k in CURATED if k in old[name]})
        else:
            matches = {fw: name for fw in sorted(others) if name in others[fw]}
            if matches:
                entry["counterparts"] = matches
        merged.append(entry)
    return merged


def derive_keys(entries: list[dict[str, Any]], framework: str,
                torch_entries: Iterable[Mapping[str, Any]]) -> None:
    """Set each entry's ``keys``: the vocabulary keys that call it in ``framework``'s table."""
    callers: dict[str, set[str]] = {}
    if framework != "torch":
        for t in torch_entries:
            counterpart = (t.get("counterparts") or {}).get(framework)
            if counterpart:
                callers.setdefault(counterpart, set()).add("method:" + t["name"])
    for entry in entries:
        entry["keys"] = sorted(callers.get(entry["name"], ())) or ["method:" + entry["name"]]


def review(torch_entries: Iterable[Mapping[str, Any]], names: Mapping[str, set[str]]) -> list[str]:
    """What a person should look at: torch entries with neither counterparts nor a reason,
    counterparts naming a method the framework no longer has, and same-named methods of
    another framework that an entry does not name and does not explain in a note."""
    notes = []
    for entry in torch_entries:
        name, counterparts = entry["name"], entry.get("counterparts") or {}
        if not counterparts and not entry.get("no_counterpart"):
            notes.append(f"{name}: neither counterparts nor no_counterpart (curate it)")
        for fw, other in counterparts.items():
            if fw in names and "." not in other and other not in names[fw]:
                notes.append(f"{name}: counterpart {fw} {other} is not a method of {fw}'s tensor")
        for fw in OTHERS:
            if fw in names and name in names[fw] and counterparts.get(fw) != name and not entry.get("note"):
                notes.append(f"{name}: {fw} has a method of the same name, which the entry does not name")
    return notes


def load(path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _flow(value: Any, inner: bool = False) -> str:
    """One YAML value on one line: mappings and lists in flow style, a string plain where it
    reads back as itself (``[method:add_]``), else quoted."""
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_flow(k, True)}: {_flow(v, True)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v, True) for v in value) + "]"
    if isinstance(value, str) and value and _reads_back(value, inner):
        return value
    text = yaml.safe_dump([value], default_flow_style=True, width=1 << 30, allow_unicode=True).strip()
    return text[1:-1]


def _reads_back(text: str, inner: bool) -> bool:
    probe = f"k: [{text}]" if inner else f"k: {text}"
    try:
        loaded = yaml.safe_load(probe)["k"]
    except yaml.YAMLError:
        return False
    return (loaded == [text]) if inner else (loaded == text)


def dump(document: Mapping[str, Any], comment: str) -> str:
    lines = [f"# {comment}"]
    for key in ("framework", "set", "title", "source"):
        lines.append(f"{key}: {_flow(document[key])}")
    lines.append(f"version: {json.dumps(str(document['version']))}")
    if document.get("target") is not None:
        lines.append(f"target: {int(document['target'])}")
    lines.append("operations:")
    for entry in document["operations"]:
        first = True
        for field in FIELD_ORDER + tuple(k for k in entry if k not in FIELD_ORDER):
            if field in entry:
                lines.append(f"  {'- ' if first else '  '}{field}: {_flow(entry[field])}")
                first = False
    return "\n".join(lines) + "\n"


def build(framework: str, found: Mapping[str, Any], existing: Mapping[str, Any] | None,
          all_names: Mapping[str, set[str]], torch_entries: list[dict[str, Any]] | None) -> dict[str, Any]:
    module, qualified, _ = FRAMEWORKS[framework]
    version = release(found["version"])
    same_name = {fw: all_names[fw] for fw in OTHERS if fw in all_names} if framework == "torch" else None
    entries = merge((existing or {}).get("operations"), found["names"], same_name)
    derive_keys(entries, framework, torch_entries if torch_entries is not None else entries)
    return {
        "framework": framework,
        "set": "inplace",
        "title": f"the public in-place methods of {qualified} (names ending in _)",
        "source": f"introspection of {qualified} in {module} {version} (python -m conformance.tools.inplace_surface)",
        "version": version,
        # the percentage the corpus must cover (conformance coverage --check): hand-set, kept
        "target": (existing or {}).get("target"),
        "operations": entries,
    }


COMMENT = ("public methods of {qualified} whose names end in _, introspected by python -m "
           "conformance.tools.inplace_surface; counterparts, no_counterpart, note and source are hand-curated")


def main(argv: list[str] | None = None) -> int:
    DATA.mkdir(parents=True, exist_ok=True)
    found = {fw: introspect(fw) for fw in FRAMEWORKS}
    names = {fw: set(f["names"]) for fw, f in found.items() if f}
    for fw, f in found.items():
        if f is None:
            print(f"{fw}: not importable here; its list is kept as it is", file=sys.stderr)
    path = {fw: DATA / f"{fw}-inplace.yaml" for fw in FRAMEWORKS}
    torch_doc = load(path["torch"])
    found_torch = found["torch"]
    if found_torch:
        torch_doc = build("torch", found_torch, torch_doc, names, None)
        write_files({path["torch"]: dump(torch_doc, COMMENT.format(qualified="torch.Tensor"))})
    torch_entries = (torch_doc or {}).get("operations") or []
    for fw in OTHERS:
        found_fw = found[fw]
        if found_fw:
            doc = build(fw, found_fw, load(path[fw]), names, torch_entries)
            write_files({path[fw]: dump(doc, COMMENT.format(qualified=FRAMEWORKS[fw][1]))})
    for line in review(torch_entries, names):
        print("review:", line, file=sys.stderr)
    for fw, f in found.items():
        if f:
            print(f"{fw} {release(f['version'])}: {len(f['names'])} in-place methods -> {path[fw]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
