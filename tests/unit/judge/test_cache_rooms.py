"""The judge cache's rooms: the names users and the package import stay where they
were, and the SQLite cache is a :class:`JudgmentStore`."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest_textsim
from pytest_textsim.judge import cache
from pytest_textsim.judge.cache import JudgeCache, JudgmentStore


def test_the_names_imported_from_the_cache_module_are_still_there() -> None:
    for name in ("JudgeCache", "Judgment", "CacheKey", "CacheImportError", "JudgeCacheWarning",
                 "MODES", "SCHEMA_VERSION", "DB_NAME", "BUSY_SECONDS", "embedding_key",
                 "is_corrupt"):  # fmt: skip
        assert hasattr(cache, name), name
    assert pytest_textsim.JudgeCache is JudgeCache


def test_the_sqlite_cache_is_a_judgment_store(tmp_path: Path) -> None:
    store = JudgeCache(tmp_path)
    assert isinstance(store, JudgmentStore)
    # Every call of the interface is a call of the cache with the same parameters.
    for name, member in inspect.getmembers(JudgmentStore, inspect.isfunction):
        if not name.startswith("_"):
            wanted = [p for p in inspect.signature(member).parameters if p != "self"]
            assert list(inspect.signature(getattr(store, name)).parameters) == wanted, name
