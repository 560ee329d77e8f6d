"""Which kept judge batch a textsim score --judge-batch run resumes, and what it says
when the provider has no such batch: a batch belongs to the server (scheme, host,
port, path) that took it; one kept by an earlier release (no port) is still
resumed, and a 404 for it stops the run naming both endpoints and the command
that forgets it. Polls start after 1 s, then back off from --judge-batch-poll.
The fake server's batch API, driven by the real openai client."""

from __future__ import annotations

import shlex
import sqlite3
from pathlib import Path

import batch_cli
import pytest
from batch_cli import SECRET, another_id, judge, write_project

from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return write_project(tmp_path, monkeypatch, OPENAI_API_KEY=SECRET)


def score(server: FakeOpenAI, *more: str) -> int:
    return batch_cli.score(server, *more, poll=False)


def test_a_batch_kept_without_its_port_that_the_server_lacks_names_both_and_how_to_forget(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_textsim.cli import main

    with FakeOpenAI(responder=judge, batch_polls=1) as first:
        assert score(first, "--judge-batch-poll", "0.001", "--judge-batch-wait", "0") == 130
    # As an earlier release kept it: the cache's endpoint key, no scheme or port.
    with sqlite3.connect(project / "cache" / "judge.sqlite3") as conn:
        (kept,) = conn.execute("SELECT endpoint FROM judge_batches").fetchone()
        assert kept == first.base_url
        conn.execute("UPDATE judge_batches SET endpoint = '127.0.0.1/v1'")
    conn.close()
    capsys.readouterr()
    with FakeOpenAI(responder=judge, batch_polls=1) as other:
        # Resumed there (the same cache key), which has no such batch: a plain error.
        assert score(other, "--judge-batch-poll", "0.001") == 2
        err = capsys.readouterr().err
        assert ("\ntextsim: error: the judge provider has no batch batch_2 (judge batch: "
                "polling batch_2 failed: Error code: 404") in err  # fmt: skip
        assert ("it was kept as submitted through 127.0.0.1/v1 by an earlier release, which "
                f"did not keep the scheme and port; this run asked {other.base_url}: it may "
                "belong to another endpoint, or another account or project than the key's, or "
                "have been deleted. It stays kept in the judge cache") in err  # fmt: skip
        assert SECRET not in err and other.requests == 0 and other.batches.created == 0
        command = err.rpartition("with: ")[2].strip()
        assert command == (f"textsim cache --dir {project / 'cache'} batches --forget batch_2")
        assert main(shlex.split(command)[1:]) == 0
        assert score(other, "--judge-batch-poll", "0.001") == 0
        assert other.batches.created == 1 and other.requests == 0


def test_a_404_for_a_batch_at_its_own_endpoint_says_so_and_another_port_does_not_resume_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAI(responder=judge, batch_polls=1) as first:
        assert score(first, "--judge-batch-poll", "0.001", "--judge-batch-wait", "0") == 130
        capsys.readouterr()
        first.batches.fail("poll", Reply.error(404))
        assert score(first, "--judge-batch-poll", "0.001") == 2
        err = capsys.readouterr().err
        assert "textsim: error: the judge provider has no batch batch_2 " in err
        assert (f"it was submitted through {first.base_url}, the endpoint this run asked: it "
                "may belong to another account or project than the key's") in err  # fmt: skip
        with FakeOpenAI(responder=judge, batch_polls=1) as other:
            another_id(other)
            # Another port is another server: first's batch is not polled there.
            assert score(other, "--judge-batch-poll", "0.001", "-o", "b.jsonl") == 0
            assert other.batches.created == 1 and other.requests == 0
            assert "resumed" not in capsys.readouterr().err
        assert first.batches.retrieved == 1 and first.requests == 0


def test_polls_start_after_a_second_then_back_off_from_the_poll_interval(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from itertools import islice

    from pytest_textsim.judge import batch

    assert list(islice(batch.poll_delays(5.0), 8)) == [1.0, 5.0, 10.0, 20.0, 40.0, 60.0, 60.0,
                                                       60.0]  # fmt: skip
    assert list(islice(batch.poll_delays(0.5), 3)) == [0.5, 0.5, 1.0]
    waits: list[float] = []
    monkeypatch.setattr(batch, "pause", waits.append)
    with FakeOpenAI(responder=judge, batch_polls=3) as server:
        assert score(server) == 0
        assert server.batches.retrieved == 4 and server.requests == 0
    assert waits == [1.0, 5.0, 10.0]
