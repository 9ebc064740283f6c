"""Known findings: bugs already reported upstream and recorded in the corpus, which
``conformance discover`` counts instead of reporting again.

A rule is one class, as an oracle is: what it matches (:meth:`Known.matches`, on the finding
and its program), why it is known (``summary``, ``links``: the upstream issue or pull
request) and where the corpus records it (``cases``). A finding a rule matches is counted on
the findings page under the rule and never shrunk or written as a new case. A rule must be
narrow enough that a different bug cannot hide behind it: each names the oracle, the
frameworks and the shape of program the known bug needs, and tests/test_discover.py checks
each against the program that showed it and a program it must not match.

Legitimate differences (documented behaviour, such as Paddle's ``+=`` rebinding or NumPy's
read-only views) are not rules here: the oracles never report them (the model allows
rebinding and copies, refusals are not judged; docs/discover.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import ClassVar

import numpy as np

from conformance.discover.oracles import Finding
from conformance.discover.programs import VIEWS_BY_NAME, WRITES_BY_NAME, Lineage, Program, Step


def aliased_writes(steps: tuple[Step, ...]) -> list[Step]:
    """The in-place writes (not augmented assignments, which may rebind) into a tensor that
    another name views at that point, or through a view (programs.Lineage)."""
    lineage, out = Lineage(), []
    for step in steps:
        if step.is_view:
            lineage.view(step)
        elif WRITES_BY_NAME[step.op].creates or WRITES_BY_NAME[step.op].rebinds:
            lineage.rebind(step.target)
        elif lineage.aliased(step.target):
            out.append(step)
    return out


class Known:
    name: ClassVar[str]
    summary: ClassVar[str]
    links: ClassVar[tuple[str, ...]]
    cases: ClassVar[tuple[str, ...]]

    def matches(self, finding: Finding) -> bool:
        raise NotImplementedError


class PaddleStaleGradientAfterAliasedWrite(Known):
    name = "paddle-stale-gradient"
    summary = ("Paddle: after an in-place write through a view (or into a base while a view of it is live), "
               "the gradient of the tensors that share its memory is computed from the graph before the write")
    links = ("https://github.com/PaddlePaddle/Paddle/pull/68520",)
    cases = ("inplace.mul_.view_of_nonleaf_grad", "inplace.exp_.view_of_nonleaf_grad",
             "inplace.sigmoid_.view_of_nonleaf_grad", "autograd.discovered.setitem_through_view_grad")

    def matches(self, finding: Finding) -> bool:
        program = finding.program
        return (finding.oracle == "gradient" and finding.framework in ("paddle", "paddle_static")
                and bool(aliased_writes(program.steps) or aliased_writes(program.twin)))


class PaddleNarrowOfOffsetView(Known):
    name = "paddle-narrow-offset"
    summary = ("Paddle 3.3.1: narrow() of a view with a storage offset ignores the offset (found by "
               "conformance discover; narrow is as_strided from the storage's start)")
    links = ("https://github.com/PaddlePaddle/Paddle/pull/74546", "https://github.com/PaddlePaddle/Paddle/pull/79748")
    cases = ("views.discovered.narrow_of_offset_view_reads", "views.discovered.narrow_of_offset_view_writes")

    def matches(self, finding: Finding) -> bool:
        return (finding.oracle in ("model", "documented-view", "metamorphic", "gradient")
                and finding.framework in ("paddle", "paddle_static")
                and _narrow_of_offset(finding.program))


def _narrow_of_offset(program: Program) -> bool:
    """A narrow of a name that is itself a view not at the storage's start: a slice, select,
    narrow, split or unbind piece not starting at 0 somewhere before it in its chain."""
    starts = {"slice": lambda a: a[0], "select": lambda a: a[0], "narrow": lambda a: a[1],
              "unbind": lambda a: a[1], "split": lambda a: a[0] * a[2]}
    return _narrow_of(program, lambda step: step.op in starts and starts[step.op](step.args) != 0)


def _narrow_of(program: Program, marks: Callable[[Step], bool]) -> bool:
    """Whether a narrow reads a name whose chain of views (in the program or its twin) has a
    step ``marks`` holds for; binding a name to a new tensor clears its mark."""
    return _applied_to_marked(program, ("narrow",), marks)


def _applied_to_marked(program: Program, ops: tuple[str, ...], marks: Callable[[Step], bool]) -> bool:
    """Whether a view step of ``ops`` reads a name whose chain of views (in the program or its
    twin) has a step ``marks`` holds for; binding a name to a new tensor clears its mark."""
    marked: dict[str, bool] = {"x": False}
    for step in program.steps + program.twin:
        if not step.is_view:
            if WRITES_BY_NAME[step.op].creates or WRITES_BY_NAME[step.op].rebinds:
                marked[step.target] = False
            continue
        assert step.result is not None
        if step.op in ops and marked.get(step.target, False):
            return True
        marked[step.result] = not VIEWS_BY_NAME[step.op].copies and (marked.get(step.target, False) or marks(step))
    return False


# the view steps after which a tensor is not contiguous (on every input the generator draws
# them for a shape where they move elements: a transpose of a dimension of size 1 may not)
_NON_CONTIGUOUS = frozenset({"transpose", "t", "permute", "movedim", "swapaxes", "swapdims", "mT", "adjoint",
                             "diagonal", "diagonal_of", "expand", "broadcast_to", "unfold", "flip", "fliplr",
                             "flipud", "rot90"})


def _strided(step: Step) -> bool:
    """A view step whose result may not be contiguous: a dimension reordered or repeated, a
    diagonal, a slice with a step, a piece along a dimension other than the first."""
    return (step.op in _NON_CONTIGUOUS or (step.op == "slice" and step.args[2] != 1)
            or (step.op in ("narrow", "unbind", "select_dim") and step.args[0] != 0)
            or (step.op == "split" and step.args[1] != 0) or (step.op == "chunk" and step.args[1] != 0))


class PaddleNarrowGradientOfStridedView(Known):
    name = "paddle-narrow-gradient"
    summary = ("Paddle 3.3.1: the gradient through narrow() of a non-contiguous view (x.t().narrow(0, 0, 1)) lands "
               "on the elements of the contiguous layout, not the ones narrow read, and past the end of the "
               "gradient's buffer, which corrupts the heap (an abort or a hang; found by conformance discover)")
    links = ("https://github.com/PaddlePaddle/Paddle/pull/74546", "https://github.com/PaddlePaddle/Paddle/pull/79748")
    cases = ("autograd.discovered.narrow_of_transposed_grad", "autograd.discovered.narrow_of_narrowed_column_grad")

    def matches(self, finding: Finding) -> bool:
        return (finding.oracle in ("gradient", "metamorphic", "crash")
                and finding.framework in ("paddle", "paddle_static")
                and finding.program.grad and _narrow_of_strided(finding.program))


def _narrow_of_strided(program: Program) -> bool:
    """A narrow of a name whose chain of views makes it non-contiguous: a transpose, t or
    diagonal, a slice with a step, a piece along a dimension other than the first."""
    return _narrow_of(program, lambda step: (
        step.op in ("transpose", "t", "diagonal") or (step.op == "slice" and step.args[2] != 1)
        or (step.op in ("narrow", "unbind") and step.args[0] != 0) or (step.op == "split" and step.args[1] != 0)))


class TorchCompileWriteThroughExpand(Known):
    name = "torch-compile-expand-write"
    summary = ("torch.compile (aot_eager and inductor): an in-place write into an expand()ed view of an input "
               "adds the update of every stride-0 row into the input instead of writing it once (x + n * (c - x) "
               "for a fill_ of c, x + n * c for += c), silently; eager writes a fill once and refuses a write "
               "that reads its target (pytorch#17935)")
    links = ("https://github.com/pytorch/pytorch/issues/197448", "https://github.com/pytorch/pytorch/issues/17935")
    cases = ("compiled.expand_writes.fill_through_expand_of_input", "compiled.expand_writes.add_refused")

    def matches(self, finding: Finding) -> bool:
        # the gradient too: a compiled function is observed on what its caller holds, so a wrong
        # intermediate the loss reads shows as the gradient of values the model cannot see
        return (finding.oracle in ("model", "cross-mode", "metamorphic", "refusal", "gradient")
                and finding.framework in ("torch_compile", "torch_inductor")
                and _written_through_expand(finding.program))


def _written_when_marked(program: Program, writes: Callable[[Step], bool], marks: Callable[[Step], bool]) -> bool:
    """Whether a write ``writes`` holds for goes into a name whose chain of views has a step
    ``marks`` holds for (the marks propagate as in _applied_to_marked)."""
    marked: dict[str, bool] = {"x": False}
    for step in program.steps + program.twin:
        if step.is_view:
            assert step.result is not None
            marked[step.result] = not VIEWS_BY_NAME[step.op].copies and (marked.get(step.target, False)
                                                                         or marks(step))
            continue
        if writes(step) and marked.get(step.target, False):
            return True
        if WRITES_BY_NAME[step.op].creates or WRITES_BY_NAME[step.op].rebinds:
            marked[step.target] = False
    return False


def _written_through_expand(program: Program) -> bool:
    """Whether an in-place write (torch's augmented assignments included) writes a name whose
    chain of views has an expand or broadcast_to, or an as_strided with a stride 0 over more
    than one element (memory repeated with stride 0)."""
    return _written_when_marked(program, lambda s: not WRITES_BY_NAME[s.op].creates, _repeats_memory)


def _repeats_memory(step: Step) -> bool:
    return step.op in ("expand", "broadcast_to") or (
        step.op == "as_strided" and any(n > 1 and st == 0 for n, st in zip(*step.args)))


class TorchCompileWriteThroughGappedUnfold(Known):
    name = "torch-compile-unfold-gaps"
    summary = ("torch.compile (aot_eager and inductor): a write through an unfold view whose windows leave gaps "
               "(step > size) zeroes every element of the base no window covers (functionalization writes the "
               "windows back with unfold_backward)")
    links = ("https://github.com/pytorch/pytorch/issues/198102", "https://github.com/pytorch/pytorch/pull/198105")
    cases = ("compiled.discovered.write_through_gapped_unfold",)

    def matches(self, finding: Finding) -> bool:
        if finding.oracle not in ("model", "cross-mode", "metamorphic", "gradient") or finding.framework not in (
                "torch_compile", "torch_inductor"):
            return False
        gapped = {s.result for s in finding.program.steps + finding.program.twin
                  if s.op == "unfold" and s.args[2] > s.args[1]}
        return bool(gapped) and any(not s.is_view and s.target in gapped
                                    for s in finding.program.steps + finding.program.twin)


class MindSporeArithmeticMethodsDoNotWrite(Known):
    name = "mindspore-arithmetic-not-in-place"
    summary = ("MindSpore 2.10 (CPU): Tensor.add_, sub_, mul_ and div_ return a new tensor and leave their "
               "receiver as it was, although documented as in-place versions (the corpus records it as a "
               "documentation disagreement)")
    links = ("https://www.mindspore.cn/docs/en/stable/api_python/mindspore/Tensor/mindspore.Tensor.add_.html",)
    cases = ("inplace.mindspore.add_scalar_identity",)
    METHODS = frozenset({"add_", "sub_", "mul_", "div_", "add_t", "sub_t", "mul_t"})

    def matches(self, finding: Finding) -> bool:
        return (finding.oracle in ("model", "gradient", "metamorphic", "documented-view")
                and finding.framework == "mindspore"
                and any(step.op in self.METHODS for step in finding.program.steps + finding.program.twin))


class PaddleContiguousRebuffersItsReceiver(Known):
    name = "paddle-contiguous-rebuffers"
    summary = ("Paddle 3.3.1: contiguous() of a non-contiguous view gives that view itself a new contiguous "
               "buffer (and returns it), so the view stops sharing memory with its base")
    links = ("https://www.paddlepaddle.org.cn/documentation/docs/en/api/paddle/Tensor_en.html#contiguous",)
    cases = ("views.contiguous.transposed_rebuffered_in_paddle", "views.strides.contiguous_of_transposed")

    def matches(self, finding: Finding) -> bool:
        return (finding.oracle in ("model", "documented-view", "metamorphic", "gradient")
                and finding.framework in ("paddle", "paddle_static")
                and _applied_to_marked(finding.program, ("contiguous",), _strided))


class MindSporeViewOfNonContiguousCopies(Known):
    name = "mindspore-view-copies"
    summary = ("MindSpore 2.10: Tensor.view of a non-contiguous tensor returns a copy (torch refuses it), so "
               "writes through it do not reach the base")
    links = ("https://www.mindspore.cn/docs/en/r2.10.0/api_python/mindspore/Tensor/mindspore.Tensor.view.html",)
    cases = ("views.view.non_contiguous",)

    def matches(self, finding: Finding) -> bool:
        return (finding.oracle in ("model", "documented-view", "metamorphic")
                and finding.framework == "mindspore"
                and _applied_to_marked(finding.program, ("view",), _strided))


class MindSporeNoCloneKernel(Known):
    name = "mindspore-no-clone-kernel"
    summary = ("MindSpore 2.10 (CPU): clone() has no kernel (RuntimeError: The kernel Clone unregistered), so "
               "the clone twin of a program is refused wherever the program runs")
    links = ("https://www.mindspore.cn/docs/en/r2.10.0/api_python/mindspore/Tensor/mindspore.Tensor.zero_.html",)
    cases = ("views.recorded.clone_is_not_recorded",)

    def matches(self, finding: Finding) -> bool:
        return (finding.oracle == "metamorphic" and finding.framework == "mindspore"
                and finding.program.relation == "clone"
                and any("The kernel Clone unregistered" in detail for detail in finding.details))


class MindSporeStaleGradientAfterAliasedWrite(Known):
    name = "mindspore-stale-gradient"
    summary = ("MindSpore 2.10: mindspore.grad of a program that writes into a base while a view of it is live "
               "(or through some views) differentiates the view's term from the graph before the write (found "
               "by conformance discover; no upstream issue found)")
    links = ("https://www.mindspore.cn/docs/en/r2.10.0/api_python/mindspore/mindspore.grad.html",)
    cases = ("autograd.discovered.base_write_with_live_view_grad",)

    def matches(self, finding: Finding) -> bool:
        program = finding.program
        return (finding.oracle == "gradient" and finding.framework == "mindspore"
                and bool(aliased_writes(program.steps) or aliased_writes(program.twin)))


def _overlapping_as_strided(program: Program) -> bool:
    """An as_strided view some of whose elements share memory (a stride 0 over a dimension
    longer than 1, or windows that overlap: the positions its documented semantics read
    repeat). It is drawn on the input only, so those are positions of the input's elements."""
    semantics = VIEWS_BY_NAME["as_strided"].index
    elements = np.arange(math.prod(program.shape)).reshape(program.shape)
    for step in program.steps:
        if step.op == "as_strided":
            positions = semantics(elements, step.args).ravel()
            if len(np.unique(positions)) < positions.size:
                return True
    return False


class PaddleOverlappingAsStridedGradient(Known):
    name = "paddle-overlapping-as-strided-gradient"
    summary = ("Paddle 3.3.1: the gradient through an as_strided view whose elements share memory counts a shared "
               "element once (as_strided_grad writes the gradients one after another instead of summing them)")
    links = ("https://github.com/PaddlePaddle/Paddle/pull/79718", "https://github.com/PaddlePaddle/Paddle/pull/79748")
    cases = ("autograd.discovered.overlapping_as_strided_grad",)

    def matches(self, finding: Finding) -> bool:
        return (finding.oracle == "gradient" and finding.framework in ("paddle", "paddle_static")
                and _overlapping_as_strided(finding.program))


def _paddle_refused_backward(finding: Finding) -> bool:
    """A refusal finding of a program with a gradient that Paddle (eager or to_static) refused
    as a modified saved tensor: the refusal oracle's finding is the runner's (torch runs it),
    naming the refuser."""
    return (finding.oracle == "refusal" and finding.program.grad
            and any(f"what {fw} refuses as unsafe (modified_saved_tensor" in finding.summary
                    for fw in ("paddle", "paddle_static")))


class PaddleAsStridedSavesItsInput(Known):
    name = "paddle-as-strided-saves-input"
    summary = ("Paddle 3.3.1: after a write into the input of an as_strided, narrow (as_strided in Python) or "
               "unfold view (through the view or not), backward refuses in AsStridedGradNode or "
               "TensorUnfoldGradNode, which saved the input before the write (modified_saved_tensor)")
    links = ("https://www.paddlepaddle.org.cn/documentation/docs/en/api/paddle/as_strided_en.html",)
    cases = ("autograd.discovered.write_through_as_strided_then_backward",
             "autograd.discovered.write_through_narrow_then_backward",
             "autograd.discovered.write_through_unfold_then_backward")
    VIEWS = frozenset({"as_strided", "narrow", "unfold"})

    def matches(self, finding: Finding) -> bool:
        program = finding.program
        if not _paddle_refused_backward(finding):
            return False
        made = next((i for i, s in enumerate(program.steps) if s.op in self.VIEWS), None)
        return made is not None and any(not s.is_view for s in program.steps[made + 1:])


class PaddleSetitemOfItselfRefused(Known):
    name = "paddle-setitem-of-itself"
    summary = ("Paddle 3.3.1: a[:] = a (a tensor assigned to all of itself) makes backward refuse: the "
               "assignment's gradient node saved a tensor the assignment itself wrote (modified_saved_tensor)")
    links = ("https://www.paddlepaddle.org.cn/documentation/docs/en/api/paddle/Tensor_en.html#set-value-value",)
    cases = ("autograd.discovered.setitem_of_itself_grad",)

    def matches(self, finding: Finding) -> bool:
        return _paddle_refused_backward(finding) and any(
            s.op == "setitem_t" and s.operand == s.target for s in finding.program.steps)


class PaddleHypotReadsTheOperandItSquared(Known):
    name = "paddle-hypot-aliased-operand"
    summary = ("Paddle 3.3.1: Tensor.hypot_ is x.pow_(2).add_(y.pow(2)).sqrt_() in Python, so an operand that "
               "shares memory with x is read after x was squared: x.hypot_(x) gives sqrt(x**2 + x**4) (found by "
               "conformance discover; no upstream issue found)")
    links = ("https://github.com/PaddlePaddle/Paddle/pull/57295",)
    cases = ("inplace.hypot_.operand_is_the_receiver",)

    def matches(self, finding: Finding) -> bool:
        return (finding.oracle in ("model", "metamorphic", "documented-view") and finding.framework == "paddle"
                and (_reads_its_target(finding.program.steps, "hypot_")
                     or _reads_its_target(finding.program.twin, "hypot_")))


def _reads_its_target(steps: tuple[Step, ...], op: str) -> bool:
    """Whether a write ``op`` in ``steps`` has an operand that may share memory with its
    target when it runs (the target itself, or a name of its lineage: programs.Lineage)."""
    lineage = Lineage()
    for step in steps:
        if step.is_view:
            lineage.view(step)
            continue
        if step.op == op and step.operand is not None and lineage.same(step.target, step.operand):
            return True
        if WRITES_BY_NAME[step.op].creates or WRITES_BY_NAME[step.op].rebinds:
            lineage.rebind(step.target)
    return False


class PaddleMethodRefusesAScalar(Known):
    name = "paddle-scalar-operand"
    summary = ("Paddle 3.3.1: Tensor.add_ (sub_, multiply_, ...) with a Python number raises AttributeError "
               "('float' object has no attribute 'shape') where its augmented assignment runs, so a spelling twin "
               "that writes t += c as t.add_(c) is refused")
    links = ("https://github.com/PaddlePaddle/Paddle/issues/43261",)
    cases = ("inplace.add_.scalar_operand",)

    def matches(self, finding: Finding) -> bool:
        return (finding.oracle == "metamorphic" and finding.framework == "paddle"
                and finding.program.relation == "spelling"
                and any("object has no attribute 'shape'" in detail for detail in finding.details)
                and any(not s.is_view and WRITES_BY_NAME[s.op].constant for s in finding.program.twin))


class PaddleAugmentedAssignmentRebinds(Known):
    name = "paddle-augmented-assignment-rebinds"
    summary = ("Paddle 3.3.1: an augmented assignment (x *= u) rebinds x to a new tensor, so its spelling twin "
               "x.mul_(u), an in-place write the program never made, is refused where autograd saved x "
               "(modified_saved_tensor): two operations, not two spellings of one")
    links = ("https://www.paddlepaddle.org.cn/documentation/docs/en/api/paddle/Tensor_en.html#multiply-y-name-none",)
    cases = ("inplace.rebinding.augmented_assignment",)
    SAVED = "used in gradient computation has been modified by an inplace operation"

    def matches(self, finding: Finding) -> bool:
        program = finding.program
        return (finding.oracle == "metamorphic" and finding.framework == "paddle" and program.relation == "spelling"
                and program.grad and any(self.SAVED in detail for detail in finding.details)
                and any(not s.is_view and WRITES_BY_NAME[s.op].rebinds for s in program.steps))


def _non_contiguous(step: Step) -> bool:
    """_strided, or an as_strided view whose strides are not its size's contiguous ones."""
    if step.op != "as_strided":
        return _strided(step)
    size, stride = step.args
    contiguous = tuple(math.prod(size[k + 1:]) for k in range(len(size)))
    return any(n > 1 and st != c for n, st, c in zip(size, stride, contiguous))


class PaddleWritesIgnoreAViewsStrides(Known):
    name = "paddle-write-ignores-strides"
    summary = ("Paddle 3.3.1: an out= write (abs(v, out=v)) or an index-list assignment (v[[0]] = c) into a "
               "non-contiguous view writes in the view's logical order as if it were contiguous from its start: "
               "wrong elements of the base, and past the view's end a heap corruption (an abort or a hang; found by "
               "conformance discover)")
    links = ("https://www.paddlepaddle.org.cn/documentation/docs/en/api/paddle/abs_en.html",)
    cases = ("inplace.discovered.out_into_transposed_view",
             "inplace.discovered.index_list_assignment_into_transposed_view")

    def matches(self, finding: Finding) -> bool:
        return (finding.oracle in ("model", "documented-view", "metamorphic", "gradient", "crash")
                and finding.framework == "paddle"
                and _written_when_marked(finding.program, lambda s: WRITES_BY_NAME[s.op].out or s.op == "setitem_rows",
                                         _non_contiguous))


class PaddleLogicalInPlaceMakesBool(Known):
    name = "paddle-logical-in-place-bool"
    summary = ("Paddle 3.3.1: an in-place logical or comparison method (logical_not_, greater_, ...) on a float "
               "tensor makes it a bool tensor over the same memory, writing one byte per element (a view's base "
               "gets bytes, not 0.0 / 1.0; found by conformance discover)")
    links = ("https://www.paddlepaddle.org.cn/documentation/docs/en/api/paddle/logical_not_en.html",)
    cases = ("inplace.discovered.logical_not_on_a_view",)
    METHODS = frozenset({"logical_not_", "logical_and_", "logical_or_", "logical_xor_", "greater_", "greater_equal_",
                         "less_", "less_equal_", "not_equal_"})

    def matches(self, finding: Finding) -> bool:
        return (finding.oracle in ("model", "documented-view", "metamorphic") and finding.framework == "paddle"
                and any(s.op in self.METHODS for s in finding.program.steps + finding.program.twin))


KNOWN: tuple[Known, ...] = (PaddleStaleGradientAfterAliasedWrite(), PaddleNarrowOfOffsetView(),
                            PaddleNarrowGradientOfStridedView(), TorchCompileWriteThroughExpand(),
                            MindSporeArithmeticMethodsDoNotWrite(), PaddleContiguousRebuffersItsReceiver(),
                            MindSporeViewOfNonContiguousCopies(), MindSporeNoCloneKernel(),
                            MindSporeStaleGradientAfterAliasedWrite(), TorchCompileWriteThroughGappedUnfold(),
                            PaddleOverlappingAsStridedGradient(), PaddleAsStridedSavesItsInput(),
                            PaddleHypotReadsTheOperandItSquared(), PaddleMethodRefusesAScalar(),
                            PaddleSetitemOfItselfRefused(), PaddleAugmentedAssignmentRebinds(),
                            PaddleWritesIgnoreAViewsStrides(), PaddleLogicalInPlaceMakesBool())


def triaged(finding: Finding) -> Known | None:
    return next((rule for rule in KNOWN if rule.matches(finding)), None)
