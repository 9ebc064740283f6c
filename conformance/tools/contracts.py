"""torch's declared alias contracts: which operators its schemas say alias an input, as data
(``conformance/data/contracts/torch.yaml``), and how far the corpus reaches them
(``conformance contracts``).

torch annotates aliasing in every operator schema (``torch._C._jit_get_all_schemas()``):
``Tensor(a)`` on a return that carries the alias set of an input is a view or may-alias
(``view``, ``reshape``, and ``Tensor(a -> *) self`` with a ``Tensor(a)[]`` return for the
list-returning ``split``), ``Tensor(a!) self`` is an in-place operator, and a keyword-only
``Tensor(a!) out`` an ``out=`` variant. The definition, applied to each ``aten::`` overload
that takes a tensor (the TorchScript list and dict builtins of the same namespace take none,
or take them inside a ``Dict``/``t[]``), in this order:

- **out**: a keyword-only tensor argument is written (``(a!)``);
- **inplace**: the first argument is ``self``, a tensor, and is written;
- **view**: nothing is written and some return names the alias set of a tensor argument;
- anything else that writes (``rrelu_with_noise``'s ``noise``) is none of the three.

An **operator** is a name of the ``aten`` namespace (``add_``, ``view``; ``add`` for
``add.out``) with its overloads of that kind. It is **public** when its name does not start
with ``_``, and **excluded**, with the reason measured on the build, when no Python spelling
reaches it (no attribute of the name on ``torch.Tensor``, ``torch`` or ``torch.nn.functional``,
nor, for ``linalg_``, ``special_`` and ``fft_`` names, on those modules) or it has no kernel
for a dense CPU tensor (neither a ``CPU`` nor a ``Composite*`` kernel: sparse, quantized,
MKLDNN-only, or CUDA-only here).

``python -m conformance.tools.contracts --introspect`` writes the data file from a fresh
process that imports torch; nothing else here imports a framework.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import yaml

from conformance.declared import DATA, KINDS, Contract, Contracts, ContractsError, Excluded, Overload, read

__all__ = ["DATA", "KINDS", "Contract", "Contracts", "ContractsError", "Excluded", "Overload", "read"]

MARK = "@@contracts@@"
# the dispatch keys whose kernel runs a dense CPU tensor (torch._C._dispatch_has_kernel_for_dispatch_key)
DENSE_CPU_KEYS = ("CPU", "CompositeImplicitAutograd", "CompositeExplicitAutograd",
                  "CompositeExplicitAutogradNonFunctional")
# the other keys reported, to say what an excluded operator does have a kernel for
OTHER_KEYS = ("CUDA", "SparseCPU", "SparseCsrCPU", "QuantizedCPU", "MkldnnCPU", "Meta")

# run in torch's own process: print the version and every aten overload classified
_INTROSPECT = r"""
import json, re, sys, warnings
warnings.simplefilter("ignore")
import torch

DENSE, OTHER, MARK = json.loads(sys.argv[1])
def has_kernel(qualified, key):
    # an operator registered with TorchScript only (aten::_grad_sum_to_size) is unknown to the dispatcher
    try:
        return torch._C._dispatch_has_kernel_for_dispatch_key(qualified, key)
    except RuntimeError:
        return False

def is_tensor(arg):
    return str(arg.type).startswith("Tensor")

def classify(schema):
    args = list(schema.arguments)
    if not any(is_tensor(a) for a in args):
        return None, None
    written = [a for a in args if a.alias_info is not None and a.alias_info.is_write]
    out = [a for a in written if a.kwarg_only and is_tensor(a)]
    if out:
        return "out", out[0].name
    first = args[0] if args else None
    if first is not None and first.name == "self" and is_tensor(first) and first.alias_info is not None \
            and first.alias_info.is_write:
        return "inplace", "self"
    if written:
        return None, None
    returned = set(re.findall(r"Tensor\((\w+)\)", str(schema).split(" -> ", 1)[1]))
    for a in args:
        if is_tensor(a) and a.alias_info is not None and set(a.alias_info.before_set) & returned:
            return "view", a.name
    return None, None

operators = {}
for schema in torch._C._jit_get_all_schemas():
    namespace, name = schema.name.split("::", 1)
    if namespace != "aten":
        continue
    kind, aliased = classify(schema)
    if kind is None:
        continue
    qualified = schema.name + ("." + schema.overload_name if schema.overload_name else "")
    keys = [k for k in DENSE + OTHER if has_kernel(qualified, k)]
    entry = operators.setdefault((name, kind), {"name": name, "kind": kind, "overloads": []})
    entry["overloads"].append({"overload": schema.overload_name, "schema": str(schema), "aliased": aliased,
                               "kernels": keys})
NAMESPACES = (("linalg_", torch.linalg, "torch.linalg."), ("special_", torch.special, "torch.special."),
              ("fft_", torch.fft, "torch.fft."))
for entry in operators.values():
    name = entry["name"]
    spellings = []
    found = getattr(torch.Tensor, name, None)
    if callable(found):
        spellings.append("torch.Tensor." + name)
    elif found is not None:  # a property (mT, mH, real): read, not called
        spellings.append("torch.Tensor." + name + " (attribute)")
    if callable(getattr(torch, name, None)):
        spellings.append("torch." + name)
    if callable(getattr(torch.nn.functional, name, None)):
        spellings.append("torch.nn.functional." + name)
    for prefix, module, shown in NAMESPACES:
        if name.startswith(prefix) and callable(getattr(module, name[len(prefix):], None)):
            spellings.append(shown + name[len(prefix):])
    entry["spellings"] = spellings
print(MARK + json.dumps({"version": torch.__version__, "operators": list(operators.values())}))
"""


def introspect() -> dict[str, Any]:
    """``{"version": ..., "operators": [...]}`` from a fresh process that imports torch."""
    env = dict(os.environ)
    done = subprocess.run([sys.executable, "-c", _INTROSPECT, json.dumps([DENSE_CPU_KEYS, OTHER_KEYS, MARK])],
                          capture_output=True, text=True, env=env, timeout=600)
    for line in reversed(done.stdout.splitlines()):
        if line.startswith(MARK):
            found: dict[str, Any] = json.loads(line[len(MARK):])
            return found
    raise RuntimeError("torch could not be introspected here:\n" + done.stderr[-2000:])


def exclusion(operator: Mapping[str, Any]) -> str | None:
    """Why an introspected operator is left out of the contracts, or None: the reason is
    measured (its name, its Python spellings, its kernels on this build)."""
    name = operator["name"]
    if name.startswith("_"):
        return "private: the name starts with _"
    if not operator["spellings"]:
        return ("no Python binding: no attribute of this name on torch.Tensor, torch, torch.nn.functional, "
                "nor (for linalg_, special_, fft_) on torch.linalg, torch.special, torch.fft")
    kernels = {k for o in operator["overloads"] for k in o["kernels"]}
    if not kernels & set(DENSE_CPU_KEYS):
        others = sorted(kernels)
        return ("no kernel for a dense CPU tensor: kernels only for " + ", ".join(others) if others
                else "no kernel for a dense CPU tensor in this build (none registered: CUDA-only or unbuilt)")
    return None


def release(version: str) -> str:
    return version.split("+", 1)[0]


def build(found: Mapping[str, Any]) -> dict[str, Any]:
    """The data file's document from an introspection: the contracts kept, the excluded
    operators with their reasons, both sorted by kind then name."""
    order = {kind: i for i, kind in enumerate(KINDS)}
    operators = sorted(found["operators"], key=lambda o: (order[o["kind"]], o["name"]))
    contracts, excluded = [], []
    for operator in operators:
        why = exclusion(operator)
        overloads = [{"overload": o["overload"], "schema": o["schema"], "aliased": o["aliased"]}
                     for o in sorted(operator["overloads"], key=lambda o: o["overload"])]
        if why is not None:
            excluded.append({"name": operator["name"], "kind": operator["kind"], "reason": why})
            continue
        entry: dict[str, Any] = {"name": operator["name"], "kind": operator["kind"]}
        entry["spellings"] = operator["spellings"]
        entry["overloads"] = overloads
        contracts.append(entry)
    version = release(found["version"])
    return {
        "framework": "torch",
        "version": version,
        "source": f"introspection of torch._C._jit_get_all_schemas() in torch {version} "
                  "(python -m conformance.tools.contracts --introspect)",
        "operators": contracts,
        "excluded": excluded,
    }


COMMENT = ("# torch's declared alias contracts, made by python -m conformance.tools.contracts --introspect "
           "(the definition: conformance/tools/contracts.py, docs/contracts.md); do not edit by hand\n")


def dump(document: Mapping[str, Any]) -> str:
    return COMMENT + yaml.safe_dump(dict(document), sort_keys=False, width=1 << 16, allow_unicode=True)


# -- reached by the corpus (no framework) ----------------------------------------------------

# what a case must assert, together with the others calling the operator, to reach an out=
# contract: that the result is the out tensor, by identity or memory
OUT_REQUIRED = ("same_object", "shares_memory", "same_storage")


@dataclass(frozen=True)
class Reach:
    contract: Contract
    cases: tuple[str, ...]  # the ids of the cases that reach it
    gap: str  # why it is not reached ('' when it is)

    @property
    def reached(self) -> bool:
        return not self.gap


def measure(contracts: Contracts, cases: Sequence[Any], adapter: Any) -> dict[str, list[Reach]]:
    """Per kind, each contract with the corpus cases that reach it on torch. A view or in-place
    contract is measured as ``conformance coverage`` measures an entry of torch's view and
    in-place lists (conformance.tools.coverage.measure: a case calls one of its keys, applies on
    torch, and asserts an aliasing relation, resp. identity, memory and the version counter);
    an out= contract by a case that passes ``out=`` to its function and asserts that the
    result is the out tensor (:data:`OUT_REQUIRED`)."""
    from conformance.source import Location
    from conformance.tools import coverage

    where = Location(str(DATA), 1, 1)
    found: dict[str, list[Reach]] = {}
    for kind, listed in (("view", "views"), ("inplace", "inplace")):
        mine = contracts.of_kind(kind)
        reference = coverage.ReferenceList(
            path=str(DATA), framework="torch", set=listed, title=f"torch's declared {kind} contracts",
            source=contracts.source, version=contracts.version,
            entries=tuple(coverage.Entry(name=c.name, keys=c.keys, location=where) for c in mine))
        measured = coverage.measure(reference, cases, {"torch": adapter})
        found[kind] = [Reach(c, tuple(case.id for case in m.cases), "" if m.covered else
                             ("no vocabulary key: spelled only " + ", ".join(c.spellings) if not c.keys else m.gap()))
                       for c, m in zip(mine, measured.entries)]
    found["out"] = [_reach_out(c, cases, adapter) for c in contracts.of_kind("out")]
    try:  # an out= operator the sampling gave no call says why (conformance/tools/out_calls.py)
        from conformance.tools.out_calls import OutCallsError
        from conformance.tools.out_calls import read as read_calls

        left = read_calls().left
    except OutCallsError:
        left = {}
    found["out"] = [Reach(r.contract, r.cases, f"{r.gap}; no sampled call: {left[r.contract.name]}")
                    if r.gap and r.contract.name in left else r for r in found["out"]]
    return found


def _reach_out(contract: Contract, cases: Sequence[Any], adapter: Any) -> Reach:
    from conformance.ir import calls
    from conformance.tools import coverage

    keys = [k for k in contract.keys if k.startswith("fn:")]
    if not keys:
        return Reach(contract, (), "no vocabulary key: spelled only " + ", ".join(contract.spellings))
    usable = [k for k in keys if adapter.lacks(k) is None]
    if not usable:
        return Reach(contract, (), f"not in the vocabulary ({adapter.lacks(keys[0])})")
    calling = [case for case in cases
               if any(op.key in usable and any(name == "out" for name, _ in op.kwargs)
                      for step in case.steps for op in calls(step))
               and coverage.applies(case, "torch", adapter)]
    if not calling:
        return Reach(contract, (), "no case calls it with out=")
    asserting = tuple(case.id for case in calling if set(case.expect_for("torch").checks) & set(OUT_REQUIRED))
    return Reach(contract, asserting, "" if asserting else "no case asserts " + " or ".join(OUT_REQUIRED))


def summary(found: Mapping[str, Sequence[Reach]]) -> list[str]:
    """Per kind: declared, reached, and the names of those not reached with why."""
    lines = []
    for kind in KINDS:
        reaches = found.get(kind, ())
        reached = sum(r.reached for r in reaches)
        lines.append(f"{kind}: {len(reaches)} declared, {reached} reached by the corpus, "
                     f"{len(reaches) - reached} not reached")
        lines += [f"  {r.contract.name}: {r.gap}" for r in reaches if not r.reached]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args != ["--introspect"]:
        print("usage: python -m conformance.tools.contracts --introspect  (writes " + str(DATA) + ")",
              file=sys.stderr)
        return 2
    from conformance.report.outputs import write_files

    document = build(introspect())
    DATA.parent.mkdir(parents=True, exist_ok=True)
    write_files({DATA: dump(document)})
    for kind in KINDS:
        kept = sum(1 for o in document["operators"] if o["kind"] == kind)
        left = sum(1 for e in document["excluded"] if e["kind"] == kind)
        print(f"{kind}: {kept} public operators declared, {left} excluded")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
