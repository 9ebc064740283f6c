"""The outcomes kept across runs are data the suite wrote itself, never anyone else's
(issue 33's store, under issue 32's rules; docs/security.md).

An entry is named by a digest of public inputs (the case, the code, the versions), so anyone
can compute where a run would look. Planted, copied, moved or damaged entries are misses (the
item is computed), a store folder inside the checkout is refused, and decoding builds only
the engine's outcome classes.
"""

from __future__ import annotations

import os
import pickle
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conformance import registry
from conformance.load.reader import load_text
from conformance.run.engine import ERROR, run
from conformance.run.store import SUBFOLDER, OutcomeStore, open_store

CASE = """\
cases:
  - id: security.store.case
    title: "an ordinary case"
    given: {x: [1.0, 2.0]}
    steps:
      - y = x + 1.0
    expect: {values: {y: [2.0, 3.0]}}
"""


def _case(text: str = CASE) -> Any:
    result = load_text(text, "store.yaml", registry.vocabulary())
    assert not result.errors
    return result.cases[0]


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> OutcomeStore:
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", str(tmp_path / "cache"))
    opened = open_store(["numpy"])
    assert opened is not None
    return opened


def _outcome() -> Any:
    adapter = registry.get_adapter("numpy")
    adapter.setup()
    return run(_case(), adapter)


def test_an_outcome_comes_back_for_the_same_inputs_only(store: OutcomeStore) -> None:
    outcome = _outcome()
    store.put(_case(), "numpy", outcome, {"version": "2", "devices": ["cpu"]})
    found = store.get(_case(), "numpy")
    assert found is not None and found[0] == outcome and found[1] == {"version": "2", "devices": ["cpu"]}
    assert store.get(_case(), "torch") is None  # another framework
    assert store.get(_case(CASE.replace("x + 1.0", "x + 1.0 ")), "numpy") is not None  # same parsed step
    assert store.get(_case(CASE.replace("[1.0, 2.0]}", "[1.0, 2.5]}")), "numpy") is None  # another input
    other = OutcomeStore(store.directory, store.key, b"another code or version")
    assert other.get(_case(), "numpy") is None


def test_an_error_is_never_kept(store: OutcomeStore) -> None:
    outcome = _outcome()
    outcome.verdict = ERROR
    store.put(_case(), "numpy", outcome, {})
    assert store.get(_case(), "numpy") is None


class _Payload:
    def __init__(self, canary: Path) -> None:
        self.canary = canary

    def __reduce__(self) -> Any:
        return (os.system, (f"touch {self.canary}",))


def test_planted_moved_or_damaged_entries_are_misses(store: OutcomeStore, tmp_path: Path) -> None:
    outcome = _outcome()
    name = store.name(_case(), "numpy")
    path = store.directory / name[:2] / f"{name}.outcome"
    canary = tmp_path / "canary"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(_Payload(canary)))  # a pickle at the entry's name
    assert store.get(_case(), "numpy") is None and not canary.exists()
    store.put(_case(), "numpy", outcome, {})
    good = path.read_bytes()
    path.write_bytes(good[:-3] + b"xyz")  # damaged
    assert store.get(_case(), "numpy") is None
    other_name = store.name(_case(CASE.replace("[1.0, 2.0]}", "[1.0, 2.5]}")), "numpy")
    moved = store.directory / other_name[:2] / f"{other_name}.outcome"
    moved.parent.mkdir(parents=True, exist_ok=True)
    moved.write_bytes(good)  # a valid entry under another name
    assert store.get(_case(CASE.replace("[1.0, 2.0]}", "[1.0, 2.5]}")), "numpy") is None
    forged = OutcomeStore(store.directory, b"\0" * 32, store.salt)  # signed with another key
    forged.put(_case(), "numpy", outcome, {})
    assert store.get(_case(), "numpy") is None


def test_a_store_inside_the_checkout_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    subprocess.run(["git", "init", "-q", str(checkout)], check=True)
    monkeypatch.chdir(checkout)
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", "ci-cache")
    assert open_store(["numpy"]) is None
    err = capsys.readouterr().err
    assert "outcomes are not reused in this run" in err and "inside the checkout" in err
    assert not (checkout / "ci-cache" / SUBFOLDER).exists()
