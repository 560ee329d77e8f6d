"""chrF and TER in pytest: fixtures ``chrf``/``ter``, helpers ``assert_chrf``/``assert_ter``.

Expected scores come from sacreBLEU itself (divided by 100), so these tests
check the plugin's plumbing against an independent computation. TER is an
edit rate where lower is better: it passes at or below its threshold.
"""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from sacrebleu.metrics.chrf import CHRF
from sacrebleu.metrics.ter import TER

from pytest_textsim.catalog import METRICS, higher_is_better

WIKI = "According to wikipedia, Marie Curie was not born in Paris but in Warsaw."
TRUTH = "Marie Curie was born in Warsaw."


def _chrf(response: str, reference: str, **options: object) -> float:
    return float(CHRF(**options).sentence_score(response, [reference]).score) / 100  # type: ignore[arg-type]


def _ter(response: str, reference: str, **options: object) -> float:
    return float(TER(**options).sentence_score(response, [reference]).score) / 100  # type: ignore[arg-type]


SUITE = f"""
import pytest
from pytest_textsim import assert_chrf, assert_ter

WIKI = {WIKI!r}
TRUTH = {TRUTH!r}

def test_fixtures(chrf, ter):
    assert chrf(WIKI, TRUTH) == {{
        "chrf_score": pytest.approx({_chrf(WIKI, TRUTH)!r}, abs=1e-12),
        "chrf_result": "pass",
        "chrf_threshold": 0.5,
    }}
    assert ter(response="The cat sat.", ground_truth="The cat sat.") == {{
        "ter_score": 0.0, "ter_result": "pass", "ter_threshold": 0.5,
    }}

def test_chrf_fails():
    assert_chrf(WIKI, TRUTH, threshold=0.8)

def test_ter_fails():
    assert_ter(WIKI, TRUTH)

def test_ter_below_threshold_passes():
    out = assert_ter("The cat sat on the mat.", "The cat sat on a mat.")
    assert out["ter_result"] == "pass"

@pytest.mark.textsim(threshold_ter=1.2, word_order=2)
def test_marker(chrf):
    assert_ter(WIKI, TRUTH)
    chrf(WIKI, TRUTH)
"""


def test_fixtures_helpers_report_json_and_junit(pytester: pytest.Pytester, run_plugin) -> None:
    pytester.makepyfile(test_chrf_ter=SUITE)
    result = run_plugin("--textsim-json=scores.json", "--junitxml=junit.xml")
    result.assert_outcomes(passed=3, failed=2)
    chrf, ter = _chrf(WIKI, TRUTH), _ter(WIKI, TRUTH)
    chrf_pp = _chrf(WIKI, TRUTH, word_order=2)
    result.stdout.fnmatch_lines(
        [
            f"E *AssertionError: chrF {chrf:.3f} < threshold 0.800 "
            "(from assert_chrf(threshold=...))",
            f'E *response: "{WIKI}"',
            f'E *ground_truth: "{TRUTH}"',
        ]
    )
    # Lower is better: the failed comparison reads ">".
    result.stdout.fnmatch_lines(
        [
            f"E *AssertionError: TER {ter:.3f} > threshold 0.500 (default; set "
            "textsim_threshold_ter or threshold=)",
            f'E *response: "{WIKI}"',
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*- textsim scores -*",
            "test * metric * score * threshold * result * outcome",
            f"test_chrf_ter.py::test_fixtures * chrf_score * {chrf:.3f} * - * - * passed",
            "test_chrf_ter.py::test_fixtures * ter_score * 0.000 * - * - * passed",
            "test_chrf_ter.py::test_chrf_fails * chrf_score * 0.659 * 0.800 * FAIL *",
            f"test_chrf_ter.py::test_ter_fails * ter_score * {ter:.3f} * 0.500 * FAIL *",
            "test_chrf_ter.py::test_ter_below_threshold_passes * ter_score * 0.167 * 0.500 "
            "* pass *",
            f"test_chrf_ter.py::test_marker * ter_score * {ter:.3f} * 1.200 * pass *",
            f"test_chrf_ter.py::test_marker * chrf_score * {chrf_pp:.3f} * - * - * passed",
            "",
            "metric * count * mean * min * max * pass rate",
            "chrf_score * 3 * 0.666 * 0.659 * 0.679 * 0% (0/1)",
            "ter_score * 4 * 0.625 * 0.000 * 1.167 * 67% (2/3)",
        ]
    )
    assert result.stdout.str().count("textsim scores") == 1

    scores = json.loads((pytester.path / "scores.json").read_text())["scores"]
    by_test = {(s["test_id"].split("::")[1], s["metric"]): s for s in scores}
    assert len(scores) == len(by_test) == 7  # each score exactly once, from any worker
    marker_ter = by_test[("test_marker", "ter_score")]
    assert (marker_ter["threshold"], marker_ter["passed"]) == (1.2, True)
    assert marker_ter["score"] == pytest.approx(ter, abs=1e-12)
    assert marker_ter["params"] == {
        "normalized": False, "no_punct": False, "asian_support": False, "case_sensitive": False,
    }  # fmt: skip
    marker_chrf = by_test[("test_marker", "chrf_score")]
    assert marker_chrf["params"] == {
        "char_order": 6, "word_order": 2, "beta": 2, "lowercase": False, "whitespace": False,
    }  # fmt: skip
    assert marker_chrf["score"] == pytest.approx(chrf_pp, abs=1e-12)
    failed = by_test[("test_ter_fails", "ter_score")]
    assert (failed["evaluator"], failed["passed"], failed["test_outcome"]) == (
        "ter",
        False,
        "failed",
    )
    assert failed["lengths"] == {"response": len(WIKI), "ground_truth": len(TRUTH)}

    junit = ET.parse(pytester.path / "junit.xml").getroot()
    properties = [
        (case.get("name"), prop.get("name"), prop.get("value"))
        for case in junit.iter("testcase")
        for prop in case.iter("property")
    ]
    assert ("test_ter_fails", "textsim.ter_score", str(ter)) in properties
    assert sum(1 for _, name, _ in properties if name.startswith("textsim.")) == 7


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist", *args)


def test_options_and_default_thresholds_from_each_source(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini("[pytest]\ntextsim_threshold_chrf = 0.7\ntextsim_threshold_ter = 1.5\n")
    pytester.makepyfile(
        test_chrf_ter_options=f"""
        from pytest_textsim import assert_chrf, assert_ter

        def test_chrf_options(chrf):
            assert chrf("THE CAT SAT", "the cat sat")["chrf_score"] == 0.0
            assert chrf("THE CAT SAT", "the cat sat", lowercase=True)["chrf_score"] == 1.0

        def test_ter_options(ter):
            assert ter("The Cat sat.", "the cat sat.")["ter_score"] == 0.0
            out = ter("The Cat sat.", "the cat sat.", case_sensitive=True)
            assert out["ter_score"] == {_ter("The Cat sat.", "the cat sat.", case_sensitive=True)!r}
            assert ter("the cat sat!", "the cat sat", no_punct="yes")["ter_score"] == 0.0

        def test_defaults():
            assert_chrf({WIKI!r}, {TRUTH!r})
            assert_ter({WIKI!r}, {TRUTH!r})

        def test_edit_rate_above_one():
            assert_ter("a b c d", "x y", threshold=1)
        """
    )
    result = _run(pytester)
    result.assert_outcomes(passed=2, failed=2)
    # chrF 0.659 misses the ini's 0.7; TER 1.167 passes the ini's 1.5.
    result.stdout.fnmatch_lines(
        [
            "test_chrf_ter_options.py::test_defaults * chrf_score * 0.659 * 0.700 * FAIL *",
            "test_chrf_ter_options.py::test_edit_rate_above_one * ter_score * 2.000 * 1.000 "
            "* FAIL *",
        ]
    )
    result.stdout.fnmatch_lines(
        ["*AssertionError: TER 2.000 > threshold 1.000 (from assert_ter(threshold=...))"]
    )
    assert "test_defaults * ter_score" not in result.stdout.str()  # the helper stopped at chrF

    # Environment over ini, command line over environment.
    monkeypatch.setenv("TEXTSIM_THRESHOLD_CHRF", "0.6")
    monkeypatch.setenv("TEXTSIM_THRESHOLD_TER", "1.1")
    result = _run(pytester, "-k", "defaults")
    result.stdout.fnmatch_lines(
        [
            "test_chrf_ter_options.py::test_defaults * chrf_score * 0.659 * 0.600 * pass *",
            "test_chrf_ter_options.py::test_defaults * ter_score * 1.167 * 1.100 * FAIL *",
        ]
    )
    result = _run(pytester, "-k", "defaults", "--textsim-threshold-ter=1.2")
    result.stdout.fnmatch_lines(
        ["test_chrf_ter_options.py::test_defaults * ter_score * 1.167 * 1.200 * pass *"]
    )
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("args", "ini", "expected"),
    [
        (["--textsim-threshold-ter=40"], "",
         "*pytest-textsim: --textsim-threshold-ter on the command line: expected a number from "
         "0 to 5, got '40' (scores here are sacreBLEU's divided by 100: its TER 45.0 is 0.45)"),
        ([], "textsim_threshold_chrf = 1.5\n",
         "*pytest-textsim: textsim_threshold_chrf in tox.ini: expected a number from 0 to 1, "
         "got '1.5' (scores here are sacreBLEU's divided by 100: its chrF 45.0 is 0.45)"),
    ],
)  # fmt: skip
def test_bad_default_thresholds_are_usage_errors(
    pytester: pytest.Pytester, args: list[str], ini: str, expected: str
) -> None:
    pytester.makeini("[pytest]\n" + ini)
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = _run(pytester, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([expected])


def test_markers_and_bad_values_name_the_test(pytester: pytest.Pytester) -> None:
    source = pytester.makepyfile(
        test_chrf_ter_marks=f"""
        import pytest
        from pytest_textsim import assert_chrf, assert_meteor, assert_ter

        WIKI = {WIKI!r}
        TRUTH = {TRUTH!r}

        @pytest.mark.textsim(threshold=1.2)
        def test_plain_threshold_allows_ter_above_one(ter):
            assert ter(WIKI, TRUTH)["ter_threshold"] == 1.2

        @pytest.mark.textsim(beta=0.5)
        def test_meteor_weight_beta(meteor):
            assert meteor(WIKI, TRUTH)["meteor_result"] in ("pass", "fail")

        @pytest.mark.textsim(beta=0.5)
        def test_chrf_needs_whole_beta(chrf):
            chrf(WIKI, TRUTH)

        @pytest.mark.textsim(beta="x")
        def test_beta_fits_no_metric():
            pass

        @pytest.mark.textsim(word_order=-1)
        def test_negative_word_order():
            pass

        @pytest.mark.textsim(case_sensitive="maybe")
        def test_not_a_bool():
            pass

        @pytest.mark.textsim(threshold_ter=40)
        def test_ter_threshold_on_sacrebleu_scale():
            pass

        @pytest.mark.textsim(threshold=1.2)
        def test_plain_threshold_out_of_range_for_chrf():
            assert_chrf(WIKI, TRUTH)

        def test_bad_call_option():
            assert_chrf(WIKI, TRUTH, char_order="six")

        def test_unknown_call_option(ter):
            ter(WIKI, TRUTH, alpha=0.9)
        """
    )
    result = _run(pytester)
    result.assert_outcomes(passed=2, failed=4, errors=4)
    where = "@pytest.mark.textsim on test_chrf_ter_marks.py::"
    result.stdout.fnmatch_lines_random(
        [
            f"{where}test_chrf_needs_whole_beta (chrF): option 'beta': expected a whole number, "
            "got 0.5",
            f"{where}test_beta_fits_no_metric: option 'beta': expected a number, got 'x' "
            "(METEOR); expected a whole number, got 'x' (chrF)",
            f"{where}test_negative_word_order: option 'word_order': expected a whole number >= 0, "
            "got -1",
            f"{where}test_not_a_bool: option 'case_sensitive': expected true or false, got 'maybe'",
            f"{where}test_ter_threshold_on_sacrebleu_scale: threshold_ter: a TER threshold must "
            "be from 0 to 5, got 40 (scores here are sacreBLEU's divided by 100: its TER 45.0 "
            "is 0.45)",
            f"{where}test_plain_threshold_out_of_range_for_chrf: threshold: a chrF threshold must "
            "be from 0 to 1, got 1.2 (*",
            "E * ValueError: assert_chrf(): option 'char_order': expected a whole number, "
            "got 'six'",
            "E * TypeError: ter() got unexpected keyword argument 'alpha'; it takes the texts "
            "response, ground_truth and the keywords threshold, normalized, no_punct, "
            "asian_support, case_sensitive, max_chars",
        ]
    )
    # The caller's argument is wrong: the traceback ends at the test's line.
    lines = source.read_text().splitlines()
    bad_call = next(n for n, line in enumerate(lines, 1) if 'char_order="six"' in line)
    result.stdout.fnmatch_lines([f"test_chrf_ter_marks.py:{bad_call}: ValueError"])
    assert "pytest_textsim" not in result.stdout.str()


def test_public_names_are_lazy_and_helpers_work_outside_pytest() -> None:
    probe = f"""
import sys
import pytest_textsim
from pytest_textsim import assert_chrf, assert_ter, ChrFScoreEvaluator, TerScoreEvaluator
assert {{"assert_chrf", "assert_ter"}} <= set(pytest_textsim.__all__)
assert not any(m.split(".")[0] == "sacrebleu" for m in sys.modules), "sacrebleu imported early"
assert_chrf({WIKI!r}, {TRUTH!r})
try:
    assert_ter({WIKI!r}, {TRUTH!r})
except AssertionError as exc:
    print(str(exc).splitlines()[0])
"""
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out == (
        f"TER {_ter(WIKI, TRUTH):.3f} > threshold 0.500 (default; set textsim_threshold_ter or "
        "threshold=)\n"
    )


def test_lower_is_better_agrees_with_baselines() -> None:
    # Baselines count a rise as a regression for exactly the metrics that pass
    # at or below their threshold.
    lower = {
        key for m in METRICS.values() if not m.higher_is_better for key in m.score_keys.values()
    }
    assert lower == {"ter_score"}
    assert not higher_is_better("ter_score", "ter")
    assert not higher_is_better("sacrebleu.corpus_ter.score")
    assert higher_is_better("sacrebleu.corpus_bleu.score") and higher_is_better("bleu_score")
    assert METRICS["ter"].passes(0.5, 0.5) and not METRICS["ter"].passes(0.51, 0.5)
    assert METRICS["chrf"].passes(0.5, 0.5) and not METRICS["chrf"].passes(0.49, 0.5)


def test_yes_and_no_from_markers_and_helpers_reach_the_evaluators_as_booleans(
    pytester: pytest.Pytester,
) -> None:
    # The classes take only True/False; markers and helper options keep their
    # yes/no/true/false text, converted before the class sees it.
    pytester.makepyfile(
        test_bools="""
        import pytest
        from pytest_textsim import assert_chrf, assert_ter

        @pytest.mark.textsim(lowercase="yes")
        def test_marker_yes(chrf):
            assert chrf("THE CAT SAT", "the cat sat")["chrf_score"] == 1.0

        @pytest.mark.textsim(lowercase="no")
        def test_marker_no(chrf):
            assert chrf("THE CAT SAT", "the cat sat")["chrf_score"] == 0.0

        def test_helper_text():
            assert_ter("The Cat sat.", "the cat sat.", case_sensitive="false", threshold=0.0)
            assert_chrf("THE CAT SAT", "the cat sat", lowercase="true", threshold=1.0)

        @pytest.mark.textsim(char_order=0, word_order=0)
        def test_nothing_to_count(chrf):
            chrf("the cat sat", "the cat sat")
        """
    )
    result = _run(pytester)
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        ["*test_nothing_to_count: chrf(): char_order and word_order are both 0: chrF would "
         "count no n-grams*"]
    )
