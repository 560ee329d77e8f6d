"""One record-mode type for the judge cache and replay: what each mode may do,
and the places that used to keep their own list of mode names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_textsim import judge, replay
from pytest_textsim.judge.cache import JudgeCache
from pytest_textsim.replay import Recorder
from pytest_textsim.settings.converters import as_replay
from pytest_textsim.settings.modes import MODES, RecordMode
from pytest_textsim.settings.table import SETTINGS, Resolver

# mode: (enabled, reads, may_call, writes, read_only)
RULES = {
    "once": (True, True, True, True, False),
    "none": (True, True, False, False, True),
    "rewrite": (True, False, True, True, False),
    "off": (False, False, True, False, False),
}


@pytest.mark.parametrize("name", sorted(RULES))
def test_each_mode_says_what_it_reads_may_call_and_writes(name: str) -> None:
    mode = RecordMode(name)
    assert (mode.enabled, mode.reads, mode.may_call, mode.writes, mode.read_only) == RULES[name]


def test_a_mode_is_its_name_in_comparisons_text_and_json() -> None:
    assert MODES == ("once", "none", "rewrite", "off")
    assert RecordMode.NONE == "none" and "none" == RecordMode.NONE
    assert str(RecordMode.REWRITE) == "rewrite"
    assert f"mode {RecordMode.ONCE}" == "mode once"
    assert f"{RecordMode.OFF:>5}" == "  off"
    assert json.dumps({"cache": RecordMode.NONE}) == '{"cache": "none"}'


def test_parse_names_the_modes_on_a_bad_value() -> None:
    assert RecordMode.parse(" none ") is RecordMode.NONE
    with pytest.raises(ValueError, match=r"^expected one of once, none, rewrite, off, got 'all'$"):
        RecordMode.parse("all")


def test_the_cache_setting_resolves_to_a_mode() -> None:
    assert Resolver(environ={}).get("cache") is RecordMode.ONCE
    assert Resolver(environ={"TEXTSIM_CACHE": "none"}).get("cache") is RecordMode.NONE
    assert SETTINGS["cache"].metavar == "once|none|rewrite|off"
    with pytest.raises(ValueError, match="TEXTSIM_CACHE in the environment: expected one of"):
        Resolver(environ={"TEXTSIM_CACHE": "sometimes"}).get("cache")


def test_the_replay_setting_reads_its_mode_as_a_record_mode() -> None:
    assert as_replay("all none") == ("all", RecordMode.NONE)
    assert as_replay("all")[1] is None
    assert as_replay("rewrite")[1] is RecordMode.REWRITE


def test_the_cache_and_the_recorder_hold_a_mode_given_by_name(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "cache", "none")
    assert cache.mode is RecordMode.NONE
    assert repr(cache).endswith("mode='none')")
    recorder = Recorder(tmp_path / "replays", "test_x.py::test_a", "rewrite")
    assert recorder.mode is RecordMode.REWRITE
    with pytest.raises(ValueError, match="replay mode must be one of once, none, rewrite"):
        Recorder(tmp_path / "replays", "test_x.py::test_a", RecordMode.OFF)
    with pytest.raises(ValueError, match="cache mode must be one of once, none, rewrite, off"):
        JudgeCache(tmp_path / "cache", "sometimes")


def test_the_cache_and_replay_export_the_one_list_of_names() -> None:
    assert judge.cache.MODES is MODES
    assert replay.MODES is MODES
