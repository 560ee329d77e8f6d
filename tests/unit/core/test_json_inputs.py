"""JSON inputs (JSONL cases, baselines, reports, cassettes, price files, @FILE options): nesting,
lone surrogates, encodings, NaN, long integers."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

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


# -- every JSON file reader: a byte order mark, a number too long for Python --------

BOM = b"\xef\xbb\xbf"
LONG = b"9" * 5000  # past Python's 4300 digits for an integer


def _read(kind: str, path: Path) -> Any:
    """What the reader of ``kind`` makes of ``path``; its error's message if it refuses it."""
    from pytest_textsim.calls.prices import PriceFileError, load_prices
    from pytest_textsim.engine.plan import UsageError, apply_options, metric_choice
    from pytest_textsim.html import ReportSourceError
    from pytest_textsim.html import load as load_report
    from pytest_textsim.replay import CassetteError
    from pytest_textsim.replay import load as load_cassette

    try:
        if kind == "report":
            document = load_report(path)
            return document.get("failures") or document["format"]
        if kind == "cassette":
            cassette = load_cassette(path)
            return cassette and cassette.test_id
        if kind == "prices":
            return {name: price.input for name, price in load_prices(path, "src").items()}
        choice = metric_choice("json_schema")
        apply_options([choice], [f"json_schema.schema=@{path}"], [])
        return choice.options["schema"]
    except (ReportSourceError, CassetteError, PriceFileError, UsageError) as exc:
        return str(exc)


@pytest.mark.parametrize(
    ("kind", "name", "content", "read"),
    [
        ("report", "r.json", b'{"format": "pytest-textsim/1", "scores": []}', "pytest-textsim/1"),
        ("cassette", "c.jsonl", b'{"format": "pytest-textsim-replay/1", "test": "t"}\n', "t"),
        ("prices", "p.json", b'{"models": {"m": {"input": 1, "output": 2}}}', {"m": 1.0}),
        ("prices", "p.toml", b"[models.m]\ninput = 1\noutput = 2\n", {"m": 1.0}),
        ("option", "schema.json", b'{"type": "object"}', {"type": "object"}),
    ],
)  # fmt: skip
def test_a_byte_order_mark_is_skipped_by_every_json_file_reader(
    tmp_path: Path, kind: str, name: str, content: bytes, read: object
) -> None:
    """Baselines and JSONL skipped it; these refused it ("Unexpected UTF-8 BOM")."""
    path = tmp_path / name
    path.write_bytes(BOM + content)
    assert _read(kind, path) == read


@pytest.mark.parametrize(
    ("kind", "name", "content", "words"),
    [
        ("report", "r.json", b'{"format": "pytest-textsim/1", "scores": [], "n": ' + LONG + b"}",
         "{path}: a number of more than 4300 digits"),
        ("report", "rows.jsonl", b'{"bleu_score": 0.5, "bleu_result": "pass"}\n{"bleu_score": '
         + LONG + b', "bleu_result": "pass"}\n', ["{path}:2: a number of more than 4300 digits"]),
        ("prices", "p.json", b'{"models": {"m": {"input": ' + LONG + b"}}}",
         "{path} (from src): a number of more than 4300 digits"),
        ("prices", "p.toml", b"[models.m]\ninput = " + LONG + b"\n",
         "{path} (from src): a number of more than 4300 digits"),
        ("prices", "deep.json", b"[" * 100_000 + b"]" * 100_000,
         "{path} (from src): JSON nested too deeply"),
    ],
)  # fmt: skip
def test_a_number_too_long_for_python_is_named_in_words_by_every_json_file_reader(
    tmp_path: Path, kind: str, name: str, content: bytes, words: object
) -> None:
    """Each gave Python's hint to call sys.set_int_max_str_digits(), or a traceback.
    (Cassettes: tests/unit/replay/test_cassette.py.)"""
    path = tmp_path / name
    path.write_bytes(content)
    if isinstance(words, list):
        assert _read(kind, path) == [w.format(path=path) for w in words]
    else:
        assert _read(kind, path) == str(words).format(path=path)
