"""The records of the judge cache: judgments, embedding vectors, calibrations,
and what a miss in mode ``none`` is told about entries nearby."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import time
from collections.abc import Sequence
from typing import Any, Protocol, Union, runtime_checkable

from ...formatting import plural
from ...settings.modes import RecordMode
from ..judgment import Judgment
from .schema import _COLUMNS, _KEY_FIELDS, CacheKey, _column, judgment_key
from .sqlite import Engine, _while_busy, _write


@runtime_checkable
class Judgments(Protocol):
    """Judgments by key: what the judge client reads before a call and writes after.

    ``mode`` (:class:`~pytest_textsim.settings.modes.RecordMode`) says what the run may do
    with the store: read it, call the judge on a miss, write. A miss is ``None``.
    """

    mode: RecordMode

    def get(self, key: CacheKey) -> Judgment | None: ...

    def put(self, key: CacheKey, judgment: Judgment) -> None: ...


@runtime_checkable
class Vectors(Protocol):
    """Embedding vectors (float32 bytes) by key: what ``semantic_similarity`` keeps."""

    mode: RecordMode

    def get_vectors(self, keys: Sequence[CacheKey]) -> dict[str, bytes]:
        """The stored vectors of ``keys``, by ``key.digest``; missing ones left out."""
        ...

    def put_vectors(self, entries: Sequence[tuple[CacheKey, bytes]]) -> None: ...


@runtime_checkable
class Calibrations(Protocol):
    """A judge's agreement with human labels, by metric, endpoint, model and prompt
    (``textsim calibrate`` writes it; the plugin reports it)."""

    mode: RecordMode

    def calibration(
        self, metric: str, host: str, model: str, prompt_version: str
    ) -> dict[str, Any] | None: ...

    def put_calibration(
        self, metric: str, host: str, model: str, prompt_version: str, details: dict[str, Any]
    ) -> None: ...


#: What ``cache=`` takes, in the manner of hypothesis's ``ExampleDatabase``: an
#: object with one or more of the three narrow stores. What it lacks is not cached
#: (a store of judgments alone leaves the embedding vectors uncached).
Store = Union[Judgments, Vectors, Calibrations]


@runtime_checkable
class JudgmentStore(Judgments, Vectors, Calibrations, Protocol):
    """All three stores, with what the SQLite cache adds and a store may have too:
    the hints of a miss in mode ``none``, the check that it can be written before a
    paid call, and ``close``. :func:`miss_hint`, :func:`ensure_writable` and
    :func:`close` ask any store for them, and do without when it lacks them."""

    def key(self, **fields: Any) -> CacheKey: ...

    def ensure_writable(self) -> None: ...

    def miss_hint(self, key: CacheKey, point: str, record: str) -> str: ...

    def embedding_miss_hint(self, endpoint: str, model: str, point: str, record: str) -> str: ...

    def close(self) -> None: ...


def is_store(store: object) -> bool:
    """Whether ``store`` is one of the three stores at least."""
    return isinstance(store, (Judgments, Vectors, Calibrations))


def judgments_of(store: object) -> Judgments | None:
    """``store`` as a store of judgments, or ``None`` when it keeps none (or is off)."""
    return store if isinstance(store, Judgments) and store.mode.enabled else None


def vectors_of(store: object) -> Vectors | None:
    """``store`` as a store of embedding vectors, or ``None``."""
    return store if isinstance(store, Vectors) and store.mode.enabled else None


def calibrations_of(store: object) -> Calibrations | None:
    """``store`` as a store of calibrations, or ``None``."""
    return store if isinstance(store, Calibrations) and store.mode.enabled else None


def miss_hint(store: object, key: CacheKey, point: str, record: str) -> str:
    """The store's hint for a judgment it lacks in mode ``none``, else ``record``."""
    hint = getattr(store, "miss_hint", None)
    return str(hint(key, point, record)) if hint is not None else record


def embedding_miss_hint(store: object, endpoint: str, model: str, point: str, record: str) -> str:
    """The store's hint for a vector it lacks in mode ``none``, else ``record``."""
    hint = getattr(store, "embedding_miss_hint", None)
    return str(hint(endpoint, model, point, record)) if hint is not None else record


def ensure_writable(store: object) -> None:
    """The store's check that it can be written, when it has one."""
    check = getattr(store, "ensure_writable", None)
    if check is not None:
        check()


def close(store: object) -> None:
    """Close the store, when it has anything to close."""
    closing = getattr(store, "close", None)
    if closing is not None:
        closing()


class Stores(Engine):
    """Judgments, vectors and calibrations, read and written through the engine."""

    @staticmethod
    def key(**fields: Any) -> CacheKey:
        """Build a judgment's key (:func:`~.schema.judgment_key`); all fields are required."""
        return judgment_key(**fields)

    def get(self, key: CacheKey) -> Judgment | None:
        """The stored judgment for ``key``, or ``None``."""
        sql = "SELECT score, reason, raw, tokens_in, tokens_out FROM judgments WHERE key = ?"
        probs_sql = "SELECT probs, mass FROM judgment_probs WHERE key = ?"
        served_sql = "SELECT served_model, fingerprint FROM served WHERE key = ?"

        def read(conn: sqlite3.Connection) -> tuple[Any, Any, Any]:
            row = _while_busy(lambda: conn.execute(sql, (key.digest,)).fetchone())
            probs = served = None
            # Tables a read-only cache written by an older version may lack.
            if row is not None and self._has_table(conn, "judgment_probs"):
                probs = _while_busy(lambda: conn.execute(probs_sql, (key.digest,)).fetchone())
            if row is not None and self._has_table(conn, "served"):
                served = _while_busy(lambda: conn.execute(served_sql, (key.digest,)).fetchone())
            return row, probs, served

        with self._lock:
            row, probs, served = self._guarded(read)
        if row is None:
            return None
        judgment = Judgment(int(row[0]), row[1], row[2], int(row[3]), int(row[4]), cached=True)
        if probs is not None:
            distribution = tuple((int(s), float(p)) for s, p in json.loads(probs[0]))
            judgment = dataclasses.replace(judgment, probs=distribution, mass=float(probs[1]))
        if served is not None:
            judgment = dataclasses.replace(
                judgment, served_model=str(served[0]), fingerprint=str(served[1])
            )
        return judgment

    def put(self, key: CacheKey, judgment: Judgment) -> None:
        """Store ``judgment`` under ``key``, replacing an older one."""
        row = {
            "key": key.digest,
            **{name: _column(key[name]) for name in _KEY_FIELDS},
            "score": judgment.score,
            "reason": judgment.reason,
            "raw": judgment.raw,
            "tokens_in": judgment.tokens_in,
            "tokens_out": judgment.tokens_out,
            "created": time.time(),
        }
        probs = []
        if judgment.probs is not None:
            probs.append((key.digest, json.dumps(judgment.probs), judgment.mass))
        served = []
        if judgment.served_model or judgment.fingerprint:
            served.append((key.digest, judgment.served_model, judgment.fingerprint))
        self._write([row], probs, served)

    def _write(
        self,
        rows: list[dict[str, Any]],
        probs: Sequence[tuple[str, str, float]] = (),
        served: Sequence[tuple[str, str, str]] = (),
    ) -> None:
        """Store judgment rows, with their score probabilities and what served them."""
        sql = (
            f"INSERT OR REPLACE INTO judgments ({', '.join(_COLUMNS)}) "
            f"VALUES ({', '.join('?' for _ in _COLUMNS)})"
        )
        values = [tuple(r[c] for c in _COLUMNS) for r in rows]
        keys = [(r["key"],) for r in rows]

        def write(conn: sqlite3.Connection) -> None:
            conn.executemany(sql, values)
            # A judgment rewritten without logprobs must not keep old probabilities.
            conn.executemany("DELETE FROM judgment_probs WHERE key = ?", keys)
            if probs:
                conn.executemany("INSERT INTO judgment_probs VALUES (?, ?, ?)", probs)
            # ... nor what served an older reply.
            conn.executemany("DELETE FROM served WHERE key = ?", keys)
            if served:
                conn.executemany("INSERT INTO served VALUES (?, ?, ?)", served)

        with self._lock:
            self._guarded(lambda conn: _write(conn, write))

    # -- embeddings --------------------------------------------------------------

    def get_vectors(self, keys: Sequence[CacheKey]) -> dict[str, bytes]:
        """The stored float32 vectors of ``keys`` (embedding keys), by digest."""
        found: dict[str, bytes] = {}
        digests = [key.digest for key in keys]

        def read(conn: sqlite3.Connection) -> None:
            if not self._has_table(conn, "embeddings"):
                return
            for start in range(0, len(digests), 500):  # SQLite's variable limit
                chunk = digests[start : start + 500]
                marks = ", ".join("?" for _ in chunk)
                sql = f"SELECT key, vector FROM embeddings WHERE key IN ({marks})"
                rows = _while_busy(
                    lambda sql=sql, chunk=chunk: conn.execute(sql, chunk).fetchall()  # type: ignore[misc]
                )
                found.update((k, bytes(v)) for k, v in rows)

        with self._lock:
            self._guarded(read)
        return found

    def put_vectors(self, entries: Sequence[tuple[CacheKey, bytes]]) -> None:
        """Store float32 vectors under their embedding keys, in one transaction."""
        now = time.time()
        values = [
            (key.digest, key["endpoint"], key["model"], key["dimensions"], key["text_sha256"],
             len(vector) // 4, vector, now)
            for key, vector in entries
        ]  # fmt: skip

        sql = "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        with self._lock:
            self._guarded(lambda conn: _write(conn, lambda c: c.executemany(sql, values)))

    def other_endpoints(self, key: CacheKey) -> list[str]:
        """The endpoints (``host/path``) holding ``key``'s judgment under another
        endpoint, or under the host alone (keys made before the path)."""
        fields = {name: _column(key[name]) for name in _KEY_FIELDS if name != "host"}
        sql = (
            "SELECT DISTINCT host FROM judgments WHERE "
            + " AND ".join(f"{name} = ?" for name in fields)
            + " AND host != ? ORDER BY host"
        )
        args = [*fields.values(), key["host"]]
        with self._lock:
            rows = self._guarded(lambda conn: conn.execute(sql, args).fetchall())
        return [str(row[0]) for row in rows]

    def miss_hint(self, key: CacheKey, point: str, record: str) -> str:
        """What to do about a judgment the cache lacks in mode ``none``, from what it
        holds nearby: the judgment itself under the host alone (re-key it) or at
        other endpoints (``point``: the setting naming the endpoint, to set there);
        else ``record`` (how to record it), beside the entries for the model at other
        endpoints, with counts, and for other models at this endpoint."""
        others = self.other_endpoints(key)
        host = str(key["host"]).partition("/")[0]
        if host in others:
            return (
                f"; the cache has it under {host}, as keyed before the cache key had the "
                "endpoint's path: re-key it with textsim cache migrate --base-url URL"
            )
        model, endpoint = str(key["model"]), str(key["host"])
        elsewhere, other_models = self._nearby("judgments", "host", model, endpoint)
        if others:
            counts = [f"{plural(n, 'entry')} for {model} at {e}" for e, n in elsewhere[:3]]
            return (
                f"; the cache has this judgment at {', '.join(others)} ({', '.join(counts)}): "
                f"set {point} to that endpoint to use them"
            )
        return record + _nearby_hints(model, elsewhere, other_models, point)

    def embedding_miss_hint(self, endpoint: str, model: str, point: str, record: str) -> str:
        """For a missing vector in mode ``none``: ``record``, and the entries for
        ``model`` at other endpoints (``point`` names the endpoint's setting) and for
        other models at ``endpoint``."""
        elsewhere, other_models = self._nearby("embeddings", "endpoint", model, endpoint)
        return record + _nearby_hints(model, elsewhere, other_models, point)

    def _nearby(
        self, table: str, column: str, model: str, endpoint: str
    ) -> tuple[list[tuple[str, int]], int]:
        """The entries for ``model`` at other endpoints, most first (``(endpoint,
        count)``, four at most), and the count of other models' entries at ``endpoint``."""
        by_endpoint = (
            f"SELECT {column}, COUNT(*) FROM {table} WHERE model = ? AND {column} != ? "
            f"GROUP BY {column} ORDER BY COUNT(*) DESC, {column} LIMIT 4"
        )
        other_models = f"SELECT COUNT(*) FROM {table} WHERE model != ? AND {column} = ?"

        def count(conn: sqlite3.Connection) -> tuple[list[tuple[str, int]], int]:
            if not self._has_table(conn, table):
                return [], 0
            rows = conn.execute(by_endpoint, (model, endpoint)).fetchall()
            row = conn.execute(other_models, (model, endpoint)).fetchone()
            return [(str(e), int(n)) for e, n in rows], int(row[0])

        with self._lock:
            found: tuple[list[tuple[str, int]], int] = self._guarded(count)
        return found

    # -- calibrations (the `textsim calibrate` command) ---------------------------

    def put_calibration(
        self, metric: str, host: str, model: str, prompt_version: str, details: dict[str, Any]
    ) -> None:
        """Store the agreement of a judge with human labels, replacing an older one."""
        kappa = details.get("kappa")
        row = (metric, host, model, prompt_version, int(details.get("rows", 0)),
               None if kappa is None else float(kappa), json.dumps(details, sort_keys=True),
               time.time())  # fmt: skip

        sql = (
            "INSERT OR REPLACE INTO calibrations (metric, host, model, prompt_version, "
            "rows, kappa, details, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        )
        with self._lock:
            self._guarded(lambda conn: _write(conn, lambda c: c.execute(sql, row)))

    def calibration(
        self, metric: str, host: str, model: str, prompt_version: str
    ) -> dict[str, Any] | None:
        """The stored calibration of this judge and prompt, or ``None``."""
        sql = (
            "SELECT details FROM calibrations WHERE metric = ? AND host = ? "
            "AND model = ? AND prompt_version = ?"
        )
        args = (metric, host, model, prompt_version)

        def read(conn: sqlite3.Connection) -> Any:
            # None also for a read-only cache written before calibrations existed.
            if not self._has_table(conn, "calibrations"):
                return None
            return _while_busy(lambda: conn.execute(sql, args).fetchone())

        with self._lock:
            row = self._guarded(read)
        if row is None:
            return None
        details: dict[str, Any] = json.loads(row[0])
        return details


    # -- batches (``textsim score --judge-batch``) ---------------------------------

    def put_submission(
        self, token: str, endpoint: str, input_file_id: str, keys: Sequence[str]
    ) -> None:
        """Keep a batch about to be created (``token``: this submission's own id),
        until :meth:`put_batch` keeps its id or :meth:`forget_submission` drops it."""
        row = (token, endpoint, input_file_id, json.dumps(sorted(keys)), time.time())
        sql = "INSERT OR REPLACE INTO judge_submissions VALUES (?, ?, ?, ?, ?)"
        with self._lock:
            self._guarded(lambda conn: _write(conn, lambda c: c.execute(sql, row)))

    def pending_submissions(
        self, endpoint: str | Sequence[str]
    ) -> list[tuple[str, str, list[str], float]]:
        """``(token, input file id, keys, when kept)`` of each submission kept for
        ``endpoint`` (or any of several) whose batch id was never kept, oldest first."""
        names = _names(endpoint)
        sql = ("SELECT token, input_file_id, keys, created FROM judge_submissions "
               f"WHERE endpoint IN ({_marks(names)}) ORDER BY created")  # fmt: skip

        def read(conn: sqlite3.Connection) -> list[Any]:
            if not self._has_table(conn, "judge_submissions"):
                return []
            return list(_while_busy(lambda: conn.execute(sql, names).fetchall()))

        with self._lock:
            rows = self._guarded(read)
        return [(str(t), str(f), list(json.loads(k)), float(c)) for t, f, k, c in rows]

    def forget_submission(self, token: str) -> None:
        """The submission ``token`` created no batch: nothing of it is looked for again."""
        sql = "DELETE FROM judge_submissions WHERE token = ?"
        with self._lock:
            self._guarded(lambda conn: _write(conn, lambda c: c.execute(sql, (token,))))

    def put_batch(
        self,
        batch_id: str,
        endpoint: str,
        input_file_id: str,
        keys: Sequence[str],
        submission: str = "",
    ) -> None:
        """Keep a submitted batch's ids and the judgment keys it asks, until collected;
        the submission ``submission`` it came from is dropped in the same transaction."""
        row = (batch_id, endpoint, input_file_id, json.dumps(sorted(keys)), time.time())
        sql = "INSERT OR REPLACE INTO judge_batches VALUES (?, ?, ?, ?, ?)"
        drop = "DELETE FROM judge_submissions WHERE token = ?"

        def body(conn: sqlite3.Connection) -> None:
            conn.execute(sql, row)
            if submission:
                conn.execute(drop, (submission,))

        with self._lock:
            self._guarded(lambda conn: _write(conn, body))

    def pending_batches(
        self, endpoint: str | Sequence[str]
    ) -> list[tuple[str, str, list[str], str]]:
        """``(batch id, input file id, keys, endpoint kept)`` of each batch kept for
        ``endpoint`` (or any of several), oldest first."""
        names = _names(endpoint)
        sql = ("SELECT batch_id, input_file_id, keys, endpoint FROM judge_batches "
               f"WHERE endpoint IN ({_marks(names)}) ORDER BY created")  # fmt: skip

        def read(conn: sqlite3.Connection) -> list[Any]:
            if not self._has_table(conn, "judge_batches"):
                return []
            return list(_while_busy(lambda: conn.execute(sql, names).fetchall()))

        with self._lock:
            rows = self._guarded(read)
        return [(str(b), str(f), list(json.loads(k)), str(e)) for b, f, k, e in rows]

    def forget_batch(self, batch_id: str) -> None:
        """The batch was collected (or ended): nothing of it is waited for again."""
        sql = "DELETE FROM judge_batches WHERE batch_id = ?"
        with self._lock:
            self._guarded(lambda conn: _write(conn, lambda c: c.execute(sql, (batch_id,))))

    def drop_collected(self, endpoint: str | Sequence[str]) -> list[str]:
        """Drop each batch (and submission) kept for ``endpoint`` (or any of several)
        whose judgments are all cached (a run stopped after collecting it, before
        forgetting it): no run would match it again. Those dropped, as ``textsim
        cache batches`` names them (``batch_2``, ``submission TOKEN``)."""
        dropped: list[str] = []
        names = _names(endpoint)

        def body(conn: sqlite3.Connection) -> None:
            for table, column in (("judge_batches", "batch_id"), ("judge_submissions", "token")):
                rows = conn.execute(f"SELECT {column}, keys FROM {table} WHERE endpoint "
                                    f"IN ({_marks(names)})", names).fetchall()  # fmt: skip
                for name, keys in rows:
                    wanted = json.loads(keys)
                    if cached_count(conn, wanted) == len(wanted):
                        conn.execute(f"DELETE FROM {table} WHERE {column} = ?", (name,))
                        dropped.append(str(name) if table == "judge_batches" else
                                       f"submission {name}")  # fmt: skip

        with self._lock:
            self._guarded(lambda conn: _write(conn, body))
        return dropped


def _names(endpoint: str | Sequence[str]) -> tuple[str, ...]:
    """The endpoints a batch may be kept under: ``endpoint``, or each of several."""
    return (endpoint,) if isinstance(endpoint, str) else tuple(endpoint)


def _marks(names: Sequence[str]) -> str:
    return ", ".join("?" for _ in names)


def cached_count(conn: sqlite3.Connection, keys: Sequence[str]) -> int:
    """How many of the judgment ``keys`` (digests) the cache holds."""
    found = 0
    for start in range(0, len(keys), 500):  # SQLite's variable limit
        chunk = list(keys[start : start + 500])
        marks = ", ".join("?" for _ in chunk)
        sql = f"SELECT COUNT(*) FROM judgments WHERE key IN ({marks})"
        found += int(conn.execute(sql, chunk).fetchone()[0])
    return found


def _nearby_hints(
    model: str, elsewhere: list[tuple[str, int]], other_models: int, point: str
) -> str:
    """``; the cache has 44 entries for gpt-4o-mini at 127.0.0.1/v1: ...`` and the
    other models' entries at this endpoint, or ``""``."""
    hints = []
    if elsewhere:
        shown = [f"{plural(n, 'entry')} for {model} at {e}" for e, n in elsewhere[:3]]
        more = " and at other endpoints" if len(elsewhere) > 3 else ""
        hints.append(
            f"the cache has {', '.join(shown)}{more}: if the endpoint moved, set {point} to it "
            "rather than record again"
        )
    if other_models:
        hints.append(f"{_exist(other_models)} for other models at this endpoint")
    return "".join(f"; {hint}" for hint in hints) + ("; see docs/judge-cache.md" * bool(hints))


def _exist(count: int) -> str:
    """``1 entry exists``, ``3 entries exist``."""
    return f"{plural(count, 'entry')} {'exists' if count == 1 else 'exist'}"
