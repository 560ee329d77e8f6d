"""Finding and downloading NLTK data: the offline tree, zips, system WordNet, downloads.

Downloads are tested for real against an NLTK-style data server on 127.0.0.1
(``index.xml`` plus package zips built from the offline tree); anything that needs
a fresh process runs in a subprocess whose HOME and NLTK paths point into tmp.
"""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import os
import socket
import subprocess
import sys
import threading
import time
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from lean_nltk import LEAN_NLTK

from pytest_textsim.nlp import nltk_data
from pytest_textsim.nlp.nltk_data import (
    PERLUNIPROPS,
    PUNKT,
    WORDNET,
    NltkDataError,
    NltkDataLocator,
    Resource,
)
from pytest_textsim.settings.table import ConfigError

SHARED = Path(__file__).resolve().parents[4] / "shared" / "nltk_data"
if not (SHARED / "corpora" / "wordnet").is_dir():  # e.g. a checkout elsewhere
    SHARED = Path(os.environ.get("NLTK_DATA", "").split(os.pathsep)[0]).resolve()


def package_zip(resource: Resource) -> bytes:
    """The resource packaged as the NLTK data server packages it: ``<id>/...`` members."""
    root = SHARED / resource.subdir / resource.id
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(f"{resource.id}/", "")
        for path in sorted(root.rglob("*")):
            name = f"{resource.id}/{path.relative_to(root).as_posix()}"
            if path.is_dir():
                zf.writestr(name + "/", "")
            else:
                zf.write(path, name)
    return buf.getvalue()


class DataServer:
    """A real HTTP server on 127.0.0.1 speaking the NLTK data server's layout."""

    def __init__(self, packages: dict[Resource, bytes], *, chunk_delay: float = 0.0) -> None:
        self.packages = {
            f"/packages/{r.subdir}/{r.id}.zip": (r, data) for r, data in packages.items()
        }
        self.chunk_delay = chunk_delay
        self.bad_checksum = False
        self.hits: Counter[str] = Counter()
        self.auth: list[str] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                server.hits[self.path] += 1
                if self.headers.get("Authorization"):
                    server.auth.append(self.headers["Authorization"])
                if self.path == "/index.xml":
                    body = server.index().encode()
                elif self.path in server.packages:
                    body = server.packages[self.path][1]
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                # Slow bodies keep a download in flight while racing processes start.
                step = max(1, len(body) // 16) if server.chunk_delay else len(body)
                for start in range(0, len(body), step):
                    self.wfile.write(body[start : start + step])
                    self.wfile.flush()
                    time.sleep(server.chunk_delay)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/index.xml"

    def index(self) -> str:
        rows = []
        for path, (res, data) in self.packages.items():
            md5 = hashlib.md5(b"x" if self.bad_checksum else data).hexdigest()
            rows.append(
                f'<package id="{res.id}" name="{res.id}" subdir="{res.subdir}" '
                f'url="http://127.0.0.1:{self.httpd.server_address[1]}{path}" '
                f'size="{len(data)}" unzipped_size="{len(data)}" checksum="{md5}" unzip="1"/>'
            )
        return (
            '<?xml version="1.0"?>\n<nltk_data><packages>'
            + "".join(rows)
            + "</packages><collections/></nltk_data>"
        )

    def __enter__(self) -> DataServer:
        threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def punkt_zip() -> bytes:
    return package_zip(PUNKT)


@pytest.fixture
def empty(tmp_path: Path) -> Path:
    path = tmp_path / "empty"
    path.mkdir()
    return path


def offline(**kwargs: object) -> NltkDataLocator:
    """A locator that sees only what the test gives it and never downloads."""
    kwargs.setdefault("system_dirs", [])
    kwargs.setdefault("download", "never")
    return NltkDataLocator(**kwargs)  # type: ignore[arg-type]


# -- finding --------------------------------------------------------------------


def test_offline_tree_is_found() -> None:
    locator = offline(search_path=[SHARED])
    assert locator.find(WORDNET) == SHARED / "corpora" / "wordnet"
    assert locator.find("punkt") == SHARED / "tokenizers" / "punkt_tab"
    assert locator.find("misc/perluniprops") == SHARED / "misc" / "perluniprops"
    locator.ensure(PUNKT, PERLUNIPROPS, WORDNET)


def test_process_default_finds_the_offline_tree_via_nltk_data() -> None:
    nltk_data.ensure_nltk_data(PUNKT, PERLUNIPROPS, WORDNET)
    wordnet = nltk_data.find_wordnet()
    assert (wordnet / "index.noun").is_file() and (wordnet / "data.noun").is_file()


def test_wordnet_zip_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import nltk.data

    (tmp_path / "corpora").mkdir()
    archive = tmp_path / "corpora" / "wordnet.zip"
    archive.write_bytes(package_zip(WORDNET))
    # NLTK opens zips only below a directory on its own path (its sandbox), so the
    # directory goes there, as NLTK_DATA would put it.
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    assert offline().find(WORDNET) == archive


def test_incomplete_directory_is_not_used(tmp_path: Path) -> None:
    (tmp_path / "corpora" / "wordnet").mkdir(parents=True)
    for name in ("index.noun", "data.verb"):  # what an interrupted unzip leaves
        (tmp_path / "corpora" / "wordnet" / name).write_text("x")
    with pytest.raises(NltkDataError):
        offline(search_path=[tmp_path]).find(WORDNET)


def test_incomplete_zip_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import nltk.data

    (tmp_path / "corpora").mkdir()
    with zipfile.ZipFile(tmp_path / "corpora" / "wordnet.zip", "w") as zf:
        zf.writestr("wordnet/index.noun", "x")
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    with pytest.raises(NltkDataError):
        offline().find(WORDNET)


def test_zip_is_found_without_nltk_and_after_every_directory(tmp_path: Path) -> None:
    """As ``nltk.data.find``: unpacked packages in every root first, then zips."""
    first, second = tmp_path / "first", tmp_path / "second"
    (first / "tokenizers").mkdir(parents=True)
    (first / "tokenizers" / "punkt_tab.zip").write_bytes(package_zip(PUNKT))
    (second / "tokenizers").mkdir(parents=True)
    (second / "tokenizers" / "punkt_tab").symlink_to(SHARED / "tokenizers" / "punkt_tab")
    assert offline(search_path=[first, second]).find(PUNKT) == second / "tokenizers" / "punkt_tab"
    assert offline(search_path=[first]).find(PUNKT) == first / "tokenizers" / "punkt_tab.zip"


@pytest.mark.skipif(os.name != "posix", reason="POSIX owner and mode bits")
@pytest.mark.parametrize("where", ["root", "package"])
def test_data_other_accounts_could_write_is_not_used(tmp_path: Path, where: str) -> None:
    """Like nltk 3.10, data in a group- or world-writable place is not trusted."""
    root = tmp_path / "data"
    (root / "tokenizers").mkdir(parents=True)
    archive = root / "tokenizers" / "punkt_tab.zip"
    archive.write_bytes(package_zip(PUNKT))
    assert offline(search_path=[root]).find(PUNKT) == archive
    (root if where == "root" else archive).chmod(0o777 if where == "root" else 0o666)
    with pytest.raises(NltkDataError, match="punkt_tab"):
        offline(search_path=[root]).find(PUNKT)


def wordnet_copy(root: Path, skip: str = "") -> Path:
    """A system-WordNet-style dict directory: links to the offline tree's files."""
    root.mkdir(parents=True)
    for path in (SHARED / "corpora" / "wordnet").iterdir():
        if path.name != skip:
            (root / path.name).symlink_to(path)
    return root


def test_system_wordnet_found_via_wnhome_in_a_fresh_process(tmp_path: Path, empty: Path) -> None:
    dict_dir = wordnet_copy(tmp_path / "wn" / "dict")
    home = tmp_path / "home"
    home.mkdir()
    script = (
        LEAN_NLTK + "import nltk, sys\n"
        f"nltk.data.path[:] = [{str(empty)!r}]  # hide every other NLTK data dir\n"
        "from pytest_textsim.nlp.nltk_data import ensure_nltk_data, find_wordnet\n"
        "ensure_nltk_data('wordnet')\n"
        "print(find_wordnet())\n"
        "try:\n"
        "    ensure_nltk_data('punkt')\n"
        "except LookupError as exc:\n"
        "    print(exc)\n"
    )
    env = dict(os.environ, HOME=str(home), NLTK_DATA=str(empty), WNHOME=str(tmp_path / "wn"))
    env.update(TEXTSIM_NLTK_DOWNLOAD="never")
    env.pop("WNSEARCHDIR", None)
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    ).stdout
    first, rest = out.split("\n", 1)
    assert first == str(dict_dir)
    # Punkt has no system fallback; the env var that turned downloads off is named.
    assert "punkt_tab (tokenizers/punkt_tab) is missing" in rest
    assert "TEXTSIM_NLTK_DOWNLOAD in the environment" in rest
    assert list(home.iterdir()) == []


def test_incomplete_system_wordnet_is_skipped(tmp_path: Path, empty: Path) -> None:
    broken = wordnet_copy(tmp_path / "broken", skip="data.noun")
    good = wordnet_copy(tmp_path / "good")
    assert offline(search_path=[empty], system_dirs=[broken, good]).find(WORDNET) == good


def test_system_wordnet_dirs_follow_wordnet_conventions(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("WNSEARCHDIR", str(tmp_path / "search"))
    monkeypatch.setenv("WNHOME", str(tmp_path / "home"))
    assert nltk_data.system_wordnet_dirs()[:3] == [
        tmp_path / "search",
        tmp_path / "home" / "dict",
        Path("/usr/share/wordnet"),
    ]


# -- nothing available --------------------------------------------------------------


def test_never_fails_fast_naming_resource_and_fixes(empty: Path, punkt_zip: bytes) -> None:
    with DataServer({PUNKT: punkt_zip}) as server:
        locator = offline(search_path=[empty], index_url=server.url)
        started = time.monotonic()
        with pytest.raises(NltkDataError) as info:
            locator.find(WORDNET)
        assert time.monotonic() - started < 2
        assert not server.hits, "download=never must not touch the network"
    message = str(info.value)
    assert isinstance(info.value, LookupError)
    assert info.value.resources == (WORDNET,)
    assert "wordnet (corpora/wordnet) is missing" in message
    # Nothing is there: one command fetches every package the metrics read.
    assert "python -m nltk.downloader punkt_tab perluniprops wordnet\n" in message
    assert "-d DIR" in message
    assert (
        "set NLTK_DATA to a directory that holds tokenizers/punkt_tab[.zip], "
        "misc/perluniprops[.zip] and corpora/wordnet[.zip]"
    ) in message
    assert "apt-get install wordnet-base" in message
    assert "downloads are off (nltk_download=never" in message
    assert str(empty) in message


def test_failure_is_decided_once_until_reconfigured(empty: Path) -> None:
    locator = offline(search_path=[empty])
    with pytest.raises(NltkDataError):
        locator.ensure(PUNKT)
    locator.search_path = [str(SHARED)]  # the data appears later in this process
    with pytest.raises(NltkDataError):
        locator.ensure(PUNKT)
    locator.configure("auto", source="test")
    locator.ensure(PUNKT)


def test_one_error_names_every_missing_resource(empty: Path) -> None:
    with pytest.raises(NltkDataError) as info:
        offline(search_path=[empty], system_dirs=[SHARED / "corpora" / "wordnet"]).ensure(
            PUNKT, PERLUNIPROPS
        )
    message = str(info.value)
    assert info.value.resources == (PUNKT, PERLUNIPROPS)
    assert "python -m nltk.downloader punkt_tab perluniprops\n" in message
    assert "Also missing" not in message  # WordNet is there
    assert "apt-get" not in message  # no system package ships these


def test_the_fix_fetches_the_other_missing_packages_too(empty: Path, tmp_path: Path) -> None:
    # Only Punkt is there: BLEU on non-ASCII text needs perluniprops, and the fix
    # names WordNet as well, so one download ends the errors of every metric.
    only_punkt = tmp_path / "only_punkt" / "tokenizers"
    only_punkt.mkdir(parents=True)
    (only_punkt / "punkt_tab").symlink_to(SHARED / "tokenizers" / "punkt_tab")
    locator = offline(search_path=[only_punkt.parent])
    locator.ensure(PUNKT)
    with pytest.raises(NltkDataError) as info:
        locator.ensure(PERLUNIPROPS)
    message = str(info.value)
    assert info.value.resources == (PERLUNIPROPS,)
    assert message.splitlines()[0].startswith("NLTK data perluniprops (misc/perluniprops)")
    assert (
        "  Also missing, for other metrics: wordnet (corpora/wordnet) for synonym matching "
        "in METEOR."
    ) in message.splitlines()
    assert "  - download them: python -m nltk.downloader perluniprops wordnet" in (
        message.splitlines()
    )
    assert "apt-get install wordnet-base" in message


def blackhole() -> socket.socket:
    """A TCP port that accepts connections and never answers (a dead network path)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    return sock


def refused_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    sock.close()
    return port


@pytest.mark.parametrize("network", ["silent", "refused"])
def test_auto_without_network_fails_after_short_timeout(tmp_path: Path, network: str) -> None:
    sock = blackhole() if network == "silent" else None
    port = sock.getsockname()[1] if sock else refused_port()
    locator = NltkDataLocator(
        search_path=[tmp_path / "dl"],
        system_dirs=[],
        download="auto",
        download_dir=tmp_path / "dl",
        index_url=f"http://127.0.0.1:{port}/index.xml",
        timeout=0.5,
    )
    started = time.monotonic()
    try:
        with pytest.raises(NltkDataError) as info:
            locator.ensure(PUNKT)
    finally:
        if sock:
            sock.close()
    assert time.monotonic() - started < 10
    message = str(info.value)
    assert f"downloading from http://127.0.0.1:{port}/index.xml failed" in message
    assert ("no answer within 0.5 s" if network == "silent" else "cannot reach") in message
    assert "python -m nltk.downloader punkt_tab" in message
    assert not (tmp_path / "dl" / "tokenizers").exists()


def test_failed_download_is_not_retried_by_the_next_process(tmp_path: Path) -> None:
    with DataServer({}) as server:  # its index lists nothing

        def locator() -> NltkDataLocator:
            return NltkDataLocator(
                search_path=[tmp_path],
                system_dirs=[],
                download="auto",
                download_dir=tmp_path,
                index_url=server.url,
            )

        with pytest.raises(NltkDataError, match="lists no package 'perluniprops'"):
            locator().ensure(PERLUNIPROPS)
        with pytest.raises(NltkDataError, match=r"another process tried \d+ s ago"):
            locator().ensure(PERLUNIPROPS)
        assert server.hits == {"/index.xml": 1}


# -- downloading ----------------------------------------------------------------------


def downloader(server: DataServer, dl: Path) -> NltkDataLocator:
    return NltkDataLocator(
        search_path=[dl], system_dirs=[], download="auto", download_dir=dl, index_url=server.url
    )


def test_download_installs_a_complete_package(tmp_path: Path, punkt_zip: bytes) -> None:
    dl = tmp_path / "dl"
    with DataServer({PUNKT: punkt_zip}) as server:
        assert downloader(server, dl).find(PUNKT) == dl / "tokenizers" / "punkt_tab"
        # another process finds it installed and downloads nothing
        downloader(server, dl).ensure(PUNKT)
    assert server.hits == {"/index.xml": 1, "/packages/tokenizers/punkt_tab.zip": 1}
    for name in PUNKT.files:
        got = (dl / "tokenizers" / "punkt_tab" / name).read_bytes()
        assert got == (SHARED / "tokenizers" / "punkt_tab" / name).read_bytes()
    assert (dl / "tokenizers" / "punkt_tab.zip").read_bytes() == punkt_zip
    assert sorted(p.name for p in (dl / "tokenizers").iterdir()) == ["punkt_tab", "punkt_tab.zip"]


def test_download_with_bad_checksum_installs_nothing(tmp_path: Path, punkt_zip: bytes) -> None:
    dl = tmp_path / "dl"
    with DataServer({PUNKT: punkt_zip}) as server:
        server.bad_checksum = True
        with pytest.raises(NltkDataError, match="md5 checksum does not match the index"):
            downloader(server, dl).ensure(PUNKT)
    assert not (dl / "tokenizers").exists()


def test_download_outside_nltk_search_path_is_reported(tmp_path: Path, punkt_zip: bytes) -> None:
    with DataServer({PUNKT: punkt_zip}) as server:
        locator = downloader(server, tmp_path / "dl")
        locator.search_path = [str(tmp_path / "elsewhere")]
        with pytest.raises(NltkDataError, match="not on NLTK's search path; add it to NLTK_DATA"):
            locator.ensure(PUNKT)


def test_unwritable_download_dir_is_reported(tmp_path: Path, punkt_zip: bytes) -> None:
    (tmp_path / "file").write_text("")
    with DataServer({PUNKT: punkt_zip}) as server:
        with pytest.raises(NltkDataError, match="cannot create .*/file: "):
            downloader(server, tmp_path / "file").ensure(PUNKT)
    assert not server.hits


def test_package_with_entries_outside_its_directory_is_refused(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name in PUNKT.files:
            zf.writestr(f"punkt_tab/{name}", "x")
        zf.writestr("punkt_tab/../../escaped.txt", "x")
    with DataServer({PUNKT: buf.getvalue()}) as server:
        with pytest.raises(NltkDataError, match="unexpected entry 'punkt_tab/../../escaped.txt'"):
            downloader(server, tmp_path / "dl").ensure(PUNKT)
    assert not list(tmp_path.rglob("escaped.txt"))
    assert not list((tmp_path / "dl" / "tokenizers").iterdir())


def test_mirror_credentials_stay_out_of_messages_and_files(tmp_path: Path) -> None:
    with DataServer({}) as server:
        url = server.url.replace("http://", "http://user:s3cret@")
        locator = NltkDataLocator(
            search_path=[tmp_path],
            system_dirs=[],
            download="auto",
            download_dir=tmp_path,
            index_url=url,
        )
        with pytest.raises(NltkDataError) as info:
            locator.ensure(PUNKT)
    assert "lists no package 'punkt_tab'" in str(info.value)  # it was reached
    assert server.auth == ["Basic dXNlcjpzM2NyZXQ="]  # user:s3cret
    assert "s3cret" not in str(info.value)
    assert "s3cret" not in (tmp_path / ".textsim-nltk-failures.json").read_text()


RACER = """
import json, os, sys, time
from pytest_textsim.nlp.nltk_data import PUNKT, ensure_nltk_data
ready, go, reader = sys.argv[1:]
if reader == "nltk":
    from nltk import word_tokenize
else:
    from pytest_textsim.nlp.tokenize import nltk_tokens as word_tokenize
open(ready, "w").close()
while not os.path.exists(go):
    time.sleep(0.005)
ensure_nltk_data(PUNKT)
print(json.dumps(list(word_tokenize("Dr. Smith went home. He slept."))))
"""


# Twice as many racers as CI has CPUs: they all start on one signal and race for
# the download. The first reads the data it got through nltk itself; the others,
# through this package (importing nltk costs a second of CPU each).
RACERS = 4


def test_processes_racing_download_once(tmp_path: Path, punkt_zip: bytes) -> None:
    dl, home, flags = tmp_path / "dl", tmp_path / "home", tmp_path / "flags"
    for path in (dl, home, flags):
        path.mkdir()
    installed = dl / "tokenizers" / "punkt_tab"
    sizes = {n: (SHARED / "tokenizers" / "punkt_tab" / n).stat().st_size for n in PUNKT.files}
    with DataServer({PUNKT: punkt_zip}, chunk_delay=0.05) as server:
        # NLTK_DATA first on NLTK's path and writable: NLTK's default download dir.
        env = dict(os.environ, HOME=str(home), NLTK_DATA=str(dl), TEXTSIM_NLTK_INDEX_URL=server.url)
        env.update(TEXTSIM_NLTK_DOWNLOAD="auto")
        procs = [
            subprocess.Popen(
                [
                    sys.executable, "-c", LEAN_NLTK + RACER,
                    str(flags / f"ready{i}"), str(flags / "go"), "nltk" if i == 0 else "textsim",
                ],  # fmt: skip
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for i in range(RACERS)
        ]
        deadline = time.monotonic() + 120
        while len(list(flags.iterdir())) < RACERS and time.monotonic() < deadline:
            time.sleep(0.01)
        (flags / "go").touch()
        # Watch the install while it happens: it is absent or complete, never partial.
        while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
            if installed.exists():
                assert {n: (installed / n).stat().st_size for n in PUNKT.files} == sizes
            time.sleep(0.002)
        results = [p.communicate(timeout=60) for p in procs]
    for proc, (out, err) in zip(procs, results):
        assert proc.returncode == 0, err
        assert json.loads(out) == ["Dr.", "Smith", "went", "home", ".", "He", "slept", "."]
    assert server.hits["/packages/tokenizers/punkt_tab.zip"] == 1
    assert server.hits["/index.xml"] == 1
    assert list(home.iterdir()) == []


@pytest.mark.parametrize(
    "modes, chosen",
    [
        ([0o755], 0),
        ([None, 0o555, 0o500, 0o700], 3),  # absent, then read-only by their bits
        ([0o555], None),  # none writable: ~/nltk_data
        ([], None),
    ],
)
def test_the_download_directory_is_nltks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, modes: list[int | None], chosen: int | None
) -> None:
    import nltk.data
    from nltk.downloader import Downloader

    dirs = [tmp_path / f"d{i}" for i in range(len(modes))]
    for directory, mode in zip(dirs, modes):
        if mode is not None:
            directory.mkdir(mode=mode)
            directory.chmod(mode)
    monkeypatch.setattr(nltk.data, "path", [str(d) for d in dirs])  # nltk_search_path reads it
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    theirs = Downloader(download_dir=os.devnull).default_download_dir()
    expected = str(tmp_path / "home" / "nltk_data") if chosen is None else str(dirs[chosen])
    assert nltk_data.nltk_download_dir() == theirs == expected


# -- settings -------------------------------------------------------------------------


def test_download_policy_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, empty: Path
) -> None:
    monkeypatch.setenv("TEXTSIM_NLTK_DOWNLOAD", "sometimes")
    with pytest.raises(ConfigError, match="TEXTSIM_NLTK_DOWNLOAD in the environment: expected"):
        NltkDataLocator(search_path=[empty], system_dirs=[]).ensure(PUNKT)


def test_configure_rejects_unknown_policy() -> None:
    with pytest.raises(ValueError, match="textsim_nltk_download in tox.ini: .*'sometimes'"):
        NltkDataLocator().configure("sometimes", source="textsim_nltk_download in tox.ini")


def test_unknown_resource_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="'punkt_tab', 'perluniprops', 'wordnet'"):
        offline().find("stopwords")
