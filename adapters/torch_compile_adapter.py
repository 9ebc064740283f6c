"""PyTorch compiled (issue 19): each case's steps as one function, compiled with
``torch.compile(backend="aot_eager")``: TorchDynamo's capture, functionalization and
AOTAutograd, without inductor's code generation. Everything else is the torch adapter's."""

from __future__ import annotations

import re
from typing import Any

from conformance.adapters.torch_adapter import TorchAdapter, _torch


class TorchCompileAdapter(TorchAdapter):
    name = "torch_compile"
    title = "PyTorch, torch.compile (aot_eager)"
    report_rank = 11
    compiles = "torch"
    backend = "aot_eager"
    # what Dynamo raises of its own, wrapping or replacing the operation's error
    exception_types = TorchAdapter.exception_types | frozenset({
        "torch._dynamo.exc.TorchRuntimeError", "torch._dynamo.exc.BackendCompilerFailed",
        "torch._dynamo.exc.Unsupported", "torch._dynamo.exc.InternalTorchDynamoError",
        "torch._dynamo.exc.UserError",
    })

    # the compiler's own refusals, none of the kinds (docs/case-format.md, "Error kinds")
    error_patterns = {**TorchAdapter.error_patterns, "other": TorchAdapter.error_patterns["other"] + (
        r"Encountered a set_ on a graph input, but the input has other mutations",
        r"Found a custom \(non-ATen\) operator whose output has alias annotations",
        r"Cannot construct `ConstantVariable` for value of type",
        r"Cannot access data pointer of Tensor \(e\.g\. FakeTensor",
        r"^IndexError: tuple index out of range")}

    def error_message(self, exc: BaseException) -> str:
        # Dynamo appends where in the traced code it was ("from user code: File ...") and
        # how to learn more: neither is the operation's message, and the path is this machine's
        message = super().error_message(_wrapped(exc))
        return re.split(r"\n\s*(?:from user code:|Set TORCHDYNAMO_VERBOSE=1|For more information)", message)[0].strip()

    def classify_error(self, exc: BaseException) -> str:
        return super().classify_error(_wrapped(exc))

    def compile(self, fn: Any) -> Any:
        torch = _torch()
        torch._dynamo.reset()  # no compiled code, guard or graph of an earlier item is reused
        return torch.compile(fn, backend=self.backend)


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
