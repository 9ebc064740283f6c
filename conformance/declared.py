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
