"""Writing the site: the whole folder at once. The new site is written beside the old one and
moved into place, so a failed build leaves the previous site as it was and a rebuilt site
has no page left over from the last build (a case removed since). A folder that is not a
site this command wrote is never replaced: it would be deleted with it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from conformance.report.outputs import current_umask, file_mode

MARKER = ".conformance-site"
MAX_SEGMENT_BYTES = 255  # of one file or folder name: the limit of the common file systems
MARKER_TEXT = "Written by `conformance site`; the next build replaces this folder whole.\n"


class SiteOutputError(Exception):
    pass


def check_out_dir(out: Path) -> None:
    """Refuse an output that is a file, or a folder with other things in it than a site."""
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise SiteOutputError(f"{out}: not a folder (the site is a folder of pages); name a folder with --out")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise SiteOutputError(f"{out}: the folder is not empty and is not a site conformance wrote (no {MARKER} "
                              "file in it); the build replaces its folder whole, so name a new or empty folder "
                              "with --out")


def check_names(files: dict[str, str]) -> None:
    """Every file of the site is a relative path of plain segments, each short enough for
    any file system: names come from results files (:mod:`conformance.site.urls` maps them),
    and none may reach outside the site's folder."""
    for name in files:
        parts = name.split("/")
        bad = (not name or name.startswith("/") or "\\" in name or "\0" in name
               or any(part in ("", ".", "..") for part in parts)
               or any(len(part.encode("utf-8", "surrogatepass")) > MAX_SEGMENT_BYTES for part in parts))
        if bad:
            raise SiteOutputError(f"{name[:120]!r}: not a file name the site can have (a relative path of plain "
                                  f"names of at most {MAX_SEGMENT_BYTES} bytes); nothing written")


def write_site(files: dict[str, str], out: Path) -> None:
    check_out_dir(out)
    check_names(files)
    parent = out.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    mode = file_mode()
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".new", dir=parent))
    old: Path | None = None
    try:
        root = staging.resolve()
        for name, text in {MARKER: MARKER_TEXT, **files}.items():
            path = staging / name
            if not path.resolve().is_relative_to(root):  # no name reaches out, even through a link
                raise SiteOutputError(f"{name[:120]!r}: outside the site's folder; nothing written")
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
            os.chmod(path, mode)
        for folder in [staging, *(p for p in staging.rglob("*") if p.is_dir())]:
            os.chmod(folder, 0o777 & ~current_umask())  # mkdtemp makes it 0700
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=parent))
            os.replace(out, old / "site")
        os.replace(staging, out)
        if old is not None:
            shutil.rmtree(old)
    except BaseException:
        if old is not None and (old / "site").exists() and not out.exists():
            os.replace(old / "site", out)  # the previous site back in its place
        shutil.rmtree(staging, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        raise

