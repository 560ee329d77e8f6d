"""assert_each_* and fixture.each(): many cases in one test, each reported as its own case."""

from __future__ import annotations

import contextvars
import json
import xml.etree.ElementTree as ET

import pytest

CASES = {f"c{i}": (f"the cat sat on mat number {i}", f"the cat sat on mat number {i}")
         for i in range(20)}  # fmt: skip
CASES["c7"] = ("a dog ran far away", "the cat sat on mat number 7")

EACH = f"""
from pytest_textsim import assert_each_bleu

CASES = {CASES!r}

def test_answers():
    assert_each_bleu([r for r, _ in CASES.values()], [t for _, t in CASES.values()],
                     ids=list(CASES))
"""

PARAMETRIZED = f"""
import pytest
from pytest_textsim import assert_bleu

CASES = {CASES!r}

@pytest.mark.parametrize("case", list(CASES))
def test_answers(case):
    assert_bleu(*CASES[case])
"""


def _no_xdist(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist", *args)


def test_each_case_is_a_line_under_v_and_one_failure_leaves_the_others(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_suite=EACH)
    result = _no_xdist(pytester, "-v")
    lines = result.stdout.lines
    for case in CASES:
        verdict = "SUBFAILED" if case == "c7" else "SUBPASSED"
        assert f"test_suite.py::test_answers {verdict}[{case}]" in [
            line.split("  ")[0] for line in lines
        ], case
    result.stdout.fnmatch_lines(["*= 1 failed, 19 subtests passed, 1 subtests failed in *"])
    result.stdout.fnmatch_lines(
        [
            "*_ test_answers [[]c7[]] _*",
            "E   AssertionError: BLEU 0.000 < threshold 0.500 (default; set "
            "textsim_threshold_bleu or threshold=)",
            '    response: "a dog ran far away"',
            '    ground_truth: "the cat sat on mat number 7"',
            '    missing from the response: "the", "cat", "sat", "on", "mat", "number", "7"',
        ]
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # The single helper's message, word for word.
    pytester.makepyfile(
        test_one="""
        from pytest_textsim import assert_bleu
        def test_one():
            assert_bleu("a dog ran far away", "the cat sat on mat number 7")
        """
    )
    single = _no_xdist(pytester, "test_one.py")
    message = [line for line in single.stdout.lines if line.startswith("E ")]
    assert message[0].split("AssertionError: ")[1] in result.stdout.str()


@pytest.mark.xdist_matters  # the cases' records travel from the workers
def test_each_gives_the_rows_of_a_parametrized_test(pytester: pytest.Pytester, run_plugin) -> None:
    """The scores table, JSON, JUnit properties and baseline hold one row per case,
    with the ids, scores and verdicts of the same cases parametrized (xdist too)."""

    def rows(source: str, name: str) -> tuple[list[dict], dict, pytest.RunResult]:
        pytester.makepyfile(test_suite=source)
        result = run_plugin(
            f"--textsim-json={name}.json", f"--junitxml={name}.xml",
            "--textsim-save-baseline-force", f"--textsim-save-baseline={name}-base.json",
        )  # fmt: skip
        scores = json.loads((pytester.path / f"{name}.json").read_text())["scores"]
        for score in scores:
            score.pop("duration")
        base = json.loads((pytester.path / f"{name}-base.json").read_text())
        return scores, base, result

    each, each_base, each_run = rows(EACH, "each")
    param, param_base, _ = rows(PARAMETRIZED, "param")
    assert [s["test_id"] for s in each] == [f"test_suite.py::test_answers[{c}]" for c in CASES]
    assert each == param
    assert each_base["scores"] == param_base["scores"]
    each_run.stdout.fnmatch_lines(
        ["test_suite.py::test_answers[[]c7[]] * bleu_score  0.000      0.500  FAIL    failed"]
    )
    # Every case is counted at default verbosity, and its failure is still shown.
    each_run.stdout.fnmatch_lines(
        ["*_ test_answers [[]c7[]] _*", "SUBFAILED[[]c7[]] test_suite.py::test_answers*"]
    )
    each_run.stdout.fnmatch_lines(["*= 1 failed, *19 subtests passed, 1 subtests failed in *"])
    properties = {
        p.get("name"): p.get("value")
        for p in ET.parse(pytester.path / "each.xml").iter("property")
    }
    assert properties["textsim.bleu_score[c7]"] == "0.0"
    assert properties["textsim.bleu_score[c0]"] == "1.0"
    assert len([n for n in properties if n.startswith("textsim.bleu_score[")]) == 20


def test_without_subtests_one_failure_lists_every_failing_case(pytester: pytest.Pytester) -> None:
    """pytest 7 and 8 without pytest-subtests: no subtests plugin is what -p no:subtests
    gives pytest 9 (the plugin's name is the same)."""
    cases = dict(CASES, c12=("an owl", "the cat sat on mat number 12"))
    pytester.makepyfile(test_suite=EACH.replace(repr(CASES), repr(cases)))
    result = _no_xdist(pytester, "-p", "no:subtests", "-v", "--textsim-json=out.json")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E       AssertionError: assert_each_bleu: 2 cases of 20 failed (BLEU):",
            "E       [[]c7[]] BLEU 0.000 < threshold 0.500 (default; set *",
            'E           response: "a dog ran far away"',
            "*",
            "E       [[]c12[]] BLEU 0.000 < threshold 0.500 (default; set *",
            'E           response: "an owl"',
        ]
    )
    assert "SUBPASSED" not in result.stdout.str()
    scores = json.loads((pytester.path / "out.json").read_text())["scores"]
    assert len(scores) == 20
    failed = [s["test_id"] for s in scores if s["test_outcome"] == "failed"]
    assert failed == ["test_suite.py::test_answers[c7]", "test_suite.py::test_answers[c12]"]


def test_case_dicts_fields_ids_and_a_parametrized_parent(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".jsonl",
        cases='{"key": "k1", "answer": "the sky is blue", "expected": "the sky is blue"}\n'
        '{"key": "k2", "answer": "grass", "expected": "the grass is green"}\n',
    )
    pytester.makepyfile(
        test_suite="""
        import pytest
        from pytest_textsim import assert_each_f1, jsonl_cases

        ROWS = [{"id": "a", "response": "x y", "ground_truth": "x y"},
                {"id": "b", "response": "p q", "ground_truth": "p q"}]

        def test_jsonl():
            out = assert_each_f1(jsonl_cases("cases.jsonl", id_field="key"),
                                 fields={"response": "answer", "ground_truth": "expected"},
                                 threshold=0.3)
            assert [o["f1_score"] if o else None for o in out] == [1.0, 0.5]

        @pytest.mark.parametrize("lang", ["en"])
        def test_rows(lang):
            assert_each_f1(cases=ROWS)

        def test_fixture(f1_score):
            out = f1_score.each(ROWS, ids="id")
            assert [o["f1_score"] for o in out] == [1.0, 1.0]
        """
    )
    result = _no_xdist(pytester, "-v", "--textsim-json=out.json")
    result.assert_outcomes(passed=3)
    ids = [s["test_id"] for s in json.loads((pytester.path / "out.json").read_text())["scores"]]
    assert ids == [
        "test_suite.py::test_jsonl[k1]", "test_suite.py::test_jsonl[k2]",
        "test_suite.py::test_rows[en-a]", "test_suite.py::test_rows[en-b]",
        "test_suite.py::test_fixture[a]", "test_suite.py::test_fixture[b]",
    ]  # fmt: skip
    result.stdout.fnmatch_lines(["test_suite.py::test_rows[[]en[]] SUBPASSED[[]a[]]*"])


def test_a_case_that_cannot_be_scored_fails_alone(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_suite="""
        from pytest_textsim import assert_each_exact_match

        def app(q):
            return None if q == "q2" else "the answer"

        def test_answers():
            qs = ["q1", "q2", "q3"]
            assert_each_exact_match([app(q) for q in qs], ["the answer"] * 3, ids=qs)
        """
    )
    result = _no_xdist(pytester, "-v")
    result.stdout.fnmatch_lines(
        [
            "*SUBPASSED[[]q1[]]*",
            "*SUBFAILED[[]q2[]]*",
            "*SUBPASSED[[]q3[]]*",
            "E   TypeError: assert_each_exact_match(): case 'q2': 'response' must be a string, "
            "got None",
        ]
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ('assert_each_bleu(["a", "b"], ["a"])',
         "assert_each_bleu(): every sequence needs one entry per case; response has 2, "
         "ground_truth has 1"),
        ('assert_each_bleu("a", "b")',
         "assert_each_bleu(): 'response' must be a sequence of texts, one per case, got str"),
        ('assert_each_bleu(["a", "b"], ["a", "b"], ids=["x", "x"])',
         "assert_each_bleu(): each case needs its own id*"),
        ('assert_each_bleu([{"response": "a"}], fields={"ground_truth": "gt"})',
         "assert_each_bleu(): 1 case of 1 cannot be scored*"),
        ('assert_each_bleu(["a"], ["a"], treshold=0.2)',
         "assert_each_bleu() got unexpected keyword argument 'treshold' (did you mean "
         "'threshold'?)*"),
    ],
)  # fmt: skip
def test_a_call_that_does_not_fit_names_what_is_wrong(call: str, message: str) -> None:
    import pytest_textsim

    # The public names load lazily (the module's __getattr__): vars() holds only
    # those some earlier test happened to use.
    names = {name: getattr(pytest_textsim, name) for name in pytest_textsim.__all__}
    with pytest.raises((TypeError, ValueError)) as raised:
        eval(call, names)
    assert raised.match(message.replace("(", r"\(").replace(")", r"\)").replace("*", ".*")
                        .replace("[", r"\[").replace("]", r"\]").replace("?", r"\?"))  # fmt: skip


def test_a_registered_metric_has_its_each_form(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        import pytest_textsim

        def brevity(response):
            return 1.0 if len(response) <= 10 else 0.0

        pytest_textsim.register_metric("brevity", brevity, threshold=0.5, inputs=("response",))
        """
    )
    pytester.makepyfile(
        test_suite="""
        from pytest_textsim import assert_each_brevity

        def test_short():
            assert_each_brevity(["short", "far too long an answer", "ok"], ids=["a", "b", "c"])

        def test_fixture(brevity):
            assert [o["brevity"] for o in brevity.each(["tiny", "x" * 20])] == [1.0, 0.0]
        """
    )
    result = _no_xdist(pytester, "-v", "--textsim-json=out.json")
    result.stdout.fnmatch_lines(["*SUBFAILED[[]b[]]*", "E   AssertionError: brevity 0.000 < *"])
    ids = [s["test_id"] for s in json.loads((pytester.path / "out.json").read_text())["scores"]]
    assert ids[:3] == [f"test_suite.py::test_short[{c}]" for c in "abc"]
    assert ids[3:] == ["test_suite.py::test_fixture[0]", "test_suite.py::test_fixture[1]"]


def test_outside_pytest_failures_are_one_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # An empty context in a process without a pytest run has no run, as a script
    # has none: no pytest session.
    from pytest_textsim.runtime import run

    monkeypatch.setattr(run, "_innermost", None)
    contextvars.Context().run(_outside_pytest_failures_are_one_error)


def _outside_pytest_failures_are_one_error() -> None:
    from pytest_textsim import assert_each_exact_match
    from pytest_textsim.plugin.session import active_session

    assert active_session() is None
    out = assert_each_exact_match(["a", "b"], ["a", "b"])
    assert [o["exact_match"] for o in out] == [1.0, 1.0]
    failed = r"1 case of 2 failed .*\n\[1\] exact_match 0.000 < threshold 1.000"
    with pytest.raises(AssertionError, match=failed):
        assert_each_exact_match(["a", "b"], ["a", "c"])
