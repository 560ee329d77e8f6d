"""A persistent judge cache: one SQLite database in WAL mode, safe for parallel workers.

Each judgment is keyed by a hash of everything that can change the judge's
answer (evaluator, prompt version, provider, model, the endpoint's host and
path without a loopback host's port, sampling parameters, sample index and the
exact inputs). The row stores those fields in the clear too, so that an
exported cache can be reviewed, plus the score, reason, raw reply, token usage
and a timestamp. Never an API key.

Its modes are the record modes of :class:`~pytest_textsim.settings.modes.RecordMode`,
named like pytest-recording's: ``once`` (use hits, call and store on misses),
``none`` (never call: a miss is an error), ``rewrite`` (call again and
overwrite), ``off`` (no cache at all).

The rooms, each layer built on the one before:

- ``schema``: the tables, the schema version and the upgrade of older files;
  the keys of judgments and embeddings.
- ``engine``: the SQLite connection, waiting on other processes, damaged or
  too-new files set aside, the read-only opening of mode ``none``.
- ``stores``: judgments, embedding vectors and calibrations, the hints of a
  miss, and what the judge asks of a cache: three narrow protocols
  (:class:`Judgments`, :class:`Vectors`, :class:`Calibrations`), any object
  with one or more of them being a store ``cache=`` takes.
- ``memory``: :class:`InMemoryStore`, all three in dicts, for tests.
- ``maintenance``: ``stats``, ``clear`` and ``migrate`` (``textsim cache``).
- ``transfer``: export and import as JSON lines.
"""

from __future__ import annotations

import os

from ...settings.modes import MODES as MODES
from ...settings.modes import RecordMode
from ..judgment import Judgment as Judgment
from .maintenance import Maintenance
from .memory import InMemoryStore as InMemoryStore
from .schema import _SCHEMA as _SCHEMA
from .schema import SCHEMA_VERSION as SCHEMA_VERSION
from .schema import CacheKey as CacheKey
from .schema import embedding_key as embedding_key
from .sqlite import BUSY_SECONDS as BUSY_SECONDS
from .sqlite import DB_NAME as DB_NAME
from .sqlite import JudgeCacheWarning as JudgeCacheWarning
from .sqlite import _damaged as _damaged
from .sqlite import _while_busy as _while_busy
from .sqlite import is_corrupt as is_corrupt
from .stores import Calibrations as Calibrations
from .stores import Judgments as Judgments
from .stores import JudgmentStore as JudgmentStore
from .stores import Store as Store
from .stores import Vectors as Vectors
from .stores import is_store
from .transfer import CacheImportError as CacheImportError
from .transfer import Transfer


class JudgeCache(Maintenance, Transfer):
    """The judge cache in ``directory`` (created on first use), in one of the record
    modes (:class:`~pytest_textsim.settings.modes.RecordMode`, or its name).

    One connection per process, guarded by a lock for threads; SQLite's WAL
    mode and a generous busy timeout let several processes (xdist workers)
    read and write at once without losing entries.
    """


def as_store(cache: Store | str | os.PathLike[str] | None, where: str = "cache=") -> Store | None:
    """What ``cache=`` names: a store (any object with one or more of the narrow
    stores, a :class:`JudgeCache` or an :class:`InMemoryStore`) as it is, a folder
    as the :class:`JudgeCache` in it; ``None`` stays ``None``."""
    if cache is None:
        return None
    if isinstance(cache, (str, os.PathLike)):
        return JudgeCache(cache)
    if is_store(cache):
        mode = getattr(cache, "mode", None)
        if not isinstance(mode, RecordMode):
            raise TypeError(
                f"{where}: the store's mode is {mode!r}, not a RecordMode: set it to "
                "pytest_textsim.settings.modes.RecordMode.ONCE (or RecordMode.parse('once'))"
            )
        return cache
    raise TypeError(
        f"{where} takes a judge cache folder or a store (an object with a mode and "
        "get/put, get_vectors/put_vectors or calibration/put_calibration, as "
        f"pytest_textsim.InMemoryStore has), got {type(cache).__name__}"
    )
