"""A case's ``steps``: the list of step texts and blocks, each text parsed into the step IR
(:mod:`conformance.load.steps`), names defined before use; then the operations and strings
the steps use checked against what the adapters know."""

from __future__ import annotations

from typing import Any, Collection

from conformance.ir import Step, names_bound, names_read
from conformance.load import fields
from conformance.load.steps import BLOCKS, parse_step_uses
from conformance.load.yamlsrc import YList, YMap
from conformance.model import DEVICE_NAME, DTYPES
from conformance.source import CaseFormatError

MAX_STEPS = 200


class StepListReader:
    """Reads one case's steps, keeping what each step needs for the checks that follow."""

    def __init__(self) -> None:
        # each step text read, with the operation-table keys it needs (in the order written)
        self.step_operations: list[tuple[Step, set[str]]] = []
        # each step text read, with the strings it passes
        self.step_strings: list[tuple[Step, set[str]]] = []

    def read(self, m: YMap, given: set[str]) -> list[Step]:
        raw = m["steps"]
        if not isinstance(raw, YList) or not raw:
            raise CaseFormatError(m.where("steps"), "'steps' must be a non-empty list",
                                  "e.g. steps: ['y = x.add_(1)']")
        # counted before any step text is parsed, so that a huge list costs no parsing
        total = _count_steps(raw)
        if total > MAX_STEPS:
            raise CaseFormatError(m.where("steps"), f"a case has at most {MAX_STEPS} steps ({total} given)",
                                  "split it into several cases")
        return self.step_list(raw, set(given), [0])

    def step_list(self, raw: YList, defined: set[str], counter: list[int]) -> list[Step]:
        out = []
        for index, item in enumerate(raw):
            loc = raw.where(index)
            if isinstance(item, str):
                counter[0] += 1
                step, reads, operations, strings = parse_step_uses(item, counter[0], loc, defined)
                if not reads <= defined:
                    undefined = next(ref.name for ref in names_read(step) if ref.name not in defined)
                    hint = fields.did_you_mean(undefined, defined) or (
                        "define it under 'given' or assign it in an earlier step")
                    raise CaseFormatError(loc, f"in step {item!r}: {undefined!r} is not defined", hint, code="CF002")
                defined.update(names_bound(step))
                self.step_operations.append((step, operations))
                if strings:
                    self.step_strings.append((step, strings))
                out.append(step)
            elif isinstance(item, YMap) and len(item) == 1:
                (block, body), = item.items()
                if block not in BLOCKS:
                    raise CaseFormatError(item.where(block), f"unknown block {block!r}",
                                          fields.did_you_mean(block, BLOCKS) or f"blocks: {', '.join(BLOCKS)}")
                if not isinstance(body, YList) or not body:
                    raise CaseFormatError(item.where(block), f"'{block}' must hold a non-empty list of steps")
                inner = self.step_list(body, defined, counter)
                out.append(Step(number=0, text=block, kind="block", location=loc, block=block, body=tuple(inner)))
            else:
                raise CaseFormatError(loc, f"a step must be a string or a block, got {fields.kind_of(item)}",
                                      "write the step as text, e.g. - y = x.add_(1); or a block: - no_grad: [...]")
        return out

    def check_operations(self, known: Collection[str]) -> None:
        for step, operations in self.step_operations:
            for key in sorted(operations):
                if key not in known:
                    prefix, _, name = key.partition(":")
                    same_kind = [k.partition(":")[2] for k in known if k.startswith(prefix + ":")]
                    hint = fields.did_you_mean(name, same_kind) or \
                        "see docs/operations.md for the operations adapters define"
                    raise CaseFormatError(step.location, f"in step {step.text!r}: unknown operation "
                                          f"{_describe_op(key)}: no adapter defines it", hint, code="CF004")

    def check_strings(self, declared: Collection[str]) -> None:
        """A string in a step names something: a dtype, a device, or a name an adapter
        declares. Nothing else reaches an adapter, so no case string is ever looked up on a
        framework module or parsed by a framework's dtype parser."""
        for step, strings in self.step_strings:
            for text in sorted(strings):
                if text in DTYPES or DEVICE_NAME.fullmatch(text) or text in declared:
                    continue
                known = [*DTYPES, "cpu", "cuda", *declared]
                hint = fields.did_you_mean(text, known) or \
                    f"a string in a step is a dtype ({', '.join(DTYPES)}) or a device (cpu, cuda, cuda:N)"
                raise CaseFormatError(step.location, f"in step {step.text!r}: unknown string {text[:60]!r}: not a "
                                      "dtype or a device", hint, code="CF011")


def _count_steps(raw: Any) -> int:
    """Step texts in a step list, blocks included (the nesting is bounded by the YAML reader)."""
    if isinstance(raw, str):
        return 1
    if isinstance(raw, YList):
        return sum(_count_steps(item) for item in raw)
    if isinstance(raw, YMap):
        return sum(_count_steps(body) for body in raw.values())
    return 0


def _describe_op(key: str) -> str:
    prefix, _, name = key.partition(":")
    return {
        "method": f"method '.{name}()'", "fn": f"function '{name}()'", "attr": f"attribute '.{name}'",
        "setattr": f"attribute assignment '.{name} = ...'", "block": f"block '{name}'",
        "call": "calling a value",
    }.get(prefix, key)
