"""``conformance matrix numpy==1.26.4,2.0.2 paddlepaddle==3.0.0,3.3.1``: the corpus on each
release of a framework, each in an environment of its own, one results file per release.

For each release: an environment holding that release and what the sandbox child needs
(NumPy, PyYAML, ruamel.yaml, packaging; never this package, which the child takes from here,
nor any other framework) is made once and kept under ``--envs``, with uv where it is installed
(fast, its package cache shared by every environment) and ``venv`` + pip otherwise. The
corpus then runs in this process's pytest as usual, its items on that framework only, with
the sandbox child started from the release's interpreter (``CONFORMANCE_CHILD_PYTHON``,
conformance.run.sandbox): the pytest side never imports a framework, so it needs nothing of
the release. Each results file records the release (``run.release``).

A release that cannot be installed (no such version, no wheel for this Python, a failing
build) or whose framework cannot be imported still gets its results file, saying so
(``run.release.error``): the other releases run, and ``conformance changelog`` shows that
column with its error. Pure of frameworks: nothing here imports one.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from conformance import registry
from conformance.releases import release_key
from conformance.report.outputs import write_files
from conformance.report.results import ResultsFileError, load_results, results_document, write_atomically
from conformance.resultsmodel import Installation, Run
from conformance.resultsmodel import Release as ReleaseStamp
from conformance.run.sandbox import CHILD_PYTHON_ENV

# what the sandbox child imports besides the framework and the standard library
CHILD_REQUIREMENTS = ("PyYAML>=6.0", "ruamel.yaml>=0.18.6", "packaging>=23")
MARKER = "conformance-env.json"  # written last: an environment without it is remade
INSTALL_LOG_LINES = 25  # of a failed install's output, kept in the results file


MAX_VERSION_CHARS = 64
# what a PEP 440 version is written with (epochs, local labels: 1!2.0, 2.13.0+cpu); checked
# before packaging reads it, which also takes surrounding blanks and a leading "v"
_VERSION_CHARS = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+!_-]*")
SPEC_HELP = "write PACKAGE==V1,V2,... with PEP 440 versions, e.g. numpy==1.26.4,2.4.6"


class MatrixError(Exception):
    """A release list the command cannot read, or a place it must not write: one line per
    problem (:attr:`problems`)."""

    def __init__(self, problems: str | list[str]) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("; ".join(self.problems))


@dataclass(frozen=True)
class Release:
    framework: str  # the eager framework (registry name)
    package: str  # the distribution named on the command line
    version: str

    @property
    def slug(self) -> str:
        return f"{self.package}-{self.version}"


@dataclass
class ReleaseRun:
    release: Release
    results: Path
    env_seconds: float = 0.0
    run_seconds: float = 0.0
    env_state: str = "kept"  # made now, kept (there already), or failed
    error: str | None = None
    counts: dict[str, int] = field(default_factory=dict)


def packages() -> dict[str, str]:
    """Distribution name -> eager framework, for every registered framework."""
    out = {}
    for name in registry.eager_names():
        cls = registry.adapter_class(name)
        out[cls.distribution.lower()] = name
    return out


def parse_releases(specs: list[str]) -> list[Release]:
    """``["numpy==1.26.4,2.0.2", "paddlepaddle==3.0.0"]`` -> releases, in the order given.
    A framework's registry name is accepted for its distribution (``paddle==3.0.0``).

    Each spec becomes a requirement handed to pip or uv and each version a file name
    (``OUT/FRAMEWORK/VERSION.json``), so only a registered framework and PEP 440 versions
    are taken: never a pip option (``-r``, ``--index-url``), a path, a URL or a direct
    reference (``@``), an environment marker, nor any blank."""
    known = packages()
    by_name = {fw: dist for dist, fw in known.items()}
    out: list[Release] = []
    problems = []
    for spec in specs:
        shown = repr(spec[:120])
        refused = _spec_problem(spec)
        if refused:
            problems.append(f"{shown}: {refused}")
            continue
        package, eq, versions = spec.partition("==")
        package = package.lower()
        if not eq or not versions:
            problems.append(f"{shown}: {SPEC_HELP}")
            continue
        if package in by_name:
            package = by_name[package]
        if package not in known:
            problems.append(f"{shown}: {package[:60]!r} is no registered framework's package (known: "
                            f"{', '.join(sorted(known))}, or their frameworks' names)")
            continue
        for version in versions.split(","):
            wrong = version_problem(version)
            if wrong:
                problems.append(f"{shown}: {wrong}")
                continue
            out.append(Release(known[package], package, version))
    if problems:
        raise MatrixError(problems)
    return out


def _spec_problem(spec: str) -> str | None:
    """Why a whole spec is refused before it is read, or None."""
    if not spec:
        return f"an empty release spec; {SPEC_HELP}"
    if any(c.isspace() for c in spec):
        return f"holds a blank; {SPEC_HELP} (one argument, no spaces)"
    if spec.startswith("-"):
        return f"a pip option is not a release (only a framework and its versions are installed): {SPEC_HELP}"
    if "://" in spec or "@" in spec:
        return f"a URL or direct reference (@) is not a release: {SPEC_HELP}"
    if "/" in spec or "\\" in spec:
        return f"a path is not a release: {SPEC_HELP}"
    if ";" in spec:
        return f"an environment marker (;) is not taken: {SPEC_HELP}"
    if (any(c in spec for c in "<>~!=") and "==" not in spec) or spec.count("==") > 1 or "===" in spec:
        return f"only == pins a release (no ranges, no ===): {SPEC_HELP}"
    return None


def version_problem(version: str) -> str | None:
    """Why ``version`` cannot be a release of the matrix (a requirement pin and a file name),
    or None: a PEP 440 version of at most 64 characters, written with its own characters."""
    if not version:
        return f"an empty version; {SPEC_HELP}"
    shown = repr(version[:60])
    if len(version) > MAX_VERSION_CHARS:
        return f"version {shown}... is {len(version)} characters long; at most {MAX_VERSION_CHARS}"
    if version in (".", "..") or not _VERSION_CHARS.fullmatch(version):
        return f"version {shown} is not a PEP 440 version (e.g. 2.4.6, 3.1.0rc1, 2.13.0+cpu): {SPEC_HELP}"
    try:
        Version(version)
    except InvalidVersion:
        return f"version {shown} is not a PEP 440 version (e.g. 2.4.6, 3.1.0rc1, 2.13.0+cpu): {SPEC_HELP}"
    return None


def inside(base: Path, *parts: str, what: str) -> Path:
    """``base/parts...``, refused (:class:`MatrixError`) unless it stays inside ``base`` once
    every link on the way is followed."""
    path = base.joinpath(*parts)
    root = base.resolve()
    if not path.resolve().is_relative_to(root) or path.resolve() == root:
        raise MatrixError(f"{path}: outside {what} ({base}); nothing is written outside it")
    return path


def results_path(release: Release, out: Path) -> Path:
    """``OUT/FRAMEWORK/VERSION.json``, inside ``out``."""
    if version_problem(release.version):
        raise MatrixError(f"{release.framework} {release.version[:60]!r}: {version_problem(release.version)}")
    return inside(out, release.framework, f"{release.version}.json", what="--out")


def environment_path(release: Release, envs: Path) -> Path:
    """The release's environment folder, inside ``envs``."""
    if version_problem(release.version):
        raise MatrixError(f"{release.framework} {release.version[:60]!r}: {version_problem(release.version)}")
    name = f"{release.slug}-py{sys.version_info.major}.{sys.version_info.minor}"
    return inside(envs, name, what="--envs")


def check_places(releases: list[Release], out: Path, envs: Path) -> None:
    """Before anything runs: every release's results file and environment stay inside
    ``out`` and ``envs`` (a link planted in either could send them elsewhere)."""
    problems = []
    for release in releases:
        for place in (results_path, environment_path):
            try:
                place(release, out if place is results_path else envs)
            except MatrixError as exc:
                problems += exc.problems
    if problems:
        raise MatrixError(problems)


# ---- environments


def uv_command() -> list[str] | None:
    """How to run uv: on PATH, or beside this interpreter (a venv's bin), or None."""
    found = shutil.which("uv") or shutil.which("uv", path=str(Path(sys.executable).parent))
    return [found] if found else None


def requirements(release: Release) -> list[str]:
    """The release, what the child needs, and NumPy (the probes read values through it; its
    release is whatever the framework's own requirements resolve to)."""
    cls = registry.adapter_class(release.framework)
    numpy = [] if release.framework == "numpy" else ["numpy"]
    return [*cls.release_requirements(release.version), *numpy, *CHILD_REQUIREMENTS]


def environment_python(env: Path) -> Path:
    return env / "bin" / "python"


def ensure_environment(release: Release, envs: Path, installer: str, log: Any) -> tuple[Path, bool]:
    """The release's environment's interpreter, made if it is not there (True: made now).
    Raises RuntimeError with the installer's last lines when it cannot be made."""
    env = environment_path(release, envs)  # removed below when stale: never outside envs
    python = environment_python(env)
    wanted = requirements(release)
    marker = env / MARKER
    if marker.is_file():
        try:
            if json.loads(marker.read_text())["requirements"] == wanted and python.exists():
                return python, False
        except (OSError, ValueError, KeyError):
            pass
    if env.exists():
        shutil.rmtree(env)
    uv = uv_command() if installer in ("auto", "uv") else None
    if installer == "uv" and uv is None:
        raise RuntimeError("--installer uv: uv is not installed (pip install uv)")
    if uv is not None:
        steps = [[*uv, "venv", "--quiet", "--python", sys.executable, str(env)],
                 [*uv, "pip", "install", "--quiet", "--python", str(python), *wanted]]
    else:
        steps = [[sys.executable, "-m", "venv", str(env)],
                 [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *wanted]]
    for step in steps:
        print(f"$ {' '.join(step)}", file=log, flush=True)
        done = subprocess.run(step, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(done.stdout, file=log, flush=True)
        if done.returncode != 0:
            tail = "\n".join(done.stdout.strip().splitlines()[-INSTALL_LOG_LINES:])
            shutil.rmtree(env, ignore_errors=True)
            raise RuntimeError(f"could not install {' '.join(wanted[:1])} ({'uv' if uv else 'pip'} exit status "
                               f"{done.returncode}): {tail}")
    write_files({marker: json.dumps({"requirements": wanted, "installer": "uv" if uv else "pip"}) + "\n"})
    return python, True


# ---- runs


def frameworks_of(release: Release, modes: str) -> list[str]:
    """The frameworks a release's run selects: the eager one, its compiled modes, or both."""
    chosen = [m.strip() for m in modes.split(",") if m.strip()]
    names = []
    for name in registry.framework_names():
        if name == release.framework and "eager" in chosen:
            names.append(name)
        elif registry.compiles(name) == release.framework and "compiled" in chosen:
            names.append(name)
    return names


def run_release(release: Release, out: Path, envs: Path, *, installer: str = "auto", modes: str = "eager",
                numprocesses: str | None = None, pytest_args: list[str] | None = None,
                log: Any = sys.stdout) -> ReleaseRun:
    """Make the release's environment, run the corpus on it, and write its results file."""
    target = results_path(release, out)
    done = ReleaseRun(release, target)
    began = time.monotonic()
    try:
        python, made = ensure_environment(release, envs, installer, log)
        done.env_state = "made" if made else "kept"
    except (RuntimeError, OSError) as exc:
        done.env_seconds = time.monotonic() - began
        done.env_state = "failed"
        done.error = str(exc)
        _write_unrun(release, target, done.error)
        return done
    done.env_seconds = time.monotonic() - began
    began = time.monotonic()
    names = frameworks_of(release, modes)
    with tempfile.TemporaryDirectory(prefix="conformance-matrix-") as scratch:
        command = [sys.executable, "-m", "conformance", "run", "--plain", "--frameworks", ",".join(names),
                   "--results", str(target), "--reports", scratch, "-p", "no:cacheprovider", "-q",
                   *(["-n", numprocesses] if numprocesses else []), *(pytest_args or [])]
        env = dict(os.environ, **{CHILD_PYTHON_ENV: str(python)})
        print(f"$ {CHILD_PYTHON_ENV}={python} {' '.join(command)}", file=log, flush=True)
        finished = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print("\n".join(finished.stdout.strip().splitlines()[-5:]), file=log, flush=True)
    done.run_seconds = time.monotonic() - began
    if finished.returncode not in (0, 1) or not target.is_file():
        done.error = (f"the run did not complete (exit status {finished.returncode}): "
                      + " ".join(finished.stdout.strip().splitlines()[-3:]))
        _write_unrun(release, target, done.error)
        return done
    try:
        data = load_results(target)
    except ResultsFileError as exc:  # the run wrote something this tool cannot read
        done.error = "the run's results file cannot be read: " + "; ".join(exc.problems)[:1500]
        _write_unrun(release, target, done.error)
        return done
    found = data.environment.frameworks.get(release.framework)
    installed = None if found is None else found.version
    error = None
    if installed is None:
        reasons = {r.reason for r in data.results if r.framework == release.framework}
        done.error = error = "; ".join(sorted(reasons))[:2000] or "the framework could not be set up"
    stamp = ReleaseStamp(framework=release.framework, package=release.package, version=release.version,
                         installed=installed, error=error)
    write_atomically(target, dataclasses.replace(data, run=dataclasses.replace(data.run, release=stamp)))
    for record in data.results:
        done.counts[record.outcome] = done.counts.get(record.outcome, 0) + 1
    return done


def _write_unrun(release: Release, target: Path, error: str) -> None:
    """The results file of a release that did not run: no items, the error."""
    run = Run(items=0, exit_status=1, partial=(f"{release.package} {release.version} did not run: {error[:500]}",),
              release=ReleaseStamp(framework=release.framework, package=release.package, version=release.version,
                                   installed=None, error=error[:4000]))
    write_atomically(target, results_document([], {}, {release.framework: Installation(version=None, devices=None)},
                                              {}, run))


def run_matrix(releases: list[Release], out: Path, envs: Path, *, jobs: int = 1, **options: Any) -> list[ReleaseRun]:
    """Every release, ``jobs`` at a time (each its own process tree), in the order given."""
    if jobs <= 1:
        return [run_release(r, out, envs, **options) for r in releases]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda r: run_release(r, out, envs, **options), releases))


def sorted_releases(runs: list[ReleaseRun]) -> list[ReleaseRun]:
    return sorted(runs, key=lambda r: (r.release.framework, release_key(r.release.version)))
