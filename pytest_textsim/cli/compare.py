"""``textsim compare OLD NEW``: the regressions between two baselines, JSON reports
or ``textsim score`` outputs.

Exit status, for CI: 0 when nothing regressed, 1 when a score (or, with a
significance level, a metric) regressed, 2 on
usage or input errors.
"""

from __future__ import annotations

import argparse
import sys
from typing import IO, Any

from ..errors import ConfigError
from ..settings.table import Resolver
from .common import EXIT_FAILED, EXIT_OK, cli_flag, closed_pipe, usage_error
from .project import add_config_argument, find

COMPARE_EPILOG = """\
examples:
  textsim compare baseline.json textsim-report.json
  textsim compare old.json new.json --max-drop 0.05
  textsim compare old.json new.json --max-drop bleu_score=0.05 --max-drop similarity=1
  textsim compare old.json new.json --significance 0.05
  textsim compare scored-before.jsonl scored-after.jsonl --id-field id

OLD and NEW are baselines (pytest --textsim-save-baseline=PATH, textsim score
--save-baseline PATH) or JSON reports (pytest --textsim-json=PATH), in any
combination, or two textsim score outputs (-o PATH) of the same rows: each row
is a test, matched by its --id-field value, else by its line number. A score regresses when it
dropped by more than the tolerance: by default 0.02 for 0..1 scores and 0 for
judge scores (1-5), or textsim_max_drop from TEXTSIM_MAX_DROP or the pytest
configuration file; TER, where lower is better, regresses when it rises.
Scores made with different evaluator parameters (ROUGE type, judge prompt
version or model) are listed as not compared. Each metric also gets the paired
bootstrap interval of its mean difference and a one-sided p-value of a drop,
Holm-corrected; with --significance a drop is a regression only when it is
also significant. An OLD baseline of format version 1 is compared without.
Two files in which fewer than half of OLD's scores belong to a test of NEW name
their tests differently (rows by line number in one, by --id-field in the
other): the comparison is refused, as nothing in it could regress.

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
        "--id-field",
        metavar="COLUMN",
        help="match the rows of textsim score outputs by this column (default: line number)",
    )
    parser.add_argument(
        "--max-drop",
        action="append",
        default=[],
        metavar="X|METRIC=X",
        help="tolerated drop: for every metric (0.05) or one (bleu_score=0.05); "
        "repeatable (default: TEXTSIM_MAX_DROP, else 0.02, judge metrics 0)",
    )
    parser.add_argument(
        "--max-cost-rise",
        metavar="SHARE",
        help="how much a test's app cost and tokens may rise, relative: 0.1 or 10%% "
        "(default: TEXTSIM_MAX_COST_RISE, else textsim_max_cost_rise, else 10%%)",
    )
    parser.add_argument(
        "--significance",
        metavar="ALPHA",
        help="a drop is a regression only when beyond the tolerance and significant at ALPHA "
        "(paired bootstrap per metric, Holm-corrected), e.g. 0.05 (default: "
        "TEXTSIM_SIGNIFICANCE, else textsim_significance, else the tolerance alone)",
    )
    parser.add_argument(
        "--seed",
        metavar="N",
        help="bootstrap seed (default: TEXTSIM_BOOTSTRAP_SEED, else textsim_bootstrap_seed, "
        "else 12345)",
    )
    add_config_argument(parser)
    parser.set_defaults(run=run_compare)


def run_compare(args: argparse.Namespace, out: IO[str] | None = None) -> int:
    """``textsim compare OLD NEW``; returns the exit status."""
    from ..gating import baseline
    from ..gating.compare import compare
    from ..gating.regressions import report_lines
    from ..settings.tolerances import parse_tolerances

    out = out or sys.stdout
    try:
        # --max-drop, else TEXTSIM_MAX_DROP, else textsim_max_drop in the project's ini file.
        overrides = {
            "max_drop": args.max_drop or None,
            "max_cost_rise": args.max_cost_rise,
            "significance": args.significance,
            "bootstrap_seed": args.seed,
        }
        resolver = Resolver(find(args.config_file), overrides=overrides, override_prefix="--")
        tolerances = resolver.get("max_drop") or parse_tolerances([])
        max_cost_rise = float(resolver.get("max_cost_rise"))
        significance = resolver.get("significance")
        seed = int(resolver.get("bootstrap_seed"))
    except ConfigError as exc:
        return usage_error(str(exc))
    try:
        old = baseline.load_baseline(args.old, id_field=args.id_field)
        new = baseline.load_baseline(args.new, id_field=args.id_field)
    except baseline.BaselineError as exc:
        return usage_error(str(exc))
    problem = _mixed(args, old, new) or _unmatched(args, old, new)
    if problem:
        return usage_error(problem)
    comparison = compare(
        old.entries,
        new.entries,
        tolerances,
        significance=significance,
        seed=seed,
        old_version=old.version,
        old_corpus=old.corpus,
        new_corpus=new.corpus,
        old_name=args.old,
        max_cost_rise=max_cost_rise,
    )
    try:
        print(f"textsim regressions: {args.old} -> {args.new}", file=out)
        for line in report_lines(comparison, args.old, _compare_flag):
            print(line, file=out)
    except BrokenPipeError:
        return closed_pipe()
    return EXIT_FAILED if comparison.regressed else EXIT_OK


def _compare_flag(setting: str) -> str:
    """Settings as ``textsim compare``'s messages name them: its own flags, and the two
    ways to save a baseline (it compares files that either wrote)."""
    if setting == "save_baseline":
        return "--textsim-save-baseline (or textsim score --save-baseline)"
    return cli_flag(setting)


def _unmatched(args: argparse.Namespace, old: Any, new: Any) -> str:
    """Why the two files make no comparison: they name their tests differently."""
    from ..gating.compare import unmatched

    fix = (
        "name the rows of both by the same column with --id-field COLUMN (without it a row "
        "is 'row N', its line number)"
        if old.scored
        else "compare two runs of the same tests; a baseline saved by textsim score names its "
        "rows by the --id-field it was scored with ('row N' without), so score both runs "
        "with the same --id-field"
    )
    return unmatched(
        old.entries, (e.test for e in new.entries), old_name=args.old, new_name=args.new, fix=fix
    )


def _mixed(args: argparse.Namespace, old: Any, new: Any) -> str:
    """Why these two files cannot be compared ("" when they can)."""
    if old.scored != new.scored:
        scored, other = (args.old, args.new) if old.scored else (args.new, args.old)
        return (
            f"{scored} is textsim score output and {other} is not: the output holds the "
            "scores but not the metrics' parameters (ROUGE type, judge model), so it is "
            "compared only with another output of the same rows; compare the rows with a "
            f"baseline as they are scored: textsim score DATA.jsonl ... --compare {other}"
        )
    if args.id_field and not old.scored:
        return "--id-field names the rows of textsim score outputs; neither file is one"
    return ""
