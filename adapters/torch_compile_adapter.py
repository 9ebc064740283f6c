"""PyTorch compiled (issue 19): each case's steps as one function, compiled with
``torch.compile(backend="aot_eager")``: TorchDynamo's capture, functionalization and
AOTAutograd, without inductor's code generation. Everything else is the torch adapter's."""

from __future__ import annotations

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

    def compile(self, fn: Any) -> Any:
        torch = _torch()
        torch._dynamo.reset()  # no compiled code, guard or graph of an earlier item is reused
        return torch.compile(fn, backend=self.backend)
