"""``textsim report RESULTS -o report.html``: the HTML report of a run, outside pytest.

RESULTS is a ``--textsim-json`` report or a ``textsim score`` output file.
With ``--compare BASELINE`` the report also draws the comparison with a
baseline (a JSON report already holds the one its run made), refused when the
two name their tests differently (:func:`..gating.compare.unmatched`).

Exit status: 0 when the report was written, 1 when it was and, with
``--fail-on-regression``, a score regressed, 2 on usage or input errors.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..formatting import plural
from .common import EXIT_FAILED, EXIT_OK, usage_error

REPORT_EPILOG = """\
examples:
  pytest --textsim-json=results.json --textsim-json-texts
  textsim report results.json -o report.html
  textsim score answers.jsonl -m bleu -m meteor -o scored.jsonl
  textsim report scored.jsonl -o report.html
  textsim score qa.jsonl --map response=answer --map ground_truth=expected -m f1 -o scored.jsonl
  textsim report scored.jsonl --map response=answer --map ground_truth=expected -o report.html
  textsim report results.json --compare baseline.json -o report.html
  textsim report scored.jsonl --compare base.json --id-field id --fail-on-regression

The report is one self-contained HTML file (no request to any other host): per
metric a histogram with the threshold, the pass rate and, with a baseline, a
before/after plot and the regressions; a table of every score that sorts and
filters; and for each failing (or clicked) score its texts side by side with
what matched and what is missing. Texts are shown when RESULTS has them: a JSON
report written with --textsim-json-texts, or textsim score rows.

textsim score rows are named as textsim score names them in a baseline: by
their --id-field value, else "row N" (their line number). A comparison in which
fewer than half of the baseline's scores belong to a test of RESULTS is refused:
the two name their tests differently, so nothing could regress.

exit status: 0 written, 1 written and a score regressed (with --fail-on-regression),
2 usage or input error.
"""


def add_report_command(subparsers: Any) -> None:
    """Add ``textsim report`` to the CLI."""
    parser = subparsers.add_parser(
        "report",
        help="write the HTML report of a JSON report or of textsim score output",
        description="Draw the HTML report (plots, a sortable table, aligned texts) of a run.",
        epilog=REPORT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "results", metavar="RESULTS", help="a --textsim-json report or textsim score output"
    )
    parser.add_argument(
        "-o", "--output", metavar="REPORT.html", default="textsim-report.html",
        help="the HTML file to write (default: textsim-report.html)",
    )  # fmt: skip
    parser.add_argument(
        "--map", action="append", default=[], metavar="FIELD=COLUMN",
        help="textsim score rows: the column holding response or ground_truth (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--compare", metavar="BASELINE.json",
        help="draw the comparison with this baseline (or older JSON report)",
    )  # fmt: skip
    parser.add_argument(
        "--id-field", metavar="COLUMN",
        help="name textsim score rows by this column, as textsim score --id-field did "
        "(default: row N, the line number)",
    )  # fmt: skip
    parser.add_argument(
        "--fail-on-regression", action="store_true",
        help="exit 1 when a score (or, with significance, a metric) regressed against --compare",
    )  # fmt: skip
    parser.add_argument("--title", default=None, help="the page title")
    parser.add_argument(
        "--explain-limit", type=int, default=None, metavar="N",
        help="explain at most N scores (failing ones first; default 2000)",
    )  # fmt: skip
    parser.set_defaults(run=run_report)


def run_report(args: argparse.Namespace) -> int:
    """``textsim report``; returns the exit status."""
    from ..engine.plan import UsageError, parse_mapping
    from ..html import EXPLAIN_LIMIT, ReportSourceError, load, write

    try:
        mapping = parse_mapping(args.map)
    except UsageError as exc:
        return usage_error(str(exc))
    if args.explain_limit is not None and args.explain_limit < 0:
        return usage_error(f"--explain-limit: expected a number >= 0, got {args.explain_limit}")
    if args.fail_on_regression and not args.compare:
        return usage_error("--fail-on-regression needs --compare BASELINE.json")
    try:
        document = load(args.results, mapping, args.id_field)
    except ReportSourceError as exc:
        return usage_error(str(exc))
    scored = isinstance(document.get("header"), dict) and bool(document["header"].get("source"))
    if args.id_field and not scored:
        return usage_error(
            f"--id-field names the rows of textsim score output; {args.results} is a JSON report"
        )
    problem, regressed = _compare(args, document) if args.compare else ("", "")
    if problem:
        return usage_error(problem)
    output = Path(args.output)
    title = args.title or f"textsim report: {Path(args.results).name}"
    limit = EXPLAIN_LIMIT if args.explain_limit is None else args.explain_limit
    try:
        write(output, document, title=title, explain_limit=limit)
    except OSError as exc:
        return usage_error(f"cannot write {output}: {exc.strerror or exc}")
    scores = len(document.get("scores") or [])
    print(f"textsim report: {plural(scores, 'score')} -> {output}")
    if scored:
        # textsim score rows: the lines that could not be drawn (also listed in the page).
        for problem in document.get("failures") or []:
            print(f"textsim: warning: {problem}", file=sys.stderr)
    if regressed and args.fail_on_regression:
        print(f"FAILED: {regressed} regressed against {args.compare} (--fail-on-regression)")
        return EXIT_FAILED
    return EXIT_OK


def _compare(args: argparse.Namespace, document: dict[str, Any]) -> tuple[str, str]:
    """Put the comparison with ``--compare`` in ``document`` and print its counts: why it
    cannot be made, and what regressed ("" when nothing)."""
    from ..gating import baseline
    from ..gating.compare import compare, unmatched
    from ..gating.regressions import regressed, report_lines

    try:
        old = baseline.load_baseline(args.compare)
        new = baseline.parse(document, args.results)
    except baseline.BaselineError as exc:
        return str(exc), ""
    problem = unmatched(
        old.entries, (e.test for e in new), old_name=args.compare, new_name=args.results,
        fix="name the rows of textsim score output as the baseline's were scored: "
        "--id-field COLUMN (without it a row is 'row N', its line number)",
    )  # fmt: skip
    if problem:
        return problem, ""
    comparison = compare(
        old.entries, new, old_version=old.version, old_corpus=old.corpus, old_name=args.compare
    )
    document["baseline"] = comparison.to_dict(args.compare)
    *_, counts = report_lines(comparison, args.compare)
    print(f"compared with {args.compare}: {counts.removeprefix('scores: ')}")
    return "", regressed(comparison)
