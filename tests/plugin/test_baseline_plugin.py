"""Baselines inside pytest, end to end (no xdist, -n 0; -n 2 where xdist matters)."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

SUITE = '''
import pytest

ANSWERS = {ANSWERS!r}

@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_answer(name, bleu, meteor):
    bleu(ANSWERS[name], "The cat sat on the mat.")
    meteor(ANSWERS[name], "The cat sat on the mat.")
'''

GOOD = {"a": "The cat sat on the mat.", "b": "The cat sat on a mat.", "gone": "A cat sat."}
# b got worse, a stayed, "gone" was removed and "new" added.
WORSE = {"a": "The cat sat on the mat.", "b": "A dog ran in the park.", "new": "The cat sat."}


def _suite(answers: dict[str, str]) -> str:
    return SUITE.replace("{ANSWERS!r}", repr(answers))


@pytest.mark.xdist_matters  # the controller saves and compares the workers' scores
def test_save_compare_and_fail_on_regression(pytester: pytest.Pytester, run_plugin) -> None:
    pytester.makepyfile(test_suite=_suite(GOOD))
    saved = run_plugin("--textsim-save-baseline=base/scores.json")
    saved.assert_outcomes(passed=3)
    saved.stdout.fnmatch_lines(
        ["*- textsim baseline -*", "saved base*scores.json: new file, 6 scores of 3 tests"]
    )
    document = json.loads((pytester.path / "base" / "scores.json").read_text(encoding="utf-8"))
    assert [(s["test"], s["metric"]) for s in document["scores"]] == [
        ("test_suite.py::test_answer[a]", "bleu_score"),
        ("test_suite.py::test_answer[a]", "meteor_score"),
        ("test_suite.py::test_answer[b]", "bleu_score"),
        ("test_suite.py::test_answer[b]", "meteor_score"),
        ("test_suite.py::test_answer[gone]", "bleu_score"),
        ("test_suite.py::test_answer[gone]", "meteor_score"),
    ]
    assert document["scores"][0]["score"] == 1.0
    # Meant to be committed: the usual permissions (not a private temp file's 0600), no debris.
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE((pytester.path / "base" / "scores.json").stat().st_mode) == 0o666 & ~umask
    assert [p.name for p in (pytester.path / "base").iterdir()] == ["scores.json"]
    assert document["scores"][1]["params"] == {"alpha": 0.9, "beta": 3.0, "gamma": 0.5}

    pytester.makepyfile(test_suite=_suite(WORSE))
    result = run_plugin("--textsim-compare=base/scores.json", "--textsim-fail-on-regression")
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # every test passed, b regressed
    result.stdout.fnmatch_lines(
        [
            "*- textsim regressions -*",
            "test * metric * baseline * now * change * tolerance",
            "test_suite.py::test_answer[[]b[]] * bleu_score * 0.* * 0.0* * -0.* * 0.0200",
            "test_suite.py::test_answer[[]b[]] * meteor_score * 0.* * 0.* * -0.* * 0.0200",
            "new, not in the baseline (1 test, 2 scores):",
            "  test_suite.py::test_answer[[]new[]] (bleu_score, meteor_score)",
            "vanished, in the baseline but no longer recorded (1 test, 2 scores):",
            "  test_suite.py::test_answer[[]gone[]] (bleu_score, meteor_score)",
            "scores: 2 regressed, 0 improved, 2 unchanged, 2 new, 2 vanished",
            "*- textsim failed the run -*",
            "FAILED: 2 scores regressed against base*scores.json (--textsim-fail-on-regression)",
        ]
    )

    # Without --textsim-fail-on-regression the table is informational. A test
    # deselected (-k, --deselect) is "not run", one removed from the suite "vanished".
    deselect = "--deselect=test_suite.py::test_answer[a]"
    informational = run_plugin("--textsim-compare=base/scores.json", deselect)
    assert informational.ret == pytest.ExitCode.OK
    informational.stdout.fnmatch_lines(
        [
            "vanished, in the baseline but no longer recorded (1 test, 2 scores):",
            "  test_suite.py::test_answer[[]gone[]] (bleu_score, meteor_score)",
            "not run, in the baseline but deselected, skipped or not collected (1 test, 2 scores):",
            "  test_suite.py::test_answer[[]a[]] (bleu_score, meteor_score)",
            "scores: 2 regressed, 0 improved, 0 unchanged, 2 new, 2 vanished, 2 not run",
        ]
    )


def test_ini_tolerances_and_parameters_that_differ(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=_suite(GOOD))
    assert pytester.runpytest_inprocess("--textsim-save-baseline=b.json").ret == 0
    pytester.makepyfile(
        test_suite=_suite(WORSE).replace(
            "def test_answer", "@pytest.mark.textsim(alpha=0.8)\ndef test_answer"
        )
    )
    pytester.makeini(
        """
        [pytest]
        textsim_compare = b.json
        textsim_fail_on_regression = true
        textsim_max_drop =
            bleu_score = 0.99
            blue_score = 0.5
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    # BLEU dropped less than its tolerance; METEOR's alpha changed, so it is not compared.
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            "no regressions against b.json",
            "not compared (2 scores): the evaluator parameters differ from the baseline's, *",
            "  meteor: alpha 0.9 -> 0.8 (2 scores, e.g. test_suite.py::test_answer[[]a[]])",
            # A misspelt metric leaves the default tolerance in force: said, not ignored.
            "tolerance for 'blue_score' matches no score; metrics here: bleu_score, meteor_score",
            "scores: 0 regressed, 0 improved, 2 unchanged, 2 new, 2 vanished, 2 not compared",
        ]
    )
    strict = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--textsim-max-drop=0.01")
    assert strict.ret == pytest.ExitCode.TESTS_FAILED
    strict.stdout.fnmatch_lines(["test_suite.py::test_answer[[]b[]] * bleu_score * 0.0100"])


@pytest.mark.xdist_matters  # said once, not once per worker
def test_fail_on_regression_without_a_baseline_says_so_once(
    pytester: pytest.Pytester, run_plugin
) -> None:
    # The team's ini file asks for it; only CI passes the baseline. A local run
    # still works, and says the setting did nothing.
    pytester.makeini("[pytest]\ntextsim_fail_on_regression = true\n")
    pytester.makepyfile(test_suite="def test_a(f1_score):\n    f1_score('a b', 'a b')\n")
    result = run_plugin()
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            "*- textsim regressions -*",
            "warning: textsim_fail_on_regression in *tox.ini does nothing without "
            "--textsim-compare (textsim_compare, TEXTSIM_COMPARE): no baseline to compare this "
            "run with",
        ]
    )
    assert result.stdout.str().count("does nothing without --textsim-compare") == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--textsim-compare=missing.json"],
         "ERROR: pytest-textsim: --textsim-compare: *missing.json: no such file; create it "
         "with --textsim-save-baseline=*missing.json"),
        (["--textsim-compare=bad.json"],
         "ERROR: pytest-textsim: --textsim-compare: *bad.json:1: not valid JSON *"),
        (["--textsim-max-drop=lots"],
         "ERROR: pytest-textsim: --textsim-max-drop on the command line: 'lots': expected a "
         "number (0.05) or metric=number (bleu_score=0.05)"),
    ],
)  # fmt: skip
def test_bad_baseline_settings_are_usage_errors(
    pytester: pytest.Pytester, args: list[str], message: str
) -> None:
    pytester.makepyfile(test_suite=_suite(GOOD))
    pytester.makefile(".json", bad="{oops")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_unwritable_baseline_fails_the_run_with_a_message(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=_suite(GOOD))
    pytester.makefile(".txt", blocker="a file where the baseline's folder should be")
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "--textsim-save-baseline=blocker.txt/b.json"
    )
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*- textsim failed the run -*",
            "FAILED: cannot write the baseline */blocker.txt/b.json (--textsim-save-baseline on "
            "the command line): File exists: */blocker.txt",
        ]
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert "textsim baseline" not in result.stdout.str()  # nothing claims it was saved


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_release_notes_example_gates_and_baseline(pytester: pytest.Pytester) -> None:
    # A copy of the examples under a rootdir of its own, so test ids match the baseline's.
    shutil.copytree(EXAMPLES, pytester.path / "examples",
                    ignore=shutil.ignore_patterns("__pycache__", ".textsim_cache"))  # fmt: skip
    pytester.makeini("[pytest]\n")
    # One file of the suite is a partial run: its gates, which keep to that file,
    # are checked only when asked.
    args = [
        "-p", "no:cacheprovider", "examples/test_release_notes.py", "--textsim-report=none",
        "--textsim-gates-on-partial",
    ]  # fmt: skip
    clean = pytester.runpytest_inprocess(*args)
    assert clean.ret == pytest.ExitCode.OK, clean.stdout.str()
    clean.stdout.fnmatch_lines(
        [
            "PASS rouge_f1_score[[]test=*test_release_notes.py::*[]].mean >= 0.6: *",
            "PASS sacrebleu.corpus_bleu[[]test=*test_release_notes.py::*[]].score >= 40: *",
            "no regressions against release_notes_baseline.json",
            "scores: 0 regressed, 0 improved, 32 unchanged, 0 new, 0 vanished",
        ]
    )
    notes = pytester.path / "examples" / "release_notes.py"
    notes.write_text(
        notes.read_text(encoding="utf-8").replace(
            '"You can now export reports as CSV files."', '"CSV export of reports is possible."'
        ),
        encoding="utf-8",
    )
    worse = pytester.runpytest_inprocess(*args)
    worse.assert_outcomes(passed=8)  # every test passed; the baseline caught the drop
    assert worse.ret == pytest.ExitCode.TESTS_FAILED
    worse.stdout.fnmatch_lines(
        [
            "examples/test_release_notes.py::test_release_note[[]csv-export[]] * meteor_score *",
            "FAILED: * scores regressed against *release_notes_baseline.json "
            "(--textsim-fail-on-regression)",
        ]
    )
