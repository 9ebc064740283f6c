"""The error taxonomy (issue 16): one documented mapping from the messages a step can raise to
the neutral error kinds (model.ERROR_KINDS), checked over every error the corpus records.

- docs/case-format.md, "Error kinds", lists for each kind what it means and, by where the
  message comes from (Python, NumPy, each framework), the regexes that map a message to it;
  that list is the adapters' tables (``error_patterns``, base.PYTHON_ERRORS and
  base.NUMPY_ERRORS), equal both ways;
- the records of a run of the whole corpus, every framework and compiled mode (read from its
  results file, tests/corpus_results.py; without one these tests skip): every
  error a step records matches the regexes of exactly one kind (``other`` included: the
  messages known to be none of the kinds are listed, so that a new message is classified on
  purpose, never ``other`` by default), and that kind is the one recorded;
- the same situation gets the same kind on every framework: where two frameworks raise at the
  same step of a case, they record the same kind, except the situations listed in
  ``DIFFERENT_SITUATIONS``, each with why the step is not the same situation there. Before
  this taxonomy Paddle's refusal of ``int_tensor += float_tensor`` was ``other`` where torch's
  and NumPy's were ``dtype_cast``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from corpus_results import corpus_results

from conformance import registry
from conformance.adapters.base import NUMPY_ERRORS, PYTHON_ERRORS
from conformance.model import ERROR_KINDS
from conformance.outcomes import NOT_APPLICABLE

ROOT = Path(__file__).resolve().parent.parent
FRAMEWORKS = list(registry.BUILTIN)
SOURCES = {"Python": None, "NumPy": None, "torch": "torch", "Paddle": "paddle", "JAX": "jax",  # doc's words -> adapter
           "TensorFlow": "tensorflow", "MindSpore": "mindspore", "array-api-strict": "array_api_strict",
           # compiled modes: the messages they add to their framework's (their compiler's own)
           "torch.compile": "torch_compile", "jax.jit": "jax_jit", "tf.function": "tensorflow_function",
           "paddle.jit": "paddle_static"}

# case id -> why the frameworks that raise at the same step record different kinds there.
# (An immutable framework's refusal, kind ``immutable``, is its declared behaviour for every
# mutation, not compared: JAX and TensorFlow refuse the step before any situation arises.)
_NO_OUT = "has no out= parameter: the call itself is refused (type_error) before any result is cast or broadcast"
_INDEX_LIST = ("array-api-strict refuses an index list the standard does not specify (type_error), where "
               "TensorFlow reads x[[0, 2]] as x[0, 2], one index per dimension, and is out of range (other)")
# MindSpore makes an input that requires grad as any tensor (its gradients are functional: no leaf
# check), and its CPU build has no kernel for the in-place method (other), where torch and Paddle
# refuse the write into a leaf that requires grad (inplace_on_leaf)
_MS_NO_KERNEL_ON_LEAF = ("MindSpore's CPU build has no kernel for the in-place method (other) and its tensors "
                         "have no leaf check; torch and Paddle refuse the write into a leaf that requires grad "
                         "(inplace_on_leaf)")
# The generated out= cases (cases/contracts/torch_out.yaml) give their out tensor another shape than
# the result, or none: torch resizes it; a framework whose function has no out= refuses the call
# itself (type_error: array-api-strict, MindSpore's mint, NumPy's non-ufuncs, jnp.stack), and NumPy's
# out= is never resized, so the out array is refused for its shape (shape_mismatch)
GENERATED_OUT = "contracts.torch.out."
DIFFERENT_SITUATIONS = {
    **{case: _MS_NO_KERNEL_ON_LEAF for case in (
        "inplace.clamp_.leaf_requires_grad_raises", "inplace.index_add_.leaf_requires_grad_raises",
        "inplace.index_fill_.leaf_requires_grad_raises", "inplace.masked_fill_.leaf_requires_grad_raises",
        "inplace.scatter_.leaf_requires_grad_raises", "inplace.sigmoid_.leaf_requires_grad_raises",
        "inplace.zero_.leaf_requires_grad_raises", "layers.relu_.on_leaf")},
    "autograd.grad.zero_between_backwards": (
        "a.grad.zero_(): MindSpore's a.grad is the gradient its mindspore.grad gave, and its CPU build has no "
        "InplaceZero kernel (other); Paddle's .grad is a leaf that requires grad it refuses to write "
        "(inplace_on_leaf)"),
    "inplace.expand.out_overlapping": (
        "NumPy's counterpart of expand, np.broadcast_to, is a read-only view: the out= write is "
        "refused as read_only before any overlap matters, where torch's expanded tensor is writable "
        "and the overlapping write is refused"),
    "inplace.add.out_int_for_float_result": f"array-api-strict's add and MindSpore's mint.add {_NO_OUT}",
    "inplace.add.out_wrong_shape": f"array-api-strict's add and MindSpore's mint.add {_NO_OUT}",
    "compiled.out.empty_input_resized": (
        f"MindSpore's mint.add {_NO_OUT}; NumPy's out= is never resized, so the empty out is refused for its shape "
        "(shape_mismatch), where torch resizes it"),
    "compiled.expand_writes.index_add_into_expanded_intermediate": (
        "MindSpore's CPU build has no InplaceIndexAddExt kernel: the call is refused (other) before any overlap "
        "matters, where torch refuses the write into the expanded tensor's overlapping memory"),
    "inplace.promotion.int_itruediv": (
        "array-api-strict refuses true division of integer arrays, its operands (unsupported_dtype), "
        "where torch and NumPy compute the float quotient and refuse to cast it back (dtype_cast)"),
    "copies.advanced_indexing.chained_setitem_lost": _INDEX_LIST,
    "inplace.setitem.repeated_index_iadd": _INDEX_LIST,
    "copies.cat.mixed_dtypes": (
        "MindSpore's CPU Concat kernel fails to initialise for mixed dtypes with a message that names "
        "no dtype ('KernelMod Init Failed: Concat'): recorded as other, not guessed to be the refused "
        "promotion the others report"),
    "layers.relu.functional_inplace_true": (
        "MindSpore's mint.nn.functional.relu takes inplace=True, and its CPU build has no InplaceReLU "
        "kernel for any dtype (other), where the others refuse the keyword (type_error)"),
    "views.reshape.empty_ambiguous_minus_one": (
        "JAX's reshape computes the -1 of reshape(0, -1) by dividing by the other sizes' product, 0, and "
        "raises ZeroDivisionError (other) before any shape check, where torch, NumPy and array-api-strict "
        "refuse the ambiguous shape (shape_mismatch)"),
    "copies.where.one_argument_gives_indices": (
        "array-api-strict's where has no one-argument form (type_error); TensorFlow's has one but returns "
        "one [N, ndim] tensor of indices, which unpacking into ndim names refuses (other); MindSpore's CPU "
        "build has no NonZeroExt kernel (other)"),
    "contracts.torch.inplace.clamp_.expanded": (
        "MindSpore's CPU build has no InplaceClampScalar kernel: the call is refused (other) before any overlap "
        "matters, where torch refuses the write into the expanded tensor's overlapping memory"),
    "views.reshape.copy_false_of_transposed": (
        "reshape(..., copy=False): NumPy and array-api-strict take the keyword and refuse the copy it would need "
        "(not_contiguous_view), where torch, Paddle, JAX's Array.reshape, TensorFlow and MindSpore have no such "
        "keyword and refuse it (type_error)"),
    "layers.relu_.int_tensor": (
        "MindSpore's CPU build has no InplaceReLU kernel for any dtype (other), where Paddle lacks "
        "only the int64 one (unsupported_dtype)"),
}


# ---- the documented taxonomy


def documented() -> dict[str, dict[str, set[str]]]:
    """source (a key of SOURCES: "Python", "NumPy", "torch", ...) -> kind -> its regexes, as
    docs/case-format.md lists them: under each `#### `kind`` heading of "Error kinds", one
    bullet per source, the regexes in backticks before the examples ("e.g. ...")."""
    text = (ROOT / "docs" / "case-format.md").read_text(encoding="utf-8")
    section = text[text.index("### Error kinds"):]
    section = section[: section.index("\n## ")]
    table: dict[str, dict[str, set[str]]] = {source: {} for source in SOURCES}
    kind = None
    for line in section.splitlines():
        heading = re.match(r"^#### `(\w+)`", line)
        if heading:
            kind = heading[1]
            continue
        bullet = re.match(rf"^- ({'|'.join(SOURCES)}): (.*)$", line)
        if bullet and kind is not None:
            patterns = bullet[2].split(" e.g. ")[0]
            found = set(re.findall(r"`([^`]+)`", patterns))
            if found:
                table[bullet[1]].setdefault(kind, set()).update(found)
    return table


def in_code() -> dict[str, dict[str, set[str]]]:
    code: dict[str, dict[str, set[str]]] = {"Python": _sets(PYTHON_ERRORS), "NumPy": _sets(NUMPY_ERRORS)}
    for source, framework in SOURCES.items():
        if framework is not None:
            table = _sets(registry.get_adapter(framework).error_patterns)
            lineage = registry.lineage(framework)
            if lineage:  # a compiled mode documents what it adds to the framework it derives from
                parent = _sets(registry.get_adapter(lineage[-1]).error_patterns)
                table = {kind: patterns - parent.get(kind, set()) for kind, patterns in table.items()
                         if patterns - parent.get(kind, set())}
            code[source] = table
    return code


def _sets(table: Any) -> dict[str, set[str]]:
    return {kind: set(patterns) for kind, patterns in table.items() if patterns}


def test_every_kind_is_documented_with_its_meaning() -> None:
    text = (ROOT / "docs" / "case-format.md").read_text(encoding="utf-8")
    section = text[text.index("### Error kinds"):]
    headings = re.findall(r"(?m)^#### `(\w+)`", section)
    assert headings == list(ERROR_KINDS), "one heading per kind of model.ERROR_KINDS, in its order"


def test_the_documented_taxonomy_is_the_adapters() -> None:
    assert documented() == in_code()


def test_numpy_adapter_takes_numpys_messages_from_the_common_table() -> None:
    # NumPy's messages are classified alike in every framework's run (base.COMMON_ERRORS)
    assert registry.get_adapter("numpy").error_patterns == {}
    for framework in FRAMEWORKS:
        kinds = registry.get_adapter(framework).error_kinds()
        for table in (PYTHON_ERRORS, NUMPY_ERRORS):
            for kind, patterns in table.items():
                assert set(patterns) <= set(kinds[kind]), (framework, kind)


# ---- every error the corpus records


def recorded_errors() -> list[tuple[str, str, int, str, str, str]]:
    """(case, framework, step, exception type, message, kind) of every error the corpus run
    recorded (tests/corpus_results.py: every item, eager and compiled, as the run recorded it)."""
    errors = []
    for record in corpus_results().results:
        if record.outcome == NOT_APPLICABLE or record.case is None or record.framework is None:
            continue
        for step in record.steps:
            e = step.error
            if e is not None:
                errors.append((record.case, record.framework, step.number, e.type, e.message, e.kind))
    return sorted(errors)


def kinds_matching(framework: str, text: str) -> set[str]:
    """Every kind of the documented taxonomy one of whose regexes matches ``text``, from the
    sources a run of ``framework`` meets: Python's, NumPy's and its own."""
    table = documented()
    chain = (*registry.lineage(framework), framework)  # a compiled mode's messages and its lineage's
    own = [source for source, fw in SOURCES.items() if fw is not None and fw in chain]
    found = set()
    for source in ("Python", "NumPy", *own):
        for kind, patterns in table[source].items():
            if any(re.search(p, text) for p in patterns):
                found.add(kind)
    return found


def test_the_corpus_records_errors() -> None:
    errors = recorded_errors()
    assert len(errors) > 90, "the corpus recorded fewer errors than it holds cases expecting one"


def test_every_recorded_error_has_the_taxonomys_kind() -> None:
    wrong = []
    for case, framework, step, type_name, message, kind in recorded_errors():
        text = f"{type_name.rsplit('.', 1)[-1]}: {message}"
        matching = kinds_matching(framework, text)
        if kind == "immutable":
            continue
        if matching != {kind}:
            wrong.append(f"{case}[{framework}] step {step}: recorded {kind}, the taxonomy's regexes give "
                         f"{sorted(matching) or 'none'} for {text[:160]!r}")
    assert not wrong, "\n".join(wrong)


def test_the_same_situation_has_the_same_kind_on_every_framework() -> None:
    by_step: dict[tuple[str, int], dict[str, str]] = {}
    for case, framework, step, _type, _message, kind in recorded_errors():
        # a compiled mode's refusal is its compiler's, not the situation the eager ones meet
        if kind != "immutable" and not registry.compiles(framework):
            by_step.setdefault((case, step), {})[framework] = kind
    differing = {f"{case} step {step}: {kinds}" for (case, step), kinds in by_step.items()
                 if len(set(kinds.values())) > 1 and case not in DIFFERENT_SITUATIONS
                 and not case.startswith(GENERATED_OUT)}
    assert not differing, "\n".join(sorted(differing))
    listed = {case for (case, _), kinds in by_step.items() if len(set(kinds.values())) > 1}
    assert set(DIFFERENT_SITUATIONS) <= listed, "a listed difference no longer occurs: take it out"
    assert any(case.startswith(GENERATED_OUT) for case in listed)  # the rule below still has cases
