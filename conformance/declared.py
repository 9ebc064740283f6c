"""torch's declared alias contracts as read from ``conformance/data/contracts/torch.yaml``:
framework-free values, for ``conformance contracts`` (conformance/tools/contracts.py, which
also writes the file and says what each kind means) and for the torch adapter, whose table
reaches the operators the data names (docs/contracts.md). Imports no framework."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

DATA = Path(__file__).resolve().parent / "data" / "contracts" / "torch.yaml"
KINDS = ("view", "inplace", "out")
# torch's modules whose functions are aten operators named with the module as a prefix
# (torch.linalg.cholesky is aten::linalg_cholesky)
NAMESPACES = ("linalg", "special", "fft")
# an operator's name becomes a table entry of the torch adapter (a method or torch.NAME): a
# public identifier only, whatever the file says (it is data a pull request can change; CI's
# 'conformance contracts --check' also compares it with what the installed torch declares)
PUBLIC_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


class ContractsError(Exception):
    """The data file is missing or not what --introspect writes."""


@dataclass(frozen=True)
class Overload:
    overload: str
    schema: str
    aliased: str  # the argument the result may alias (view), that is written (inplace, out)


@dataclass(frozen=True)
class Contract:
    name: str
    kind: str  # view, inplace or out
    spellings: tuple[str, ...]  # the Python names that reach it: torch.Tensor.view, torch.view, ...
    overloads: tuple[Overload, ...]

    @property
    def keys(self) -> tuple[str, ...]:
        """The vocabulary keys its spellings are: ``torch.Tensor.NAME`` is ``method:NAME``
        (``attr:NAME`` for a property), ``torch.NAME`` and ``torch.nn.functional.NAME`` are
        ``fn:NAME``; a torch.linalg / special / fft spelling (``linalg_cholesky`` is
        ``torch.linalg.cholesky``) is ``fn:NAME`` too, named after the operator. An out=
        variant is the function called with ``out=``: its methods take no ``out``."""
        keys = []
        namespaced = {f"torch.{prefix}.{self.name[len(prefix) + 1:]}" for prefix in NAMESPACES
                      if self.name.startswith(prefix + "_")}
        for spelling in self.spellings:
            if spelling == f"torch.Tensor.{self.name} (attribute)":
                keys.append("attr:" + self.name)
            elif spelling == f"torch.Tensor.{self.name}" and self.kind != "out":
                keys.append("method:" + self.name)
            elif spelling in (f"torch.{self.name}", f"torch.nn.functional.{self.name}"):
                keys.append("fn:" + self.name)
            elif spelling in namespaced:
                keys.append("fn:" + self.name)
        return tuple(dict.fromkeys(keys))


@dataclass(frozen=True)
class Excluded:
    name: str
    kind: str
    reason: str


@dataclass(frozen=True)
class Contracts:
    framework: str
    version: str
    source: str
    operators: tuple[Contract, ...]
    excluded: tuple[Excluded, ...]

    def of_kind(self, kind: str) -> list[Contract]:
        return [c for c in self.operators if c.kind == kind]


def load_data(path: Path, error: type[Exception], remedy: str) -> Any:
    """A committed data file's YAML, read safely; ``error`` says what went wrong, with
    ``remedy`` (how to write the file again) where it cannot be read."""
    try:
        # libyaml's safe loader: torch.yaml is 0.2 MB, which the pure-Python one takes 0.5 s to read
        return yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    except OSError as exc:
        raise error(f"{path}: cannot be read ({exc.strerror}): {remedy}") from None
    except yaml.YAMLError as exc:
        raise error(f"{path}: not YAML ({exc})") from None


def read(path: Path = DATA) -> Contracts:
    data = load_data(path, ContractsError, "run python -m conformance.tools.contracts --introspect where torch is "
                                           "installed")
    try:
        operators = tuple(
            Contract(name=o["name"], kind=o["kind"], spellings=tuple(o["spellings"]),
                     overloads=tuple(Overload(v["overload"], v["schema"], v["aliased"]) for v in o["overloads"]))
            for o in data["operators"])
        excluded = tuple(Excluded(e["name"], e["kind"], e["reason"]) for e in data["excluded"])
        document = Contracts(str(data["framework"]), str(data["version"]), str(data["source"]), operators, excluded)
    except (KeyError, TypeError) as exc:
        raise ContractsError(f"{path}: not what --introspect writes (missing or malformed {exc}): write it again "
                             "with python -m conformance.tools.contracts --introspect") from None
    unknown = sorted({c.kind for c in operators} - set(KINDS))
    if unknown:
        raise ContractsError(f"{path}: unknown kind {unknown[0]!r}: the kinds are {', '.join(KINDS)}")
    odd = sorted(c.name for c in operators if not PUBLIC_NAME.fullmatch(c.name))
    if odd:
        raise ContractsError(f"{path}: operator name {odd[0]!r} is no public identifier (letters, digits, "
                             "'_', not first): write the file again with python -m conformance.tools.contracts "
                             "--introspect")
    return document


@functools.cache
def packaged() -> Contracts:
    """The committed data, read once per process."""
    return read(DATA)


# Paddle's declared contracts: the inplace:/view: maps of its operator YAML (written by
# conformance/tools/paddle_contracts.py) and its CPU stride kernels (conformance/tools/
# paddle_strided.py); read here, framework-free, for those tools and the site's operation pages
PADDLE_DATA = DATA.parent / "paddle.yaml"
PADDLE_STRIDED_DATA = DATA.parent / "paddle_strided.yaml"
# what a Paddle data file's names and spellings may be (the files are a pull request's to change)
PADDLE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
PADDLE_SPELLING = re.compile(r"paddle(\.Tensor|\.nn\.functional)?\.[A-Za-z][A-Za-z0-9_]*")


def paddle_keys(spellings: Any, aliases: Any = None) -> tuple[str, ...]:
    """Vocabulary keys of Paddle spellings: paddle.Tensor.N is method:N, paddle.N and
    paddle.nn.functional.N are fn:N; with ``aliases`` (the paddle adapter's torch name ->
    Paddle method, ``eq_`` -> ``equal_``), also method:T for each torch name T of a method N."""
    found = []
    for spelling in spellings:
        module, _, name = str(spelling).rpartition(".")
        found.append(("method:" if module == "paddle.Tensor" else "fn:") + name)
        if module == "paddle.Tensor":
            found += sorted("method:" + torch for torch, mine in (aliases or {}).items() if mine == name)
    return tuple(dict.fromkeys(found))


@dataclass(frozen=True)
class PaddleDeclaration:
    """One Paddle operator's declared alias contract: ``source`` says where (its operator YAML's
    map, or a CPU stride kernel), ``kind`` is view or inplace."""
    name: str
    kind: str
    source: str
    detail: tuple[str, ...]  # the maps ("(x -> out)"), or the stride kernel's name
    spellings: tuple[str, ...]


@functools.cache
def paddle_packaged() -> tuple[str, tuple[PaddleDeclaration, ...]]:
    """Paddle's version and its declarations from the two committed files, read once per
    process; a file that cannot be read is left out here, and nothing is given where a name or
    spelling is not what the tools write (``conformance contracts --check`` reports either,
    and each file's own reader says what is wrong)."""
    found: list[PaddleDeclaration] = []
    version = ""
    for path, part in ((PADDLE_DATA, "operators"), (PADDLE_STRIDED_DATA, "kernels")):
        try:
            document = load_data(path, ContractsError, "")
            version = str(document["version"])
            for entry in document[part]:
                if part == "operators":
                    found.append(PaddleDeclaration(str(entry["name"]), str(entry["kind"]), "operator YAML",
                                                   tuple(map(str, entry["maps"])), tuple(map(str, entry["spellings"]))))
                else:
                    found.append(PaddleDeclaration(str(entry["name"]), "view", "stride kernel",
                                                   (str(entry["name"]),), tuple(map(str, entry["spellings"]))))
        except (ContractsError, KeyError, TypeError):
            continue
    if not all(PADDLE_NAME.fullmatch(d.name) and all(map(PADDLE_SPELLING.fullmatch, d.spellings)) for d in found):
        return "", ()  # not what the tools write: nothing of it is shown
    return version, tuple(found)
