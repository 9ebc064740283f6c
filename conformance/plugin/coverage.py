"""Whether a run covered the whole corpus: the rule that keeps a partial run from replacing
the committed reports (README, "Partial runs").

A run is **full** when it ran every item of every case file of the corpus on every
registered framework: every case file under the corpus roots (the ``conformance_paths``
folders, else the packaged corpus) was collected and no other; every item those files
made was collected (no node ids named, no ``--lf`` filtering of a file's items); none was
deselected (``-k``, ``-m``, ``--frameworks``, ``--deselect``, ``--lf``); and every selected
item ran to a result (no ``-x`` or ``--maxfail`` stop). An interrupted run writes nothing at
all (plugin.ResultsRecorder). Anything else is **partial**, and :func:`partial_reasons`
says why, one reason per way.

:class:`Coverage` counts on the process that collects (the pytest process, or each
pytest-xdist worker, which hands its counts to the controller through ``workeroutput``);
the results recorder on the controller turns them into reasons.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conformance.load.folders import scan

WORKEROUTPUT_KEY = "conformance_coverage"
SHOWN = 3  # file names shown in a reason before "and N more"


def is_case_item(item: pytest.Item) -> bool:
    from conformance.plugin.collect import CaseErrorItem, CaseItem

    return isinstance(item, (CaseItem, CaseErrorItem))


class Coverage:
    """Counts, on the process that collects, what a session took of the corpus."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.collected = 0  # case items pytest collected
        self.deselected = 0  # of those, deselected by anything
        self.summary: dict[str, Any] | None = None

    def pytest_itemcollected(self, item: pytest.Item) -> None:
        if is_case_item(item):
            self.collected += 1

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected += sum(1 for item in items if is_case_item(item))

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        from conformance.plugin.collect import collected_key

        made = session.config.stash.get(collected_key, None)
        files = made.files if made is not None else set()
        corpus = {os.path.abspath(p) for p in scan(corpus_roots(session.config))[0]}
        from conformance.plugin.frameworks import selected_frameworks

        wanted = selected_frameworks(self.config)
        from conformance.plugin.decided import decided_key

        decided = len(session.config.stash.get(decided_key, ()))  # selected, and recorded without running
        self.summary = {
            "made": made.made if made is not None else 0,
            "collected": self.collected,
            "deselected": self.deselected - (made.by_frameworks + made.by_shard if made is not None else 0),
            "shard": list(self.config.getoption("shard") or ()) or None,
            "corpus": corpus_revision(sorted(corpus), corpus_roots(session.config)),
            "selected": sum(1 for item in session.items if is_case_item(item)) + decided,
            "frameworks": wanted,
            "modes": self.config.getoption("modes"),
            "frameworks_option": bool(self.config.getoption("frameworks")),
            "missing": sorted(_shown(corpus - files, session.config)),
            "missing_count": len(corpus - files),
            "outside": sorted(_shown(files - corpus, session.config)),
            "outside_count": len(files - corpus),
            "roots": [_display(Path(root), session.config) for root in corpus_roots(session.config)],
        }
        workeroutput = getattr(session.config, "workeroutput", None)
        if workeroutput is not None:  # a pytest-xdist worker: the controller decides
            workeroutput[WORKEROUTPUT_KEY] = self.summary


def corpus_revision(files: list[str], roots: list[Path]) -> str:
    """The corpus's revision: a SHA-256 of every case file's path (relative to its root)
    and bytes, the same on every machine for the same case files. Results files of the
    same corpus revision can be merged (``conformance merge``)."""
    digest = hashlib.sha256()
    resolved = [Path(root).resolve() for root in roots]
    for file in files:
        path = Path(file).resolve()
        name = next((str(path.relative_to(root)) for root in resolved if path.is_relative_to(root)), path.name)
        try:
            data = path.read_bytes()
        except OSError as exc:  # gone since the scan: its absence is part of this revision
            data = f"unreadable: {type(exc).__name__}".encode()
        digest.update(name.encode("utf-8") + b"\0" + len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()[:16]


def corpus_roots(config: pytest.Config) -> list[Path]:
    """The folders whose case files make the corpus: ``conformance_paths``, else the
    packaged corpus."""
    from conformance.plugin.roots import CASES_PACKAGE_DIR

    configured = [Path(p) for p in config.getini("conformance_paths")]
    return configured or [CASES_PACKAGE_DIR]


def _display(path: Path, config: pytest.Config) -> str:
    try:
        return os.path.relpath(path, str(config.invocation_params.dir))
    except ValueError:
        return str(path)


def _shown(paths: set[str], config: pytest.Config) -> list[str]:
    return [_display(Path(p), config) for p in sorted(paths)[:SHOWN]]


def _names(shown: list[str], count: int) -> str:
    more = f" and {count - len(shown)} more" if count > len(shown) else ""
    return ", ".join(shown) + more


def corpus_fields(summary: dict[str, Any] | None) -> dict[str, Any]:
    """The results file's ``run`` entries that let ``conformance merge`` join files:
    ``corpus`` (the corpus revision), ``corpus_items`` (the items the whole corpus makes on
    every framework, when this run collected every case file of it and no other) and
    ``shard`` ([K, N] when the run was one shard)."""
    if summary is None or "corpus" not in summary:
        return {}
    fields: dict[str, Any] = {"corpus": summary["corpus"]}
    if not summary["missing_count"] and not summary["outside_count"]:
        fields["corpus_items"] = summary["made"]
    if summary.get("shard"):
        fields["shard"] = list(summary["shard"])
    return fields


def suite_commit(roots: list[Path]) -> dict[str, Any] | None:
    """``{"sha", "modified"}``: the git commit the corpus was read from, and whether its case
    files differ from that commit (changed or untracked ones); None outside a git checkout
    or without git. Pages that cite a case link its file at this commit."""
    folder = Path(roots[0]) if roots else Path.cwd()
    where = folder if folder.is_dir() else folder.parent

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(where), *args], capture_output=True, text=True, timeout=20,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    sha = git("rev-parse", "--verify", "HEAD")
    if sha is None or len(sha.strip()) != 40:
        return None
    status = git("status", "--porcelain", "--", *(str(Path(root).resolve()) for root in roots))
    return {"sha": sha.strip(), "modified": bool(status and status.strip())}


def run_date() -> str:
    """The day the run ended (UTC, ``YYYY-MM-DD``): what the pages say the results are of."""
    return datetime.datetime.now(datetime.timezone.utc).date().isoformat()


def partial_reasons(summary: dict[str, Any] | None, recorded: int, frameworks: list[str]) -> list[str]:
    """Why the run is not a full run of the corpus (empty: it is one). ``summary``: the
    collecting process's :class:`Coverage` summary (None: no process said what it
    collected); ``recorded``: the records of case items written; ``frameworks``: every
    registered framework."""
    if summary is None:
        return [("what the run collected is not known (its collection did not finish, or no pytest-xdist worker "
                 "reported it)")]
    reasons = []
    roots = ", ".join(summary["roots"])
    if summary["missing_count"]:
        reasons.append(f"{summary['missing_count']} of the corpus's case files not collected (a path subset, "
                       f"--ignore, --lf): {_names(summary['missing'], summary['missing_count'])}")
    if summary["outside_count"]:
        reasons.append(f"{summary['outside_count']} case files from outside the corpus ({roots}): "
                       f"{_names(summary['outside'], summary['outside_count'])}")
    left_out = summary["made"] - summary["collected"]
    if left_out > 0:
        reasons.append(f"{left_out} case items left out at collection (node ids, --lf)")
    chosen = summary["frameworks"]
    if chosen and set(frameworks) - set(chosen):
        left_out = ", ".join(f for f in frameworks if f not in chosen)
        option = "--modes" if summary.get("modes") and not summary.get("frameworks_option") else "--frameworks"
        reasons.append(f"only {', '.join(chosen)} ({option}; not {left_out})")
    if summary.get("shard"):
        k, n = summary["shard"]
        reasons.append(f"shard {k}/{n} (--shard; conformance merge joins the {n} shards' results)")
    if summary["deselected"]:
        reasons.append(f"{summary['deselected']} case items deselected (-k, -m, --deselect, --lf)")
    not_run = summary["selected"] - recorded
    if not_run > 0:
        reasons.append(f"{not_run} of {summary['selected']} selected case items did not run (-x, --maxfail)")
    return reasons


# this process's coverage of the corpus (collected here: not an xdist controller)
coverage_key = pytest.StashKey[Coverage]()
