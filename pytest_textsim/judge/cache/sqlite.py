"""The SQLite engine of the judge cache: one connection per process, WAL mode,
waits while another process holds the file, damaged or too-new files set aside.

A file opened for writing is brought to the current schema (:mod:`.schema`)
under the write lock; mode ``none`` opens it read-only and never writes.
"""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Callable, TypeVar

from ...errors import TextsimError, TextsimWarning
from ...settings.modes import MODES, RecordMode
from ..errors import JudgeError
from .schema import SCHEMA_VERSION, _create_tables, _upgrade, _upgraded_copy

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


#: What becomes of the judge batches a damaged file kept, once it is set aside.
_LOST = ("this cache no longer resumes them: cancel them at the provider, or their "
         "judgments are paid for twice")  # fmt: skip


def _kept_batches(path: Path, then: str) -> str:
    """``; it keeps judge batches not collected yet (batch_2, ...), still billed if
    running: {then}``: the batches ``textsim score --judge-batch`` kept in the file at
    ``path``, which is about to be set aside; ``""`` when it keeps none (or cannot
    be read)."""
    kept: list[str] = []
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=60)
        try:
            for table, column in (("judge_batches", "batch_id"), ("judge_submissions", "token")):
                rows = conn.execute(f"SELECT {column} FROM {table} ORDER BY created").fetchall()
                kept += [str(r[0]) if table == "judge_batches" else "a submission" for r in rows]
        finally:
            conn.close()
    except sqlite3.Error:
        pass  # a table it lacks, or named otherwise by the newer release
    if not kept:
        return ""
    listed = ", ".join(kept)
    return f"; it keeps judge batches not collected yet ({listed}), still billed if running: {then}"


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


class JudgeCacheWarning(TextsimWarning):
    """The cache file could not be used and was set aside; the run goes on."""


_DAMAGED_HINT = (
    "move it away or delete it (textsim cache clear, or a pytest run with "
    "the cache on, sets it aside and starts an empty one)"
)


class _Unwritable(TextsimError):
    """The cache opened but refuses writes (a read-only file or directory)."""


class _NewerSchema(TextsimError):
    def __init__(self, version: int) -> None:
        super().__init__(version)
        self.version = version


class Engine:
    """The connection to ``directory``'s cache file in one of the record modes
    (:class:`~pytest_textsim.settings.modes.RecordMode`, or its name), and what keeps it
    usable: the thread lock, waits, recovery from a damaged file."""

    def __init__(
        self, directory: os.PathLike[str] | str, mode: RecordMode | str = RecordMode.ONCE
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"cache mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.directory = Path(directory)
        self.path = self.directory / DB_NAME
        self.mode = RecordMode(mode)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._recovered = False  # a damaged file was set aside (or, in none mode, skipped)
        self._writable = False  # ensure_writable() succeeded once

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.directory)!r}, mode={self.mode.value!r})"

    # -- connection ------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None and self.mode.read_only:
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
                self._conn = self._open_shared()
            except _NewerSchema as exc:
                why = (f"it was written by a newer pytest-textsim (schema {exc.version}, "
                       f"this one reads {SCHEMA_VERSION})"
                       + _kept_batches(self.path, "the release that wrote it collects them "
                                       "(textsim cache batches there)"))  # fmt: skip
                self._set_aside(why, lambda: self._schema_version() > SCHEMA_VERSION)
                self._conn = self._open_shared()
            except sqlite3.OperationalError as exc:
                # Locked for a minute, read-only, no permission: the file is fine,
                # so it is not moved; say what is wrong instead.
                raise JudgeError(
                    f"judge cache {self.path}: cannot use it ({exc}); check that the "
                    "directory is writable, or only read it with cache mode none "
                    "(--textsim-cache=none in pytest, --cache none for textsim score)"
                ) from None
            except sqlite3.DatabaseError as exc:
                why = f"it is not a usable SQLite database ({exc})" + _kept_batches(
                    self.path, _LOST)
                self._set_aside(why, self._unusable)
                self._conn = self._open_shared()
        return self._conn

    def _open_shared(self) -> sqlite3.Connection:
        """:meth:`_open`, while no other process is setting the file aside.

        SQLite must not have the file open while it is renamed: a connection to
        the old file takes the new database's journal or write-ahead log, found
        by name, for its own (a "disk I/O error", or a hot journal rolled back
        into the wrong file). Opening holds the set-aside lock shared, so a
        process moving a bad file waits until every open under way has finished
        (and closed the bad file), and no open starts until the move is done.
        """
        with self._aside_lock(shared=True):
            return _while_busy(self._open)

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
        if not self.mode.read_only:
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
    def _aside_lock(self, *, shared: bool = False) -> Iterator[None]:
        """One process at a time checks and moves a bad file, while none opens it;
        ``shared``: this process opens it (advisory lock where there is one)."""
        try:
            import fcntl
        except ImportError:  # Windows: no flock; the check before moving still applies
            yield
            return
        try:
            handle = open(self.directory / f"{DB_NAME}.lock", "a")
        except OSError:
            if not shared:
                raise
            # A folder this process cannot write: it cannot move the file either,
            # and opening goes on to say what is wrong with the folder.
            yield
            return
        with handle:
            fcntl.flock(handle, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
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

    def ensure_writable(self) -> None:
        """Open the cache for writing now: :class:`JudgeError` if it cannot be written.

        Called before a paid judge call in modes ``once`` and ``rewrite``, so that
        a read-only cache is reported before any call rather than after each.
        """
        if not self.mode.writes or self._writable:
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
            why = f"it is damaged ({exc})" + _kept_batches(self.path, _LOST)
            if self.mode.read_only:
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
