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
