"""Maintenance of the judge cache (the ``textsim cache`` command): counts,
clearing, re-keying entries recorded before the key had the endpoint's path."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from ..endpoints import endpoint_host, endpoint_key, stored_endpoint
from .schema import _move_judgments
from .sqlite import _while_busy
from .stores import Stores


class Maintenance(Stores):
    """``stats``, ``clear`` and ``migrate`` of a cache."""

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
