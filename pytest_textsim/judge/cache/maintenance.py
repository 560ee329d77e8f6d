"""Maintenance of the judge cache (the ``textsim cache`` command): counts,
clearing, re-keying entries recorded before the key had the endpoint's path, and
the judge batches kept (``textsim score --judge-batch``) listed and forgotten."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from ..endpoints import endpoint_host, endpoint_key, stored_endpoint
from .schema import _move_judgments
from .sqlite import _while_busy, _write
from .stores import Stores, cached_count


class Maintenance(Stores):
    """``stats``, ``clear``, ``migrate`` and the kept batches of a cache."""

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
                    "tokens_in": 0, "tokens_out": 0, "embeddings": 0, "batches": 0,
                    "bytes": 0}  # fmt: skip
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
            # The judge batches kept to be collected, and the submissions among them.
            batches = sum(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                          for table in ("judge_batches", "judge_submissions")
                          if self._has_table(conn, table))  # fmt: skip
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
            "batches": batches,
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

    # -- kept judge batches (``textsim cache batches``) ----------------------------

    def kept_batches(self) -> list[dict[str, Any]]:
        """Each batch and submission kept, oldest first: ``kind`` (``batch``, or
        ``submission``: its create call had no answer, its batch id is unknown),
        ``id`` (the batch's; a submission's own token), ``input_file_id``,
        ``endpoint`` (host and path, as in the cache keys: never a key),
        ``created`` (epoch seconds), ``judgments`` and ``cached`` (how many of them
        the cache holds)."""
        if self._conn is None and not self.path.exists():
            return []

        def read(conn: sqlite3.Connection) -> list[dict[str, Any]]:
            kept = []
            for kind, table, column in (("batch", "judge_batches", "batch_id"),
                                        ("submission", "judge_submissions", "token")):  # fmt: skip
                if not self._has_table(conn, table):
                    continue
                rows = _while_busy(lambda t=table, c=column: conn.execute(  # type: ignore[misc]
                    f"SELECT {c}, endpoint, input_file_id, keys, created FROM {t}").fetchall())
                for name, endpoint, input_file, keys, created in rows:
                    wanted = json.loads(keys)
                    kept.append({"kind": kind, "id": str(name), "endpoint": str(endpoint),
                                 "input_file_id": str(input_file), "created": float(created),
                                 "judgments": len(wanted),
                                 "cached": cached_count(conn, wanted)})  # fmt: skip
            return sorted(kept, key=lambda k: (k["created"], k["id"]))

        with self._lock:
            return self._guarded(read)

    def forget_kept(self, ids: list[str] | None = None) -> list[dict[str, Any]]:
        """Drop the kept batches and submissions of ``ids`` (every one: ``None``), as
        :meth:`kept_batches` gives them; those dropped. An id kept nowhere drops nothing."""
        kept = self.kept_batches()
        chosen = [k for k in kept if ids is None or k["id"] in ids]
        if not chosen:
            return []

        def delete(conn: sqlite3.Connection) -> None:
            for entry in chosen:
                table, column = (("judge_batches", "batch_id") if entry["kind"] == "batch"
                                 else ("judge_submissions", "token"))  # fmt: skip
                conn.execute(f"DELETE FROM {table} WHERE {column} = ?", (entry["id"],))

        with self._lock:
            self._guarded(lambda conn: _write(conn, delete))
        return chosen
