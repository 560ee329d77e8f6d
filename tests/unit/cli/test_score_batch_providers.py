"""textsim score --judge-batch with the Azure OpenAI and Anthropic judge providers:
Azure's Batch API (the fake server's /openai/files and /openai/batches, driven by the
real AzureOpenAI client) and Anthropic's Message Batches (/v1/messages/batches, the
real anthropic client)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import batch_cli
import pytest
from batch_cli import SECRET, judge, similarities, write_project

from pytest_textsim.engine.plan import UsageError
from pytest_textsim.testing.fake_anthropic import FakeAnthropic
from pytest_textsim.testing.fake_openai import FakeOpenAI

PROVIDERS = ("azure", "anthropic")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return write_project(tmp_path, monkeypatch, prices=True)


def serve(provider: str, monkeypatch: pytest.MonkeyPatch, **kwargs: Any) -> FakeOpenAI:
    return batch_cli.serve(provider, monkeypatch, openai_key=False, **kwargs)


def score(server: FakeOpenAI, *more: str) -> int:
    return batch_cli.score(server, *more, batch=False)


def asked(server: FakeOpenAI) -> list[dict[str, Any]]:
    """The requests of every batch the server was sent, as submitted."""
    return [line for kept in server.batches.batches.values() for line in kept["lines"]]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_batch_run_fills_the_cache_and_a_second_run_calls_nothing(
    provider: str, project: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    more = ["--judge-batch-deployment", "judge-m-batch"] if provider == "azure" else []
    with serve(provider, monkeypatch, batch_polls=1) as server:
        assert score(server, "--judge-batch", *more, "-o", "a.jsonl") == 0
        assert server.requests == 0 and server.batches.created == 1
        err = capsys.readouterr().err
        assert "submitted, 3 judgment(s)" in err
        assert "judge batch: 3 judgment(s) cached from 1 batch(es), 0 left" in err
        assert "at batch prices ($" in err and " ordinary)" in err
        if provider == "azure":
            # The Global Batch deployment named, each line a /chat/completions request.
            assert {(r["url"], r["body"]["model"]) for r in asked(server)} == {
                ("/chat/completions", "judge-m-batch")}  # fmt: skip
            assert "in_progress, 0 done, 0 failed of 3" in err
            assert "completed, 3 done, 0 failed of 3" in err
        else:
            # Anthropic's requests: the cache key's digest, the Messages params.
            (first, *_) = asked(server)
            assert len(first["custom_id"]) == 64 and first["params"]["model"] == "judge-m"
            assert first["params"]["system"] and first["params"]["max_tokens"] > 0
            assert "in_progress, 0 done, 0 failed of 3" in err
            assert "ended, 3 done, 0 failed of 3" in err
        # The judge's cache keys: a second run, batched or not, calls nothing.
        assert score(server, "--judge-batch", *more, "-o", "b.jsonl") == 0
        assert score(server, "-o", "c.jsonl") == 0
        assert server.requests == 0 and server.batches.created == 1
        # The ordinary path, with another cache, gives the same scores.
        monkeypatch.setenv("TEXTSIM_CACHE_DIR", str(project / "other-cache"))
        assert score(server, "-o", "d.jsonl") == 0
        assert server.requests == 3
        assert SECRET not in capsys.readouterr().err
    assert similarities(project / "a.jsonl") == similarities(project / "d.jsonl") == [2, 3, 2]
    assert similarities(project / "b.jsonl") == similarities(project / "c.jsonl") == [2, 3, 2]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_batch_left_running_is_resumed_without_a_second_submission(
    provider: str, project: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    with serve(provider, monkeypatch, batch_polls=1) as server:
        assert score(server, "--judge-batch", "--judge-batch-wait", "0", "-o", "a.jsonl") == 130
        (batch_id,) = server.batches.batches
        err = capsys.readouterr().err
        assert f"judge batch {batch_id} is still running; its id is kept" in err
        assert server.batches.created == 1 and server.requests == 0
        assert not (project / "a.jsonl").exists()
        assert score(server, "--judge-batch", "-o", "a.jsonl") == 0
        err = capsys.readouterr().err
        assert f"judge batch {batch_id}: resumed, 3 judgment(s)" in err
        assert "submitted" not in err
        assert server.batches.created == 1 and server.requests == 0
        # Collected: the cache no longer keeps it, and has its judgments.
        assert score(server, "--judge-batch", "-o", "a.jsonl") == 0
        assert "judge batch" not in capsys.readouterr().err
        assert server.batches.created == 1 and server.requests == 0
    assert similarities(project / "a.jsonl") == [2, 3, 2]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_failed_lines_are_reported_by_row_and_judged_the_ordinary_way(
    provider: str, project: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    with serve(provider, monkeypatch, batch_failures=frozenset({0})) as server:
        if provider == "anthropic":
            server.batches.expired = frozenset({2})  # type: ignore[attr-defined]
        assert score(server, "--judge-batch", "-o", "a.jsonl") == 0
        (batch_id,) = server.batches.batches
        err = capsys.readouterr().err
        if provider == "azure":
            assert server.requests == 1  # row 1, asked the ordinary way
            assert "completed, 2 done, 1 failed of 3" in err
            assert (f"rows.jsonl:1: similarity: batch {batch_id} line 1: failed (status 500): "
                    "the server had an error processing this request; judged the ordinary "
                    "way") in err  # fmt: skip
            assert "judge batch: 2 judgment(s) cached from 1 batch(es), 1 left" in err
        else:
            assert server.requests == 2  # rows 1 and 3
            assert "ended, 1 done, 2 failed of 3" in err
            assert (f"judge batch {batch_id}: ended: 1 expired; what it did not judge is "
                    "judged the ordinary way") in err  # fmt: skip
            assert (f"rows.jsonl:1: similarity: batch {batch_id} line 1: errored (api_error): "
                    "Internal server error; judged the ordinary way") in err  # fmt: skip
            assert (f"rows.jsonl:3: similarity: batch {batch_id} line 3: expired before it "
                    "was judged; judged the ordinary way") in err  # fmt: skip
            assert "judge batch: 1 judgment(s) cached from 1 batch(es), 2 left" in err
        assert SECRET not in err
    assert similarities(project / "a.jsonl") == [2, 3, 2]


def test_the_batch_deployment_is_azures_alone(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with FakeOpenAI(responder=judge) as server:
        assert score(server, "--judge-batch", "--judge-batch-deployment", "other",
                     "--judge-base-url", server.base_url) == 2  # fmt: skip
        assert ("--judge-batch-deployment names an Azure OpenAI Global Batch deployment; "
                "OpenAI's Batch API sends the batch to the judge's model (judge-m)"
                ) in capsys.readouterr().err  # fmt: skip
        assert server.batches.created == 0 and server.requests == 0


def test_a_provider_without_a_batch_api_is_refused_by_name() -> None:
    from pytest_textsim.cli.batch import batch_api

    provider = SimpleNamespace(title="Echo")  # a provider from outside, with no batch_api
    client = SimpleNamespace(provider=provider, spec=SimpleNamespace(provider="echo"))
    with pytest.raises(UsageError, match=r"--judge-batch needs a batch API, and the judge's "
                       r"provider \(echo: Echo\) has none"):  # fmt: skip
        batch_api(client, None)


def test_the_fake_servers_refuse_what_the_real_apis_refuse() -> None:
    import anthropic
    import openai

    with FakeOpenAI(responder=judge) as server:
        azure = openai.AzureOpenAI(azure_endpoint=server.url, api_version="2024-10-21",
                                   api_key="k", max_retries=0)  # fmt: skip
        line = {"custom_id": "a", "method": "POST", "url": "/v1/chat/completions", "body": {}}
        uploaded = azure.files.create(file=("in.jsonl", json.dumps(line).encode()),
                                      purpose="batch")  # fmt: skip
        with pytest.raises(openai.BadRequestError, match="url must be the batch's endpoint"):
            azure.batches.create(input_file_id=uploaded.id, endpoint="/chat/completions",
                                 completion_window="24h")  # fmt: skip
        plain = openai.OpenAI(base_url=server.url + "/openai", api_key="k", max_retries=0)
        with pytest.raises(openai.NotFoundError, match="api-version"):
            plain.batches.retrieve("batch_1")
    with FakeAnthropic(responder=judge) as server:
        claude = anthropic.Anthropic(base_url=server.base_url, api_key="k", max_retries=0)
        params = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "Hi"}]}
        for custom_id in ("a" * 65, "a.b"):
            with pytest.raises(anthropic.BadRequestError, match="does not match"):
                claude.messages.batches.create(
                    requests=[{"custom_id": custom_id, "params": params}])
        assert server.batches.created == 0


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_expected_completion_and_a_ctrl_c_while_the_results_stream(
    provider: str, project: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    from pytest_textsim.judge.cache.stores import Stores

    put, puts = Stores.put, []

    def interrupted_at_the_second(self: Stores, key: Any, judgment: Any) -> None:
        puts.append(key)
        if len(puts) == 2:
            raise KeyboardInterrupt  # Ctrl-C between two lines of the results
        put(self, key, judgment)

    with serve(provider, monkeypatch, batch_polls=2) as server:
        server.batches.progress = True  # one more request done at each poll
        monkeypatch.setattr(Stores, "put", interrupted_at_the_second)
        assert score(server, "--judge-batch", "-o", "a.jsonl") == 130
        (batch_id,) = server.batches.batches
        err = capsys.readouterr().err
        assert (f"judge batch {batch_id}: in_progress, 2 done, 0 failed of 3, less than a "
                "minute left") in err.splitlines()  # fmt: skip
        assert (f"textsim: interrupted; judge batch {batch_id} has ended; what was read of it "
                "is cached") in err  # fmt: skip
        monkeypatch.setattr(Stores, "put", put)
        assert score(server, "--judge-batch", "-o", "a.jsonl") == 0
        err = capsys.readouterr().err
        # The first result was cached as it was read: the rest come from the same batch.
        assert f"judge batch {batch_id}: resumed, 3 judgment(s)" in err
        assert "judge batch: 2 judgment(s) cached from 1 batch(es), 0 left" in err
        assert server.batches.created == 1 and server.requests == 0
    assert similarities(project / "a.jsonl") == [2, 3, 2]


def test_judge_batch_without_the_anthropic_package_says_what_to_install(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    with serve("anthropic", monkeypatch) as server:
        monkeypatch.setitem(sys.modules, "anthropic", None)  # import anthropic fails
        assert score(server, "--judge-batch") == 2
        assert ("--judge-batch: textsim_judge_provider is anthropic but the anthropic package "
                "is not installed: pip install 'pytest-textsim[anthropic]'"
                ) in capsys.readouterr().err  # fmt: skip
        assert server.batches.created == 0 and server.requests == 0
