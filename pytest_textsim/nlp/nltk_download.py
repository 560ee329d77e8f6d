"""Downloading one NLTK data package, safely for many processes at once.

:func:`install` holds a file lock in the download directory, re-checks whether
another process installed the package meanwhile, fetches the server's
``index.xml`` and the package zip (short per-step timeouts and a budget for the
whole attempt), verifies size and checksum, unpacks into a temporary directory
beside the target and renames it into place: readers see no package or a
complete one. A failure is written to a small memo file there, so the other
processes waiting on the lock give up at once instead of each waiting out the
same timeout.

NLTK's own downloader is not used: it refuses servers on private and loopback
addresses (a mirror inside a company network) and waits minutes on a dead network.
"""

from __future__ import annotations

import os
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from ..errors import TextsimError

if TYPE_CHECKING:
    from .nltk_resources import Resource

_T = TypeVar("_T")

# How long other processes sharing the download directory trust a recent
# failure: eight xdist workers without network wait for one timeout, not eight.
FAILURE_MEMO_SECONDS = 60.0
LOCK_NAME = ".textsim-nltk.lock"
MEMO_NAME = ".textsim-nltk-failures.json"
# Caps on what a data server may hand us; the largest package we ask for
# (wordnet) is 11 MB zipped and 35 MB unzipped.
MAX_INDEX_BYTES = 16 * 1024 * 1024
MAX_PACKAGE_BYTES = 256 * 1024 * 1024
MAX_UNZIPPED_BYTES = 1024 * 1024 * 1024


class DownloadFailed(TextsimError):
    """A download attempt failed; the message is the reason, written for the user."""


def redact(url: str) -> str:
    """``url`` without user and password, for messages: a mirror URL may carry them."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    netloc = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


@contextmanager
def file_lock(path: Path, wait: float) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` across processes (released if the holder dies)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                if os.name == "nt":  # pragma: no cover - exercised on Windows only
                    import msvcrt

                    msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
                else:
                    import fcntl

                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise DownloadFailed(
                        f"another process held the download lock {path} for over {wait:.0f} s"
                    ) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def bounded(fn: Callable[[], _T], seconds: float) -> _T:
    """Run ``fn`` in a thread and give up after ``seconds``.

    Socket timeouts do not cover name resolution, which can hang for long on a
    machine without network; the thread is abandoned then (it only reads into memory).
    """
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: B036 - handed back to the caller below
            box["error"] = exc

    thread = threading.Thread(target=target, name="textsim-nltk-download", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise DownloadFailed(f"no complete answer within {seconds:.0f} s")
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


def fetch(url: str, timeout: float, limit: int) -> bytes:
    """The body at ``url``; ``timeout`` bounds each network step, ``limit`` the size."""
    import socket
    import urllib.error
    import urllib.request

    request = urllib.request.Request(redact(url), headers={"User-Agent": "pytest-textsim"})
    parts = urllib.parse.urlsplit(url)
    if parts.username is not None:
        # urllib cannot send user:password@ from a URL itself: a basic-auth header,
        # "unredirected" so that a redirect to another host does not carry it along.
        import base64

        user, password = urllib.parse.unquote(parts.username), parts.password or ""
        pair = f"{user}:{urllib.parse.unquote(password)}".encode()
        request.add_unredirected_header("Authorization", "Basic " + base64.b64encode(pair).decode())
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            chunks: list[bytes] = []
            total = 0
            while True:
                block = response.read1(1 << 16)
                if not block:
                    return b"".join(chunks)
                total += len(block)
                if total > limit:
                    raise DownloadFailed(f"{redact(url)} sent more than {limit} bytes")
                chunks.append(block)
    except urllib.error.HTTPError as exc:
        raise DownloadFailed(f"{redact(url)} answered HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, (TimeoutError, socket.timeout)):
            reason = f"no answer within {timeout:g} s"
        raise DownloadFailed(f"cannot reach {redact(url)}: {reason}") from None
    except (TimeoutError, socket.timeout):
        raise DownloadFailed(f"{redact(url)}: no answer within {timeout:g} s") from None
    except OSError as exc:
        raise DownloadFailed(f"{redact(url)}: {exc}") from None


def download_package(resource: Resource, index_url: str, timeout: float) -> bytes:
    """The verified package zip of ``resource``, as the server's index describes it."""
    import hashlib
    from xml.etree import ElementTree

    body = fetch(index_url, timeout, MAX_INDEX_BYTES)
    # The index is tiny and never has a DTD; refusing one rules out entity expansion.
    if b"<!DOCTYPE" in body or b"<!ENTITY" in body:
        raise DownloadFailed(f"{redact(index_url)} is not an NLTK data index (has a DTD)")
    try:
        root = ElementTree.fromstring(body)
    except ElementTree.ParseError as exc:
        raise DownloadFailed(f"{redact(index_url)} is not an NLTK data index: {exc}") from None
    entry = next((p for p in root.iter("package") if p.get("id") == resource.id), None)
    if entry is None:
        raise DownloadFailed(f"{redact(index_url)} lists no package {resource.id!r}")
    url = urllib.parse.urljoin(redact(index_url), entry.get("url", ""))
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise DownloadFailed(f"the index gives {resource.id!r} an unusable URL")
    index_parts, parts = urllib.parse.urlsplit(index_url), urllib.parse.urlsplit(url)
    if index_parts.username is not None and parts.username is None:
        if (parts.hostname, parts.port) == (index_parts.hostname, index_parts.port):
            # a mirror behind a login serves its packages under the same login
            url = parts._replace(netloc=index_parts.netloc).geturl()
    size = entry.get("size")
    data = fetch(url, timeout, MAX_PACKAGE_BYTES)
    if size is not None and size.isdigit() and len(data) != int(size):
        raise DownloadFailed(
            f"{redact(url)} sent {len(data)} bytes, the index says {size}: incomplete download"
        )
    for attribute, algorithm in (("sha256_checksum", "sha256"), ("checksum", "md5")):
        expected = entry.get(attribute)
        if expected and hashlib.new(algorithm, data).hexdigest() != expected.lower():
            raise DownloadFailed(f"{redact(url)}: {algorithm} checksum does not match the index")
    return data


def unpack(data: bytes, resource: Resource, into: Path) -> Path:
    """Unpack the package zip below ``into``; returns the package directory there."""
    import io
    import shutil
    import zipfile

    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise DownloadFailed(f"the {resource.id} package is not a zip file") from None
    with zf:
        members = zf.infolist()
        if sum(m.file_size for m in members) > MAX_UNZIPPED_BYTES:
            raise DownloadFailed(f"the {resource.id} package unzips to over 1 GiB")
        for member in members:
            parts = member.filename.split("/")
            unsafe = (
                "\\" in member.filename
                or parts[0] != resource.id
                or any(p in ("..", "") for p in parts[:-1])
                or (member.external_attr >> 16) & 0o170000 == 0o120000  # a symlink
            )
            if unsafe:
                raise DownloadFailed(
                    f"the {resource.id} package holds an unexpected entry {member.filename!r}"
                )
            target = into.joinpath(*parts)
            if member.is_dir():
                target.mkdir(mode=0o755, parents=True, exist_ok=True)
                continue
            target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            # Explicit modes: NLTK refuses to read data that others can write.
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            with zf.open(member) as src, open(fd, "wb") as dst:
                shutil.copyfileobj(src, dst)
    package = into / resource.id
    missing = [n for n in resource.files if not (package / n).is_file()]
    if missing:
        raise DownloadFailed(f"the {resource.id} package lacks {', '.join(missing)}")
    return package


def _memo_key(resource: Resource, index_url: str) -> str:
    import hashlib

    # A hash, not the URL: the memo file must not hold a mirror's credentials.
    return resource.id + ":" + hashlib.sha256(index_url.encode()).hexdigest()[:16]


def _read_memo(memo: Path) -> dict[str, Any]:
    import json

    try:
        entries = json.loads(memo.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return entries if isinstance(entries, dict) else {}


def _check_memo(memo: Path, resource: Resource, index_url: str) -> None:
    try:
        entry = _read_memo(memo)[_memo_key(resource, index_url)]
        age = time.time() - float(entry["time"])
        reason = str(entry["reason"])
    except (KeyError, TypeError, ValueError):
        return
    if 0 <= age < FAILURE_MEMO_SECONDS:
        raise DownloadFailed(f"{reason} (another process tried {age:.0f} s ago)")


def _write_memo(memo: Path, resource: Resource, index_url: str, reason: str | None) -> None:
    import json

    entries = _read_memo(memo)
    key = _memo_key(resource, index_url)
    if reason is None:
        if entries.pop(key, None) is None:
            return
    else:
        entries[key] = {"time": time.time(), "reason": reason}
    try:
        memo.write_text(json.dumps(entries), encoding="utf-8")
    except OSError:
        pass  # the memo only saves other processes a wait


def install(
    resource: Resource,
    target: Path,
    *,
    index_url: str,
    timeout: float,
    lookup: Callable[[], Path | None],
) -> None:
    """Download ``resource`` into the NLTK data directory ``target`` unless ``lookup`` finds it.

    ``lookup`` is asked again once the lock is held: another process may have
    installed the package while this one waited. Raises :class:`DownloadFailed`.
    """
    import shutil
    import tempfile

    # A budget for the whole attempt too: a server dripping bytes never trips
    # the per-step timeout.
    budget = max(30.0, 12 * timeout)
    subdir = target / resource.subdir
    try:
        target.mkdir(mode=0o755, parents=True, exist_ok=True)
    except OSError as exc:
        raise DownloadFailed(f"cannot create {target}: {exc}") from None
    with file_lock(target / LOCK_NAME, wait=budget + 30):
        if lookup() is not None:
            return
        final = subdir / resource.id
        if final.exists():
            if all((final / name).is_file() for name in resource.files):
                raise DownloadFailed(
                    f"it is in {target}, but that directory is not on NLTK's search path; "
                    "add it to NLTK_DATA"
                )
            # Not ours to delete: NLTK's own downloader may be writing it.
            raise DownloadFailed(f"{final} exists but is incomplete; delete it and retry")
        memo = target / MEMO_NAME
        _check_memo(memo, resource, index_url)
        try:
            data = bounded(lambda: download_package(resource, index_url, timeout), budget)
        except DownloadFailed as exc:
            _write_memo(memo, resource, index_url, str(exc))
            raise
        subdir.mkdir(mode=0o755, exist_ok=True)
        # Staged beside the target: a rename within one filesystem is atomic.
        staging = Path(tempfile.mkdtemp(prefix=".textsim-", dir=subdir))
        try:
            package = unpack(data, resource, staging)
            # rename is atomic: readers see no directory or a complete one.
            os.rename(package, final)
            # NLTK's downloader keeps the zip beside the directory; so do we, so that
            # nltk.download() and tools checking for <id>.zip count it as installed.
            archive = final.with_suffix(".zip")
            if not archive.exists():
                (staging / archive.name).write_bytes(data)
                os.rename(staging / archive.name, archive)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        _write_memo(memo, resource, index_url, None)
