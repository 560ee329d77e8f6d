"""Dataset gates inside pytest, end to end (no xdist, -n 0; -n 2 where xdist matters)."""

from __future__ import annotations

import json

import pytest

# Behaviour xdist does not change: one way is enough (the -n 2 run costs seconds).
ONE_WAY = pytest.mark.parametrize("plugin_args", [["-p", "no:xdist"]], ids=["no-xdist"])

SUITE = '''
import pytest

PAIRS = [
    ("The cat sat on the mat.", "The cat sat on the mat."),
    ("A dog ran in the park.", "The cat sat on the mat."),
    ("The largest city in France is Paris.", "Paris is the largest city in France."),
]

@pytest.mark.parametrize("response,truth", PAIRS, ids=["same", "other", "paris"])
def test_answers(bleu, rouge, response, truth):
    bleu(response, truth, threshold=0.5)  # the pass_rate gate counts verdicts
    rouge(response, truth, rouge_type="rouge1")
'''


@pytest.mark.xdist_matters  # gates on the controller, the job summary once
def test_gates_pass_and_fail_the_run(
    pytester: pytest.Pytester, run_plugin, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(pytester.path / "summary.md"))
    pytester.makepyfile(test_suite=SUITE)
    pytester.makeini(
        """
        [pytest]
        textsim_gates =
            bleu_score.count == 3
            rouge_f1_score.max >= 1
            bleu_score.p10 >= 0.5
        """
    )
    result = run_plugin("--textsim-gate", "bleu_score.pass_rate >= 30%",
                        "--textsim-gate", "similarity.mean >= 3",
                        "--textsim-json=report.json")  # fmt: skip
    result.assert_outcomes(passed=3)  # every test passed, two gates did not
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*- textsim gates -*",
            "PASS bleu_score.count == 3: 3 (3 scores)",
            "PASS rouge_f1_score.max >= 1: 1 (max of 3 scores)",
            "FAIL bleu_score.p10 >= 0.5: 0.1103 (p10 of 3 scores)",
            "PASS bleu_score.pass_rate >= 30%: 0.3333 (1 of 3 passed)",
            "FAIL similarity.mean >= 3: no value (no similarity scores were recorded; "
            "recorded metrics: bleu_score, rouge_f1_score, rouge_precision, rouge_recall)",
            "*- textsim failed the run -*",
            "FAILED: gate failed: bleu_score.p10 >= 0.5: 0.1103 (p10 of 3 scores)",
            "FAILED: gate failed: similarity.mean >= 3: no value *",
        ]
    )
    assert result.stdout.str().count("- textsim gates -") == 1
    # The failed gates also reach the JSON report and the CI job summary, once.
    failures = json.loads((pytester.path / "report.json").read_text())["failures"]
    assert [f.split(":")[0] for f in failures] == ["gate failed", "gate failed"]
    summary = (pytester.path / "summary.md").read_text()
    assert summary.count("**Run failed:** gate failed: bleu_score.p10 >= 0.5") == 1
    assert summary.count("**Run failed:**") == 2


def test_passing_gates_keep_exit_status_zero(pytester: pytest.Pytester, run_plugin) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = run_plugin("--textsim-gate", "bleu_score.max >= 0.99")
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["PASS bleu_score.max >= 0.99: 1 (max of 3 scores)"])


@pytest.mark.xdist_matters  # texts sent to the controller
def test_corpus_gate_prints_signature_and_keeps_texts_out_of_json(
    pytester: pytest.Pytester, run_plugin
) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = run_plugin(
        "--textsim-gate", "sacrebleu.corpus_bleu.score >= 30",
        "--textsim-gate", "sacrebleu.corpus_chrf.score >= 90",
        "--textsim-json=out.json",
    )  # fmt: skip
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "PASS sacrebleu.corpus_bleu.score >= 30: 49.0679 (3 pairs) "
            "[[]nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:*[]]",
            "FAIL sacrebleu.corpus_chrf.score >= 90: 67.0132 (3 pairs) "
            "[[]nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:*[]]",
        ]
    )
    # The texts were kept in memory for the corpus, not written to the JSON file.
    text = (pytester.path / "out.json").read_text(encoding="utf-8")
    assert json.loads(text)["scores"] and "The cat sat on the mat." not in text


def test_corpus_gate_texts_in_json_when_asked(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest_inprocess(
        "--textsim-gate", "sacrebleu.corpus_ter.score <= 60", "--textsim-json=out.json",
        "--textsim-json-texts",
    )  # fmt: skip
    result.stdout.fnmatch_lines(["PASS sacrebleu.corpus_ter.score <= 60: * (3 pairs) [[]nrefs:1|*"])
    document = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    assert all(s["texts"]["ground_truth"] for s in document["scores"])


@pytest.mark.parametrize(
    ("ini", "args", "message"),
    [
        ("textsim_gates = bleu_score.avg >= 0.3", [],
         "ERROR: pytest-textsim: invalid gate 'bleu_score.avg >= 0.3' (textsim_gates in "
         "tox.ini): unknown aggregate 'avg'; use one of mean, min, max, median, pNN*"),
        ("", ["--textsim-gate", "bleu_score.mean >= lots"],
         "ERROR: pytest-textsim: invalid gate 'bleu_score.mean >= lots' (--textsim-gate): "
         "expected METRIC.AGGREGATE OP NUMBER, e.g. *"),
        ("textsim_fail_on_regression = maybe", [],
         "ERROR: pytest-textsim: textsim_fail_on_regression in tox.ini: expected true or false*"),
    ],
)  # fmt: skip
def test_bad_gate_settings_are_usage_errors(
    pytester: pytest.Pytester, ini: str, args: list[str], message: str
) -> None:
    pytester.makefile(".ini", tox=f"[pytest]\n{ini}\n")
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_collect_only_checks_no_gates_and_writes_no_baseline(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest_inprocess(
        "--co", "--textsim-gate", "bleu_score.mean >= 0.9", "--textsim-save-baseline=b.json"
    )
    assert result.ret == pytest.ExitCode.OK
    assert "textsim gates" not in result.stdout.str()
    assert not (pytester.path / "b.json").exists()


PARTS = '''
def test_bleu(bleu):
    bleu("The cat sat on the mat.", "The cat sat on the mat.")

def test_meteor(meteor):
    meteor("A dog ran in the park.", "The cat sat on the mat.")
'''


@pytest.mark.xdist_matters  # deselection from workeroutput
def test_a_partial_run_checks_only_the_gates_asked_for(
    pytester: pytest.Pytester, run_plugin, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An ini gate holds for the whole dataset: a run of part of the suite passes or
    # fails on its tests, whatever its subset's mean, rate or count is. A gate given on
    # the command line is always checked, and says the run was partial.
    monkeypatch.delenv("CI", raising=False)  # CI=true checks the ini's gates too
    pytester.makepyfile(test_parts=PARTS)
    pytester.makeini(
        """
        [pytest]
        textsim_gates =
            meteor_score.mean >= 0.9
            bleu_score.min >= 0.5
            sacrebleu.corpus_bleu[test=*test_meteor].score >= 1
        """
    )
    result = run_plugin("test_parts.py::test_bleu", "--textsim-gate", "bleu_score.mean < 0.5")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*- textsim gates -*",
            "3 gates not checked: partial run (only test_parts.py::test_bleu given)",
            "FAIL bleu_score.mean < 0.5: 1 (mean of 1 score) "
            "(partial run: only test_parts.py::test_bleu given)",
        ]
    )
    assert "SKIP" not in result.stdout.str() and "PASS " not in result.stdout.str()
    quiet = run_plugin("-k", "bleu", "--textsim-report=none")
    assert quiet.ret == pytest.ExitCode.OK  # count gates count the whole suite too
    assert "gates not checked" not in quiet.stdout.str()
    deselected = run_plugin("-k", "bleu")
    deselected.stdout.fnmatch_lines(
        ["3 gates not checked: partial run (-k bleu: 1 test deselected)"]
    )

    # --textsim-gates-on-partial checks them anyway; a gate nothing fed is not checked.
    checked = run_plugin("-k", "bleu", "--textsim-gates-on-partial")
    checked.assert_outcomes(passed=1)
    assert checked.ret == pytest.ExitCode.OK
    checked.stdout.fnmatch_lines(
        [
            "SKIP meteor_score.mean >= 0.9: not checked (no meteor_score scores were recorded; "
            "recorded metrics: bleu_score; partial run (-k bleu: 1 test deselected))",
            "PASS bleu_score.min >= 0.5: 1 (min of 1 score) "
            "(partial run: -k bleu: 1 test deselected)",
            "SKIP sacrebleu.corpus_bleu*: not checked (no response/ground_truth pairs *",
        ]
    )

    # The whole suite: every gate is checked, and one with nothing to check fails
    # (a typo, or scores that are no longer recorded).
    whole = run_plugin("--textsim-gate", "similarity.mean >= 3")
    whole.assert_outcomes(passed=2)
    assert whole.ret == pytest.ExitCode.TESTS_FAILED
    whole.stdout.fnmatch_lines(
        [
            "FAIL meteor_score.mean >= 0.9: *",
            "PASS bleu_score.min >= 0.5: *",
            "*",
            "FAIL similarity.mean >= 3: no value (no similarity scores *",
        ]
    )


@ONE_WAY
def test_ci_checks_the_ini_gates_of_a_partial_run(
    pytester: pytest.Pytester, run_plugin, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A CI job that deselects one test keeps its quality gates.
    pytester.makepyfile(test_parts=PARTS)
    pytester.makeini(
        "[pytest]\ntextsim_gates =\n    meteor_score.mean >= 0.9\n    bleu_score.min >= 0.5\n"
    )
    monkeypatch.setenv("CI", "true")
    ci = run_plugin("-k", "meteor")
    assert ci.ret == pytest.ExitCode.TESTS_FAILED
    ci.stdout.fnmatch_lines(
        [
            "FAIL meteor_score.mean >= 0.9: 0.1* (mean of 1 score) "
            "(partial run: -k meteor: 1 test deselected)",
            "SKIP bleu_score.min >= 0.5: not checked (no bleu_score scores *; "
            "partial run (-k meteor: 1 test deselected))",
        ]
    )
    # The setting, where it is set, wins over CI; a false CI checks nothing.
    off = run_plugin("-k", "meteor", "-o", "textsim_gates_on_partial=false")
    monkeypatch.setenv("CI", "0")
    local = run_plugin("-k", "meteor")
    for result in (off, local):
        assert result.ret == pytest.ExitCode.OK
        result.stdout.fnmatch_lines(
            ["2 gates not checked: partial run (-k meteor: 1 test deselected)"]
        )


@ONE_WAY
def test_gates_name_metrics_as_fixtures_evaluators_and_score_keys(
    pytester: pytest.Pytester, run_plugin
) -> None:
    pytester.makepyfile(
        test_names="""
        def test_one(meteor, rouge, f1_score):
            meteor("The cat sat on the mat.", "The cat sat on the mat.")
            rouge("The cat sat on the mat.", "The cat sat on the mat.", rouge_type="rouge1")
            f1_score("The cat sat on the mat.", "The cat sat on the mat.")
        """
    )
    gates = ["meteor.mean >= 0.9", "meteor_score.mean >= 0.9", "rouge[rouge1].mean >= 0.9",
             "f1.mean >= 0.9", "rouge[rougeL].count >= 1"]  # fmt: skip
    result = run_plugin(*(f"--textsim-gate={g}" for g in gates))
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # only the rougeL gate fails
    result.stdout.fnmatch_lines(
        [
            "PASS meteor.mean >= 0.9: 0.9* (mean of 1 score)",
            "PASS meteor_score.mean >= 0.9: 0.9* (mean of 1 score)",
            "PASS rouge[[]rouge1[]].mean >= 0.9: 1 (mean of 1 score)",
            "PASS f1.mean >= 0.9: 1 (mean of 1 score)",
            "FAIL rouge[[]rougeL[]].count >= 1: 0 (0 scores)",
        ]
    )


@ONE_WAY
def test_an_unknown_metric_in_a_gate_gets_a_did_you_mean(
    pytester: pytest.Pytester, run_plugin
) -> None:
    pytester.makepyfile(test_parts=PARTS)
    gate = "--textsim-gate=bleu_scor.mean >= 0.1"
    whole = run_plugin(gate)
    assert whole.ret == pytest.ExitCode.TESTS_FAILED
    whole.stdout.fnmatch_lines(
        [
            "FAIL bleu_scor.mean >= 0.1: no value (no bleu_scor scores were recorded; unknown "
            "metric 'bleu_scor' (did you mean 'bleu_score'?); recorded metrics: bleu_score, "
            "meteor_score)",
        ]
    )
    # A partial run checks the command line's gate; what it could not feed is skipped.
    partial = run_plugin(gate, "-k", "meteor")
    assert partial.ret == pytest.ExitCode.OK
    partial.stdout.fnmatch_lines(
        [
            "SKIP bleu_scor.mean >= 0.1: not checked (no bleu_scor scores were recorded; unknown "
            "metric 'bleu_scor' (did you mean 'bleu_score'?); recorded metrics: meteor_score; "
            "partial run (-k meteor: 1 test deselected))",
        ]
    )


SURVIVORS = '''
import json
import pytest
from pytest_textsim import assert_bleu, assert_meteor

TRUTH = "Refunds are accepted within thirty days of purchase with a receipt."
ANSWERS = json.load(open("answers.json"))

@pytest.mark.parametrize("case", range(15))
def test_answer(case):
    assert_bleu(ANSWERS[case], TRUTH, threshold=0.3)  # a degraded answer stops here
    assert_meteor(ANSWERS[case], TRUTH, threshold=0.3)
'''


@ONE_WAY  # failed tests reach the controller in reports, as SeenTests.ran's do
def test_a_gate_never_passes_on_the_cases_that_survived(
    pytester: pytest.Pytester, run_plugin
) -> None:
    # 5 of 15 answers degrade and fail at assert_bleu, so they never record METEOR.
    # The 10 that survive pass the gate; the gate must still fail, and the baseline
    # must count the 5 METEOR scores as not scored, a regression, never vanished.
    truth = "Refunds are accepted within thirty days of purchase with a receipt."
    answers = [truth] * 15
    pytester.makepyfile(test_rag=SURVIVORS)
    pytester.makeini("[pytest]\ntextsim_gates = meteor_score.mean >= 0.85\n")
    (pytester.path / "answers.json").write_text(json.dumps(answers))
    saved = run_plugin("--textsim-save-baseline=base.json")
    assert saved.ret == pytest.ExitCode.OK
    for case in (2, 5, 8, 11, 14):
        answers[case] = "I am sorry, I cannot help with that."
    (pytester.path / "answers.json").write_text(json.dumps(answers))
    result = run_plugin("--textsim-compare=base.json", "--textsim-fail-on-regression",
                        "--textsim-json=report.json")  # fmt: skip
    result.assert_outcomes(passed=10, failed=5)
    result.stdout.fnmatch_lines(
        [
            "FAIL meteor_score.mean >= 0.85: 0.9997 over 10 of 15 cases (mean of 10 scores, "
            "95% CI *); 5 not scored (their test failed before meteor_score)",
            "*- textsim regressions -*",
            "*",
            "not scored (test failed), in the baseline but their test failed first "
            "(5 tests, 5 scores):",
            "  test_rag.py::test_answer[11] (meteor_score)",
            "*",
            "scores: 5 regressed, 0 improved, 20 unchanged, 0 new, 0 vanished, "
            "5 not scored (test failed)",
            "*- textsim failed the run -*",
            "FAILED: gate failed: meteor_score.mean >= 0.85: 0.9997 over 10 of 15 cases *",
            "FAILED: 5 scores regressed, 5 scores not scored (test failed) against base.json "
            "(--textsim-fail-on-regression)",
        ]
    )
    document = json.loads((pytester.path / "report.json").read_text())
    gate = document["gates"][0]
    assert (gate["passed"], gate["not_scored"], gate["cases"]) == (False, 5, 15)
    assert gate["not_scored_detail"] == (
        "5 of 15 cases not scored (their test failed before meteor_score)"
    )
    assert document["baseline"]["counts"]["not scored"] == 5
    assert document["baseline"]["counts"]["vanished"] == 0
