"""A baseline saved from a broken run never silently replaces a good one.

End to end with pytester (without xdist, -n 0, and -n 2 where xdist matters):
failed and errored tests, missing NLTK data and a dead judge each refuse the
save; the force flag writes anyway; a written file says how it differs from
the one it replaced.
"""

from __future__ import annotations

import json

import pytest

from pytest_textsim.testing.fake_openai import FakeOpenAI

SUITE = """
import os
import pytest

@pytest.mark.parametrize("n", range({count}))
def test_answer(n, bleu):
    bleu(f"the answer is {{n}}", f"the answer is {{n}}", threshold=0.5)
    assert not os.environ.get("BREAK_{{}}".format(n))
"""


def baseline_tests(pytester: pytest.Pytester) -> set[str]:
    data = json.loads((pytester.path / "base.json").read_text())
    return {entry["test"] for entry in data["scores"]}


@pytest.fixture
def good_baseline(pytester: pytest.Pytester, run_plugin) -> pytest.Pytester:
    pytester.makepyfile(test_chat=SUITE.format(count=10))
    run_plugin("--textsim-save-baseline=base.json").assert_outcomes(passed=10)
    return pytester


@pytest.mark.xdist_matters  # the controller counts the workers' failures
def test_failed_tests_refuse_the_save(good_baseline, run_plugin, monkeypatch) -> None:
    before = (good_baseline.path / "base.json").read_text()
    monkeypatch.setenv("BREAK_3", "1")
    monkeypatch.setenv("BREAK_7", "1")
    result = run_plugin("--textsim-save-baseline=base.json")
    result.assert_outcomes(passed=8, failed=2)
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*textsim failed the run*",
            "FAILED: --textsim-save-baseline: base.json kept as it was: 2 tests failed, so this "
            "run's scores are incomplete; fix the run, or pass --textsim-save-baseline-force to "
            "write them anyway",
        ]
    )
    assert (good_baseline.path / "base.json").read_text() == before
    # Forced: written, saying what it lost and why.
    result = run_plugin("--textsim-save-baseline=base.json", "--textsim-save-baseline-force")
    result.stdout.fnmatch_lines(
        ["saved base.json: 10 -> 10 scores, unchanged (forced despite: 2 tests failed)"]
    )


def test_errored_tests_refuse_the_save(good_baseline, run_plugin) -> None:
    good_baseline.makeconftest(
        """
        import pytest

        @pytest.fixture(autouse=True)
        def broken(request):
            if request.node.name == "test_answer[4]":
                raise RuntimeError("setup broke")
        """
    )
    result = run_plugin("--textsim-save-baseline=base.json")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "FAILED: --textsim-save-baseline: base.json kept as it was: 1 test errored, so "
            "this run's scores are incomplete;*"
        ]
    )
    assert len(baseline_tests(good_baseline)) == 10


def test_a_written_baseline_says_how_it_differs(good_baseline, run_plugin) -> None:
    good_baseline.makepyfile(test_chat=SUITE.format(count=7))
    result = run_plugin("--textsim-save-baseline=base.json")
    result.assert_outcomes(passed=7)
    result.stdout.fnmatch_lines(
        [
            "*- textsim baseline -*",
            "saved base.json: 10 -> 7 scores: 3 tests no longer scored "
            "(test_chat.py::test_answer[[]7[]], test_chat.py::test_answer[[]8[]], "
            "test_chat.py::test_answer[[]9[]])",
        ]
    )
    assert len(baseline_tests(good_baseline)) == 7


@pytest.mark.xdist_matters  # missing NLTK data counted in the workers
def test_missing_nltk_data_refuses_the_save(
    pytester: pytest.Pytester, plugin_args: list[str], monkeypatch, tmp_path
) -> None:
    pytester.makepyfile(
        test_meteor="""
        def test_meteor(meteor):
            meteor("the cat sat", "the cat sat")

        def test_bleu(bleu):
            bleu("the cat sat", "the cat sat")
        """
    )
    empty = tmp_path / "no_nltk_data"
    empty.mkdir()
    monkeypatch.setenv("NLTK_DATA", str(empty))
    monkeypatch.setenv("TEXTSIM_NLTK_DOWNLOAD", "never")
    # A fresh process: one that has read the data (an in-process run) keeps it.
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", *plugin_args, "--textsim-save-baseline=base.json"
    )
    assert result.parseoutcomes()["failed"] >= 1  # METEOR (BLEU reads NLTK data too)
    result.stdout.fnmatch_lines(
        [
            "FAILED: --textsim-save-baseline: base.json not written: * failed, NLTK data was "
            "missing for * score*, so this run's scores are incomplete;*"
        ]
    )
    assert not (pytester.path / "base.json").exists()


@pytest.mark.xdist_matters  # judge failures counted in the workers
def test_judge_failures_refuse_the_save(pytester: pytest.Pytester, run_plugin) -> None:
    server = FakeOpenAI().start()
    url = server.base_url
    server.stop()
    pytester.makepyfile(
        test_judged="""
        from pytest_textsim import JudgeError

        def test_tolerant(similarity):
            try:
                similarity("a", "b")
            except JudgeError:
                pass  # the test tolerates the judge being down; its score is still missing
        """
    )
    pytester.makefile(
        ".ini",
        pytest=f"[pytest]\ntextsim_judge_model = m\ntextsim_judge_base_url = {url}\n"
        "textsim_judge_max_retries = 0\n",
    )
    result = run_plugin("--textsim-save-baseline=base.json")
    result.assert_outcomes(passed=1)
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        ["FAILED: --textsim-save-baseline: base.json not written: 1 judge call failed,*"]
    )
