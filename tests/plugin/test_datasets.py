"""JSONL cases: ids, blank lines, every bad line reported with path:line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_textsim.plugin.cases import CasesError, jsonl_cases, load_cases, read_cases


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_text(text, encoding="utf-8")
    return path


def test_ids_from_field_or_line_number(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        '{"id": "capital", "q": "a"}\n\n   \n{"id": 7, "q": "b"}\n'
        '{"id": "a   long\\nid with many words that goes on and on and on and on and on",'
        ' "q": "c"}\n',
    )
    cases = load_cases(path, id_field="id")
    assert [case_id for case_id, _ in cases] == [
        "capital",
        "7",
        "a long id with many words that goes on and on and on and ...",
    ]
    assert [case_id for case_id, _ in load_cases(path)] == ["line1", "line4", "line5"]
    assert cases[1][1] == {"id": 7, "q": "b"}


def test_jsonl_cases_gives_pytest_params(tmp_path: Path) -> None:
    params = jsonl_cases(_write(tmp_path, '{"q": "a"}\n{"q": "b"}\n'), fields="q")
    assert [(p.id, p.values) for p in params] == [
        ("line1", ({"q": "a"},)),
        ("line2", ({"q": "b"},)),
    ]


def test_relative_path_is_relative_to_the_calling_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = Path(__file__).parent
    data = here / "_cases_for_relative_path_test.jsonl"
    monkeypatch.chdir(tmp_path)  # not the working directory
    data.write_text('{"q": 1}\n', encoding="utf-8")
    try:
        assert [p.id for p in jsonl_cases(data.name)] == ["line1"]
    finally:
        data.unlink()


def test_every_bad_line_is_reported(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        '{"id": "a", "response": "x", "ground_truth": "y"}\n'
        '{"id": "b", "response": "x"\n'
        '"just a string"\n'
        '{"id": "c"}\n'
        '{"id": "a", "response": "x", "ground_truth": "y"}\n',
    )
    with pytest.raises(CasesError) as excinfo:
        load_cases(path, id_field="id", fields=["response", "ground_truth"])
    assert str(excinfo.value) == "\n".join(
        [
            f"4 bad lines in {path}:",
            f"{path}:2: not valid JSON (Expecting ',' delimiter at column 28)",
            f"{path}:3: expected a JSON object, got a string",
            f"{path}:4: missing fields 'response', 'ground_truth'",
            f"{path}:5: duplicate id 'a' (also on line 1)",
        ]
    )


def test_an_id_that_cannot_name_a_test_is_a_bad_line(tmp_path: Path) -> None:
    # "" and null gave test ids test_x[] and test_x[null].
    path = _write(
        tmp_path,
        '{"id": "", "q": 1}\n{"id": null, "q": 2}\n{"id": " ", "q": 3}\n{"id": true}\n'
        '{"id": ["a"]}\n{"id": {"k": 1}}\n{"id": 0, "q": 7}\n{"id": 1.5}\n{"id": "ok"}\n',
    )
    with pytest.raises(CasesError) as excinfo:
        load_cases(path, id_field="id")
    expected = "id field 'id' must be a non-empty string or a number, got"
    assert str(excinfo.value) == "\n".join(
        [
            f"6 bad lines in {path}:",
            f"{path}:1: {expected} an empty string",
            f"{path}:2: {expected} null",
            f"{path}:3: {expected} a blank string",
            f"{path}:4: {expected} true/false",
            f"{path}:5: {expected} an array",
            f"{path}:6: {expected} an object",
        ]
    )
    path.write_text('{"id": 0}\n{"id": 1.5}\n{"id": "ok"}\n', encoding="utf-8")
    assert [case_id for case_id, _ in load_cases(path, id_field="id")] == ["0", "1.5", "ok"]


@pytest.mark.parametrize(
    ("text", "message"),
    [(None, "no such file"), ("\n\n", "no cases (the file has no non-blank lines)")],
)
def test_missing_or_empty_file(tmp_path: Path, text: str | None, message: str) -> None:
    path = tmp_path / "cases.jsonl"
    if text is not None:
        path.write_text(text)
    with pytest.raises(
        CasesError, match=r"cases\.jsonl: " + message.replace("(", r"\(").replace(")", r"\)")
    ):
        load_cases(path)


def test_utf8_bom_is_accepted_and_bad_bytes_name_the_line(tmp_path: Path) -> None:
    # Files saved by Windows editors start with a BOM; it is not part of line 1's JSON.
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "a"}\n{"id": "b"}\n')
    assert [case_id for case_id, _ in load_cases(path, id_field="id")] == ["a", "b"]
    path.write_bytes(b'{"id": "a"}\n{"id": "caf\xe9"}\n')
    with pytest.raises(CasesError, match=r"cases\.jsonl:2: not UTF-8 text .*convert the file"):
        load_cases(path)


def test_a_misspelt_marker_keyword_gets_a_suggestion(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("cases.jsonl").write_text('{"id": "a", "q": 1}\n')
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.textsim_cases("cases.jsonl", id_feild="id")
        def test_typo(case):
            pass
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    assert (
        "test_typo: use @pytest.mark.textsim_cases(path, id_field=None, fields=None, "
        "xfail_field='xfail', skip_field='skip', marks_field='marks'); got "
        "args ('cases.jsonl',) and keywords ['id_feild']; unknown: 'id_feild' (did you mean "
        "'id_field'?)"
    ) in result.stdout.str()


def test_marker_misuse_is_a_collection_error(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("cases.jsonl").write_text('{"q": 1}\n')
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.textsim_cases("cases.jsonl")
        def test_no_case_argument(q=None):
            pass

        @pytest.mark.textsim_cases("cases.jsonl", idfield="id")
        def test_typo(case):
            pass
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*test_no_case_argument: @pytest.mark.textsim_cases needs a 'case' argument"]
    )


def test_case_fields_mark_the_params_and_a_bad_one_is_a_bad_line(
    tmp_path: Path, pytestconfig: pytest.Config
) -> None:
    path = _write(
        tmp_path,
        '{"id": "known-bad", "xfail": "retrieval misses the 2023 policy"}\n'
        '{"id": "flagged", "xfail": true, "skip": "no key", "marks": ["xdist_matters"]}\n'
        '{"id": "plain", "xfail": false, "skip": null}\n',
    )
    params = jsonl_cases(path, id_field="id")
    assert [[(m.name, m.kwargs) for m in p.marks] for p in params] == [
        [("xfail", {"reason": "retrieval misses the 2023 policy"})],
        [
            ("xfail", {"reason": f"xfail in {path}:2"}),
            ("skip", {"reason": "no key"}),
            ("xdist_matters", {}),
        ],
        [],
    ]
    # Renamed fields; None reads none (a "marks" field of the data stays data).
    path.write_text('{"known_bad": "why", "marks": 7}\n', encoding="utf-8")
    (param,) = jsonl_cases(path, xfail_field="known_bad", marks_field=None)
    assert [m.name for m in param.marks] == ["xfail"] and param.values[0]["marks"] == 7
    # Every bad line at once, an unknown mark among them, each with its file:line.
    path.write_text(
        '{"id": "a", "marks": ["xdist_matters", "xdist_matter"]}\n'
        '{"id": "b", "xfail": 1}\nnot json\n{"id": "c", "skip": " "}\n'
        '{"id": "d", "marks": "slow"}\n{"id": "e"}\n',
        encoding="utf-8",
    )
    with pytest.raises(CasesError) as excinfo:
        read_cases(path, id_field="id", config=pytestconfig)
    alone = "leaves a field of that name alone)"
    assert str(excinfo.value) == "\n".join(
        [
            f"5 bad lines in {path}:",
            f"{path}:1: unknown mark 'xdist_matter' (did you mean 'xdist_matters'?) in "
            "'marks': register it under 'markers' in the pytest configuration, or fix the name",
            f"{path}:2: field 'xfail' must be true, false or a reason (a string), got a number "
            f"(1) (xfail_field=None {alone}",
            f"{path}:3: not valid JSON (Expecting value at column 1)",
            f"{path}:4: field 'skip' must be true, false or a reason (a string), got a blank "
            f"string (skip_field=None {alone}",
            f"{path}:5: field 'marks' must be a list of marker names, got a string "
            f"(marks_field=None {alone}",
        ]
    )


_PARIS = "Paris is the capital of France."
KNOWN_BAD = f"""\
{{"id": "good", "response": "{_PARIS}", "truth": "{_PARIS}"}}
{{"id": "known-bad", "response": "Lyon.", "truth": "{_PARIS}", "xfail": "retrieval gap"}}
{{"id": "no-key", "response": "-", "truth": "-", "skip": true}}
{{"id": "slow-one", "response": "Madrid.", "truth": "Madrid.", "marks": ["slow"]}}
"""


def test_an_xfail_case_is_recorded_left_out_of_gates_and_a_baseline_saves(
    pytester: pytest.Pytester, run_plugin
) -> None:
    pytester.path.joinpath("cases.jsonl").write_text(KNOWN_BAD)
    pytester.makeini("[pytest]\nmarkers =\n    slow: a slow case\n")
    pytester.makepyfile(
        test_known="""
        import pytest
        from pytest_textsim import assert_f1, jsonl_cases

        @pytest.mark.parametrize("case", jsonl_cases("cases.jsonl", id_field="id"))
        def test_answer(case, request):
            slow = request.node.get_closest_marker("slow") is not None
            assert slow == (case["id"] == "slow-one")
            assert_f1(case["response"], case["truth"], threshold=0.9)

        @pytest.mark.textsim_cases("cases.jsonl", id_field="id", marks_field=None)
        def test_marker_form(case, request):
            assert request.node.get_closest_marker("slow") is None
            assert case["id"] != "known-bad"
        """
    )
    result = run_plugin(
        "-rsx", "--textsim-gate=f1_score.mean >= 0.9", "--textsim-gate=f1_score.count == 2",
        "--textsim-save-baseline=base.json", "--textsim-json=report.json", "--textsim-report=all",
    )  # fmt: skip
    result.assert_outcomes(passed=4, skipped=2, xfailed=2)
    result.stdout.fnmatch_lines(
        [
            "test_known.py::test_answer[[]known-bad[]] * f1_score * 0.000 * 0.900 * xfail * xfail",
            "PASS f1_score.mean >= 0.9*",
            "PASS f1_score.count == 2*",
            "saved base.json: new file, 3 scores of 3 tests",
        ]
    )
    result.stdout.fnmatch_lines_random(
        [
            "SKIPPED * skip in *cases.jsonl:3",
            "XFAIL test_known.py::test_answer[[]known-bad[]] - retrieval gap",
        ]
    )
    scores = json.loads(pytester.path.joinpath("report.json").read_text())["scores"]
    assert [(s["test_id"].split("[")[1], s["test_outcome"]) for s in scores] == [
        ("good]", "passed"), ("known-bad]", "xfail"), ("slow-one]", "passed")
    ]  # fmt: skip
    assert result.ret == 0


def test_gates_leave_xfail_scores_out_unless_asked() -> None:
    from pytest_textsim.plugin.gating import gated
    from pytest_textsim.records import ScoreRecord

    records = [
        ScoreRecord("f1", "f1_score", score, 0.5, score >= 0.5, test_outcome=outcome)
        for score, outcome in ((1.0, "passed"), (0.0, "xfail"), (0.2, "failed"))
    ]
    assert [r.test_outcome for r in gated(records, include_xfail=False)] == ["passed", "failed"]
    assert gated(records, include_xfail=True) == records
