"""Finding the NLTK data the metrics need (Punkt, perluniprops, WordNet), once per process.

Each resource is looked for, in order:

1. on NLTK's own search path (``NLTK_DATA``, ``~/nltk_data``, ``/usr/share/nltk_data``
   ... as ``nltk.data.find`` searches it), unzipped directories and ``.zip`` packages;
2. for WordNet only, in a system WordNet: ``$WNSEARCHDIR``, ``$WNHOME/dict``,
   ``/usr/share/wordnet`` (Debian/Ubuntu ``wordnet-base``), ``/usr/local/WordNet-3.0/dict``;
3. when downloads are allowed (setting ``nltk_download``: ``auto``, the default, or
   ``never``), downloaded from the NLTK data server into NLTK's default download
   directory. The download holds a file lock in that directory, so concurrent
   processes (pytest-xdist workers) download once; it unpacks into a temporary
   directory and renames it into place, so no process sees a half-written package.

The outcome, found or not, is decided once per process and per resource: a failure is
remembered and raised again at once instead of retrying on every call. When nothing
works, :class:`NltkDataError` names the resource and how to fix it.

>>> ensure_nltk_data(PUNKT)          # before nltk.word_tokenize
>>> find_wordnet()                   # doctest: +SKIP
PosixPath('/home/me/nltk_data/corpora/wordnet')
"""

from __future__ import annotations

import os
import stat
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import TextsimError
from ..settings.table import Resolver
from .nltk_download import DownloadFailed, install, redact
from .nltk_resources import PERLUNIPROPS, PUNKT, RESOURCES, WORDNET, Resource

__all__ = [
    "PERLUNIPROPS",
    "PUNKT",
    "WORDNET",
    "NltkDataError",
    "NltkDataLocator",
    "Resource",
    "configure",
    "ensure_nltk_data",
    "find_nltk_data",
    "find_wordnet",
    "located",
    "nltk_download_dir",
    "nltk_search_path",
    "use_located",
]

class NltkDataError(TextsimError, LookupError):
    """NLTK data needed by a metric is missing and could not be obtained.

    ``resources`` holds the missing :class:`Resource` objects; the message says
    where they were looked for, why no download happened, and how to fix it.
    """

    def __init__(self, message: str, resources: Sequence[Resource] = ()) -> None:
        super().__init__(message)
        self.resources = tuple(resources)

    def __str__(self) -> str:
        return str(self.args[0])


def _resource(value: Resource | str) -> Resource:
    if isinstance(value, Resource):
        return value
    key = value.strip("/").rsplit("/", 1)[-1]
    if key == "punkt":  # current NLTK's word_tokenize reads punkt_tab
        key = "punkt_tab"
    if key not in RESOURCES:
        known = ", ".join(repr(r) for r in RESOURCES)
        raise ValueError(f"unknown NLTK resource {value!r}: expected one of {known}")
    return RESOURCES[key]


def system_wordnet_dirs() -> list[Path]:
    """Where a system WordNet may be, in the order WordNet's own tools look."""
    dirs: list[Path] = []
    if os.environ.get("WNSEARCHDIR"):
        dirs.append(Path(os.environ["WNSEARCHDIR"]))
    if os.environ.get("WNHOME"):
        dirs.append(Path(os.environ["WNHOME"]) / "dict")
    dirs += [Path("/usr/share/wordnet"), Path("/usr/local/WordNet-3.0/dict")]
    return dirs


def _zip_names(path: Path) -> set[str]:
    import zipfile

    try:
        with zipfile.ZipFile(path) as zf:
            return set(zf.namelist())
    except (OSError, zipfile.BadZipFile):
        return set()


def _zip_has(path: Path, directory: str) -> bool:
    """Whether the zip holds ``directory`` (``"<id>/"``) as an entry or a prefix."""
    return any(name.startswith(directory) for name in _zip_names(path))


def _complete_zip(path: Path, resource: Resource) -> bool:
    names = _zip_names(path)
    return all(f"{resource.id}/{name}" in names for name in resource.files)


def _private(path: Path) -> bool:
    """Whether no other (non-root) account can write ``path`` (NLTK's ``_private_stat``).

    NLTK 3.10 refuses data that another account could have planted; so do we,
    so that we load exactly what NLTK would. Always true off POSIX.
    """
    if os.name != "posix":
        return True
    try:
        st = os.stat(path)
    except OSError:
        return True  # not there: nothing to distrust
    if st.st_uid not in (os.geteuid(), 0):
        return False
    return not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def nltk_search_path() -> list[str]:
    """NLTK's data search path (``nltk.data.path``), without importing nltk.

    When nltk is already imported its ``nltk.data.path`` is used, so a program
    that edits that list is obeyed. Otherwise it is rebuilt as nltk 3.10 builds
    it at import: the ``NLTK_DATA`` entries, ``~/nltk_data``, then the platform's
    standard places.
    """
    loaded = sys.modules.get("nltk.data")
    if loaded is not None and isinstance(getattr(loaded, "path", None), list):
        return [str(p) for p in loaded.path]
    path = [os.path.expanduser(d) for d in os.environ.get("NLTK_DATA", "").split(os.pathsep) if d]
    if "APPENGINE_RUNTIME" not in os.environ and os.path.expanduser("~/") != "~/":
        path.append(os.path.expanduser("~/nltk_data"))
    prefix = [os.path.join(sys.prefix, *parts, "nltk_data") for parts in ((), ("share",), ("lib",))]
    if os.name == "nt":
        path += prefix + [
            os.path.join(os.environ.get("APPDATA", "C:\\"), "nltk_data"),
            r"C:\nltk_data",
            r"D:\nltk_data",
            r"E:\nltk_data",
        ]
    else:
        path += prefix + [
            "/usr/share/nltk_data",
            "/usr/local/share/nltk_data",
            "/usr/lib/nltk_data",
            "/usr/local/lib/nltk_data",
        ]
    return path


def _writable(path: str) -> bool:
    """``nltk.internals.is_writable``: by the permission bits, as NLTK decides."""
    if not os.path.exists(path):
        return False
    if not hasattr(os, "getuid"):
        return True
    st = os.stat(path)
    perm = stat.S_IMODE(st.st_mode)
    return bool(
        perm & 0o002
        or (st.st_uid == os.getuid() and perm & 0o200)
        or (st.st_gid in [os.getgid(), *os.getgroups()] and perm & 0o020)
    )


def nltk_download_dir() -> str | None:
    """NLTK's default download directory (``Downloader().default_download_dir()``),
    without importing nltk (a second or more of CPU, for a path): the first
    writable directory of :func:`nltk_search_path`, else ``~/nltk_data``
    (``%APPDATA%\\nltk_data`` on Windows); ``None`` where NLTK has none."""
    if "APPENGINE_RUNTIME" in os.environ:
        return None
    for directory in nltk_search_path():
        if _writable(directory):
            return directory
    if os.name == "nt" and "APPDATA" in os.environ:
        home = os.environ["APPDATA"]
    else:
        home = os.path.expanduser("~/")
        if home == "~/":
            return None
    return os.path.join(home, "nltk_data")


class NltkDataLocator:
    """Finds (and if allowed downloads) NLTK data; remembers each outcome.

    One instance serves a whole process (see the module functions); tests and
    tools may build their own with explicit places. Arguments left ``None`` come
    from the settings (environment) or NLTK's defaults when first needed:

    - ``search_path``: directories to search instead of :func:`nltk_search_path`;
    - ``system_dirs``: system WordNet candidates instead of :func:`system_wordnet_dirs`;
    - ``download``: ``"auto"`` or ``"never"`` (setting ``nltk_download``);
    - ``download_dir``: where downloads go (default: NLTK's default download dir);
    - ``index_url``, ``timeout``: settings ``nltk_index_url``, ``nltk_download_timeout``.
    """

    def __init__(
        self,
        *,
        search_path: Sequence[str | Path] | None = None,
        system_dirs: Sequence[str | Path] | None = None,
        download: str | None = None,
        download_dir: str | Path | None = None,
        index_url: str | None = None,
        timeout: float | None = None,
    ) -> None:
        self.search_path = None if search_path is None else [str(p) for p in search_path]
        self.system_dirs = None if system_dirs is None else [Path(p) for p in system_dirs]
        self.download_dir = None if download_dir is None else Path(download_dir)
        self._settings: dict[str, tuple[Any, str]] = {}
        if download is not None:
            self.configure(download)
        if index_url is not None:
            self._settings["nltk_index_url"] = (index_url, "the index_url argument")
        if timeout is not None:
            self._settings["nltk_download_timeout"] = (float(timeout), "the timeout argument")
        self._found: dict[str, Path] = {}
        self._failed: dict[str, str] = {}  # resource id -> why no download happened
        self._lock = threading.RLock()

    def configure(self, download: str, *, source: str | None = None) -> None:
        """Set the download policy (``"auto"`` or ``"never"``); forgets earlier failures.

        ``source`` says where the value came from, for error messages
        (e.g. ``"textsim_nltk_download in pytest.ini"``).
        """
        if download not in ("auto", "never"):
            where = f"{source}: " if source else ""
            raise ValueError(f"{where}nltk_download: expected auto or never, got {download!r}")
        self._settings["nltk_download"] = (download, source or "the textsim_nltk_download setting")
        self._failed = {}

    def _setting(self, name: str) -> tuple[Any, str]:
        if name not in self._settings:
            resolved = Resolver(config=None).resolve(name)
            self._settings[name] = (resolved.value, resolved.source)
        return self._settings[name]

    # -- looking -------------------------------------------------------------

    def _searched(self) -> list[str]:
        return list(self.search_path if self.search_path is not None else nltk_search_path())

    def _on_nltk_path(self, resource: Resource) -> Path | None:
        """The package directory or zip ``nltk.data.find(name + "/")`` would load, if complete.

        Searched as NLTK searches, without importing it: first
        ``<root>/<subdir>/<id>/`` in every root, then ``<root>/<subdir>/<id>.zip``
        (holding ``<id>/``) in every root. Like NLTK (``nltk.pathsec``), a root or
        package that another account could write is not trusted and is skipped.
        The first package found is the one NLTK would load: if it lacks files (a
        download still being unpacked) the resource counts as missing.
        """
        roots = [root for root in self._searched() if root and os.path.isdir(root)]
        for root in roots:
            path = Path(root, resource.subdir, resource.id)
            if path.exists():
                if not (_private(Path(root)) and _private(path.parent) and _private(path)):
                    continue
                return path if path.is_dir() and resource.is_complete(path) else None
        for root in roots:
            archive = Path(root, resource.subdir, resource.id + ".zip")
            if archive.is_file() and _zip_has(archive, resource.id + "/"):
                if not (_private(Path(root)) and _private(archive.parent) and _private(archive)):
                    continue
                return archive if _complete_zip(archive, resource) else None
        return None

    def _on_system(self, resource: Resource) -> Path | None:
        if resource is not WORDNET:
            return None
        for directory in self._system_dirs():
            if resource.is_complete(directory):
                return directory
        return None

    def _system_dirs(self) -> list[Path]:
        return self.system_dirs if self.system_dirs is not None else system_wordnet_dirs()

    def _lookup(self, resource: Resource) -> Path | None:
        return self._on_nltk_path(resource) or self._on_system(resource)

    # -- downloading ---------------------------------------------------------

    def _target_dir(self) -> Path:
        if self.download_dir is not None:
            return self.download_dir
        default = nltk_download_dir()
        if default is None:
            raise DownloadFailed("NLTK has no download directory on this platform")
        return Path(default)

    def _download(self, resource: Resource) -> Path:
        index_url, _ = self._setting("nltk_index_url")
        timeout, _ = self._setting("nltk_download_timeout")
        target = self._target_dir()
        install(
            resource,
            target,
            index_url=index_url,
            timeout=timeout,
            lookup=lambda: self._lookup(resource),
        )
        found = self._lookup(resource)
        if found is None:
            raise DownloadFailed(
                f"it was downloaded into {target}, but that directory is not on NLTK's "
                "search path; add it to NLTK_DATA"
            )
        return found

    # -- public --------------------------------------------------------------

    def find(self, resource: Resource | str) -> Path:
        """The directory (or package ``.zip``) holding ``resource``; downloads it if allowed.

        Raises :class:`NltkDataError` when it cannot be found or obtained; the
        outcome is remembered, so later calls answer at once.
        """
        res = _resource(resource)
        with self._lock:
            if res.id in self._found:
                return self._found[res.id]
            if res.id not in self._failed:
                found = self._lookup(res)
                if found is None:
                    mode, source = self._setting("nltk_download")
                    if mode == "never":
                        self._failed[res.id] = f"downloads are off (nltk_download=never, {source})"
                    else:
                        try:
                            found = self._download(res)
                        except (DownloadFailed, OSError) as exc:
                            url, _ = self._setting("nltk_index_url")
                            self._failed[res.id] = f"downloading from {redact(url)} failed: {exc}"
                if found is not None:
                    self._found[res.id] = found
                    return found
            raise self._error([res])

    def ensure(self, *resources: Resource | str) -> None:
        """Make sure each resource can be loaded (default: Punkt); one error names all missing."""
        if not resources:
            if PUNKT.id in self._found:
                return  # the hot path: tokenization calls this for every text
            resources = (PUNKT,)
        wanted = [_resource(r) for r in resources]
        if all(r.id in self._found for r in wanted):
            return
        missing = []
        for res in wanted:
            try:
                self.find(res)
            except NltkDataError:
                missing.append(res)
        if missing:
            raise self._error(missing)

    def _error(self, missing: Sequence[Resource]) -> NltkDataError:
        lines = []
        for res in missing:
            lines.append(f"NLTK data {res} is missing; it is needed for {res.needed_for}.")
            lines.append(f"  Not downloaded: {self._failed.get(res.id, 'not looked for yet')}.")
        searched = self._searched()
        lines.append(
            "  Searched NLTK's data path: " + (", ".join(searched) if searched else "(empty)")
        )
        if WORDNET in missing:
            dirs = ", ".join(str(d) for d in self._system_dirs())
            lines.append(f"  Searched system WordNet dirs ($WNSEARCHDIR, $WNHOME/dict): {dirs}")
        # The other packages the metrics read that are not here either: one command
        # fetches them all, instead of one error and one download after another.
        others = [
            r
            for r in RESOURCES.values()
            if r not in missing and r.id not in self._found and self._lookup(r) is None
        ]
        if others:
            lines.append(
                "  Also missing, for other metrics: "
                + "; ".join(f"{r} for {r.needed_for}" for r in others)
                + "."
            )
        order = list(RESOURCES)
        fetch = sorted(
            [*missing, *others], key=lambda r: order.index(r.id) if r.id in order else -1
        )
        ids = " ".join(r.id for r in fetch)
        names = [f"{r.name}[.zip]" for r in fetch]
        holds = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 2 else names)
        lines += [
            "Fix it one of these ways:",
            f"  - download {'them' if len(fetch) > 1 else 'it'}: python -m nltk.downloader {ids}",
            "    (into NLTK's default directory, e.g. ~/nltk_data; add -d DIR to choose "
            "another and set NLTK_DATA=DIR)",
            f"  - set NLTK_DATA to a directory that holds {holds}",
        ]
        for res in fetch:
            if res.system_package:
                lines.append(
                    f"  - install the system package: apt-get install {res.system_package} "
                    f"(Debian/Ubuntu, /usr/share/wordnet), or set WNHOME to a WordNet install"
                )
        if self._setting("nltk_download")[0] == "never":
            lines.append(
                "  - or let pytest-textsim download it: nltk_download=auto "
                "(TEXTSIM_NLTK_DOWNLOAD=auto, or textsim_nltk_download = auto in the ini file)"
            )
        return NltkDataError("\n".join(lines), missing)


_default = NltkDataLocator()


def configure(download: str, *, source: str | None = None) -> None:
    """Set this process's download policy, ``"auto"`` or ``"never"`` (the plugin calls it).

    Without a call, the policy comes from ``TEXTSIM_NLTK_DOWNLOAD`` (default ``auto``).
    ``source`` names where the value came from, for error messages.
    """
    _default.configure(download, source=source)


def ensure_nltk_data(*resources: Resource | str) -> None:
    """Make sure the given resources load (default: :data:`PUNKT`), once per process.

    Ask only for what a metric needs: :data:`PUNKT` for ``word_tokenize``,
    :data:`PERLUNIPROPS` as well for non-ASCII text (``NISTTokenizer``),
    :data:`WORDNET` for METEOR. Raises :class:`NltkDataError`.
    """
    _default.ensure(*resources)


def find_nltk_data(resource: Resource | str) -> Path:
    """Where ``resource`` is: its package directory, or its package ``.zip``."""
    return _default.find(resource)


def find_wordnet() -> Path:
    """Where WordNet 3.0's database files are, found (or downloaded) once per process.

    Returns either

    - a directory that directly contains ``index.noun``, ``data.noun``, ``noun.exc``
      and the same for ``verb``, ``adj``, ``adv`` (NLTK's ``corpora/wordnet`` or a
      system WordNet such as ``/usr/share/wordnet``, which NLTK itself would not
      find), or
    - a ``wordnet.zip`` file (what ``nltk.download("wordnet")`` leaves) holding the
      same files under ``wordnet/``, e.g. ``wordnet/index.noun``.

    Both are checked to hold every one of those files. Raises :class:`NltkDataError`.
    """
    return _default.find(WORDNET)


def located() -> dict[str, str]:
    """Where this process found each NLTK data package so far, by package id.

    A process that starts workers (``textsim score --jobs N``) finds the data
    once and hands this to each worker (:func:`use_located`), so the workers do
    not search again, nor download with a policy they cannot see.
    """
    with _default._lock:
        return {key: str(path) for key, path in _default._found.items()}


def use_located(found: dict[str, str]) -> None:
    """Take the places :func:`located` gave in another process as this process's own."""
    with _default._lock:
        _default._found.update({key: Path(path) for key, path in found.items()})
