"""textsim score --judge-batch: the run's judge cache misses through OpenAI's Batch API
(the fake server's files and batches, driven by the real openai client)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply
from pytest_textsim.testing.rag import RagJudge

SECRET = "sk-test-SECRET-batch"


def rows(count: int) -> list[dict[str, Any]]:
    return [
        {"id": f"r{k}", "answer": f"Item {k} ships in {k} days.", "truth": f"Item {k} ships.",
         "chunks": [f"Policy {k}: item {k} ships in {k} days.", "Unrelated."], "q": f"Q{k}?"}
        for k in range(count)
    ]  # fmt: skip


class Judge:
    """The RAG prompts from tables; similarity a score from the answer's item number."""

    def __init__(self) -> None:
        self.rag = RagJudge()

    def __call__(self, request: Received) -> Reply:
        if self.rag.prompt_of(request):
            return self.rag(request)
        said = str(request.messages[-1]["content"])
        return Reply.score(2 + sum(f"Item {k} " in said for k in (1, 3)))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("TEXTSIM_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "prices.toml").write_text('[models."judge-m"]\ninput = 1.0\noutput = 2.0\n')
    monkeypatch.setenv("TEXTSIM_PRICES", str(tmp_path / "prices.toml"))
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows(3)))
    return tmp_path


def arguments(server: FakeOpenAI, *more: str, rag: bool = False) -> list[str]:
    metrics = ["-m", "similarity", *(["-m", "faithfulness"] if rag else [])]
    return [
        "score", "rows.jsonl", *metrics, "--map", "response=answer",
        "--map", "ground_truth=truth", "--map", "context=chunks", "--map", "query=q",
        "--judge-model", "judge-m", "--judge-base-url", server.base_url, "--id-field", "id",
        "--no-progress", "--judge-batch-poll", "0.001", *more,
    ]  # fmt: skip


def score(server: FakeOpenAI, *more: str, rag: bool = False) -> int:
    from pytest_textsim.cli import main

    return main(arguments(server, *more, rag=rag))


def scores(path: Path) -> list[Any]:
    return [{k: v for k, v in json.loads(line).items() if k.startswith(("similarity", "faith"))}
            for line in path.read_text().splitlines()]  # fmt: skip


def test_a_batch_run_fills_the_cache_and_a_second_run_calls_nothing(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAI(responder=Judge(), batch_polls=2) as server:
        assert score(server, "--judge-batch", "-o", "a.jsonl", rag=True) == 0
        # The claims and similarity first, then the verdicts on the claims: 0 ordinary calls.
        assert server.requests == 0 and server.batches.created == 2
        err = capsys.readouterr().err
        assert "submitted, 6 judgment(s)" in err and "submitted, 3 judgment(s)" in err
        assert "in_progress, 0 done, 0 failed of 6" in err
        assert "completed, 6 done, 0 failed of 6" in err
        assert "judge batch: 9 judgment(s) cached from 2 batch(es), 0 left" in err
        assert "at batch prices ($" in err
        assert score(server, "--judge-batch", "-o", "b.jsonl", rag=True) == 0
        assert server.requests == 0 and server.batches.created == 2
        # The same scores as the ordinary path's, which makes the 9 calls itself.
        monkeypatch.setenv("TEXTSIM_CACHE_DIR", str(project / "other-cache"))
        assert score(server, "-o", "c.jsonl", rag=True) == 0
        assert server.requests == 9
    assert scores(project / "a.jsonl") == scores(project / "b.jsonl") == scores(
        project / "c.jsonl")  # fmt: skip
    assert [s["similarity"] for s in scores(project / "a.jsonl")] == [2, 3, 2]
    assert SECRET not in capsys.readouterr().err


def test_an_interrupted_batch_run_resumes_its_batch_without_submitting_again(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAI(responder=Judge(), batch_polls=1) as server:
        # Polling stops with the batch still running: as a run killed after submitting.
        assert score(server, "--judge-batch", "--judge-batch-wait", "0", "-o", "a.jsonl") == 130
        err = capsys.readouterr().err
        assert "judge batch batch_2 is still running; its id is kept" in err
        assert server.batches.created == 1 and server.requests == 0
        assert not (project / "a.jsonl").exists()
        assert score(server, "--judge-batch", "-o", "a.jsonl") == 0
        err = capsys.readouterr().err
        assert "judge batch batch_2: resumed, 3 judgment(s)" in err
        assert "submitted" not in err
        assert server.batches.created == 1 and server.requests == 0
        # Collected: the cache no longer keeps it.
        assert score(server, "--judge-batch", "-o", "a.jsonl") == 0
        assert server.batches.created == 1 and server.batches.retrieved == 2
        assert server.requests == 0


def test_a_failed_or_unreadable_batch_line_is_reported_by_row_and_judged_the_ordinary_way(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    judge, first = Judge(), set()

    def once_unreadable(request: Received) -> Reply:
        said = str(request.messages[-1]["content"])
        if "Item 2 " in said and not first:
            first.add(said)
            return Reply(content="I cannot say.")
        return judge(request)

    with FakeOpenAI(responder=once_unreadable, batch_failures=frozenset({0})) as server:
        assert score(server, "--judge-batch", "-o", "a.jsonl") == 0
        assert server.requests == 2  # rows 1 and 3, asked the ordinary way
        err = capsys.readouterr().err
        assert "completed, 2 done, 1 failed of 3" in err
        assert ("rows.jsonl:1: similarity: batch batch_2 line 1: failed (status 500): the "
                "server had an error processing this request; judged the ordinary way") in err
        assert "rows.jsonl:3: similarity: batch batch_2 line 2: no usable " in err
        assert "judge batch: 1 judgment(s) cached from 1 batch(es), 2 left" in err
    assert [s["similarity"] for s in scores(project / "a.jsonl")] == [2, 3, 2]


def test_judge_batch_refuses_a_run_without_a_cache_to_fill(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEXTSIM_CACHE", "off")
    with FakeOpenAI(responder=Judge()) as server:
        assert score(server, "--judge-batch") == 2
        assert ("textsim: error: --judge-batch keeps its results in the judge cache, which is "
                "off (cache mode from TEXTSIM_CACHE in the environment): set the judge cache "
                "mode to once (--cache once, TEXTSIM_CACHE=once, or textsim_cache = once in the "
                "ini file)\n") in capsys.readouterr().err  # fmt: skip
        assert server.batches.created == 0 and server.requests == 0


def test_the_fake_server_keeps_files_and_answers_a_batch_line_by_line() -> None:
    import openai

    with FakeOpenAI(responder=lambda request: Reply.score(5), batch_polls=1,
                    batch_failures=frozenset({1})) as server:  # fmt: skip
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        body = {"model": "m", "messages": [{"role": "user", "content": "Hi."}]}
        data = "".join(json.dumps({"custom_id": c, "method": "POST", "body": body,
                                   "url": "/v1/chat/completions"}) + "\n"
                       for c in ("a", "b")).encode()  # fmt: skip
        uploaded = client.files.create(file=("in.jsonl", data), purpose="batch")
        assert client.files.content(uploaded.id).content == data
        batch = client.batches.create(input_file_id=uploaded.id, completion_window="24h",
                                      endpoint="/v1/chat/completions")  # fmt: skip
        assert batch.status == "validating"
        assert client.batches.retrieve(batch.id).status == "in_progress"
        done = client.batches.retrieve(batch.id)
        assert done.status == "completed" and done.request_counts is not None
        assert (done.request_counts.completed, done.request_counts.failed) == (1, 1)
        assert done.output_file_id and done.error_file_id
        output = client.files.content(done.output_file_id).text
        (out,) = [json.loads(t) for t in output.splitlines()]
        reply = out["response"]["body"]["choices"][0]["message"]["content"]
        assert out["custom_id"] == "a" and reply == Reply.score(5).content
        errors = client.files.content(done.error_file_id).text
        (error,) = [json.loads(t) for t in errors.splitlines()]
        assert error["custom_id"] == "b" and error["response"]["status_code"] == 500
        with pytest.raises(openai.NotFoundError):
            client.batches.retrieve("batch_none")
        with pytest.raises(openai.BadRequestError):
            client.files.create(file=("in.jsonl", data), purpose="fine-tune")
        assert server.requests == 0 and server.batches.created == 1


def test_the_progress_line_gives_the_expected_completion_and_a_garbled_line_is_reported(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAI(responder=Judge(), batch_polls=2) as server:
        server.batches.progress = True  # one more line done at each poll
        server.batches.garbled = frozenset({1})  # row 2's output line, cut in half
        assert score(server, "--judge-batch", "-o", "a.jsonl") == 0
        assert server.batches.created == 1 and server.requests == 1  # row 2's, asked again
    lines = capsys.readouterr().err.splitlines()
    # The first poll with progress gives no rate; the next does (a fast one here).
    assert "judge batch batch_2: in_progress, 1 done, 0 failed of 3" in lines
    assert ("judge batch batch_2: in_progress, 2 done, 0 failed of 3, less than a minute "
            "left") in lines  # fmt: skip
    assert "judge batch batch_2: completed, 3 done, 0 failed of 3" in lines
    assert "judge batch batch_2 line 2: not a JSON object; skipped" in lines
    assert any(line.startswith("judge batch: 2 judgment(s) cached from 1 batch(es)")
               for line in lines)  # fmt: skip
    assert [s["similarity"] for s in scores(project / "a.jsonl")] == [2, 3, 2]


def test_ctrl_c_while_the_output_is_read_keeps_what_was_cached_and_resumes_the_rest(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_textsim.judge.cache.stores import Stores

    put, puts = Stores.put, []

    def interrupted_at_the_second(self: Stores, key: Any, judgment: Any) -> None:
        puts.append(key)
        if len(puts) == 2:
            raise KeyboardInterrupt  # Ctrl-C between two lines of the output file
        put(self, key, judgment)

    with FakeOpenAI(responder=Judge()) as server:
        monkeypatch.setattr(Stores, "put", interrupted_at_the_second)
        assert score(server, "--judge-batch", "-o", "a.jsonl") == 130
        err = capsys.readouterr().err
        assert ("textsim: interrupted; judge batch batch_2 has ended; what was read of it is "
                "cached; its id is kept in the judge cache: run the same command again to "
                "collect it") in err  # fmt: skip
        assert not (project / "a.jsonl").exists()
        monkeypatch.setattr(Stores, "put", put)
        assert score(server, "--judge-batch", "-o", "a.jsonl") == 0
        err = capsys.readouterr().err
        # The first line's judgment was kept: the rest come from the same batch.
        assert "judge batch batch_2: resumed, 3 judgment(s)" in err
        assert "judge batch: 2 judgment(s) cached from 1 batch(es), 0 left" in err
        assert server.batches.created == 1 and server.requests == 0
    assert [s["similarity"] for s in scores(project / "a.jsonl")] == [2, 3, 2]


def test_a_real_ctrl_c_while_polling_keeps_the_batch_and_the_next_run_submits_nothing(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import os
    import signal
    import subprocess
    import sys
    import threading

    with FakeOpenAI(responder=Judge(), batch_polls=10**9) as server:  # in progress for ever
        main = "import sys; from pytest_textsim.cli import main; sys.exit(main())"
        command = [sys.executable, "-c", main, *arguments(server, "--judge-batch", "-o", "a.jsonl")]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        said: list[str] = []
        polling = threading.Event()

        def read(stream: Any) -> None:
            for line in stream:
                said.append(line)
                if "in_progress" in line:
                    polling.set()

        with subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env) as proc:
            reader = threading.Thread(target=read, args=(proc.stderr,), daemon=True)
            reader.start()
            try:
                assert polling.wait(60), "".join(said)  # the batch is kept and polled
                proc.send_signal(signal.SIGINT)
                assert proc.wait(60) == 130
            finally:
                proc.kill()
            reader.join(10)
        err = "".join(said)
        assert "judge batch batch_2: submitted, 3 judgment(s)" in err
        assert ("textsim: interrupted; judge batch batch_2 goes on at the provider; its id "
                "is kept in the judge cache: run the same command again to collect it"
                ) in err  # fmt: skip
        assert "Traceback" not in err and SECRET not in err
        assert not (project / "a.jsonl").exists()
        assert server.batches.created == 1 and server.requests == 0
        server.batches.finish()
        # (A wait, so that a second submission, in progress for ever, fails the test.)
        assert score(server, "--judge-batch", "--judge-batch-wait", "10", "-o", "a.jsonl") == 0
        err = capsys.readouterr().err
        assert "judge batch batch_2: resumed, 3 judgment(s)" in err
        assert "judge batch: 3 judgment(s) cached from 1 batch(es), 0 left" in err
        # No second batch, and the scores came from the cache the batch filled.
        assert server.batches.created == 1 and server.requests == 0
    assert [s["similarity"] for s in scores(project / "a.jsonl")] == [2, 3, 2]
