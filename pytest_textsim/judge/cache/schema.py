"""The judge cache's tables, its schema version and the upgrade of older files,
and the keys: which fields identify a judgment or an embedding."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any

from ..endpoints import stored_endpoint

# 1: the first release's tables. 2: keys without a loopback host's port
# (``127.0.0.1/v1``, not ``127.0.0.1:8000/v1``); opening a schema-1 file
# re-keys its entries (see _upgrade).
SCHEMA_VERSION = 2

_KEY_FIELDS = (
    "evaluator",
    "prompt_version",
    "provider",
    "model",
    "host",
    "sampling",
    "sample",
    "inputs",
)
_COLUMNS = (
    "key", "evaluator", "prompt_version", "provider", "model", "host", "sampling", "sample",
    "inputs", "score", "reason", "raw", "tokens_in", "tokens_out", "created",
)  # fmt: skip
_SCHEMA = """
CREATE TABLE IF NOT EXISTS judgments (
    key TEXT PRIMARY KEY,
    evaluator TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    host TEXT NOT NULL,
    sampling TEXT NOT NULL,
    sample INTEGER NOT NULL,
    inputs TEXT NOT NULL,
    score INTEGER NOT NULL,
    reason TEXT NOT NULL,
    raw TEXT NOT NULL,
    tokens_in INTEGER NOT NULL,
    tokens_out INTEGER NOT NULL,
    created REAL NOT NULL
)
"""
# Tables added after schema 1 was released, without a schema bump of their
# own: a file without them, e.g. a committed cache opened read-only, is read
# as having no entries in them.
_EXTRA_SCHEMA = (
    # The score tokens' probabilities of a judgment made with logprobs (G-Eval).
    """
CREATE TABLE IF NOT EXISTS judgment_probs (
    key TEXT PRIMARY KEY,
    probs TEXT NOT NULL,
    mass REAL NOT NULL
)
""",
    # What served each judgment: the reply's model and system_fingerprint.
    """
CREATE TABLE IF NOT EXISTS served (
    key TEXT PRIMARY KEY,
    served_model TEXT NOT NULL,
    fingerprint TEXT NOT NULL
)
""",
    # Agreement of a judge with human labels (``textsim calibrate``), one row per
    # metric, endpoint, model and prompt version.
    """
CREATE TABLE IF NOT EXISTS calibrations (
    metric TEXT NOT NULL,
    host TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    rows INTEGER NOT NULL,
    kappa REAL,
    details TEXT NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (metric, host, model, prompt_version)
)
""",
    # One embedding vector per (endpoint, model, dimensions, text), as float32 bytes.
    """
CREATE TABLE IF NOT EXISTS embeddings (
    key TEXT PRIMARY KEY,
    endpoint TEXT NOT NULL,
    model TEXT NOT NULL,
    dimensions INTEGER,
    text_sha256 TEXT NOT NULL,
    length INTEGER NOT NULL,
    vector BLOB NOT NULL,
    created REAL NOT NULL
)
""",
    # A Batch API batch of judgments submitted and not yet collected (``textsim score
    # --judge-batch``): its ids, so a run started again polls it instead of paying twice.
    """
CREATE TABLE IF NOT EXISTS judge_batches (
    batch_id TEXT PRIMARY KEY,
    endpoint TEXT NOT NULL,
    input_file_id TEXT NOT NULL,
    keys TEXT NOT NULL,
    created REAL NOT NULL
)
""",
    # A batch being created whose id is not known yet: kept (with its input file's
    # id) before the create call, so a run killed before the id came back finds the
    # batch at the provider instead of submitting it again.
    """
CREATE TABLE IF NOT EXISTS judge_submissions (
    token TEXT PRIMARY KEY,
    endpoint TEXT NOT NULL,
    input_file_id TEXT NOT NULL,
    keys TEXT NOT NULL,
    created REAL NOT NULL
)
""",
)


def _create_tables(conn: sqlite3.Connection) -> None:
    conn.execute(_SCHEMA)
    for table in _EXTRA_SCHEMA:
        conn.execute(table)


def _upgrade(conn: sqlite3.Connection) -> None:
    """Bring the tables of an older schema to :data:`SCHEMA_VERSION`, inside the
    caller's transaction (so an interrupted upgrade leaves the file as it was).

    Schema 2 drops a loopback host's port from every stored endpoint: each
    judgment, embedding and calibration keyed ``127.0.0.1:8000/v1`` is re-keyed
    ``127.0.0.1/v1``. Where two ports held the same entry, the newest is kept.
    """
    for (host,) in conn.execute("SELECT DISTINCT host FROM judgments").fetchall():
        if stored_endpoint(host) != host:
            _move_judgments(conn, host, stored_endpoint(host))
    rows = conn.execute(
        "SELECT key, endpoint, model, dimensions, text_sha256, length, vector, created "
        "FROM embeddings ORDER BY created"
    ).fetchall()
    for old_key, endpoint, model, dimensions, text_sha256, *rest in rows:
        if stored_endpoint(endpoint) == endpoint:
            continue
        new = embedding_key(stored_endpoint(endpoint), model, dimensions, text_sha256)
        conn.execute("DELETE FROM embeddings WHERE key = ?", (old_key,))
        kept = conn.execute("SELECT created FROM embeddings WHERE key = ?", (new.digest,))
        if _newer(kept.fetchone(), rest[-1]):
            continue
        conn.execute(
            "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (new.digest, new["endpoint"], model, dimensions, text_sha256, *rest),
        )
    rows = conn.execute(
        "SELECT metric, host, model, prompt_version, rows, kappa, details, created "
        "FROM calibrations ORDER BY created"
    ).fetchall()
    for metric, host, model, prompt_version, *rest in rows:
        if stored_endpoint(host) == host:
            continue
        where = "metric = ? AND host = ? AND model = ? AND prompt_version = ?"
        old = (metric, host, model, prompt_version)
        conn.execute(f"DELETE FROM calibrations WHERE {where}", old)
        renamed = (metric, stored_endpoint(host), model, prompt_version)
        kept = conn.execute(f"SELECT created FROM calibrations WHERE {where}", renamed)
        if not _newer(kept.fetchone(), rest[-1]):
            conn.execute(
                "INSERT INTO calibrations VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (*renamed, *rest)
            )


def _newer(kept: tuple[Any, ...] | None, created: float) -> bool:
    """The row already under the new key (``(created,)`` or ``None``) is as new or newer."""
    return kept is not None and float(kept[0]) >= created


def _move_judgments(conn: sqlite3.Connection, old_host: str, new_host: str) -> int:
    """Re-key every judgment stored under ``old_host`` to ``new_host``, with its score
    probabilities and what served it; returns how many. Where the new key already
    has a judgment, the newer of the two is kept. Runs in the caller's transaction."""
    columns = ", ".join(_COLUMNS)
    rows = conn.execute(
        f"SELECT {columns} FROM judgments WHERE host = ? ORDER BY created", (old_host,)
    ).fetchall()
    for row in rows:
        entry = dict(zip(_COLUMNS, row))
        fields = {name: entry[name] for name in _KEY_FIELDS}
        fields.update(host=new_host, sampling=json.loads(entry["sampling"]),
                      inputs=json.loads(entry["inputs"]))  # fmt: skip
        old_key, new_key = entry["key"], judgment_key(**fields).digest
        conn.execute("DELETE FROM judgments WHERE key = ?", (old_key,))
        kept = conn.execute("SELECT created FROM judgments WHERE key = ?", (new_key,))
        if _newer(kept.fetchone(), entry["created"]):
            for table in ("judgment_probs", "served"):
                conn.execute(f"DELETE FROM {table} WHERE key = ?", (old_key,))
            continue
        conn.execute(
            f"INSERT OR REPLACE INTO judgments ({columns}) "
            f"VALUES ({', '.join('?' for _ in _COLUMNS)})",
            tuple({**entry, "key": new_key, "host": new_host}[c] for c in _COLUMNS),
        )
        # A rubric's score probabilities and what served it follow their judgment.
        for table in ("judgment_probs", "served"):
            conn.execute(f"DELETE FROM {table} WHERE key = ?", (new_key,))
            conn.execute(f"UPDATE {table} SET key = ? WHERE key = ?", (new_key, old_key))
    return len(rows)


def _upgraded_copy(conn: sqlite3.Connection) -> sqlite3.Connection:
    """An older file opened read-only, copied into memory and upgraded there.

    Mode ``none`` writes nothing, so a committed cache of an older release is
    read through this copy; a run with the cache on upgrades the file itself.
    """
    copy = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    try:
        conn.backup(copy)
        copy.execute("BEGIN")
        _create_tables(copy)
        _upgrade(copy)
        copy.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        copy.execute("COMMIT")
    except BaseException:
        copy.close()
        raise
    conn.close()
    return copy


class CacheKey(dict):  # type: ignore[type-arg]
    """The key fields of one judgment, with their hash in ``digest``."""

    @property
    def digest(self) -> str:
        canonical = json.dumps(self, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def embedding_key(endpoint: str, model: str, dimensions: int | None, text_sha256: str) -> CacheKey:
    """The key of one text's vector: the endpoint (:func:`endpoint_key`), the model,
    the dimensions asked for and the SHA-256 of the text."""
    return CacheKey(kind="embedding", endpoint=endpoint, model=model, dimensions=dimensions,
                    text_sha256=text_sha256)  # fmt: skip


def judgment_key(**fields: Any) -> CacheKey:
    """Build a judgment's key from :data:`_KEY_FIELDS`; all are required."""
    missing = [name for name in _KEY_FIELDS if name not in fields]
    if missing or len(fields) != len(_KEY_FIELDS):
        raise TypeError(f"cache key needs exactly {_KEY_FIELDS}, missing {missing}")
    return CacheKey(fields)


def _column(value: Any) -> Any:
    """Store dicts as canonical JSON text; everything else as is."""
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return value
