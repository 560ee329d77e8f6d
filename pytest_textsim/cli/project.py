"""The project's pytest configuration file, read by the ``textsim`` command.

``textsim score``, ``compare`` and ``cache`` run outside pytest but should use
the settings a team already keeps for its test suite: the judge model and
endpoint, thresholds, ``textsim_max_drop``, the cache folder. This module finds
the file pytest itself would use when started in a directory, with pytest's
rules (the first folder, walking up, that has ``pytest.toml``,
``.pytest.toml``, ``pytest.ini``, ``.pytest.ini``, ``pyproject.toml`` with
``[tool.pytest]`` / ``[tool.pytest.ini_options]``, ``tox.ini`` with
``[pytest]`` or ``setup.cfg`` with ``[tool:pytest]``), and serves its
``textsim_*`` keys to :class:`~pytest_textsim.settings.table.Resolver` the way a
``pytest.Config`` does. It parses with the same libraries pytest does
(``iniconfig``, ``tomllib``/``tomli``), which pytest installs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import ConfigError
from ..settings.table import JUDGE_COMMAND_FLAGS, SETTINGS, Resolver


@dataclass
class ProjectConfig:
    """The ``textsim_*`` keys of one pytest configuration file (or none).

    Offers what :class:`~pytest_textsim.settings.table.Resolver` reads from a pytest
    config: ``getoption`` (no command line here: always the default),
    ``getini`` and ``inipath``; and ``rootpath``, the folder pytest would
    use as its rootdir (where the judge cache lives by default).
    """

    inipath: Path | None = None
    rootpath: Path = field(default_factory=Path.cwd)
    values: dict[str, Any] = field(default_factory=dict)

    def getoption(self, name: str, default: Any = None) -> Any:
        return default

    def getini(self, name: str) -> Any:
        """The value pytest's ``getini`` would give for ``name``: text, or a list of lines."""
        setting = SETTINGS.get(name[len("textsim_") :]) if name.startswith("textsim_") else None
        value = self.values.get(name)
        kind = setting.ini_type if setting is not None else "string"
        if kind == "linelist":
            if value is None:
                return []
            if isinstance(value, list):
                return [str(item).strip() for item in value if str(item).strip()]
            return [line.strip() for line in str(value).splitlines() if line.strip()]
        if value is None:
            return False if kind == "bool" else ""
        if isinstance(value, bool):  # TOML mode keeps native types
            return value if kind == "bool" else str(value).lower()
        return value if isinstance(value, list) else str(value)


def _toml(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.9/3.10 only
        import tomli as tomllib
    try:
        document: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it as TOML ({exc})") from None
    return document


def _ini_section(path: Path, *sections: str) -> dict[str, Any] | None:
    import iniconfig

    try:
        parsed = iniconfig.IniConfig(str(path))
    except (OSError, UnicodeDecodeError, iniconfig.ParseError) as exc:
        raise ConfigError(f"{path}: cannot read it as an ini file ({exc})") from None
    for section in sections:
        if section in parsed:
            return dict(parsed[section].items())
    return None


def _pytest_ini(path: Path) -> dict[str, Any] | None:
    return _ini_section(path, "pytest") or {}  # always the config file, even without [pytest]


def _pytest_toml(path: Path) -> dict[str, Any] | None:
    table = _toml(path).get("pytest")
    return dict(table) if isinstance(table, dict) else {}


def _pytest_at_least(*version: int) -> bool:
    """Whether the installed pytest is this version or newer: its rules changed
    (8.1: a bare ``pyproject.toml`` marks the rootdir; 9: ``pytest.toml`` and
    native ``[tool.pytest]`` tables)."""
    import importlib.metadata

    try:
        installed = importlib.metadata.version("pytest").split(".")
        return tuple(int(part) for part in installed[: len(version)]) >= version
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return True


def _pytest_9() -> bool:
    return _pytest_at_least(9)


def _pyproject(path: Path) -> dict[str, Any] | None:
    tool = _toml(path).get("tool", {})
    pytest_table = tool.get("pytest") if isinstance(tool, dict) else None
    if not isinstance(pytest_table, dict):
        return None
    ini_options = pytest_table.get("ini_options")
    native = {k: v for k, v in pytest_table.items() if k != "ini_options"}
    if native and _pytest_9():
        return native
    return dict(ini_options) if isinstance(ini_options, dict) else None


#: pytest's files, in its order of precedence within one folder (the installed
#: pytest's: the TOML files count from pytest 9 on).
LOADERS: Mapping[str, Callable[[Path], dict[str, Any] | None]] = MappingProxyType({
    **({"pytest.toml": _pytest_toml, ".pytest.toml": _pytest_toml} if _pytest_9() else {}),
    "pytest.ini": _pytest_ini,
    ".pytest.ini": _pytest_ini,
    "pyproject.toml": _pyproject,
    "tox.ini": lambda path: _ini_section(path, "pytest"),
    "setup.cfg": lambda path: _ini_section(path, "tool:pytest"),
})


def _textsim_keys(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if k.startswith("textsim_")}


def load(path: Path) -> ProjectConfig:
    """The configuration in ``path``, a file named with ``-c``; errors name the file."""
    path = path.resolve()
    if not path.is_file():
        raise ConfigError(f"{path}: no such configuration file")
    loader = LOADERS.get(path.name)
    if loader is None:
        if path.suffix == ".toml":
            document = _toml(path)
            table = document.get("pytest")
            values = dict(table) if isinstance(table, dict) else (_pyproject(path) or {})
        elif path.suffix in (".ini", ".cfg"):
            values = _ini_section(path, "pytest", "tool:pytest") or {}
        else:
            raise ConfigError(f"{path}: expected a .ini, .cfg or .toml file")
    else:
        values = loader(path) or {}
    return ProjectConfig(path, path.parent, _textsim_keys(values))


def locate(start: Path | None = None) -> ProjectConfig:
    """The configuration pytest would use when started in ``start`` (default: here).

    With no configuration file, the settings come from the environment and
    defaults only, and the rootdir is ``start`` (or the folder of a
    ``pyproject.toml`` without a pytest table, as pytest does).
    """
    start = (start or Path.cwd()).resolve()
    bare_pyproject: Path | None = None
    for folder in (start, *start.parents):
        for name, loader in LOADERS.items():
            candidate = folder / name
            if not candidate.is_file():
                continue
            if name == "pyproject.toml" and bare_pyproject is None:
                bare_pyproject = candidate
            values = loader(candidate)
            if values is not None:
                return ProjectConfig(candidate, folder, _textsim_keys(values))
    if bare_pyproject is not None and _pytest_at_least(8, 1):
        return ProjectConfig(bare_pyproject, bare_pyproject.parent, {})
    return ProjectConfig(None, start, {})


def find(config_file: str | None) -> ProjectConfig:
    """``-c FILE`` when given, else the file pytest would find from the working directory."""
    return load(Path(config_file)) if config_file else locate()


CONFIG_HELP = (
    "read textsim_* settings from this pytest configuration file (default: the file "
    "pytest would use when started here: pytest.ini, pyproject.toml, tox.ini, setup.cfg...)"
)


def add_config_argument(parser: Any) -> None:
    """Add ``-c/--config-file`` to a ``textsim`` subcommand, named as pytest names it."""
    parser.add_argument("-c", "--config-file", metavar="FILE", help=CONFIG_HELP)


def add_judge_arguments(parser: Any, title: str) -> None:
    """Add the judge settings' flags (``--judge-model``, ...) as a group named ``title``."""
    group = parser.add_argument_group(title)
    for name in JUDGE_COMMAND_FLAGS:
        setting = SETTINGS[name]
        group.add_argument(
            "--" + name.replace("_", "-"),
            dest=f"setting_{name}",
            metavar=setting.metavar or name.split("_")[-1].upper(),
            help=setting.help,
        )


def command_resolver(args: Any, extra: dict[str, Any] | None = None) -> Resolver:
    """The settings of a subcommand with :func:`add_config_argument` and
    :func:`add_judge_arguments`: its judge flags (and the settings ``extra`` gives, by
    name; ``None`` values left out), then the environment, then the project's pytest
    configuration. A bad file or value is a ``UsageError``."""
    from ..engine.plan import UsageError

    overrides = {
        name: getattr(args, f"setting_{name}")
        for name in JUDGE_COMMAND_FLAGS
        if getattr(args, f"setting_{name}", None) is not None
    }
    overrides.update({k: v for k, v in (extra or {}).items() if v is not None})
    try:
        # The package's settings: the command scores the package's metrics, even when
        # called in-process from a pytest run that registered metrics of its own.
        return Resolver(
            find(args.config_file), overrides=overrides, override_prefix="--", wording=words,
            settings=SETTINGS,
        )  # fmt: skip
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def words(name: str) -> str:
    """How the ``textsim`` command's messages name setting ``name``: its own flag
    (``--judge-timeout``), else the ini key and the variable that set it."""
    if name in JUDGE_COMMAND_FLAGS:
        return "--" + name.replace("_", "-")
    setting = SETTINGS[name]
    return " or ".join((setting.ini_name, *setting.env[:1]))
