"""Cases a gate expected a score of whose test failed first: which, and the gate's line."""

from __future__ import annotations

import dataclasses

from pytest_textsim.gating.baseline import Entry
from pytest_textsim.gating.gates import evaluate_gates, parse_gate
from pytest_textsim.gating.unscored import failed_cases, not_scored
from pytest_textsim.records import ScoreRecord


def rec(metric: str, nodeid: str, score: float = 0.9, **kw) -> ScoreRecord:
    return ScoreRecord(metric_name=metric.split("_")[0], score_key=metric, score=score,
                       threshold=0.5, passed=score >= 0.5, nodeid=nodeid, **kw)  # fmt: skip


RECORDS = [
    rec("bleu_score", "t.py::test_qa[a]"),
    rec("meteor_score", "t.py::test_qa[a]"),
    rec("bleu_score", "t.py::test_qa[b]", 0.1, test_outcome="failed"),  # stopped at bleu
    rec("bleu_score", "t.py::test_other", 0.1, test_outcome="failed"),  # never records meteor
    rec("rouge_f1_score", "t.py::test_each[c1]", params={"rouge_type": "rougeL"},
        case_of="t.py::test_each"),
]  # fmt: skip


def test_siblings_and_the_baseline_say_which_failed_cases_owed_a_score() -> None:
    failed = failed_cases(RECORDS, {"t.py::test_qa[c]", "t.py::test_each"})
    assert failed == {"t.py::test_qa[b]", "t.py::test_other", "t.py::test_qa[c]",
                      "t.py::test_each", "t.py::test_each[c1]"}  # fmt: skip
    gate = parse_gate("meteor_score.mean >= 0.5")
    # [b] and [c] (errored before any score) are siblings of [a], which recorded METEOR;
    # test_other is another function and the baseline does not know it.
    assert not_scored(gate, RECORDS, failed) == (("t.py::test_qa[b]", "t.py::test_qa[c]"), 1)
    baseline = [Entry("t.py::test_other", "meteor", "meteor_score", 0.8)]
    assert not_scored(gate, RECORDS, failed, baseline)[0] == (
        "t.py::test_other", "t.py::test_qa[b]", "t.py::test_qa[c]"
    )
    # A test filter narrows the cases expected; a parameter filter, the siblings' scores.
    only_b = parse_gate("meteor_score[test=*b?].mean >= 0.5")
    assert not_scored(only_b, RECORDS, failed) == (("t.py::test_qa[b]",), 0)
    rouge1 = parse_gate("rouge_f1_score[rouge_type=rouge1].mean >= 0.5")
    assert not_scored(rouge1, RECORDS, failed) == ((), 0)
    # Nothing is expected of corpus and figure gates, nor of a run where nothing failed.
    for text in ("sacrebleu.corpus_bleu.score >= 1", "app.cost_usd.sum <= 1"):
        assert not_scored(parse_gate(text), RECORDS, failed) == ((), 0)
    assert not_scored(gate, RECORDS, set()) == ((), 1)


def test_a_gate_with_cases_not_scored_says_so_and_counts_them() -> None:
    gate = parse_gate("meteor_score.mean >= 0.5")
    result = evaluate_gates([gate], RECORDS)[0]
    assert result.passed
    failing = dataclasses.replace(result, passed=False, not_scored=("x", "y"), cases=1)
    assert failing.line() == (
        "FAIL meteor_score.mean >= 0.5: 0.9000 over 1 of 3 cases (mean of 1 score); "
        "2 not scored (their test failed before meteor_score)"
    )
    assert failing.to_dict()["not_scored_detail"] == (
        "2 of 3 cases not scored (their test failed before meteor_score)"
    )
    # No case scored at all: no value, and the cases counted once.
    empty = evaluate_gates([gate], [])[0]
    none_left = dataclasses.replace(empty, not_scored=("x",), empty=False, partial="-k qa")
    assert none_left.line() == (
        "FAIL meteor_score.mean >= 0.5: no value (no meteor_score scores were recorded; "
        "no scores were recorded); 1 of 1 case not scored (their test failed before "
        "meteor_score) (partial run: -k qa)"
    )
