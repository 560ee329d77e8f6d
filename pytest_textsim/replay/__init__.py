"""Record and replay the HTTP calls a test makes through httpx (no pytest in here).

The plugin builds one :class:`Recorder` per test and routes the process's httpx
transports through it with :func:`activate`; see ``docs/replay.md``.
"""

from __future__ import annotations

from ..settings.modes import MODES
from .cassette import Cassette, CassetteError, Interaction, cassette_name, load
from .intercept import (
    EXEMPT_ATTRIBUTE,
    activate,
    deactivate,
    exempt_request,
    exempt_request_async,
    install,
    observe,
    uninstall,
)
from .matching import Matcher, RequestKey
from .recorder import CASE_TAG, Recorder, ReplayMiss
from .redact import MASK, Redactor

__all__ = [
    "CASE_TAG",
    "EXEMPT_ATTRIBUTE",
    "MASK",
    "MODES",
    "Cassette",
    "CassetteError",
    "Interaction",
    "Matcher",
    "Recorder",
    "Redactor",
    "ReplayMiss",
    "RequestKey",
    "activate",
    "cassette_name",
    "deactivate",
    "exempt_request",
    "exempt_request_async",
    "install",
    "load",
    "observe",
    "uninstall",
]
