"""pytest-html: each test's textsim scores (and what failing ones miss) in its extras."""

from __future__ import annotations

from typing import Any

import pytest

from ..html.fragment import scores_fragment
from ..records import ScoreRecord


def add_html_extras(
    pytest_html: Any, report: pytest.TestReport, records: list[dict[str, Any]]
) -> None:
    """Append the scores recorded in this phase to ``report.extras`` as one HTML extra."""
    # The test's outcome as far as this phase knows it: a score that missed its
    # threshold in a test that passed is shown as such, not as the test's failure.
    outcome = report.outcome if report.when == "call" or report.failed else None
    scores = []
    for data in records:
        record = ScoreRecord.from_dict(dict(data))
        scores.append(
            {
                "metric": record.score_key,
                "evaluator": record.metric_name,
                "variant": record.variant,
                "score": record.score,
                "threshold": record.threshold,
                "passed": record.passed,
                "test_outcome": outcome,
                "params": record.params,
                "reason": record.reason,
                "texts": record.texts,
                "details": record.details,  # the judge's verdicts (RAG, agent metrics)
            }
        )
    fragment = scores_fragment(scores)
    if fragment:
        extras = list(getattr(report, "extras", None) or [])
        extras.append(pytest_html.extras.html(fragment))
        report.extras = extras  # type: ignore[attr-defined]
