"""A misspelt setting or keyword is traced to the typo, end to end (no xdist, -n 0)."""

from __future__ import annotations

import pytest

SUITE = """
def test_bleu(bleu):
    bleu("the cat sat", "the cat sat", threshold=0.5)
"""


def test_unknown_ini_key_is_a_usage_error_with_did_you_mean(
    pytester: pytest.Pytester, run_plugin
) -> None:
    pytester.makepyfile(test_it=SUITE)
    pytester.makefile(".ini", pytest="[pytest]\ntextsim_judge_modle = llama3.1\n")
    result = run_plugin()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*pytest-textsim: textsim_judge_modle: unknown setting (in pytest.ini); did you "
            "mean textsim_judge_model?"
        ]
    )
    assert "passed" not in result.stdout.str()  # before any test runs


def test_unknown_override_names_the_command_line(pytester: pytest.Pytester, run_plugin) -> None:
    pytester.makepyfile(test_it=SUITE)
    result = run_plugin("-o", "textsim_treshold_bleu=0.3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*pytest-textsim: textsim_treshold_bleu: unknown setting (from -o on the command "
            "line); did you mean textsim_threshold_bleu?"
        ]
    )


def test_other_ini_keys_are_left_to_pytest(pytester: pytest.Pytester, run_plugin) -> None:
    pytester.makepyfile(test_it=SUITE)
    pytester.makefile(".ini", pytest="[pytest]\ntextsim_threshold_bleu = 0.3\nsome_other = 1\n")
    run_plugin().assert_outcomes(passed=1)


def test_unknown_environment_variable_is_a_warning_line(
    pytester: pytest.Pytester, run_plugin, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_it=SUITE)
    monkeypatch.setenv("TEXTSIM_THRESHOLD_BLUE", "0.3")
    result = run_plugin()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*- textsim settings -*",
            "warning: TEXTSIM_THRESHOLD_BLUE in the environment is no pytest-textsim setting; "
            "it is ignored; did you mean TEXTSIM_THRESHOLD_BLEU?",
        ]
    )


def test_unknown_keywords_in_fixtures_and_helpers_are_named(
    pytester: pytest.Pytester, run_plugin
) -> None:
    pytester.makepyfile(
        test_it="""
        from pytest_textsim import assert_rouge

        R, G = "the cat sat", "the cat sat down"

        def test_fixture(bleu):
            bleu(prediction=R, reference=G)

        def test_helper():
            assert_rouge(R, G, rouge_typ="rouge1")
        """
    )
    result = run_plugin()
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines_random(
        [
            "E * TypeError: bleu() got unexpected keyword arguments 'prediction', 'reference'; "
            "it takes the texts response, ground_truth and the keywords threshold",
            "E * TypeError: assert_rouge() got unexpected keyword argument 'rouge_typ' (did you "
            "mean 'rouge_type'?); it takes the texts response, ground_truth and the keywords "
            "threshold, rouge_type",
        ]
    )
    assert "missing required argument" not in result.stdout.str()
