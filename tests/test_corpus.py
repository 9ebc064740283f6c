"""The corpus as data: every file loads, ids are unique, every seed claim is checked by at
least one case, and the generated operation docs match the adapters. (The corpus itself
runs against the real frameworks as the pytest items under cases/.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance import claims, registry
from conformance.load.reader import load_file
from conformance.model import Case
from conformance.tools.operations import operations_markdown

ROOT = Path(__file__).resolve().parent.parent
MIN_CASES = 40


@pytest.fixture(scope="module")
def corpus() -> list[Case]:
    vocab = registry.vocabulary()
    cases, errors = [], []
    for path in sorted((ROOT / "cases").rglob("*.yaml")):
        result = load_file(path, vocab, display_path=str(path.relative_to(ROOT)))
        cases += result.cases
        errors += [e.render() for _, e in result.errors]
    assert errors == []
    return cases


def test_corpus_size_and_unique_ids(corpus: list[Case]) -> None:
    ids = [c.id for c in corpus]
    assert len(ids) == len(set(ids))
    assert len(corpus) >= MIN_CASES


def test_every_seed_claim_is_checked_by_a_case(corpus: list[Case]) -> None:
    referenced = {claim for case in corpus for claim in case.claims}
    assert sorted(claims.claim_ids() - referenced) == []


def test_case_family_matches_its_folder(corpus: list[Case]) -> None:
    wrong = [f"{c.id} in {c.location.file}" for c in corpus
             if Path(c.location.file).parts[1] != c.family]
    assert wrong == []


def test_operations_doc_is_generated_from_the_adapters() -> None:
    assert (ROOT / "docs" / "operations.md").read_text() == operations_markdown(), (
        "docs/operations.md is stale: run 'conformance regen'")


def test_committed_report_lists_every_case_and_claim(corpus: list[Case]) -> None:
    # A fast guard that needs no framework; .ci/run compares the whole report byte for byte
    # with one rendered from its own run.
    report = (ROOT / "reports" / "behaviour.md").read_text(encoding="utf-8")
    missing = [c.id for c in corpus if f"`{c.id}`<br>[{c.location.file}:{c.location.line}]" not in report]
    assert missing == [], "reports/behaviour.md is stale: run `conformance run` and commit reports/"
    assert [c for c in sorted(claims.claim_ids()) if f"| **{c}** " not in report] == []


def test_complete_examples_in_the_docs_load() -> None:
    # every ```yaml block in the docs that is a whole case file must load as one
    import re

    from conformance.load.reader import load_text

    vocab = registry.vocabulary()
    for doc in ("docs/case-format.md", "README.md", "CONTRIBUTING.md"):
        for block in re.findall(r"```yaml\n(.*?)```", (ROOT / doc).read_text(), re.S):
            if block.startswith("cases:"):
                result = load_text(block, doc, vocab)
                assert [e.render() for _, e in result.errors] == [], doc
