"""Plugin settings: ini files, environment, command line, errors naming the source.

Resolution happens once per run on the controller and on each worker alike,
so these run in-process without xdist; the xdist paths are in test_plugin.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

BLEU_TEST = """
from pytest_textsim import assert_bleu

def test_bleu():
    assert_bleu("According to wikipedia, Marie Curie was not born in Paris but in Warsaw.",
                "Marie Curie was born in Warsaw.")
"""


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist", *args)


@pytest.mark.parametrize(
    ("ini_file", "content"),
    [
        ("pytest.ini", "[pytest]\ntextsim_threshold_bleu = 0.1\n"),
        ("tox.ini", "[pytest]\ntextsim_threshold_bleu = 0.1\n"),
        ("setup.cfg", "[tool:pytest]\ntextsim_threshold_bleu = 0.1\n"),
        ("pyproject.toml", "[tool.pytest.ini_options]\ntextsim_threshold_bleu = 0.1\n"),
    ],
)
def test_default_threshold_from_each_ini_file(
    pytester: pytest.Pytester, ini_file: str, content: str
) -> None:
    pytester.path.joinpath(ini_file).write_text(content)
    pytester.makepyfile(test_it=BLEU_TEST)
    result = _run(pytester)
    result.assert_outcomes(passed=1)  # 0.155 passes 0.1, fails the default 0.5
    result.stdout.fnmatch_lines(["test_it.py::test_bleu * 0.155 * 0.100 * pass *"])


def test_priority_command_line_over_environment_over_ini(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini("[pytest]\ntextsim_threshold_bleu = 0.9\n")
    pytester.makepyfile(test_it=BLEU_TEST)
    _run(pytester).stdout.fnmatch_lines(["*0.155 * 0.900 * FAIL *"])
    monkeypatch.setenv("TEXTSIM_THRESHOLD_BLEU", "0.15")
    _run(pytester).stdout.fnmatch_lines(["*0.155 * 0.150 * pass *"])
    _run(pytester, "--textsim-threshold-bleu=0.2").stdout.fnmatch_lines(["*0.155 * 0.200 * FAIL *"])


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("ini", "*pytest-textsim: textsim_threshold_bleu in tox.ini: expected a number, "
         "got 'high'"),
        ("env", "*pytest-textsim: TEXTSIM_REPORT in the environment: expected one of all, *"),
        ("flag", "*pytest-textsim: --textsim-threshold-rouge on the command line: expected a "
         "number from 0 to 1, got '2'"),
        ("-o", "*pytest-textsim: textsim_threshold_bleu from -o on the command line: expected "
         "a number, got 'high'"),
    ],
)  # fmt: skip
def test_bad_values_are_usage_errors_naming_their_source(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, where: str, expected: str
) -> None:
    pytester.path.joinpath("tox.ini").write_text(
        "[pytest]\n" + ("textsim_threshold_bleu = high\n" if where == "ini" else "")
    )
    if where == "env":
        monkeypatch.setenv("TEXTSIM_REPORT", "everything")
    pytester.makepyfile(test_it=BLEU_TEST)
    args = {"flag": ["--textsim-threshold-rouge=2"], "-o": ["-o", "textsim_threshold_bleu=high"]}
    result = _run(pytester, *args.get(where, []))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([expected])


def test_help_shows_one_group(pytester: pytest.Pytester) -> None:
    result = _run(pytester, "--help")
    result.stdout.fnmatch_lines(
        [
            "pytest-textsim: text similarity and LLM-judge scores:",
            "*--textsim-threshold-bleu=X*",
            "*--textsim-report=all|failed|summary|none*",
            "*--textsim-json=PATH*",
            "*textsim_threshold_bleu (string):*",
        ]
    )


@pytest.mark.parametrize("mode", ["summary", "none"])
def test_report_summary_and_none(pytester: pytest.Pytester, mode: str) -> None:
    pytester.makepyfile(test_it=BLEU_TEST)
    result = _run(pytester, f"--textsim-report={mode}")
    out = result.stdout.str()
    assert "test_it.py::test_bleu " not in out.split("short test summary")[0].split("FAILURES")[0]
    if mode == "summary":
        result.stdout.fnmatch_lines(["*- textsim scores -*", "metric * pass rate", "bleu_score *"])
        assert "test     " not in out
    else:
        assert "textsim scores" not in out


def test_no_scores_no_section(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    assert True\n")
    assert "textsim scores" not in _run(pytester).stdout.str()


def test_json_path_from_ini_is_relative_to_the_ini_file(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini("[pytest]\ntextsim_json = reports/textsim.json\n")
    pytester.makepyfile(test_it=BLEU_TEST)
    monkeypatch.chdir(pytester.mkdir("elsewhere"))
    _run(pytester, str(pytester.path)).assert_outcomes(failed=1)
    assert json.loads((pytester.path / "reports" / "textsim.json").read_text())["scores"]
    assert not (pytester.path / "elsewhere" / "reports").exists()


def test_unwritable_json_path_fails_the_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain(f1_score):\n    f1_score('a', 'a')\n")
    pytester.path.joinpath("blocker").write_text("a file, not a folder")
    result = _run(pytester, "--textsim-json=blocker/out.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["FAILED: cannot write the JSON report *blocker/out.json (--textsim-json on the command "
         "line): *"]
    )  # fmt: skip


def test_plugin_loads_without_xdist_and_helpers_work_outside_pytest() -> None:
    code = textwrap.dedent(
        """
        from pytest_textsim import assert_bleu, record
        out = assert_bleu("The cat sat on the mat.", "The cat sat on the mat.", threshold=0.9)
        assert out["bleu_score"] == 1.0
        assert record("x", {"x_score": 1.0, "x_result": "pass"})[0].nodeid == ""
        try:
            assert_bleu("a b c", "x y z")
        except AssertionError as exc:
            print(exc)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.splitlines() == [
        "BLEU 0.000 < threshold 0.500 (default; set textsim_threshold_bleu or threshold=)",
        'response: "a b c"',
        'ground_truth: "x y z"',
        'missing from the response: "x", "y", "z"',
        "BLEU matched 1-grams 0/3, 2-grams 0/2, 3-grams 0/1, 4-grams 0/0; brevity penalty 1.000",
    ]


def test_unavailable_metric_fails_the_test_with_its_message(pytester: pytest.Pytester) -> None:
    # What a judge fixture does with no judge configured: MetricUnavailable from
    # the factory fails the test with that message and no traceback.
    pytester.makeconftest(
        """
        import pytest
        from pytest_textsim.plugin.assertion import make_helper
        from pytest_textsim.catalog import Metric, MetricUnavailable
        from pytest_textsim.plugin.fixtures import MetricFixture

        def factory(threshold, options, resolver, metric):
            raise MetricUnavailable("no judge configured: set TEXTSIM_JUDGE_MODEL")

        METRIC = Metric("judgy", "judgy", "judgy", "assert_judgy", ("response",),
                        {"judgy": "judgy"}, factory, "threshold_bleu")

        @pytest.fixture
        def judgy():
            return MetricFixture(METRIC)

        @pytest.fixture
        def assert_judgy():
            return make_helper(METRIC)
        """
    )
    pytester.makepyfile(
        """
        def test_fixture(judgy):
            judgy("text")

        def test_helper(assert_judgy):
            assert_judgy("text")
        """
    )
    result = _run(pytester)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*_ test_fixture _*",
            "test_*.py::test_fixture: judgy: no judge configured: set TEXTSIM_JUDGE_MODEL",
            "*_ test_helper _*",
            "test_*.py::test_helper: assert_judgy: no judge configured: set TEXTSIM_JUDGE_MODEL",
        ]
    )
    assert "Traceback" not in result.stdout.str() and "factory" not in result.stdout.str()


def test_failing_rows_are_red_on_a_colour_terminal(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_it=BLEU_TEST + "\ndef test_ok(bleu):\n    bleu('a b c d', 'a b c d')\n"
    )
    lines = _run(pytester, "--color=yes").stdout.lines
    failing = next(line for line in lines if "test_it.py::test_bleu " in line)
    passing = next(line for line in lines if "test_it.py::test_ok " in line)
    assert failing.startswith("\x1b[31m") and "FAIL" in failing
    assert "\x1b[31m" not in passing


def test_json_test_outcome_is_the_tests_whole_outcome(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.fixture
        def scored(f1_score):
            f1_score("a b", "a b")  # recorded during setup

        @pytest.fixture
        def broken_teardown():
            yield
            raise RuntimeError("teardown")

        def test_fails_after_setup_scored(scored):
            assert False

        def test_passes(scored):
            pass

        def test_teardown_fails(f1_score, broken_teardown):
            f1_score("a", "a")

        def test_skipped(scored):
            pytest.skip("not today")
        """
    )
    _run(pytester, "--textsim-json=out.json")
    scores = json.loads((pytester.path / "out.json").read_text())["scores"]
    outcomes = {s["test_id"].split("::")[1]: s["test_outcome"] for s in scores}
    assert outcomes == {
        "test_fails_after_setup_scored": "failed",
        "test_passes": "passed",
        "test_teardown_fails": "failed",
        "test_skipped": "skipped",
    }


def test_bad_call_arguments_point_at_the_call(pytester: pytest.Pytester) -> None:
    # The caller's argument is wrong: the traceback ends at the test's line,
    # not inside pytest_textsim.
    pytester.makepyfile(
        """
        from pytest_textsim import assert_rouge

        def test_threshold():
            assert_rouge("a b", "a b", threshold=1.5)

        def test_option(meteor):
            meteor("a b", "a b", alpha="x")
        """
    )
    result = _run(pytester)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "E * ValueError: assert_rouge(threshold=...): a ROUGE threshold must be from 0 to 1, "
            "got 1.5",
            "test_bad_call_arguments_point_at_the_call.py:4: ValueError",
            "E * ValueError: meteor(): option 'alpha': expected a number, got 'x'",
            "test_bad_call_arguments_point_at_the_call.py:7: ValueError",
        ]
    )
    assert "pytest_textsim" not in result.stdout.str().replace("test_bad_call", "")
