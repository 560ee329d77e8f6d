"""The plugin end to end with pytester: no xdist, -n 0; -n 2 (and -n 4) where xdist matters."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import Counter

import pytest
import xdist_forks

SUITE = """
import pytest
from pytest_textsim import assert_bleu, assert_f1, assert_meteor, assert_rouge

WIKI = "According to wikipedia, Marie Curie was not born in Paris but in Warsaw."
TRUTH = "Marie Curie was born in Warsaw."

def test_fixtures(bleu, rouge, gleu, meteor, f1_score):
    assert bleu("The cat sat on the mat.", "The cat sat on the mat.")["bleu_score"] == 1.0
    out = rouge("the cat sat", "the cat sat down", rouge_type="rouge1")
    assert out["rouge_precision"] == 1.0 and out["rouge_recall"] == 0.75
    assert gleu(response="a b c d", ground_truth="a b c d")["gleu_score"] == 1.0
    assert meteor("The cat sat.", "The cat sat.")["meteor_result"] == "pass"
    assert f1_score("Paris", "Paris")["f1_score"] == 1.0

def test_helpers_pass():
    assert_f1("The largest city is Paris.", "Paris is the largest city.")
    assert_rouge("the cat sat", "the cat sat down", score="precision", threshold=0.9)
    out = assert_meteor("The cat sat on the mat.", "The cat sat on the mat.", threshold=0.9)
    assert out["meteor_score"] > 0.9

def test_bleu_fails():
    assert_bleu(WIKI, TRUTH, threshold=0.3)

def test_rouge_recall_fails():
    assert_rouge("the cat", "the cat sat on the mat", score="recall", rouge_type="rouge1")

@pytest.mark.parametrize("n", range(4))
def test_many(n, bleu):
    bleu("one two three four five", "one two three four five" if n % 2 else "nothing alike")
"""


# This test also runs with -n 4: more workers than CPUs here, so workers finish
# in any order and each still reports every score exactly once.
@pytest.mark.parametrize(
    "plugin_args",
    [["-p", "no:xdist"], ["-n", "0"], ["-n", "2"], ["-n", "4"]],
    ids=["no-xdist", "n0", "n2", "n4"],
)
def test_fixtures_helpers_report_json_and_junit(pytester: pytest.Pytester, run_plugin) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = run_plugin("--textsim-json=out/scores.json", "--junitxml=junit.xml")
    result.assert_outcomes(passed=6, failed=2)
    result.stdout.fnmatch_lines(
        [
            "E *AssertionError: BLEU 0.155 < threshold 0.300 (from assert_bleu(threshold=...))",
            'E *response: "According to wikipedia, Marie Curie was not born in Paris but in '
            'Warsaw."',
            'E *ground_truth: "Marie Curie was born in Warsaw."',
            "E *BLEU matched 1-grams 7/15, 2-grams 5/14, 3-grams 2/13, 4-grams 0/12; "
            "brevity penalty 1.000",
            "E *AssertionError: ROUGE (rouge1) recall 0.333 < threshold 0.500 (default; set "
            "textsim_threshold_rouge or threshold=)",
            'E *response: "the cat"',
            'E *ground_truth: "the cat sat on the mat"',
            'E *missing from the response: "sat", "on", "the", "mat"',
            "E *ROUGE-1 matched 2/6 reference 1-grams (recall 0.333), 2/2 response 1-grams "
            "(precision 1.000)",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*- textsim scores -*",
            "test * metric * score * threshold * result * outcome",
            # Fixture calls with no threshold from any source: no verdict, the test decides.
            "test_suite.py::test_fixtures * bleu_score * 1.000 * - * - * passed",
            "test_suite.py::test_fixtures * rouge_recall (rouge1) * 0.750 * - * - * passed",
            "test_suite.py::test_helpers_pass * rouge_precision (rougeL) * 1.000 * 0.900 * pass "
            "* passed",
            "test_suite.py::test_bleu_fails * bleu_score * 0.155 * 0.300 * FAIL * failed",
            "test_suite.py::test_rouge_recall_fails * rouge_recall (rouge1) * 0.333 * 0.500 * FAIL "
            "* failed",
            "test_suite.py::test_many[[]0[]] * bleu_score * 0.000 * - * - * passed",
            "test_suite.py::test_many[[]3[]] * bleu_score * 1.000 * - * - * passed",
            "",
            "metric * count * mean * min * max * pass rate",
            "bleu_score * 6 * 0.526 * 0.000 * 1.000 * 0% (0/1)",
        ]
    )
    # The report is printed once, by the controller, after the test results.
    assert result.stdout.str().count("textsim scores") == 1
    assert result.stdout.str().index("FAILURES") < result.stdout.str().index("textsim scores")
    # A helper records only the score it checks: ROUGE precision of the
    # failing recall check is not in the report.
    assert "test_rouge_recall_fails * rouge_precision" not in result.stdout.str()

    # The JSON file and the JUnit properties have every score exactly once.
    document = json.loads((pytester.path / "out" / "scores.json").read_text())
    header = document["header"]
    assert header["package"] == "pytest-textsim"
    assert header["versions"]["nltk"] and header["versions"]["rouge-score"]
    assert "sacrebleu" in header["versions"]
    assert {"evaluator": "rouge", "params": {"rouge_type": "rouge1"}, "scores": 4} in header[
        "evaluators"
    ]
    assert header["texts"] is False
    scores = document["scores"]
    per_test = Counter(s["test_id"].split("::")[1] for s in scores)
    assert per_test == {
        "test_fixtures": 7,  # bleu, 3 x rouge, gleu, meteor, f1
        "test_helpers_pass": 3,
        "test_bleu_fails": 1,
        "test_rouge_recall_fails": 1,
        "test_many[0]": 1,
        "test_many[1]": 1,
        "test_many[2]": 1,
        "test_many[3]": 1,
    }
    failed = next(s for s in scores if s["test_id"].endswith("test_bleu_fails"))
    assert failed["score"] == pytest.approx(0.1550967560878879)
    assert (failed["threshold"], failed["passed"], failed["test_outcome"]) == (0.3, False, "failed")
    assert failed["lengths"] == {"response": 72, "ground_truth": 31}
    assert "texts" not in failed and failed["duration"] >= 0
    # Collection order, whatever order the workers finished in.
    assert [s["test_id"].split("::")[1] for s in scores][-4:] == [
        f"test_many[{n}]" for n in range(4)
    ]
    assert {s["metric"]: s["count"] for s in document["summary"]}["bleu_score"] == 6

    cases = ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")
    properties = {
        case.get("name"): [(p.get("name"), p.get("value")) for p in case.iter("property")]
        for case in cases
    }
    assert properties["test_bleu_fails"] == [("textsim.bleu_score", "0.1550967560878879")]
    assert len(properties["test_fixtures"]) == 7
    assert sum(len(p) for p in properties.values()) == len(scores)


SESSION_API = """
import pytest
from pytest_textsim.plugin.session import get_session

def pytest_configure(config):
    session = get_session(config)
    if session is None or hasattr(config, "workerinput"):
        return
    def gate(s):
        mean = sum(r.score for r in s.records) / len(s.records)
        if mean < 0.99:
            s.fail(f"mean BLEU {mean:.3f} < 0.99 over {len(s.records)} scores")
    session.on_finish(gate)
    session.add_section("judge", lambda: [f"calls: {session.counters.get('calls', 0):g}"])
    session.add_section("empty", lambda: [])

@pytest.fixture
def count_call(request):
    from pytest_textsim.plugin.scoring import active_session
    active_session().count("calls", 2)
"""


@pytest.mark.xdist_matters  # counters summed over the workers
def test_session_api_sections_counters_and_failing_the_run(
    pytester: pytest.Pytester, run_plugin
) -> None:
    pytester.makeconftest(SESSION_API)
    pytester.makepyfile(
        test_api="""
        import pytest
        from pytest_textsim import record

        @pytest.mark.parametrize("n", range(4))
        def test_scores(n, bleu, count_call):
            bleu("a b c d e", "a b c d e" if n else "a b c d f")

        def test_record_plain_dict():
            out = {"custom_score": 0.4, "custom_result": "fail", "custom_threshold": 0.5}
            assert record("custom", out, inputs={"response": "abc"})[0].nodeid.endswith(
                "test_record_plain_dict")
        """
    )
    result = run_plugin("-v")
    result.assert_outcomes(passed=5)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # every test passed, the gate did not
    result.stdout.fnmatch_lines(
        [
            "*- judge -*",
            "calls: 8",  # 4 tests x 2, summed over the workers
            "*- textsim failed the run -*",
            "FAILED: mean BLEU * < 0.99 over 5 scores",
        ]
    )
    result.stdout.fnmatch_lines(
        ["*test_record_plain_dict * custom_score * 0.400 * 0.500 * below * passed"]
    )
    assert "- empty -" not in result.stdout.str()
    assert result.stdout.str().count("- judge -") == 1


def test_marker_overrides_and_strict_validation(pytester: pytest.Pytester, run_plugin) -> None:
    pytester.makeini("[pytest]\ntextsim_threshold_bleu = 0.9\n")
    pytester.makepyfile(
        test_marker="""
        import pytest
        from pytest_textsim import assert_bleu, assert_rouge

        WIKI = "According to wikipedia, Marie Curie was not born in Paris but in Warsaw."
        TRUTH = "Marie Curie was born in Warsaw."

        def test_ini_threshold():
            assert_bleu(WIKI, TRUTH)

        @pytest.mark.textsim(threshold=0.1)
        def test_marker_threshold():
            assert_bleu(WIKI, TRUTH)

        @pytest.mark.textsim(threshold=0.9, threshold_bleu=0.15)
        def test_marker_metric_threshold_wins():
            assert_bleu(WIKI, TRUTH)

        @pytest.mark.textsim(threshold=0.1)
        def test_call_argument_wins():
            assert_bleu(WIKI, TRUTH, threshold=0.2)

        @pytest.mark.textsim(rouge_type="rouge1")
        class TestClass:
            @pytest.mark.textsim(threshold=0.6)
            def test_class_and_method_markers(self, rouge):
                out = rouge("the cat", "the cat sat")
                assert out["rouge_recall_threshold"] == 0.6 and out["rouge_recall"] == 2 / 3

        @pytest.mark.textsim(treshold=0.5)
        def test_unknown_key():
            pass

        @pytest.mark.textsim(rouge_type="rouge10")
        def test_bad_value():
            pass

        @pytest.mark.textsim(threshold=2)
        def test_out_of_range(bleu):
            bleu("a", "a")

        @pytest.mark.textsim(threshold_rouge=1.5)
        def test_metric_threshold_out_of_range():
            pass
        """
    )
    result = run_plugin()
    result.assert_outcomes(passed=3, failed=3, errors=3)
    result.stdout.fnmatch_lines_random(
        [
            "*AssertionError: BLEU 0.155 < threshold 0.900 (from textsim_threshold_bleu in *)",
            "*AssertionError: BLEU 0.155 < threshold 0.200 (from assert_bleu(threshold=...))",
            "@pytest.mark.textsim on test_marker.py::test_unknown_key: "
            "unknown option 'treshold' (did you mean 'threshold'?); valid: allow, "
            "alpha, asian_support, auto_reweigh, beta, *, threshold, "
            "threshold_answer_correctness, threshold_bleu, *",
            "@pytest.mark.textsim on test_marker.py::test_bad_value: "
            "option 'rouge_type': expected one of rouge1, *, got 'rouge10'",
            "@pytest.mark.textsim on test_marker.py::test_out_of_range: threshold: "
            "a BLEU threshold must be from 0 to 1, got 2",
        ]
    )
    result.stdout.fnmatch_lines(
        ["*test_marker_metric_threshold_wins * 0.155 * 0.150 * pass * passed"]
    )
    result.stdout.fnmatch_lines(
        [
            "@pytest.mark.textsim on test_marker.py::test_metric_threshold_out_of_range: "
            "threshold_rouge: a ROUGE threshold must be from 0 to 1, got 1.5"
        ]
    )
    assert "ValueError" not in result.stdout.str()


CASES = """\
{"id": "capital", "query": "Largest city in France?", "ground_truth": "Paris is the largest city."}

{"id": "cat", "query": "Where did the cat sit?", "ground_truth": "The cat sat on the mat."}
"""


@pytest.mark.xdist_matters  # every worker collects the same JSONL ids
def test_jsonl_cases_marker_and_bad_lines(pytester: pytest.Pytester, run_plugin) -> None:
    pytester.mkdir("data")
    pytester.path.joinpath("data", "cases.jsonl").write_text(CASES)
    pytester.mkpydir("tests")
    pytester.path.joinpath("tests", "test_cases.py").write_text(
        "import pytest\n"
        "from pytest_textsim import assert_f1, jsonl_cases\n\n"
        "@pytest.mark.parametrize('case', jsonl_cases('../data/cases.jsonl', id_field='id',\n"
        "                                             fields=['query', 'ground_truth']))\n"
        "def test_function_form(case):\n"
        "    assert_f1(case['ground_truth'], case['ground_truth'])\n\n"
        "@pytest.mark.textsim_cases('../data/cases.jsonl')\n"
        "def test_marker_form(case, f1_score):\n"
        "    assert f1_score(case['ground_truth'], case['ground_truth'])['f1_score'] == 1.0\n"
    )
    # A module whose file has bad lines is one collection error listing each of them.
    pytester.path.joinpath("tests", "bad.jsonl").write_text(
        '{"id": "ok", "response": "a"}\nnot json\n\n[1, 2]\n{"id": "no-response"}\n'
    )
    pytester.path.joinpath("tests", "test_bad.py").write_text(
        "import pytest\n"
        "from pytest_textsim import jsonl_cases\n\n"
        "@pytest.mark.parametrize('case', jsonl_cases('bad.jsonl', fields=['response']))\n"
        "def test_case(case):\n"
        "    pass\n"
    )
    result = run_plugin("-rA", "--continue-on-collection-errors", "tests")
    result.assert_outcomes(passed=4, errors=1)
    bad = pytester.path / "tests" / "bad.jsonl"
    result.stdout.fnmatch_lines(
        [
            f"3 bad lines in {bad}:",
            f"{bad}:2: not valid JSON (Expecting value at column 1)",
            f"{bad}:4: expected a JSON object, got an array",
            f"{bad}:5: missing field 'response'",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    result.stdout.fnmatch_lines_random(
        [
            "PASSED tests/test_cases.py::test_function_form[[]capital[]]",
            "PASSED tests/test_cases.py::test_function_form[[]cat[]]",
            "PASSED tests/test_cases.py::test_marker_form[[]line1[]]",
            "PASSED tests/test_cases.py::test_marker_form[[]line3[]]",
        ]
    )


@pytest.mark.xdist_matters  # texts and the job summary from the controller
def test_failed_rows_limit_texts_and_step_summary(
    pytester: pytest.Pytester, run_plugin, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = pytester.path / "step_summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    pytester.makepyfile(test_suite=SUITE)
    result = run_plugin(
        "--textsim-report=failed",
        "--textsim-report-rows=1",
        "--textsim-json=scores.json",
        "--textsim-json-texts",
    )
    result.assert_outcomes(passed=6, failed=2)
    section = result.stdout.str().split("textsim scores")[1]
    # Two failing rows (the fixtures' scores have no verdict), one shown, then a
    # pointer to the JSON file.
    assert section.count("  FAIL    failed\n") == 1
    result.stdout.fnmatch_lines(
        [
            "*- textsim scores -*",
            "test * metric * score * threshold * result * outcome",
            "*FAIL * failed",
            "... 1 more row not shown (all rows are in scores.json)",
            "",
            "metric * count * mean * min * max * pass rate",
        ]
    )
    assert "test_fixtures" not in section
    scores = json.loads((pytester.path / "scores.json").read_text())["scores"]
    assert scores[0]["texts"] == {
        "response": "The cat sat on the mat.",
        "ground_truth": "The cat sat on the mat.",
    }
    text = summary.read_text()
    assert text.startswith("earlier step\n### textsim scores\n")
    assert text.count("### textsim scores") == 1
    assert "| bleu_score | 6 | 0.526 | 0.000 | 1.000 | 0% (0/1) |" in text
    assert "**2 failing scores**" in text
    assert "| `test_suite.py::test_bleu_fails` | bleu_score | 0.155 | 0.300 |" in text


def test_works_when_xdist_is_not_installed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No plugin autoloading and an import hook that hides xdist: as if it were
    # not installed. The plugin is loaded by name, as its entry point would.
    pytester.makepyfile(test_suite=SUITE)
    runner = pytester.makepyfile(
        run_without_xdist="""
        import sys

        class HideXdist:
            def find_spec(self, name, path=None, target=None):
                if name == "xdist" or name.startswith("xdist."):
                    raise ImportError("xdist is not installed")
                return None

        sys.meta_path.insert(0, HideXdist())
        import pytest

        status = pytest.main(["-p", "pytest_textsim.plugin", "-p", "no:cacheprovider",
                              "test_suite.py"])
        print("xdist loaded:", any(name.startswith("xdist") for name in sys.modules))
        sys.exit(status)
        """
    )
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = pytester.run(sys.executable, str(runner))
    result.stdout.fnmatch_lines(["*- textsim scores -*", "bleu_score * 6 * 0.526 *"])
    assert result.ret == 1, result.stderr.str()  # the two failing tests of SUITE
    result.stdout.fnmatch_lines(["xdist loaded: False"])


def test_none_as_a_text_is_named_as_given_not_as_missing() -> None:
    # An app that returned None: the message must not claim the argument is missing.
    from pytest_textsim import assert_f1, assert_similar
    from pytest_textsim.catalog import METRICS
    from pytest_textsim.plugin.arguments import split_arguments
    from pytest_textsim.plugin.fixtures import MetricFixture

    bleu = MetricFixture(METRICS["bleu"])
    with pytest.raises(TypeError, match=r"^bleu\(\): 'response' must be a string, got None$"):
        bleu(None, "Paris.")
    ground_truth_none = (
        r"^assert_f1\(\): 'ground_truth' must be a string or a list of strings, got None$"
    )
    with pytest.raises(TypeError, match=ground_truth_none):
        assert_f1("Paris.", ground_truth=None)
    with pytest.raises(TypeError, match=r"^bleu\(\): 'response' must be a string, got int$"):
        bleu(3, "Paris.")
    with pytest.raises(TypeError, match=r"^bleu\(\) missing required argument: 'ground_truth'$"):
        bleu("Paris.")
    with pytest.raises(TypeError, match=r"^assert_similar\(\): 'ground_truth' must be a string"):
        assert_similar("Paris.", None)
    # An optional text given as None is absent, as in the evaluator classes.
    similarity = METRICS["similarity"]
    assert split_arguments(similarity, "similarity", ("a", "b"), {"query": None}) == (
        {"response": "a", "ground_truth": "b"},
        {},
    )


def test_record_without_a_verdict_records_the_score_or_says_what_it_expects(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_own="""
        import pytest
        from pytest_textsim import record

        def test_plain_number():
            [one] = record("length", {"length": 12, "length_threshold": 10},
                           inputs={"response": "twelve chars"})
            assert (one.score_key, one.score, one.threshold, one.passed) == ("length", 12, 10, None)

        def test_score_key_and_reason():
            [one] = record("tone", {"tone_score": 0.75, "tone_reason": "polite"})
            assert (one.score_key, one.score, one.passed, one.reason) == (
                "tone_score", 0.75, None, "polite")

        def test_nothing_to_record():
            with pytest.raises(ValueError) as info:
                record("x", {"y": 0.8})
            assert str(info.value) == (
                "record('x', ...): nothing to record; expected a score with its verdict "
                "('x_score' or 'x' with 'x_result': 'pass' or 'fail'), or a number under "
                "'x_score' or 'x' to record without a verdict; the output has keys: 'y'")

        def test_not_a_number():
            with pytest.raises(ValueError, match="'x_score' must be a number, got 'high'"):
                record("x", {"x_score": "high"})
            with pytest.raises(ValueError, match="'x' must be a number, got True"):
                record("x", {"x": True})
            with pytest.raises(ValueError, match="'x_result' must be 'pass' or 'fail', got 'PASS'"):
                record("x", {"x": 0.8, "x_result": "PASS"})
        """
    )
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "--textsim-json=scores.json", "--textsim-save-baseline=base.json"
    )
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(
        ["*test_plain_number * length * 12* 10* -*", "*test_score_key_and_reason * tone_score *"]
    )
    scores = json.loads((pytester.path / "scores.json").read_text())["scores"]
    assert [(r["metric"], r["passed"]) for r in scores] == [("length", None), ("tone_score", None)]
    assert "tone_score" in (pytester.path / "base.json").read_text()


def test_judge_thresholds_are_whole_numbers_like_the_evaluators(
    pytester: pytest.Pytester, fake_openai, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SimilarityEvaluator(cfg)(...) says 'similarity_threshold': 3; so must the
    # fixture, the helper and textsim score, whatever source gave the threshold.
    from pytest_textsim.cli import main
    from pytest_textsim.testing.fake_openai import Reply

    fake_openai.responder = lambda request: Reply.score(4, "close")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("TEXTSIM_CACHE", "off")
    pytester.makeini(
        f"[pytest]\ntextsim_judge_model = m\ntextsim_judge_base_url = {fake_openai.base_url}\n"
    )
    pytester.makepyfile(
        test_judge="""
        import pytest
        from pytest_textsim import assert_similar

        def test_default(similarity):
            out = similarity("Paris.", "Paris is the capital.")
            assert repr(out["similarity_threshold"]) == "3"

        @pytest.mark.textsim(threshold=3.5)
        def test_marker_half(similarity):
            assert repr(similarity("Paris.", "Paris.")["similarity_threshold"]) == "3.5"

        def test_helper():
            out = assert_similar("Paris.", "Paris.", threshold=4.0)
            assert repr(out["similarity_threshold"]) == "4"
        """
    )
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=3)

    monkeypatch.chdir(pytester.path)
    (pytester.path / "rows.jsonl").write_text(
        '{"response": "Paris.", "ground_truth": "Paris."}\n', encoding="utf-8"
    )
    judge = ["--judge-model", "m", "--judge-base-url", fake_openai.base_url]
    assert main(["score", "rows.jsonl", "-m", "similarity", *judge, "-o", "a.jsonl"]) == 0
    assert '"similarity_threshold": 3,' in (pytester.path / "a.jsonl").read_text(encoding="utf-8")
    half = ["--threshold", "similarity=3.5", "-o", "b.jsonl"]
    assert main(["score", "rows.jsonl", "-m", "similarity", *judge, *half]) == 0
    assert '"similarity_threshold": 3.5,' in (pytester.path / "b.jsonl").read_text(encoding="utf-8")


def test_missing_nltk_data_fails_the_test_with_its_message_only(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A machine without NLTK data: an empty NLTK_DATA, a HOME without ~/nltk_data,
    # no system WordNet, downloads off. A subprocess, so nothing found earlier counts.
    empty, home = pytester.mkdir("empty"), pytester.mkdir("home")
    monkeypatch.setenv("NLTK_DATA", str(empty))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("TEXTSIM_NLTK_DOWNLOAD", "never")
    for name in ("WNHOME", "WNSEARCHDIR"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(
        test_data="""
        from pytest_textsim import assert_meteor

        def test_fixture(bleu):
            bleu("The cat sat on the mat.", "The cat sat on the mat.")

        def test_helper():
            assert_meteor("The cat sat on the mat.", "The cat sat on the mat.")
        """
    )
    result = xdist_forks.runpytest_subprocess(pytester, "-p", "no:cacheprovider", "-p", "no:xdist")
    result.assert_outcomes(failed=2)  # passing means NLTK data was found system-wide
    result.stdout.fnmatch_lines(
        [
            "*_ test_fixture _*",
            "bleu: NLTK data punkt_tab (tokenizers/punkt_tab) is missing; *",
            "  Not downloaded: downloads are off (nltk_download=never, TEXTSIM_NLTK_DOWNLOAD *",
            f"  Searched NLTK's data path: {empty}, {home}*",
            "Fix it one of these ways:",
            "*_ test_helper _*",
            # METEOR needs Punkt and WordNet: it names the one it looked for first and
            # lists the other as also missing.
            "assert_meteor: NLTK data * is missing; *",
            "  Also missing, for other metrics: *",
        ]
    )
    out = result.stdout.str()
    for frame in ("nltk_data.py", "tokenize.py", "nlp.py", "recording.py", "NltkDataError"):
        assert frame not in out, f"{frame} in the failure report:\n{out}"


def test_an_unwritable_step_summary_is_a_warning_not_a_failure(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The job summary is a convenience copy of the report: a run whose tests
    # passed stays green and says what went wrong.
    blocker = pytester.path / "blocker"
    blocker.write_text("a file where a folder should be")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(blocker / "summary.md"))
    pytester.makepyfile("def test_a(bleu):\n    bleu('The cat sat.', 'The cat sat.')\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            "*- textsim outputs -*",
            f"warning: cannot append to GITHUB_STEP_SUMMARY {blocker / 'summary.md'}: "
            "Not a directory; the job summary lacks the scores",
        ]
    )
