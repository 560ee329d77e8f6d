"""JSON inputs (JSONL cases, baselines): nesting, lone surrogates, encodings, NaN."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

# -- JSON inputs: nesting, surrogates, encodings ------------------------------------


def test_jsonl_nesting_and_surrogates_are_bad_lines(tmp_path: Path) -> None:
    from pytest_textsim.jsonl import read_objects

    path = tmp_path / "cases.jsonl"
    deep = '{"response": ' + "[" * 5000 + "]" * 5000 + "}"  # the audit's 10 KB line
    just_fine = '{"response": ' + "[" * 199 + "]" * 199 + "}"
    path.write_text(
        "\n".join([deep, '{"response": "Paris \\ud83d"}', just_fine, '{"id": "\\udce9x"}']),
        encoding="utf-8",
    )
    lines = list(read_objects(path))
    assert [line.problem for line in lines] == [
        "JSON nested deeper than 200 levels",
        "'response': a lone surrogate '\\ud83d' at position 6, which is not Unicode text; "
        "repair the text",
        "",
        "'id': a lone surrogate '\\udce9' at position 0, which is not Unicode text; "
        "repair the text",
    ]
    assert lines[0].where == f"{path}:1"


def test_baseline_that_is_not_utf8_deep_or_nan_is_a_clear_error(tmp_path: Path) -> None:
    from pytest_textsim.gating.baseline import BaselineError, load

    cases = {
        "latin1.json": (b'{"format": "pytest-textsim baseline", "note": "caf\xe9"}',
                        "not UTF-8 text (invalid continuation byte at byte 51)"),
        "deep.json": (b"[" * 100_000 + b"]" * 100_000, "JSON nested deeper than 200 levels"),
        "nan.json": (b'{"format": "pytest-textsim baseline", "version": 1, "scores": [{"test": '
                     b'"t", "evaluator": "bleu", "metric": "bleu_score", "params": {}, '
                     b'"score": NaN}]}', "a finite numeric score"),
    }  # fmt: skip
    for name, (content, message) in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(BaselineError) as info:
            load(tmp_path / name)
        assert str(info.value).startswith(str(tmp_path / name))
        assert message in str(info.value), str(info.value)


def test_a_baseline_never_gets_nan() -> None:
    from pytest_textsim.gating.baseline import entries_from_records
    from pytest_textsim.records import ScoreRecord

    record = ScoreRecord(metric_name="bleu", score_key="bleu_score", score=math.nan, threshold=None,
                         passed=None, params={}, nodeid="t.py::test_x")  # fmt: skip
    with pytest.raises(ValueError, match="t.py::test_x: bleu_score is nan, not a finite number"):
        entries_from_records([record])


def test_a_decoder_message_ending_in_at_is_not_doubled(tmp_path: Path) -> None:
    from pytest_textsim.jsonl import read_objects

    path = tmp_path / "cut.jsonl"
    path.write_text('{"id": "a", "response": "cut short\n{"id": 1\n', encoding="utf-8")
    assert [line.problem for line in read_objects(path)] == [
        "not valid JSON (Unterminated string starting at column 25)",
        "not valid JSON (Expecting ',' delimiter at column 9)",
    ]
