"""JSONL cases: ids, blank lines, every bad line reported with path:line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_textsim.plugin.cases import CasesError, jsonl_cases, load_cases


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
        "test_typo: use @pytest.mark.textsim_cases(path, id_field=None, fields=None); got "
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
