"""How a setting is resolved: marker > command line > environment > ini > default.

:class:`Setting` declares one setting, :data:`SETTINGS` holds every one
of the package (filled by :mod:`pytest_textsim.settings.table`, the table, which
everything imports them from; read-only once it is imported) and
:class:`Resolver` finds a setting's value and where it came from. Every
validation error names where the bad value came from, e.g.
``textsim_judge_timeout in pytest.ini: expected seconds, got 'x'``.
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable

from ..errors import ConfigError
from ..formatting import closest
from ..runtime.run import current_run
from .converters import (
    as_str,
    inline_comment,
)

_MISSING: Any = object()


@dataclass(frozen=True)
class Setting:
    """A setting: ``name`` gives ``--textsim-<name>`` and ``textsim_<name>``."""

    name: str
    help: str
    convert: Callable[[Any], Any] = as_str
    default: Any = None
    env: tuple[str, ...] = ()
    flag: bool = True
    ini: bool = True
    ini_type: str = "string"  # or "linelist" / "bool"
    metavar: str | None = None
    flag_action: str | None = None  # e.g. "append" / "store_true"
    secret: bool = False  # refuse values from flags and ini: secrets come from the environment
    # Its ini value may hold " #" or " ;" (regular expressions): never taken for a comment.
    literal_ini: bool = False
    # The default as a user types it, where the value is not text (the docs show it).
    default_text: str | None = None
    # Checked when the plugin starts, so a bad value is a usage error before any
    # test runs; False: checked where it is used, failing only what uses it.
    at_start: bool = True

    @property
    def flag_name(self) -> str:
        return "--textsim-" + self.name.replace("_", "-")

    @property
    def dest(self) -> str:
        return "textsim_" + self.name

    @property
    def ini_name(self) -> str:
        return "textsim_" + self.name


# The package's settings while pytest_textsim.settings.table declares them; None once
# it has (seal()): the table is read-only from then on.
_table: dict[str, Setting] = {}
_declaring: dict[str, Setting] | None = _table

#: The package's settings by name, read-only (declared in :mod:`pytest_textsim.settings.table`).
#: A run's table, with the threshold settings of the metrics its ``conftest.py``
#: files registered, is :func:`current_settings`.
SETTINGS: Mapping[str, Setting] = MappingProxyType(_table)
del _table


def register(setting: Setting) -> Setting:
    """Declare a setting of the package (only while :mod:`.table` is being imported)."""
    if setting.name in SETTINGS:
        raise RuntimeError(f"setting {setting.name!r} registered twice")
    if _declaring is None:
        raise RuntimeError(
            f"setting {setting.name!r}: the package's settings are read-only once imported"
        )
    _declaring[setting.name] = setting
    return setting


def seal() -> None:
    """End the declarations: :data:`SETTINGS` is read-only from now on."""
    global _declaring
    _declaring = None


def current_settings() -> Mapping[str, Setting]:
    """The settings of the run current in this context (the package's and the threshold
    settings of the metrics it registered), or the package's outside a run."""
    run = current_run()
    return SETTINGS if run is None else run.settings


@dataclass
class Resolved:
    value: Any
    source: str  # human description: "--textsim-x on the command line", ...


@dataclass
class Resolver:
    """Resolves settings from a pytest config (optional) and an environment.

    ``config`` may be ``None`` (the CLI, a plain script): then only the
    environment, explicit overrides and defaults apply. ``overrides`` play the
    role of the command line for the CLI.
    """

    config: Any = None
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    overrides: dict[str, Any] = field(default_factory=dict)
    # How messages name an override's flag: the textsim command's flags lack "textsim-".
    override_prefix: str = "--textsim-"
    # How messages name a setting (``judge_timeout``) where this resolver reads it,
    # when not as pytest names it: the textsim command names its own flags.
    wording: Callable[[str], str] | None = field(default=None, repr=False, compare=False)
    # The settings it resolves: the run's when made in one (a metric's threshold
    # setting registered in a conftest.py among them), else the package's.
    settings: Mapping[str, Setting] = field(
        default_factory=current_settings, repr=False, compare=False
    )
    _cache: dict[str, Resolved] = field(default_factory=dict)

    def _ini_where(self, name: str) -> str:
        """``in pytest.ini``, or ``from -o`` when ``-o name=...`` overrode the file."""
        overrides = getattr(getattr(self.config, "option", None), "override_ini", None) or []
        if any(str(item).partition("=")[0].strip() == name for item in overrides):
            return "from -o on the command line"
        return f"in {self.ini_file_name()}"

    def ini_file_name(self) -> str:
        inipath = getattr(self.config, "inipath", None) if self.config is not None else None
        return inipath.name if inipath is not None else "the ini file"

    def _raw(self, setting: Setting) -> tuple[Any, str]:
        if setting.name in self.overrides and self.overrides[setting.name] is not None:
            flag = self.override_prefix + setting.name.replace("_", "-")
            return self.overrides[setting.name], f"{flag} on the command line"
        if self.config is not None and setting.flag:
            value = self.config.getoption(setting.dest, default=None)
            if value is not None and value != []:
                return value, f"{setting.flag_name} on the command line"
        for var in setting.env:
            value = self.environ.get(var)
            if value is not None and value.strip() != "":
                return value, f"{var} in the environment"
        if self.config is not None and setting.ini:
            value = self.config.getini(setting.ini_name)
            if value not in (None, "", []):
                if setting.secret:
                    where = self._ini_where(setting.ini_name)
                    raise ConfigError(
                        f"{setting.ini_name} {where}: secrets are read only from "
                        f"the environment; remove it from the file and set "
                        f"{' or '.join(setting.env) or 'the environment variable'} instead"
                    )
                where = self._ini_where(setting.ini_name)
                problem = self._inline_comment(setting, value, where)
                if problem:
                    raise ConfigError(problem)
                return value, f"{setting.ini_name} {where}"
        return _MISSING, "default"

    def _inline_comment(self, setting: Setting, value: Any, where: str) -> str | None:
        """The error for a value of the ini file itself (not ``-o``, not a TOML file,
        whose comments TOML strips) that carries an inline comment, else None."""
        inipath = getattr(self.config, "inipath", None)
        if setting.literal_ini or inipath is None or str(inipath).endswith(".toml"):
            return None
        if not where.startswith("in "):
            return None
        problem = inline_comment(value)
        return f"{setting.ini_name} {where}: {problem}" if problem else None

    def inline_comments(self) -> list[str]:
        """The inline-comment error of every setting in the ini file that has one, so
        the plugin can refuse them all at start rather than one when it is first used."""
        if self.config is None:
            return []
        problems = []
        for setting in self.settings.values():
            if not setting.ini or setting.secret:
                continue
            value = self.config.getini(setting.ini_name)
            if value not in (None, "", []):
                problem = self._inline_comment(setting, value, self._ini_where(setting.ini_name))
                if problem:
                    problems.append(problem)
        return problems

    def resolve(self, name: str) -> Resolved:
        if name in self._cache:
            return self._cache[name]
        setting = self.settings[name]
        raw, source = self._raw(setting)
        if raw is _MISSING:
            resolved = Resolved(setting.default, "default")
        else:
            resolved = Resolved(convert(setting, raw, source), source)
        self._cache[name] = resolved
        return resolved

    def get(self, name: str) -> Any:
        return self.resolve(name).value

    def path(self, name: str, base: str | os.PathLike[str]) -> pathlib.Path | None:
        """A path setting: relative to the ini file's folder when it was set there,
        else to ``base`` (where pytest or the command started); ``None`` when unset."""
        resolved = self.resolve(name)
        if not resolved.value:
            return None
        path = pathlib.Path(resolved.value).expanduser()
        if path.is_absolute():
            return path
        inipath = getattr(self.config, "inipath", None) if self.config is not None else None
        if inipath is not None and resolved.source.startswith(f"textsim_{name} in"):
            return pathlib.Path(inipath).parent / path
        return pathlib.Path(base) / path


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean textsim_judge_model?)`` for the closest of ``known``, or ``""``."""
    close = closest(name, known)
    return f"; did you mean {close}?" if close else ""


def unknown_ini_key(name: str, where: str) -> str | None:
    """The message for ``textsim_*`` key ``name`` set ``where`` if it is no setting, else None.

    ``textsim_judge_modle: unknown setting (in pytest.ini); did you mean textsim_judge_model?``
    """
    known = [s.ini_name for s in current_settings().values() if s.ini]
    if not name.startswith("textsim_") or name in known:
        return None
    return f"{name}: unknown setting ({where}){did_you_mean(name, known)}"


def unknown_environment(environ: Mapping[str, str]) -> list[str]:
    """A warning for each ``TEXTSIM_*`` variable that no setting reads (a typo, or
    a setting that is not read from the environment), with a did-you-mean."""
    known = sorted(
        {var for s in current_settings().values() for var in s.env if var.startswith("TEXTSIM_")}
    )
    return [
        f"warning: {name} in the environment is no pytest-textsim setting; it is ignored"
        + did_you_mean(name, known)
        for name in sorted(environ)
        if name.startswith("TEXTSIM_") and name not in known
    ]


def convert(setting: Setting, raw: Any, source: str) -> Any:
    """Convert ``raw`` with the setting's converter; errors name ``source``."""
    try:
        return setting.convert(raw)
    except ValueError as exc:
        raise ConfigError(f"{source}: {exc}") from None
