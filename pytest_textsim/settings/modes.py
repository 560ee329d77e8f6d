"""Record modes: what the judge cache and the replay of app calls may do in a run.

One type for both, named like pytest-recording's record modes, in the manner of
vcrpy's ``RecordMode``: callers ask the mode (:attr:`RecordMode.reads`,
:attr:`RecordMode.may_call`...) instead of comparing its name. The judge cache
stores judge replies; a replay cassette stores a test's HTTP calls.

A mode is a ``str``: it equals its name (``RecordMode.NONE == "none"``), prints
as its name and travels in JSON as its name.
"""

from __future__ import annotations

from enum import Enum
from typing import Any


class RecordMode(str, Enum):
    """A record mode: ``once``, ``none``, ``rewrite`` or ``off``.

    ``RecordMode("none").may_call`` is False: the run works offline.
    """

    #: Use what is stored; call for what is missing and store it.
    ONCE = "once"
    #: Use only what is stored: nothing is called (a miss is an error) and nothing
    #: is written, so a committed cache or cassette replays in a read-only checkout.
    NONE = "none"
    #: Ignore what is stored: call again and store the new answers over the old.
    REWRITE = "rewrite"
    #: No store at all: every call is made and nothing is kept.
    OFF = "off"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @classmethod
    def parse(cls, value: Any) -> RecordMode:
        """The mode named ``value`` (surrounding spaces ignored); ``ValueError`` saying
        which modes exist otherwise."""
        try:
            return cls(str(value).strip())
        except ValueError:
            raise ValueError(f"expected one of {', '.join(MODES)}, got {value!r}") from None

    @property
    def enabled(self) -> bool:
        """Whether a store is used at all (every mode but ``off``)."""
        return self is not RecordMode.OFF

    @property
    def reads(self) -> bool:
        """Whether stored answers are used (``once``, ``none``)."""
        return self in (RecordMode.ONCE, RecordMode.NONE)

    @property
    def may_call(self) -> bool:
        """Whether a real call may be made (every mode but ``none``)."""
        return self is not RecordMode.NONE

    @property
    def writes(self) -> bool:
        """Whether answers of real calls are stored (``once``, ``rewrite``)."""
        return self in (RecordMode.ONCE, RecordMode.REWRITE)

    @property
    def read_only(self) -> bool:
        """Whether the store is read and never written (``none``): it may be opened
        read-only, and a damaged one reads as empty rather than being set aside."""
        return self.reads and not self.writes


#: The mode names, in the order help texts list them.
MODES = tuple(mode.value for mode in RecordMode)
