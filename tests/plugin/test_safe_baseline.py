"""A baseline saved from a broken run never silently replaces a good one.

End to end with pytester (without xdist, -n 0, and -n 2 where xdist matters):
failed and errored tests, missing NLTK data and a dead judge each refuse the
save; the force flag writes anyway; a written file says how it differs from
the one it replaced.
"""

from __future__ import annotations

import json

import pytest
import xdist_forks

from pytest_textsim.testing.fake_openai import FakeOpenAI

# Behaviour xdist does not change: one way is enough (the -n 2 run costs seconds).
ONE_WAY = pytest.mark.parametrize("plugin_args", [["-p", "no:xdist"]], ids=["no-xdist"])

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
        ["*- textsim baseline -*", "kept base.json as it was: 2 tests failed"]
    )
    assert "FAILED: --textsim-save-baseline" not in result.stdout.str()  # the tests say it
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
    result.stdout.fnmatch_lines(["kept base.json as it was: 1 test errored"])
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
    pytester: pytest.Pytester, plugin_args: list[str], monkeypatch, tmp_path, request
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
    args = ("-p", "no:cacheprovider", *plugin_args, "--textsim-save-baseline=base.json")
    if plugin_args[-1] == "2":
        # The workers score, each a fork of a process that has read no NLTK data;
        # the controller, in this process, only counts what they report.
        request.getfixturevalue("forked_workers")
        result = pytester.runpytest_inprocess(*args)
    else:
        # A fresh process: one that has read the data (an in-process run) keeps it.
        result = xdist_forks.runpytest_subprocess(pytester, *args)
    assert result.parseoutcomes()["failed"] >= 1  # METEOR (BLEU reads NLTK data too)
    result.stdout.fnmatch_lines(
        [
            "base.json not written: * failed, NLTK data was missing for * score*",
            "*textsim failed the run*",
            "FAILED: --textsim-save-baseline: base.json not written: NLTK data was "
            "missing for * score*, so this run's scores are incomplete;*",
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


# -- a failing run never writes a baseline ----------------------------------------

GATED = """
import os
import pytest

@pytest.mark.parametrize("n", range(6))
def test_answer(n, bleu):
    worse = " maybe" * n if os.environ.get("WORSE") else ""
    bleu(f"the answer is {n}{worse}", f"the answer is {n}", threshold=0.0)

@pytest.mark.parametrize("n", range(2))
def test_other(n, bleu):
    bleu(f"another answer {n}", f"another answer {n}", threshold=0.0)
"""


@pytest.fixture
def gated(pytester: pytest.Pytester, run_plugin) -> pytest.Pytester:
    pytester.makepyfile(test_chat=GATED)
    run_plugin("--textsim-save-baseline=base.json").assert_outcomes(passed=8)
    return pytester


def _break(line: str) -> str:
    """The suite with ``line`` run in test_answer after its score is recorded."""
    return GATED.replace("threshold=0.0)", f"threshold=0.0)\n    {line}", 1)


def _bytes(pytester: pytest.Pytester) -> bytes:
    return (pytester.path / "base.json").read_bytes()


@ONE_WAY
def test_regressions_keep_the_baseline_they_failed_against(gated, run_plugin, monkeypatch):
    # The workflow the docs recommend: compare with the file and save it, in one run.
    before = _bytes(gated)
    monkeypatch.setenv("WORSE", "1")
    args = ("--textsim-compare=base.json", "--textsim-fail-on-regression")
    result = run_plugin(*args, "--textsim-save-baseline=base.json")
    result.assert_outcomes(passed=8)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["kept base.json as it was: 5 scores regressed"])
    assert _bytes(gated) == before
    # So the next run still fails: the gate did not disarm itself.
    again = run_plugin(*args)
    assert again.ret == pytest.ExitCode.TESTS_FAILED
    again.stdout.fnmatch_lines(["FAILED: 5 scores regressed against base.json *"])
    forced = run_plugin(*args, "--textsim-save-baseline=base.json", "--textsim-save-baseline-force")
    forced.stdout.fnmatch_lines(
        ["saved base.json: 8 -> 8 scores: 5 scores changed (forced despite: 5 scores regressed)"]
    )
    assert _bytes(gated) != before


@ONE_WAY
def test_a_failed_gate_or_unwritable_report_keeps_the_baseline(gated, run_plugin) -> None:
    before = _bytes(gated)
    result = run_plugin("--textsim-save-baseline=base.json", "--textsim-gate=bleu_score.min > 1")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["kept base.json as it was: 1 gate failed"])
    # A failure decided after the finish step: the JSON report cannot be written.
    (gated.path / "report.json").mkdir()
    result = run_plugin("--textsim-save-baseline=base.json", "--textsim-json=report.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["kept base.json as it was: cannot write the JSON report *report.json*"]
    )
    assert _bytes(gated) == before


@pytest.mark.xdist_matters  # under xdist -x interrupts the workers
def test_a_run_stopped_early_keeps_the_baseline(gated, run_plugin, monkeypatch) -> None:
    before = _bytes(gated)
    gated.makepyfile(test_chat=_break("assert n != 1"))
    result = run_plugin("--textsim-save-baseline=base.json", "-x")
    assert result.ret != pytest.ExitCode.OK
    # -x: one failure, then pytest stops (under xdist the run is interrupted).
    result.stdout.fnmatch_lines(["kept base.json as it was: 1 test failed, the run *"])
    assert _bytes(gated) == before


def test_an_interrupted_run_keeps_the_baseline(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_chat=GATED)
    args = ("-p", "no:cacheprovider", "-p", "no:xdist", "--textsim-save-baseline=base.json")
    pytester.runpytest_inprocess(*args).assert_outcomes(passed=8)
    before = _bytes(pytester)
    pytester.makepyfile(test_chat=_break("if n == 3: raise KeyboardInterrupt"))
    # (pytester re-raises an in-process run's KeyboardInterrupt unless told not to.)
    result = pytester.runpytest_inprocess(*args, no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["kept base.json as it was: the run was interrupted"])
    assert _bytes(pytester) == before
    # pytest.exit() with status 0 stops the run too: the tests left are not scored.
    pytester.makepyfile(test_chat=_break("if n == 3: pytest.exit('enough', returncode=0)"))
    result = pytester.runpytest_inprocess(*args)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["kept base.json as it was: * did not run to the end"])
    assert _bytes(pytester) == before


def test_a_crashed_xdist_worker_keeps_the_baseline(
    pytester: pytest.Pytester, forked_workers: None
) -> None:
    pytester.makepyfile(test_chat=GATED)
    args = ("-p", "no:cacheprovider", "-n", "2", "--textsim-save-baseline=base.json")
    pytester.runpytest_inprocess(*args).assert_outcomes(passed=8)
    before = _bytes(pytester)
    pytester.makepyfile(test_chat=_break("if n == 3: os._exit(3)"))
    result = pytester.runpytest_inprocess(*args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["kept base.json as it was: worker 'gw*' crashed while running *test_answer[[]3[]]*"]
    )
    assert _bytes(pytester) == before


# -- a partial run never drops entries ----------------------------------------------


def _scores(pytester: pytest.Pytester) -> dict[str, float]:
    data = json.loads((pytester.path / "base.json").read_text())
    return {entry["test"]: entry["score"] for entry in data["scores"]}


@pytest.mark.xdist_matters  # deselection and records from workeroutput
def test_a_partial_run_updates_the_tests_it_ran_and_keeps_the_others(
    gated, run_plugin, monkeypatch
) -> None:
    before = _scores(gated)
    monkeypatch.setenv("WORSE", "1")
    result = run_plugin("--textsim-save-baseline=base.json", "-k", "answer and not 0")
    result.stdout.fnmatch_lines(
        ["saved base.json: updated 5 of 8 scores; 3 kept (partial run: -k 'answer and not 0': "
         "3 tests deselected)"]
    )  # fmt: skip
    after = _scores(gated)
    assert after.keys() == before.keys()
    changed = {test for test in after if after[test] != before[test]}
    assert changed == {f"test_chat.py::test_answer[{n}]" for n in range(1, 6)}
    # Node ids and files narrower than the suite are partial runs too. Its tests
    # score as before: the file is left as it was, and the line says so.
    written = _bytes(gated)
    result = run_plugin("--textsim-save-baseline=base.json", "test_chat.py::test_other")
    result.stdout.fnmatch_lines(
        ["saved base.json: unchanged, 8 scores of 8 tests (partial run: only "
         "test_chat.py::test_other given)"]
    )  # fmt: skip
    assert _bytes(gated) == written
    # A repeated subset counts each test once, with its mean.
    result = run_plugin("--textsim-save-baseline=base.json", "--textsim-repeat=3", "-k", "other")
    result.stdout.fnmatch_lines(["saved base.json: unchanged, 8 scores of 8 tests (partial run: *"])
    # The whole suite writes exactly its scores, as it always did.
    monkeypatch.delenv("WORSE")
    result = run_plugin("--textsim-save-baseline=base.json")
    result.stdout.fnmatch_lines(["saved base.json: 8 -> 8 scores: 5 scores changed"])
    assert _scores(gated) == before


@ONE_WAY
def test_a_folder_narrower_than_testpaths_is_a_partial_run(pytester, run_plugin) -> None:
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    for name in ("a", "b"):
        (pytester.path / "tests" / name).mkdir(parents=True)
        (pytester.path / "tests" / name / f"test_{name}.py").write_text(
            f"def test_{name}(bleu):\n    bleu('the cat sat', 'the cat sat')\n"
        )
    run_plugin("--textsim-save-baseline=base.json").stdout.fnmatch_lines(
        ["saved base.json: new file, 2 scores of 2 tests"]
    )
    result = run_plugin("--textsim-save-baseline=base.json", "tests/a")
    result.stdout.fnmatch_lines(
        ["saved base.json: unchanged, 2 scores of 2 tests (partial run: only tests/a given)"]
    )
    assert set(_scores(pytester)) == {"tests/a/test_a.py::test_a", "tests/b/test_b.py::test_b"}


def _ignore_suite(pytester: pytest.Pytester) -> None:
    """test_a.py scores 1, test_b.py 0.04; legacy/ and data/ are left out by the ini."""
    truth = "The cat sat on the mat."
    for name, answer in (("a", truth), ("b", "A dog ran in the park.")):
        source = f"def test_{name}(bleu):\n    bleu({answer!r}, {truth!r})\n"
        pytester.makepyfile(**{f"test_{name}": source})
    (pytester.path / "legacy").mkdir()
    (pytester.path / "legacy" / "test_old.py").write_text("def test_old():\n    assert False\n")
    (pytester.path / "data").mkdir()
    (pytester.path / "data" / "notes.txt").write_text("no tests here\n")


@ONE_WAY
def test_ignored_paths_make_a_partial_run(
    pytester: pytest.Pytester, run_plugin, monkeypatch: pytest.MonkeyPatch
) -> None:
    # --ignore and --ignore-glob leave tests out as -k does: the ini's gates are not
    # checked on the rest, and a saved baseline keeps the ignored tests' entries.
    monkeypatch.delenv("CI", raising=False)  # CI=true checks the ini's gates too
    _ignore_suite(pytester)
    pytester.makeini("[pytest]\naddopts = --ignore=legacy\n")
    run_plugin("--textsim-save-baseline=base.json").stdout.fnmatch_lines(
        ["saved base.json: new file, 2 scores of 2 tests"]
    )
    # The ini's --ignore is part of the suite; so is a folder with no tests left out.
    pytester.makeini("[pytest]\naddopts = --ignore=legacy\ntextsim_gates = bleu_score.min >= 0.9\n")
    whole = run_plugin("--ignore=data")
    assert whole.ret == pytest.ExitCode.TESTS_FAILED
    whole.stdout.fnmatch_lines(["FAIL bleu_score.min >= 0.9: 0.0385 (min of 2 scores)"])
    for option in ("--ignore=test_b.py", "--ignore-glob=*_b.py"):
        result = run_plugin(option, "--textsim-save-baseline=base.json")
        assert result.ret == pytest.ExitCode.OK
        result.stdout.fnmatch_lines(
            [
                "1 gate not checked: partial run (test_b.py ignored)",
                "saved base.json: unchanged, 2 scores of 2 tests (partial run: test_b.py ignored)",
            ]
        )
        assert set(_scores(pytester)) == {"test_a.py::test_a", "test_b.py::test_b"}


def test_ignored_paths_reach_the_controller_from_xdist_workers(
    pytester: pytest.Pytester, forked_workers: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    _ignore_suite(pytester)
    pytester.makeini("[pytest]\naddopts = --ignore=legacy\ntextsim_gates = bleu_score.min >= 0.9\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-n", "2", "--ignore=test_b.py")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["1 gate not checked: partial run (test_b.py ignored)"])


@ONE_WAY
def test_a_test_that_ran_is_its_scores_now(pytester, run_plugin, monkeypatch) -> None:
    pytester.makepyfile(
        test_two="""
        import os

        def test_both(bleu, meteor):
            bleu("the cat sat", "the cat sat")
            if not os.environ.get("FEWER"):
                meteor("the cat sat", "the cat sat")

        def test_other(bleu):
            bleu("a dog ran", "a dog ran")
        """
    )
    run_plugin("--textsim-save-baseline=base.json").assert_outcomes(passed=2)
    monkeypatch.setenv("FEWER", "1")
    result = run_plugin("--textsim-save-baseline=base.json", "-k", "both")
    result.stdout.fnmatch_lines(
        ["saved base.json: updated 1 of 2 scores; 1 kept; 1 score no longer recorded by the "
         "tests that ran (partial run: -k both: 1 test deselected)"]
    )  # fmt: skip
    data = json.loads((pytester.path / "base.json").read_text())
    assert [(e["test"], e["metric"]) for e in data["scores"]] == [
        ("test_two.py::test_both", "bleu_score"),
        ("test_two.py::test_other", "bleu_score"),
    ]


@ONE_WAY
def test_prune_is_refused_on_a_partial_run(gated, run_plugin) -> None:
    gated.makepyfile(test_chat=GATED.replace("range(6)", "range(4)"))
    before = _bytes(gated)
    result = run_plugin(
        "--textsim-save-baseline=base.json", "--textsim-save-baseline-prune", "-k", "other"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "kept base.json as it was: --textsim-save-baseline-prune on a partial run",
            "*textsim failed the run*",
            "FAILED: --textsim-save-baseline-prune (--textsim-save-baseline-prune on the command "
            "line) needs a run of the whole suite, and this one is partial (-k other: 4 tests "
            "deselected): a test it did not run may still exist; base.json is not written",
        ]
    )
    assert _bytes(gated) == before
    result = run_plugin("--textsim-save-baseline=base.json", "--textsim-save-baseline-prune")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        ["saved base.json: 8 -> 6 scores: 2 tests no longer scored (*test_answer[[]4[]], "
         "*test_answer[[]5[]])"]
    )  # fmt: skip


@pytest.mark.xdist_matters  # texts travel from the workers
def test_a_partial_run_merges_the_corpus_statistics(gated, run_plugin, monkeypatch) -> None:
    gate = "--textsim-gate=sacrebleu.corpus_bleu.score >= 0"
    run_plugin("--textsim-save-baseline=base.json", gate).assert_outcomes(passed=8)

    def sentences() -> dict[str, list[float]]:
        data = json.loads((gated.path / "base.json").read_text())
        return {test: row for test, row in data["corpus"]["corpus_bleu"]["sentences"]}

    before = sentences()
    assert len(before) == 8
    monkeypatch.setenv("WORSE", "1")
    run_plugin("--textsim-save-baseline=base.json", gate, "-k", "answer").stdout.fnmatch_lines(
        ["saved base.json: updated 6 of 8 scores; 2 kept (partial run: *"]
    )
    after = sentences()
    assert after.keys() == before.keys()
    assert [t for t in after if after[t] != before[t]] == [
        f"test_chat.py::test_answer[{n}]" for n in range(1, 6)
    ]


# -- a baseline that cannot be read is never replaced -------------------------------


def _baseline(tests: list[str], *extra: str, version: str = "2") -> str:
    """A baseline of one BLEU score per test, as --textsim-save-baseline writes it, with
    ``extra`` score lines after them."""
    rows = [
        json.dumps({"test": t, "evaluator": "bleu", "metric": "bleu_score", "params": {},
                    "score": 0.0})
        for t in tests
    ]  # fmt: skip
    body = ",\n".join(f"    {row}" for row in [*rows, *extra])
    return (
        f'{{\n  "format": "pytest-textsim baseline",\n  "version": {version},\n'
        f'  "scores": [\n{body}\n  ]\n}}\n'
    )


@ONE_WAY
def test_an_unreadable_baseline_is_kept_and_fails_the_run(pytester, run_plugin) -> None:
    pytester.makepyfile(test_chat=GATED)
    tests = [f"test_chat.py::test_answer[{n}]" for n in range(6)]
    nan = '{"test": "gone.py::t", "evaluator": "bleu", "metric": "bleu_score", "score": NaN}'
    again = json.dumps({"test": tests[4], "evaluator": "bleu", "metric": "bleu_score",
                        "params": {}, "score": 0.9})  # fmt: skip
    conflict = _baseline(tests).replace("  ]", "<<<<<<< HEAD\n  ]", 1)
    unreadable = {
        _baseline(tests, version="3"): "baseline format version 3 is newer than this "
        "pytest-textsim understands (2); upgrade pytest-textsim",
        _baseline(tests, nan): "score #7 must be an object with test, evaluator, metric, "
        "params and a finite numeric score; got *",
        conflict: ":11: not valid JSON (Expecting ',' delimiter)",
        _baseline(tests, again): "score #7 repeats score #5 (test_chat.py::test_answer[[]4[]], "
        "bleu bleu_score): keep one of them, or save the baseline again",
        _baseline(tests, version='"2"'): '"version" must be a whole number such as 2 (the '
        'baseline format version), got "2"',
    }
    path = pytester.path / "base.json"
    for text, why in unreadable.items():
        path.write_text(text)
        # The case: a partial run would have replaced every entry with its own.
        result = run_plugin("-k", "answer and 1", "--textsim-save-baseline=base.json")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines(
            [f"ERROR: pytest-textsim: --textsim-save-baseline (--textsim-save-baseline on the "
             f"command line): *base.json*{why}; this run would update the file and cannot read "
             "it, so it is kept as it was: fix it, or pass --textsim-save-baseline-force to "
             "replace it with this run's scores"]
        )  # fmt: skip
        assert path.read_text() == text
    forced = run_plugin("-k", "answer and 1", "--textsim-save-baseline=base.json",
                        "--textsim-save-baseline-force")  # fmt: skip
    forced.assert_outcomes(passed=1)
    forced.stdout.fnmatch_lines(
        ['saved base.json: replaced what could not be read (*base.json: "version" must be a '
         'whole number such as 2*) with 1 score of 1 test']
    )  # fmt: skip
    assert _scores(pytester) == {"test_chat.py::test_answer[1]": 1.0}


@ONE_WAY
def test_a_baseline_of_other_tests_is_no_comparison(pytester, run_plugin) -> None:
    pytester.makepyfile(test_chat=GATED)
    # This suite's 8 tests, each scored 0.0 then; one is gone from the suite since.
    ours = [f"test_chat.py::test_answer[{n}]" for n in range(6)]
    ours += ["test_chat.py::test_other[0]", "test_chat.py::test_gone"]
    (pytester.path / "base.json").write_text(_baseline(ours))
    # A partial run is held to the tests it ran: the 6 deselected are not counted,
    # and test_gone, vanished, is 1 of 2 scores left: not fewer than half.
    result = run_plugin("--textsim-compare=base.json", "-k", "other")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["scores: 0 regressed, 1 improved, 0 unchanged, 1 new, "
                                 "1 vanished, 6 not run"])  # fmt: skip
    # A baseline textsim score saved names rows, not these tests: nothing would match.
    (pytester.path / "base.json").write_text(_baseline([f"q{n}" for n in range(8)]))
    result = run_plugin("--textsim-compare=base.json", "--textsim-save-baseline=base.json")
    result.assert_outcomes(passed=8)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "kept base.json as it was: base.json matches too few tests to compare",
            "*textsim failed the run*",
            "FAILED: --textsim-compare: only 0 of 8 scores of base.json belong to a test of "
            "this run, fewer than half: the two name their tests differently, so every score "
            "would be new or vanished and nothing could regress. base.json has 'q0', 'q1', "
            "'q2', ... (8 tests); this run has 'test_chat.py::test_answer[[]0[]]', "
            "'test_chat.py::test_answer[[]1[]]', 'test_chat.py::test_answer[[]2[]]', ... "
            "(8 tests); compare with a baseline this suite saved (--textsim-save-baseline) "
            "from the same root folder, as test ids are relative to it; if the tests were "
            "renamed or removed, save a new one",
        ]
    )
    assert "textsim regressions" not in result.stdout.str()
