"""A case's ``steps``: the list of step texts and blocks, each text parsed into the step IR
(:mod:`conformance.load.steps`), names defined before use; then the operations and strings
the steps use checked against what the adapters know."""

from __future__ import annotations

import re
from typing import Any, Collection

from conformance import rules
from conformance.ir import Const, Step, names_bound, names_read
from conformance.load.steps import BLOCKS, names_assigned, parse_step_uses
from conformance.model import DEVICE_NAME, DTYPES
from conformance.source import CaseFormatError, Location
from conformance.yamlvalues import fields
from conformance.yamlvalues.yamlsrc import YList, YMap

MAX_STEPS = 200


class StepListReader:
    """Reads one case's steps, keeping what each step needs for the checks that follow.

    Each step is read on its own and its mistakes added to ``errors``; a step that cannot
    be read stays in the list as a placeholder, so that the steps after it keep their
    numbers and an expectation can still name it (by number or text). A step gets the
    errors of its first kind of problem only, in this order: its text (one error), the
    names it reads that nothing defines (one each), the first operation no adapter
    defines, the first string that names nothing; what comes later in that order is
    mostly the same mistake seen again (the methods of an undefined name, the arguments of
    an unknown operation). So that one mistake is reported once, not again at every use
    of what it would have defined:

    - a name no input or earlier step defines is reported at its first use only, then
      taken as defined;
    - a step that cannot be read still defines the names it assigns, as far as its text
      tells them (:func:`conformance.load.steps.names_assigned`); where it cannot tell
      (and for ``steps`` that cannot be read at all), the names are *open* from there on
      (:attr:`open`): no later use of a name is reported."""

    def __init__(self, errors: list[CaseFormatError]) -> None:
        self.errors = errors
        # each step text read, with the operation-table keys it needs (in the order written)
        self.step_operations: list[tuple[Step, set[str]]] = []
        # each step text read, with the strings it passes
        self.step_strings: list[tuple[Step, set[str]]] = []
        self.defined: set[str] = set()  # every name defined (or reported undefined) so far
        self.open = False  # a step whose names cannot be told was met: names are no longer checked
        self.read_all = True  # False: 'steps' could not be read, so steps are not known either

    def read(self, m: YMap, given: set[str] | None, key: str = "steps") -> list[Step]:
        """The steps (placeholders for those in error); ``given``: the names of the inputs
        (None: unknown, so names are open from the start). ``key``: the case's key that
        holds them (``steps``, or ``functional_steps``, read alike)."""
        self.defined = set(given or ())
        self.open = given is None
        if key not in m:  # (the case's error)
            self.open, self.read_all = True, False
            return []
        raw = m[key]
        if not isinstance(raw, YList) or not raw:
            self.open, self.read_all = True, False
            self.errors.append(fields.not_a_list(raw, m.where(key), f"'{key}'", "be a non-empty list",
                                          f"e.g. {key}: ['y = x.add_(1)']"))
            return []
        # counted before any step text is parsed, so that a huge list costs no parsing
        total = _count_steps(raw)
        if total > MAX_STEPS:
            self.open, self.read_all = True, False
            self.errors.append(CaseFormatError(m.where(key), f"a case has at most {MAX_STEPS} steps ({total} "
                                               "given)", "split it into several cases"))
            return []
        return self.step_list(raw, [0])

    def step_list(self, raw: YList, counter: list[int]) -> list[Step]:
        out = []
        defined = self.defined
        for index, item in enumerate(raw):
            loc = raw.where(index)
            if isinstance(item, str):
                counter[0] += 1
                try:
                    step, reads, operations, strings = parse_step_uses(item, counter[0], loc, defined)
                except CaseFormatError as exc:  # (one error: the step's text)
                    self.errors.append(fields.StepText(item, loc, exc.location, exc.message, exc.hint, exc.code))
                    out.append(self.placeholder(item, counter[0], loc))
                    continue
                out.append(step)
                if not reads <= defined and not self.open:
                    for undefined in dict.fromkeys(ref.name for ref in names_read(step) if ref.name not in defined):
                        hint = _module_hint(undefined, item) or fields.did_you_mean(undefined, defined) or (
                            "define it under 'given' or assign it in an earlier step")
                        self.errors.append(CaseFormatError(loc, f"in step {item!r}: {undefined!r} is not defined",
                                                           hint, code=rules.UNDEFINED_NAME.code))
                        defined.add(undefined)  # reported once, at its first use
                    defined.update(names_bound(step))
                    continue  # (its operations and strings are not checked: the names are its error)
                defined.update(names_bound(step))
                self.step_operations.append((step, operations))
                if strings:
                    self.step_strings.append((step, strings))
            elif isinstance(item, YMap) and len(item) == 1:
                out.append(self.block(item, loc, counter))
            else:
                counter[0] += 1  # (counted as the step it stands for: the numbers after it are as meant)
                self.errors.append(CaseFormatError(
                    loc, f"a step must be a string or a block, got {fields.kind_of(item)}",
                    "write the step as text, e.g. - y = x.add_(1); or a block: - no_grad: [...]"))
                if isinstance(item, (YMap, YList)):  # what it would define is unknown
                    self.open = True
                out.append(self.placeholder("", counter[0], loc))
        return out

    def block(self, item: YMap, loc: Location, counter: list[int]) -> Step:
        """A block (``- no_grad: [...]``); an unknown block's steps are still read."""
        (block, body), = item.items()
        if block not in BLOCKS:
            if not isinstance(body, (YList, YMap)):  # '- y: x.view(2)': ': ' made the step a mapping
                counter[0] += 1
                text = f"{block}: {'' if body is None else body}".strip()
                self.errors.append(CaseFormatError(
                    item.where(block), f"the step {text!r} is a mapping to YAML (': ' makes a key and a value), not a "
                                       "step's text", f"write an assignment, '{block} = {body}', or put the step in "
                                                      "quotes"))
                self.bind(names_assigned(f"{block} = {body}"))
                return self.placeholder("", counter[0], loc, text)
            self.errors.append(CaseFormatError(item.where(block), f"unknown block {block!r}",
                                               fields.did_you_mean(block, BLOCKS) or f"blocks: {', '.join(BLOCKS)}"))
        if not isinstance(body, YList) or not body:
            example = f"e.g. - {block}: ['y = x.add_(1)']"
            self.errors.append(fields.not_a_list(body, item.where(block), f"'{block}'",
                                                 "hold a non-empty list of steps", example))
            self.open = True
            inner: list[Step] = []
        else:
            inner = self.step_list(body, counter)
        return Step(number=0, text=block, kind="block", location=loc, block=block, body=tuple(inner))

    def placeholder(self, text: str, number: int, loc: Location, shown: str = "") -> Step:
        """A step that could not be read: it keeps its number and text (an expectation may
        name it) and defines what its text says it assigns (``text``: a step's text, whose
        names are read; ``shown``: the text of something else that stands for a step)."""
        if text:
            self.bind(names_assigned(text))
        return Step(number=number, text=text or shown, kind="expr", location=loc, value=Const(None))

    def bind(self, names: set[str] | None) -> None:
        if names is None:
            self.open = True
        else:
            self.defined |= names

    def check_operations(self, known: Collection[str]) -> None:
        """The first operation of each step that no adapter defines (its strings are then
        not checked: they are that operation's arguments)."""
        refused = set()
        for step, operations in self.step_operations:
            for key in sorted(operations):
                if key not in known:
                    prefix, _, name = key.partition(":")
                    same_kind = [k.partition(":")[2] for k in known if k.startswith(prefix + ":")]
                    hint = fields.did_you_mean(name, same_kind) or \
                        "see docs/operations.md for the operations adapters define"
                    self.errors.append(CaseFormatError(step.location, f"in step {step.text!r}: unknown operation "
                                                       f"{_describe_op(key)}: no adapter defines it", hint,
                                                       code=rules.UNKNOWN_OPERATION.code))
                    refused.add(id(step))
                    break
        if refused:
            self.step_strings = [(step, strings) for step, strings in self.step_strings if id(step) not in refused]

    def check_strings(self, declared: Collection[str]) -> None:
        """A string in a step names something: a dtype, a device, or a name an adapter
        declares. Nothing else reaches an adapter, so no case string is ever looked up on a
        framework module or parsed by a framework's dtype parser. The first of each step."""
        for step, strings in self.step_strings:
            for text in sorted(strings):
                if text in DTYPES or DEVICE_NAME.fullmatch(text) or text in declared:
                    continue
                known = [*DTYPES, "cpu", "cuda", *declared]
                hint = fields.did_you_mean(text, known) or \
                    f"a string in a step is a dtype ({', '.join(DTYPES)}) or a device (cpu, cuda, cuda:N)"
                self.errors.append(CaseFormatError(step.location, f"in step {step.text!r}: unknown string "
                                                   f"{text[:60]!r}: not a dtype or a device", hint,
                                                   code=rules.UNKNOWN_STRING.code))
                break


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


# names people write for a framework's module: a step that reads one meant a module path
MODULE_NAMES = frozenset({"np", "numpy", "torch", "paddle", "jnp", "jax", "lax", "tf", "tensorflow", "ms",
                          "mindspore", "mint", "xp", "F", "nn"})


def _module_hint(name: str, text: str) -> str | None:
    """The fix for a step that reads a framework's module (``np.lib.stride_tricks.as_strided(x)``):
    steps name no module; they call an operation of the vocabulary by its name."""
    if name not in MODULE_NAMES:
        return None
    found = re.search(rf"\b{re.escape(name)}((?:\.\w+)+)\s*\(", text)
    operation = found.group(1).rsplit(".", 1)[-1] if found else "the operation"
    return (f"{name!r} reads like a framework's module, and steps name no module (a module path is not "
            f"allowed): call the operation by its name, {operation}(...) or x.{operation}(...), which each "
            "framework's adapter maps to its own call (docs/operations.md lists them)")
