"""Where the compilers the framework processes start keep their caches: never a place a pull
request can write (docs/security.md, "Compiler caches live where only you can write").

torch inductor keeps generated Python and C++ (and the shared objects built from it), FX
graphs and AOTAutograd artefacts in ``TORCHINDUCTOR_CACHE_DIR`` (its precompiled headers in
``$TMPDIR``), and loads what it finds there: a ``.py`` file at the path inductor computes
for a graph is imported and run. That path depends only on the graph, so a pull request
that commits one into a cache folder inside the checkout runs its code. Triton
(``TRITON_CACHE_DIR``) and JAX's persistent compilation cache (``JAX_COMPILATION_CACHE_DIR``:
serialized executables) are the same kind of folder. So every framework process gets these
variables from here, all under one folder:

- ``$CONFORMANCE_CACHE_DIR/compilers`` when that is set, else
  ``$XDG_CACHE_HOME/conformance/compilers`` (``~/.cache/conformance/compilers``),
  checked by the case cache's rules (:func:`conformance.load.cache.check_directory`):
  outside every checkout, not a link, the user's own, not writable by group or others,
  made mode 0700;
- a private temporary folder (mode 0700, removed when the run ends) when that folder is
  refused, or when ``CONFORMANCE_CACHE_DIR=off``: the compilers then start cold, and one
  line says why.

Values of these variables in the user's environment are replaced, not honoured: one that
pointed into the checkout (``TORCHINDUCTOR_CACHE_DIR=.cache``) would reopen the door. The
remote caches torch can be told to use are switched off for the framework processes.

Pure: no framework, no pytest.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Callable, Iterable

from conformance.load.cache import CACHE_ENV, CacheRefused, check_directory, git_work_tree, user_cache_folder
from conformance.run import childenv

SUBFOLDER = "compilers"
# variable -> its folder under the compilers' cache; each names a folder whose files the
# compiler loads as code (or as executables)
FOLDERS = {
    "TORCHINDUCTOR_CACHE_DIR": "torchinductor",  # FX graph, code (.py, .so), AOTAutograd, Dynamo PGO caches
    "TRITON_CACHE_DIR": "triton",  # Triton kernels (inductor's GPU code)
    "JAX_COMPILATION_CACHE_DIR": "jax",  # JAX's persistent cache of XLA executables
    # the temporary folder: inductor keeps its precompiled C++ headers in
    # $TMPDIR/torchinductor_<user>/precompiled_headers whatever TORCHINDUCTOR_CACHE_DIR says,
    # and TensorFlow's autograph writes and imports generated modules there; the shared /tmp
    # is a folder any local user can fill first
    "TMPDIR": "tmp",
}
# variables that would send compiled artefacts to or from somewhere else: set to these values
FIXED = {
    "TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE": "0",
    "TORCHINDUCTOR_AUTOGRAD_REMOTE_CACHE": "0",
    "TORCHINDUCTOR_AUTOTUNE_REMOTE_CACHE": "0",
    "TORCHINDUCTOR_BUNDLED_AUTOTUNE_REMOTE_CACHE": "0",
}


def default_root() -> Path | None:
    """The compilers' cache folder the environment asks for; None: switched off."""
    return user_cache_folder(SUBFOLDER)


def own_checkouts() -> list[Path]:
    """The checkouts every run knows without being told: the current folder's git work tree
    and the one this package is imported from (an editable install's checkout)."""
    found = []
    for start in (Path.cwd(), Path(__file__).resolve().parent.parent):
        tree = git_work_tree(start)
        if tree is not None:
            found.append(tree)
    return found


class CompilerCaches:
    """The folder of one run's compiler caches, and the environment that points the
    compilers at it. ``private``: a temporary folder of this run, removed by :meth:`close`."""

    def __init__(self, root: Path, private: bool, note: str | None = None,
                 checkouts: Iterable[Path | str] = ()) -> None:
        self.root = root
        self.private = private
        self.note = note  # why the shared folder was not used, for the run's one line
        self.checkouts = [Path(c) for c in checkouts]  # no variable a framework process gets points there

    def environment(self) -> dict[str, str]:
        """The variables a framework process gets (on top of the parent's environment)."""
        return {**{name: str(self.root / sub) for name, sub in FOLDERS.items()}, **FIXED}

    def apply(self, environ: dict[str, str]) -> dict[str, str]:
        """A framework process's environment made from ``environ``: without the variables
        that point into a checkout (:mod:`conformance.run.childenv`), with the compilers'
        caches."""
        env, _ = childenv.checked(environ, self.checkouts)
        env.update(self.environment())
        return env

    def close(self) -> None:
        if self.private:
            shutil.rmtree(self.root, ignore_errors=True)


def open_caches(checkouts: Iterable[Path | str] = (), warn: Callable[[str], None] | None = None) -> CompilerCaches:
    """This run's compiler caches: the shared folder, checked (outside ``checkouts`` and
    :func:`own_checkouts`), or a private temporary one, saying why through ``warn``
    (default: a line on stderr)."""
    checkouts = [*checkouts, *own_checkouts()]
    childenv.say(childenv.checked(os.environ, checkouts)[1], warn or _stderr_line)
    root = default_root()
    if root is None:
        return _private(None, checkouts)
    # the folder above is the suite's (``conformance/``) or the one CONFORMANCE_CACHE_DIR names:
    # both must pass the same checks
    try:
        folder = check_directory(root, checkouts, own_parents=1)
        for sub in FOLDERS.values():
            check_directory(folder / sub, (), 0)
    except CacheRefused as refused:
        note = (f"the compilers' caches are private to this run (they start cold): {refused.path} {refused.reason}; "
                f"set {CACHE_ENV} to a folder of your own outside the checkout")
        (warn or _stderr_line)(note)
        return _private(note, checkouts)
    return CompilerCaches(folder, private=False, checkouts=checkouts)


def _private(note: str | None, checkouts: list[Path | str]) -> CompilerCaches:
    root = Path(tempfile.mkdtemp(prefix="conformance-compilers-"))  # mode 0700
    for sub in FOLDERS.values():
        (root / sub).mkdir(mode=0o700)
    return CompilerCaches(root, private=True, note=note, checkouts=checkouts)


def _stderr_line(message: str) -> None:
    print(f"conformance: {message}", file=sys.stderr)
