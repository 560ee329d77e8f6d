"""Start the xdist workers of the suite's inner ``-n 2`` runs as children of
one warm process.

A worker is ``python -u -c BOOTSTRAP`` that execnet starts with pipes for its
stdin and stdout; it then imports pytest, its plugins, and (for the judge)
openai or anthropic: about two seconds of CPU each, which on a 2-core machine
is most of what an end-to-end test with ``-n 2`` costs. Here execnet starts a
small client instead (``python -S`` and the standard library): it hands its
stdin, stdout and stderr, folder and environment to a server over a Unix
socket and exits with the status of the child the server forked for it. The
child takes those descriptors, folder and environment and runs execnet's
bootstrap line as ``python -u -c`` would, so xdist and the plugin under test
run in it unchanged.

The server loads pytest's installed plugins and this package as a worker's
pytest would, under pytest's assertion-rewriting import hook (so a worker finds
them imported and rewritten, as its own hook would have left them), then what a
worker imports that no pytest plugin owns (openai, numpy, jinja2...). Not
anthropic: its client is three thousand modules, some seconds of CPU a server,
and the suite's workers that call it are few (they import it themselves).
It imports nothing that reads the environment when imported (nltk reads
``NLTK_DATA``): the worker's environment is the one its client sends.

The same server runs a test's ``python -m pytest ...`` whose output must be
a terminal (``Server.python_args``): the client passes the command line too.

This module is both ends: ``python -S xdist_forks.py client SOCKET [-m MODULE
ARGS]`` is the client, ``python xdist_forks.py serve SOCKET FD [lean]`` the server (it ends when the
descriptor ``FD``, a pipe from the test process, reaches its end). The server
is single-threaded, so forking it is safe.
"""

from __future__ import annotations

import gc
import json
import os
import select
import socket
import sys
from collections.abc import Iterable
from typing import Any

_SELF = os.path.abspath(__file__)

#: Where this works: fork, and descriptors passed over a Unix socket (Linux).
AVAILABLE = sys.platform.startswith("linux") and hasattr(socket, "send_fds")

#: Imported by the server before it forks, after the plugins: what workers import
#: that no pytest plugin owns and that reads no setting from the environment
#: when imported.
WARM = (
    "pytest",
    "_pytest.pytester",
    "_pytest.junitxml",
    "execnet",
    "openai",
    "httpx",
    "numpy",
    "jinja2",
    "trio",
    "regex",
    "rapidfuzz",
    "jsonschema",
)

_BOOTSTRAP = "import sys;exec(eval(sys.stdin.readline()))"


def client(path: str, argv: list[str]) -> int:
    """Hand this process's descriptors, folder, environment and ``argv`` (none:
    an xdist worker) to the server; the exit status of the child it forked."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as conn:
        conn.connect(path)
        request = json.dumps({"cwd": os.getcwd(), "env": dict(os.environ), "argv": argv})
        request = request.encode()
        socket.send_fds(conn, [request], [0, 1, 2])
        reply = conn.recv(64)
    if not reply:
        sys.stderr.write("xdist_forks: the server ended before the worker did\n")
        return 70
    return int(json.loads(reply)["rc"])


def _load_plugins() -> None:
    """Import pytest's installed plugins and this package as a worker's pytest
    does: under pytest's assertion-rewriting import hook, so a worker finds them
    imported and rewritten, as its own hook would have left them, and pytest
    neither warns nor imports them again."""
    import pkgutil
    import tempfile

    from _pytest.config import _prepareconfig

    here = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)  # no ini file, no conftest.py
        try:
            config = _prepareconfig(["-p", "no:cacheprovider", folder])
            try:
                package = sys.modules["pytest_textsim"]  # imported by its plugin
                for module in pkgutil.walk_packages(package.__path__, "pytest_textsim."):
                    __import__(module.name)
            finally:
                config._ensure_unconfigure()  # removes the import hook
        finally:
            os.chdir(here)


def read_installed_once() -> None:
    """Read each installed distribution's files once in this process and its
    children, not once a pytest start.

    Every pytest start looks through the installed distributions: pluggy reads
    each one's ``entry_points.txt`` for plugins, pytest each one's ``RECORD``
    for the plugins to rewrite, pytest-metadata their ``METADATA`` for the
    versions it shows: a quarter of the CPU of an in-process run of a small
    suite. Those files do not change while the suite runs (no test installs a
    distribution). The folders are still searched each time, so a distribution
    a test puts on ``sys.path`` is found; its files are read once too.
    """
    import functools
    import importlib.metadata as metadata

    if getattr(metadata.distributions, "reads_once", False):
        return

    class ReadOnce(metadata.PathDistribution):
        @functools.cached_property
        def metadata(self) -> Any:  # type: ignore[override]
            return super().metadata

        @functools.cached_property
        def entry_points(self) -> Any:  # type: ignore[override]
            return super().entry_points

        @functools.cached_property
        def files(self) -> Any:  # type: ignore[override]
            return super().files

    read: dict[str, ReadOnce] = {}
    search = metadata.distributions

    def distributions(**kwargs: Any) -> Iterable[metadata.Distribution]:
        for dist in search(**kwargs):
            if type(dist) is metadata.PathDistribution:
                where = str(dist._path)  # type: ignore[attr-defined]
                if where not in read:
                    read[where] = ReadOnce(dist._path)  # type: ignore[attr-defined]
                yield read[where]
            else:
                yield dist

    distributions.reads_once = True  # type: ignore[attr-defined]
    metadata.distributions = distributions  # type: ignore[assignment]


def _map_module_files() -> None:
    """Fill inspect's map of module files. pytest shows a failed test's source
    through ``inspect.getmodule``, which maps the file of every module in
    ``sys.modules`` the first time: half a second in each child otherwise."""
    import inspect

    inspect.getmodule(compile("", os.path.join(os.sep, "no such folder", "x.py"), "exec"))


def warm(modules: Iterable[str]) -> None:
    """Make this process a warm one to fork from: pytest's plugins and this
    package (as a worker's pytest imports them), then ``modules`` (those not
    installed are left out), and nothing left for a child to redo."""
    import importlib

    # The plugins first: openai imports anyio, whose pytest plugin pytest rewrites.
    read_installed_once()
    _load_plugins()
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    _map_module_files()
    # A garbage collection in a child walks every object, the server's too,
    # and writes to each one, copying every page the fork shares.
    gc.freeze()


def _worker(request: dict, fds: list[int]) -> None:
    """In the forked child: become ``python -u -c BOOTSTRAP`` and run it, or
    ``python -u -m MODULE ARGS`` where the request's ``argv`` says so."""
    import builtins
    import io
    import types

    for target, fd in zip((0, 1, 2), fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    # -u: unbuffered stdout and stderr; stdin as Python opens it.
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)))
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True)
    sys.stderr = io.TextIOWrapper(
        io.FileIO(2, "w", closefd=False), write_through=True, errors="backslashreplace"
    )
    argv = request.get("argv") or []
    code: object = 0
    try:
        if argv[:1] == ["-m"]:
            import runpy

            sys.argv = argv[1:]  # runpy puts the module's file first, as -m does
            sys.path[0] = os.getcwd()  # as ``python -m`` sets it
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = ["-c"]
            sys.path[0] = ""  # as ``python -c`` sets it
            main = types.ModuleType("__main__")
            main.__dict__["__builtins__"] = builtins
            sys.modules["__main__"] = main
            exec(compile(_BOOTSTRAP, "<string>", "exec"), main.__dict__)
    except SystemExit as exc:
        code = exc.code
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    raise SystemExit(code)  # out of serve(): the interpreter's own shutdown


def serve(path: str, lifeline: int, lean: bool) -> None:
    warm(() if lean else WARM)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path + ".new")
    listener.listen(16)
    os.rename(path + ".new", path)  # the client side waits for this name
    waiting: dict[int, socket.socket] = {}  # worker pid -> its client's connection
    while True:
        ready = select.select([listener, lifeline], [], [], 0.05)[0]
        if lifeline in ready and not os.read(lifeline, 1):
            break  # the test process has gone
        if listener in ready:
            conn = listener.accept()[0]
            message, fds, _flags, _addr = socket.recv_fds(conn, 1 << 20, 3)
            if not message or len(fds) != 3:  # a client gone before it asked
                for fd in fds:
                    os.close(fd)
                conn.close()
                continue
            pid = os.fork()
            if pid == 0:
                listener.close()
                os.close(lifeline)
                for other in waiting.values():
                    other.close()
                conn.close()
                _worker(json.loads(message), fds)
            for fd in fds:
                os.close(fd)
            waiting[pid] = conn
        while waiting:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            conn = waiting.pop(pid, None)
            if conn is not None:
                try:
                    conn.send(json.dumps({"rc": os.waitstatus_to_exitcode(status)}).encode())
                except OSError:  # the client was killed
                    pass
                conn.close()
    listener.close()
    os.unlink(path)


class Server:
    """The test side: one server per test process, started on first use."""

    def __init__(self, lean: bool) -> None:
        import subprocess
        import tempfile
        import time

        self.folder = tempfile.mkdtemp(prefix="xdist-forks-")
        self.path = os.path.join(self.folder, "socket")
        read, self._lifeline = os.pipe()
        self._proc = subprocess.Popen(
            [sys.executable, _SELF, "serve", self.path, str(read), *(["lean"] if lean else [])],
            stdin=subprocess.DEVNULL,
            pass_fds=(read,),
        )
        os.close(read)
        deadline = time.monotonic() + 60
        while not os.path.exists(self.path):
            if self._proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"xdist_forks: the server did not start ({self._proc.poll()})")
            time.sleep(0.02)

    def popen_args(self, spec: object) -> list[str]:
        """What execnet starts for a worker, in place of ``python -u -c BOOTSTRAP``."""
        return [sys.executable, "-S", _SELF, "client", self.path]

    def python_args(self, *argv: str) -> list[str]:
        """A command that runs ``python -u -m MODULE ARGS`` (``argv``) as a child
        of the server: its descriptors, folder, environment and exit status are
        the command's, as for a worker."""
        if argv[:1] != ("-m",) or len(argv) < 2:
            raise ValueError(f"xdist_forks runs python -m MODULE ..., not {argv}")
        return [sys.executable, "-S", _SELF, "client", self.path, *argv]

    def close(self) -> None:
        import shutil

        os.close(self._lifeline)
        self._proc.wait(timeout=30)
        shutil.rmtree(self.folder, ignore_errors=True)  # the socket, if the server died


_servers: dict[bool, Server] = {}


def server(lean: bool = False) -> Server:
    """This process's server, started the first time. A ``lean`` one imports
    only pytest's plugins and this package, for tests that check what a worker
    imports (openai only where a worker calls the judge itself)."""
    if lean not in _servers:
        import atexit

        _servers[lean] = Server(lean)
        atexit.register(_servers[lean].close)
    return _servers[lean]


def python_command(*argv: str) -> list[str]:
    """A command that runs ``python -m MODULE ARGS`` (``argv``): a child of this
    process's warm server where fork works, else a fresh interpreter."""
    return server().python_args(*argv) if AVAILABLE else [sys.executable, *argv]


def runpytest_subprocess(pytester: Any, *args: str) -> Any:
    """``pytester.runpytest_subprocess(*args)``, its pytest a child of this
    process's warm server where fork works: a process that has read nothing
    (no NLTK data, no setting) and imported pytest, its plugins and this package."""
    if not AVAILABLE:
        return pytester.runpytest_subprocess(*args)
    from _pytest.pathlib import make_numbered_dir

    basetemp = make_numbered_dir(root=pytester.path, prefix="runpytest-", mode=0o700)
    return pytester.run(*python_command("-m", "pytest", f"--basetemp={basetemp}", *args))


if __name__ == "__main__":
    if sys.argv[1] == "client":
        raise SystemExit(client(sys.argv[2], sys.argv[3:]))
    serve(sys.argv[2], int(sys.argv[3]), lean=sys.argv[4:] == ["lean"])
