"""The layout of each operation's input, read from the steps (conformance/layouts.py): what an
operation page splits its kinds by (docs/site.md)."""

from __future__ import annotations

from conformance import declared
from conformance.layouts import KEEPS, LAYOUTS, MAKES, RESHAPES, production_layouts
from conformance.load.reader import Vocabulary, load_text


def layouts_of(steps: list[str], given: str = "{x: {shape: [2, 3], arange: true, dtype: float32}}"
               ) -> dict[tuple[int, str], str]:
    quoted = ", ".join(f'"{s}"' for s in steps)
    text = (f"cases:\n  - id: a.b\n    title: t\n    given: {given}\n    steps: [{quoted}]\n"
            "    expect: {error: null}\n")
    (case,) = load_text(text, "c.yaml", Vocabulary(operations=None)).cases
    return production_layouts(case.given, case.steps)


def test_a_given_input_is_contiguous_and_a_scalar_zero_d() -> None:
    assert layouts_of(["y = x.reshape(6)"]) == {(1, "x"): "contiguous"}
    assert layouts_of(["y = s.reshape(1)"], "{s: {shape: [], fill: 1.0, dtype: float32}}") == {(1, "s"): "0-d"}


def test_each_view_step_gives_its_layout_to_what_reads_it() -> None:
    steps = ["t = x.T", "a = t.reshape(6)", "s = x[1:]", "b = s.reshape(3)", "e = x[0].expand(4, 3)",
             "c = e.reshape(12)", "d = x[:, ::2]", "f = d.flatten()", "g = x.diagonal()", "h = g.clone()"]
    assert layouts_of(steps) == {
        (1, "x"): "contiguous", (2, "t"): "transposed", (3, "x"): "contiguous", (4, "s"): "sliced",
        (6, "e"): "expanded", (7, "x"): "contiguous", (8, "d"): "strided", (9, "x"): "contiguous",
        (10, "g"): "strided"}


def test_a_full_slice_keeps_the_layout_and_an_index_narrows_it() -> None:
    assert layouts_of(["t = x.T", "u = t[:]", "y = u.reshape(6)"])[(3, "u")] == "transposed"
    assert layouts_of(["u = x[..., None]", "y = u.reshape(6)"])[(2, "u")] == "contiguous"
    assert layouts_of(["u = x[-1]", "y = u.reshape(3)"])[(2, "u")] == "sliced"
    assert layouts_of(["u = x[:1]", "y = u.reshape(3)"])[(2, "u")] == "sliced"


def test_a_reshape_keeps_a_contiguous_layout_and_leaves_any_other_unsaid() -> None:
    assert layouts_of(["v = x.view(3, 2)", "y = v.t()"])[(2, "v")] == "contiguous"
    # a reshape of a transposed view copies on some frameworks and not others
    assert layouts_of(["t = x.T", "v = t.reshape(6)", "y = v.view(2, 3)"])[(3, "v")] == "other view"


def test_a_new_array_is_contiguous_and_an_in_place_write_keeps_the_layout() -> None:
    assert layouts_of(["t = x.T", "c = t + 1", "y = c.reshape(6)"])[(3, "c")] == "contiguous"
    assert layouts_of(["t = x.T", "c = t[[0]]", "y = c.reshape(3)"])[(3, "c")] == "contiguous"
    assert layouts_of(["t = x.T", "t += 1", "t.mul_(2)", "y = t.reshape(6)"])[(4, "t")] == "transposed"
    assert layouts_of(["t = x.T", "d = t.detach()", "y = d.reshape(6)"])[(3, "d")] == "transposed"


def test_an_input_made_from_another_has_the_layout_of_the_view_it_takes() -> None:
    given = "{b: {shape: [3, 4], arange: true, dtype: float32}, v: {from: 'b[1:3]'}, w: {from: 'b.T'}}"
    assert layouts_of(["y = v.reshape(8)", "z = w.reshape(12)"], given) == {(1, "v"): "sliced",
                                                                           (2, "w"): "transposed"}


def test_the_layouts_of_a_block_are_read_in_order() -> None:
    given = "{x: {shape: [2, 3], arange: true, dtype: float32}}"
    text = ("cases:\n  - id: a.b\n    title: t\n    given: " + given + "\n"
            '    steps: ["t = x.T", {no_grad: ["y = t.reshape(6)"]}]\n    expect: {error: null}\n')
    (case,) = load_text(text, "c.yaml", Vocabulary(operations=None)).cases
    assert production_layouts(case.given, case.steps) == {(1, "x"): "contiguous", (2, "t"): "transposed"}


def test_every_view_torch_declares_has_a_layout_rule() -> None:
    """A view operator torch's schemas declare (conformance/data/contracts/torch.yaml) that no
    rule names would be taken for an operation that computes a new, contiguous array."""
    ruled = set(MAKES) | KEEPS | RESHAPES | {"contiguous"}
    # torch's sparse and pinned-memory accessors: no step takes them of a strided input
    outside = {"ccol_indices", "col_indices", "crow_indices", "row_indices", "indices", "values", "coalesce",
               "pin_memory", "slice_inverse"}
    views = {key.partition(":")[2] for op in declared.packaged().operators if op.kind == "view" for key in op.keys}
    assert views - outside - ruled == set()
    assert set(MAKES.values()) <= set(LAYOUTS)
