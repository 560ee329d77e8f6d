"""Errors every layer raises, under one root: :class:`TextsimError`.

They live at the bottom so that the engines, the judge, the plugin and the
command line can raise and catch them without importing each other. Every
error the package defines derives from :class:`TextsimError`, so one
``except pytest_textsim.TextsimError`` catches them all; each also keeps the
built-in base it had (``ValueError`` for bad input, ``RuntimeError`` for a
metric that cannot run), so existing ``except ValueError`` code still works.
"""

from __future__ import annotations


class TextsimError(Exception):
    """The root of every error pytest-textsim raises."""


class TextsimWarning(UserWarning):
    """The root of every warning pytest-textsim issues."""


class ConfigError(TextsimError, ValueError):
    """A setting has a value that cannot be used; the message names its source."""


class MetricUnavailable(TextsimError, RuntimeError):
    """The metric cannot run as configured; the message says what to set."""


__all__ = ["ConfigError", "MetricUnavailable", "TextsimError", "TextsimWarning"]
