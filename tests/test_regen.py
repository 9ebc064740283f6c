"""``conformance regen``: the generated files of a checkout are what their sources make
(``--check``, which CI runs), a stale one is named and rewritten, and nothing is written
outside a checkout."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conformance.tools.cli import main
from conformance.tools.regen import GENERATED

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow(reason="measures the coverage of the whole corpus (loads every case file)")
def test_the_checkouts_generated_files_are_current(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["regen", "--check"]) == 0, capsys.readouterr().err
    assert capsys.readouterr().err == f"conformance regen: {len(GENERATED)} generated files current\n"


@pytest.mark.slow(reason="measures the coverage of a copy of the whole corpus, twice")
def test_a_stale_file_is_named_then_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(ROOT / "cases", tmp_path / "cases")
    for item in GENERATED:
        (tmp_path / item.path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / item.path, tmp_path / item.path)
    operations = tmp_path / "docs" / "operations.md"
    operations.write_text(operations.read_text().replace("| `x.at` |", "| `x.ta` |", 1))
    monkeypatch.chdir(tmp_path)
    assert main(["regen", "--check"]) == 1
    assert capsys.readouterr().err == ("conformance regen: docs/operations.md is not what its sources make "
                                       "(conformance ops): run 'conformance regen' and commit it\n")
    assert "| `x.ta` |" in operations.read_text()  # --check writes nothing
    assert main(["regen"]) == 0
    assert capsys.readouterr().err == "conformance regen: wrote docs/operations.md\n"
    assert operations.read_text() == (ROOT / "docs" / "operations.md").read_text()


def test_outside_a_checkout_it_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["regen"]) == 2
    assert capsys.readouterr().err == ("run it at the root of a checkout (the folder with cases/, docs/ and "
                                       "conformance/data/)\n")
    assert list(tmp_path.iterdir()) == []
