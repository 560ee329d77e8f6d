"""The chat app example runs offline with no key, and no committed file holds a secret."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: What a credential looks like in a cassette or a judge cache.
SECRET_SHAPES = [
    rb"sk-[A-Za-z0-9][A-Za-z0-9_-]{10,}",
    rb"Bearer\s+[A-Za-z0-9._~+/-]{8,}",
    rb"Basic\s+[A-Za-z0-9+/]{8,}={0,2}",
    rb'"(?:authorization|proxy-authorization|api-key|x-api-key|cookie|set-cookie)":\s*"'
    rb"(?!<redacted>)",
    rb"https?://[^/\s\"'@]+:[^/\s\"'@]+@",
]


def secrets_in(data: bytes) -> list[str]:
    found = []
    for shape in SECRET_SHAPES:
        found += [m.group(0)[:24].decode("latin-1") for m in re.finditer(shape, data, re.I)]
    return found


def recorded_files() -> list[Path]:
    """Every replay cassette and judge cache file in the repository (committed or new)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split("\n")  # fmt: skip
    files = []
    for name in filter(None, listed):
        path = ROOT / name
        if not path.is_file():
            continue
        if path.suffix == ".jsonl" and path.read_bytes().startswith(
            b'{"format": "pytest-textsim-replay/'
        ):
            files.append(path)
        elif ".sqlite3" in path.name:
            files.append(path)
    return files


def test_no_cassette_or_cache_file_in_the_repository_holds_a_secret() -> None:
    files = recorded_files()
    names = {p.relative_to(ROOT).as_posix() for p in files}
    # The scan must see the committed files, or it proves nothing.
    assert "examples/judge_cache/judge.sqlite3" in names
    assert sum(1 for n in names if n.startswith("examples/replays/")) >= 8
    leaks = {name: secrets_in(p.read_bytes()) for name, p in zip(names, files)}
    assert not {name: found for name, found in leaks.items() if found}


@pytest.mark.parametrize(
    "line",
    [
        b'{"authorization": "Bearer abc.def-123456"}',
        b'{"headers": {"api-key": "0123456789abcdef"}}',
        b'"url": "https://me:hunter2@host/v1"',
        b"Incorrect API key provided: sk-proj-abcdefghijkl",
    ],
)
def test_the_scan_finds_planted_secrets(line: bytes) -> None:
    assert secrets_in(line)
    assert not secrets_in(b'{"authorization": "<redacted>", "url": "https://host/v1"}')


def test_the_example_passes_with_no_network_and_no_key() -> None:
    """``env -i``: no OPENAI_API_KEY, no NLTK_DATA, no proxy; and no network when
    ``unshare`` can take it away (as root, or with user namespaces)."""
    command = [sys.executable, "-m", "pytest", "examples/test_chat_app.py",
               "-p", "no:cacheprovider", "-p", "no:xdist", "-q"]  # fmt: skip
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-rn", "true"], capture_output=True).returncode == 0:
        command = [unshare, "-rn", *command]
    done = subprocess.run(
        command, cwd=ROOT, env={"PATH": os.defpath}, capture_output=True, text=True
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "8 passed" in output
    assert "8 calls replayed, 0 recorded (8 tests, 0 cassettes written" in output
    assert "judge: 0 calls, 5 cache hits" in output
