"""PaddlePaddle compiled (issue 19): each case's steps as one function, compiled with
``paddle.jit.to_static(fn, full_graph=False, backend=None)``: SOT (symbolic opcode
translation, Paddle 3's default dynamic-to-static mode), which translates the function's
bytecode, captures the Paddle operations into static programs run by the PHI kernels and
runs what it cannot capture eagerly between them (a graph break). Everything else is the
paddle adapter's.

``backend=None`` (PHI) is what ``to_static``'s default ``backend="CINN"`` becomes on a build
without CINN, silently: ``paddle.is_compiled_with_cinn()`` is False in the CPU wheel of 3.3.1,
and CINN also needs a CUDA place (paddle.jit.dy2static.utils.cinn_is_available).

Graph size: SOT runs a captured graph of fewer than ``MIN_GRAPH_SIZE`` operations (an
environment variable, 10 by default) eagerly instead of compiling it; nearly every case is that
small, so the mode compiles every graph (``min_graph_size = 0``, through SOT's own
``min_graph_size_guard``, as Paddle's SOT tests do), only during the compiled call.

Compile state: SOT keeps what it translated in process-wide singletons keyed by code object
(the operation table's functions, which every case's function calls), guarded by the inputs;
they are cleared before every compile (reset_compile_state), so that no translation, guard
or static program of an earlier item or prefix is reused.

What the adapter does so that SOT translates the function instead of running it eagerly:
nothing of the function itself, which is the case's steps written as a user writes them
(conformance/run/function.py: named parameters, ``x[i] = v`` and ``x.attr = v`` as
statements, the table's entries called); the per-code-object state below is the adapter's
only intervention. (The suite's former interpreter of the steps needed three more: a
wrapper of named parameters, statements for item and attribute assignment, and SOT's
``dataclass_from_dict`` made to rebuild the frozen dataclasses of the IR it read.)
"""

from __future__ import annotations

import re
import sys
import types
from typing import Any

from conformance.adapters.base import absent, classify_text
from conformance.adapters.paddle_adapter import PaddleAdapter, _paddle

# an exception's own line in SOT's report ("ValueError: Sorry about ..."), not its traceback
_EXCEPTION_LINE = re.compile(r"^\s*((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception)): (.+)$")
_SOURCE_PLACE = re.compile(r"\s*\(at /paddle/[^)]*\)")


def compact_sot_report(text: str) -> str:
    """SOT's report as its first line, each exception line in it, in order, and its last
    line (where SOT prints the operation's message on its own), joined by `` | `` (the
    traceback lines, with their paths, left out)."""
    lines = text.splitlines()
    found: list[str] = []
    for line in lines:
        m = _EXCEPTION_LINE.match(line)
        if m:
            entry = _SOURCE_PLACE.sub("", f"{m.group(1).rsplit('.', 1)[-1]}: {m.group(2).strip()}")
            if entry not in found:
                found.append(entry)
    # the operation's message where SOT prints it on its own after the traceback
    last = next((line.strip() for line in reversed(lines) if line.strip()), "")
    if last and not last.startswith(("File ", "^")) and not any(last in entry for entry in found):
        found.append(_SOURCE_PLACE.sub("", last))
    return " | ".join([lines[0].strip() if lines else "", *found])


def reset_compile_state() -> None:
    """Clear SOT's caches: translated code with its guards, the compiled static programs, the
    inferred metas of operations and layers, the Variables they are inferred with, and the
    per-code step counts."""
    from paddle.jit.sot.infer_meta import InferMetaCache, LayerInferMetaCache, VariableCreator
    from paddle.jit.sot.opcode_translator.executor.executor_cache import OpcodeExecutorCache
    from paddle.jit.sot.symbolic.compile_cache import CompileSIRCache
    from paddle.jit.sot.utils.utils import Singleton, StepInfoManager

    OpcodeExecutorCache().clear()
    CompileSIRCache().clear()
    InferMetaCache().clear()
    LayerInferMetaCache().clear()
    # the static Variables SOT infers metas with, cached by dtype and shape only (a sparse
    # tensor met one of a dense tensor made earlier), and the steps counted per code object:
    # made anew when next used
    for cls in (VariableCreator, StepInfoManager):
        Singleton._instances.pop(cls, None)


# measured on Paddle 3.3.1: what a function using these returns under SOT depends on what ran
# before it in the process (the sparse tensor's indices()/values(), or eager behaviour; the
# complex views, a copy or a view) although every SOT cache this adapter knows is cleared per
# compile: no case with them runs to a reproducible outcome in this mode
_NOT_REPRODUCIBLE = ("method:to_sparse", "fn:view_as_complex", "fn:view_as_real")
_NOT_REPRODUCIBLE_WHY = ("under paddle.jit.to_static (SOT) a function using it gives a result that depends on what ran "
                         "earlier in the process (measured on Paddle 3.3.1: a sparse tensor's indices()/values() raise "
                         "InnerError \"'NoneType' object has no attribute 'indices'\" or behave as in eager; a complex "
                         "view is a copy or a view), so no case with it has a reproducible outcome in this mode")


class PaddleStaticAdapter(PaddleAdapter):
    name = "paddle_static"
    title = "PaddlePaddle, paddle.jit.to_static (SOT)"
    report_rank = 21
    compiles = "paddle"
    # a child of its own: SOT's translations and static programs grow the process's memory
    # item after item (caches cleared or not), and in the child the frameworks share, eager
    # torch_compile items later failed to allocate (std::bad_alloc) in a whole run
    own_process = True
    # and each item in a process of its own, forked from one that imported Paddle: Paddle's
    # frame evaluator keeps per code object whether to translate it, for the whole process,
    # with no call that clears it (docs/compiled-paddle.md)
    process_per_item = True
    backend: str | None = None
    full_graph = False
    min_graph_size = 0
    # SOT's own refusals, none of the kinds (classified on SOT's compacted report, the
    # operation's error last): an in-place write whose output is a view, an API that exists
    # in dynamic graph mode only, an attribute or call a static Value lacks, a Python scalar
    # where a Value is needed, an index SOT's translation of the code does not reach, and
    # the compiled program's saved tensors freed before a second backward; and the static
    # op's dtype check of imag()/real() of a real tensor at meta inference (before any kernel:
    # eager Paddle's refusal, at the kernel lookup, is unsupported_dtype; the cases' paddle_static
    # overrides record the two as different errors)
    error_patterns = {**PaddleAdapter.error_patterns, "type_error": PaddleAdapter.error_patterns["type_error"] + (
        # SOT wraps the TypeError of a Paddle API called with a keyword it has no parameter for
        r"Call paddle_api error: \w+ \| TypeError: .*got an unexpected keyword argument",
    ), "other": PaddleAdapter.error_patterns["other"] + (
        r"In to_static mode, [\w.]+'s output variable is a viewed Tensor in dygraph",
        r"We only support '\w+\(\)' in dynamic graph mode",
        r"'paddle\.base\.libpaddle\.pir\.Value' object has no attribute",
        r"AttributeError: module 'paddle\.[\w.]+' has no attribute",
        r"must be Value, but got \w+",
        r"must be tensor type, but got <class 'paddle\.base\.libpaddle\.pir\.Value'>",
        r"IndexError: In transformed code: \| IndexError: tuple index out of range",
        r"Call paddle_api error: setitem \| IndexError: list index out of range",
        r"Tensor not initialized yet when DenseTensor::place\(\) is called",
        r"Check data type error for op: (imag|real), input: x, x\.dtype: \w+, and expected_dtype: complex",
        # to_dense() of a CSR tensor made inside the function: SOT's static stand-in for it is None
        r"Call tensor_method error: Tensor\.to_dense \| AttributeError: 'NoneType' object has no attribute",
        # a keyword a Tensor method of the static graph does not take (astype(copy=),
        # take(axis=)), in SOT's compacted report of its own failed call
        r"Call tensor_method error: Tensor\.\w+ \| TypeError: [\w.<>]+\(\) got an unexpected keyword argument")}
    # what SOT raises of its own, wrapping or replacing the operation's error: every exception
    # class of paddle.jit.sot.utils.exceptions (3.3.1), which load() imports so that they exist
    # from the start of every item (tests/test_exception_types.py compares the two)
    exception_types = PaddleAdapter.exception_types | frozenset(f"paddle.jit.sot.utils.exceptions.{name}" for name in (
        "BreakGraphError",
        "ConditionalFallbackError",
        "ExportError",
        "FallbackError",
        "HasNoAttributeError",
        "InnerError",
        "SotCapturedArithmeticError",
        "SotCapturedException",
        "SotCapturedFileExistsError",
        "SotCapturedFileNotFoundError",
        "SotCapturedFloatingPointError",
        "SotCapturedImportError",
        "SotCapturedIndentationError",
        "SotCapturedIndexError",
        "SotCapturedIsADirectoryError",
        "SotCapturedKeyError",
        "SotCapturedLookupError",
        "SotCapturedModuleNotFoundError",
        "SotCapturedNameError",
        "SotCapturedNotADirectoryError",
        "SotCapturedNotImplementedError",
        "SotCapturedOSError",
        "SotCapturedOverflowError",
        "SotCapturedPermissionError",
        "SotCapturedRecursionError",
        "SotCapturedRuntimeError",
        "SotCapturedStopIteration",
        "SotCapturedSyntaxError",
        "SotCapturedTabError",
        "SotCapturedTimeoutError",
        "SotCapturedUnboundLocalError",
        "SotCapturedZeroDivisionError",
        "SotErrorBase",
    ))

    def load(self) -> None:
        super().load()
        import paddle.jit.sot.utils.exceptions  # noqa: F401

    def warm(self) -> None:
        """SOT's lazy imports, its first translation and the first static program's kernels,
        done once in the fork server instead of in every item's process (about half of an
        item's cost): a function of its own (not the table's functions, which every case's
        function calls, whose per-code state SOT keeps), then every cache cleared, as before
        each compile."""
        paddle = _paddle()
        from paddle.jit.sot.utils.envs import min_graph_size_guard

        def warm_up(a: Any) -> Any:
            return a * 2.0 + 1.0

        with min_graph_size_guard(self.min_graph_size):
            paddle.jit.to_static(warm_up, full_graph=self.full_graph, backend=self.backend)(
                paddle.to_tensor([1.0, 2.0]))
        reset_compile_state()

    def error_message(self, exc: BaseException) -> str:
        """SOT's own errors (InnerError: "In simulate execution:" and the translated code's
        traceback, with the paths of this checkout) as their first line and each exception
        line of the report, in order: the operation's error is the last."""
        text = super().error_message(exc)
        return compact_sot_report(text) if type(exc).__module__.startswith("paddle.jit.sot") else text

    def classify_error(self, exc: BaseException) -> str:
        if not type(exc).__module__.startswith("paddle.jit.sot"):
            return super().classify_error(exc)
        return classify_text(f"{type(exc).__name__}: {self.error_message(exc)}", self.error_kinds())

    def operations(self) -> dict[str, Any]:
        ops = super().operations()
        for key in _NOT_REPRODUCIBLE:
            if key in ops:
                ops[key] = absent(_NOT_REPRODUCIBLE_WHY)
        return ops

    def compile(self, fn: Any) -> Any:
        paddle = _paddle()
        reset_compile_state()
        _always_translated(fn)
        static = paddle.jit.to_static(fn, full_graph=self.full_graph, backend=self.backend)

        def call(*args: Any) -> Any:
            from paddle.jit.sot.utils.envs import min_graph_size_guard

            # every graph SOT captures is compiled, however small (MIN_GRAPH_SIZE, 10 by default,
            # runs a graph of fewer operations eagerly: nearly every case's)
            with min_graph_size_guard(self.min_graph_size):
                return static(*args)

        return call


_MARKED: set[types.CodeType] = set()


def _always_translated(fn: Any) -> None:
    """Mark every code object of this suite (the modules of conformance, the adapters among
    them, with the functions nested in them) and of the case's function as code SOT must
    translate every time (``sot_set_with_graph``). Paddle's frame evaluator otherwise stops
    translating a code object that has run a number of times without producing a graph and
    runs it eagerly from then on, for the rest of the process: every item's function calls
    the same code objects (the operation table's functions and the helpers they call; before
    issue 34 also the suite's interpreter of the steps), so whether an item was compiled or ran
    eagerly depended on the items before it (measured: items of cases/compiled and
    cases/layers changed outcome with what ran before them). The mark has no undo, and needs
    none: the code is the suite's own; Paddle's own code stays in SOT's skip list."""
    import paddle

    todo: list[Any] = [getattr(fn, "__code__", None)]
    for name, module in list(sys.modules.items()):
        if name == "conformance" or name.startswith("conformance."):
            for value in list(vars(module).values()):
                if getattr(value, "__module__", None) != name:
                    continue
                if isinstance(value, type):
                    for member in vars(value).values():
                        member = getattr(member, "__func__", member)
                        todo.append(getattr(member, "__code__", None))
                else:
                    todo.append(getattr(value, "__code__", None))
    while todo:
        code = todo.pop()
        if not isinstance(code, types.CodeType) or code in _MARKED:
            continue
        _MARKED.add(code)
        paddle.framework.core.sot_set_with_graph(code)
        todo.extend(const for const in code.co_consts if isinstance(const, types.CodeType))
