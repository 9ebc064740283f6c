"""Relations between two tensors: ``shares_memory``, ``same_storage``, ``same_object``,
written ``{y & x: true}``; and the aliasing class of a pair (view, copy, same object, ...)
that the three observed together make, which the results file and the reports show."""

from __future__ import annotations

from typing import Any, Collection, Mapping

from conformance.kinds.base import Checking, PairKind
from conformance.model import Case, ResultKey


class _Aliasing(PairKind):
    """A relation that classifies the pair (:func:`aliasing_class`)."""

    aliasing = True

    def worth_writing(self, key: ResultKey, values: Mapping[str, Any], case: Case,
                      made: Collection[tuple[str, str]]) -> bool:
        # Which pairs `conformance observe` writes (CONTRIBUTING.md, "What observe writes about pairs"):
        # a pair where the relation holds on some framework (the same object; elements in
        # common: a view, a view of a view, two views of one input that overlap), and a pair
        # a step made, a result and its source, whatever the relation (the point of most
        # cases: view or copy). Two names that are unrelated everywhere (two copies) tell
        # nothing and are left out. same_storage is written only where it says more than
        # shares_memory (implied_by): one allocation without an element in common, as the
        # two halves of a split are.
        return any(v is True for v in values.values()) or tuple(key.names) in made


class SharesMemory(_Aliasing):
    """Overlap, measured twice: from metadata (the adapter's ``overlaps``) and by behaviour
    (write through one, read the other, restore). Probes that disagree fail the case."""

    name = "shares_memory"
    description = ("{y & x: true}: some element of y and of x is the same memory (overlap), measured from metadata "
                   "and by behaviour.")
    probed = "always"
    observe_order = 0

    def compare(self, first: tuple[str, Any], second: tuple[str, Any], expected: bool, run: Checking) -> None:
        if not self.tensors(first, second, expected, run):
            return
        (a, x), (b, y) = first, second
        key, what = self.key((a, b)), self.what((a, b))
        metadata = run.adapter.overlaps(x, y)
        behaviour, how = behaviour_overlap(run.adapter, first, second)
        run.record(key, metadata)
        evidence = f"metadata probe: {'overlap' if metadata else 'no overlap'}; behaviour probe: {how}"
        if behaviour is not None and behaviour != metadata:
            run.miss(f"{what}: probes disagree", "metadata and behaviour probes to agree",
                     f"metadata={metadata}, behaviour={behaviour}", key, a, evidence)
        elif metadata != expected:
            run.miss(what, expected, metadata, key, a, evidence)


class SameStorage(_Aliasing):
    """One allocation, even without overlapping elements (``x[::2]`` and ``x[1::2]``)."""

    name = "same_storage"
    description = "{y & x: true}: y and x live in the same allocation, even without overlapping elements."
    probed = "always"
    observe_order = 1
    implied_by = "shares_memory"  # written only where it differs: same allocation, no element in common

    def compare(self, first: tuple[str, Any], second: tuple[str, Any], expected: bool, run: Checking) -> None:
        if not self.tensors(first, second, expected, run):
            return
        (a, x), (b, y) = first, second
        key = self.key((a, b))
        observed = run.adapter.same_allocation(x, y)
        run.record(key, observed)
        if observed != expected:
            run.miss(self.what((a, b)), expected, observed, key, a,
                     "metadata: allocation ranges " + ("intersect" if observed else "are disjoint"))


class SameObject(_Aliasing):
    """Identity: ``y is x`` (of any two values, tensors or not)."""

    name = "same_object"
    description = "{y & x: true}: y is x."
    probed = "always"
    observe_order = 2

    def compare(self, first: tuple[str, Any], second: tuple[str, Any], expected: bool, run: Checking) -> None:
        (a, x), (b, y) = first, second
        key = self.key((a, b))
        observed = x is y
        run.record(key, observed)
        if observed != expected:
            run.miss(self.what((a, b)), expected, observed, key, a, f"id({a})={id(x):#x}, id({b})={id(y):#x}")


class RecordedView(PairKind):
    """The framework's own bookkeeping of views, apart from what memory shows: torch's
    ``_base`` (``_is_view()``), NumPy's ``.base``. ``x.detach()`` and ``torch.from_numpy(a)``
    overlap their source's memory without being recorded as views of it; a view of a view is
    recorded as a view of the first view's base. Not an aliasing class: the pair's class
    stays what memory and identity say. A framework that keeps no such record (the
    adapter's ``recorded_base`` raises NotImplementedError) reports it not observable."""

    name = "recorded_view"
    description = ("{y & x: true}: the framework records y as a view of x's memory (torch: y._base is x or x._base; "
                   "NumPy: the .base chain of y ends at x's end); not observable where the framework keeps no such "
                   "record.")

    def compare(self, first: tuple[str, Any], second: tuple[str, Any], expected: bool, run: Checking) -> None:
        if not self.tensors(first, second, expected, run):
            return
        (a, y), (b, x) = first, second
        key, what = self.key((a, b)), self.what((a, b))
        try:
            base_y, base_x = run.adapter.recorded_base(y), run.adapter.recorded_base(x)
        except NotImplementedError as exc:
            run.unobservable(f"{what}: {exc}")
            return
        owner = x if base_x is None else base_x  # x's memory as the framework records it
        observed = base_y is not None and base_y is owner
        run.record(key, observed)
        if observed != expected:
            recorded = "none (not a view)" if base_y is None else ("the same as " + b + "'s" if observed else
                                                                    "another array")
            run.miss(what, expected, observed, key, a, f"the base recorded for {a}: {recorded}")


def behaviour_overlap(adapter: Any, first: tuple[str, Any], second: tuple[str, Any]) -> tuple[bool | None, str]:
    """Write sentinels through one tensor and look for the change in the other; restore.

    Returns (overlap or None when neither can be written, how it was decided)."""
    refused = []
    for (wname, w), (rname, r) in ((first, second), (second, first)):
        try:
            w_before = adapter.to_numpy(w)
            r_before = adapter.to_numpy(r).tobytes()
            if w_before.size == 0:
                return False, f"{wname} has no elements"
            seen = False
            try:
                for sentinel in adapter.sentinels(w):
                    adapter.probe_fill(w, sentinel)
                    if adapter.to_numpy(r).tobytes() != r_before:
                        seen = True
                        break
            finally:
                adapter.probe_restore(w, w_before)
        except Exception as exc:  # read-only memory and the like: try the other direction
            refused.append(f"{wname} not writable ({type(exc).__name__}: {exc})"[:200])
            continue
        verb = "saw" if seen else "did not see"
        return seen, f"wrote through {wname}, {verb} the change in {rname}"
    return None, "undetermined: " + "; ".join(refused)


# ---- the aliasing class of a pair

SAME_OBJECT, VIEW, DISJOINT_VIEW, COPY, DISTINCT_OBJECT = (
    "same_object", "view", "disjoint_view", "copy", "distinct_object")
CLASS_WORDS = {
    SAME_OBJECT: "same object", VIEW: "view", DISJOINT_VIEW: "same storage, no overlap",
    COPY: "copy", DISTINCT_OBJECT: "different object",
}


def aliasing_class(relations: Mapping[str, bool]) -> str:
    """The class of a pair from the aliasing relations observed between its names
    (relation name -> observed)."""
    if relations.get("same_object"):
        return SAME_OBJECT
    shares, same_storage = relations.get("shares_memory"), relations.get("same_storage")
    if shares:
        return VIEW
    if same_storage:
        return DISJOINT_VIEW if shares is False else VIEW
    if shares is False or same_storage is False:
        return COPY
    return DISTINCT_OBJECT
