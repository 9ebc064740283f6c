"""conformance.spellings: what each operation-table entry calls, in the framework's own
spelling, read from the entries without importing a framework (the site's search and its
repro snippets use it; docs/site.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conformance import registry, spellings

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(("framework", "key", "calls"), [
    ("paddle", "method:reshape", ("paddle.Tensor.reshape",)),  # a function of the adapter's: x.reshape
    ("torch", "method:reshape", ("torch.Tensor.reshape",)),  # passthrough
    ("jax", "fn:as_tensor", ("jnp.asarray",)),  # jnp().asarray(...)
    ("tensorflow", "method:clone", ("tf.identity",)),
    ("torch", "fn:transpose_copy", ("torch.transpose_copy",)),  # getattr(_torch(), name), name in the closure
    ("numpy", "fn:asarray", ("np.asarray",)),  # import numpy inside the entry
    ("numpy", "method:transpose", ("np.swapaxes",)),  # the counterpart the audit names
    ("jax", "method:detach", ("jax.lax.stop_gradient",)),
])
def test_an_entry_is_spelled_as_the_framework_spells_what_it_calls(framework: str, key: str,
                                                                     calls: tuple[str, ...]) -> None:
    assert spellings.table(framework)[key].calls == calls


def test_a_passthrough_is_exactly_the_method_and_an_absent_entry_calls_nothing() -> None:
    assert spellings.table("torch")["method:clone"].method == "clone"
    assert spellings.table("torch")["method:view"].method is None  # its own function: dtype names
    assert spellings.table("numpy")["attr:T"].attr == "T"
    absent = spellings.table("numpy")["method:detach"]
    assert absent.calls == () and absent.absent


def test_the_search_words_name_the_frameworks_and_the_modules_in_full() -> None:
    words = spellings.search_words("fn:jnp_asarray")
    assert words == "jax jnp.asarray jax.numpy.asarray"


def test_every_compiled_mode_says_what_it_is() -> None:
    modes = [name for name in registry.framework_names() if registry.compiles(name)]
    assert modes and set(modes) <= set(spellings.COMPILERS)


def test_reading_every_table_imports_no_framework() -> None:
    code = ("import sys; from conformance import spellings\n"
            "for fw in spellings.eager_frameworks(): spellings.table(fw)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('torch', 'paddle', 'jax', 'tensorflow', 'mindspore', 'numpy', 'array_api_strict')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "[]"
