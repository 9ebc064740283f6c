"""JAX compiled (issue 19): each case's steps as one function, compiled with ``jax.jit``
(traced once into a jaxpr, lowered to XLA and compiled for the CPU). Everything else is the
JAX adapter's.

What a jitted function can return is arrays only: the case's function returns, besides
arrays, ``None`` (an output that was not bound), and Python values a step computed from the
static trace (a shape, a dtype, an int, a list of arrays). ``compile`` wraps the function
so that only its array leaves leave ``jax.jit``: the rest of its output's structure
(``jax.tree_util``'s tree and the non-array leaves) is kept aside while JAX traces it and
put back around the arrays the compiled call returns. That is what a JAX user does with a
function of mixed outputs (``static`` parts returned through a closure or
``jax.eval_shape``); the arrays themselves are what jit returns.

Caches: ``jax.clear_caches()`` before every compile, so that no item reuses the traced or
compiled code of another (jit's caches are per function object too, and every item compiles
a function of its own)."""

from __future__ import annotations

import re
from typing import Any

from conformance.adapters.jax_adapter import JaxAdapter, _jax

# JAX names where it was tracing: a path of this checkout, and a line of this module
_TRACING_AT = re.compile(r"(while tracing the function \w+) at \S+:\d+")


class JaxJitAdapter(JaxAdapter):
    name = "jax_jit"
    title = "JAX, jax.jit"
    report_rank = 41
    compiles = "jax"

    # the tracer's own refusals, none of the kinds (docs/case-format.md, "Error kinds")
    error_patterns = {**JaxAdapter.error_patterns, "other": JaxAdapter.error_patterns["other"] + (
        r"^NonConcreteBooleanIndexError: Array boolean indices must be concrete",
        r"^AttributeError: DynamicJaxprTracer has no attribute",
        r"^ConcretizationTypeError: Abstract tracer value encountered",
        r"^TracerArrayConversionError: The numpy\.ndarray conversion method",
        r"The array passed to from_dlpack must have __dlpack__ and __dlpack_device__ methods",
        # jnp.frombuffer of an input, which jit hands the function as a tracer
        r"^TypeError: a bytes-like object is required, not '\w*Tracer'",
    )}

    def compile(self, fn: Any) -> Any:
        jax = _jax()
        jax.clear_caches()  # no traced or compiled code of an earlier item is reused
        tree_util = jax.tree_util
        static: dict[str, Any] = {}

        def arrays_only(*args: Any) -> list[Any]:
            leaves, tree = tree_util.tree_flatten(fn(*args))
            traced = [isinstance(leaf, jax.Array) for leaf in leaves]  # tracers are jax.Array
            static["tree"], static["leaves"], static["traced"] = tree, leaves, traced
            return [leaf for leaf, is_traced in zip(leaves, traced) if is_traced]

        compiled = jax.jit(arrays_only)

        def call(*args: Any) -> Any:
            out = iter(compiled(*args))
            leaves = [next(out) if is_traced else leaf for leaf, is_traced in zip(static["leaves"], static["traced"])]
            return tree_util.tree_unflatten(static["tree"], leaves)

        return call

    def error_message(self, exc: BaseException) -> str:
        return _TRACING_AT.sub(r"\1", super().error_message(exc))
