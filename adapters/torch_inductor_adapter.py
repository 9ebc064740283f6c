"""PyTorch compiled with inductor (issue 19): ``torch.compile``'s default backend, which
generates C++ on CPU (gcc). Its FX graph cache lives in one folder per checkout
(``$CONFORMANCE_CACHE_DIR/torchinductor``, by default ``.conformance-cache/torchinductor`` in
the working directory; it is set as ``TORCHINDUCTOR_CACHE_DIR``), so a second run compiles
from a warm cache; Dynamo's own state is still reset for every item."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from conformance.adapters.torch_compile_adapter import TorchCompileAdapter


class TorchInductorAdapter(TorchCompileAdapter):
    name = "torch_inductor"
    title = "PyTorch, torch.compile (inductor)"
    report_rank = 12
    backend = "inductor"

    def setup(self) -> None:
        # inductor reads it each time it looks for a cached graph (and sets it to its default
        # in /tmp the first time it finds none, hence not setdefault)
        cache = Path(os.environ.get("CONFORMANCE_CACHE_DIR") or ".conformance-cache") / "torchinductor"
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(cache.resolve())
        super().setup()

    def compile(self, fn: Any) -> Any:
        import torch._inductor.config as config

        config.compile_threads = 1  # no pool of compile workers beside the sandbox child (2 cores)
        return super().compile(fn)
