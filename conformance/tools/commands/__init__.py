"""The commands of ``conformance``, one module each: its ``add_parser(sub)`` (its options and
help, which ``conformance --help`` lists) and its ``cmd_*`` function. :data:`COMMANDS` is their
order in ``conformance --help``, each imported by name here (no module is imported from a
name computed at run time: tests/test_hostile.py). A command module imports pytest, the
plugin and the libraries it drives only when it runs: importing them all keeps the CLI light."""

from conformance.tools.commands import (
    changelog,
    contracts,
    coverage,
    diff,
    discover,
    frameworks,
    lint,
    listing,
    matrix,
    merge,
    new,
    observe,
    ops,
    regen,
    report,
    run,
    schema,
    site,
)

COMMANDS = (run, report, diff, merge, matrix, changelog, discover, site, lint, observe, new, listing, coverage,
            contracts, ops, frameworks, regen, schema)
