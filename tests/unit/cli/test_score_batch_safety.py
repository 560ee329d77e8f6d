"""textsim score --judge-batch never pays for a judgment twice: a batch whose create
call was cut off (Ctrl-C, a crash) is kept or found again, a poll or download that
fails is tried again and then stops the run with the batch kept (never the ordinary
path), and a slow results download is bounded by stalls, not by the judge's
per-call timeout. The fake servers' batch APIs, driven by the real SDKs."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from batch_cli import SECRET, score, serve, similarities, write_project

from pytest_textsim.testing.fake_openai import Reply


def test_polls_and_a_download_that_fail_for_a_while_are_tried_again(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with serve("openai", monkeypatch, batch_polls=1) as server:
        server.batches.fail("poll", Reply.error(503), Reply(disconnect=True))
        # A download refused, then one cut off after its first line: the second
        # download skips that line, already cached.
        server.batches.fail("download", Reply.error(429, headers={"Retry-After": "0"}),
                            Reply(stream_cut_after=1))  # fmt: skip
        assert score(server) == 0
        assert server.batches.created == 1 and server.requests == 0
        assert "judge batch: 3 judgment(s) cached from 1 batch(es), 0 left" in (
            capsys.readouterr().err)  # fmt: skip
    assert similarities(project / "a.jsonl") == [2, 3, 2]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return write_project(tmp_path, monkeypatch)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_polling_that_keeps_failing_stops_with_the_batch_kept_and_the_next_run_resumes_it(
    provider: str, project: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    with serve(provider, monkeypatch) as server:
        server.batches.fail("poll", *[Reply.error(502)] * 4)
        assert score(server) == 130
        (batch_id,) = server.batches.batches
        err = capsys.readouterr().err
        assert f"textsim: judge batch: polling {batch_id} failed (4 tries): " in err
        assert (f"; judge batch {batch_id} is kept in the judge cache: run the same command "
                "again to collect it") in err  # fmt: skip
        # Nothing judged the ordinary way while the batch judges the same.
        assert server.requests == 0 and not (project / "a.jsonl").exists()
        assert SECRET not in err
        # A refusal of the key (401) is not tried again, says so, and keeps the batch too.
        server.batches.fail("poll", Reply.error(401))
        assert score(server) == 2
        err = capsys.readouterr().err
        key = "ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY"
        assert (f"textsim: error: the judge provider refused the key while polling batch "
                f"{batch_id} (judge batch: polling {batch_id} failed: ") in err  # fmt: skip
        assert f"): check {key}; it was submitted through {server.base_url}, the endpoint " in err
        assert f"batches --forget {batch_id}\n" in err and SECRET not in err
        assert score(server) == 0
        assert f"judge batch {batch_id}: resumed, 3 judgment(s)" in capsys.readouterr().err
        assert server.batches.created == 1 and server.requests == 0
    assert similarities(project / "a.jsonl") == [2, 3, 2]


class Killed(BaseException):
    """The process dies (kill -9, a power cut): nothing after it runs."""


@pytest.fixture
def killed_once_after_the_create_call(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The cache's write of a new batch's id dies, once: as a run killed between the
    provider's answer to the create call and that write."""
    from pytest_textsim.judge.cache.stores import Stores

    put_batch, calls = Stores.put_batch, []

    def dying(self: Stores, *args: Any, **kwargs: Any) -> None:
        calls.append(args)
        if len(calls) == 1:
            raise Killed
        put_batch(self, *args, **kwargs)

    monkeypatch.setattr(Stores, "put_batch", dying)
    yield


@pytest.mark.parametrize("provider", ["openai", "azure", "anthropic"])
@pytest.mark.usefixtures("killed_once_after_the_create_call")
def test_a_run_killed_before_its_batch_id_was_kept_finds_the_batch_at_the_provider(
    provider: str, project: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    with serve(provider, monkeypatch, batch_polls=1) as server:
        with pytest.raises(Killed):
            score(server)
        (batch_id,) = server.batches.batches
        assert server.requests == 0
        server.batches.fail("list", Reply.error(500))  # a look-up is tried again too
        if provider == "anthropic":
            # Another client's batch made since, of another size: not taken for ours.
            params = {"model": "m", "max_tokens": 5, "messages": []}
            body = {"requests": [{"custom_id": c, "params": params} for c in ("a", "b")]}
            server.batches.post("/v1/messages/batches", "", json.dumps(body).encode())
        assert score(server) == 0
        err = capsys.readouterr().err
        # A Message Batch shows nothing of ours: it is found by its size and time.
        how = "its size and creation time" if provider == "anthropic" else "its input file"
        assert (f"judge batch {batch_id}: found at the provider by {how} (the run that "
                "created it stopped before keeping its id)") in err  # fmt: skip
        assert f"judge batch {batch_id}: resumed, 3 judgment(s)" in err
        assert "submitted" not in err
        assert server.batches.created == 1 + (provider == "anthropic")
        assert server.requests == 0
    assert similarities(project / "a.jsonl") == [2, 3, 2]


def test_a_create_call_without_an_answer_stops_the_run_and_the_next_looks_first(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with serve("openai", monkeypatch) as server:
        server.batches.fail("create", Reply(disconnect=True))  # no batch made, no answer
        assert score(server) == 130
        assert ("textsim: judge batch: submitting got no answer (Connection error.); the batch "
                "may have been made: run the same command again to look for it before "
                "anything is submitted again") in capsys.readouterr().err  # fmt: skip
        assert server.batches.created == 0 and server.requests == 0
        # The provider has no batch from the kept input file: it is submitted now.
        assert score(server) == 0
        assert "judge batch batch_3: submitted, 3 judgment(s)" in capsys.readouterr().err
        assert server.batches.created == 1 and server.requests == 0
    assert similarities(project / "a.jsonl") == [2, 3, 2]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_ctrl_c_during_the_create_call_is_held_until_the_batch_id_is_kept(
    provider: str, project: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with serve(provider, monkeypatch) as server:
            # The provider has made the batch; Ctrl-C before its answer is read.
            server.batches.on_create = lambda: os.kill(os.getpid(), signal.SIGINT)
            assert score(server) == 130
            assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # set back
            server.batches.on_create = None
            (batch_id,) = server.batches.batches
            err = capsys.readouterr().err
            assert (f"textsim: interrupted; judge batch {batch_id} goes on at the provider; "
                    "its id is kept in the judge cache") in err  # fmt: skip
            assert score(server) == 0
            assert f"judge batch {batch_id}: resumed, 3 judgment(s)" in capsys.readouterr().err
            assert server.batches.created == 1 and server.requests == 0
    finally:
        signal.signal(signal.SIGINT, previous)
    assert similarities(project / "a.jsonl") == [2, 3, 2]


def test_a_results_download_longer_than_the_judge_timeout_is_not_cut_off(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with serve("openai", monkeypatch) as server:
        server.batches.trickle = 0.1  # 8 pieces: 0.7 s in all, no stall near 0.5 s
        assert score(server, "--judge-timeout", "0.5") == 0
        assert "3 judgment(s) cached from 1 batch(es)" in capsys.readouterr().err
        assert server.batches.created == 1 and server.requests == 0
    assert similarities(project / "a.jsonl") == [2, 3, 2]
