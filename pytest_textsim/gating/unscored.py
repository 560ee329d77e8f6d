"""Cases a gate expected a score of, whose test failed before recording it.

A test that calls ``assert_bleu`` and then ``assert_meteor`` stops at the first
helper that fails, so its METEOR score is never recorded. A gate over the
scores that were recorded would then be computed over the cases that survived,
and the worst cases are exactly the ones that drop out. So a case is *not
scored* for metric M when its test failed (or errored) in this run without
recording M, and M was expected of it: the baseline compared with holds an M
score of that case, or another parametrization of the same test function
recorded M in this run. A gate over M with cases not scored fails, saying how
many (:class:`~.gates.GateResult`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase

from ..records import ScoreRecord
from .baseline import Entry
from .expressions import Gate
from .gates import matches, select
from .names import is_figure


def function_of(test: str) -> str:
    """The test function a case belongs to: its id without parameters.

    >>> function_of("tests/test_qa.py::test_answer[refund-policy]")
    'tests/test_qa.py::test_answer'
    """
    head, sep, last = test.rpartition("::")
    return head + sep + last.split("[", 1)[0]


def failed_cases(records: Iterable[ScoreRecord], failed_tests: Iterable[str]) -> set[str]:
    """The ids of the cases whose test failed: ``failed_tests`` (failed or errored in
    setup or call) and the cases of a batch (``assert_each_*``) that failed, or
    that belong to a test that failed."""
    failed = set(failed_tests)
    found = set(failed)
    for record in records:
        if record.test_outcome == "failed" or (record.case_of and record.case_of in failed):
            found.add(record.nodeid)
    return found


def not_scored(
    gate: Gate,
    records: Sequence[ScoreRecord],
    failed: Iterable[str],
    baseline: Sequence[Entry] = (),
) -> tuple[tuple[str, ...], int]:
    """The cases ``gate`` expected a score of that failed before recording it, in order,
    and how many cases it aggregates over (distinct test ids of its scores).

    ``failed``: the ids of the cases whose test failed in this run (:func:`failed_cases`);
    ``baseline``: the entries of the baseline compared with. Corpus, figure and
    ``.diff`` gates expect nothing: ``((), 0)``.
    """
    if gate.is_corpus or gate.diff or is_figure(gate.metric):
        return (), 0
    scored = {r.nodeid for r in select(gate, records)}
    tests = [f for k, f in gate.filters if k == "test"]
    params = [(k, v) for k, v in gate.filters if k != "test"]
    # A sibling outside the gate's test filter still says what its function records.
    functions = {
        function_of(r.nodeid) for r in records if r.score_key == gate.metric and matches(r, params)
    }
    expected = {
        e.test
        for e in baseline
        if e.metric == gate.metric and all(str(e.params.get(k)) == v for k, v in params)
    }
    missing = sorted(
        case
        for case in set(failed) - scored
        if (function_of(case) in functions or case in expected)
        and all(fnmatchcase(case, pattern) for pattern in tests)
    )
    return tuple(missing), len(scored)
