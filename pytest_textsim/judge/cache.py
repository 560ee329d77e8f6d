"""A persistent judge cache: one SQLite database in WAL mode, safe for parallel workers.

Each judgment is keyed by a hash of everything that can change the judge's
answer (evaluator, prompt version, provider, model, the endpoint's host and
path without a loopback host's port, sampling parameters, sample index and the
exact inputs). The row stores those fields in the clear too, so that an
exported cache can be reviewed, plus the score, reason, raw reply, token usage
and a timestamp. Never an API key.

Modes, named like pytest-recording's record modes: ``once`` (use hits, call
and store on misses), ``none`` (never call: a miss is an error), ``rewrite``
(call again and overwrite), ``off`` (no cache at all).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import random
import sqlite3
import threading
import time
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TextIO, TypeVar

from ..formatting import plural
from ..jsonl import Line, json_type, read_objects
from .endpoints import endpoint_host, endpoint_key, stored_endpoint
from .errors import JudgeError

MODES = ("once", "none", "rewrite", "off")
# 1: the first release's tables. 2: keys without a loopback host's port
# (``127.0.0.1/v1``, not ``127.0.0.1:8000/v1``); opening a schema-1 file
# re-keys its entries (see _upgrade).
SCHEMA_VERSION = 2
DB_NAME = "judge.sqlite3"
# How long a process keeps trying when another one holds the database.
BUSY_SECONDS = 60.0

_T = TypeVar("_T")


def _while_busy(action: Callable[[], _T]) -> _T:
    """Run ``action``, again after a short random pause while SQLite says locked/busy.

    SQLite's busy timeout does not cover every case: while another process
    switches a new database to WAL mode or recovers its WAL index, a connection
    gets "database is locked" at once. Seen with 12 processes meeting a new
    cache file on a loaded 2-core machine; without this, one worker failed.
    """
    deadline = time.monotonic() + BUSY_SECONDS
    while True:
        try:
            return action()
        except sqlite3.OperationalError as exc:
            message = str(exc)
            if ("locked" not in message and "busy" not in message) or time.monotonic() > deadline:
                raise
        time.sleep(0.01 + random.random() * 0.04)


# SQLite's primary result codes for a damaged file (the extended codes keep them
# in the low byte). A locked database or a full disk is not damage: those are
# OperationalErrors with other codes, and the file is left where it is.
_SQLITE_CORRUPT, _SQLITE_NOTADB = 11, 26


def is_corrupt(exc: BaseException) -> bool:
    """``exc`` says the database file is damaged (``SQLITE_CORRUPT``/``SQLITE_NOTADB``)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    if code is not None:
        return code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)
    message = str(exc).lower()
    return "malformed" in message or "not a database" in message


def _damaged(path: Path) -> bool:
    """The file at ``path`` fails SQLite's structural check (every page is read)."""
    try:
        conn = sqlite3.connect(path, timeout=60)
        try:
            rows = conn.execute("PRAGMA quick_check").fetchall()
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return is_corrupt(exc)
    return rows != [("ok",)]


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass


def _write(conn: sqlite3.Connection, body: Callable[[sqlite3.Connection], object]) -> None:
    """``body(conn)`` as one write transaction: begun IMMEDIATE and committed, each
    waiting while another writer holds the lock; rolled back on any error."""
    _while_busy(lambda: conn.execute("BEGIN IMMEDIATE"))
    try:
        body(conn)
    except BaseException:
        _rollback(conn)
        raise
    _while_busy(lambda: conn.execute("COMMIT"))


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
        old_key, new_key = entry["key"], JudgeCache.key(**fields).digest
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


@dataclass(frozen=True)
class Judgment:
    """One judged sample: the score, the judge's reason and its raw reply.

    With logprobs (G-Eval), ``probs`` holds each scale score's probability at
    the score's token, renormalised over the scale, and ``mass`` the share of
    the token's probability those scores had before renormalising.
    """

    score: int
    reason: str
    raw: str
    tokens_in: int = 0
    tokens_out: int = 0
    cached: bool = False
    probs: tuple[tuple[int, float], ...] | None = None
    mass: float = 0.0
    served_model: str = ""  # the model the reply says served it ("" when unknown)
    fingerprint: str = ""  # the reply's system_fingerprint ("" when the server sends none)


class JudgeCacheWarning(UserWarning):
    """The cache file could not be used and was set aside; the run goes on."""


_DAMAGED_HINT = (
    "move it away or delete it (textsim cache clear, or a pytest run with "
    "the cache on, sets it aside and starts an empty one)"
)


class _Unwritable(Exception):
    """The cache opened but refuses writes (a read-only file or directory)."""


class _NewerSchema(Exception):
    def __init__(self, version: int) -> None:
        super().__init__(version)
        self.version = version


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


def embedding_key(
    endpoint: str, model: str, dimensions: int | None, text_sha256: str
) -> CacheKey:
    """The key of one text's vector: the endpoint (:func:`endpoint_key`), the model,
    the dimensions asked for and the SHA-256 of the text."""
    return CacheKey(kind="embedding", endpoint=endpoint, model=model, dimensions=dimensions,
                    text_sha256=text_sha256)  # fmt: skip


class JudgeCache:
    """The judge cache in ``directory`` (created on first use), in one of :data:`MODES`.

    One connection per process, guarded by a lock for threads; SQLite's WAL
    mode and a generous busy timeout let several processes (xdist workers)
    read and write at once without losing entries.
    """

    def __init__(self, directory: os.PathLike[str] | str, mode: str = "once") -> None:
        if mode not in MODES:
            raise ValueError(f"cache mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.directory = Path(directory)
        self.path = self.directory / DB_NAME
        self.mode = mode
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._recovered = False  # a damaged file was set aside (or, in none mode, skipped)
        self._writable = False  # ensure_writable() succeeded once

    def __repr__(self) -> str:
        return f"JudgeCache({str(self.directory)!r}, mode={self.mode!r})"

    # -- connection ------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None and self.mode == "none":
            self._conn = self._open_read_only()
        if self._conn is None:
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                # e.g. the path is a file: say so once, not as a traceback per test.
                raise JudgeError(
                    f"judge cache folder {self.directory}: cannot create it "
                    f"({exc.strerror or exc}); name a directory for the judge cache"
                ) from None
            try:
                self._conn = _while_busy(self._open)
            except _NewerSchema as exc:
                why = (f"it was written by a newer pytest-textsim (schema {exc.version}, "
                       f"this one reads {SCHEMA_VERSION})")  # fmt: skip
                self._set_aside(why, lambda: self._schema_version() > SCHEMA_VERSION)
                self._conn = _while_busy(self._open)
            except sqlite3.OperationalError as exc:
                # Locked for a minute, read-only, no permission: the file is fine,
                # so it is not moved; say what is wrong instead.
                raise JudgeError(
                    f"judge cache {self.path}: cannot use it ({exc}); check that the "
                    "directory is writable, or only read it with cache mode none "
                    "(--textsim-cache=none in pytest, --cache none for textsim score)"
                ) from None
            except sqlite3.DatabaseError as exc:
                why = f"it is not a usable SQLite database ({exc})"
                self._set_aside(why, self._unusable)
                self._conn = _while_busy(self._open)
        return self._conn

    def _open(self) -> sqlite3.Connection:
        # isolation_level=None: we issue BEGIN IMMEDIATE ourselves, so a writer
        # takes the write lock up front instead of failing to upgrade later.
        conn = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA busy_timeout = 60000")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise _NewerSchema(version)
            # WAL mode is stored in the file: switch only a new database, since
            # the switch needs the file to itself.
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            # The write lock first, then the version: of two workers opening an
            # older file at once, one upgrades it and the other finds it done.
            conn.execute("BEGIN IMMEDIATE")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise _NewerSchema(version)
            _create_tables(conn)
            if version < SCHEMA_VERSION:  # 0: a new file
                _upgrade(conn)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            conn.close()
            raise
        return conn

    def _open_read_only(self) -> sqlite3.Connection:
        """Offline mode only reads, so a committed cache in a read-only checkout works.

        Nothing is created or moved: a missing, unreadable or too-new file is
        an empty cache (every lookup a miss, which ``none`` reports per test).
        """
        conn, problem, _ = self._read_only()
        if problem:
            warnings.warn(
                f"judge cache {self.path}: {problem}; cache mode none reads it as empty",
                JudgeCacheWarning,
                stacklevel=4,
            )
        return conn

    def _read_only(self) -> tuple[sqlite3.Connection, str, str]:
        """``(connection, problem, what to do)``: an empty one and why, when the file is bad."""
        empty = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        _create_tables(empty)
        if not self.path.exists():
            return empty, "", ""
        problem = hint = ""
        uri = self.path.resolve().as_uri()
        # mode=ro still wants the -shm index of a WAL database, which a read-only
        # directory cannot hold; immutable=1 then reads the file as it is.
        for query in ("?mode=ro", "?mode=ro&immutable=1"):
            conn = sqlite3.connect(
                uri + query, uri=True, timeout=60, isolation_level=None, check_same_thread=False
            )
            try:
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                if version > SCHEMA_VERSION:
                    conn.close()
                    problem = (
                        f"it was written by a newer pytest-textsim (schema {version}, "
                        f"this one reads {SCHEMA_VERSION})"
                    )
                    hint = "read it with that version (pip install -U pytest-textsim)"
                    break
                conn.execute("SELECT COUNT(*) FROM judgments").fetchone()
                if version < SCHEMA_VERSION:
                    conn = _upgraded_copy(conn)
            except sqlite3.OperationalError as exc:
                conn.close()
                problem, hint = f"it cannot be read ({exc})", "check its permissions"
                continue
            except sqlite3.DatabaseError as exc:
                conn.close()
                problem, hint = f"it is not a usable SQLite database ({exc})", _DAMAGED_HINT
                break
            empty.close()
            return conn, "", ""
        return empty, problem, hint

    def open_to_read(self) -> None:
        """Open a mode-``none`` cache now; :class:`JudgeError` if its file cannot be read.

        For ``textsim cache stats|export``: there a corrupt or too-new file is an
        error to report, where a test run reads it as an empty cache with a
        warning. A missing file is an empty cache, not an error.
        """
        if self.mode != "none":
            raise ValueError("open_to_read is for a cache in mode none (read only)")
        with self._lock:
            if self._conn is not None:
                return
            conn, problem, hint = self._read_only()
            if not problem and self.path.exists():
                # Damage in the middle of the file passes the opening probe; a
                # report on the cache must find it (every page is read).
                try:
                    check = conn.execute("PRAGMA quick_check").fetchall()
                    damage = "" if check == [("ok",)] else str(check[0][0])[:120]
                except sqlite3.DatabaseError as exc:
                    damage = str(exc)
                if damage:
                    problem, hint = f"it is damaged ({damage})", _DAMAGED_HINT
            if problem:
                conn.close()
                raise JudgeError(f"judge cache {self.path}: {problem}; {hint}")
            self._conn = conn

    def _schema_version(self) -> int:
        conn = sqlite3.connect(self.path, timeout=60)
        try:
            return int(conn.execute("PRAGMA user_version").fetchone()[0])
        finally:
            conn.close()

    def _unusable(self) -> bool:
        try:
            conn = sqlite3.connect(self.path, timeout=60)
            try:
                conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            finally:
                conn.close()
        except sqlite3.OperationalError:
            return False  # locked or unreadable, not damaged: leave it alone
        except sqlite3.DatabaseError:
            return True
        return False

    @contextlib.contextmanager
    def _aside_lock(self) -> Iterator[None]:
        """One process at a time checks and moves a bad file (advisory lock where there is one)."""
        try:
            import fcntl
        except ImportError:  # Windows: no flock; the check before moving still applies
            yield
            return
        with open(self.directory / f"{DB_NAME}.lock", "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _set_aside(self, why: str, still_bad: Callable[[], bool]) -> None:
        """Move the bad file away and warn, unless another worker already replaced it.

        xdist workers meet a bad file together: the first to take the lock moves
        it and starts a new database; the others find that one usable and move
        nothing (never the new database, never its write-ahead log).
        """
        with self._aside_lock():
            if not self.path.exists() or not still_bad():
                return
            aside = self.path.with_name(f"{self.path.name}.bad-{int(time.time())}-{os.getpid()}")
            # The side files belong to the bad database: remove them before the
            # main file moves, while no new database can be using them yet.
            for suffix in ("-wal", "-shm"):
                try:
                    os.remove(f"{self.path}{suffix}")
                except FileNotFoundError:
                    pass
            os.replace(self.path, aside)
        warnings.warn(
            f"judge cache {self.path}: {why}; moved it to {aside.name} and started an empty cache",
            JudgeCacheWarning,
            stacklevel=4,
        )

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- entries ---------------------------------------------------------------

    @staticmethod
    def key(**fields: Any) -> CacheKey:
        """Build a key from :data:`_KEY_FIELDS`; all are required."""
        missing = [name for name in _KEY_FIELDS if name not in fields]
        if missing or len(fields) != len(_KEY_FIELDS):
            raise TypeError(f"cache key needs exactly {_KEY_FIELDS}, missing {missing}")
        return CacheKey(fields)

    def ensure_writable(self) -> None:
        """Open the cache for writing now: :class:`JudgeError` if it cannot be written.

        Called before a paid judge call in modes ``once`` and ``rewrite``, so that
        a read-only cache is reported before any call rather than after each.
        """
        if self.mode in ("none", "off") or self._writable:
            return
        with self._lock:
            self._guarded(lambda conn: self._try_write(conn))
            self._writable = True

    @staticmethod
    def _try_write(conn: sqlite3.Connection) -> None:
        try:
            _while_busy(lambda: conn.execute("BEGIN IMMEDIATE"))
            conn.execute("DELETE FROM judgments WHERE 0")
        except sqlite3.OperationalError as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if is_corrupt(exc):
                raise
            raise _Unwritable(str(exc)) from None
        conn.execute("ROLLBACK")

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

    @staticmethod
    def _has_table(conn: sqlite3.Connection, name: str) -> bool:
        found = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
        ).fetchone()
        return found is not None

    def _guarded(self, action: Callable[[sqlite3.Connection], _T]) -> _T:
        """``action(connection)``; a damaged file found on the way is set aside once per
        run (a warning names it) and ``action`` runs again on a fresh, empty cache.

        In mode ``none`` nothing is moved: the damaged file reads as empty. A
        second damaged file in one run is an error, not another loop.
        """
        try:
            return action(self._connect())
        except _Unwritable as exc:
            raise JudgeError(
                f"judge cache {self.path}: cannot write it ({exc}); check that the file and "
                "its directory are writable, or only read it with cache mode none "
                "(--textsim-cache=none in pytest, --cache none for textsim score)"
            ) from None
        except sqlite3.DatabaseError as exc:
            if not is_corrupt(exc) or self._recovered:
                if is_corrupt(exc):
                    raise JudgeError(
                        f"judge cache {self.path}: damaged again after it was set aside ({exc})"
                    ) from None
                raise
            self._recovered = True
            self._drop_connection()
            why = f"it is damaged ({exc})"
            if self.mode == "none":
                warnings.warn(
                    f"judge cache {self.path}: {why}; cache mode none reads it as empty "
                    "(a run with the cache on sets it aside)",
                    JudgeCacheWarning,
                    stacklevel=4,
                )
                self._conn = sqlite3.connect(
                    ":memory:", isolation_level=None, check_same_thread=False
                )
                _create_tables(self._conn)
            else:
                self._set_aside(why, lambda: _damaged(self.path))
            return action(self._connect())

    def _drop_connection(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
            self._conn = None

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
        """The endpoints (``host/path``) of the same host holding ``key``'s judgment
        under another path, or under the host alone (keys made before the path)."""
        host = str(key["host"]).partition("/")[0]
        fields = {name: _column(key[name]) for name in _KEY_FIELDS if name != "host"}
        sql = (
            "SELECT DISTINCT host FROM judgments WHERE "
            + " AND ".join(f"{name} = ?" for name in fields)
            + " AND host != ? AND (host = ? OR substr(host, 1, ?) = ?) ORDER BY host"
        )
        args = [*fields.values(), key["host"], host, len(host) + 1, host + "/"]
        with self._lock:
            rows = self._guarded(lambda conn: conn.execute(sql, args).fetchall())
        return [str(row[0]) for row in rows]

    def miss_hint(self, key: CacheKey) -> str:
        """What the cache holds near a judgment it lacks, for the message of a miss
        in mode ``none`` (``""`` when nothing): the judgment under another path
        of the same host, else entries for the model at other endpoints and for
        other models at this endpoint."""
        others = self.other_endpoints(key)
        host = str(key["host"]).partition("/")[0]
        if host in others:
            return (
                f"; the cache has it under {host}, as keyed before the cache key had the "
                "endpoint's path: re-key it with textsim cache migrate --base-url URL"
            )
        if others:
            return f"; the cache has it under another path of the same host: {', '.join(others)}"
        return self._nearby("judgments", "host", str(key["model"]), str(key["host"]))

    def embedding_miss_hint(self, endpoint: str, model: str) -> str:
        """For a missing vector in mode ``none``: the entries for ``model`` at other
        endpoints and for other models at ``endpoint`` (``""`` when none)."""
        return self._nearby("embeddings", "endpoint", model, endpoint)

    def _nearby(self, table: str, column: str, model: str, endpoint: str) -> str:
        sql = (
            f"SELECT COALESCE(SUM(model = ? AND {column} != ?), 0), "
            f"COALESCE(SUM(model != ? AND {column} = ?), 0) FROM {table}"
        )

        def count(conn: sqlite3.Connection) -> tuple[int, int]:
            if not self._has_table(conn, table):
                return 0, 0
            row = conn.execute(sql, (model, endpoint, model, endpoint)).fetchone()
            return int(row[0]), int(row[1])

        with self._lock:
            elsewhere, other_models = self._guarded(count)
        hints = []
        if elsewhere:
            hints.append(f"{_exist(elsewhere)} for model {model} at other endpoints")
        if other_models:
            hints.append(f"{_exist(other_models)} for other models at this endpoint")
        return "".join(f"; {hint}" for hint in hints) + ("; see docs/judge-cache.md" * bool(hints))

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

    # -- maintenance (the `textsim cache` command) -----------------------------

    def migrate(self, base_url: str) -> int:
        """Re-key the entries recorded for ``base_url``'s host before the cache key
        had the endpoint's path; returns how many.

        Entries keyed by ``host[:port]`` alone (a loopback host without its
        port) become ``host[:port]/path`` of ``base_url``, as a judge at that URL
        now looks them up. Entries already keyed with a path are left as they are.
        """
        old, new = stored_endpoint(endpoint_host(base_url)), endpoint_key(base_url)
        if old == new:
            return 0

        def rekey(conn: sqlite3.Connection) -> int:
            _while_busy(lambda: conn.execute("BEGIN IMMEDIATE"))
            try:
                moved = _move_judgments(conn, old, new)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return moved

        with self._lock:
            return self._guarded(rekey)

    def stats(self) -> dict[str, Any]:
        """Entry counts overall and per evaluator and model, tokens, size on disk."""
        if not self.path.exists():
            return {"path": str(self.path), "entries": 0, "by_evaluator": {}, "by_model": {},
                    "tokens_in": 0, "tokens_out": 0, "embeddings": 0, "bytes": 0}  # fmt: skip
        with self._lock:
            conn = self._connect()
            total, tokens_in, tokens_out = conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(tokens_in), 0), COALESCE(SUM(tokens_out), 0) "
                "FROM judgments"
            ).fetchone()
            by_eval = conn.execute(
                "SELECT evaluator, COUNT(*) FROM judgments GROUP BY evaluator ORDER BY evaluator"
            ).fetchall()
            by_model = conn.execute(
                "SELECT provider || ':' || model || '@' || host, COUNT(*) FROM judgments "
                "GROUP BY 1 ORDER BY 1"
            ).fetchall()
            vectors = 0
            if self._has_table(conn, "embeddings"):
                vectors = conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
        # The database and its write-ahead log; -shm is only a shared-memory index.
        size = sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())
        return {
            "path": str(self.path),
            "entries": total,
            "by_evaluator": dict(by_eval),
            "by_model": dict(by_model),
            "tokens_in": tokens_in,
            "tokens_out": tokens_out,
            "embeddings": vectors,
            "bytes": size,
        }

    def clear(self, evaluator: str | None = None) -> int:
        """Delete every entry (or those of one evaluator); returns how many.

        A cache that does not exist is left so: clearing creates no file.
        """
        if self._conn is None and not self.path.exists():
            return 0

        def delete(conn: sqlite3.Connection) -> int:
            extra = self._has_table(conn, "embeddings")
            if evaluator is None:
                cur = conn.execute("DELETE FROM judgments")
                removed = cur.rowcount
                if extra:
                    conn.execute("DELETE FROM judgment_probs")
                    removed += conn.execute("DELETE FROM embeddings").rowcount
            elif evaluator == "embeddings" and extra:
                removed = conn.execute("DELETE FROM embeddings").rowcount
            else:
                if extra:
                    conn.execute(
                        "DELETE FROM judgment_probs WHERE key IN "
                        "(SELECT key FROM judgments WHERE evaluator = ?)",
                        (evaluator,),
                    )
                cur = conn.execute("DELETE FROM judgments WHERE evaluator = ?", (evaluator,))
                removed = cur.rowcount
            if removed:
                conn.execute("DELETE FROM served WHERE key NOT IN (SELECT key FROM judgments)")
                conn.execute("VACUUM")  # give the space back; a no-op delete has none
            return removed

        with self._lock:
            return self._guarded(delete)

    def entries(self) -> Iterator[dict[str, Any]]:
        """Every entry as a plain dict, key fields decoded, oldest first."""
        with self._lock:
            conn = self._connect()
            rows = conn.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM judgments ORDER BY created, key"
            ).fetchall()
            probs: dict[str, tuple[str, float]] = {}
            if self._has_table(conn, "judgment_probs"):
                probs = {
                    k: (p, m)
                    for k, p, m in conn.execute("SELECT key, probs, mass FROM judgment_probs")
                }
        for row in rows:
            entry = dict(zip(_COLUMNS, row))
            entry["sampling"] = json.loads(entry["sampling"])
            entry["inputs"] = json.loads(entry["inputs"])
            if entry["key"] in probs:  # a rubric judged with logprobs (G-Eval)
                entry["probs"] = json.loads(probs[entry["key"]][0])
                entry["mass"] = probs[entry["key"]][1]
            yield entry

    def export_jsonl(self, out: TextIO) -> int:
        """Write every entry as one JSON object per line; returns the count."""
        count = 0
        for entry in self.entries():
            out.write(json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n")
            count += 1
        return count

    def import_jsonl(self, lines: Iterable[str], source: str = "<input>") -> int:
        """Add entries from :meth:`export_jsonl` output; the key is recomputed, not trusted.

        Every bad line is reported (``source:line``) in one
        :class:`CacheImportError`, and nothing is imported when any line is bad.
        """
        return self._import(read_objects(source, source, stream=lines), source)

    def import_file(self, path: str | os.PathLike[str]) -> int:
        """:meth:`import_jsonl` from a file, read as ``textsim score`` reads its input.

        A missing or unreadable file, or a line that is not UTF-8, raises
        :class:`~pytest_textsim.jsonl.JsonlError` (a ``ValueError``) naming it.
        """
        return self._import(read_objects(path), str(path))

    def _import(self, objects: Iterable[Line], source: str) -> int:
        rows, problems, probs = [], [], []
        for line in objects:
            if line.value is None:
                problems.append(f"{line.where}: {line.problem}")
                continue
            row, wrong = _import_row(line.value)
            if wrong:
                problems.append(f"{line.where}: {'; '.join(wrong)}")
            elif row:
                distribution = row.pop("_probs", None)
                if distribution is not None:
                    probs.append((row["key"], json.dumps(distribution), row.pop("_mass")))
                rows.append(row)
        if problems:
            raise CacheImportError(source, problems)
        if rows:
            self._write(rows, probs)
        return len(rows)


class CacheImportError(ValueError):
    """Lines of a judge cache export that cannot be imported; ``problems`` has one per line."""

    def __init__(self, source: str, problems: list[str]) -> None:
        lines = "line" if len(problems) == 1 else "lines"
        super().__init__(
            f"cannot import the judge cache: {len(problems)} bad {lines} in {source}; "
            "nothing was imported:\n" + "\n".join(problems)
        )
        self.source = source
        self.problems = problems


_TEXT_FIELDS = ("evaluator", "prompt_version", "provider", "model", "host")
_COUNT_FIELDS = ("tokens_in", "tokens_out")


def _import_row(entry: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
    """One exported entry as a database row, or every reason it is not one.

    The types are checked, not converted: a cache is shared between machines,
    and a hand-edited ``"score": "4"`` or ``"inputs": "text"`` would otherwise
    be stored and break export or every lookup later.
    """
    missing = [name for name in (*_KEY_FIELDS, "score") if name not in entry]
    if missing:
        fields = "field" if len(missing) == 1 else "fields"
        return None, [f"missing {fields} {', '.join(repr(name) for name in missing)}"]
    wrong = []

    def check(name: str, ok: bool, expected: str) -> None:
        if not ok:
            wrong.append(f'"{name}" must be {expected}, got {json_type(entry[name])}')

    def whole(value: Any, low: int, high: float = math.inf) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high

    for name in _KEY_FIELDS:
        value = entry[name]
        if name in _TEXT_FIELDS:
            check(name, isinstance(value, str), "a string")
        elif name == "sample":
            check(name, whole(value, 0), "a whole number >= 0")
        else:  # sampling, inputs
            check(name, isinstance(value, dict), "an object")
    # A binary rubric scores 0 or 1; the other judge metrics 1-5.
    low = 0 if entry["evaluator"] == "rubric" else 1
    check("score", whole(entry["score"], low, 5), f"a whole number {low}-5")
    for name in ("reason", "raw"):
        if name in entry:
            check(name, isinstance(entry[name], str), "a string")
    for name in _COUNT_FIELDS:
        if name in entry:
            check(name, whole(entry[name], 0), "a whole number >= 0")
    if "created" in entry:
        created = entry["created"]
        number = isinstance(created, (int, float)) and not isinstance(created, bool)
        check("created", number and math.isfinite(created), "a number (seconds since 1970)")
    if "probs" in entry or "mass" in entry:
        pairs = entry.get("probs")
        ok = isinstance(pairs, list) and all(
            isinstance(p, list) and len(p) == 2 and whole(p[0], 0, 5)
            and isinstance(p[1], (int, float)) and not isinstance(p[1], bool)
            and 0 <= p[1] <= 1
            for p in pairs
        )  # fmt: skip
        if not ok:
            wrong.append('"probs" must be a list of [score, probability] pairs')
        mass = entry.get("mass")
        if not (isinstance(mass, (int, float)) and not isinstance(mass, bool) and 0 <= mass <= 1):
            wrong.append('"mass" must be a number from 0 to 1')
    if wrong:
        return None, wrong
    key_fields = {name: entry[name] for name in _KEY_FIELDS}
    # An export of a release that kept loopback ports is keyed as today's are.
    key_fields["host"] = stored_endpoint(key_fields["host"])
    key = JudgeCache.key(**key_fields)
    return {
        "key": key.digest,
        **{name: _column(key[name]) for name in _KEY_FIELDS},
        "score": entry["score"],
        "reason": entry.get("reason", ""),
        "raw": entry.get("raw", ""),
        "tokens_in": entry.get("tokens_in", 0),
        "tokens_out": entry.get("tokens_out", 0),
        "created": float(entry.get("created", time.time())),
        **({"_probs": entry["probs"], "_mass": float(entry["mass"])} if "probs" in entry else {}),
    }, []


def _exist(count: int) -> str:
    """``1 entry exists``, ``3 entries exist``."""
    return f"{plural(count, 'entry')} {'exists' if count == 1 else 'exist'}"


def _column(value: Any) -> Any:
    """Store dicts as canonical JSON text; everything else as is."""
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return value
