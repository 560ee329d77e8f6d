"""Cassette files: names, contents, atomic writes, errors that name the line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_textsim.replay import Cassette, CassetteError, Interaction, cassette_name, load
from pytest_textsim.replay.cassette import save


@pytest.mark.parametrize(
    "test_id",
    [
        "tests/test_chat.py::test_greeting",
        "tests/test_chat.py::test_case[" + "x" * 400 + "]",
        "tests/t.py::test[naïve/..\\ 日本]",
        "",
    ],
)
def test_names_are_short_safe_and_distinct(test_id: str) -> None:
    name = cassette_name(test_id)
    assert len(name.encode()) <= 120
    assert name.endswith(".jsonl") and "/" not in name and "\\" not in name
    assert name.isascii() and not name.startswith(".")
    assert cassette_name(test_id + "a") != name


def test_ids_with_the_same_long_prefix_get_different_files() -> None:
    prefix = "tests/test_chat.py::test_case[" + "y" * 200
    assert cassette_name(prefix + "1]") != cassette_name(prefix + "2]")


def sample() -> list[Interaction]:
    return [
        Interaction(
            "POST",
            "http://127.0.0.1:5000/v1/chat/completions",
            {"content-type": "application/json"},
            b'{"model": "m"}',
            200,
            {"content-type": "application/json"},
            [b'{"choices": [1, ', b'2]}'],
        ),
        Interaction(
            "POST",
            "http://127.0.0.1:5000/v1/chat/completions",
            {},
            b"",
            200,
            {"content-type": "text/event-stream"},
            [b"data: \xc3", b"\xa9t\xc3\xa9\n\n", b"data: [DONE]\n\n"],
        ),
        Interaction("GET", "http://h/x", {}, b"", 200, {}, [b"\xff\x00"], complete=False),
    ]


def test_round_trip_keeps_bodies_chunks_and_partial_marks(tmp_path: Path) -> None:
    path = tmp_path / "sub" / cassette_name("t::x")
    save(path, Cassette("t::x", sample()))
    lines = path.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0]) == {"format": "pytest-textsim-replay/1", "test": "t::x"}
    assert json.loads(lines[1])["response"]["json"] == {"choices": [1, 2]}
    assert json.loads(lines[2])["response"]["chunks"] == ["data: ", "été\n\n", "data: [DONE]\n\n"]
    assert json.loads(lines[3])["response"]["partial"] is True
    loaded = load(path)
    assert loaded is not None and loaded.test_id == "t::x"
    first, stream, binary = loaded.interactions
    assert json.loads(first.body) == {"choices": [1, 2]}
    assert stream.body == b"data: \xc3\xa9t\xc3\xa9\n\ndata: [DONE]\n\n"
    assert binary.body == b"\xff\x00" and binary.partial and not stream.partial
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary left


def test_a_bad_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    save(path, Cassette("t::x", sample()))
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], lines[1], '{"request": {}}']) + "\n")
    with pytest.raises(CassetteError, match=rf"{path}:3: .*--textsim-replay=rewrite"):
        load(path)
    path.write_text("not json\n")
    with pytest.raises(CassetteError, match=rf"{path}:1: "):
        load(path)
    assert load(tmp_path / "missing.jsonl") is None


FORMAT = "pytest-textsim-replay/1"
GOOD_REQUEST = {"method": "POST", "url": "http://h/v1/chat/completions", "headers": {}, "json": {}}
GOOD_RESPONSE = {"status": 200, "headers": {}, "json": {"choices": []}}
HAND_EDITS = [
    # (the line after the header, or the header itself; the error's words)
    ({"format": FORMAT, "test": 5}, "1: test: expected a test id, got a number (5)"),
    ({"format": FORMAT, "test": None}, "1: test: expected a test id, got null"),
    ({"request": GOOD_REQUEST, "response": {**GOOD_RESPONSE, "chunks": [1, 2]}},
     "2: response.chunks[0]: expected a string, got a number (1)"),
    ({"request": GOOD_REQUEST, "response": {**GOOD_RESPONSE, "chunks": "data: x"}},
     "2: response.chunks: expected an array of strings, got a string"),
    ({"request": GOOD_REQUEST, "response": {**GOOD_RESPONSE, "headers": [1]}},
     "2: response.headers: expected an object of header names and values, got an array"),
    ({"request": {**GOOD_REQUEST, "headers": None}, "response": GOOD_RESPONSE},
     "2: request.headers: expected an object of header names and values, got null"),
    ({"request": GOOD_REQUEST, "response": {**GOOD_RESPONSE, "headers": {"a": {}}}},
     "2: response.headers['a']: expected a string, got an object"),
    ({"request": GOOD_REQUEST, "response": {**GOOD_RESPONSE, "status": 1e999}},
     "2: response.status: expected an HTTP status, got a number (inf)"),
    ({"request": GOOD_REQUEST, "response": {**GOOD_RESPONSE, "status": True}},
     "2: response.status: expected an HTTP status, got true/false"),
    ({"request": GOOD_REQUEST, "response": {"status": 200, "headers": {}, "text": 5}},
     "2: response.text: expected a string, got a number (5)"),
    ({"request": GOOD_REQUEST, "response": {**GOOD_RESPONSE, "partial": "no"}},
     "2: response.partial: expected true or false, got a string"),
    ({"request": GOOD_REQUEST, "response": None}, "2: response: expected an object, got null"),
    ({"request": GOOD_REQUEST, "response": GOOD_RESPONSE, "case": [1]},
     "2: case: expected a string, got an array"),
    ("[" * 100_000 + "]" * 100_000, "2: JSON nested too deeply to read"),
    ('{"n": ' + "9" * 5000 + "}", "2: a number of more than 4300 digits"),
]  # fmt: skip


@pytest.mark.parametrize(("line", "words"), HAND_EDITS, ids=[w for _, w in HAND_EDITS])
def test_a_hand_edited_line_of_the_wrong_type_names_file_line_and_field(
    tmp_path: Path, line: object, words: str
) -> None:
    """Each of these crashed a pytest session (INTERNALERROR) with an AttributeError,
    an OverflowError or a RecursionError from deep inside the reader."""
    path = tmp_path / "c.jsonl"
    header = {"format": FORMAT, "test": "t::x"}
    text = line if isinstance(line, str) else json.dumps(line)
    lines = [text] if isinstance(line, dict) and "format" in line else [json.dumps(header), text]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(CassetteError) as info:
        load(path)
    assert str(info.value) == (
        f"{path}:{words}; delete the file or run with --textsim-replay=rewrite to record it again"
    )


def test_a_body_nested_too_deeply_is_kept_as_its_text(tmp_path: Path) -> None:
    """JSON nested past what can be parsed, copied and written as a value (or past the
    200 levels of every JSON input) is stored and read back as the text it was."""
    deep = b'{"choices": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    shallow = b'{"choices": ' + b"[" * 150 + b"]" * 150 + b"}"
    json_type = {"content-type": "application/json"}
    interactions = [
        Interaction("POST", "http://h/v1/x", {}, deep, 200, json_type, [body])
        for body in (deep, shallow)
    ]
    path = tmp_path / "c.jsonl"
    save(path, Cassette("t::x", interactions))
    first, second = (json.loads(line) for line in path.read_text().splitlines()[1:])
    assert first["request"]["text"] == first["response"]["text"] == deep.decode()
    assert "json" in second["response"]
    loaded = load(path)
    assert loaded is not None
    assert [i.body for i in loaded.interactions] == [deep, json.dumps(json.loads(shallow)).encode()]
    assert loaded.interactions[0].request_json() is None
