"""PyTorch compiled (issue 19): each case's steps as one function, compiled with
``torch.compile(backend="aot_eager")``: TorchDynamo's capture, functionalization and
AOTAutograd, without inductor's code generation. Everything else is the torch adapter's."""

from __future__ import annotations

import re
import warnings
from typing import Any

from conformance.adapters.torch_adapter import TorchAdapter, _torch

_COMPILER_EXCEPTIONS = (
    "torch._dynamo.exc.AutogradGradRestartAnalysis",
    "torch._dynamo.exc.BackendCompilerFailed",
    "torch._dynamo.exc.CompileCollectiveRestartAnalysis",
    "torch._dynamo.exc.CondOpArgsMismatchError",
    "torch._dynamo.exc.FailOnRecompileLimitHit",
    "torch._dynamo.exc.InfiniteGeneratorError",
    "torch._dynamo.exc.InternalTorchDynamoError",
    "torch._dynamo.exc.InvalidBackend",
    "torch._dynamo.exc.ObservedAttributeError",
    "torch._dynamo.exc.ObservedException",
    "torch._dynamo.exc.ObservedGeneratorExit",
    "torch._dynamo.exc.ObservedIndexError",
    "torch._dynamo.exc.ObservedKeyError",
    "torch._dynamo.exc.ObservedLookupError",
    "torch._dynamo.exc.ObservedNotImplementedError",
    "torch._dynamo.exc.ObservedRuntimeError",
    "torch._dynamo.exc.ObservedTypeError",
    "torch._dynamo.exc.ObservedUserStopIteration",
    "torch._dynamo.exc.PackageError",
    "torch._dynamo.exc.RecompileError",
    "torch._dynamo.exc.RequiresGradRestartAnalysis",
    "torch._dynamo.exc.ResetRequired",
    "torch._dynamo.exc.RestartAnalysis",
    "torch._dynamo.exc.ResumePrologueTracingError",
    "torch._dynamo.exc.ShortenTraceback",
    "torch._dynamo.exc.SkipFrame",
    "torch._dynamo.exc.SpeculationRestartAnalysis",
    "torch._dynamo.exc.StepUnsupported",
    "torch._dynamo.exc.TensorifyScalarRestartAnalysis",
    "torch._dynamo.exc.TorchDynamoException",
    "torch._dynamo.exc.TorchRuntimeError",
    "torch._dynamo.exc.UncapturedHigherOrderOpError",
    "torch._dynamo.exc.UnknownPropertiesDuringBackwardTrace",
    "torch._dynamo.exc.UnsafeScriptObjectError",
    "torch._dynamo.exc.UnspecializeRestartAnalysis",
    "torch._dynamo.exc.Unsupported",
    "torch._dynamo.exc.UserError",
    "torch._dynamo.exc._SerializedException",
    "torch._dynamo.functional_export.Yield",
    "torch._dynamo.graph_region_tracker.NodeHashException",
    "torch._dynamo.pgo.ReservedWorkflowIdUserError",
    "torch._dynamo.symbolic_convert.ReturnValueOp",
    "torch._dynamo.symbolic_convert.SpeculationLogDivergence",
    "torch._dynamo.symbolic_convert.YieldValueOp",
    "torch._dynamo.variables.base.AsPythonConstantNotImplementedError",
    "torch._dynamo.variables.functions.ClosureConversionError",
    "torch._dynamo.variables.optimizer.ArgMappingException",
    "torch._dynamo.variables.optimizer.GuardInstallException",
    "torch._inductor.exc.CUDACompileError",
    "torch._inductor.exc.CppCompileError",
    "torch._inductor.exc.CppWrapperCodegenError",
    "torch._inductor.exc.GPUTooOldForTriton",
    "torch._inductor.exc.InductorError",
    "torch._inductor.exc.InvalidCxxCompiler",
    "torch._inductor.exc.LoweringException",
    "torch._inductor.exc.MissingOperatorWithDecomp",
    "torch._inductor.exc.MissingOperatorWithoutDecomp",
    "torch._inductor.exc.OperatorIssue",
    "torch._inductor.exc.SubgraphLoweringException",
    "torch._inductor.exc.TritonMissing",
    "torch._numpy._util.AxisError",
    "torch._numpy._util.UFuncTypeError",
    "torch._numpy.linalg.LinAlgError",
    "torch.distributed._state_dict_utils.CompanionMismatch",
    "torch.distributed.tensor._dtensor_spec._StridedShardNotDecodableError",
    "torch.fx.experimental.recording.NotEqualError",
    "torch.fx.experimental.symbolic_shapes.ConstraintViolationError",
    "torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode",
    "torch.fx.experimental.symbolic_shapes.PendingUnbackedSymbolNotFound",
    "torch.fx.experimental.symbolic_shapes._ShapeEnvGuardError",
    "torch.onnx.OnnxExporterError",
    "torch.onnx.errors.SymbolicValueError",
    "torch.onnx.errors.UnsupportedOperatorError",
    "torch.utils._sympy.value_ranges.ValueRangeError",
)


class TorchCompileAdapter(TorchAdapter):
    name = "torch_compile"
    title = "PyTorch, torch.compile (aot_eager)"
    report_rank = 11
    compiles = "torch"
    backend = "aot_eager"
    # the exception classes the compiler's modules define (Dynamo, inductor, the NumPy Dynamo
    # traces through): a step may raise them (tests/test_exception_types.py lists them anew)
    exception_types = TorchAdapter.exception_types | frozenset(_COMPILER_EXCEPTIONS)


    # the compiler's own refusals, none of the kinds (docs/case-format.md, "Error kinds"); and
    # its fake tensors' words for what eager torch calls a size mismatch (an in-place add_ of
    # a 3x2 into a 2x3 input, compiled.calls.transposed_input_fails_on_the_second_call)
    error_patterns = {**TorchAdapter.error_patterns, "shape_mismatch": TorchAdapter.error_patterns["shape_mismatch"] + (
        r"Attempting to broadcast a dimension of length \d+",), "other": TorchAdapter.error_patterns["other"] + (
        r"Encountered a set_ on a graph input, but the input has other mutations",
        r"Found a custom \(non-ATen\) operator whose output has alias annotations",
        r"Cannot construct .ConstantVariable. for value of type",
        r"Cannot access data pointer of Tensor \(e\.g\. FakeTensor",
        r"^IndexError: tuple index out of range",
        r"functionalization encountered a tensor being mutated that has internal overlap",
        r"^AssertionError: expected size \d+==\d+, stride \d+==\d+ at dim=\d+",
        # torch.frombuffer of an ndarray input, which Dynamo hands the function as a tensor
        r"object does not implement Python buffer protocol",
        # fill_diagonal_ of a view input (its decomposition writes through an as_strided view);
        # pin_memory, which the fake tensors it traces with do not implement
        r"encountered a mutation on a view chain of length \d+, where view \d+ was an as_strided\(\) call",
        r"NYI: aten\._pin_memory\.default",
        # an out= tensor of another shape than the result, which eager torch resizes (with its
        # warning): geqrf, histogram, linalg_solve, slice_scatter fail to compile
        r"BackendCompilerFailed: expand: ",
        # slice_inverse (a view of its first argument's storage in its second's shape), which the
        # fake tensors it traces with refuse as a view op of two tensors
        r"Expected exactly one tensor arg for view op")}

    def load(self) -> None:
        super().load()
        import torch._dynamo  # noqa: F401 - the compiler, and the exception classes it defines
        import torch._dynamo.guards as guards

        # Each frame Dynamo compiles, it times its new guards once, after flushing the CPU's
        # caches, for its debug log and a metric only (torch/_dynamo/guards.py: "This cache
        # flush is expensive"): a part of every item here, and nothing the compiled function
        # does or checks. The latency reads 0 instead: 0.79x the wall time of the compiled
        # cases (docs/performance.md, section 12; tests/test_compiled_torch.py fails if
        # torch moves the call).
        if hasattr(guards, "profile_guard_manager"):
            guards.profile_guard_manager = _guard_latency_unmeasured  # type: ignore[assignment]

    def error_message(self, exc: BaseException) -> str:
        # Dynamo appends where in the traced code it was ("from user code: File ...") and
        # how to learn more: neither is the operation's message, and the path is this machine's
        message = super().error_message(_wrapped(exc))
        # (and, for an error raised while an FX graph ran, the graph node and the traced
        # frames: "While executing %abs_ ... Original traceback: File ...")
        return re.split(r"\n\s*(?:from user code:|Set TORCHDYNAMO_VERBOSE=1|For more information|While executing %)",
                        message)[0].strip()

    def classify_error(self, exc: BaseException) -> str:
        return super().classify_error(_wrapped(exc))

    def out_of_memory(self, exc: BaseException) -> bool:
        # Dynamo re-raises a failed allocation of its own as InternalTorchDynamoError: std::bad_alloc
        return super().out_of_memory(_wrapped(exc)) or "std::bad_alloc" in str(exc)

    def compile(self, fn: Any) -> Any:
        torch = _torch()
        torch._dynamo.reset()  # no compiled code, guard or graph of an earlier item is reused
        compiled = torch.compile(fn, backend=self.backend)

        def call(*args: Any) -> Any:
            # the compilers' caches (FX graph, AOTAutograd) key a graph without how its inputs
            # alias one another: a graph compiled for two separate inputs was served to the same
            # program called with overlapping views of one base (a silent wrong value), and the
            # other way round (an assertion), depending on which case compiled first (measured on
            # torch 2.13; pytorch/pytorch#139789 within a process). The aliasing of the inputs is
            # put in the key, so a case's outcome never depends on what another case compiled
            aliasing = _input_aliasing(torch, args)
            with warnings.catch_warnings(), torch.compiler.config.patch(cache_key_tag=aliasing):
                # Dynamo's note that it traces through this suite's own cached lookups (the
                # operation table's), which are not the case's program
                warnings.filterwarnings("ignore", message=r"Dynamo detected a call to a `functools\.lru_cache`")
                # inductor's own lowering (of zero_ on a view, e.g.) calling a deprecated helper
                # of torch's, reported once a process: the compiler's code, not the case's
                warnings.filterwarnings("ignore", message=r"`torch\._prims_common\.check` is deprecated")
                # inductor's note that it runs complex operators without generating code, given
                # only when it generates code (a cold FX graph cache): the compiler's, and it
                # would make a case's warnings depend on the cache
                warnings.filterwarnings("ignore", message=r"Torchinductor does not support code generation for complex")
                return compiled(*args)

        return call


def _input_aliasing(torch: Any, args: tuple[Any, ...]) -> str:
    """Which of a call's tensor arguments share a storage, and where in it each lies (offset,
    shape, strides): empty when none do."""
    by_storage: dict[int, list[str]] = {}
    for index, arg in enumerate(args):
        if isinstance(arg, torch.Tensor) and arg.layout == torch.strided and arg.device.type != "meta":
            by_storage.setdefault(arg.untyped_storage().data_ptr(), []).append(
                f"{index}@{arg.storage_offset()}:{tuple(arg.shape)}:{arg.stride()}")
    shared = [group for group in by_storage.values() if len(group) > 1]
    return "inputs-alias " + "; ".join(",".join(group) for group in shared) if shared else ""


def _guard_latency_unmeasured(*args: Any) -> float:
    return 0.0


def _wrapped(exc: BaseException) -> BaseException:
    """The operation's own error that Dynamo re-raised as one of its own (TorchRuntimeError
    "when making fake tensor call", BackendCompilerFailed, ...): the step's error is recorded
    with the type the user catches (Dynamo's, a RuntimeError) and the operation's message."""
    while type(exc).__module__.startswith("torch._dynamo"):
        inner = exc.__cause__ or exc.__context__  # TorchRuntimeError: raised while handling Unsupported
        if inner is None:
            break
        exc = inner
    return exc
