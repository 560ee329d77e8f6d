"""The summary of a run's scores: per-metric aggregates, score tables, Markdown.

Shared by the pytest plugin's terminal report and the ``textsim`` command
line. Nothing here prints: the functions yield lines. A line is a ``str`` or
``(str, markup)`` where markup is a terminal-writer keyword dict such as
``{"red": True}`` (ignored when the terminal has no colour).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Union

from .catalog import current_metrics
from .formatting import plural, table
from .formatting import score as score_text
from .records import ScoreRecord

#: A report line: text, or text with terminal markup.
Line = Union[str, tuple[str, dict[str, Any]]]


@dataclass(frozen=True)
class MetricSummary:
    """Aggregates of one metric (and variant, e.g. ROUGE type) over a run."""

    label: str  # "bleu_score", "rouge_f1_score (rougeL)"
    count: int
    mean: float
    min: float
    max: float
    passed: int
    judged: int  # records with a pass/fail verdict
    # Of the judged records that missed their threshold, those in tests that did
    # not fail on them (a fixture's verdict the test never asserted).
    below: int = 0

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.judged if self.judged else None

    @classmethod
    def of(
        cls, label: str, scores: Sequence[float], passed: int, judged: int, below: int = 0
    ) -> MetricSummary:
        """The summary of ``scores`` (not empty): the one builder of the plugin's
        records and of ``textsim score``'s tally."""
        return cls(label=label, count=len(scores), mean=statistics.fmean(scores),
                   min=min(scores), max=max(scores), passed=passed, judged=judged,
                   below=below)  # fmt: skip


def metric_label(metric: str, variant: str | None) -> str:
    """How the report names a metric: the output key, plus its variant (ROUGE's type)."""
    return f"{metric} ({variant})" if variant else metric


def label(record: ScoreRecord) -> str:
    """How the report names a record's metric: the output key, plus its variant."""
    return metric_label(record.score_key, record.variant)


def summarize(records: Iterable[ScoreRecord]) -> list[MetricSummary]:
    """One :class:`MetricSummary` per metric label, in order of first appearance."""
    groups: dict[str, list[ScoreRecord]] = {}
    for record in records:
        groups.setdefault(label(record), []).append(record)
    summaries = []
    for name, group in groups.items():
        judged = [r for r in group if r.passed is not None]
        summaries.append(
            MetricSummary.of(
                name,
                [r.score for r in group],
                passed=sum(1 for r in judged if r.passed),
                judged=len(judged),
                below=sum(1 for r in judged if verdict(r) in NOT_FAILING),
            )
        )
    return summaries


def integral(record: ScoreRecord) -> bool:
    # Judge scores and their thresholds are whole numbers on a 1-5 scale. A
    # metric of the table that is not a judge's never is: TER 2.0 against
    # threshold 1.0 is an edit rate, printed 2.000.
    metric = current_metrics().get(record.metric_name)
    if metric is not None and not metric.integer_scores:
        return False
    if metric is not None and record.threshold is None:
        return float(record.score).is_integer()  # a judge score recorded without a verdict
    return (
        record.threshold is not None
        and record.threshold >= 1
        and record.score >= 1
        and (float(record.score).is_integer() and float(record.threshold).is_integer())
    )


#: The verdicts of a score that missed its threshold in a test that did not fail.
UNASSERTED = ("below", "above")
#: Those verdicts and an expected failure's: a missed threshold that fails no test.
NOT_FAILING = (*UNASSERTED, "xfail")


def score_verdict(passed: bool | None, test_outcome: str | None, evaluator: str) -> str:
    """What a report says of a score against its threshold.

    ``pass``; ``fail`` when it missed the threshold and its test failed (or it was
    scored outside a test, as ``textsim score`` rows are); ``below`` when it missed
    it in a test that passed or was skipped, since a fixture's verdict is the test's
    only if the test asserts it (``above`` for a metric that passes at or below
    its threshold, TER); ``xfail`` when it missed it in a test expected to fail
    (an xfail case); ``none`` without a threshold.
    """
    if passed is None:
        return "none"
    if passed:
        return "pass"
    if test_outcome == "xfail":
        return "xfail"
    if test_outcome in ("passed", "skipped"):
        metric = current_metrics().get(evaluator)
        return "above" if metric is not None and not metric.higher_is_better else "below"
    return "fail"


def verdict(record: ScoreRecord) -> str:
    """:func:`score_verdict` of a record."""
    return score_verdict(record.passed, record.test_outcome, record.metric_name)


def missed_threshold(count: int) -> str:
    """``3 scores missed their threshold in tests that did not fail``."""
    if count == 1:
        return "1 score missed its threshold in a test that did not fail"
    return f"{count} scores missed their threshold in tests that did not fail"


_SHOWN = MappingProxyType({"pass": "pass", "fail": "FAIL", "none": "-"})
# Failures first when rows must be dropped, then the scores the tests did not assert.
_RANK = MappingProxyType({"fail": 0, "below": 1, "above": 1, "xfail": 1})


def score_table(
    records: Sequence[ScoreRecord], *, mode: str, limit: int, json_path: str | None
) -> Iterator[Line]:
    """Rows per score (per ``mode``, at most ``limit``), with a pointer to the rest."""
    chosen = [r for r in records if r.passed is False] if mode == "failed" else list(records)
    if mode not in ("all", "failed") or not chosen:
        return
    shown = chosen
    if len(chosen) > limit:
        shown = sorted(chosen, key=lambda r: _RANK.get(verdict(r), 2))[:limit]
    verdicts = [verdict(r) for r in shown]
    rows = [
        (
            r.nodeid or "(outside a test)",
            label(r),
            score_text(r.score, integral(r)),
            score_text(r.threshold, integral(r)),
            _SHOWN.get(said, said),
            r.test_outcome or "-",
        )
        for r, said in zip(shown, verdicts)
    ]
    # "result" is the score against its threshold ("-": none was chosen; "below": it
    # missed it in a test that did not fail); "outcome" is the test's own outcome,
    # which its asserts decide.
    header = ("test", "metric", "score", "threshold", "result", "outcome")
    lines = table([header, *rows], right={2, 3})
    yield lines[0]
    for text, said in zip(lines[1:], verdicts):
        if said == "fail":
            yield text, {"red": True}
        elif said in NOT_FAILING:
            yield text, {"yellow": True}
        else:
            yield text
    hidden = len(chosen) - len(shown)
    if hidden:
        where = (
            f"all rows are in {json_path}"
            if json_path
            else "--textsim-json=PATH writes them all, --textsim-report-rows=N shows more"
        )
        yield f"... {plural(hidden, 'more row')} not shown ({where})"


def summary_table(records: Sequence[ScoreRecord]) -> Iterator[Line]:
    """One row per metric: count, mean, min, max, pass rate."""
    yield from metric_table(summarize(records), {label(r): integral(r) for r in records})


def metric_table(
    summaries: Sequence[MetricSummary], whole_numbers: Mapping[str, bool]
) -> Iterator[Line]:
    """The rows of :func:`summary_table` from summaries made elsewhere (``textsim score``
    keeps only the aggregates of a stream); ``whole_numbers`` marks the judge's labels."""
    if not summaries:
        return
    rows = []
    for s in summaries:
        whole = whole_numbers.get(s.label, False)
        rate = "-" if s.pass_rate is None else f"{s.pass_rate:.0%} ({s.passed}/{s.judged})"
        rows.append(
            (
                s.label,
                str(s.count),
                f"{s.mean:.3f}",
                score_text(s.min, whole),
                score_text(s.max, whole),
                rate,
            )
        )
    lines = table([("metric", "count", "mean", "min", "max", "pass rate"), *rows], {1, 2, 3, 4})
    yield lines[0]
    for text, s in zip(lines[1:], summaries):
        if s.passed + s.below < s.judged:
            yield text, {"red": True}
        elif s.below:
            yield text, {"yellow": True}
        else:
            yield text


# Characters that start Markdown (or HTML) syntax inside a table cell: a test id
# or a message is shown as written, never rendered as a link, emphasis, code or
# a tag. "_" is left alone: GitHub does not emphasise inside words (test_foo_bar).
_MD_SPECIAL = re.compile(r"([\\`*\[\]<|~])")


def _md_cell(text: str) -> str:
    """``text`` as literal text in a GitHub table cell."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(text.splitlines()))


def _md_code(text: str) -> str:
    """``text`` as a code span in a GitHub table cell, whatever backticks it holds.

    The fence is one backtick longer than the longest run inside (CommonMark),
    padded with spaces when the text starts or ends with one; ``|`` is escaped
    because GitHub splits table cells before it reads code spans.
    """
    text = " ".join(text.splitlines()).replace("|", "\\|")
    runs = [len(run) for run in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_summary(records: Sequence[ScoreRecord], failures: Sequence[str] = ()) -> Iterator[str]:
    """The per-metric summary and the failing scores as GitHub Markdown."""
    if not records and not failures:
        return
    yield "### textsim scores"
    yield ""
    summaries = summarize(records)
    if summaries:
        yield "| metric | count | mean | min | max | pass rate |"
        yield "| --- | ---: | ---: | ---: | ---: | ---: |"
        for s in summaries:
            rate = "-" if s.pass_rate is None else f"{s.pass_rate:.0%} ({s.passed}/{s.judged})"
            yield (
                f"| {_md_cell(s.label)} | {s.count} | {s.mean:.3f} | {s.min:.3f} | "
                f"{s.max:.3f} | {rate} |"
            )
        yield ""
    failing = [r for r in records if verdict(r) == "fail"]
    unasserted = [r for r in records if verdict(r) in UNASSERTED]
    for rows, title in (
        (failing, f"**{plural(len(failing), 'failing score')}**"),
        (unasserted, f"**{missed_threshold(len(unasserted))}**"),
    ):
        if not rows:
            continue
        yield title
        yield ""
        yield "| test | metric | score | threshold |"
        yield "| --- | --- | ---: | ---: |"
        for r in rows:
            yield (
                f"| {_md_code(r.nodeid)} | {_md_cell(label(r))} | "
                f"{score_text(r.score, integral(r))} | {score_text(r.threshold, integral(r))} |"
            )
        yield ""
    for message in failures:
        yield f"**Run failed:** {_md_cell(message)}"
        yield ""
