"""Which judge providers a run knows, by the names ``textsim_judge_provider`` takes.

Three sources, each read only when a name needs it:

- the built-ins (:data:`BUILTINS`), a fixed table, so that a source checkout
  works without the entry points an install writes;
- :func:`register_provider` calls (a ``conftest.py``, a script);
- the entry-point group ``pytest_textsim.providers`` of installed
  distributions: ``name = "package.module:Factory"``.

On a name clash the built-in wins (a package cannot take over ``openai``; an
entry point naming a built-in is ignored with a warning unless it is the
built-in itself, as the package's own are), then the registered call, then the
entry point. A factory is called once a registry, with no arguments, and
gives the provider (a :class:`~.base.BaseProvider` subclass is one).
"""

from __future__ import annotations

import importlib
import threading
import warnings
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Callable

from ...settings.converters import as_provider_name
from ..errors import JudgeConfigError, JudgeWarning
from .base import Provider

#: The entry-point group other packages declare their providers in.
GROUP = "pytest_textsim.providers"

#: The providers shipped with the package, as ``module:factory``, in the order
#: :func:`~pytest_textsim.judge.providers.for_config` asks them whether a model
#: configuration dict is theirs (the last is the default). pyproject's entry
#: points name the same factories.
BUILTINS: Mapping[str, str] = MappingProxyType({
    "anthropic": "pytest_textsim.judge.providers.anthropic:AnthropicProvider",
    "azure": "pytest_textsim.judge.providers.azure:AzureProvider",
    "local": "pytest_textsim.judge.providers.local:LocalProvider",
    "openai": "pytest_textsim.judge.providers.openai:OpenAIProvider",
})  # fmt: skip

Factory = Callable[[], Provider]

#: What every provider has; a factory's product lacking one is refused by name.
_MEMBERS = (
    "name", "title", "key_var", "endpoint_setting", "api", "keys", "environment",
    "logprobs", "embeddings", "reply_path", "claims", "spec", "from_settings", "sdk",
    "connect", "chat", "read", "read_logprobs", "embed", "not_found",
)  # fmt: skip


def check_name(name: Any) -> str:
    """``name`` if it can name a provider (lower-case letters, digits, ``_ . -``)."""
    if not isinstance(name, str):
        raise TypeError(f"a judge provider's name is a string, got {type(name).__name__}")
    return as_provider_name(name)


def _load(target: str) -> Any:
    module, _, attribute = target.partition(":")
    found = importlib.import_module(module)
    for part in attribute.split("."):
        found = getattr(found, part)
    return found


class ProviderRegistry:
    """The judge providers of one run: the built-ins, the registered, the entry
    points'. Each provider is made on first use, once."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._registered: dict[str, Factory] = {}
        self._made: dict[str, Provider] = {}
        self._outside: dict[str, Any] | None = None  # name -> EntryPoint, read on first need

    def register(self, name: str, factory: Factory) -> None:
        """Add ``factory``'s provider under ``name`` (replacing one registered before)."""
        check_name(name)
        if name in BUILTINS:
            raise ValueError(
                f"{name!r} is a built-in judge provider; register yours under another name"
            )
        if not callable(factory):
            raise TypeError(
                f"register_provider({name!r}, ...): the factory must be callable (a "
                f"provider class), got {type(factory).__name__}"
            )
        with self._lock:
            self._registered[name] = factory
            self._made.pop(name, None)

    def names(self) -> list[str]:
        """Every name this registry knows: built-ins, registered, entry points."""
        with self._lock:
            extra = set(self._registered) | set(self._entry_points())
        return [*BUILTINS, *sorted(extra - set(BUILTINS))]

    def knows(self, name: str) -> bool:
        """Whether ``name`` is a provider here (without making it)."""
        if name in BUILTINS:
            return True
        with self._lock:
            return name in self._registered or name in self._entry_points()

    def get(self, name: str) -> Provider:
        """The provider called ``name``, made now if it was not yet; a
        :class:`JudgeConfigError` naming the known ones when there is none."""
        with self._lock:
            made = self._made.get(name)
            if made is None:
                made = self._made[name] = self._make(name)
            return made

    def unknown(self, name: str) -> JudgeConfigError:
        """The error for a provider name no source knows."""
        return JudgeConfigError(
            f"unknown judge provider {name!r}; expected one of {', '.join(self.names())} "
            f"(a package adds one through the entry-point group {GROUP}, a conftest.py "
            "with pytest_textsim.register_provider())",
            setting="judge_provider",
        )

    def _make(self, name: str) -> Provider:
        if name in BUILTINS:
            where, factory = BUILTINS[name], _load(BUILTINS[name])
        elif name in self._registered:
            where, factory = "register_provider()", self._registered[name]
        elif name in self._entry_points():
            point = self._entry_points()[name]
            where = f"entry point {name} = {point.value} in group {GROUP}"
            try:
                factory = point.load()
            except Exception as exc:  # noqa: BLE001 - any failure to import it is the user's to see
                raise JudgeConfigError(
                    f"judge provider {name!r} ({where}) could not be loaded: "
                    f"{type(exc).__name__}: {exc}",
                    setting="judge_provider",
                ) from exc
        else:
            raise self.unknown(name)
        try:
            made: Provider = factory()
        except Exception as exc:  # noqa: BLE001 - e.g. a class that left chat unwritten
            raise JudgeConfigError(
                f"judge provider {name!r} ({where}) could not be made: "
                f"{type(exc).__name__}: {exc}",
                setting="judge_provider",
            ) from exc
        missing = [m for m in _MEMBERS if not hasattr(made, m)]
        if missing:
            raise JudgeConfigError(
                f"judge provider {name!r} ({where}) lacks {', '.join(missing)}: derive it "
                "from pytest_textsim.BaseProvider, which has the rest",
                setting="judge_provider",
            )
        if made.name != name:
            raise JudgeConfigError(
                f"judge provider {name!r} ({where}) calls itself {made.name!r}: give the "
                "class the name it is registered under",
                setting="judge_provider",
            )
        return made

    def _entry_points(self) -> dict[str, Any]:
        """The group's entry points, read once (the caller holds the lock)."""
        if self._outside is None:
            from importlib.metadata import entry_points

            found: dict[str, Any] = {}
            for point in _group(entry_points()):
                if point.name in BUILTINS:
                    if point.value != BUILTINS[point.name]:
                        warnings.warn(
                            f"entry point {point.name} = {point.value} in group {GROUP} "
                            f"names the built-in judge provider {point.name!r}; the "
                            "built-in is used",
                            JudgeWarning,
                            stacklevel=2,
                        )
                    continue
                found.setdefault(point.name, point)
            self._outside = found
        return self._outside


def _group(points: Any) -> list[Any]:
    """The group's entry points (``select`` since Python 3.10, a dict before)."""
    if hasattr(points, "select"):
        return list(points.select(group=GROUP))
    return list(points.get(GROUP, ()))  # pragma: no cover - Python 3.9


def current_registry() -> ProviderRegistry:
    """The providers of the run in progress: the pytest run's, or a script's
    (:func:`pytest_textsim.settings.table.this_run`), made on first use."""
    from ...settings.table import this_run

    return this_run().part(ProviderRegistry)


def register_provider(name: str, factory: Factory) -> None:
    """Make ``factory``'s provider the judge provider called ``name``, for this run.

    ``factory`` is called once, with no arguments, when the name is first used:
    a :class:`~pytest_textsim.BaseProvider` subclass is one. ``name`` is then a
    value of ``textsim_judge_provider`` and a model configuration's ``type``.
    Call it in a ``conftest.py`` (the one in the root folder: the plugin checks
    the setting when pytest starts). Another package declares its providers in
    the entry-point group ``pytest_textsim.providers`` instead.

    Example::

        register_provider("echo", EchoProvider)
    """
    current_registry().register(name, factory)
