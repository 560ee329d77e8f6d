"""What identifies a cache entry's endpoint: host and path, a loopback host without
its port; the upgrade of schema-1 files keyed with ports; the hints of a miss."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_textsim.judge.cache import SCHEMA_VERSION, JudgeCache
from pytest_textsim.judge.client import JudgeCacheMiss, JudgeClient, JudgeOptions
from pytest_textsim.judge.embeddings import EmbeddingClient
from pytest_textsim.judge.endpoints import batch_endpoint, endpoint_key, stored_endpoint
from pytest_textsim.judge.prompts import SIMILARITY
from pytest_textsim.testing.fake_openai import FakeOpenAI

SECRET = "sk-test-SECRET-identity-5e"
INPUTS = {"response": "Paris.", "ground_truth": "The capital is Paris."}
FAST = JudgeOptions(max_attempts=2, backoff=0.01)


def judge(url: str, cache: JudgeCache, model: str = "gpt-judge") -> JudgeClient:
    return JudgeClient({"model": model, "base_url": url, "api_key": SECRET}, FAST, cache=cache)


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("http://127.0.0.1:11434/v1", "127.0.0.1/v1"),
        ("http://127.0.0.1:8000/v1/", "127.0.0.1/v1"),
        ("http://127.0.0.1/v1", "127.0.0.1/v1"),
        ("http://127.8.9.10:8000/v1", "127.8.9.10/v1"),
        ("http://localhost:1234/v1", "localhost/v1"),
        ("http://LocalHost:1234", "LocalHost"),
        ("http://[::1]:8000/v1", "[::1]/v1"),
        ("http://user:pw@127.0.0.1:8000/v1", "127.0.0.1/v1"),
        # Not loopback: another port may be another service.
        ("http://10.0.0.5:8000/v1", "10.0.0.5:8000/v1"),
        ("http://128.0.0.1:8000/v1", "128.0.0.1:8000/v1"),
        ("http://[::2]:8000/v1", "[::2]:8000/v1"),
        ("https://judge.example:8443/v1", "judge.example:8443/v1"),
        ("http://localhost.example:8000/v1", "localhost.example:8000/v1"),
        ("https://me:secret@api.openai.com/v1?x=1", "api.openai.com/v1"),
    ],
)
def test_endpoint_key(url: str, key: str) -> None:
    assert endpoint_key(url) == key


def test_a_batch_endpoint_keeps_scheme_and_port_and_no_credentials() -> None:
    # A judge batch belongs to one server: a loopback host keeps its port here.
    assert batch_endpoint("HTTP://me:secret@127.0.0.1:8000/v1/?key=x") == "http://127.0.0.1:8000/v1"
    assert batch_endpoint("https://my-resource.openai.azure.com") == (
        "https://my-resource.openai.azure.com")  # fmt: skip


@pytest.mark.parametrize(
    ("stored", "today"),
    [
        ("127.0.0.1:11434/v1", "127.0.0.1/v1"),
        ("127.0.0.1:11434", "127.0.0.1"),  # keyed before the path was
        ("[::1]:8000/a/v1", "[::1]/a/v1"),
        ("judge.example:8000/v1", "judge.example:8000/v1"),
        ("api.openai.com/v1", "api.openai.com/v1"),
    ],
)
def test_stored_endpoint(stored: str, today: str) -> None:
    assert stored_endpoint(stored) == today


def test_the_same_local_judge_on_two_ports_shares_its_judgments(tmp_path: Path) -> None:
    with FakeOpenAI() as first, FakeOpenAI() as second:
        assert first.port != second.port
        recorded = judge(first.base_url, JudgeCache(tmp_path)).judge(SIMILARITY, INPUTS)
        replayed = judge(second.base_url, JudgeCache(tmp_path)).judge(SIMILARITY, INPUTS)
        assert (recorded.cached, replayed.cached, replayed.score) == (False, True, 4)
        assert (first.requests, second.requests) == (1, 0)


def _exported(fake_openai: FakeOpenAI, tmp_path: Path) -> dict[str, Any]:
    """The export of one judgment made by a real client through ``fake_openai``."""
    recorder = JudgeCache(tmp_path / "recorded")
    judge(fake_openai.base_url, recorder).judge(SIMILARITY, INPUTS)
    (entry,) = recorder.entries()
    recorder.close()
    return entry


def test_a_remote_host_keeps_its_port(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    entry = _exported(fake_openai, tmp_path)
    cache = JudgeCache(tmp_path / "cache")
    cache.import_jsonl([json.dumps({**entry, "host": "judge.example:8000/v1"})])
    cache.close()
    # Mode none makes no call, so the remote hosts need not exist.
    hit = judge("http://judge.example:8000/v1", JudgeCache(tmp_path / "cache", "none"))
    assert hit.judge(SIMILARITY, INPUTS).cached
    other_port = judge("http://judge.example:9000/v1", JudgeCache(tmp_path / "cache", "none"))
    with pytest.raises(JudgeCacheMiss) as info:
        other_port.judge(SIMILARITY, INPUTS)
    # The judgment itself is at another endpoint: point there, not record again.
    assert str(info.value).endswith(
        "forbids calling the judge; the cache has this judgment at judge.example:8000/v1 "
        "(1 entry for gpt-judge at judge.example:8000/v1): set textsim_judge_base_url to "
        "that endpoint to use them"
    )
    # Other judgments of the model are: where, how many, and both ways out.
    with pytest.raises(JudgeCacheMiss) as info:
        other_port.judge(SIMILARITY, {**INPUTS, "response": "Lyon."})
    assert str(info.value).endswith(
        "forbids calling the judge; record it with --textsim-cache=once; the cache has 1 entry "
        "for gpt-judge at judge.example:8000/v1: if the endpoint moved, set "
        "textsim_judge_base_url to it rather than record again; see docs/judge-cache.md"
    )


def test_a_miss_names_the_entries_of_other_models_at_this_endpoint(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    for text in ("Paris.", "Lyon.", "Nice."):
        judge(fake_openai.base_url, JudgeCache(tmp_path)).judge(
            SIMILARITY, {**INPUTS, "response": text}
        )
    offline = judge(fake_openai.base_url, JudgeCache(tmp_path, "none"), model="judge-b")
    with pytest.raises(JudgeCacheMiss) as info:
        offline.judge(SIMILARITY, INPUTS)
    assert str(info.value).endswith(
        "; 3 entries exist for other models at this endpoint; see docs/judge-cache.md"
    )
    # Nothing near: no hint.
    with pytest.raises(JudgeCacheMiss) as info:
        judge("http://judge.example/v1", JudgeCache(tmp_path, "none"), "judge-c").judge(
            SIMILARITY, INPUTS
        )
    assert str(info.value).endswith("record it with --textsim-cache=once")


def test_an_embedding_miss_names_the_entries_at_other_endpoints(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    config = {"model": "text-embed", "base_url": fake_openai.base_url, "api_key": SECRET}
    EmbeddingClient(JudgeClient(config, FAST, cache=JudgeCache(tmp_path))).vectors(["a", "b"])
    elsewhere = {**config, "base_url": "http://judge.example/v1"}
    offline = EmbeddingClient(JudgeClient(elsewhere, FAST, cache=JudgeCache(tmp_path, "none")))
    with pytest.raises(JudgeCacheMiss) as info:
        offline.vectors(["a"])
    assert str(info.value).endswith(
        "record them with --textsim-cache=once; the cache has 2 entries for text-embed at "
        "127.0.0.1/v1: if the endpoint moved, set "  # a loopback port is no part of the key
        "textsim_embedding_base_url to it rather than record again; see docs/judge-cache.md"
    )


# -- the upgrade of schema-1 files ---------------------------------------------

# Schema 1 as the release before loopback ports were dropped wrote it.
_SCHEMA_1 = """
PRAGMA journal_mode = WAL;
CREATE TABLE judgments (
    key TEXT PRIMARY KEY, evaluator TEXT NOT NULL, prompt_version TEXT NOT NULL,
    provider TEXT NOT NULL, model TEXT NOT NULL, host TEXT NOT NULL, sampling TEXT NOT NULL,
    sample INTEGER NOT NULL, inputs TEXT NOT NULL, score INTEGER NOT NULL, reason TEXT NOT NULL,
    raw TEXT NOT NULL, tokens_in INTEGER NOT NULL, tokens_out INTEGER NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE judgment_probs (key TEXT PRIMARY KEY, probs TEXT NOT NULL, mass REAL NOT NULL);
CREATE TABLE served (key TEXT PRIMARY KEY, served_model TEXT NOT NULL, fingerprint TEXT NOT NULL);
CREATE TABLE calibrations (
    metric TEXT NOT NULL, host TEXT NOT NULL, model TEXT NOT NULL, prompt_version TEXT NOT NULL,
    rows INTEGER NOT NULL, kappa REAL, details TEXT NOT NULL, created REAL NOT NULL,
    PRIMARY KEY (metric, host, model, prompt_version)
);
CREATE TABLE embeddings (
    key TEXT PRIMARY KEY, endpoint TEXT NOT NULL, model TEXT NOT NULL, dimensions INTEGER,
    text_sha256 TEXT NOT NULL, length INTEGER NOT NULL, vector BLOB NOT NULL,
    created REAL NOT NULL
);
PRAGMA user_version = 1;
"""
_KEY_FIELDS = ("evaluator", "prompt_version", "provider", "model", "host", "sampling", "sample",
               "inputs")  # fmt: skip


def _digest(fields: dict[str, Any]) -> str:
    """A key as schema 1 hashed it: SHA-256 of the canonical JSON of its fields."""
    text = json.dumps(fields, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _old_judgment(conn: sqlite3.Connection, entry: dict[str, Any], host: str, score: int,
                  created: float) -> str:  # fmt: skip
    fields = {**{name: entry[name] for name in _KEY_FIELDS}, "host": host}
    key = _digest(fields)
    conn.execute(
        "INSERT INTO judgments VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (key, fields["evaluator"], fields["prompt_version"], fields["provider"],
         fields["model"], host, _canonical(fields["sampling"]), fields["sample"],
         _canonical(fields["inputs"]), score, f"scored {score} at {host}", "{}", 10, 2, created),
    )  # fmt: skip
    conn.execute("INSERT INTO served VALUES (?, ?, ?)", (key, f"served-{score}", f"fp-{score}"))
    return key


def _schema_1_cache(directory: Path, entry: dict[str, Any]) -> Path:
    """A schema-1 cache holding ``entry`` (made through a port) under two loopback
    ports and a remote one, an embedding and a calibration, keyed with their ports."""
    directory.mkdir()
    path = directory / "judge.sqlite3"
    conn = sqlite3.connect(path)
    conn.executescript(_SCHEMA_1)
    _old_judgment(conn, entry, "127.0.0.1:11434/v1", 3, 1000.0)
    _old_judgment(conn, entry, "127.0.0.1:8000/v1", 5, 2000.0)  # the newer one
    _old_judgment(conn, entry, "judge.example:8000/v1", 1, 3000.0)
    text_sha = hashlib.sha256(b"a").hexdigest()
    vector = bytes(range(16))
    for endpoint in ("127.0.0.1:11434/v1", "judge.example:8000/v1"):
        key = _digest({"kind": "embedding", "endpoint": endpoint, "model": "text-embed",
                       "dimensions": None, "text_sha256": text_sha})  # fmt: skip
        conn.execute("INSERT INTO embeddings VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                     (key, endpoint, "text-embed", None, text_sha, 4, vector, 1000.0))  # fmt: skip
    conn.execute(
        "INSERT INTO calibrations VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        ("similarity", "127.0.0.1:11434/v1", "gpt-judge", SIMILARITY.version, 40, 0.8,
         json.dumps({"kappa": 0.8, "rows": 40}), 1000.0),
    )  # fmt: skip
    conn.commit()
    conn.close()
    return path


def _version(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


def _hosts(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [row[0] for row in conn.execute("SELECT host FROM judgments ORDER BY host")]
    finally:
        conn.close()


def test_opening_a_schema_1_cache_rekeys_it_and_its_entries_still_hit(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    path = _schema_1_cache(tmp_path / "cache", _exported(fake_openai, tmp_path))
    calls = fake_openai.requests
    # A real judge on yet another port: served from the entries keyed with ports.
    cache = JudgeCache(tmp_path / "cache")
    hit = judge(fake_openai.base_url, cache).judge(SIMILARITY, INPUTS)
    assert fake_openai.requests == calls
    # Of the two loopback ports' judgments the newer is kept, with what served it.
    assert (hit.cached, hit.score, hit.reason) == (True, 5, "scored 5 at 127.0.0.1:8000/v1")
    assert (hit.served_model, hit.fingerprint) == ("served-5", "fp-5")
    assert _version(path) == SCHEMA_VERSION == 2
    assert _hosts(path) == ["127.0.0.1/v1", "judge.example:8000/v1"]
    config = {"model": "text-embed", "base_url": fake_openai.base_url, "api_key": SECRET}
    vectors = EmbeddingClient(JudgeClient(config, FAST, cache=cache)).vectors(["a"])
    assert vectors == {"a": bytes(range(16))} and fake_openai.embedding_requests == []
    assert cache.calibration("similarity", "127.0.0.1/v1", "gpt-judge", SIMILARITY.version) == {
        "kappa": 0.8, "rows": 40}  # fmt: skip
    stats = cache.stats()
    assert (stats["entries"], stats["embeddings"]) == (2, 2)
    cache.close()
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*) FROM served").fetchone()[0] == 2  # none left over
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()


def test_mode_none_reads_a_schema_1_cache_without_writing_it(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    path = _schema_1_cache(tmp_path / "cache", _exported(fake_openai, tmp_path))
    before = path.read_bytes()
    offline = JudgeCache(tmp_path / "cache", "none")
    hit = judge(fake_openai.base_url, offline).judge(SIMILARITY, INPUTS)
    assert (hit.cached, hit.score) == (True, 5)
    offline.close()
    assert path.read_bytes() == before and _version(path) == 1


_OPENER = """
import json, os, sys, time
from pytest_textsim.judge.cache import JudgeCache
directory, go, fields = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
while not os.path.exists(go):
    time.sleep(0.001)
print(JudgeCache(directory).get(JudgeCache.key(**fields)).score)
"""


def test_workers_opening_a_schema_1_cache_at_once_upgrade_it_once(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    entry = _exported(fake_openai, tmp_path)
    path = _schema_1_cache(tmp_path / "cache", entry)
    fields = json.dumps({**{n: entry[n] for n in _KEY_FIELDS}, "host": "127.0.0.1/v1"})
    go = tmp_path / "go"
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _OPENER, str(path.parent), str(go), fields],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    time.sleep(1.0)  # every worker has imported and waits for the others
    go.touch()
    outputs = [w.communicate(timeout=120) for w in workers]
    assert [w.returncode for w in workers] == [0] * 4, outputs
    assert [out.strip() for out, _ in outputs] == ["5"] * 4
    assert _version(path) == 2 and _hosts(path) == ["127.0.0.1/v1", "judge.example:8000/v1"]


def test_an_upgrade_that_fails_half_way_leaves_the_file_as_it_was(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    path = _schema_1_cache(tmp_path / "cache", _exported(fake_openai, tmp_path))
    conn = sqlite3.connect(path)
    # The judgments are re-keyed first; the error comes after them, mid-upgrade.
    conn.execute(
        "CREATE TRIGGER fail_midway BEFORE INSERT ON embeddings "
        "BEGIN SELECT RAISE(ABORT, 'stopped mid-upgrade'); END"
    )
    conn.commit()
    conn.close()
    with pytest.raises(sqlite3.IntegrityError, match="stopped mid-upgrade"):
        JudgeCache(path.parent).stats()
    assert _version(path) == 1
    assert _hosts(path) == ["127.0.0.1:11434/v1", "127.0.0.1:8000/v1", "judge.example:8000/v1"]
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER fail_midway")
    conn.commit()
    conn.close()
    assert JudgeCache(path.parent).stats()["entries"] == 2 and _version(path) == 2


_SLOW_UPGRADE = """
import sys
from pytest_textsim.judge.cache import JudgeCache
JudgeCache(sys.argv[1]).stats()
"""


def test_a_killed_upgrade_leaves_the_file_as_it_was(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    path = _schema_1_cache(tmp_path / "cache", _exported(fake_openai, tmp_path))
    conn = sqlite3.connect(path)
    # Each re-keyed judgment then takes a while: long enough to be killed in between.
    conn.execute(
        "CREATE TRIGGER slow BEFORE INSERT ON judgments BEGIN SELECT COUNT(*) FROM "
        "(WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 5000000) "
        "SELECT x FROM n); END"
    )
    conn.commit()
    conn.close()
    upgrading = subprocess.Popen([sys.executable, "-c", _SLOW_UPGRADE, str(path.parent)])
    try:
        deadline = time.monotonic() + 60
        probe = sqlite3.connect(path, timeout=0)
        while True:  # until the upgrade holds the write lock
            assert upgrading.poll() is None and time.monotonic() < deadline
            try:
                probe.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError:
                break
            probe.execute("ROLLBACK")
            time.sleep(0.01)
        probe.close()
        time.sleep(0.3)
        os.kill(upgrading.pid, signal.SIGKILL)
    finally:
        if upgrading.poll() is None:
            upgrading.kill()
        upgrading.wait(timeout=60)
    assert upgrading.returncode == -signal.SIGKILL
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.execute("DROP TRIGGER slow")
    conn.commit()
    conn.close()
    assert _version(path) == 1
    assert _hosts(path) == ["127.0.0.1:11434/v1", "127.0.0.1:8000/v1", "judge.example:8000/v1"]
    assert JudgeCache(path.parent).stats()["entries"] == 2 and _version(path) == 2


def test_an_export_of_a_release_that_kept_ports_imports_without_them(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    entry = _exported(fake_openai, tmp_path)
    cache = JudgeCache(tmp_path / "cache")
    assert cache.import_jsonl([json.dumps({**entry, "host": "127.0.0.1:11434/v1"})]) == 1
    (imported,) = cache.entries()
    assert imported["host"] == "127.0.0.1/v1"
    cache.close()
    hit = judge(fake_openai.base_url, JudgeCache(tmp_path / "cache", "none"))
    assert hit.judge(SIMILARITY, INPUTS).cached
