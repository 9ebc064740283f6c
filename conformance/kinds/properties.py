"""Properties of one tensor: ``values``, ``grad``, ``dtype``, ``shape``, ``strides``,
``requires_grad``, ``is_leaf``, ``version_change``. Each is written ``{name: expected}`` and observed through
one of the adapter's probes."""

from __future__ import annotations

from typing import Any, ClassVar, Collection, Mapping

from conformance import limits
from conformance.kinds.base import Checking, TensorKind, expressible, plain, short_repr
from conformance.model import DTYPES, Case, ResultKey
from conformance.source import CaseFormatError, Location
from conformance.yamlvalues import fields
from conformance.yamlvalues.yamlsrc import YMap


class _Array(TensorKind):
    """Values of a tensor (``values``; ``grad`` through the adapter's ``grad``), compared
    with a tolerance and recorded in full only when small."""

    placeholder: ClassVar[Any] = []  # the values check compares arrays: it must not choke on None

    def parse_value(self, value: Any, loc: Location, text: str) -> Any:
        what = f"'{self.name}'"
        if isinstance(value, YMap):
            fields.keys(value, ("real", "imag"), f"complex {what}")
            real, rshape, _ = fields.literal(value.get("real"), loc, what)
            imag, ishape, _ = fields.literal(value.get("imag"), loc, what)
            if rshape != ishape:
                raise CaseFormatError(loc, f"{what}: 'real' and 'imag' have different shapes")
            return {"real": real, "imag": imag}
        return fields.literal(value, loc, what)[0]

    def value_schema(self) -> dict[str, Any]:
        return {"$ref": "#/$defs/values"}

    def worth_writing(self, key: ResultKey, values: Mapping[str, Any], case: Case,
                      made: Collection[tuple[str, str]]) -> bool:
        # memory nobody wrote, or an array too large to record: nothing to paste
        return all(expressible(v) for v in values.values())


class Values(_Array):
    name = "values"
    description = ("Tensor -> its values (and shape) after the steps; complex as {real: [...], imag: [...]}. "
                   "Floats compared with rtol 1e-5, atol 1e-6.")
    probed = "always"
    observe_order = 3

    def compare(self, obj: Any, name: str, expected: Any, run: Checking) -> None:
        key, what = self.key((name,)), self.what((name,))
        unwritten = run.unwritten(obj)
        if unwritten is not None:
            # the bytes are whatever the allocator had (addresses, earlier items' data):
            # never compared, never recorded
            run.record(key, f"unspecified: memory nobody wrote ({unwritten})")
            run.miss(what, short_repr(expected), f"unspecified: {name} holds memory nobody wrote, from {unwritten}",
                     key, name, "write every element first (fill_, zero_, copy_) or expect only its shape and dtype")
            return
        observed = run.adapter.to_numpy(obj)
        run.record(key, recorded_values(observed))
        ok, shown = values_match(observed, expected)
        if not ok:
            run.miss(what, short_repr(expected), shown, key, name)


class Grad(_Array):
    name = "grad"
    description = "Tensor -> its .grad values, or null for no gradient."
    null_is_value = True  # so an override cannot drop a shared grad entry
    probed = "autograd"
    observe_order = 9

    def parse_value(self, value: Any, loc: Location, text: str) -> Any:
        return None if value is None else super().parse_value(value, loc, text)

    def value_schema(self) -> dict[str, Any]:
        return {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/values"}]}

    def compare(self, obj: Any, name: str, expected: Any, run: Checking) -> None:
        key, what, adapter = self.key((name,)), self.what((name,)), run.adapter
        why, grad = run.gradient(obj, name)
        if why is not None:  # a functional gradient's non-leaf (conformance/run/gradients.py)
            run.unobservable(f"{what}: {why}")
            return
        observed = None if grad is None else adapter.to_numpy(grad)
        run.record(key, None if observed is None else recorded_values(observed))
        if expected is None or observed is None:
            if (expected is None) != (observed is None):
                run.miss(what, short_repr(expected), short_repr(None if observed is None else observed.tolist()),
                         key, name)
            return
        ok, shown = values_match(observed, expected)
        if not ok:
            run.miss(what, short_repr(expected), shown, key, name)

    def worth_writing(self, key: ResultKey, values: Mapping[str, Any], case: Case,
                      made: Collection[tuple[str, str]]) -> bool:
        return super().worth_writing(key, values, case, made) and key.names[0] in {g.name for g in case.given}


class Dtype(TensorKind):
    name = "dtype"
    description = "Tensor -> its dtype, by neutral name."
    probed = "always"
    observe_order = 4

    def parse_value(self, value: Any, loc: Location, text: str) -> Any:
        if value not in DTYPES:
            raise CaseFormatError(loc, f"unknown dtype {value!r}", fields.did_you_mean(str(value), DTYPES) or None)
        return value

    def value_schema(self) -> dict[str, Any]:
        return {"$ref": "#/$defs/dtype"}

    def observe(self, obj: Any, run: Checking) -> Any:
        return run.adapter.dtype_name(obj)

    def worth_writing(self, key: ResultKey, values: Mapping[str, Any], case: Case,
                      made: Collection[tuple[str, str]]) -> bool:
        first = next(iter(case.given), None)  # a dtype other than the first input's
        return first is not None and any(v != first.dtype for v in values.values())


class Shape(TensorKind):
    name = "shape"
    description = "Tensor -> its shape."

    def parse_value(self, value: Any, loc: Location, text: str) -> Any:
        return list(fields.shape(value, loc, "'shape'"))

    def value_schema(self) -> dict[str, Any]:
        return {"$ref": "#/$defs/shape"}

    def observe(self, obj: Any, run: Checking) -> Any:
        return list(run.adapter.shape_of(obj))


class Strides(TensorKind):
    """The layout a tensor has: its strides in elements (a transposed view's ``[1, 3]``, an
    expanded view's ``0``), through the adapter's ``strides_of``. A framework whose tensors
    expose no strides lists ``strides`` in its adapter's ``unobservable``; a tensor whose
    framework gives none (another framework's, a NumPy array viewed in bytes that are no whole
    element) is unobservable too, never compared."""

    name = "strides"
    description = ("Tensor -> its strides, in elements (not bytes), as the framework exposes them "
                   "(torch stride(), NumPy strides / itemsize).")
    probed = "always"
    observe_order = 5

    def parse_value(self, value: Any, loc: Location, text: str) -> Any:
        fix = "one integer per dimension, in elements: e.g. strides: {y: [3, 1]}"
        if not isinstance(value, list):
            raise CaseFormatError(loc, f"'strides' must be a list of integers, got {fields.kind_of(value)}", fix)
        for i, v in enumerate(value):
            if not isinstance(v, int) or isinstance(v, bool):
                raise CaseFormatError(loc, f"'strides' must be a list of integers, got {fields.kind_of(v)} at "
                                      f"position {i}", fix)
        if len(value) > fields.MAX_DIMS:
            raise CaseFormatError(loc, f"'strides' has {len(value)} dimensions; at most {fields.MAX_DIMS} are "
                                  "allowed", "one stride per dimension of the tensor's shape")
        return list(value)

    def value_schema(self) -> dict[str, Any]:
        return {"type": "array", "items": {"type": "integer"}, "maxItems": fields.MAX_DIMS}

    def compare(self, obj: Any, name: str, expected: Any, run: Checking) -> None:
        key, what = self.key((name,)), self.what((name,))
        try:
            strides = run.adapter.strides_of(obj)
        except Exception as exc:  # the framework refuses to say (a sparse Paddle tensor)
            run.miss(what, expected, f"reading it raised {type(exc).__name__}: {exc}", key, name)
            return
        if strides is None:  # never a pass with nothing compared
            run.unobservable(f"{what}: {name} exposes no element strides")
            return
        observed = [int(s) for s in strides]
        run.record(key, observed)
        if observed != expected:
            run.miss(what, expected, observed, key, name)

    def observe(self, obj: Any, run: Checking) -> Any:
        strides = run.adapter.strides_of(obj)
        return None if strides is None else [int(s) for s in strides]

    def worth_writing(self, key: ResultKey, values: Mapping[str, Any], case: Case,
                      made: Collection[tuple[str, str]]) -> bool:
        # a layout other than a fresh tensor's on some framework (a stride of 0, a step, the
        # dimensions in another order), or frameworks that disagree; a dense row-major layout
        # everywhere says no more than the shape
        seen = [v for v in values.values() if isinstance(v, list)]
        return any(not _row_major_like(v) for v in seen) or any(v != seen[0] for v in seen)


def _row_major_like(strides: list[int]) -> bool:
    """Whether strides read as a dense row-major tensor's (the last 1, each a positive
    multiple of the next: [6, 3, 1], [2, 1], [1], [])."""
    if not strides:
        return True
    return strides[-1] == 1 and all(a > 0 and b > 0 and a % b == 0 and a >= b for a, b in zip(strides, strides[1:]))


class _Flag(TensorKind):
    """A yes-or-no property of a tensor's autograd state."""

    probed = "autograd"

    def parse_value(self, value: Any, loc: Location, text: str) -> Any:
        if not isinstance(value, bool):
            raise CaseFormatError(loc, f"'{self.name}' must be true or false, got {fields.kind_of(value)}")
        return value

    def value_schema(self) -> dict[str, Any]:
        return {"type": "boolean"}

    def worth_writing(self, key: ResultKey, values: Mapping[str, Any], case: Case,
                      made: Collection[tuple[str, str]]) -> bool:
        return True


class RequiresGrad(_Flag):
    name = "requires_grad"
    description = "Tensor -> whether it requires grad (Paddle: not stop_gradient)."
    observe_order = 7

    def observe(self, obj: Any, run: Checking) -> Any:
        return run.adapter.requires_grad(obj)


class IsLeaf(_Flag):
    name = "is_leaf"
    description = "Tensor -> whether it is a leaf of the autograd graph."
    observe_order = 8

    def observe(self, obj: Any, run: Checking) -> Any:
        return run.adapter.is_leaf(obj)


class VersionChange(TensorKind):
    name = "version_change"
    description = "Tensor -> how much its version counter rose since the object first appeared."
    probed = "always"
    observe_order = 6

    def parse_value(self, value: Any, loc: Location, text: str) -> Any:
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise CaseFormatError(loc, f"'version_change' must be a non-negative integer, got {fields.kind_of(value)}")
        return value

    def value_schema(self) -> dict[str, Any]:
        return {"type": "integer", "minimum": 0}

    def observe(self, obj: Any, run: Checking) -> Any:
        now, first = run.adapter.version_of(obj), run.first_version(obj)
        return None if now is None or first is None else now - first

    def compare(self, obj: Any, name: str, expected: Any, run: Checking) -> None:
        key, what = ResultKey(self.name, (name,)), self.what((name,))
        if run.first_version(obj) is None and run.adapter.version_of(obj) is not None:
            # a compiled mode's tensor made inside the compiled function (run/compiled.py)
            run.unobservable(f"{what}: made inside the compiled function, whose version when it was bound "
                             "is not observable")
            return
        observed = self.observe(obj, run)
        run.record(key, observed)
        if run.counts_versions:
            matches = observed == expected
        else:  # whether it was mutated, not how many times (a compiled mode: run/compiled.py)
            matches = observed is not None and expected is not None and (observed > 0) == (expected > 0)
        if not matches:
            run.miss(what, expected, observed, key, name,
                     "" if run.counts_versions else "compared as changed or not: a compiled function applies "
                     "an input's mutations as its own copies, which the counter counts instead of the steps")

    def worth_writing(self, key: ResultKey, values: Mapping[str, Any], case: Case,
                      made: Collection[tuple[str, str]]) -> bool:
        given = {g.name for g in case.given}
        return key.names[0] in given and any(v not in (0, None) for v in values.values())


# ---- arrays


def values_match(observed: Any, expected: Any) -> tuple[bool, Any]:
    """(whether a NumPy array holds the expected values, how the observed values read)."""
    import numpy as np

    if isinstance(expected, dict):  # complex: {real, imag}
        exp = np.array(expected["real"]) + 1j * np.array(expected["imag"])
    else:
        exp = np.array(expected)
    shown = short_repr(plain(observed.tolist()))
    if observed.dtype.kind not in "biufc":  # e.g. an object array holding layers
        return False, f"{shown} (not numbers: dtype {observed.dtype})"
    if exp.shape != observed.shape:
        return False, f"{shown} (shape {list(observed.shape)}, expected shape {list(exp.shape)})"
    if observed.dtype.kind in "fc" or exp.dtype.kind in "fc":
        ok = np.allclose(observed.astype(complex if observed.dtype.kind == "c" else float), exp,
                         rtol=1e-5, atol=1e-6, equal_nan=True)
    else:
        ok = bool(np.array_equal(observed, exp))
    return bool(ok), shown


def recorded_values(array: Any) -> Any:
    """What an observation keeps of an array's values: all of a small one; of a larger
    one its size, shape, a digest of its bytes and its first elements (the comparison with
    the expectation has seen every element)."""
    import hashlib

    if array.size <= limits.MAX_RECORDED_ELEMENTS:
        return plain(array.tolist())
    flat = array.reshape(-1)
    digest = hashlib.sha256(flat.tobytes()).hexdigest() if array.dtype.kind in "biufc" else None
    return {"elements": int(array.size), "shape": [int(d) for d in array.shape], "dtype": str(array.dtype),
            "sha256": digest, "first": plain(flat[: limits.RECORDED_HEAD].tolist())}
