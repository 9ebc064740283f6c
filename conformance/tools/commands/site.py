"""``conformance site``: the behaviour reference as a static site."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from conformance.escaping import for_terminal
from conformance.tools.commands.common import print_error


def add_parser(sub: Any) -> None:
    site = sub.add_parser("site", help="the behaviour reference as a static site: a page per operation, case, "
                                       "claim and framework (docs/site.md)")
    site.add_argument("results", nargs="+", help="results JSON of a full run (several: the shards or frameworks of "
                                                 "one, merged as conformance merge does)")
    site.add_argument("--out", default="site", help="the site's folder, replaced whole (default: site)")
    site.add_argument("--releases", nargs="+", metavar="RESULTS",
                      help="results files of conformance matrix (releases/*/*.json): the changelog pages")
    site.add_argument("--source-url", metavar="TEMPLATE",
                      help="where a case's file is shown, e.g. "
                           "https://github.com/ORG/REPO/blob/{commit}/{path}#L{line} (default: path and line as text)")
    site.add_argument("--partial", action="store_true", help="build from the results of a partial run (the pages "
                                                             "say which cases and frameworks are missing)")
    site.add_argument("--screenshots", metavar="DIR", help="then write PNGs of the home page and an operation page "
                                                           "at 390 and 1440 px wide (Playwright and Chromium)")
    site.add_argument("--screenshot-op", default="transpose", metavar="NAME",
                      help="the operation page of the screenshots (default: transpose)")
    site.set_defaults(func=cmd_site)


def cmd_site(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance.report.changelog import ChangelogError
    from conformance.report.outputs import error_text
    from conformance.site.build import SiteError, build_site
    from conformance.site.output import SiteOutputError, check_out_dir, write_site

    out = Path(args.out)
    try:
        check_out_dir(out)
        files, summary = build_site([Path(p) for p in args.results], [Path(p) for p in args.releases or []],
                                    source_url=args.source_url, allow_partial=args.partial)
        write_site(files, out)
    except (SiteError, SiteOutputError, ChangelogError) as exc:
        for line in str(exc).splitlines():
            print_error(f"conformance site: {line}")
        return 2
    except OSError as exc:
        print_error(f"conformance site: could not write {out}: {error_text(exc)}; the previous site is left as it was")
        return 3
    print(for_terminal(f"conformance site: wrote {out} ({summary}); open {out / 'index.html'}"))
    if args.screenshots:
        from conformance.site.screenshots import ScreenshotError, screenshots

        try:
            shots = screenshots(out, Path(args.screenshots), op=args.screenshot_op)
        except ScreenshotError as exc:
            print_error(f"conformance site: {exc}")
            return 2
        for shot in shots:
            print(for_terminal(f"conformance site: wrote {shot}"))
    return 0
