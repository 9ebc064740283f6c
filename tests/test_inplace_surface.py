"""The in-place reference lists (conformance/data/coverage/*-inplace.yaml) and their generator,
conformance.tools.inplace_surface."""

from __future__ import annotations

import importlib.util

import pytest
import yaml

from conformance.tools import inplace_surface as surface


def _list(framework: str) -> dict:
    return yaml.safe_load((surface.DATA / f"{framework}-inplace.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("framework", sorted(surface.FRAMEWORKS))
def test_list_names_are_what_introspection_finds(framework: str) -> None:
    module, _, _ = surface.FRAMEWORKS[framework]
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")
    found = surface.introspect(framework)
    if found is None:
        pytest.skip(f"{module} could not be imported in a fresh process")
    document = _list(framework)
    assert document["version"] == surface.release(found["version"])
    assert [e["name"] for e in document["operations"]] == sorted(found["names"])


@pytest.mark.parametrize("framework", sorted(surface.FRAMEWORKS))
def test_list_header(framework: str) -> None:
    document = _list(framework)
    assert document["framework"] == framework
    assert document["set"] == "inplace"
    assert isinstance(document["version"], str)
    assert "python -m conformance.tools.inplace_surface" in document["source"]
    names = [e["name"] for e in document["operations"]]
    assert names == sorted(set(names))
    assert all(e["keys"] for e in document["operations"])


def test_every_torch_entry_has_counterparts_or_a_reason() -> None:
    for entry in _list("torch")["operations"]:
        has = bool(entry.get("counterparts")), bool(entry.get("no_counterpart"))
        assert has in ((True, False), (False, True)), entry
        assert set(entry.get("counterparts") or {}) <= set(surface.OTHERS), entry


def test_counterparts_name_methods_the_other_lists_hold() -> None:
    """A counterpart is a method of the other framework's list, or a function (a dotted name)."""
    others = {fw: {e["name"] for e in _list(fw)["operations"]} for fw in surface.OTHERS}
    for entry in _list("torch")["operations"]:
        for fw, name in (entry.get("counterparts") or {}).items():
            assert "." in name or name in others[fw], (entry["name"], fw, name)


def test_other_lists_keys_are_derived_from_torch_counterparts() -> None:
    torch_entries = _list("torch")["operations"]
    for fw in surface.OTHERS:
        entries = [{"name": e["name"]} for e in _list(fw)["operations"]]
        surface.derive_keys(entries, fw, torch_entries)
        assert [e["keys"] for e in entries] == [e["keys"] for e in _list(fw)["operations"]]


def test_merge_keeps_curated_fields_adds_and_drops_names() -> None:
    existing = [
        {"name": "eq_", "keys": ["method:stale"], "counterparts": {"paddle": "equal_"}, "note": "alias"},
        {"name": "map_", "no_counterpart": "torch only"},
        {"name": "gone_", "counterparts": {"paddle": "gone_"}},
        {"name": "apply_", "no_counterpart": "another meaning", "source": "https://example.org"},
    ]
    merged = surface.merge(existing, ["map_", "eq_", "new_", "apply_", "lonely_"],
                           {"paddle": {"new_", "apply_", "equal_"}, "mindspore": {"new_"}})
    assert merged == [
        # kept as curated, though Paddle has a same-named apply_: no counterpart is invented
        {"name": "apply_", "no_counterpart": "another meaning", "source": "https://example.org"},
        {"name": "eq_", "counterparts": {"paddle": "equal_"}, "note": "alias"},   # keys are not kept
        {"name": "lonely_"},                                                       # new, no same name
        {"name": "map_", "no_counterpart": "torch only"},
        {"name": "new_", "counterparts": {"mindspore": "new_", "paddle": "new_"}},  # new: same names only
    ]


def test_derive_keys() -> None:
    torch_entries = [{"name": "eq_", "counterparts": {"paddle": "equal_"}},
                     {"name": "abs_", "counterparts": {"paddle": "abs_"}},
                     {"name": "absolute_", "counterparts": {"paddle": "abs_"}}]
    paddle = [{"name": "abs_"}, {"name": "equal_"}, {"name": "scale_"}]
    surface.derive_keys(paddle, "paddle", torch_entries)
    assert [e["keys"] for e in paddle] == [["method:abs_", "method:absolute_"], ["method:eq_"], ["method:scale_"]]
    surface.derive_keys(torch_entries, "torch", torch_entries)
    assert [e["keys"] for e in torch_entries] == [["method:eq_"], ["method:abs_"], ["method:absolute_"]]


def test_review_names_what_needs_a_person() -> None:
    entries = [{"name": "a_"}, {"name": "b_", "counterparts": {"paddle": "gone_"}},
               {"name": "c_", "no_counterpart": "x"}, {"name": "d_", "no_counterpart": "x", "note": "why"}]
    notes = surface.review(entries, {"paddle": {"c_", "d_"}})
    assert notes == ["a_: neither counterparts nor no_counterpart (curate it)",
                     "b_: counterpart paddle gone_ is not a method of paddle's tensor",
                     "c_: paddle has a method of the same name, which the entry does not name"]


def test_dump_reads_back() -> None:
    document = {"framework": "torch", "set": "inplace", "title": "t: a title", "source": "s", "version": "2.10",
                "operations": [{"name": "eq_", "keys": ["method:eq_"], "counterparts": {"paddle": "equal_"},
                                "no_counterpart": "it's: odd", "note": "[x]"}]}
    text = surface.dump(document, "a comment")
    assert text.startswith("# a comment\n")
    assert "keys: [method:eq_]" in text
    assert yaml.safe_load(text) == document


def test_release_drops_the_local_tag() -> None:
    assert surface.release("2.13.0+cpu") == "2.13.0"
    assert surface.release("3.3.1") == "3.3.1"
