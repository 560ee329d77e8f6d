"""A judge cache in memory, for tests: hypothesis's ``InMemoryExampleDatabase`` is the model."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from typing import Any

from ...settings.modes import RecordMode
from ..judgment import Judgment
from .schema import CacheKey


class InMemoryStore:
    """Judgments, embedding vectors and calibrations in dicts, gone with the object.

    It is each of the narrow stores (:class:`~.stores.Judgments`,
    :class:`~.stores.Vectors`, :class:`~.stores.Calibrations`), so ``cache=``
    takes it, in one of the record modes (``once`` by default; ``none`` serves
    only what is in it). A test can look inside: ``judgments`` and ``vectors``
    are keyed by the key's digest, ``calibrations`` by ``(metric, host, model,
    prompt_version)``.

    Example::

        store = InMemoryStore()
        RelevanceEvaluator(model_config, cache=store)(query=..., response=...)
        len(store.judgments)  # 1: a second call with these texts is a hit
    """

    def __init__(self, mode: RecordMode | str = RecordMode.ONCE) -> None:
        self.mode = RecordMode.parse(mode)
        self.judgments: dict[str, Judgment] = {}
        self.vectors: dict[str, bytes] = {}
        self.calibrations: dict[tuple[str, str, str, str], dict[str, Any]] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"InMemoryStore(mode={self.mode}, judgments={len(self.judgments)}, "
            f"vectors={len(self.vectors)}, calibrations={len(self.calibrations)})"
        )

    def get(self, key: CacheKey) -> Judgment | None:
        """The judgment stored under ``key`` (marked ``cached``), or ``None``."""
        with self._lock:
            found = self.judgments.get(key.digest)
        if found is None:
            return None
        return dataclasses.replace(found, cached=True)

    def put(self, key: CacheKey, judgment: Judgment) -> None:
        """Store ``judgment`` under ``key``, replacing an older one."""
        with self._lock:
            self.judgments[key.digest] = judgment

    def get_vectors(self, keys: Sequence[CacheKey]) -> dict[str, bytes]:
        """The stored vectors of ``keys``, by digest."""
        with self._lock:
            return {k.digest: self.vectors[k.digest] for k in keys if k.digest in self.vectors}

    def put_vectors(self, entries: Sequence[tuple[CacheKey, bytes]]) -> None:
        """Store vectors under their keys."""
        with self._lock:
            self.vectors.update((key.digest, bytes(vector)) for key, vector in entries)

    def calibration(
        self, metric: str, host: str, model: str, prompt_version: str
    ) -> dict[str, Any] | None:
        """The stored calibration of this judge and prompt, or ``None``."""
        with self._lock:
            found = self.calibrations.get((metric, host, model, prompt_version))
        return None if found is None else dict(found)

    def put_calibration(
        self, metric: str, host: str, model: str, prompt_version: str, details: dict[str, Any]
    ) -> None:
        """Store a calibration, replacing an older one."""
        with self._lock:
            self.calibrations[(metric, host, model, prompt_version)] = dict(details)
