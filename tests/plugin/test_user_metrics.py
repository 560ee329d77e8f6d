"""Metrics registered in a conftest.py with pytest_textsim.register_metric, end to end."""

from __future__ import annotations

import json

import pytest

from pytest_textsim.catalog import METRICS
from pytest_textsim.settings.table import SETTINGS

CONFTEST = '''
import pytest_textsim


def brevity(response, ground_truth):
    """1 when the response is no longer than the reference, less the longer it gets."""
    return min(1.0, len(ground_truth) / max(len(response), 1))


def shouting(response):
    """Exclamation marks per word: lower is better."""
    return response.count("!") / max(len(response.split()), 1)


assert_brevity = pytest_textsim.register_metric("brevity", brevity)
pytest_textsim.register_metric(
    "shouting", shouting, threshold=0.1, higher_is_better=False, inputs=("response",)
)
'''

SUITE = '''
import pytest
from pytest_textsim import assert_brevity, assert_shouting

ANSWERS = {ANSWERS!r}
TRUTH = "Paris is the capital."


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_answer(name, brevity, shouting):
    out = brevity(ANSWERS[name], TRUTH)
    assert sorted(out) == ["brevity", "brevity_result", "brevity_threshold"]
    shouting(ANSWERS[name])


def test_helper():
    out = assert_brevity("Paris.", TRUTH)
    assert out == {"brevity": 1.0, "brevity_result": "pass", "brevity_threshold": 0.4}


@pytest.mark.textsim(threshold_brevity=0.3, threshold_shouting=0.2)
def test_marker():
    assert_brevity("Paris is the capital of France, a country in Western Europe!!", TRUTH)
    assert_shouting(response="Paris is the capital of France, a country in Western Europe!!")
'''

GOOD = {"a": "Paris is the capital.", "b": "Paris is the capital of France."}
WORSE = {"a": "Paris is the capital.", "b": GOOD["b"][:-1] + ", a country in Western Europe!!"}


def _suite(answers: dict[str, str]) -> str:
    return SUITE.replace("{ANSWERS!r}", repr(answers))


@pytest.mark.xdist_matters  # workers register the metric from their own conftest import
def test_a_registered_metric_has_what_a_built_in_has(pytester: pytest.Pytester, run_plugin) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_suite=_suite(GOOD))
    saved = run_plugin(
        "--textsim-threshold-brevity=0.4",
        "--textsim-gate=brevity.mean >= 0.5",
        "--textsim-gate=shouting.max <= 0.2",
        "--textsim-save-baseline=base.json",
        "--textsim-json=out.json",
        "--textsim-html=out.html",
    )
    saved.assert_outcomes(passed=4)
    assert saved.ret == pytest.ExitCode.OK
    saved.stdout.fnmatch_lines(
        [
            "*- textsim scores -*",
            "test_suite.py::test_answer[[]a[]] * brevity * 1.000 * 0.400 * pass * passed",
            # The fixture's shouting threshold is the default: a score, no verdict.
            "test_suite.py::test_answer[[]a[]] * shouting * 0.000 * - * - * passed",
            "test_suite.py::test_answer[[]b[]] * brevity * 0.677 * 0.400 * pass * passed",
            "test_suite.py::test_answer[[]b[]] * shouting * 0.000 * - * - * passed",
            "test_suite.py::test_helper * brevity * 1.000 * 0.400 * pass * passed",
            "test_suite.py::test_marker * brevity * 0.344 * 0.300 * pass * passed",
            "test_suite.py::test_marker * shouting * 0.182 * 0.200 * pass * passed",
            "*- textsim gates -*",
            "PASS brevity.mean >= 0.5: 0.75* (mean of 4 scores)",
            "PASS shouting.max <= 0.2: 0.18* (max of 3 scores)",
            "*- textsim baseline -*",
            "saved base.json: new file, 7 scores of 4 tests",
        ]
    )
    report = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    rows = [(s["test_id"], s["evaluator"], s["metric"], s["score"]) for s in report["scores"]]
    assert rows == [
        ("test_suite.py::test_answer[a]", "brevity", "brevity", 1.0),
        ("test_suite.py::test_answer[a]", "shouting", "shouting", 0.0),
        ("test_suite.py::test_answer[b]", "brevity", "brevity", 21 / 31),
        ("test_suite.py::test_answer[b]", "shouting", "shouting", 0.0),
        ("test_suite.py::test_helper", "brevity", "brevity", 1.0),
        ("test_suite.py::test_marker", "brevity", "brevity", 21 / 61),
        ("test_suite.py::test_marker", "shouting", "shouting", 2 / 11),
    ]
    sources = {s["threshold_source"] for s in report["scores"] if s["metric"] == "brevity"}
    assert sources == {
        "--textsim-threshold-brevity on the command line",
        "@pytest.mark.textsim on test_suite.py::test_marker: threshold_brevity",
    }
    html = (pytester.path / "out.html").read_text(encoding="utf-8")
    assert 'aria-label="brevity: histogram of 4 scores"' in html
    assert 'aria-label="shouting: histogram of 3 scores"' in html

    pytester.makepyfile(test_suite=_suite(WORSE))
    worse = run_plugin(
        "--textsim-threshold-brevity=0.4",
        "--textsim-compare=base.json",
        "--textsim-fail-on-regression",
    )
    worse.assert_outcomes(passed=4)  # the fixtures' verdicts do not fail a test
    assert worse.ret == pytest.ExitCode.TESTS_FAILED
    worse.stdout.fnmatch_lines(
        [
            "test_suite.py::test_answer[[]b[]] * brevity * 0.400 * below * passed",
            "*- textsim regressions -*",
            "test * metric * baseline * now * change * tolerance",
            # Lower is better for shouting: its rise is the regression.
            "test_suite.py::test_answer[[]b[]] * brevity * 0.677* * 0.344* * -0.3* * 0.0200",
            "test_suite.py::test_answer[[]b[]] * shouting * 0.000* * 0.181* * +0.18* * 0.0200",
            "FAILED: 2 scores regressed against base.json (--textsim-fail-on-regression)",
        ]
    )


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist", *args)


def test_helper_failure_reads_like_a_built_in_one(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makeini("[pytest]\ntextsim_threshold_shouting = 0.05\n")
    pytester.makepyfile(
        """
        import pytest_textsim

        def test_long():
            pytest_textsim.assert_brevity("Paris is the capital of France.", "Paris.")

        def test_loud():
            pytest_textsim.assert_shouting("Paris! Paris!")
        """
    )
    result = _run(pytester)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "E * AssertionError: brevity 0.194 < threshold 0.500 "
            "(default; set textsim_threshold_brevity or threshold=)",
            'E * response: "Paris is the capital of France."',
            'E * ground_truth: "Paris."',
            "E * AssertionError: shouting 1.000 > threshold 0.050 "
            "(from textsim_threshold_shouting in tox.ini)",
        ]
    )


def test_score_function_problems_name_the_metric_and_the_test(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        import pytest_textsim

        def broken(response, ground_truth):
            return len(response) / 0

        pytest_textsim.register_metric("broken", broken)
        pytest_textsim.register_metric("wordy", lambda response, truth: "high")
        pytest_textsim.register_metric("unbounded", lambda response, truth: float("nan"))
        pytest_textsim.register_metric("big", lambda response, truth: 7)
        pytest_textsim.register_metric("points", lambda r, t: 7, score_range=(0, 10), threshold=5)
        """
    )
    pytester.makepyfile(
        """
        from pytest_textsim import assert_wordy, assert_points

        def test_raises(broken):
            broken("a", "b")

        def test_text():
            assert_wordy("a", "b")

        def test_nan(unbounded):
            unbounded("a", "b")

        def test_big(big):
            big("a", "b")

        def test_points():
            assert assert_points("a", "b")["points"] == 7.0
        """
    )
    result = _run(pytester)
    result.assert_outcomes(failed=4, passed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ test_raises _*",
            "conftest.py:4: ZeroDivisionError",
            "The above exception was the direct cause of the following exception:",
            "E * pytest_textsim.ScoreFunctionError: test_*.py::test_raises: broken: the score "
            "function broken (conftest.py:3) raised ZeroDivisionError: division by zero",
            "E * pytest_textsim.ScoreFunctionError: test_*.py::test_text: wordy: the score "
            "function <lambda> (conftest.py:7) returned str 'high'; a score is a number *",
            "E * test_*.py::test_nan: unbounded: the score function <lambda> (conftest.py:8) "
            "returned nan, not a finite number",
            "E * test_*.py::test_big: big: the score function <lambda> (conftest.py:9) returned "
            "7.0, outside the metric's score range 0..1 (register_metric(..., "
            "score_range=(low, high)) widens it)",
        ]
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ('register_metric("bleu", f)',
         "'bleu' is taken by the built-in metric 'bleu' (fixture bleu, helper assert_bleu)*"),
        ('register_metric("similar", f)',
         "'similar' is taken by the built-in metric 'similarity' *helper assert_similar)*"),
        ('register_metric("f1_score", f)', "'f1_score' is taken by the built-in metric 'f1' *"),
        ('register_metric("Brevity", f)', "a metric name is lower-case letters, digits and *"),
        ('register_metric("x", f); register_metric("x", lambda r, g: 1.0)',
         "metric 'x' is already registered (in conftest.py:3); give this one another name"),
        ('register_metric("x", f, threshold=1.5)',
         "threshold: a x threshold must be from 0 to 1, got 1.5 "
         "(score_range=(low, high) sets the range)"),
        ('register_metric("x", f, threshold="0.5")',
         "threshold: a x threshold must be a number, got str '0.5' (write 0.5)"),
        ('register_metric("x", f, score_range=(1, 10))',
         "the default threshold 0.5 is outside score_range (1, 10); give threshold="),
        ('register_metric("x", f, score_range=(1, 1), threshold=1)',
         "score_range must have low < high, got (1, 1)"),
        ('register_metric("x", f, inputs=("answer", "truth"))',
         "unknown input 'answer'; inputs are names from response, ground_truth, context, query, "
         "conversation, trace"),
        ('register_metric("x", f, inputs="response")', "inputs must be a tuple of text names *"),
        ('register_metric("x", f, inputs=("response",))',
         "the score function f (conftest.py:2) must take the inputs response positionally; "
         "its signature is (r, g)"),
        ('register_metric("x", "f")', "score must be a function, got str"),
        ('register_metric("x", f, higher_is_better="no")',
         "higher_is_better must be True or False, got 'no'"),
    ],
)  # fmt: skip
def test_bad_registrations_name_the_call(
    pytester: pytest.Pytester, call: str, message: str
) -> None:
    head = "from pytest_textsim import register_metric\ndef f(r, g): return 1.0\n"
    pytester.makeconftest(head + call + "\n")
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = _run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"E   *Error: register_metric(*) in conftest.py:3: {message}"])


def test_the_same_registration_twice_is_one(pytester: pytest.Pytester) -> None:
    # A conftest.py imported twice (or a plugin and a conftest.py sharing a module)
    # registers the same function again: the metric is still one metric.
    pytester.makeconftest(
        """
        from pytest_textsim import register_metric

        def brevity(response, ground_truth):
            return min(1.0, len(ground_truth) / max(len(response), 1))

        first = register_metric("brevity", brevity)
        second = register_metric("brevity", brevity)
        """
    )
    pytester.makepyfile(
        """
        import conftest

        def test_both_helpers(brevity):
            assert brevity("a", "b")["brevity"] == 1.0
            conftest.first("a", "b")
            conftest.second("a", "b")
        """
    )
    result = _run(pytester, "--textsim-threshold-brevity=0.9")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["test_*.py::test_both_helpers * brevity * 1.000 * 0.900 *"])


def test_each_run_has_its_own_registrations(pytester: pytest.Pytester) -> None:
    # pytester's in-process runs import each conftest.py afresh; the catalog and the
    # settings end each run as the package has them, so the next run may register again.
    for threshold, score in ((0.2, 0.3), (0.8, 0.6)):
        pytester.makeconftest(
            f"from pytest_textsim import register_metric\n"
            f"register_metric('brevity', lambda r, g: {score}, threshold={threshold})\n"
        )
        verdict = "pass" if score >= threshold else "fail"
        expected = {"brevity": score, "brevity_result": verdict, "brevity_threshold": threshold}
        pytester.makepyfile(
            f"def test_it(brevity):\n    assert brevity('a', 'b') == {expected!r}\n"
        )
        result = _run(pytester, f"--textsim-gate=brevity.mean >= {score}")
        result.assert_outcomes(passed=1)
        gate = f"PASS brevity.mean >= {score}: {score:.4f} (mean of 1 score)"
        result.stdout.fnmatch_lines([gate])
        assert "brevity" not in METRICS and "threshold_brevity" not in SETTINGS


def test_bad_threshold_settings_and_markers_name_their_source(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.textsim(threshold_brevity=2)
        def test_marker(brevity):
            brevity("a", "b")
        """
    )
    flag = _run(pytester, "--textsim-threshold-brevity=7")
    assert flag.ret == pytest.ExitCode.USAGE_ERROR
    flag.stderr.fnmatch_lines(
        ["ERROR: pytest-textsim: --textsim-threshold-brevity on the command line: "
         "expected a number from 0 to 1, got '7'"]
    )  # fmt: skip
    marker = _run(pytester)
    marker.assert_outcomes(errors=1)
    marker.stdout.fnmatch_lines(
        ["*@pytest.mark.textsim on test_*.py::test_marker: threshold_brevity: a brevity "
         "threshold must be from 0 to 1, got 2*"]
    )  # fmt: skip


def test_a_conftest_found_during_collection_reads_its_threshold_from_the_environment(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # suite/sub/conftest.py is imported while collecting, after pytest parsed its
    # options: the metric has its fixture and helper, and its threshold comes from
    # the environment, a marker or the call.
    sub = pytester.mkpydir("suite") / "sub"
    sub.mkdir()
    (sub / "conftest.py").write_text(
        "import pytest_textsim\npytest_textsim.register_metric('late', lambda r, g: 0.4)\n"
    )
    (sub / "test_late.py").write_text(
        "def test_late(late):\n    assert late('a', 'b')['late_result'] == 'pass'\n"
    )
    monkeypatch.setenv("TEXTSIM_THRESHOLD_LATE", "0.3")
    result = _run(pytester, "suite")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["suite/sub/test_late.py::test_late * late * 0.400 * 0.300 *"])
    assert "TEXTSIM_THRESHOLD_LATE" not in result.stdout.str()  # no "unknown variable" warning


def test_a_conftest_that_fails_leaves_no_registration_behind(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        "from pytest_textsim import register_metric\ndef f(r, g): return 1.0\n"
        'register_metric("leftover", f)\nregister_metric("leftover", lambda r, g: 0.0)\n'
    )
    pytester.makepyfile("def test_nothing():\n    pass\n")
    assert _run(pytester).ret == pytest.ExitCode.USAGE_ERROR
    assert "leftover" not in METRICS


def test_helpers_in_a_thread_of_the_test_score_for_the_test(pytester: pytest.Pytester) -> None:
    # A thread started without a copy of the test's context (a ThreadPoolExecutor)
    # finds the process's pytest run: its scores are the test's, a registered
    # metric's threshold setting is found, and nothing is scored in a run of its own.
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        """
        from concurrent.futures import ThreadPoolExecutor
        import pytest_textsim

        def test_pool():
            with ThreadPoolExecutor(2) as pool:
                list(pool.map(lambda answer: pytest_textsim.assert_brevity(answer, "Paris."),
                              ["Paris.", "Paris!"]))
                pool.submit(pytest_textsim.assert_f1, "Paris.", "Paris.").result()
        """
    )
    result = _run(pytester, "--textsim-json=out.json")
    result.assert_outcomes(passed=1)
    report = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    scored = sorted((s["test_id"], s["evaluator"]) for s in report["scores"])
    assert scored == [
        ("test_helpers_in_a_thread_of_the_test_score_for_the_test.py::test_pool", name)
        for name in ("brevity", "brevity", "f1")
    ]
