"""The judge's seed is sent and keys the cache; what served a reply is kept with it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pytest_textsim.judge.cache import JudgeCache
from pytest_textsim.judge.client import JudgeClient, JudgeOptions
from pytest_textsim.judge.prompts import SIMILARITY
from pytest_textsim.judge.wiring import judge_options
from pytest_textsim.settings.table import Resolver
from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply

FAST = JudgeOptions(timeout=5, max_attempts=2, backoff=0.01, max_backoff=0.05)
INPUTS = {"query": None, "response": "Paris.", "ground_truth": "The capital is Paris."}


def client(server: FakeOpenAI, options: JudgeOptions, cache: JudgeCache | None = None):
    config = {"model": "gpt-judge", "base_url": server.base_url, "api_key": "sk-test"}
    return JudgeClient(config, options, cache=cache)


def test_seed_is_sent_only_when_set(fake_openai: FakeOpenAI) -> None:
    client(fake_openai, FAST).judge(SIMILARITY, INPUTS)
    client(fake_openai, replace(FAST, seed=7)).judge(SIMILARITY, INPUTS)
    first, second = fake_openai.received
    assert "seed" not in first.body and second.body["seed"] == 7


def test_seed_setting(monkeypatch) -> None:
    monkeypatch.setenv("TEXTSIM_JUDGE_SEED", "42")
    assert judge_options(Resolver()).seed == 42
    monkeypatch.delenv("TEXTSIM_JUDGE_SEED")
    assert judge_options(Resolver()).seed is None


def test_seed_keys_the_cache_and_served_model_is_kept(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    fake_openai.script(
        Reply.score(4, served_model="gpt-judge-2026-01-01", fingerprint="fp_abc123"),
        Reply.score(5),
    )
    cache = JudgeCache(tmp_path)
    first = client(fake_openai, replace(FAST, seed=1), cache).judge(SIMILARITY, INPUTS)
    assert (first.served_model, first.fingerprint) == ("gpt-judge-2026-01-01", "fp_abc123")
    # Another seed is another cache entry: the judge is asked again.
    other = client(fake_openai, replace(FAST, seed=2), cache).judge(SIMILARITY, INPUTS)
    assert (other.score, other.cached, other.fingerprint) == (5, False, "")
    assert other.served_model == "gpt-judge"  # the server echoes the model asked for
    hit = client(fake_openai, replace(FAST, seed=1), cache).judge(SIMILARITY, INPUTS)
    assert (hit.score, hit.cached) == (4, True)
    assert (hit.served_model, hit.fingerprint) == ("gpt-judge-2026-01-01", "fp_abc123")
    assert fake_openai.requests == 2
    cache.close()


def _served_rows(path: Path) -> list[tuple[str, str, str]]:
    import sqlite3

    conn = sqlite3.connect(path / "judge.sqlite3")
    try:
        return sorted(conn.execute("SELECT key, served_model, fingerprint FROM served"))
    finally:
        conn.close()


def test_served_model_follows_a_migrated_entry(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    """Entries keyed before the endpoint's path, re-keyed by migrate, keep what served them."""
    import json

    from pytest_textsim.judge.cache import Judgment

    fake_openai.script(Reply.score(4, served_model="gpt-judge-2026-01-01", fingerprint="fp_1"))
    client(fake_openai, FAST, JudgeCache(tmp_path)).judge(SIMILARITY, INPUTS)
    cache = JudgeCache(tmp_path)
    (entry,) = list(cache.entries())
    host = entry["host"].split("/")[0]
    cache.clear()
    assert _served_rows(tmp_path) == []  # what served a removed judgment goes with it
    # As an older release keyed it (host and port only), with what served it.
    old = {**entry, "host": host}
    cache.import_jsonl([json.dumps(old)])
    fields = {name: old[name] for name in ("evaluator", "prompt_version", "provider", "model",
                                           "host", "sampling", "sample", "inputs")}  # fmt: skip
    old_key = JudgeCache.key(**fields)
    judgment = Judgment(4, "r", "{}", served_model="gpt-judge-2026-01-01", fingerprint="fp_1")
    cache.put(old_key, judgment)
    assert cache.migrate(fake_openai.base_url) == 1
    cache.close()
    assert [row[1:] for row in _served_rows(tmp_path)] == [("gpt-judge-2026-01-01", "fp_1")]
    hit = client(fake_openai, FAST, JudgeCache(tmp_path, "none")).judge(SIMILARITY, INPUTS)
    assert (hit.cached, hit.served_model, hit.fingerprint) == (True, "gpt-judge-2026-01-01", "fp_1")


def test_a_cache_without_the_served_table_still_reads(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    """A committed cache written before the served table, read offline (mode none)."""
    import sqlite3

    client(fake_openai, FAST, JudgeCache(tmp_path)).judge(SIMILARITY, INPUTS)
    conn = sqlite3.connect(tmp_path / "judge.sqlite3")
    conn.execute("DROP TABLE served")
    conn.execute("DROP TABLE calibrations")
    conn.commit()
    conn.close()
    offline = JudgeCache(tmp_path, "none")
    hit = client(fake_openai, FAST, offline).judge(SIMILARITY, INPUTS)
    assert (hit.cached, hit.served_model, hit.fingerprint) == (True, "", "")
    assert offline.calibration("similarity", "h", "m", "similarity-2") is None
    offline.close()


def test_odd_served_fields_are_blank_not_a_failed_judgment(fake_openai: FakeOpenAI) -> None:
    from pytest_textsim.judge.replies import read_completion

    body = {"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}],
            "model": {"not": "a string"}, "system_fingerprint": "f" * 1000}  # fmt: skip
    import json

    *_, served = read_completion(json.dumps(body).encode())
    assert served == {"served_model": "", "fingerprint": "f" * 200}
    fake_openai.script(Reply.score(3, fingerprint="fp_" + "9" * 500))
    judged = client(fake_openai, FAST).judge(SIMILARITY, INPUTS)
    assert (judged.score, judged.fingerprint) == (3, ("fp_" + "9" * 500)[:200])
