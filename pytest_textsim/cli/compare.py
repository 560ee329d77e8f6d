"""``textsim compare OLD NEW``: the regressions between two baselines or JSON reports.

Exit status, for CI: 0 when nothing regressed, 1 when a score regressed, 2 on
usage or input errors.
"""

from __future__ import annotations

import argparse
import sys
from typing import IO, Any

from ..errors import ConfigError
from ..settings import Resolver
from .common import EXIT_FAILED, EXIT_OK, closed_pipe, usage_error
from .project import add_config_argument, find

COMPARE_EPILOG = """\
examples:
  textsim compare baseline.json textsim-report.json
  textsim compare old.json new.json --max-drop 0.05
  textsim compare old.json new.json --max-drop bleu_score=0.05 --max-drop similarity=1

OLD and NEW are baselines (pytest --textsim-save-baseline=PATH) or JSON reports
(pytest --textsim-json=PATH), in any combination. A score regresses when it
dropped by more than the tolerance: by default 0.02 for 0..1 scores and 0 for
judge scores (1-5), or textsim_max_drop from TEXTSIM_MAX_DROP or the pytest
configuration file; TER, where lower is better, regresses when it rises.
Scores made with different evaluator parameters (ROUGE type, judge prompt
version or model) are listed as not compared.

exit status: 0 no regression, 1 at least one regression, 2 a file cannot be read.
"""


def add_compare_command(subparsers: Any) -> None:
    """Add ``textsim compare`` to the CLI."""
    parser = subparsers.add_parser(
        "compare",
        help="list the scores that regressed between two baselines or JSON reports",
        description="Compare two runs score by score and print the regressions table.",
        epilog=COMPARE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("old", metavar="OLD.json", help="the baseline (or an older report)")
    parser.add_argument("new", metavar="NEW.json", help="this run's baseline or report")
    parser.add_argument(
        "--max-drop",
        action="append",
        default=[],
        metavar="X|METRIC=X",
        help="tolerated drop: for every metric (0.05) or one (bleu_score=0.05); "
        "repeatable (default: TEXTSIM_MAX_DROP, else 0.02, judge metrics 0)",
    )
    add_config_argument(parser)
    parser.set_defaults(run=run_compare)


def run_compare(args: argparse.Namespace, out: IO[str] | None = None) -> int:
    """``textsim compare OLD NEW``; returns the exit status."""
    from ..gating import baseline
    from ..gating.tolerances import parse_tolerances

    out = out or sys.stdout
    try:
        # --max-drop, else TEXTSIM_MAX_DROP, else textsim_max_drop in the project's ini file.
        overrides = {"max_drop": args.max_drop or None}
        resolver = Resolver(find(args.config_file), overrides=overrides, override_prefix="--")
        tolerances = resolver.get("max_drop") or parse_tolerances([])
    except ConfigError as exc:
        return usage_error(str(exc))
    try:
        old = baseline.load(args.old)
        new = baseline.load(args.new)
    except baseline.BaselineError as exc:
        return usage_error(str(exc))
    comparison = baseline.compare(old, new, tolerances)
    try:
        print(f"textsim regressions: {args.old} -> {args.new}", file=out)
        for line in baseline.report_lines(comparison, args.old):
            print(line, file=out)
    except BrokenPipeError:
        return closed_pipe()
    return EXIT_FAILED if comparison.regressions else EXIT_OK
