"""Comparing a run with a baseline: which scores got worse, and is it beyond noise.

Scores are matched by test id, evaluator, metric and, when one test records
the same metric several times, the order of the calls. Before comparing, every
caller asks :func:`unmatched` whether the two sides name the same tests at all:
fewer than half of the baseline's scores with a test in the run is a comparison
of nothing, refused. A score whose evaluator
parameters differ from the baseline's (another ROUGE type, a new judge prompt
version, another judge model) is *not compared*: the comparison says so and
asks for a new baseline, since the old number measured something else.

Each metric compared also gets a paired bootstrap of its mean difference (corpus
metrics: sacreBLEU's paired bootstrap over sentences), Holm-corrected across the
metrics, and the tests that went from pass to fail get McNemar's exact test
(:mod:`.significance`).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..catalog import higher_is_better
from ..formatting import plural
from ..settings.tolerances import Tolerances
from ..stats import DEFAULT_SEED
from .baseline import SIGNIFICANCE_VERSION, VERSION, CorpusStats, Entry
from .names import DEFAULT_COST_RISE, FIGURE_EVALUATORS
from .significance import (
    Flips,
    MetricTest,
    corpus_metric_test,
    flips,
    holm_correct,
    paired_metric_test,
    test_verdicts,
)

# Scores are recomputed from the same text, yet summing floats in another order
# can move the last digit; never call that a regression.
_EPSILON = 1e-9

REGRESSION = "regression"
IMPROVEMENT = "improvement"
UNCHANGED = "unchanged"
NEW = "new"
VANISHED = "vanished"  # in the baseline; its test is gone or no longer records it
NOT_RUN = "not run"  # in the baseline; its test was deselected, skipped or not collected
# In the baseline; its test ran and failed before recording it: a regression, since the
# case that dropped out is often the worst one.
NOT_SCORED = "not scored"
INCOMPARABLE = "incomparable"
# Beyond the tolerance, but its metric's drop is not significant (--textsim-significance).
NOT_SIGNIFICANT = "not significant"
# A judge score served by another model than the baseline's: not compared.
JUDGE_CHANGED = "judge changed"


@dataclass(frozen=True)
class Change:
    """How one score moved between the baseline and this run."""

    kind: str
    test: str
    evaluator: str
    metric: str  # with the variant, as reports show it: "rouge_f1_score (rougeL)"
    old: float | None
    new: float | None
    tolerance: float = 0.0
    why: str = ""  # for INCOMPARABLE: which parameters differ
    index: int = 0  # the n-th score of this metric in the test (Entry.index)

    @property
    def delta(self) -> float | None:
        if self.old is None or self.new is None:
            return None
        return self.new - self.old


@dataclass
class Comparison:
    """Every score of the baseline and of this run, classified."""

    changes: list[Change]
    # Per-metric tolerances that name no metric of either side (a typo such as
    # blue_score): listed, since they silently leave the default in force.
    unmatched_tolerances: list[str] = field(default_factory=list)
    metrics: list[str] = field(default_factory=list)  # the metrics of both sides
    # Paired tests per metric (empty for a version-1 baseline), Holm-corrected.
    metric_tests: list[MetricTest] = field(default_factory=list)
    flips: Flips | None = None  # tests that went from pass to fail, and back
    alpha: float | None = None  # --textsim-significance; None: the max-drop rule alone
    # Why there are no intervals or p-values ("" when there are).
    no_significance: str = ""
    # Judge scores compared whose system fingerprint changed or is missing on a side.
    fingerprints: list[Change] = field(default_factory=list)

    def of(self, kind: str) -> list[Change]:
        return [c for c in self.changes if c.kind == kind]

    @property
    def regressions(self) -> list[Change]:
        return self.of(REGRESSION)

    @property
    def metric_regressions(self) -> list[MetricTest]:
        """Metrics whose mean (or corpus score) got worse beyond tolerance (and significantly,
        with a significance level)."""
        return [t for t in self.metric_tests if t.verdict(self.alpha) == "REGRESSION"]

    @property
    def regressed(self) -> bool:
        """Whether anything regressed: a score, a metric as a whole, or a score that was
        not recorded because its test failed first."""
        return bool(self.regressions or self.metric_regressions or self.of(NOT_SCORED))

    def to_dict(self, path: str = "") -> dict[str, Any]:
        """The comparison as the JSON report (and the HTML report) show it."""
        return {
            "path": path,
            "counts": self.counts(),
            "regressions": len(self.regressions),
            "metric_regressions": len(self.metric_regressions),
            "unmatched_tolerances": list(self.unmatched_tolerances),
            "changes": [
                {
                    "kind": change.kind,
                    "test": change.test,
                    "evaluator": change.evaluator,
                    "metric": change.metric,
                    "index": change.index,
                    "old": change.old,
                    "new": change.new,
                    "delta": change.delta,
                    "tolerance": change.tolerance,
                    "why": change.why,
                }
                for change in self.changes
            ],
            "significance": self.alpha,
            "no_significance": self.no_significance,
            "metric_tests": [
                {
                    "metric": test.metric,
                    "pairs": test.pairs,
                    "old": test.old,
                    "new": test.new,
                    "difference": test.difference,
                    "lower_is_better": test.lower_is_better,
                    "tolerance": test.tolerance,
                    "interval": None if test.interval is None else test.interval.to_dict(),
                    "p": test.p,
                    "p_holm": test.p_holm,
                    "verdict": test.verdict(self.alpha),
                    "why": test.why,
                }
                for test in self.metric_tests
            ],
            "flips": None if self.flips is None else {
                "pass_to_fail": self.flips.pass_to_fail,
                "fail_to_pass": self.flips.fail_to_pass,
                "tests": self.flips.tests,
                "failed": list(self.flips.failed),
                "p": self.flips.p,
            },
            "fingerprints": [
                {"test": c.test, "evaluator": c.evaluator, "metric": c.metric, "why": c.why}
                for c in self.fingerprints
            ],
        }  # fmt: skip

    def counts(self) -> dict[str, int]:
        """How many *scores* are of each kind."""
        kinds = (REGRESSION, IMPROVEMENT, UNCHANGED, NEW, VANISHED, NOT_RUN, INCOMPARABLE)
        counts = {kind: len(self.of(kind)) for kind in kinds}
        if self.of(NOT_SCORED):  # only a run whose tests failed makes this kind
            counts[NOT_SCORED] = len(self.of(NOT_SCORED))
        if self.of(JUDGE_CHANGED):  # only judge scores with a served model make this kind
            counts[JUDGE_CHANGED] = len(self.of(JUDGE_CHANGED))
        if self.alpha is not None:  # only a significance level makes this kind
            counts[NOT_SIGNIFICANT] = len(self.of(NOT_SIGNIFICANT))
        return counts


def compare(
    old: Sequence[Entry],
    new: Sequence[Entry],
    tolerances: Tolerances | None = None,
    *,
    not_run: Callable[[str], bool] | None = None,
    failed: Callable[[str], bool] | None = None,
    significance: float | None = None,
    seed: int = DEFAULT_SEED,
    old_version: int = VERSION,
    old_corpus: Mapping[str, CorpusStats] | None = None,
    new_corpus: Mapping[str, CorpusStats] | None = None,
    old_name: str = "the baseline",
    max_cost_rise: float = DEFAULT_COST_RISE,
) -> Comparison:
    """Classify every score of ``old`` (the baseline) and ``new`` (this run).

    A baseline score missing from ``new`` is ``NOT_RUN`` when ``not_run(test_id)``
    says its test did not run this time (deselected with ``-k``, skipped, outside
    the paths given), else ``VANISHED``: the test is gone or stopped recording it.
    Without ``not_run`` (two files compared) every missing score is ``VANISHED``.
    It is ``NOT_SCORED`` when ``failed(test_id)`` says its test ran and failed (or
    errored) before recording it: counted with the regressions.

    Each metric compared also gets a paired bootstrap of its mean difference (and
    corpus metrics sacreBLEU's paired bootstrap, when both sides have their
    sentence statistics), Holm-corrected. With ``significance`` (a level such as
    0.05) a score beyond its tolerance is a ``REGRESSION`` only when its metric's
    drop is significant, else ``NOT_SIGNIFICANT``. An ``old_version`` below 2 has
    no test outcomes or sentence statistics: no significance, and the comparison
    says why in ``no_significance``.

    The app's figures of a test (evaluator ``app``: ``app.cost_usd``, ``app.tokens``)
    regress when they rise by more than ``max_cost_rise`` of the baseline's value
    (0.1: 10%); their tolerance is that rise, in their own unit.
    """
    tolerances = tolerances or Tolerances()
    old_by_key = {e.key: e for e in old}
    new_by_key = {e.key: e for e in new}
    changes = []
    fingerprint_notes: list[Change] = []
    for key in sorted(old_by_key.keys() | new_by_key.keys()):
        before, after = old_by_key.get(key), new_by_key.get(key)
        ref = before or after
        assert ref is not None
        where = (ref.test, ref.evaluator, ref.label)
        if before is None or after is None:
            if before is None:
                kind = NEW
            elif failed is not None and failed(before.test):
                kind = NOT_SCORED
            else:
                kind = NOT_RUN if not_run is not None and not_run(before.test) else VANISHED
            old_score = before.score if before else None
            new_score = after.score if after else None
            changes.append(Change(kind, *where, old_score, new_score, index=ref.index))
            continue
        if before.params != after.params:
            why = _params_diff(before.params, after.params)
            changes.append(
                Change(INCOMPARABLE, *where, before.score, after.score, why=why, index=ref.index)
            )
            continue
        if before.served_model and after.served_model and before.served_model != after.served_model:
            why = f"served by {before.served_model} -> {after.served_model}"
            changes.append(
                Change(JUDGE_CHANGED, *where, before.score, after.score, why=why, index=ref.index)
            )
            continue
        if (before.fingerprint or after.fingerprint) and before.fingerprint != after.fingerprint:
            fingerprint_notes.append(
                Change(UNCHANGED, *where, before.score, after.score, index=ref.index,
                       why=f"{before.fingerprint or 'none'} -> {after.fingerprint or 'none'}")
            )  # fmt: skip
        if before.evaluator in FIGURE_EVALUATORS:
            tolerance, lower_better = abs(before.score) * max_cost_rise, True
        else:
            tolerance = tolerances.for_metric(before.metric, before.evaluator)
            lower_better = not higher_is_better(before.metric, before.evaluator)
        drop = (after.score - before.score) if lower_better else (before.score - after.score)
        if drop > tolerance + _EPSILON:
            kind = REGRESSION
        elif -drop > tolerance + _EPSILON:
            kind = IMPROVEMENT
        else:
            kind = UNCHANGED
        changes.append(
            Change(kind, *where, before.score, after.score, tolerance, index=ref.index)
        )
    metrics = sorted({e.metric for e in (*old, *new)})
    unmatched = [name for name in tolerances.per_metric if name not in metrics]
    comparison = Comparison(
        changes, unmatched, metrics, alpha=significance, fingerprints=fingerprint_notes
    )
    if old_version < SIGNIFICANCE_VERSION:
        comparison.no_significance = (
            f"compared without significance: {old_name} is a version {old_version} baseline, "
            "without the statistics intervals and p-values need; save a new baseline"
        )
        return comparison
    tests = _metric_tests(old_by_key, new_by_key, changes, tolerances, seed)
    tests += _corpus_tests(old_corpus or {}, new_corpus or {}, tolerances, seed)
    comparison.metric_tests = holm_correct(tests)
    comparison.flips = flips(
        test_verdicts((e.test, e.outcome) for e in old),
        test_verdicts((e.test, e.outcome) for e in new),
    )
    if significance is not None:
        noise = {t.metric for t in comparison.metric_tests if t.significant(significance) is False}
        comparison.changes = [
            dataclasses.replace(c, kind=NOT_SIGNIFICANT)
            if c.kind == REGRESSION and c.metric in noise
            else c
            for c in changes
        ]
    return comparison


def unmatched(
    old: Sequence[Entry],
    new_tests: Iterable[str],
    *,
    not_run: Callable[[str], bool] | None = None,
    old_name: str = "the baseline",
    new_name: str = "this run",
    fix: str = "",
) -> str:
    """Why ``old`` and a run of the tests ``new_tests`` make no comparison ("" when they do).

    The rule every comparison applies before :func:`compare` (pytest's
    ``--textsim-compare``, ``textsim compare``, ``textsim report --compare``,
    ``textsim score --compare``): a baseline score matches when the run has its
    test, by id. When fewer than half of the baseline's scores match, the two sides
    name their tests differently (``row 3`` and ``q3``, ``test_a.py::t`` and
    ``tests/test_a.py::t``): every score would be new or vanished and nothing could
    regress, so the caller refuses, with this message (``fix`` says how to make the
    names agree). The scores of tests that ``not_run`` says did not run this time
    (deselected, skipped, in a file left out of a partial run) are not counted, so
    a partial run is held to the tests it ran; nothing left to count is no refusal.
    """
    tests = list(dict.fromkeys(new_tests))
    ran = set(tests)
    counted = [e for e in old if e.test in ran or not_run is None or not not_run(e.test)]
    matched = sum(1 for e in counted if e.test in ran)
    if 2 * matched >= len(counted):
        return ""
    old_only = list(dict.fromkeys(e.test for e in counted if e.test not in ran))
    known = {e.test for e in old}
    new_shown = _first([t for t in tests if t not in known] or tests) or "no test"
    return (
        f"only {matched} of {plural(len(counted), 'score')} of {old_name} belong to a test "
        f"of {new_name}, fewer than half: the two name their tests differently, so every "
        f"score would be new or vanished and nothing could regress. {old_name} has "
        f"{_first(old_only)}; {new_name} has {new_shown}" + (f"; {fix}" if fix else "")
    )


def _first(tests: Sequence[str]) -> str:
    """The first test ids in natural order, quoted: ``'q0', 'q1', 'q2', ... (30 tests)``."""
    ordered = sorted(tests, key=lambda t: [(int(p), "") if p.isdigit() else (-1, p)
                                           for p in re.split(r"(\d+)", t)])  # fmt: skip
    shown = ", ".join(repr(t) for t in ordered[:3])
    return shown + (f", ... ({len(tests)} tests)" if len(tests) > 3 else "")


_COMPARED = (REGRESSION, IMPROVEMENT, UNCHANGED)


def _metric_tests(
    old: Mapping[tuple[str, str, str, str, int], Entry],
    new: Mapping[tuple[str, str, str, str, int], Entry],
    changes: Sequence[Change],
    tolerances: Tolerances,
    seed: int,
) -> list[MetricTest]:
    """One paired test per metric (and variant) over the scores both sides compared."""
    compared = {(c.test, c.evaluator, c.metric) for c in changes if c.kind in _COMPARED}
    pairs: dict[str, tuple[list[float], list[float], Entry]] = {}
    for key in sorted(old.keys() & new.keys()):
        before, after = old[key], new[key]
        if (before.test, before.evaluator, before.label) not in compared:
            continue
        if before.evaluator in FIGURE_EVALUATORS:
            continue  # a cost is not a score: its rise is judged per test, relative
        olds, news, _ = pairs.setdefault(before.label, ([], [], before))
        olds.append(before.score)
        news.append(after.score)
    return [
        paired_metric_test(
            label,
            olds,
            news,
            lower_is_better=not higher_is_better(entry.metric, entry.evaluator),
            tolerance=tolerances.for_metric(entry.metric, entry.evaluator),
            seed=seed,
        )
        for label, (olds, news, entry) in sorted(pairs.items())
    ]


def _corpus_tests(
    old: Mapping[str, CorpusStats],
    new: Mapping[str, CorpusStats],
    tolerances: Tolerances,
    seed: int,
) -> list[MetricTest]:
    """sacreBLEU's paired bootstrap for corpus metrics both sides have sentences of.

    Sentences are paired by test id and order within the test; a sentence on one
    side only is left out. Signatures must match (same tokenizer, same version).
    """
    out = []
    for name in sorted(old.keys() & new.keys()):
        before, after = old[name], new[name]
        if before.signature != after.signature:
            continue
        old_rows, new_rows = _paired_sentences(before.sentences, after.sentences)
        metric = f"sacrebleu.{name}.score"
        out.append(
            corpus_metric_test(
                name,
                old_rows,
                new_rows,
                lower_is_better=not higher_is_better(metric),
                tolerance=tolerances.for_metric(metric),
                seed=seed,
            )
        )
    return out


def _paired_sentences(
    old: Sequence[tuple[str, list[float]]], new: Sequence[tuple[str, list[float]]]
) -> tuple[list[list[float]], list[list[float]]]:
    def keyed(rows: Sequence[tuple[str, list[float]]]) -> dict[tuple[str, int], list[float]]:
        counts: dict[str, int] = {}
        out = {}
        for test, row in rows:
            out[(test, counts.get(test, 0))] = row
            counts[test] = counts.get(test, 0) + 1
        return out

    before, after = keyed(old), keyed(new)
    both = sorted(before.keys() & after.keys())
    return [before[k] for k in both], [after[k] for k in both]


def _params_diff(old: dict[str, Any], new: dict[str, Any]) -> str:
    parts = []
    for name in sorted(old.keys() | new.keys()):
        if old.get(name) != new.get(name):
            before = _short(old[name]) if name in old else "(unset)"
            after = _short(new[name]) if name in new else "(unset)"
            parts.append(f"{name} {before} -> {after}")
    return ", ".join(parts)


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:37] + "..."
