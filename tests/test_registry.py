"""A framework is one adapter module plus one registration: its title, its place in the
reports, its capabilities and its DLPack operations come from the registry and the adapter's
class attributes, and nothing else in the suite names a framework."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from probe_adapters.frozen import FrozenAdapter

from conformance import registry
from conformance.adapters.base import Adapter
from conformance.adapters.numpy_adapter import NumpyAdapter
from conformance.load.reader import DEVICES, Vocabulary, load_text
from conformance.outcomes import FAIL, PASS
from conformance.run.engine import run

ROOT = Path(__file__).resolve().parent.parent
AUTOGRAD_PROPERTIES = {"grad", "requires_grad", "is_leaf"}


def test_builtin_frameworks_are_declared_by_their_adapters() -> None:
    declared = {fw.name: (fw.title, fw.builtin, fw.autograd, fw.mutable, fw.devices, fw.dlpack_export,
                          fw.dlpack_import, fw.loads, fw.compiles) for fw in registry.frameworks()}
    # what these built-ins declare (a framework added later is not listed here: its adapter's
    # declarations are its own, checked against its table below)
    assert {name: declared[name] for name in KNOWN_DECLARATIONS} == KNOWN_DECLARATIONS
    assert registry.framework_names() == list(registry.BUILTIN)


KNOWN_DECLARATIONS = {
    "numpy": ("NumPy", True, False, True, ("cpu",), True, True, True, None),
    "torch": ("PyTorch", True, True, True, ("cpu", "cuda"), True, True, True, None),
    "paddle": ("PaddlePaddle", True, True, True, ("cpu", "cuda"), True, True, True, None),
    "jax": ("JAX", True, False, False, ("cpu",), True, True, True, None),
    "tensorflow": ("TensorFlow", True, False, False, ("cpu",), True, True, True, None),
    "mindspore": ("MindSpore", True, False, True, ("cpu",), False, False, True, None),
    "array_api_strict": ("array-api-strict", True, False, True, ("cpu",), True, True, True, None),
    # compiled modes (issue 19): the framework each runs compiled
    "torch_compile": ("PyTorch, torch.compile (aot_eager)", True, True, True, ("cpu", "cuda"), True, True, True,
                      "torch"),
    "torch_inductor": ("PyTorch, torch.compile (inductor)", True, True, True, ("cpu", "cuda"), True, True, True,
                       "torch"),
    "jax_jit": ("JAX, jax.jit", True, False, False, ("cpu",), True, True, True, "jax"),
    "tensorflow_function": ("TensorFlow, tf.function", True, False, False, ("cpu",), True, True, True,
                            "tensorflow"),
    "tensorflow_xla": ("TensorFlow, tf.function (jit_compile=True, XLA)", True, False, False, ("cpu",),
                       True, True, True, "tensorflow"),
    "paddle_static": ("PaddlePaddle, paddle.jit.to_static (SOT)", True, True, True, ("cpu", "cuda"), True, True,
                      True, "paddle"),
}


def test_a_compiled_modes_lineage_is_its_framework_then_the_modes_it_derives_from() -> None:
    lineages = {name: registry.lineage(name) for name in registry.BUILTIN if registry.lineage(name)}
    assert {name: lineages[name] for name in KNOWN_LINEAGES} == KNOWN_LINEAGES
    for name, lineage in lineages.items():
        if registry.compiles(name):  # a compiled mode: its framework first, itself no compiled mode
            assert registry.framework(name).compiles == lineage[0] and not registry.lineage(lineage[0])
        else:  # a framework derived from another (overrides_from): that one first
            assert lineage[0] == registry.adapter_class(name).overrides_from, name


KNOWN_LINEAGES = {
    "torch_compile": ("torch",), "torch_inductor": ("torch", "torch_compile"), "jax_jit": ("jax",),
    "tensorflow_function": ("tensorflow",), "tensorflow_xla": ("tensorflow", "tensorflow_function"),
    "paddle_static": ("paddle",)}


def test_report_order_comes_from_the_adapters_ranks() -> None:
    # the built-ins by rank; a name not registered here (a results file from elsewhere) after
    # them, with every unranked adapter, by name
    assert registry.report_order(["numpy", "zeta", "paddle", "alpha", "torch", "array_api_strict", "mindspore",
                                  "tensorflow", "jax"]) == [
        "torch", "paddle", "numpy", "jax", "tensorflow", "mindspore", "array_api_strict", "alpha", "zeta"]


@pytest.mark.parametrize("name", list(registry.BUILTIN))
def test_declared_capabilities_agree_with_the_table(name: str) -> None:
    adapter = registry.get_adapter(name)
    fw = registry.framework(name)
    if fw.autograd:
        assert adapter.lacks("method:backward") is None
        assert not AUTOGRAD_PROPERTIES & adapter.unobservable
    else:
        assert adapter.lacks("method:backward") is not None
        # a functional gradient may have a context that stops it recording (MindSpore's _no_grad)
        assert fw.functional_gradient or adapter.lacks("block:no_grad") is not None
        if fw.functional_gradient:
            # backward() read as the functional gradient: a leaf's gradient is observable, no
            # other autograd property (conformance/run/gradients.py)
            assert AUTOGRAD_PROPERTIES - adapter.unobservable == {"grad"}
        else:
            assert AUTOGRAD_PROPERTIES <= adapter.unobservable
    assert set(fw.devices) <= set(DEVICES) and "cpu" in fw.devices
    if fw.dlpack_import:
        assert "fn:from_dlpack" in adapter.ops
    assert fw.mutable == adapter.mutable


def test_adapters_base_names_no_framework() -> None:
    """base.py imports no adapter module, and no string in its code names a built-in
    framework other than NumPy (the suite's own array library: inputs and probes)."""
    tree = ast.parse((ROOT / "adapters" / "base.py").read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {str(node.module) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not [m for m in imported if m.startswith("conformance.adapters")], imported
    code = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and "\n" not in node.value]  # docstrings and comments may mention frameworks
    for name in registry.BUILTIN:
        if name != "numpy":
            assert not [s for s in code if name in s.lower()], name


def test_dlpack_operations_are_built_from_declarations() -> None:
    conversions = registry.dlpack_conversions()
    importers = [name for name in registry.BUILTIN if registry.adapter_class(name).dlpack_import]
    assert list(conversions) == [f"fn:{name}_from_dlpack" for name in importers]
    assert "mindspore" not in importers  # its 2.10 from_dlpack takes no other framework's (docs/adapters.md)
    for name in registry.BUILTIN:
        ops = registry.get_adapter(name).ops
        exports = registry.adapter_class(name).dlpack_export
        # an exporter's table holds the registry's conversions; another's (MindSpore) may name
        # them, as operations it has not, never as them
        assert all((ops.get(key) is into) == exports for key, into in conversions.items()), name
    import numpy as np

    array = np.arange(3.0)
    assert np.shares_memory(conversions["fn:numpy_from_dlpack"](array), array)


def test_a_registered_importer_gets_dlpack_into_it_in_every_exporters_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """An adapter registered through the entry point that declares DLPack import (frozen,
    NumPy's subclass) makes fn:frozen_from_dlpack, which every exporter's table then holds;
    one that declares neither (minimal) gets none and gives none."""
    specs = {**registry.BUILTIN, "frozen": "probe_adapters.frozen:FrozenAdapter",
             "minimal": "extra_adapter.minimal:MinimalAdapter"}
    for cached in (registry.adapter_specs, registry.adapter_class, registry.dlpack_conversions):
        cached.cache_clear()
    monkeypatch.setattr(registry, "adapter_specs", lambda: specs)
    try:
        from extra_adapter.minimal import MinimalAdapter

        from conformance.adapters.numpy_adapter import NumpyAdapter

        numpy_ops = NumpyAdapter().ops
        assert "fn:frozen_from_dlpack" in numpy_ops and "fn:minimal_from_dlpack" not in numpy_ops
        assert not [k for k in MinimalAdapter().ops if k.endswith("_from_dlpack")]
        assert registry.framework("frozen").mutable is False
        # frozen inherits NumPy's rank (30); equal ranks go by name
        assert registry.report_order(["numpy", "frozen", "minimal"]) == ["minimal", "frozen", "numpy"]
    finally:
        for cached in (registry.adapter_class, registry.dlpack_conversions):
            cached.cache_clear()


def test_the_case_schema_is_generated_for_the_registered_frameworks(monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = json.loads(registry.CASE_SCHEMA_FILE.read_text(encoding="utf-8"))
    assert registry.case_schema() == shipped  # the shipped file is what the built-ins give
    monkeypatch.setattr(registry, "framework_names", lambda: [*registry.BUILTIN, "extra"])
    schema = registry.case_schema()
    assert list(schema["$defs"]["case"]["properties"]["frameworks"]["properties"]) == [*registry.BUILTIN, "extra"]
    assert list(schema["$defs"]["error"]["properties"]) == ["at", "kind", *registry.BUILTIN, "extra"]
    assert schema["$defs"]["error"]["properties"]["extra"] == shipped["$defs"]["error"]["properties"]["numpy"]


def test_the_vocabulary_names_the_registered_frameworks() -> None:
    assert tuple(Vocabulary().frameworks) == tuple(registry.framework_names())


def test_an_adapter_class_is_an_adapter() -> None:
    for name in registry.framework_names():
        assert issubclass(registry.adapter_class(name), Adapter)
    assert issubclass(FrozenAdapter, Adapter)


class _DerivedUnsaid(NumpyAdapter):
    name = "numpy_derived"


class _DerivedFollowing(NumpyAdapter):
    name = "numpy_derived"
    overrides_from = "numpy"


class _DerivedOwn(NumpyAdapter):
    name = "numpy_derived"
    overrides_from = None


DERIVED_CASE = """\
cases:
  - id: registry.derived.clone
    title: "a copy, which the shared expectation gets wrong on purpose and NumPy's override right"
    given: {x: [1.0, 2.0]}
    steps:
      - y = x.clone()
    expect: {shares_memory: {y & x: true}}
    frameworks:
      numpy:
        reason: "a test case: the override is what holds"
        expect: {shares_memory: {y & x: false}}
"""


def test_a_derived_adapter_must_say_whether_its_parents_overrides_apply(monkeypatch: pytest.MonkeyPatch) -> None:
    specs = {**registry.adapter_specs(), "numpy_derived": "tests:Derived"}
    monkeypatch.setattr(registry, "adapter_specs", lambda: specs)
    assert registry.overrides_unsaid("numpy_derived", _DerivedUnsaid) == (
        "adapter 'numpy_derived' (tests:Derived) derives from the adapter of 'numpy' and does not say whether numpy's "
        "case overrides apply to its items: set overrides_from = 'numpy' in its class (they apply first, then its "
        "own) or overrides_from = None (only its own)")
    assert registry.overrides_unsaid("numpy_derived", _DerivedFollowing) is None
    assert registry.overrides_unsaid("numpy_derived", _DerivedOwn) is None
    assert registry.overrides_unsaid("torch_inductor", registry.adapter_class("torch_inductor")) is None  # compiled


def test_a_derived_framework_gets_its_parents_overrides_only_when_it_says_so() -> None:
    vocabulary = Vocabulary(frameworks=[*registry.framework_names(), "numpy_derived"])
    (case,) = load_text(DERIVED_CASE, "t.yaml", vocabulary).cases
    assert run(case, registry.get_adapter("numpy")).verdict == PASS
    assert _DerivedFollowing.lineage() == ("numpy",) and _DerivedOwn.lineage() == ()
    assert run(case, _DerivedFollowing()).verdict == PASS
    assert run(case, _DerivedOwn()).verdict == FAIL
