"""PyTorch compiled with inductor (issue 19): ``torch.compile``'s default backend, which
generates C++ on CPU (gcc). Its caches (FX graphs, generated code, AOTAutograd) live in the
run's compilers' cache, ``TORCHINDUCTOR_CACHE_DIR``, which the framework process gets from
:mod:`conformance.run.caches` (outside every checkout: inductor runs the Python it finds
there), so a second run compiles from a warm cache; Dynamo's own state is still reset for
every item."""

from __future__ import annotations

import os
import tempfile
from typing import Any

from conformance.adapters.torch_compile_adapter import TorchCompileAdapter


class TorchInductorAdapter(TorchCompileAdapter):
    name = "torch_inductor"
    title = "PyTorch, torch.compile (inductor)"
    report_rank = 12
    backend = "inductor"

    def setup(self) -> None:
        # The sandbox (and an in-process run) set TORCHINDUCTOR_CACHE_DIR to the run's checked
        # folder. A process started otherwise gets a private one, never inductor's default,
        # /tmp/torchinductor_<user>, which any local user can create first and fill.
        if not os.environ.get("TORCHINDUCTOR_CACHE_DIR"):
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="conformance-torchinductor-")
        super().setup()

    def compile(self, fn: Any) -> Any:
        import torch._inductor.config as config

        config.compile_threads = 1  # no pool of compile workers beside the sandbox child (2 cores)
        return super().compile(fn)
