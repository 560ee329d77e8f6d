"""The report never shows a verdict the test did not make, and says where thresholds came from.

End to end with pytester, without xdist and with -n 0 (and -n 2 where xdist matters).
"""

from __future__ import annotations

import json

import pytest

try:
    # Imported here, before any in-process pytester run: one that first imports
    # numpy takes it out of sys.modules afterwards, and numpy cannot load twice.
    import numpy
except ImportError:  # pragma: no cover - numpy comes with the test dependencies
    numpy = None

# The README's fixture example, as a new user wrote it: rouge() with no threshold.
SUITE = """
import pytest
from pytest_textsim import assert_bleu

R = "the cat sat on the mat today"
G = "the cat sat on a red mat in the hall"

def test_own_assert_fails(rouge):
    assert rouge(R, G, rouge_type="rouge1")["rouge_recall"] >= 0.8

def test_own_assert_passes(rouge):
    out = rouge(R, G, rouge_type="rouge1")
    assert out["rouge_f1_score"] >= 0.4
    assert out["rouge_f1_score_result"] == "pass"  # the dict itself is unchanged

def test_fixture_with_threshold(bleu):
    bleu(R, G, threshold=0.9)

def test_helper_default_threshold():
    assert_bleu(R, G)
"""


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_chat=SUITE)
    return pytester


def scores(pytester: pytest.Pytester) -> list[dict]:
    return json.loads((pytester.path / "report.json").read_text())["scores"]


@pytest.mark.xdist_matters  # records without a verdict reach the controller
def test_fixture_without_threshold_records_no_verdict(suite, run_plugin) -> None:
    result = run_plugin("--textsim-json=report.json", "--textsim-gate=rouge_f1_score.count >= 1")
    result.assert_outcomes(passed=2, failed=2)
    by_test = {}
    for score in scores(suite):
        by_test.setdefault(score["test_id"].split("::")[1], []).append(score)
    # No threshold from any source: scores without a verdict, the test's outcome beside them.
    for name, outcome in (
        ("test_own_assert_fails", "failed"),
        ("test_own_assert_passes", "passed"),
    ):
        rows = by_test[name]
        assert {r["metric"] for r in rows} == {"rouge_precision", "rouge_recall", "rouge_f1_score"}
        assert all(r["passed"] is None and r["threshold"] is None for r in rows), rows
        assert all(r["threshold_source"] is None for r in rows)
        assert all(r["test_outcome"] == outcome for r in rows)
    (chosen,) = by_test["test_fixture_with_threshold"]
    assert chosen["passed"] is False and chosen["threshold"] == 0.9
    assert chosen["threshold_source"] == "bleu(threshold=...)"
    assert chosen["test_outcome"] == "passed"  # a fixture records; the test decides
    (helper,) = by_test["test_helper_default_threshold"]
    assert helper["passed"] is False and helper["threshold_source"] == "default"
    # The report rows: "-" for no verdict, and the test's own outcome.
    result.stdout.fnmatch_lines(
        [
            "*test*metric*score*threshold*result*outcome*",
            "*test_own_assert_fails*rouge_recall (rouge1)*0.600*-*-*failed*",
            "*test_own_assert_passes*rouge_f1_score (rouge1)*-*-*passed*",
        ]
    )
    # A fixture's verdict the passing test did not assert is "below", never FAIL.
    result.stdout.fnmatch_lines(["*test_fixture_with_threshold*bleu_score*0.900*below*passed*"])
    assert not [line for line in result.stdout.lines if "FAIL" in line and "passed" in line]
    # Pass rates count only the scores that had a threshold: BLEU's two, both failed.
    result.stdout.fnmatch_lines(["*rouge_recall (rouge1)*2*0.600*-", "*bleu_score*2*0% (0/2)*"])


def test_a_threshold_setting_gives_fixtures_their_verdicts(suite, run_plugin) -> None:
    suite.makefile(".ini", pytest="[pytest]\ntextsim_threshold_rouge = 0.3\n")
    run_plugin("--textsim-json=report.json").assert_outcomes(passed=2, failed=2)
    rouge = [s for s in scores(suite) if s["evaluator"] == "rouge"]
    assert rouge and all(s["passed"] is True for s in rouge)
    assert {s["threshold_source"] for s in rouge} == {"textsim_threshold_rouge in pytest.ini"}


def test_failure_messages_name_the_threshold_source(suite, run_plugin) -> None:
    result = run_plugin("-k", "helper")
    assert result.parseoutcomes()["failed"] == 1  # xdist reports no deselected count
    result.stdout.fnmatch_lines(
        ["*BLEU 0.* < threshold 0.500 (default; set textsim_threshold_bleu or threshold=)*"]
    )
    suite.makefile(".ini", pytest="[pytest]\ntextsim_threshold_bleu = 0.3\n")
    result = run_plugin("-k", "helper")
    result.stdout.fnmatch_lines(
        ["*BLEU 0.* < threshold 0.300 (from textsim_threshold_bleu in pytest.ini)*"]
    )
    result = run_plugin("-k", "helper", "--textsim-threshold-bleu=0.35")
    result.stdout.fnmatch_lines(
        ["*BLEU 0.* < threshold 0.350 (from --textsim-threshold-bleu on the command line)*"]
    )


def test_pass_rate_gate_without_thresholded_scores_fails_saying_so(suite, run_plugin) -> None:
    result = run_plugin(
        "-k", "own_assert_passes", "--textsim-gates-on-partial",
        "--textsim-gate=rouge_f1_score.pass_rate >= 0.9",
    )  # fmt: skip
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*FAIL rouge_f1_score.pass_rate >= 0.9*pass_rate counts only scores with a threshold, "
            "and none of the 1 rouge_f1_score score has one; pass threshold= to the fixture or "
            "set textsim_threshold_rouge*"
        ]
    )


NUMERIC = """
import pytest
from pytest_textsim import BleuScoreEvaluator, assert_bleu

def test_class():
    BleuScoreEvaluator(threshold={value})

def test_fixture(bleu):
    bleu("a b", "a b", threshold={value})

def test_helper():
    assert_bleu("a b", "a b", threshold={value})

@pytest.mark.textsim(threshold_bleu={value})
def test_marker(bleu):
    bleu("a b", "a b")
"""


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ('"0.3"', "a BLEU threshold must be a number, got str '0.3' (write 0.3)"),
        ("float('-inf')", "a BLEU threshold must be a finite number, got -inf"),
        ("1.5", "a BLEU threshold must be from 0 to 1, got 1.5"),
        ("True", "a BLEU threshold must be a number, got bool True"),
    ],
)
def test_thresholds_in_python_are_numbers_with_one_error_text(
    pytester: pytest.Pytester, run_plugin, value: str, problem: str
) -> None:
    pytester.makepyfile(test_numbers=NUMERIC.format(value=value))
    result = run_plugin()
    output = result.stdout.str()
    for source in (
        "BleuScoreEvaluator(threshold=...)",
        "bleu(threshold=...)",
        "assert_bleu(threshold=...)",
        "@pytest.mark.textsim on test_numbers.py::test_marker: threshold_bleu",
    ):
        assert f"{source}: {problem}" in output, (source, output[-3000:])


def test_numpy_thresholds_are_accepted(pytester: pytest.Pytester, run_plugin) -> None:
    if numpy is None:
        pytest.skip("numpy is not installed")
    pytester.makepyfile(
        """
        import numpy as np
        import pytest
        from pytest_textsim import assert_bleu

        @pytest.mark.textsim(threshold_bleu=np.float32(0.25))
        def test_marker(bleu):
            assert bleu("a b c d", "a b c d")["bleu_threshold"] == 0.25

        def test_helper():
            assert_bleu("a b c d", "a b c d", threshold=np.float64(0.5))
        """
    )
    run_plugin().assert_outcomes(passed=2)
