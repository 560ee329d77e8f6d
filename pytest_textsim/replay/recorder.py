"""The replay state of one test: what is recorded, what was served, what to write back.

Its modes are the judge cache's record modes (:class:`~pytest_textsim.settings.modes.RecordMode`):

- ``once``: replay what is recorded, record what is not (and partial streams again);
- ``none``: replay only; a request with no recording raises :class:`ReplayMiss`;
- ``rewrite``: record everything again;
- ``off``: no recording (the plugin never builds a recorder).

The n-th identical request of a test gets the n-th recorded answer, so a test
that asks the same thing twice (or a test repeated N times) replays each answer
in its order.
"""

from __future__ import annotations

import contextvars
import threading
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlsplit

from ..settings.modes import MODES, RecordMode
from .cassette import Cassette, Interaction, cassette_name, load, save
from .matching import Matcher, RequestKey, json_differences
from .redact import Redactor

#: The case of a batch whose calls are made in this context (thread or task), ``""``
#: outside one. Its calls are recorded with it and replayed from its own recordings,
#: so that concurrent cases replay the same way whatever order they finish in.
CASE_TAG: contextvars.ContextVar[str] = contextvars.ContextVar("textsim_replay_case", default="")


class ReplayMiss(BaseException):
    """A request (or a connection) that replay mode ``none`` cannot answer.

    A ``BaseException`` on purpose, like ``pytest.fail``'s: HTTP clients retry
    on ``Exception`` (the ``openai`` client wraps it in "Connection error." after
    its retries), which would hide which request had no recording.
    """


class Recorder:
    """Replays and records the HTTP calls of one test, for one cassette file."""

    def __init__(
        self,
        folder: Path,
        test_id: str,
        mode: RecordMode | str,
        *,
        matcher: Matcher | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        if mode not in MODES or not RecordMode(mode).enabled:
            raise ValueError(f"replay mode must be one of once, none, rewrite; got {mode!r}")
        self.test_id = test_id
        self.mode = RecordMode(mode)
        self.path = folder / cassette_name(test_id)
        self.matcher = matcher or Matcher()
        self.redactor = redactor or Redactor()
        self._lock = threading.Lock()
        self._recorded: list[Interaction] = []
        if self.mode.reads:
            cassette = load(self.path)
            if cassette is not None:
                self._recorded = cassette.interactions
        # By case and request: the n-th identical request of a case gets its n-th answer.
        self._slots: dict[tuple[str, str], list[int]] = defaultdict(list)
        for index, interaction in enumerate(self._recorded):
            self._slots[interaction.case, self.key_of(interaction).digest].append(index)
        self._asked: dict[tuple[str, str], int] = defaultdict(int)
        self._used: set[int] = set()
        self.log: list[Interaction] = []  # this run's interactions, in order
        self.replayed = 0
        self.recorded = 0
        self.misses: list[str] = []

    def key_of(self, interaction: Interaction) -> RequestKey:
        return self.matcher.key(
            interaction.method,
            interaction.url,
            interaction.request_headers,
            interaction.request_body,
        )

    def lookup(self, interaction: Interaction) -> Interaction | None:
        """The recorded answer to this (redacted) request, or None to make it live.

        In mode ``none`` a request with no recording raises :class:`ReplayMiss`.
        """
        key = self.key_of(interaction)
        slot = (interaction.case, key.digest)
        with self._lock:
            nth = self._asked[slot]
            self._asked[slot] += 1
            slots = self._slots.get(slot, [])
            if nth < len(slots):
                index = slots[nth]
                recorded = self._recorded[index]
                self._used.add(index)
                if recorded.complete or not self.mode.may_call:
                    self.log.append(recorded)
                    self.replayed += 1
                    return recorded
                return None  # a stream that ended early: record it again
            if not self.mode.may_call:
                message = self._miss_message(key, interaction, nth)
                self.misses.append(message)
                raise ReplayMiss(message)
            return None

    def add(self, interaction: Interaction) -> None:
        """A live interaction to write to the cassette (its stream may still be read)."""
        with self._lock:
            self.log.append(interaction)
            self.recorded += 1

    def connection_refused(self, address: str) -> ReplayMiss:
        message = (
            f"textsim replay: {self.test_id} opened a connection to {address} outside httpx "
            f"(a raw socket, requests/urllib3, aiohttp, ...). With --textsim-replay=none "
            f"every call must be replayed, and only calls made through httpx (the openai and "
            f"anthropic clients' transport) are recorded; make the call through httpx or "
            f"leave this test out of replay"
        )
        with self._lock:
            self.misses.append(message)
        return ReplayMiss(message)

    def finish(self, passed: bool) -> bool:
        """Write the cassette if this run recorded anything; True if it was written.

        After a passing run the cassette holds exactly this run's interactions,
        so answers to requests the test no longer makes are dropped; after a
        failing run the unused recordings are kept too.
        """
        with self._lock:
            if self.recorded == 0:
                return False
            interactions = list(self.log)
            if not passed:
                interactions += [
                    recorded
                    for index, recorded in enumerate(self._recorded)
                    if index not in self._used
                ]
        # Responses are masked here, with every secret the test's requests sent:
        # a key the server echoes ("Incorrect API key provided: sk-...") is masked
        # like one sent.
        save(self.path, Cassette(self.test_id, interactions), self.redactor.line)
        return True

    def _miss_message(self, key: RequestKey, interaction: Interaction, nth: int) -> str:
        where = f"{self.path}" if self.path.exists() else f"{self.path} (no such file)"
        lines = [
            f"textsim replay: no recording of {key.describe()} for {self.test_id} "
            f"(replay mode none, cassette {where})."
        ]
        same_url = [
            index
            for index, recorded in enumerate(self._recorded)
            if self.key_of(recorded).url == key.url and recorded.method == interaction.method
        ]
        if nth and len(self._slots.get((interaction.case, key.digest), [])) == nth:
            lines.append(f"The same request is recorded {nth} time(s); this is call {nth + 1}.")
        elif same_url:
            live = self.matcher.drop_ignored(interaction.request_json())
            recorded = self.matcher.drop_ignored(self._recorded[same_url[0]].request_json())
            paths = json_differences(recorded, live)
            if paths:
                lines.append(
                    "The nearest recorded request to this URL differs in the body at: "
                    + ", ".join(paths)
                    + " (name volatile fields in textsim_replay_ignore)."
                )
        else:
            hosts = self._other_hosts(key, interaction.method)
            if hosts:
                # Recorded, but against another server: the app's base URL moved.
                lines.append(
                    f"The cassette records {interaction.method} {_path(key.url)} at "
                    f"{', '.join(hosts)}, not at {_host(key.url)}: point the app's base URL "
                    f"back at {hosts[0]} to replay it (a cassette matches the host too)."
                )
                return " ".join(lines)
        lines.append(
            "Record it with --textsim-replay=once (records only what is missing) "
            "or --textsim-replay=rewrite, then commit the cassette."
        )
        return " ".join(lines)

    def _other_hosts(self, key: RequestKey, method: str) -> list[str]:
        """The hosts the cassette records ``method`` and ``key``'s path (and query) at."""
        path = _path(key.url)
        found = {
            _host(url)
            for url in (
                self.key_of(recorded).url
                for recorded in self._recorded
                if recorded.method == method
            )
            if _path(url) == path and _host(url) != _host(key.url)
        }
        return sorted(found)


def _host(url: str) -> str:
    return urlsplit(url).netloc


def _path(url: str) -> str:
    """The path and query of a URL: what a request asks of whichever host it reaches."""
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")
