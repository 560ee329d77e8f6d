"""Repeated runs within one test item, end to end (no xdist, -n 0; -n 2 where xdist matters)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

SUITE = '''
import itertools
import pytest

RUNS = {}
MADE = []
TORN = []

def run_index(name):
    RUNS.setdefault(name, itertools.count())
    return next(RUNS[name])

@pytest.fixture
def fresh():
    MADE.append(object())
    yield len(MADE)
    TORN.append(1)

@pytest.fixture(scope="module")
def shared():
    return object()

CAT = "the cat sat on the mat"

@pytest.mark.textsim(repeat=5, min_pass_rate=0.6)
def test_mostly(bleu, fresh, shared):
    i = run_index("mostly")
    assert fresh == i + 1 and len(TORN) == i  # a fresh fixture per run
    bleu(CAT if i != 1 else "a dog ran off", CAT)
    assert i != 1, "run two drew a bad answer"

@pytest.mark.textsim(repeat=3)
def test_never(bleu):
    bleu("a dog", CAT)
    assert False, "x" * 1000

@pytest.mark.textsim(repeat=4, min_passes=1)
def test_pass_at_n(bleu):
    i = run_index("at_n")
    bleu(CAT, CAT)
    assert i == 3
'''


@pytest.mark.xdist_matters  # the runs' records reach the controller as one verdict
def test_repeats_one_verdict_per_test(pytester: pytest.Pytester, run_plugin) -> None:
    pytester.makepyfile(test_app=SUITE)
    result = run_plugin("--textsim-json=report.json", "--junitxml=junit.xml", "-rf")
    # Three test ids, three verdicts: runs are not tests.
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*- textsim repeats -*",
            "PASS test_app.py::test_mostly: 4/5 passed (80%, 95% CI 38-96%), "
            "min_pass_rate 0.6  flaky",
            "FAIL test_app.py::test_never: 0/3 passed (0%, 95% CI 0-56%), min_pass_rate 1",
            "PASS test_app.py::test_pass_at_n: 1/4 passed (25%, 95% CI 5-70%), min_passes 1  flaky",
            "*- textsim flaky -*",
            "test_app.py::test_mostly: runs disagree, 4/5 passed (80%, 95% CI 38-96%)",
            "test_app.py::test_pass_at_n: runs disagree, 1/4 passed (25%, 95% CI 5-70%)",
        ],
        consecutive=False,
    )
    out = result.stdout.str()
    # The failure lists every run, each message cut to a sensible length.
    assert "0/3 passed (0%, 95% CI 0-56%); needs 100% of runs passing (min_pass_rate=1)" in out
    assert "  run 3: failed: AssertionError: " + "x" * 200 in out
    assert "x" * 400 not in out
    report = json.loads((pytester.path / "report.json").read_text())
    mostly = [s for s in report["scores"] if s["test_id"].endswith("test_mostly")]
    assert [s["run"] for s in mostly] == [0, 1, 2, 3, 4]
    assert [s["score"] for s in mostly] == [1.0, 0.0, 1.0, 1.0, 1.0]
    repeats = {r["test_id"].split("::")[1]: r for r in report["repeats"]}
    assert [r["outcome"] for r in repeats["test_mostly"]["runs"]] == [
        "passed", "failed", "passed", "passed", "passed"]  # fmt: skip
    assert repeats["test_mostly"]["runs"][1]["message"].startswith(
        "AssertionError: run two drew a bad answer"
    )
    assert (repeats["test_mostly"]["verdict"], repeats["test_mostly"]["flaky"]) == ("passed", True)
    assert repeats["test_never"]["verdict"] == "failed"
    # The summary counts each test once, with the mean of its runs.
    (summary,) = report["summary"]
    assert summary["count"] == 3 and summary["mean"] == pytest.approx((0.8 + 0.0 + 1.0) / 3)
    cases = {c.get("name"): c for c in ET.parse(pytester.path / "junit.xml").iter("testcase")}
    assert len(cases) == 3
    props = {
        name: [(p.get("name"), p.get("value")) for p in case.iter("property")]
        for name, case in cases.items()
    }
    assert ("textsim.flaky", "true") in props["test_mostly"]
    assert ("textsim.flaky", "true") not in props["test_never"]
    assert len([p for p in props["test_mostly"] if p[0] == "textsim.bleu_score"]) == 5


def test_both_requirements_is_an_error(pytester: pytest.Pytester, run_plugin) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.textsim(repeat=3, min_pass_rate=0.5, min_passes=1)
        def test_x(bleu):
            bleu("a", "a")
        """
    )
    result = run_plugin()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*@pytest.mark.textsim on test_both_requirements_is_an_error.py::test_x: give "
         "min_pass_rate (a share of the runs) or min_passes (a number of runs), not both*"]
    )  # fmt: skip


GLOBAL = '''
import itertools

CALLS = {"plain": itertools.count(), "scored": itertools.count()}

def test_plain():
    n = next(CALLS["plain"])
    assert n == 0, "a test without textsim scores runs once"

def test_scored(bleu):
    n = next(CALLS["scored"])
    bleu("the cat sat", "the cat sat")
    assert n < 3
'''


@pytest.mark.parametrize("how", ["flag", "env", "ini"])
@pytest.mark.xdist_matters  # each source of the setting reaches the workers
def test_global_repeat_applies_to_textsim_tests_only(
    pytester: pytest.Pytester, run_plugin, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    pytester.makepyfile(test_global=GLOBAL)
    args: list[str] = []
    if how == "flag":
        args = ["--textsim-repeat", "3"]
    elif how == "env":
        monkeypatch.setenv("TEXTSIM_REPEAT", "3")
    else:
        pytester.makeini("[pytest]\ntextsim_repeat = 3\n")
    result = run_plugin("--textsim-gate", "bleu_score.count == 1", *args)
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["PASS bleu_score.count == 1: 1 (1 score)",  # gates see one value per test
         "PASS test_global.py::test_scored: 3/3 passed (100%, 95% CI 44-100%), min_pass_rate 1"]
    )  # fmt: skip
    assert "test_plain" not in result.stdout.str().split("textsim repeats")[1]


@pytest.mark.xdist_matters  # how the repeats ended, sent to the controller
def test_setup_error_and_skip_end_the_repeats(pytester: pytest.Pytester, run_plugin) -> None:
    pytester.makepyfile(
        """
        import itertools
        import pytest

        SETUPS = itertools.count()
        BODIES = itertools.count()

        @pytest.fixture
        def flaky_setup():
            if next(SETUPS) == 2:
                raise RuntimeError("database gone")

        @pytest.mark.textsim(repeat=5)
        def test_setup(bleu, flaky_setup):
            bleu("a b c d", "a b c d")

        @pytest.mark.textsim(repeat=5, min_pass_rate=0.5)
        def test_skip(bleu):
            n = next(BODIES)
            bleu("a b c d", "a b c d")
            if n == 2:
                pytest.skip("quota used up")
        """
    )
    result = run_plugin("--textsim-json=r.json")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*RuntimeError: database gone*"])
    report = json.loads((pytester.path / "r.json").read_text())
    repeats = {r["test_id"].split("::")[1]: r for r in report["repeats"]}
    assert repeats["test_setup"]["ended"] == "run 3: setup error"
    assert repeats["test_skip"]["ended"] == "run 3: skipped"
    assert (repeats["test_skip"]["passed"], repeats["test_skip"]["total"]) == (2, 2)
    # The scores of the runs before the end are kept, with their run index.
    runs = sorted((s["test_id"].split("::")[1], s["run"]) for s in report["scores"])
    assert runs == [("test_setup", 0), ("test_setup", 1),
                    ("test_skip", 0), ("test_skip", 1), ("test_skip", 2)]  # fmt: skip


def test_flaky_fail_fails_a_flaky_test(pytester: pytest.Pytester, run_plugin) -> None:
    pytester.makepyfile(
        """
        import itertools
        import pytest

        N = itertools.count()

        @pytest.mark.textsim(repeat=4, min_pass_rate=0.5)
        def test_x(bleu):
            bleu("a b c d", "a b c d")
            assert next(N) != 0
        """
    )
    pytester.makeini("[pytest]\ntextsim_flaky = fail\n")
    result = run_plugin()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*flaky: 3/4 passed (75%, 95% CI 30-95%); runs disagree and textsim_flaky = fail*"]
    )


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--textsim-repeat=five"], {}, "--textsim-repeat on the command line: expected a whole "
         "number, got 'five'"),
        ([], {"TEXTSIM_REPEAT": "0"}, "TEXTSIM_REPEAT in the environment: expected a whole "
         "number >= 1, got '0'"),
        (["-o", "textsim_min_pass_rate=80%"], {}, "textsim_min_pass_rate*expected a number, "
         "got '80%'"),
        (["--textsim-flaky=maybe"], {}, "--textsim-flaky on the command line: expected one of "
         "report, fail, got 'maybe'"),
    ],
    ids=["flag", "environment", "ini", "flaky"],
)  # fmt: skip
def test_a_bad_repeat_setting_is_a_usage_error_before_any_test(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    env: dict[str, str],
    message: str,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    pytester.makepyfile('def test_x(bleu):\n    bleu("a", "a")\n')
    result = pytester.runpytest_inprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*pytest-textsim: {message}*"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_impossible_or_textual_repeat_options_name_the_test(
    pytester: pytest.Pytester, run_plugin
) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.textsim(repeat=3, min_passes=5)
        def test_impossible(bleu):
            bleu("a", "a")

        @pytest.mark.textsim(repeat="5")
        def test_text(bleu):
            bleu("a", "a")
        """
    )
    result = run_plugin()
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines_random(
        [
            "*@pytest.mark.textsim on *::test_impossible: min_passes=5 can never be met with "
            "repeat=3*",
            "*@pytest.mark.textsim on *::test_text: repeat must be a number, got '5'*",
        ]
    )
