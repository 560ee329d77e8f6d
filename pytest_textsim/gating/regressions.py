"""The ``textsim regressions`` section (pytest and ``textsim compare``): regressions
in full, everything else a comparison found briefly."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Callable

from ..formatting import alike, number, plural, significant, table
from .compare import (
    IMPROVEMENT,
    INCOMPARABLE,
    JUDGE_CHANGED,
    NEW,
    NOT_RUN,
    NOT_SCORED,
    NOT_SIGNIFICANT,
    REGRESSION,
    UNCHANGED,
    VANISHED,
    Change,
    Comparison,
)
from .names import FIGURE_EVALUATORS

_LIST_LIMIT = 10  # improvements shown
_TESTS_LIMIT = 5  # new / vanished tests shown: a brief list, the JSON report has all


#: Headings of the brief lists; the summary line counts the same kinds by these words.
_MISSING = (
    (NOT_SCORED, "not scored (test failed), in the baseline but their test failed first"),
    (NEW, "new, not in the baseline"),
    (VANISHED, "vanished, in the baseline but no longer recorded"),
    (NOT_RUN, "not run, in the baseline but deselected, skipped or not collected"),
)


def regressed(comparison: Comparison) -> str:
    """What regressed, counted: ``6 scores, 1 app figure and 1 metric`` ("" when
    nothing did). The app's and the traces' figures (``app.cost_usd``, ``trace.tokens``)
    are no scores."""
    figures = {
        owner: sum(1 for change in comparison.regressions if change.evaluator == owner)
        for owner in FIGURE_EVALUATORS
    }
    counts = (
        (len(comparison.regressions) - sum(figures.values()), "score"),
        *((count, f"{owner} figure") for owner, count in figures.items()),
        (len(comparison.metric_regressions), "metric"),
    )
    what = [plural(count, noun) for count, noun in counts if count]
    return " and ".join(what) if len(what) < 3 else ", ".join(what[:-1]) + " and " + what[-1]


def failing(comparison: Comparison) -> str:
    """What fails a run under ``--fail-on-regression``, in words: ``6 scores regressed``,
    ``5 scores not scored (test failed)``, or both ("" when nothing does)."""
    what = regressed(comparison)
    unscored = len(comparison.of(NOT_SCORED))
    words = [f"{what} regressed"] if what else []
    if unscored:
        words.append(f"{plural(unscored, 'score')} not scored (test failed)")
    return ", ".join(words)


def pytest_flag(setting: str) -> str:
    """How the pytest plugin's messages name a setting: ``--textsim-save-baseline``."""
    return "--textsim-" + setting.replace("_", "-")


def report_lines(
    comparison: Comparison,
    baseline: str = "the baseline",
    flag: Callable[[str], str] = pytest_flag,
) -> Iterator[str]:
    """The ``textsim regressions`` section: regressions in full, the rest briefly.

    Every count is of scores; lists of tests say how many tests and scores they hold.
    ``flag`` names a setting (``save_baseline``, ``significance``) the way the caller's
    users type it: the plugin's ``--textsim-save-baseline``, the command line's own.
    """
    counts = comparison.counts()
    regressions = comparison.regressions
    if regressions:
        rows: list[tuple[str, ...]] = [("test", "metric", "baseline", "now", "change", "tolerance")]
        for c in regressions:
            # The app's cost and tokens (app.cost_usd, app.tokens) are no 0..1 scores.
            figures = significant if c.evaluator in FIGURE_EVALUATORS else alike
            numbers = figures([c.old, c.new, c.delta or 0.0, c.tolerance], signed=(2,))
            rows.append((c.test, c.metric, *numbers))
        yield from table(rows)
    elif comparison.metric_regressions or comparison.of(NOT_SCORED):
        yield f"no single score dropped beyond its tolerance against {baseline}"
    else:
        yield f"no regressions against {baseline}"
    yield from _significance_lines(comparison, flag)
    noise = comparison.of(NOT_SIGNIFICANT)
    if noise:
        tests = len({c.test for c in noise})
        yield (
            f"beyond tolerance but not significant at {comparison.alpha:g} "
            f"({plural(tests, 'test')}, {plural(len(noise), 'score')}), not regressions:"
        )
        for c in noise[:_LIST_LIMIT]:
            yield f"  {c.test} {c.metric} {number(c.old)} -> {number(c.new)}"
        if len(noise) > _LIST_LIMIT:
            yield f"  ... and {len(noise) - _LIST_LIMIT} more"
    improvements = comparison.of(IMPROVEMENT)
    if improvements:
        yield f"improved ({plural(len(improvements), 'score')}):"
        for c in improvements[:_LIST_LIMIT]:
            old, new = alike([c.old, c.new])
            yield f"  {c.test} {c.metric} {old} -> {new}"
        if len(improvements) > _LIST_LIMIT:
            yield f"  ... and {len(improvements) - _LIST_LIMIT} more"
    for kind, label in _MISSING:
        changes = comparison.of(kind)
        if changes:
            tests = len({c.test for c in changes})
            yield f"{label} ({plural(tests, 'test')}, {plural(len(changes), 'score')}):"
            yield from _brief_tests(changes)
    changed = comparison.of(JUDGE_CHANGED)
    if changed:
        yield (
            f"judge changed ({plural(len(changed), 'score')}): another model served these "
            "judgments than the baseline's, so they are not compared"
        )
        by_why: dict[str, list[Change]] = {}
        for c in changed:
            by_why.setdefault(f"{c.evaluator}: {c.why}", []).append(c)
        for why, group in by_why.items():
            yield f"  {why} ({plural(len(group), 'score')}, e.g. {group[0].test})"
    if comparison.fingerprints:
        notes = sorted({c.why for c in comparison.fingerprints})
        shown = "; ".join(notes[:3]) + ("; ..." if len(notes) > 3 else "")
        yield (
            f"note: the judge's system fingerprint changed or is missing for "
            f"{plural(len(comparison.fingerprints), 'compared score')} ({shown}): "
            "the backend changed, so judge scores may move for that reason"
        )
    incomparable = comparison.of(INCOMPARABLE)
    if incomparable:
        yield (
            f"not compared ({plural(len(incomparable), 'score')}): the evaluator parameters "
            "differ from the baseline's, so the scores measure different things; save a new "
            f"baseline with {flag('save_baseline')}"
        )
        groups: dict[tuple[str, str], list[Change]] = {}
        for c in incomparable:
            groups.setdefault((c.evaluator, c.why), []).append(c)
        for (evaluator, why), group in groups.items():
            yield f"  {evaluator}: {why} ({plural(len(group), 'score')}, e.g. {group[0].test})"
    for name in comparison.unmatched_tolerances:
        here = ", ".join(comparison.metrics) or "none"
        yield f"tolerance for {name!r} matches no score; metrics here: {here}"
    yield (
        f"scores: {counts[REGRESSION]} regressed, {counts[IMPROVEMENT]} improved, "
        f"{counts[UNCHANGED]} unchanged, {counts[NEW]} new, {counts[VANISHED]} vanished"
        + (f", {counts[NOT_SCORED]} not scored (test failed)" if counts.get(NOT_SCORED) else "")
        + (f", {counts[NOT_RUN]} not run" if counts[NOT_RUN] else "")
        + (f", {counts[INCOMPARABLE]} not compared" if counts[INCOMPARABLE] else "")
        + (f", {counts[NOT_SIGNIFICANT]} not significant" if counts.get(NOT_SIGNIFICANT) else "")
        + (f", {counts[JUDGE_CHANGED]} judge changed" if counts.get(JUDGE_CHANGED) else "")
    )


def _significance_lines(comparison: Comparison, flag: Callable[[str], str]) -> Iterator[str]:
    if comparison.no_significance:
        yield f"{comparison.no_significance} with {flag('save_baseline')}"
        return
    tests = comparison.metric_tests
    # Small comparisons (no metric with 10 pairs) keep to the max-drop report,
    # unless a significance level was asked for.
    shown = any(t.p is not None for t in tests) or comparison.alpha is not None
    if tests and shown:
        tested = sum(t.p is not None for t in tests)
        level = (
            f"a drop is a regression when beyond tolerance and significant at "
            f"{comparison.alpha:g}"
            if comparison.alpha is not None
            else f"max-drop rule only; {flag('significance')} 0.05 also asks for significance"
        )
        yield (
            f"paired bootstrap per metric (95% CI of the difference; one-sided p of a drop, "
            f"Holm-corrected over {plural(tested, 'metric')}; {level}):"
        )
        for test in tests:
            yield "  " + test.line(comparison.alpha)
    flipped = comparison.flips
    if flipped is not None and flipped.tests and (shown or flipped.pass_to_fail):
        yield flipped.line()


def _brief_tests(changes: list[Change]) -> Iterator[str]:
    by_test: dict[str, list[str]] = {}
    for c in changes:
        metrics = by_test.setdefault(c.test, [])
        if c.metric not in metrics:
            metrics.append(c.metric)
    tests = list(by_test.items())
    for test, metrics in tests[:_TESTS_LIMIT]:
        yield f"  {test} ({', '.join(metrics)})"
    if len(tests) > _TESTS_LIMIT:
        more = len(tests) - _TESTS_LIMIT
        yield f"  ... and {more} more test{'s' if more != 1 else ''}"
