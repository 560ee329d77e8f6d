"""What the ``textsim`` subcommands share: exit statuses and how they end."""

from __future__ import annotations

import os
import sys

#: 0: everything passed; 1: a gate failed or a score regressed; 2: usage or input error.
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
#: What shells report for a command ended by Ctrl-C (128 + SIGINT).
EXIT_INTERRUPTED = 130


def usage_error(message: str) -> int:
    for line in message.splitlines():
        print(f"textsim: error: {line}", file=sys.stderr)
    return EXIT_USAGE


def closed_pipe() -> int:
    """The reader went away (``textsim score ... | head``): stop quietly, not with a traceback."""
    # Point stdout at devnull so the interpreter's final flush cannot fail again.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return EXIT_FAILED


def cli_flag(setting: str) -> str:
    """How the command line's messages name a setting: ``--save-baseline``."""
    return "--" + setting.replace("_", "-")
