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

The server is started with the docs' environment (``PYTHONHASHSEED`` is read
at start-up) and is single-threaded, so forking it is safe. Protocol: one
JSON request a line on its stdin (``argv``, ``cwd``, ``env``, ``out``,
``timeout``); one JSON answer a line (``rc``) on the descriptor it was given.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

_SELF = str(Path(__file__).resolve())
_XDIST_FORKS = str(Path(__file__).resolve().parents[1] / "xdist_forks.py")


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


def _child(request: dict[str, Any]) -> None:
    """In the forked child: become the block's process, run it, exit."""
    import runpy
    import signal

    signal.alarm(int(request["timeout"]))  # the default action ends the child
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
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


def serve(answers: int) -> None:
    _warm()  # and frozen: a child's garbage collections leave it alone
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)
        status = os.waitpid(pid, 0)[1]
        reply = json.dumps({"rc": os.waitstatus_to_exitcode(status)}) + "\n"
        os.write(answers, reply.encode())


class ForkServer:
    """The test side: one server per test process, started on first use."""

    def __init__(self, env: dict[str, str]) -> None:
        read, write = os.pipe()
        self._proc = subprocess.Popen(
            [sys.executable, _SELF, str(write)],
            stdin=subprocess.PIPE,
            env=env,
            pass_fds=(write,),
            text=True,
        )
        os.close(write)
        self._answers = os.fdopen(read, "r", encoding="utf-8")
        self._lock = threading.Lock()

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
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        self._proc.wait(timeout=30)
        self._answers.close()


_server: ForkServer | None = None


def server(env: dict[str, str]) -> ForkServer:
    """This process's fork server, started with ``env`` the first time."""
    global _server
    if _server is None:
        _server = ForkServer(env)
        atexit.register(_server.close)
    return _server


if __name__ == "__main__":
    serve(int(sys.argv[1]))
