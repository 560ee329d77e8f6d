"""The run: what one pytest run (or one script) owns, found through one ContextVar.

The package's tables are read-only after import: :data:`pytest_textsim.catalog.METRICS`
(the metrics) and :data:`pytest_textsim.settings.resolver.SETTINGS` (the settings). A
:class:`Run` lays its own entries over them -- the metrics a ``conftest.py``
registers and their threshold settings -- and holds the rest of the run's
state: its evaluators, and one object per concern (the pytest session, the
judges, the registered metrics), each made by the module that owns it.

The pytest plugin makes a run when pytest starts and keeps it in
``config.stash``; code that has no config (a helper called from a test, the
judge's factories, the catalog's lookups) finds it with :func:`current_run`.
The run is current from the moment pytest loads the first ``conftest.py`` until
the run ends; a run inside a run (pytester's in-process runs) is current for
its own duration and then gives way to the outer one again, and its tables lie
over the outer run's, so it sees the outer run's metrics and the outer run
never sees its own. Outside pytest, the first helper or registration makes a
script run in the caller's context (:func:`pytest_textsim.settings.table.this_run`).

A context is a thread's or an asyncio task's: a task inherits the run of the
code that created it, and so does work submitted with
``contextvars.copy_context().run`` (as :func:`pytest_textsim.gather` and the
``each`` helpers do). A thread started without it (a test's own
``ThreadPoolExecutor``) sees the process's innermost pytest run.

This module sits at the bottom of the package: it imports nothing of it.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator, Mapping
from typing import Any, Callable, Generic, TypeVar

__all__ = ["Run", "Table", "current_run"]

T = TypeVar("T")
P = TypeVar("P")


class Table(Mapping[str, T], Generic[T]):
    """A read-only ``base`` table with a run's own entries laid over it.

    Readers see one mapping (``table[name]``, iteration in the base's order,
    then the run's entries in the order they were added); only :meth:`add`,
    :meth:`replace` and :meth:`remove` change it, and only the run's own entries.
    """

    def __init__(self, base: Mapping[str, T]) -> None:
        self.base = base
        self._own: dict[str, T] = {}

    def __getitem__(self, name: str) -> T:
        if name in self._own:
            return self._own[name]
        return self.base[name]

    def __iter__(self) -> Iterator[str]:
        yield from self.base
        yield from (name for name in self._own if name not in self.base)

    def __len__(self) -> int:
        return len(self.base) + sum(1 for name in self._own if name not in self.base)

    def __contains__(self, name: object) -> bool:
        return name in self._own or name in self.base

    @property
    def own(self) -> Mapping[str, T]:
        """The entries this run added (not its base's)."""
        return self._own

    def add(self, name: str, value: T) -> None:
        """Add entry ``name``; ``KeyError`` when the table (or its base) has it."""
        if name in self:
            raise KeyError(name)
        self._own[name] = value

    def replace(self, name: str, value: T) -> None:
        """Replace this run's own entry ``name``."""
        if name not in self._own:
            raise KeyError(name)
        self._own[name] = value

    def remove(self, name: str) -> None:
        """Remove this run's own entry ``name`` (never a base entry)."""
        del self._own[name]


class Run:
    """The state of one pytest run, or of one script outside pytest.

    - :attr:`metrics`, :attr:`settings`: the run's catalog view and settings table
      (the package's, or the enclosing run's, with this run's own entries on top);
      :func:`pytest_textsim.catalog.current_metrics` and
      :func:`pytest_textsim.settings.resolver.current_settings` give them typed.
    - :attr:`config`: the pytest config (``None`` for a script); :attr:`session`: the
      plugin's session of the run (its records, counters and report sections).
    - :attr:`evaluators`: the evaluators built in this run, by metric, threshold
      and options, so that each is built once.
    - :meth:`part`: the run's object of a class a concern defines (the session,
      the judges, the registered metrics), one per run, made on first use.
    """

    def __init__(
        self,
        metrics: Mapping[str, Any],
        settings: Mapping[str, Any],
        *,
        config: Any = None,
        parent: Run | None = None,
    ) -> None:
        self.metrics: Table[Any] = Table(metrics)
        self.settings: Table[Any] = Table(settings)
        self.config = config
        self.parent = parent
        # The pytest plugin's session (records, counters, report sections); None for a script.
        self.session: Any = None
        self.evaluators: dict[Any, Any] = {}
        self._parts: dict[type, Any] = {}
        self._before: Run | None = None
        self._outer: Run | None = None
        self.active = False

    def part(self, kind: type[P], make: Callable[[], P] | None = None) -> P:
        """This run's ``kind`` object, made with ``make()`` (default ``kind()``) the first time."""
        if kind not in self._parts:
            self._parts[kind] = (make or kind)()
        found: P = self._parts[kind]
        return found

    def get(self, kind: type[P]) -> P | None:
        """This run's ``kind`` object, or ``None`` when it has none."""
        found: P | None = self._parts.get(kind)
        return found

    def put(self, part: object) -> None:
        """Keep ``part`` as this run's object of its class (the pytest session)."""
        self._parts[type(part)] = part

    def activate(self) -> None:
        """Make this run the current one in this context, until :meth:`deactivate`."""
        if self.active:
            return
        global _innermost
        self._before = _CURRENT.get()
        _CURRENT.set(self)
        self.active = True
        if self.config is not None:
            self._outer, _innermost = _innermost, self

    def deactivate(self) -> None:
        """Give way to the run that was current before :meth:`activate`."""
        if not self.active:
            return
        global _innermost
        self.active = False
        if _CURRENT.get() is self:
            _CURRENT.set(self._before)
        self._before = None
        if _innermost is self:
            _innermost, self._outer = self._outer, None

    def __repr__(self) -> str:
        kind = "script" if self.config is None else "pytest"
        own = ", ".join(self.metrics.own) or "no metrics of its own"
        return f"<pytest-textsim {kind} run: {own}>"


#: The run of this context (thread or task): the one ContextVar through which
#: code without a pytest config finds the run's state.
_CURRENT: contextvars.ContextVar[Run | None] = contextvars.ContextVar(
    "pytest_textsim_run", default=None
)


#: The innermost pytest run of this process, for a context that has none: a thread
#: a test starts without a copy of its context (``threading.Thread``, a
#: ``ThreadPoolExecutor``) scores for the test running, as the test's own code does.
_innermost: Run | None = None


def current_run() -> Run | None:
    """The run current in this context; in a thread started without a copy of
    the context, the process's innermost pytest run; else ``None`` (a script
    before its first helper)."""
    return _CURRENT.get() or _innermost
