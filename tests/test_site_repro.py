"""The case pages' repro snippets (conformance/site/repro.py; docs/site.md, "Reproducing a
case"): generated from the parsed steps, with every value of the case written by repr(),
shown escaped; and, on a corpus run's results, a sample of them run in a subprocess without
the suite, printing what the run recorded.

The sample: 20 cases, chosen deterministically (by the SHA-256 of their ids) among those
whose numpy and torch records pass with no error and whose snippets on both can run as is;
each snippet run on numpy and on torch; and 5 such cases of torch_compile (torch.compile
wrapping the case's function, about a second each). The results come from ``CONFORMANCE_CORPUS_RESULTS``
(tests/corpus_results.py: a full run of this checkout's corpus, as .ci/run sets it), or, for a
local look at another run, ``CONFORMANCE_REPRO_RESULTS``; without either the test skips,
saying so.
"""

from __future__ import annotations

import ast
import cmath
import hashlib
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from corpus_results import ENV, corpus_results

from conformance import registry
from conformance.ir import Const, Op, Ref
from conformance.load.reader import load_text
from conformance.report.results import load_results
from conformance.resultsmodel import ResultsDocument
from conformance.site import repro

ROOT = Path(__file__).resolve().parent.parent
LOCAL = "CONFORMANCE_REPRO_RESULTS"
SAMPLE = 20

CASE = """\
cases:
- id: views.hostile.text
  title: "a title with </code><script>alert(1)</script> and a 'quote'"
  given:
    x: {data: [[1.0, 2.0], [3.0, 4.0]]}
  steps:
    - y = x.reshape(4)
    - z = x.view('float32')
  expect:
    same_object: {y & x: false}
"""


def hostile_case() -> Any:
    result = load_text(CASE, "cases/views/hostile.yaml", registry.vocabulary())
    assert not result.errors, result.errors
    return result.cases[0]


def test_a_case_string_is_written_with_repr_and_a_title_stays_in_its_comment() -> None:
    text = repro.snippet(hostile_case(), "torch").text
    assert "z = x.view(torch.float32)" in text  # the dtype name as torch's dtype (docs/adapters.md)
    assert "y = x.reshape(4)" in text
    first = text.splitlines()[0]
    assert first.startswith("# views.hostile.text on torch: a title with </code><script>") and "'quote'" in first
    compile(text, "snippet", "exec")  # the title cannot break out of its comment


def test_a_translated_entry_is_named_not_guessed() -> None:
    snippet = repro.snippet(hostile_case(), "paddle")  # paddle's reshape takes a list: the adapter translates
    assert not snippet.runnable and "# CANNOT RUN AS IS: step 1" in snippet.text
    assert "paddle.Tensor.reshape" in snippet.text


def test_the_snippet_is_escaped_on_the_page() -> None:
    from conformance.site.render import environment

    template = environment().from_string("<code>{{ s.text }}</code>")
    html = template.render(s=repro.snippet(hostile_case(), "numpy"))
    assert "<script>" not in html and "&lt;/code&gt;&lt;script&gt;" in html


def test_an_expression_the_table_lacks_is_a_comment() -> None:
    w = repro._Writer("numpy")
    with pytest.raises(repro._Unspelled):
        w.expr(Op("method:requires_grad_", (Ref("x"), Const(True))))


def test_load_cases_only_looks_names_up_among_the_checkouts_case_files(tmp_path: Path) -> None:
    """A results file's case-file names are data from anywhere: a name too long for the file
    system, one that leads out of cases/, through a link or to a file that is not a case file
    loads nothing and raises nothing; a checkout's case file named as it is listed loads."""
    (tmp_path / "cases" / "views").mkdir(parents=True)
    (tmp_path / "cases" / "views" / "hostile.yaml").write_text(CASE)
    (tmp_path / "elsewhere.yaml").write_text(CASE.replace("views.hostile.text", "views.elsewhere"))
    (tmp_path / "cases" / "link.yaml").symlink_to(tmp_path / "elsewhere.yaml")
    (tmp_path / "cases" / "conftest.py").write_text("raise SystemExit")
    hostile = ["cases/views/hostile.yaml" + "a" * 400, "cases/" + "b" * 300 + "/c.yaml", "elsewhere.yaml",
               "cases/../elsewhere.yaml", str(tmp_path / "elsewhere.yaml"), "cases/link.yaml", "cases/conftest.py",
               "cases/views/./hostile.yaml", "cases/views/hostile.yaml\x00", ""]
    assert repro.load_cases(hostile, tmp_path) == {}
    assert list(repro.load_cases([*hostile, "cases/views/hostile.yaml"], tmp_path)) == ["views.hostile.text"]


# ---- the sample, run


def results() -> ResultsDocument:
    if os.environ.get(ENV):
        return corpus_results()
    local = os.environ.get(LOCAL)
    if local:
        return load_results(Path(local))
    pytest.skip(f"runs snippets against a corpus run's results: {ENV}=FILE (or {LOCAL}=FILE locally)")


RUNNER = """
import contextlib, io, json, sys, traceback
out = {}
for name, text in json.load(sys.stdin).items():
    buffer = io.StringIO()
    try:
        with contextlib.redirect_stdout(buffer):
            exec(compile(text, name, "exec"), {"__name__": "__main__"})
        out[name] = buffer.getvalue()
    except BaseException:
        out[name] = "RAISED " + traceback.format_exc(limit=2)
print(json.dumps(out))
"""


def run(texts: dict[str, str]) -> dict[str, str]:
    done = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(texts), capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def same(a: Any, b: Any) -> bool:
    """A printed value against the recorded one (complex numbers are recorded as text)."""
    if isinstance(a, complex) and isinstance(b, str):
        try:
            return cmath.isclose(a, complex(b.replace(" ", "")), rel_tol=1e-6, abs_tol=1e-6)
        except ValueError:
            return False
    if isinstance(a, (list, tuple)) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6) or (math.isnan(a) and math.isnan(b))
    return bool(a == b)


def printed(output: str) -> dict[str, Any]:
    values = {}
    for line in output.splitlines():
        key, _, text = line.partition(" ")
        try:
            values[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError):  # nan, inf: not literals
            values[key] = text
    return values


@pytest.mark.parametrize(("frameworks", "size"), [(("numpy", "torch"), SAMPLE), (("torch_compile",), 5),
                                               (("jax_jit",), 5), (("tensorflow_function",), 3)])
def test_a_sample_of_snippets_prints_what_the_run_recorded(frameworks: tuple[str, ...], size: int) -> None:
    check_sample(frameworks, size)


def check_sample(frameworks: tuple[str, ...], size: int) -> None:
    doc = results()
    for fw in frameworks:
        module = repro.COMPILED[fw][0] if fw in repro.COMPILED else fw
        if subprocess.run([sys.executable, "-c", f"import {module}"],
                          capture_output=True).returncode:
            pytest.skip(f"{fw} is not installed here")
    records = {(r.case, r.framework): r for r in doc.results}
    cases = repro.load_cases(info.file for info in doc.cases.values())
    eligible = []
    for case_id in sorted(cases, key=lambda c: hashlib.sha256(c.encode()).hexdigest()):
        recs = [records.get((case_id, fw)) for fw in frameworks]
        if not all(r is not None and r.outcome == "pass" and r.behaviour.error is None for r in recs):
            continue
        snippets = [repro.snippet(cases[case_id], fw) for fw in frameworks]
        if all(s.runnable and s.printed for s in snippets):
            eligible.append((case_id, snippets))
        if len(eligible) == size:
            break
    assert len(eligible) == size, f"only {len(eligible)} cases can run as is on {frameworks}"
    disagreements = []
    compared = 0
    for i, fw in enumerate(frameworks):
        outputs = run({case_id: snippets[i].text for case_id, snippets in eligible})
        for case_id, snippets in eligible:
            seen = printed(outputs[case_id])
            observed = records[(case_id, fw)].observed
            for key in snippets[i].printed:
                if key not in observed:
                    continue
                compared += 1
                if key not in seen or not same(seen[key], observed[key]):
                    disagreements.append(f"{case_id} on {fw}: {key} printed {seen.get(key, outputs[case_id])!r}, "
                                         f"recorded {observed[key]!r}")
    assert compared > 0
    assert disagreements == [], f"{len(disagreements)} of {compared} printed observations differ: {disagreements}"
    print(f"{len(eligible)} cases x {frameworks}: {compared} printed observations agree with the run's")


def test_the_case_page_shows_each_snippet_escaped_with_a_copy_button() -> None:
    from results_factory import typed
    from test_site import site_sample

    from conformance.site import pages, render

    case = hostile_case()
    doc = site_sample()
    doc["cases"]["views.reshape.agree"].update(title=case.title, operations=sorted(case.operations()))
    files = render.render(pages.build(typed(doc), None, None, {"views.reshape.agree": case}))
    page = files["cases/views.reshape.agree.html"]
    assert '<details class="repro" id="repro-torch">' in page
    assert "<button" not in page  # copy.js makes each snippet's Copy button (tests/test_site_browser.py)
    # a compiled mode's snippet is its own: its id, its summary (not a second torch)
    assert '<details class="repro" id="repro-torch_compile">' in page and page.count('id="repro-torch"') == 1
    assert "<summary>torch_compile" in page
    assert "&lt;/code&gt;&lt;script&gt;alert(1)" in page and "<script>alert" not in page
    assert '<script src="../copy.js"></script>' in page and "copy.js" in files
    assert 'id="repro"' not in files["cases/views.expand.paddle_copies.html"]  # no case loaded: no section
    # not applicable: a snippet that cannot run as is (paddle's, whose reshape the adapter
    # translates) is left out; one that runs as is (torch's) stays
    for r in doc["results"]:
        if r["case"] == "views.reshape.agree" and r["framework"] in ("paddle", "torch"):
            r.update(outcome="not_applicable", reason="no counterpart", steps=[])
    files = render.render(pages.build(typed(doc), None, None, {"views.reshape.agree": case}))
    page = files["cases/views.reshape.agree.html"]
    assert 'id="repro-paddle"' not in page and 'id="repro-torch"' in page and 'id="repro-numpy"' in page
    # the checkout's case is not the one the results recorded (its title changed): no snippet
    doc["cases"]["views.reshape.agree"]["title"] = "another title"
    files = render.render(pages.build(typed(doc), None, None, {"views.reshape.agree": case}))
    assert 'id="repro"' not in files["cases/views.reshape.agree.html"]
