"""Errors every layer raises: settings that cannot be used, metrics that cannot run.

They live at the bottom so that the engines, the judge, the plugin and the
command line can raise and catch them without importing each other.
"""

from __future__ import annotations


class ConfigError(ValueError):
    """A setting has a value that cannot be used; the message names its source."""


class MetricUnavailable(RuntimeError):
    """The metric cannot run as configured; the message says what to set."""


__all__ = ["ConfigError", "MetricUnavailable"]
