"""Test-only adapters, never registered outside the tests: ``faulty`` (operations that hang,
segfault, abort or exit, for the sandbox) and ``numpy_state`` / ``torch_state`` /
``paddle_state`` (operations that change each piece of global state, for isolation)."""
