"""The judge cache: modes, keys, what is (not) stored, parallel writers, bad files, CLI."""

from __future__ import annotations

import io
import json
import os
import random
import sqlite3
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Callable

import pytest
import xdist_forks

from pytest_textsim.cli import main
from pytest_textsim.judge.cache import CacheImportError, JudgeCache, JudgeCacheWarning
from pytest_textsim.judge.client import (
    JudgeCacheMiss,
    JudgeClient,
    JudgeError,
    JudgeOptions,
    Judgment,
)
from pytest_textsim.judge.prompts import FLUENCY, SIMILARITY, Prompt
from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply

SECRET = "sk-test-SECRET-c4c4e1"
INPUTS = {"response": "Paris.", "ground_truth": "The capital is Paris."}
OPTIONS = JudgeOptions(max_attempts=2, backoff=0.01)


def client(server: FakeOpenAI, cache: JudgeCache, **options: object) -> JudgeClient:
    config = {"model": "gpt-judge", "base_url": server.base_url, "api_key": SECRET}
    return JudgeClient(config, JudgeOptions(**{"max_attempts": 2, "backoff": 0.01, **options}),
                       cache=cache)  # fmt: skip


def key(**changes: object) -> object:
    fields = {
        "evaluator": "similarity", "prompt_version": "similarity-1", "provider": "openai",
        "model": "m", "host": "h", "sampling": {"temperature": 0.0}, "sample": 0,
        "inputs": dict(INPUTS),
    }  # fmt: skip
    fields.update(changes)
    return JudgeCache.key(**fields)


def test_once_calls_on_miss_then_serves_hits(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.script(Reply.score(5, "Same.", usage=(120, 9)))
    judge = client(fake_openai, JudgeCache(tmp_path))
    first = judge.judge(SIMILARITY, INPUTS)
    second = judge.judge(SIMILARITY, INPUTS)
    assert (first.cached, second.cached) == (False, True)
    assert (second.score, second.reason, second.tokens_in, second.tokens_out) == (
        5,
        "Same.",
        120,
        9,
    )
    assert fake_openai.requests == 1
    assert judge.stats.cache_hits == 1 and judge.stats.calls == 1


def test_none_mode_never_calls(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    client(fake_openai, JudgeCache(tmp_path)).judge(SIMILARITY, INPUTS)
    offline = client(fake_openai, JudgeCache(tmp_path, "none"))
    assert offline.judge(SIMILARITY, INPUTS).score == 4
    with pytest.raises(
        JudgeCacheMiss, match="no cached similarity judgment .*--textsim-cache=none"
    ):
        offline.judge(SIMILARITY, {**INPUTS, "response": "Lyon."})
    assert fake_openai.requests == 1


def _make_read_only(directory: Path) -> Callable[[], None]:
    """Make ``directory`` and its files unwritable; returns the undo.

    Root ignores permission bits, so as root the immutable attribute is used.
    """
    paths = [*directory.iterdir(), directory]
    if os.geteuid() != 0:
        for path in paths:
            path.chmod(0o555 if path.is_dir() else 0o444)
        return lambda: [p.chmod(0o755 if p.is_dir() else 0o644) for p in paths] and None
    done = subprocess.run(["chattr", "+i", *map(str, paths)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"running as root without chattr +i, cannot make a read-only directory: "
                    f"{done.stderr.decode().strip()}")  # fmt: skip
    return lambda: subprocess.run(["chattr", "-i", *map(str, paths)], check=True) and None


def _committed(fake_openai: FakeOpenAI, tmp_path: Path) -> Path:
    """A cache folder holding one judgment, as committed to a repository."""
    cache_dir = tmp_path / "committed"
    writer = JudgeCache(cache_dir)
    client(fake_openai, writer).judge(SIMILARITY, INPUTS)
    writer.close()
    return cache_dir


def test_none_mode_reads_a_read_only_cache(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    # CI replaying a committed cache from a read-only checkout: nothing may be written.
    cache_dir = _committed(fake_openai, tmp_path)
    before = sorted(p.name for p in cache_dir.iterdir())
    undo = _make_read_only(cache_dir)
    try:
        offline = client(fake_openai, JudgeCache(cache_dir, "none"))
        assert offline.judge(SIMILARITY, INPUTS).score == 4
        with pytest.raises(JudgeCacheMiss):
            offline.judge(SIMILARITY, {**INPUTS, "response": "Lyon."})
        assert offline.cache.stats()["entries"] == 1  # type: ignore[union-attr]
        offline.cache.close()  # type: ignore[union-attr]
    finally:
        undo()
    assert sorted(p.name for p in cache_dir.iterdir()) == before
    assert fake_openai.requests == 1


def test_cli_reads_a_read_only_cache(
    fake_openai: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache_dir = _committed(fake_openai, tmp_path)
    undo = _make_read_only(cache_dir)
    try:
        assert main(["cache", "--dir", str(cache_dir), "stats"]) == 0
        assert "1 entry," in capsys.readouterr().out
        assert main(["cache", "--dir", str(cache_dir), "export"]) == 0
        assert len(capsys.readouterr().out.splitlines()) == 1
    finally:
        undo()
    assert main(["cache", "--dir", str(tmp_path / "absent"), "stats"]) == 0
    assert not (tmp_path / "absent").exists()


def test_read_only_cache_in_once_mode_says_what_to_do(
    fake_openai: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache_dir = _committed(fake_openai, tmp_path)
    before = sorted(p.name for p in cache_dir.iterdir())
    undo = _make_read_only(cache_dir)
    try:
        with pytest.raises(JudgeError, match="cannot use it .*--textsim-cache=none"):
            client(fake_openai, JudgeCache(cache_dir)).judge(SIMILARITY, INPUTS)
        assert main(["cache", "--dir", str(cache_dir), "clear"]) == 1
        assert "--textsim-cache=none" in capsys.readouterr().err
    finally:
        undo()
    assert sorted(p.name for p in cache_dir.iterdir()) == before  # nothing moved aside


def test_none_mode_creates_no_cache(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    offline = client(fake_openai, JudgeCache(tmp_path / "absent", "none"))
    with pytest.raises(JudgeCacheMiss):
        offline.judge(SIMILARITY, INPUTS)
    assert not (tmp_path / "absent").exists() and fake_openai.requests == 0


def test_rewrite_calls_again_and_overwrites(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.script(Reply.score(2), Reply.score(5))
    client(fake_openai, JudgeCache(tmp_path)).judge(SIMILARITY, INPUTS)
    assert client(fake_openai, JudgeCache(tmp_path, "rewrite")).judge(SIMILARITY, INPUTS).score == 5
    assert client(fake_openai, JudgeCache(tmp_path)).judge(SIMILARITY, INPUTS).score == 5
    assert fake_openai.requests == 2 and JudgeCache(tmp_path).stats()["entries"] == 1


def test_off_touches_no_file(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    judge = client(fake_openai, JudgeCache(tmp_path / "c", "off"))
    judge.judge(SIMILARITY, INPUTS)
    judge.judge(SIMILARITY, INPUTS)
    assert fake_openai.requests == 2 and not (tmp_path / "c").exists()


def test_errors_and_unparseable_replies_are_not_cached(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    cache = JudgeCache(tmp_path)
    fake_openai.script(Reply.error(500), Reply.error(500), Reply(content="?"), Reply(content="?"))
    judge = client(fake_openai, cache)
    for _ in range(2):
        with pytest.raises(JudgeError):
            judge.judge(SIMILARITY, INPUTS)
    assert cache.stats()["entries"] == 0
    assert judge.judge(SIMILARITY, INPUTS).score == 4 and cache.stats()["entries"] == 1


def test_everything_that_changes_a_reply_changes_the_key() -> None:
    base = key()
    assert base.digest == key().digest
    variants = [
        key(evaluator="fluency"), key(prompt_version="similarity-2"), key(provider="azure"),
        key(model="other"), key(host="other"), key(sampling={"temperature": 0.5}),
        key(sample=1), key(inputs={**INPUTS, "response": "Paris"}),
        key(inputs={**INPUTS, "query": "Capital?"}),
    ]  # fmt: skip
    digests = {v.digest for v in variants}  # type: ignore[attr-defined]
    assert len(digests) == len(variants) and base.digest not in digests  # type: ignore[attr-defined]


def test_prompt_version_is_part_of_the_key(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    judge = client(fake_openai, JudgeCache(tmp_path))
    judge.judge(FLUENCY, {"response": "r"})
    bumped = Prompt(FLUENCY.metric, "fluency-3", FLUENCY.system, FLUENCY.inputs)
    judge.judge(bumped, {"response": "r"})
    assert fake_openai.requests == 2


def test_no_secret_in_the_cache_file(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    judge = client(fake_openai, JudgeCache(tmp_path))
    judge.judge(SIMILARITY, INPUTS)
    judge.cache.close()  # type: ignore[union-attr]
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"gpt-judge" in stored and b"The capital is Paris." in stored
    assert SECRET.encode() not in stored


_WRITER = """
import sys
from pytest_textsim.judge.cache import JudgeCache
from pytest_textsim.judge.client import Judgment
worker, count, directory = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
cache = JudgeCache(directory)
for i in range(count):
    key = JudgeCache.key(evaluator="fluency", prompt_version="fluency-1", provider="openai",
                         model="m", host="h", sampling={}, sample=0,
                         inputs={"response": f"worker {worker} row {i}"})
    cache.put(key, Judgment(1 + i % 5, f"w{worker}", "{}", 10, 2))
    assert cache.get(key).reason == f"w{worker}"
"""


def writers(folder: Path, script: str, count: int, **options: object) -> list[subprocess.Popen]:
    """Eight processes running ``script`` (worker number, ``count``, ``folder``):
    ``python -m cache_writer`` with the script in a folder of its own, each a fork
    of the suite's warm server (xdist_forks.py) where fork works, which has
    imported this package already."""
    scripts = folder.parent / f"{folder.name}-writer"
    scripts.mkdir()
    (scripts / "cache_writer.py").write_text(script, encoding="utf-8")
    return [
        subprocess.Popen(  # type: ignore[call-overload]
            xdist_forks.python_command("-m", "cache_writer", str(w), str(count), str(folder)),
            cwd=scripts,
            **options,
        )
        for w in range(8)
    ]


def test_eight_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    workers = writers(tmp_path, _WRITER, 60)
    assert [w.wait(timeout=120) for w in workers] == [0] * 8
    cache = JudgeCache(tmp_path)
    assert cache.stats()["entries"] == 480
    assert cache.stats()["by_evaluator"] == {"fluency": 480}
    conn = sqlite3.connect(tmp_path / "judge.sqlite3")
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_corrupt_file_is_set_aside(tmp_path: Path) -> None:
    (tmp_path / "judge.sqlite3").write_bytes(b"this is not a database" * 100)
    cache = JudgeCache(tmp_path)
    with pytest.warns(JudgeCacheWarning, match="not a usable SQLite database .*; moved it to"):
        assert cache.get(key()) is None  # type: ignore[arg-type]
    cache.put(key(), Judgment(3, "ok", "{}"))  # type: ignore[arg-type]
    assert cache.get(key()).score == 3  # type: ignore[arg-type,union-attr]
    aside = [p.name for p in tmp_path.iterdir() if ".bad-" in p.name]
    assert len(aside) == 1 and aside[0].startswith("judge.sqlite3.bad-")


def test_eight_processes_meeting_a_corrupt_file_set_it_aside_once(tmp_path: Path) -> None:
    # Each worker finds the bad file; one moves it, the others must neither move
    # the new database nor delete its write-ahead log, and no entry is lost.
    (tmp_path / "judge.sqlite3").write_bytes(b"this is not a database" * 100)
    go = tmp_path / "go"
    # Every worker imports, then waits for the others, so that they meet the file together.
    # Warnings shown every time, as ``python -W always`` shows them.
    start = (
        "import os, time, warnings, pytest_textsim.judge.cache, pytest_textsim.judge.client\n"
        "warnings.simplefilter('always')\n"
        f"while not os.path.exists({str(go)!r}): time.sleep(0.001)\n"
    )
    workers = writers(tmp_path, start + _WRITER, 20, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    go.touch()
    errors = [w.communicate(timeout=120)[1] for w in workers]
    assert [w.returncode for w in workers] == [0] * 8, errors
    assert sum(e.count("JudgeCacheWarning") for e in errors) == 1, errors
    assert len([p for p in tmp_path.iterdir() if ".bad-" in p.name]) == 1
    assert JudgeCache(tmp_path).stats()["entries"] == 160
    conn = sqlite3.connect(tmp_path / "judge.sqlite3")
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_newer_schema_is_set_aside(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "judge.sqlite3")
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.warns(JudgeCacheWarning, match="newer pytest-textsim .schema 99"):
        assert JudgeCache(tmp_path).stats()["entries"] == 0


def test_export_import_round_trip(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.responder = lambda request: Reply.score(len(request.messages[1]["content"]) % 5 + 1)
    source = JudgeCache(tmp_path / "a")
    judge = client(fake_openai, source)
    for i in range(5):
        judge.judge(SIMILARITY, {**INPUTS, "response": f"answer {i}"})
    out = io.StringIO()
    assert source.export_jsonl(out) == 5
    lines = out.getvalue().splitlines()
    assert SECRET not in out.getvalue()
    assert {"inputs", "model", "host", "score", "reason", "raw", "created"} <= set(
        json.loads(lines[0])
    )
    target = JudgeCache(tmp_path / "b", "none")
    assert target.import_jsonl(lines) == 5
    replay = client(fake_openai, target)
    before = fake_openai.requests
    for i in range(5):
        replay.judge(SIMILARITY, {**INPUTS, "response": f"answer {i}"})
    assert fake_openai.requests == before
    assert list(target.entries()) == list(source.entries())


def test_import_reports_every_bad_line(tmp_path: Path) -> None:
    good = {
        "evaluator": "fluency", "prompt_version": "fluency-1", "provider": "openai",
        "model": "m", "host": "h", "sampling": {}, "sample": 0, "inputs": {"response": "r"},
        "score": 4, "reason": "ok", "raw": "{}",
    }  # fmt: skip
    lines = [json.dumps(good), "not json", json.dumps({**good, "score": 9}), "",
             json.dumps({k: v for k, v in good.items() if k != "model"})]  # fmt: skip
    cache = JudgeCache(tmp_path)
    with pytest.raises(ValueError) as info:
        cache.import_jsonl(lines, "shared.jsonl")
    message = str(info.value)
    assert "shared.jsonl:2: not valid JSON" in message
    assert 'shared.jsonl:3: "score" must be a whole number 1-5' in message
    assert "shared.jsonl:5: missing field 'model'" in message
    assert isinstance(info.value, CacheImportError) and len(info.value.problems) == 3
    assert cache.stats()["entries"] == 0 and not (tmp_path / "judge.sqlite3").exists()


def test_cli(fake_openai: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = tmp_path / "cache"
    client(fake_openai, JudgeCache(directory)).judge(SIMILARITY, INPUTS)
    client(fake_openai, JudgeCache(directory)).judge(FLUENCY, {"response": "r"})
    assert main(["cache", "--dir", str(directory), "stats"]) == 0
    out = capsys.readouterr().out
    assert "2 entries" in out and "evaluator similarity: 1" in out
    assert "model openai:gpt-judge@127.0.0.1/v1: 2" in out
    export = tmp_path / "export.jsonl"
    assert main(["cache", "--dir", str(directory), "export", "-o", str(export)]) == 0
    assert len(export.read_text().splitlines()) == 2
    assert main(["cache", "--dir", str(directory), "export"]) == 0  # to standard output
    printed = capsys.readouterr()
    assert printed.out == export.read_text() and "exported 2 entries" in printed.err
    assert SECRET not in export.read_text() + printed.out + printed.err
    assert main(["cache", "--dir", str(directory), "clear", "--evaluator", "fluency"]) == 0
    assert "removed 1 entry from" in capsys.readouterr().out
    assert main(["cache", "--dir", str(directory), "import", str(export)]) == 0
    assert "imported 2 entries" in capsys.readouterr().out
    assert main(["cache", "--dir", str(directory), "stats", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["entries"] == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{}\n")
    assert main(["cache", "--dir", str(directory), "import", str(bad)]) == 2
    assert f"{bad}:1: missing fields 'evaluator', " in capsys.readouterr().err


GOOD_ENTRY = {
    "evaluator": "fluency", "prompt_version": "fluency-1", "provider": "openai", "model": "m",
    "host": "h", "sampling": {}, "sample": 0, "inputs": {"response": "r"}, "score": 4,
    "reason": "ok", "raw": "{}",
}  # fmt: skip


def test_cli_import_lists_every_bad_line_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Exit 2 and file:line for each bad line, as textsim score does for its input.
    shared = tmp_path / "shared.jsonl"
    lines = [
        json.dumps(GOOD_ENTRY),
        '{"evaluator": "fluency",',
        "[1, 2]",
        "",
        json.dumps({**GOOD_ENTRY, "score": 9, "sample": -1, "inputs": "r"}),
        json.dumps({k: v for k, v in GOOD_ENTRY.items() if k not in ("model", "host")}),
        json.dumps({**GOOD_ENTRY, "model": 3, "reason": None, "tokens_in": "12"}),
    ]
    shared.write_text("\n".join(lines) + "\n")
    directory = tmp_path / "cache"
    assert main(["cache", "--dir", str(directory), "import", str(shared)]) == 2
    prefix = "textsim cache import: error: "
    assert capsys.readouterr().err.splitlines() == [
        f"{prefix}{shared}:2: not valid JSON (Expecting property name enclosed in double "
        "quotes at column 25)",
        f"{prefix}{shared}:3: expected a JSON object, got an array",
        f'{prefix}{shared}:5: "sample" must be a whole number >= 0, got a number (-1); '
        '"inputs" must be an object, got a string; "score" must be a whole number 1-5, '
        "got a number (9)",
        f"{prefix}{shared}:6: missing fields 'model', 'host'",
        f'{prefix}{shared}:7: "model" must be a string, got a number (3); "reason" must '
        'be a string, got null; "tokens_in" must be a whole number >= 0, got a string',
        f"{prefix}5 bad lines in {shared}; nothing was imported",
    ]
    # Nothing imported, and no cache created for a file that could not be read.
    assert not directory.exists()
    assert main(["cache", "--dir", str(directory), "import", str(tmp_path / "absent.jsonl")]) == 2
    assert capsys.readouterr().err == f"{prefix}{tmp_path / 'absent.jsonl'}: no such file\n"
    shared.write_bytes(json.dumps(GOOD_ENTRY).encode() + b"\n\xff\n")
    assert main(["cache", "--dir", str(directory), "import", str(shared)]) == 2
    assert f"{prefix}{shared}:2: not UTF-8 text" in capsys.readouterr().err
    assert not directory.exists()


def test_cli_import_from_stdin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(GOOD_ENTRY) + "\n"))
    assert main(["cache", "--dir", str(tmp_path), "import", "-"]) == 0
    assert "imported 1 entry into" in capsys.readouterr().out
    monkeypatch.setattr(sys, "stdin", io.StringIO("\nnope\n"))
    assert main(["cache", "--dir", str(tmp_path), "import", "-"]) == 2
    assert "error: <stdin>:2: not valid JSON" in capsys.readouterr().err


def test_cli_clear_of_an_evaluator_with_no_entries_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = tmp_path / "cache"
    entries = [GOOD_ENTRY, {**GOOD_ENTRY, "evaluator": "similarity", "sample": 1},
               {**GOOD_ENTRY, "evaluator": "similarity", "sample": 2}]  # fmt: skip
    JudgeCache(directory).import_jsonl([json.dumps(e) for e in entries])
    assert main(["cache", "--dir", str(directory), "clear", "--evaluator", "simlarity"]) == 1
    assert capsys.readouterr().err == (
        f"textsim cache clear: no entries of evaluator 'simlarity' (did you mean 'similarity'?) "
        f"in {directory / 'judge.sqlite3'}; its evaluators: fluency (1 entry), "
        "similarity (2 entries)\n"
    )
    assert JudgeCache(directory).stats()["entries"] == 3
    assert main(["cache", "--dir", str(directory), "clear", "--evaluator", "similarity"]) == 0
    assert capsys.readouterr().out == f"removed 2 entries from {directory / 'judge.sqlite3'}\n"


def test_cli_clear_creates_no_cache(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    absent = tmp_path / "absent"
    assert main(["cache", "--dir", str(absent), "clear", "--evaluator", "fluency"]) == 1
    assert capsys.readouterr().err == (
        f"textsim cache clear: no entries of evaluator 'fluency' in "
        f"{absent / 'judge.sqlite3'}; the cache is empty\n"
    )
    assert main(["cache", "--dir", str(absent), "clear"]) == 0
    assert capsys.readouterr().out == f"removed 0 entries from {absent / 'judge.sqlite3'}\n"
    assert not absent.exists()


def test_cli_help_gives_the_exit_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["cache", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "exit status: 0 done, 1 the cache cannot be used" in text
    assert "2 usage or input error (a missing import file, bad lines in it; clear of every " in text
    assert "(stats and export: a corrupt file, or one from a newer pytest-textsim)" in text
    assert "or clear --evaluator matched no entries" in text


def test_locked_database_is_tried_again_not_failed() -> None:
    # SQLite answers "database is locked" at once (no busy timeout) while another
    # process switches a new file to WAL mode; that must not fail the worker.
    from pytest_textsim.judge.cache import _while_busy

    answers = iter([sqlite3.OperationalError("database is locked")] * 2 + ["ok"])

    def action() -> str:
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert _while_busy(action) == "ok"

    def broken() -> None:
        raise sqlite3.OperationalError("no such table: judgments")

    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        _while_busy(broken)


def test_user_info_in_the_url_is_not_stored_nor_hashed(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    secret = "sk-URLSECRET-cache-1f"
    url = f"http://user:{secret}@127.0.0.1:{fake_openai.port}/v1"
    cache = JudgeCache(tmp_path)
    with_info = JudgeClient({"model": "gpt-judge", "base_url": url, "api_key": SECRET}, OPTIONS,
                            cache=cache)  # fmt: skip
    with_info.judge(SIMILARITY, INPUTS)
    (entry,) = cache.entries()
    assert entry["host"] == "127.0.0.1/v1"  # host and path, no user info, no loopback port
    cache.close()
    assert not [p for p in tmp_path.iterdir() if secret.encode() in p.read_bytes()]
    # The key is the one an ordinary URL gives, so caches recorded without user info still hit.
    plain = client(fake_openai, JudgeCache(tmp_path))
    assert plain.judge(SIMILARITY, INPUTS).cached and fake_openai.requests == 1


def test_a_file_where_the_folder_should_be(tmp_path: Path, capsys) -> None:
    (tmp_path / "afile").write_text("x")
    for directory in (tmp_path / "afile", tmp_path / "afile" / "sub"):
        with pytest.raises(JudgeError, match=f"judge cache folder {directory}: cannot create it"):
            JudgeCache(directory).get(key())
    assert main(["cache", "--dir", str(tmp_path / "afile" / "sub"), "clear"]) == 2
    err = capsys.readouterr().err
    assert f"afile/sub is not a directory ({tmp_path / 'afile'} is a file)" in err


@pytest.mark.parametrize("action", ["stats", "export"])
@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("garbage", "it is not a usable SQLite database (file is not a database); move it "
         "away or delete it"),
        ("newer", "it was written by a newer pytest-textsim (schema 99, this one reads 2); "
         "read it with that version"),
    ],
    ids=["corrupt", "newer-schema"],
)  # fmt: skip
def test_cli_reports_an_unusable_cache_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], action: str, content: str, why: str
) -> None:
    # stats and export only read, so a bad file is not set aside: it is an error,
    # not "0 entries" with a pytest-worded warning.
    path = tmp_path / "judge.sqlite3"
    if content == "garbage":
        path.write_text("garbage\n")
    else:
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA user_version = 99")
        conn.close()
    before = path.read_bytes()
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["cache", "--dir", str(tmp_path), action]) == 1
    # A socket of an earlier test collected now may warn (ResourceWarning): not ours.
    assert [w for w in caught if not issubclass(w.category, ResourceWarning)] == []
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[0].startswith(
        f"textsim cache {action}: error: judge cache {path}: {why}"
    )
    assert len(err.splitlines()) == 1 and "cache mode none" not in err
    assert path.read_bytes() == before and sorted(tmp_path.iterdir()) == [path]


def test_cli_clear_sets_a_corrupt_cache_aside_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "judge.sqlite3").write_text("garbage\n")
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["cache", "--dir", str(tmp_path), "clear"]) == 0
    # A socket of an earlier test collected now may warn (ResourceWarning): not ours.
    assert [w for w in caught if not issubclass(w.category, ResourceWarning)] == []
    aside = next(p.name for p in tmp_path.iterdir() if ".bad-" in p.name)
    assert capsys.readouterr().err == (
        f"textsim cache clear: warning: judge cache {tmp_path / 'judge.sqlite3'}: it is not a "
        f"usable SQLite database (file is not a database); moved it to {aside} and started an "
        "empty cache\n"
    )


def test_clear_of_every_entry_needs_all_or_an_answer(
    fake_openai: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    import io
    import subprocess
    import sys

    directory = tmp_path / "cache"
    client(fake_openai, JudgeCache(directory)).judge(SIMILARITY, INPUTS)
    client(fake_openai, JudgeCache(directory)).judge(FLUENCY, {"response": "r"})
    # Not a terminal (CI, a script): refused, nothing deleted.
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from pytest_textsim.cli import main; "
         "sys.exit(main(sys.argv[1:]))", "cache", "--dir", str(directory), "clear"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == (
        f"textsim cache clear: error: this would delete all 2 entries of "
        f"{directory / 'judge.sqlite3'}; give --all to do so, or --evaluator NAME to delete one "
        "evaluator's\n"
    )
    assert sum(JudgeCache(directory, "none").stats()["by_evaluator"].values()) == 2

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    # On a terminal it asks: "n" keeps everything, "y" deletes.
    monkeypatch.setattr(sys, "stdin", Terminal("n\n"))
    assert main(["cache", "--dir", str(directory), "clear"]) == 2
    assert "delete all 2 entries of" in capsys.readouterr().out
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    assert main(["cache", "--dir", str(directory), "clear"]) == 0
    assert "removed 2 entries" in capsys.readouterr().out
    client(fake_openai, JudgeCache(directory)).judge(FLUENCY, {"response": "r"})
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert main(["cache", "--dir", str(directory), "clear", "--all"]) == 0
    assert "removed 1 entry" in capsys.readouterr().out


# -- damage in the middle of the file; read-only caches in rewrite mode --------------


def _damaged_cache(directory: Path, rows: int = 600) -> list[object]:
    """A cache of ``rows`` entries with random bytes over a few pages in the middle,
    as the audit made it: the header is fine, so opening it succeeds."""
    cache = JudgeCache(directory)
    keys = [key(inputs={"response": f"answer {i}", "ground_truth": "x" * 300}) for i in range(rows)]
    for k in keys:
        cache.put(k, Judgment(3, "ok " * 50, "{}"))  # type: ignore[arg-type]
    conn = cache._connect()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    cache.close()
    path = directory / "judge.sqlite3"
    clean = path.read_bytes()
    noise = random.Random(7).randbytes(3 * 4096)
    # From the middle on, the first pages whose damage the opening probe (counting the
    # judgments) does not see, but SQLite's check does: which pages those are depends
    # on the tables the file holds.
    for page in range(len(clean) // 2 // 4096, len(clean) // 4096 - 3):
        data = bytearray(clean)
        data[page * 4096 : page * 4096 + len(noise)] = noise
        path.write_bytes(bytes(data))
        if _opens(path) and _damaged_file(path):
            return keys
    raise AssertionError("no page in the second half damages the file unseen")


def _opens(path: Path) -> bool:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        conn.execute("SELECT COUNT(*) FROM judgments").fetchone()
        return True
    except sqlite3.DatabaseError:
        return False
    finally:
        conn.close()


def _damaged_file(path: Path) -> bool:
    from pytest_textsim.judge.cache import _damaged

    return _damaged(path)


def test_damage_in_the_middle_is_set_aside_once_and_the_run_goes_on(tmp_path: Path) -> None:
    keys = _damaged_cache(tmp_path)
    cache = JudgeCache(tmp_path)
    with pytest.warns(JudgeCacheWarning) as caught:
        found = [cache.get(k) for k in keys]  # type: ignore[arg-type]
        cache.put(keys[0], Judgment(5, "new", "{}"))  # type: ignore[arg-type]
    messages = [str(w.message) for w in caught if issubclass(w.category, JudgeCacheWarning)]
    assert len(messages) == 1, messages
    assert messages[0].startswith(f"judge cache {tmp_path / 'judge.sqlite3'}: it is damaged (")
    assert "moved it to judge.sqlite3.bad-" in messages[0]
    assert any(f is None for f in found)
    assert cache.get(keys[0]).score == 5  # type: ignore[arg-type,union-attr]
    assert len([p for p in tmp_path.iterdir() if ".bad-" in p.name]) == 1
    conn = sqlite3.connect(tmp_path / "judge.sqlite3")
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_damage_in_the_middle_in_none_mode_reads_empty_and_moves_nothing(
    tmp_path: Path,
) -> None:
    keys = _damaged_cache(tmp_path)
    before = (tmp_path / "judge.sqlite3").read_bytes()
    cache = JudgeCache(tmp_path, "none")
    with pytest.warns(JudgeCacheWarning, match="it is damaged .*cache mode none reads it as empty"):
        for k in keys:
            cache.get(k)  # type: ignore[arg-type]
    assert (tmp_path / "judge.sqlite3").read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if ".bad-" in p.name]


def test_damaged_cache_in_a_judged_run_is_recovered(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    """The audit: 71 of 200 tests failed with 'database disk image is malformed', and
    every later run the same way."""
    inputs = [{**INPUTS, "response": f"answer {i} " + "x" * 300} for i in range(300)]
    recorder = client(fake_openai, JudgeCache(tmp_path))
    for row in inputs:
        recorder.judge(SIMILARITY, row)
    recorder.cache._connect().execute("PRAGMA wal_checkpoint(TRUNCATE)")  # type: ignore[union-attr]
    recorder.cache.close()  # type: ignore[union-attr]
    path = tmp_path / "judge.sqlite3"
    data = bytearray(path.read_bytes())
    middle = len(data) // 2 // 4096 * 4096
    data[middle : middle + 3 * 4096] = random.Random(3).randbytes(3 * 4096)
    path.write_bytes(bytes(data))
    recorded = fake_openai.requests
    for run in range(2):  # the second run finds a healthy cache
        judge = client(fake_openai, JudgeCache(tmp_path))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert [judge.judge(SIMILARITY, row).score for row in inputs] == [4] * 300
        aside = [w for w in caught if issubclass(w.category, JudgeCacheWarning)]
        assert len(aside) == (1 if run == 0 else 0), [str(w.message) for w in aside]
        judge.cache.close()  # type: ignore[union-attr]
    # A fresh cache replaced the damaged one: the lost rows were asked again.
    assert fake_openai.requests > recorded


def test_cli_stats_finds_damage_in_the_middle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _damaged_cache(tmp_path)
    assert main(["cache", "--dir", str(tmp_path), "stats"]) == 1
    err = capsys.readouterr().err
    assert f"judge cache {tmp_path / 'judge.sqlite3'}: it is damaged (" in err
    assert "a pytest run with the cache on, sets it aside" in err
    # ... which is true: a run with the cache on sets it aside and goes on.
    cache = JudgeCache(tmp_path)
    with pytest.warns(JudgeCacheWarning, match="moved it to"):
        cache.clear()
    assert main(["cache", "--dir", str(tmp_path), "stats"]) == 0


def test_a_locked_or_full_database_is_not_damage() -> None:
    from pytest_textsim.judge.cache import is_corrupt

    assert not is_corrupt(sqlite3.OperationalError("database is locked"))
    assert not is_corrupt(sqlite3.OperationalError("database or disk is full"))
    assert not is_corrupt(ValueError("malformed"))


def test_rewrite_mode_on_a_read_only_cache_fails_before_any_call(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    cache_dir = _committed(fake_openai, tmp_path)
    calls = fake_openai.requests
    undo = _make_read_only(cache_dir)
    try:
        rewrite = client(fake_openai, JudgeCache(cache_dir, "rewrite"))
        with pytest.raises(JudgeError, match="judge cache .*: cannot (write|use) it"):
            rewrite.judge(SIMILARITY, INPUTS)
    finally:
        undo()
    assert fake_openai.requests == calls  # nothing paid for


# -- the endpoint's path is part of the key ------------------------------------------


def test_another_path_on_the_same_host_is_a_miss(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    """The audit: judgments recorded through /good/v1 were served for /bad/v1."""
    config = {"model": "m", "api_key": SECRET}
    good = JudgeClient({**config, "base_url": fake_openai.url + "/good/v1"}, OPTIONS,
                       cache=JudgeCache(tmp_path))  # fmt: skip
    assert good.judge(SIMILARITY, INPUTS).score == 4
    fake_openai.script(Reply.error(503), Reply.error(503))
    bad = JudgeClient({**config, "base_url": fake_openai.url + "/bad/v1"}, OPTIONS,
                      cache=JudgeCache(tmp_path))  # fmt: skip
    with pytest.raises(JudgeError, match="HTTP 503"):
        bad.judge(SIMILARITY, INPUTS)
    offline = JudgeClient({**config, "base_url": fake_openai.url + "/bad/v1"}, OPTIONS,
                          cache=JudgeCache(tmp_path, "none"))  # fmt: skip
    with pytest.raises(JudgeCacheMiss) as info:
        offline.judge(SIMILARITY, INPUTS)
    assert "at 127.0.0.1/bad/v1" in str(info.value)
    assert "the cache has this judgment at 127.0.0.1/good/v1 (1 entry for m at " in str(info.value)


def test_migrate_rekeys_entries_recorded_without_the_path(
    fake_openai: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recorder = client(fake_openai, JudgeCache(tmp_path))
    recorder.judge(SIMILARITY, INPUTS)
    # As an older release keyed it: host and port only (imported without the port).
    cache = JudgeCache(tmp_path)
    (entry,) = list(cache.entries())
    cache.clear()
    cache.import_jsonl([json.dumps({**entry, "host": f"127.0.0.1:{fake_openai.port}"})])
    cache.close()
    offline = client(fake_openai, JudgeCache(tmp_path, "none"))
    with pytest.raises(JudgeCacheMiss, match="under 127.0.0.1, as keyed before .* re-key it with "
                       "textsim cache migrate --base-url"):  # fmt: skip
        offline.judge(SIMILARITY, INPUTS)
    assert (
        main(["cache", "--dir", str(tmp_path), "migrate", "--base-url", fake_openai.base_url]) == 0
    )
    assert capsys.readouterr().out == (
        f"re-keyed 1 entry to 127.0.0.1/v1 in {tmp_path / 'judge.sqlite3'}\n"
    )
    offline = client(fake_openai, JudgeCache(tmp_path, "none"))
    assert offline.judge(SIMILARITY, INPUTS).score == 4
    assert main(["cache", "--dir", str(tmp_path), "migrate", "--base-url", "ftp://x"]) == 2
