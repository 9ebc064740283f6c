"""``numpy_state``, ``torch_state``, ``paddle_state``: the built-in adapters plus two
operations over each piece of process-wide state the adapter's isolation saves:

- ``pollute("torch.default_dtype")`` changes it to something no case expects;
- ``state_is_default("torch.default_dtype")`` is ``[True]`` while it is what the first case
  this adapter ran saw (and, for the RNGs, while the next draw is the first one after this
  case's seed).

The readers and polluters here are written against the frameworks directly, not through
the adapter's own save/restore, so that a test of that mechanism does not trust it.
"""

from __future__ import annotations

from typing import Any, Callable

from conformance.adapters.base import Operation
from conformance.adapters.numpy_adapter import NumpyAdapter
from conformance.adapters.paddle_adapter import PaddleAdapter
from conformance.adapters.torch_adapter import TorchAdapter

Reader = Callable[[], Any]
Polluter = Callable[[], None]


def _np() -> Any:
    import numpy

    return numpy


def _torch() -> Any:
    import torch

    return torch


def _paddle() -> Any:
    from conformance.adapters.paddle_adapter import _paddle as quiet_import

    return quiet_import()


def _paddle_tensor_creation() -> Any:
    _paddle()
    import paddle.tensor.creation

    return paddle.tensor.creation


def _warns(call: Callable[[], Any]) -> bool:
    """Whether the call emits a Python warning (shown to no one)."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return bool(caught)


def _torch_warn_once_site() -> None:
    """x.T of a 3-D tensor: a TORCH_WARN_ONCE in ATen (TensorShape.cpp)."""
    _torch().ones(1, 1, 1).T  # noqa: B018 - the read is what warns


def _silence_torch_warn_once_site() -> None:
    _torch().set_warn_always(False)
    _warns(_torch_warn_once_site)


# name -> (read it, change it); building these tables imports no framework
NUMPY_STATES: dict[str, tuple[Reader, Polluter]] = {
    "numpy.errstate": (lambda: _np().geterr(), lambda: _np().seterr(all="raise")),
    "numpy.errcall": (lambda: _np().geterrcall(), lambda: _np().seterrcall(print)),
    "numpy.printoptions": (lambda: repr(_np().array([1 / 3])), lambda: _np().set_printoptions(precision=2)),
}
TORCH_STATES: dict[str, tuple[Reader, Polluter]] = {
    "torch.grad_enabled": (lambda: _torch().is_grad_enabled(), lambda: _torch().set_grad_enabled(False)),
    "torch.anomaly": (lambda: _torch().is_anomaly_enabled(), lambda: _torch().autograd.set_detect_anomaly(True)),
    "torch.default_dtype": (lambda: _torch().get_default_dtype(),
                            lambda: _torch().set_default_dtype(_torch().float64)),
    "torch.default_device": (lambda: str(_torch().get_default_device()),
                             lambda: _torch().set_default_device("meta")),
    "torch.deterministic_algorithms": (lambda: _torch().are_deterministic_algorithms_enabled(),
                                       lambda: _torch().use_deterministic_algorithms(True)),
    "torch.float32_matmul_precision": (lambda: _torch().get_float32_matmul_precision(),
                                       lambda: _torch().set_float32_matmul_precision("medium")),
    "torch.num_threads": (lambda: _torch().get_num_threads(),
                          lambda: _torch().set_num_threads(_torch().get_num_threads() + 1)),
    "torch.printoptions": (lambda: repr(_torch().tensor([1 / 3])), lambda: _torch().set_printoptions(precision=1)),
    # whether a TORCH_WARN_ONCE site warns now; the polluter turns warn-always off and
    # reaches the site, which then stays silent for the rest of the process
    "torch.warn_always": (lambda: _warns(_torch_warn_once_site), lambda: _silence_torch_warn_once_site()),
}
PADDLE_STATES: dict[str, tuple[Reader, Polluter]] = {
    "paddle.grad_enabled": (lambda: _paddle().is_grad_enabled(), lambda: _paddle().set_grad_enabled(False)),
    "paddle.default_dtype": (lambda: _paddle().get_default_dtype(), lambda: _paddle().set_default_dtype("float64")),
    "paddle.dynamic_mode": (lambda: _paddle().in_dynamic_mode(), lambda: _paddle().enable_static()),
    "paddle.flags": (lambda: _paddle().get_flags(["FLAGS_check_nan_inf"]),
                     lambda: _paddle().set_flags({"FLAGS_check_nan_inf": True})),
    "paddle.printoptions": (lambda: str(_paddle().to_tensor([1 / 3])),
                            lambda: _paddle().set_printoptions(precision=1)),
    # paddle.to_tensor of a Tensor warns once per process, then sets this module flag; read
    # directly (reaching the warning would set it), polluted by reaching the warning
    "paddle.warned_flags": (lambda: _paddle_tensor_creation()._warned_in_tensor,
                            lambda: _warns(lambda: _paddle().to_tensor(_paddle().to_tensor([1.0])))),
}
# RNGs: "default" means the next draw is the first one after this case's seed
NUMPY_DRAWS: dict[str, Callable[[], float]] = {"numpy.random": lambda: float(_np().random.random())}
TORCH_DRAWS = {**NUMPY_DRAWS, "torch.random": lambda: float(_torch().rand(1).item())}
PADDLE_DRAWS = {**NUMPY_DRAWS, "paddle.random": lambda: float(_paddle().rand([1]).item())}


class _Stateful:
    """Mixed into a built-in adapter: the pollute / state_is_default operations."""

    states: dict[str, tuple[Reader, Polluter]] = NUMPY_STATES
    draws: dict[str, Callable[[], float]] = NUMPY_DRAWS

    @classmethod
    def state_names(cls) -> list[str]:
        """Every piece of state this adapter's tests change, RNGs included."""
        return [*cls.states, *cls.draws]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # the state names are the strings this adapter's steps pass (pollute('torch.anomaly'))
        cls.case_strings = frozenset(cls.state_names())

    defaults: dict[str, Any] | None = None
    first_draws: dict[str, float] = {}

    def take_defaults(self) -> dict[str, Any]:
        """The state the first case this adapter runs sees (inside a case NumPy's errstate
        is the one the isolation sets, not the process's)."""
        if self.defaults is None:
            self.defaults = {name: read() for name, (read, _) in self.states.items()}
        return self.defaults

    def seed(self, seed: int) -> None:
        # the draws this case's seed gives first, then the seed again so that the case
        # starts from it
        super().seed(seed)  # type: ignore[misc]
        self.first_draws = {name: draw() for name, draw in self.draws.items()}
        super().seed(seed)  # type: ignore[misc]

    def pollute(self, name: str) -> None:
        self.take_defaults()
        if name in self.draws:
            for _ in range(3):
                self.draws[name]()
        else:
            self.states[name][1]()

    def state_is_default(self, name: str) -> Any:
        import numpy as np

        if name in self.draws:
            same = self.draws[name]() == self.first_draws.get(name)
        else:
            same = self.states[name][0]() == self.take_defaults()[name]
        return np.array([same])

    def operations(self) -> dict[str, Operation]:
        # first in the MRO: the built-in adapter's table plus these two
        return {**super().operations(), "fn:pollute": self.pollute,  # type: ignore[misc]
                "fn:state_is_default": self.state_is_default}


class NumpyStateAdapter(_Stateful, NumpyAdapter):
    overrides_from = None  # a probe: no framework's case overrides apply to it
    name = "numpy_state"


class TorchStateAdapter(_Stateful, TorchAdapter):
    overrides_from = None  # a probe: no framework's case overrides apply to it
    name = "torch_state"
    states = {**NUMPY_STATES, **TORCH_STATES}
    draws = TORCH_DRAWS


class PaddleStateAdapter(_Stateful, PaddleAdapter):
    overrides_from = None  # a probe: no framework's case overrides apply to it
    name = "paddle_state"
    states = {**NUMPY_STATES, **PADDLE_STATES}
    draws = PADDLE_DRAWS
