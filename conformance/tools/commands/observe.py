"""``conformance observe``: run a case's steps on each framework and print (or write) what they do as expect YAML."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.escaping import for_terminal
from conformance.tools.commands.common import case_roots, framework_list

if TYPE_CHECKING:  # a command imports pytest and the plugin only when it runs
    from conformance.model import Case


def add_parser(sub: Any) -> None:
    from conformance.run.sandbox import DEFAULT_TIMEOUT_S  # the item timeout; the module imports no framework

    obs = sub.add_parser("observe", help="run a case's steps on each framework and print the observed "
                                         "behaviour as expect YAML")
    obs.add_argument("target", help="a case id (searched under cases/) or a case file (every case in it)")
    obs.add_argument("--frameworks", help="comma-separated subset, e.g. torch,numpy (default: every framework and "
                                          "compiled mode; a mode gets an override only where it differs from the "
                                          "framework it compiles)")
    obs.add_argument("--case-timeout", metavar="SECONDS", type=float, default=DEFAULT_TIMEOUT_S,
                     help=f"per framework: a case running longer is stopped (default {DEFAULT_TIMEOUT_S:g}; 0 = none)")
    obs.add_argument("--write", action="store_true",
                     help="write the observed expectations into the case file (comments, order and quoting kept) "
                          "instead of printing them; a case that already expects something is left alone")
    obs.add_argument("--force", action="store_true",
                     help="with --write: replace a case's existing expectations with what is observed")
    obs.set_defaults(func=cmd_observe)


def cmd_observe(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance import registry
    from conformance.load.reader import load_file
    from conformance.run.sandbox import Sandbox
    from conformance.tools.lint import case_files
    from conformance.tools.observe import observe, render
    from conformance.yamlvalues.fields import did_you_mean

    if args.force and not args.write:
        print("conformance observe: --force only goes with --write", file=sys.stderr)
        return 2
    vocab = registry.vocabulary()
    target = Path(args.target)
    files = [target] if target.is_file() else case_files(case_roots())
    cases, problems, holders = [], [], set()
    for path in files:
        result = load_file(path, vocab, draft=True)
        found = [c for c in result.cases if target.is_file() or c.id == args.target]
        bad = [e for case_id, e in result.errors if target.is_file() or case_id == args.target]
        cases += [(path, c) for c in found]
        problems += bad
        if found or bad:
            holders.add(path)
    for problem in problems:
        print(for_terminal(problem.render()), file=sys.stderr)
    if not cases:
        if not problems:
            known = [c.id for path in files for c in load_file(path, vocab, draft=True).cases]
            hint = did_you_mean(args.target, known) or "give a case id (conformance list) or a case file"
            print(f"conformance observe: no case {args.target!r}; {hint}", file=sys.stderr)
        return 2
    # every framework and mode unless named: a new case runs on all of them at its first
    # pytest, and a mode's behaviour is part of the case (split: where it differs from its lineage)
    names = framework_list(args.frameworks) if args.frameworks else registry.framework_names()
    if args.write:
        if problems:
            print(f"conformance observe: {', '.join(map(str, sorted(holders)))} has problems (above): fix them "
                  "first; nothing written", file=sys.stderr)
            return 1
        return _observe_and_write(cases, names, args)
    # the steps run in the sandbox's child process with the item timeout, as in a pytest run
    sandbox = Sandbox(args.case_timeout)
    failed = False
    try:
        for i, (_, case) in enumerate(cases):
            observations = [observe(case, registry.get_adapter(fw), sandbox) for fw in names]
            failed = failed or any(o.status == "error" for o in observations)
            # framework messages and case text in the comments, never a CI command
            sys.stdout.write(("\n" if i else "") + for_terminal(render(case, observations)))
    finally:
        sandbox.close()
    return 1 if problems or failed else 0



def _observe_and_write(cases: list[tuple[Path, Case]], names: list[str], args: argparse.Namespace) -> int:
    """``observe --write``: observe each case of one file, then write what was observed into
    that file (conformance.tools.casewrite says what is kept and when nothing is written)."""
    from conformance import registry
    from conformance.run.sandbox import Sandbox
    from conformance.tools.casewrite import Update, WriteRefused, existing, rewrite, write_file
    from conformance.tools.observe import expect_lines, observe, split

    def say(text: str) -> None:
        print(for_terminal(f"conformance observe: {text}"), file=sys.stderr)

    path = cases[0][0]
    if any(p != path for p, _ in cases):  # one id in several files (lint's CF001)
        say(f"{cases[0][1].id} is a case of several files ({', '.join(sorted({str(p) for p, _ in cases}))}): "
            "name the file to write; nothing written")
        return 1
    updates: list[Update] = []
    left: list[str] = []  # cases that already expect something
    refused, notes = 0, []
    sandbox = Sandbox(args.case_timeout)
    try:
        for _, case in cases:
            already = existing(case)
            if already and not args.force:
                if len(cases) == 1:
                    say(f"{case.id} already expects {', '.join(already)}: nothing written (--force replaces its "
                        "expectations with what is observed; nothing is merged)")
                left.append(case.id)
                continue
            observations = [observe(case, registry.get_adapter(fw), sandbox) for fw in names]
            for o in observations:
                if o.status != "ran":
                    say(f"{case.id}: {o.framework}: {o.status.replace('_', ' ')}: {o.reason}")
            broken = [o.framework for o in observations if o.status == "error"]
            ran = {o.framework for o in observations if o.status == "ran"}
            if broken or not ran:
                why = f"{', '.join(broken)} could not be observed" if broken else "no framework ran it"
                say(f"{case.id}: {why}, so its expectation would be decided without it: nothing written for it")
                refused += 1
                continue
            unseen = [o.framework for o in observations if o.status == "skipped"]
            unseen += [fw for fw in registry.eager_names() if fw not in names]
            if unseen:
                notes.append(f"{case.id} was not observed on {', '.join(unseen)}: run pytest on it there before "
                             "committing")
            shared, overrides = split(case, observations)
            before = {fw: o.reason for fw, o in case.overrides.items()
                      if fw in ran and o.expect is not None and not o.reason.startswith("TODO")}
            updates.append(Update(case, expect_lines(case, shared, overrides, before), ran, sorted(overrides)))
    finally:
        sandbox.close()
    if left and len(cases) > 1:
        say(f"left {len(left)} case(s) of {path} that already expect something as they are (--force replaces "
            f"their expectations): {', '.join(left)}")
    if not updates:
        return 1
    try:
        text = rewrite(path.read_text(encoding="utf-8"), str(path), updates, registry.vocabulary())
        write_file(path, text)
    except WriteRefused as exc:
        say(str(exc))
        return 1
    for update in updates:
        todo = f"; overrides for {', '.join(update.overrides)}, each with a TODO reason to replace (lint refuses " \
            "it, CF012)" if update.overrides else ""
        say(f"wrote the observed expectations of {update.case.id} into {path}{todo}")
    for note in notes:
        say(note)
    say("review them (what the frameworks did, not necessarily what they should do), delete what does not "
        "matter to the case, then `conformance lint` and `pytest` it")
    return 1 if refused else 0
