"""A ``backward()`` step read functionally (issue 37): the gradient of the part of the program
before it, on a framework whose gradients are functional (``jax.grad``, ``tf.GradientTape``,
``mindspore.grad``) rather than a tape on its tensors.

One case, one expectation. A case writes its loss as a step, ``y.sum().backward()``, and
expects the gradients of the inputs that require grad, ``grad: {a: [...]}``. Where the
framework has tensor autograd (``Adapter.autograd``: torch, Paddle) the step is the table's
``method:backward`` and ``.grad`` is read from the tensor, as always. Where it has a
functional gradient instead (``Adapter.functional_gradient``), the same step means what a
user of that framework writes for it:

- the *differentiated function* is the case's steps before the ``backward()`` step (every
  top-level step before it, blocks included), as one function of the case's given tensors
  (:mod:`conformance.run.function`, the compiled modes' builder), returning the receiver of
  ``backward()`` (``y.sum()``): the loss. Its arguments are fresh inputs, made as the run's
  (so what the eager run did to its inputs never changes the function's);
- the *leaves* are the given tensors written ``requires_grad: true``; the adapter's
  :meth:`~conformance.adapters.base.Adapter.gradient` gives the gradient of the loss with
  respect to each (``jax.grad(f, argnums)``, ``tape.gradient``, ``mindspore.grad(f,
  grad_position)``), or a vector-Jacobian product with ``backward(g)``'s ``g``;
- a second ``backward()`` adds its gradients to the first's, as ``.grad`` accumulates;
  ``retain_graph=`` is accepted and means nothing (there is no graph to free);
- what is observable is each leaf's gradient, through the ``grad`` kind, where the name is
  still bound to the given tensor (or to the same object under another name). A ``.grad`` of
  anything else (a non-leaf, an input the case rebound) is *not observable*, never a pass;
  ``requires_grad``, ``is_leaf`` and version counters stay unobservable on these frameworks.
- a mutation in the differentiated part is the framework's: an immutable framework refuses
  it at its step, as without gradients (the ``refused`` outcome); a mutable one (MindSpore)
  differentiates what it does.

``g, = autograd_grad(loss, [x])`` (torch.autograd.grad / paddle.grad as a step) is read the
same way, with respect to the inputs it lists, and its gradients are returned, bound to the
step's targets, never added to what ``.grad`` reads.

``x.grad`` read as a step (``g = a.grad``) is that leaf's gradient so far, in eager runs; of a
non-leaf it is not applicable, and inside a compiled mode's function too.

A ``backward()`` that is not a step of its own (``z = y.backward()``, inside a ``no_grad:``
block), or one with arguments other than ``gradient`` and ``retain_graph``, has no functional
reading: the item is *not applicable*, saying why.

Framework-free: the adapter's ``gradient`` is the only call into a framework.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from conformance.adapters.base import NotApplicable
from conformance.contract import FrameworkAdapter
from conformance.ir import NameTarget, Op, Ref, Seq, Step, names_bound, names_read, operations_of
from conformance.model import Case
from conformance.run.function import CaseFunction, build

BACKWARD = "method:backward"
GRAD = "attr:grad"  # x.grad read as a step: the gradient the backward() steps gave the leaf x
# torch.autograd.grad / paddle.grad as a step, ``gx, gu = autograd_grad(loss, [x, u])``: on a
# framework whose gradients are functional, the gradient of the steps before it with respect
# to the inputs it lists, returned (bound to its targets), never added to what .grad reads
FUNCTIONAL_FORM = "fn:autograd_grad"
# its keywords that have a functional reading: the cotangent; retain_graph (no graph to
# free), allow_unused and materialize_grads (a functional gradient never refuses an input the
# loss does not use: the framework's own answer, zeros or None, is kept), accepted as meaning nothing
_FORM_COTANGENT = "grad_outputs"
_FORM_IGNORED = frozenset({"retain_graph", "allow_unused", "materialize_grads"})
# backward()'s arguments that have a functional reading: the cotangent, and retain_graph
# (a functional gradient keeps no graph to free: accepted, meaning nothing)
_GRADIENT_ARGUMENT = "gradient"
_IGNORED = frozenset({"retain_graph"})


def functional(adapter: FrameworkAdapter) -> bool:
    """Whether a ``backward()`` step is read functionally on this adapter: it has no tensor
    autograd and declares a functional gradient."""
    # read with defaults: conformance coverage asks stand-ins that declare neither
    return not getattr(adapter, "autograd", False) and bool(getattr(adapter, "functional_gradient", None))


def is_gradient_step(step: Step) -> bool:
    """A step ``<expr>.backward(...)`` of its own (its value discarded)."""
    return step.kind == "expr" and isinstance(step.value, Op) and step.value.key == BACKWARD


def is_functional_form_step(step: Step) -> bool:
    """A step ``g, ... = autograd_grad(<loss>, [inputs], ...)`` of its own."""
    return step.kind == "assign" and isinstance(step.value, Op) and step.value.key == FUNCTIONAL_FORM


def differentiates(step: Step) -> bool:
    """A step read as a functional gradient: ``backward()`` or ``autograd_grad``."""
    return is_gradient_step(step) or is_functional_form_step(step)


def reads_grad(step: Step) -> bool:
    """A step that reads ``x.grad``: the gradients' state, not a value of the program, so no
    part of the differentiated function."""
    return GRAD in operations_of(step)


def uses_backward(step: Step) -> bool:
    return BACKWARD in operations_of(step)


def why_not_functional(case: Case) -> str | None:
    """Why the case's ``backward()`` has no functional reading, or None (every use of it is a
    top-level step of its own with arguments that have one)."""
    grads = {n for s in case.flat_steps() if reads_grad(s) for n in names_bound(s)}
    returned = {n for s in case.steps if is_functional_form_step(s) for n in names_bound(s)}
    for step in case.flat_steps():
        if not reads_grad(step) and any(ref.name in grads for ref in names_read(step)):
            return (f"step {step.number} {step.text!r} computes with a .grad read by an earlier step: a functional "
                    "gradient is no value of the differentiated program")
        if not is_functional_form_step(step) and any(ref.name in returned for ref in names_read(step)):
            return (f"step {step.number} {step.text!r} computes with the gradients autograd_grad returned: a "
                    "functional gradient is no value of the differentiated program")
    why = _why_not_functional_form(case)
    if why:
        return why
    for step in case.steps:
        if step.kind == "block":
            if uses_backward(step):
                return (f"step {step.flat()[0].number}'s block holds backward(): a functional gradient is of a "
                        "function of the inputs, and backward() is read as one only as a top-level step of its own")
            continue
        if not uses_backward(step):
            continue
        if not is_gradient_step(step):
            return (f"step {step.number} {step.text!r} uses backward()'s value or calls it inside an expression: "
                    "it is read as a functional gradient only as a step of its own, '<loss>.backward()'")
        op = step.value
        assert isinstance(op, Op)
        if len(op.args) > 2:
            return f"step {step.number} {step.text!r}: backward() takes at most the gradient positionally here"
        extra = [k for k, _ in op.kwargs if k not in _IGNORED and k != _GRADIENT_ARGUMENT]
        if extra:
            return (f"step {step.number} {step.text!r}: backward({', '.join(extra)}=...) has no functional "
                    "reading (only gradient= and retain_graph=)")
    return None


def _why_not_functional_form(case: Case) -> str | None:
    """Why an ``autograd_grad`` step of the case has no functional reading, or None: it must
    be a top-level step of its own, ``targets = autograd_grad(loss, [inputs])``, its inputs
    given tensors that require grad, never rebound, and its keywords ones with a reading."""
    leaf_names = {spec.name for spec in case.given if spec.requires_grad}
    rebound = {n for s in case.flat_steps() for n in names_bound(s)}
    for step in case.flat_steps():
        if FUNCTIONAL_FORM not in operations_of(step):
            continue
        if not is_functional_form_step(step) or step.number not in {s.number for s in case.steps}:
            return (f"step {step.number} {step.text!r}: autograd_grad is read as a functional gradient only as a "
                    "top-level step of its own, 'g, = autograd_grad(loss, [x])'")
        op = step.value
        assert isinstance(op, Op)
        if len(op.args) > 3 or len(op.args) < 2:
            return f"step {step.number} {step.text!r}: autograd_grad takes the loss, the inputs and grad_outputs here"
        inputs = op.args[1]
        names = [item.name for item in inputs.items if isinstance(item, Ref)] if isinstance(inputs, Seq) else []
        if not isinstance(inputs, Seq) or len(names) != len(inputs.items) or not names:
            return (f"step {step.number} {step.text!r}: the inputs of a functional gradient are a list of the given "
                    "tensors, e.g. [x, u]")
        outside = [n for n in names if n not in leaf_names or n in rebound]
        if outside:
            return (f"step {step.number} {step.text!r}: {outside[0]!r} is not an input that requires grad, as given: a "
                    "functional gradient is with respect to the function's arguments")
        extra = [k for k, _ in op.kwargs if k not in _FORM_IGNORED and k != _FORM_COTANGENT]
        if extra:
            return (f"step {step.number} {step.text!r}: autograd_grad({', '.join(extra)}=...) has no functional "
                    "reading (only grad_outputs=, retain_graph=, allow_unused= and materialize_grads=)")
    return None


def form_positions(case: Case, step: Step) -> list[int]:
    """The positions, among the given tensors, of the inputs an ``autograd_grad`` step lists."""
    assert isinstance(step.value, Op) and isinstance(step.value.args[1], Seq)
    order = [spec.name for spec in case.given]
    return [order.index(item.name) for item in step.value.args[1].items if isinstance(item, Ref)]


def lacking(case: Case, adapter: FrameworkAdapter) -> str | None:
    """Why the adapter cannot run the case's operations (the first it lacks, in key order), or
    None: a ``backward()`` step on a framework whose gradients are functional is read as one,
    never through the table's ``method:backward`` (the engine's and ``conformance coverage``'s
    one answer)."""
    read_functionally = functional(adapter)
    if read_functionally:
        why = why_not_functional(case)
        if why:
            return why
    for key in sorted(case.operations()):
        if read_functionally and key in (BACKWARD, FUNCTIONAL_FORM):
            continue
        if read_functionally and key == GRAD:
            if adapter.compiles:
                return ("x.grad read as a step has no reading inside a compiled function: the gradients of its "
                        "backward() steps are compiled functions of their own (docs/case-format.md#gradients)")
            continue
        why = adapter.lacks(key)
        if why:
            return why
    return None


def loss_name(case: Case) -> str:
    """A name no step or input uses, for the differentiated function's result."""
    used = {spec.name for spec in case.given} | {n for s in case.flat_steps() for n in names_bound(s)}
    name = "loss"
    while name in used:
        name += "_"
    return name


def loss_of(case: Case, index: int, ops: Any) -> Callable[..., Any]:
    """:func:`loss_function`'s function, returning the loss itself."""
    function = loss_function(case, index, ops).function
    return lambda *args: function(*args)[0]


def loss_function(case: Case, index: int, ops: Any) -> CaseFunction:
    """The top-level steps before ``case.steps[index]`` (a gradient step), then its receiver
    (``autograd_grad``'s first argument) bound to a fresh name, as one function of the given
    tensors returning that loss."""
    step = case.steps[index]
    assert differentiates(step) and isinstance(step.value, Op)
    name = loss_name(case)
    bind = Step(step.number, step.text, "assign", step.location, targets=(NameTarget(name),),
                value=step.value.args[0])
    steps = [s for s in case.steps[:index] if not differentiates(s) and not reads_grad(s)] + [bind]
    return build(steps, ops, [spec.name for spec in case.given], [name])


def cotangent_expr(step: Step) -> Any:
    """The expression of ``backward(g)``'s ``g`` (``autograd_grad``'s ``grad_outputs``), or None."""
    assert isinstance(step.value, Op)
    position, keyword = (2, _FORM_COTANGENT) if is_functional_form_step(step) else (1, _GRADIENT_ARGUMENT)
    if len(step.value.args) > position:
        return step.value.args[position]
    return next((v for k, v in step.value.kwargs if k == keyword), None)


def leaves(case: Case) -> list[int]:
    """The positions, among the given tensors, of those that require grad."""
    return [i for i, spec in enumerate(case.given) if spec.requires_grad]


class Gradients:
    """The gradients a run's ``backward()`` steps computed, by leaf, and what the ``grad``
    kind may read of them."""

    def __init__(self, case: Case, framework: str, describe: str) -> None:
        self.case = case
        self.framework = framework
        self.describe = describe  # the framework's functional gradient, in words ("jax.grad")
        self.positions = leaves(case)
        self.names = [case.given[i].name for i in self.positions]
        self.leaf_ids: dict[int, str] = {}  # id of each leaf object the run made -> its name
        self.values: dict[str, Any] = {}  # leaf name -> its accumulated gradient (None: none)
        self.keep: list[Any] = []

    def track(self, env: dict[str, Any]) -> None:
        """The run's leaf objects, as made (before any step)."""
        for name in self.names:
            if name in env:
                self.leaf_ids[id(env[name])] = name
                self.keep.append(env[name])

    def add(self, computed: Sequence[Any], add: Callable[[Any, Any], Any]) -> None:
        """One ``backward()``'s gradients (the adapter's ``gradient``, leaf by leaf, None where
        it gives none), added to the earlier ones with ``add`` (the table's ``op:add``)."""
        for name, value in zip(self.names, computed):
            earlier = self.values.get(name)
            self.values[name] = value if earlier is None else earlier if value is None else add(earlier, value)
            self.keep.append(self.values[name])

    def read(self, obj: Any) -> Any:
        """``x.grad`` as a step reads it: the gradient the backward() steps so far gave the leaf
        ``x`` (None before any); of anything else, not applicable (a non-leaf has no .grad)."""
        name = self.leaf_ids.get(id(obj))
        if name is None:
            raise NotApplicable(f"{self.framework}'s gradients are functional ({self.describe}): .grad is read "
                                "only of an input that requires grad; a non-leaf has none")
        return self.values.get(name)

    def of(self, obj: Any, name: str, bound_at: int | None) -> tuple[str | None, Any]:
        """(None, the gradient: None where no backward() reached it) for ``name`` bound to a
        leaf: the input itself (``bound_at`` 0: never rebound), or a name a step bound to it as
        it is (``x0 = x``); else (why it is not observable, None). A step that returns its
        receiver itself (``d = a.detach()`` is ``a`` on JAX: stop_gradient of a concrete array)
        binds no leaf: what the case asks is the gradient of what the step made."""
        leaf = self.leaf_ids.get(id(obj))
        if leaf is not None and bound_at is not None and bound_at > 0:
            step = next((s for s in self.case.flat_steps() if s.number == bound_at), None)
            if step is None or not (step.kind == "assign" and isinstance(step.value, Ref)):
                leaf = None
        if leaf is None:
            return (f"{self.framework}'s gradients are functional ({self.describe}): only the gradient of an "
                    "input that requires grad, still bound to it, is observable; a non-leaf has no .grad"), None
        return None, self.values.get(leaf)
