"""The judge's seed is sent and keys the cache; what served a reply is kept with it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pytest_textsim.judge.cache import JudgeCache
from pytest_textsim.judge.client import JudgeClient, JudgeOptions
from pytest_textsim.judge.prompts import SIMILARITY
from pytest_textsim.judge.setup import judge_options
from pytest_textsim.settings import Resolver
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
