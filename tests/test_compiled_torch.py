"""What the torch compiled modes change in the compiler (adapters/torch_compile_adapter.py),
checked against the installed torch, so that an upgrade that moves it says so."""

from __future__ import annotations

import inspect

import pytest

from conformance import registry


@pytest.mark.parametrize("mode", ["torch_compile", "torch_inductor"])
def test_dynamos_guard_timing_is_skipped_and_dynamo_still_calls_it_by_that_name(mode: str) -> None:
    """Dynamo times each new frame's guards after flushing the CPU's caches, for its log only;
    the adapters replace that timing (about a fifth of an item: docs/performance.md). If torch
    renames or moves it, the replacement would silently stop applying: this fails instead."""
    pytest.importorskip("torch")
    adapter = registry.get_adapter(mode)
    adapter.load()
    import torch._dynamo.guards as guards

    module = inspect.getmodule(type(adapter).load)
    assert module is not None
    assert guards.profile_guard_manager is module._guard_latency_unmeasured
    assert "latency = profile_guard_manager(" in inspect.getsource(guards)


def test_a_compiled_function_still_guards_on_its_inputs() -> None:
    """Without the timing, the guards themselves still decide: a call with another shape
    compiles again (a second frame), the same shape does not."""
    torch = pytest.importorskip("torch")
    adapter = registry.get_adapter("torch_compile")
    adapter.load()
    from torch._dynamo.utils import counters

    counters.clear()
    call = adapter.compile(lambda x: x + 1)
    call(torch.ones(2))
    call(torch.ones(2))
    assert counters["stats"]["unique_graphs"] == 1
    call(torch.ones(2, 3))
    assert counters["stats"]["unique_graphs"] == 2
