"""Run the docs' python and pytest blocks in children of one warm process.

Each block used to be a fresh ``python``: an interpreter, pytest, its
plugins, this package and openai imported again for each of the docs' ~50
blocks. The fork server imports them once and forks a child per block; the
child takes the block's folder, environment and argv, writes its output to a
file (stdout and stderr interleaved, as a terminal shows them) and exits as
``python SCRIPT`` or ``python -m pytest`` would, through the interpreter's
own shutdown (threads joined, ``atexit`` run, streams flushed). pytest's
plugins and this package are imported under pytest's assertion-rewriting
hook, as a block's pytest would import them.

A shell block's ``pytest``, ``textsim`` and ``python -m MODULE`` run as
children too: the server's folder holds stand-ins for those commands
(``ForkServer.shims``, first on a shell block's PATH; see ``STANDIN``). A
stand-in hands its argv, folder, environment and descriptors to the server
over a Unix socket and exits with the status of the child forked for it, so
what the block prints and its ``$?`` are the real command's. It runs the real
command instead where a child could not be that command: another
interpreter's script, an environment that changes what the interpreter reads
at start-up (``PYTHON*``, the locale), or no server.

The server is started with the docs' environment (``PYTHONHASHSEED`` is read
at start-up) and is single-threaded, so forking it is safe. Protocol: one
JSON request a line on its stdin (``argv``, ``cwd``, ``env``, ``out``,
``timeout``); one JSON answer a line (``rc``) on the descriptor it was given.
A stand-in sends one JSON message (``argv``, ``cwd``, ``env``) with its
descriptors 0, 1 and 2 and gets ``{"rc": N}`` back.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

_SELF = str(Path(__file__).resolve())
_XDIST_FORKS = str(Path(__file__).resolve().parents[1] / "xdist_forks.py")

#: Where shell blocks' commands can be forked: descriptors passed over a Unix socket.
STANDINS = hasattr(os, "fork") and hasattr(socket, "send_fds")

#: Environment variables the interpreter reads at start-up (by prefix): a
#: stand-in whose environment sets them otherwise than the server's runs the
#: real command.
STARTUP = ("PYTHON", "LANG", "LC_")

#: The commands a shell block's PATH finds first in the server's folder.
STANDIN_NAMES = ("pytest", "py.test", "textsim", "python", "python3")

#: A stand-in: ``python -IS`` (no site, nothing read from the environment) and
#: the standard library; the server fills in its socket, its interpreter and the
#: start-up variables of its environment.
STANDIN = """#!{python} -IS
import json, os, shutil, signal, socket, sys

SOCKET, PYTHON, STARTUP, PREFIXES = {socket!r}, {python!r}, {startup!r}, {prefixes!r}
here = os.path.dirname(os.path.abspath(__file__))
env = dict(os.environ)
env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != here)
name, args = os.path.basename(sys.argv[0]), sys.argv[1:]
real = shutil.which(name, path=env["PATH"])
if real is None:
    sys.exit(name + ": command not found")
argv = None  # what the server's child runs, as python ARGV
if os.path.dirname(os.path.abspath(real)) == os.path.dirname(PYTHON):
    if name.startswith("python"):
        argv = args if args[:1] == ["-m"] and len(args) > 1 else None
    else:
        with open(real, "rb") as script:
            first = script.readline().strip()
        argv = [real] + args if first == b"#!" + PYTHON.encode() else None
startup = {{k for k in set(env) | set(STARTUP) if k.startswith(PREFIXES)}}
if argv is None or any(env.get(k) != STARTUP.get(k) for k in startup):
    os.execve(real, [real] + args, env)
try:
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as conn:
        conn.connect(SOCKET)
        request = {{"argv": argv, "cwd": os.getcwd(), "env": env}}
        socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
        reply = conn.recv(64)
except OSError:  # no server
    os.execve(real, [real] + args, env)
if not reply:
    sys.exit(name + ": the docs' fork server ended before the command did")
rc = json.loads(reply)["rc"]
if rc < 0:  # ended by a signal: end by it too
    signal.signal(-rc, signal.SIG_DFL)
    os.kill(os.getpid(), -rc)
sys.exit(rc)
"""


def _warm() -> None:
    """Import what the blocks import (pytest's installed plugins, this package,
    openai), as the suite's xdist fork server does (xdist_forks.warm)."""
    import importlib.util

    # Loaded by its path: tests/ is not on a block's sys.path, and the server's
    # path is the blocks'.
    spec = importlib.util.spec_from_file_location("xdist_forks", _XDIST_FORKS)
    assert spec is not None and spec.loader is not None
    xdist_forks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(xdist_forks)
    xdist_forks.warm(("openai",))


def _user_traceback(exc: BaseException) -> None:
    """Print an uncaught error as ``python SCRIPT`` would: without this file's
    and runpy's frames."""
    import traceback

    tb = exc.__traceback__
    while tb is not None and (
        tb.tb_frame.f_code.co_filename == _SELF or tb.tb_frame.f_globals.get("__name__") == "runpy"
    ):
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb)


def _std_streams() -> None:
    """Open sys.stdin, stdout and stderr on descriptors 0 to 2 as the
    interpreter's start-up does: stdout line-buffered on a terminal only."""
    import io

    encoding, errors = sys.stdout.encoding, sys.stdout.errors
    sys.stdin = io.TextIOWrapper(
        open(0, "rb", closefd=False), encoding=sys.stdin.encoding, errors=sys.stdin.errors
    )
    sys.stdout = io.TextIOWrapper(
        open(1, "wb", closefd=False),
        encoding=encoding,
        errors=errors,
        line_buffering=os.isatty(1),
    )
    sys.stderr = io.TextIOWrapper(
        open(2, "wb", closefd=False),
        encoding=encoding,
        errors="backslashreplace",
        line_buffering=True,
    )


def _child(request: dict[str, Any], fds: list[int] | None) -> None:
    """In the forked child: become the block's process, run it, exit. Its
    descriptors are ``fds`` (a stand-in's), else no stdin and its output file."""
    import runpy

    signal.alarm(int(request.get("timeout", 300)))  # the default action ends the child
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.set_wakeup_fd(-1)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    if fds is not None:
        for target, fd in zip((0, 1, 2), fds):
            os.dup2(fd, target)
            os.close(fd)
        _std_streams()
    else:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        out = os.open(request["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(out)
        os.close(null)
    argv = request["argv"]
    code: Any = 0
    try:
        if argv[0] == "-m":
            sys.path[0] = request["cwd"]  # as ``python -m`` sets it
            sys.argv = argv[1:]
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
            sys.argv = list(argv)
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as exc:
        code = exc.code
    except BaseException as exc:
        _user_traceback(exc)
        code = 1
    raise SystemExit(code)  # out of serve(): the interpreter's own shutdown


def _write_standins(folder: str, path: str) -> None:
    """The stand-ins, in ``folder``/shims, for a server listening on ``path``."""
    startup = {k: v for k, v in os.environ.items() if k.startswith(STARTUP)}
    text = STANDIN.format(python=sys.executable, socket=path, startup=startup, prefixes=STARTUP)
    shims = os.path.join(folder, "shims")
    os.mkdir(shims)
    for name in STANDIN_NAMES:
        target = os.path.join(shims, name)
        with open(target, "w", encoding="utf-8") as script:
            script.write(text)
        os.chmod(target, 0o755)


def serve(answers: int, folder: str) -> None:
    _warm()  # and frozen: a child's garbage collections leave it alone
    path = os.path.join(folder, "socket")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(16)
    _write_standins(folder, path)
    # A child's end wakes select() through this pipe.
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    signal.set_wakeup_fd(wake_write)
    os.write(answers, b"ready\n")
    waiting: dict[int, socket.socket | None] = {}  # child pid -> its stand-in's connection
    pending = b""
    stdin_open = True
    while stdin_open or waiting:
        watched: list[Any] = [wake_read, listener] + ([0] if stdin_open else [])
        ready = select.select(watched, [], [])[0]
        requests: list[tuple[dict[str, Any], list[int] | None, socket.socket | None]] = []
        if 0 in ready:
            data = os.read(0, 1 << 16)
            stdin_open = bool(data)
            pending += data
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                requests.append((json.loads(line), None, None))
        if listener in ready:
            conn = listener.accept()[0]
            message, fds, _flags, _addr = socket.recv_fds(conn, 1 << 20, 3)
            if message and len(fds) == 3:
                requests.append((json.loads(message), fds, conn))
            else:  # a stand-in gone before it asked
                for fd in fds:
                    os.close(fd)
                conn.close()
        for request, fds, conn in requests:
            pid = os.fork()
            if pid == 0:
                listener.close()
                for other in waiting.values():
                    if other is not None:
                        other.close()
                if conn is not None:
                    conn.close()
                os.close(wake_read)
                os.close(wake_write)
                _child(request, fds)
            for fd in fds or ():
                os.close(fd)
            waiting[pid] = conn
        if wake_read in ready:
            while True:
                try:
                    if not os.read(wake_read, 512):
                        break
                except BlockingIOError:
                    break
        while waiting:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            if pid not in waiting:
                continue
            conn = waiting.pop(pid)
            reply = json.dumps({"rc": os.waitstatus_to_exitcode(status)})
            if conn is None:
                os.write(answers, (reply + "\n").encode())
                continue
            try:
                conn.send(reply.encode())
            except OSError:  # the stand-in was killed
                pass
            conn.close()
    listener.close()


class ForkServer:
    """The test side: one server per test process, started on first use."""

    def __init__(self, env: dict[str, str]) -> None:
        self.folder = tempfile.mkdtemp(prefix="textsim-docs-forks-")
        read, write = os.pipe()
        self._proc = subprocess.Popen(
            [sys.executable, _SELF, str(write), self.folder],
            stdin=subprocess.PIPE,
            env=env,
            pass_fds=(write,),
            text=True,
        )
        os.close(write)
        self._answers = os.fdopen(read, "r", encoding="utf-8")
        self._lock = threading.Lock()
        if self._answers.readline() != "ready\n":
            raise RuntimeError(f"the docs' fork server did not start ({self._proc.wait()})")

    @property
    def pid(self) -> int:
        """The server's process id: the parent of every child it forks."""
        return self._proc.pid

    @property
    def shims(self) -> Path:
        """The folder of the stand-ins for a shell block's commands."""
        return Path(self.folder, "shims")

    def call(
        self, argv: list[str], cwd: Path, env: dict[str, str], out: Path, timeout: float
    ) -> int:
        """Run ``python ARGV`` in ``cwd`` with ``env``, its output written to ``out``;
        the exit status (negative: ended by that signal, SIGALRM after ``timeout``)."""
        request = {"argv": argv, "cwd": str(cwd), "env": env, "out": str(out), "timeout": timeout}
        assert self._proc.stdin is not None
        with self._lock:
            self._proc.stdin.write(json.dumps(request) + "\n")
            self._proc.stdin.flush()
            answer = self._answers.readline()
        if not answer:
            raise RuntimeError(f"the docs' fork server ended (exit status {self._proc.poll()})")
        return int(json.loads(answer)["rc"])

    def close(self) -> None:
        import shutil

        assert self._proc.stdin is not None
        self._proc.stdin.close()
        self._proc.wait(timeout=30)
        self._answers.close()
        shutil.rmtree(self.folder, ignore_errors=True)


_server: ForkServer | None = None


def server(env: dict[str, str]) -> ForkServer:
    """This process's fork server, started with ``env`` the first time."""
    global _server
    if _server is None:
        _server = ForkServer(env)
        atexit.register(_server.close)
    return _server


if __name__ == "__main__":
    serve(int(sys.argv[1]), sys.argv[2])
