"""textsim_replay in pytest: the app's own calls recorded once, then replayed offline.

Every inner suite drives the real ``openai`` client against the local server
(``pytest_textsim.testing.fake_openai``); a replayed run points the app at a
second server on another port that answers differently and must get no request.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import xdist_forks

from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply

KEY = "sk-app-SECRET-replay-7e4b9a"

APP = """
import asyncio, json, os
import openai
import pytest

def client(**options):
    return openai.OpenAI(base_url=os.environ["APP_BASE_URL"], api_key=os.environ["APP_KEY"],
                         max_retries=options.pop("max_retries", 0), **options)

def ask(text, llm=None):
    reply = (llm or client()).chat.completions.create(
        model="app-model", messages=[{"role": "user", "content": text}])
    return reply.choices[0].message.content
"""

MARKED_ASK = APP + "\n@pytest.mark.textsim_replay\ndef test_x():\n    ask('hi')\n"

SUITE = APP + """
pytestmark = pytest.mark.textsim_replay

def test_sync():
    assert ask("capital of France?") == "answer to: capital of France?"

def test_async():
    async def run():
        async with openai.AsyncOpenAI(base_url=os.environ["APP_BASE_URL"],
                                      api_key=os.environ["APP_KEY"], max_retries=0) as llm:
            reply = await llm.chat.completions.create(
                model="app-model", messages=[{"role": "user", "content": "async?"}])
            return reply.choices[0].message.content
    assert asyncio.run(run()) == "answer to: async?"

def test_stream():
    stream = client().chat.completions.create(
        model="app-model", messages=[{"role": "user", "content": "stream it"}], stream=True)
    pieces = [c.choices[0].delta.content for c in stream
              if c.choices and c.choices[0].delta.content]
    assert pieces == ["answer", " to:", " stream", " it"]

def test_tool_call():
    reply = client().chat.completions.create(
        model="app-model", messages=[{"role": "user", "content": "weather in Paris?"}],
        tools=[{"type": "function", "function": {"name": "get_weather", "parameters": {}}}])
    call = reply.choices[0].message.tool_calls[0]
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Paris"}

def test_rate_limited_then_answered():
    assert ask("busy?", client(max_retries=1)) == "answer to: busy?"

def test_same_question_twice():
    assert [ask("again?"), ask("again?")] == ["answer to: again? (1)", "answer to: again? (2)"]
"""


def answering() -> Any:
    """The recording server: answers name the prompt; a few prompts get special replies."""
    asked: dict[str, int] = {}

    def reply(request: Received) -> Reply:
        prompt = request.messages[-1]["content"]
        asked[prompt] = asked.get(prompt, 0) + 1
        if prompt == "weather in Paris?":
            return Reply.tool_call("get_weather", {"city": "Paris"})
        if prompt == "busy?" and asked[prompt] == 1:
            return Reply.error(429, "rate limited", headers={"retry-after-ms": "10"})
        if prompt == "again?":
            return Reply(content=f"answer to: again? ({asked[prompt]})")
        return Reply(content=f"answer to: {prompt}")

    return reply


@pytest.fixture
def recording_server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(responder=answering()) as server:
        yield server


@pytest.fixture
def offline_server() -> Iterator[FakeOpenAI]:
    """Stands for the network being gone: any request it gets is a failure of replay."""
    with FakeOpenAI(responder=lambda request: Reply(content="LIVE CALL")) as server:
        yield server


@pytest.fixture
def app_env(monkeypatch: pytest.MonkeyPatch, recording_server: FakeOpenAI) -> pytest.MonkeyPatch:
    monkeypatch.setenv("APP_BASE_URL", recording_server.base_url)
    monkeypatch.setenv("APP_KEY", KEY)
    return monkeypatch


def cassettes(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Each cassette's test id and interactions."""
    found = {}
    for path in sorted(folder.glob("*.jsonl")):
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        assert len(path.name.encode()) <= 120
        found[lines[0]["test"]] = lines[1:]
    return found


@pytest.mark.xdist_matters  # replay counters summed over the workers
def test_recorded_once_then_replayed_offline(
    pytester: pytest.Pytester,
    run_plugin: Any,
    app_env: pytest.MonkeyPatch,
    recording_server: FakeOpenAI,
    offline_server: FakeOpenAI,
) -> None:
    pytester.makepyfile(test_app=SUITE)
    result = run_plugin()
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(
        ["*- textsim replay -*", "0 calls replayed, 8 recorded (6 tests, 6 cassettes written to "
         "tests/replays; mode once)"]
    )
    assert recording_server.requests == 8  # 429 + retry, and the question asked twice
    recorded = cassettes(pytester.path / "tests" / "replays")
    assert sorted(recorded) == sorted(f"test_app.py::test_{name}" for name in (
        "sync", "async", "stream", "tool_call", "rate_limited_then_answered", "same_question_twice"
    ))  # fmt: skip
    retried = recorded["test_app.py::test_rate_limited_then_answered"]
    assert [i["response"]["status"] for i in retried] == [429, 200]
    assert "chunks" in recorded["test_app.py::test_stream"][0]["response"]

    before = {p: p.read_bytes() for p in (pytester.path / "tests" / "replays").iterdir()}
    app_env.setenv("APP_BASE_URL", offline_server.base_url)
    result = run_plugin("--textsim-replay=none", "--textsim-json=report.json")
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(
        ["8 calls replayed, 0 recorded (6 tests, 0 cassettes written to tests/replays; "
         "mode none from --textsim-replay on the command line)"]
    )
    assert offline_server.requests == 0
    counters = json.loads((pytester.path / "report.json").read_text())["header"]["counters"]
    assert {k: v for k, v in counters.items() if k.startswith("replay_")} == {
        "replay_tests": 6, "replay_replayed": 8, "replay_recorded": 0,
        "replay_cassettes_written": 0,
    }  # fmt: skip
    after = {p: p.read_bytes() for p in (pytester.path / "tests" / "replays").iterdir()}
    assert after == before  # a replay leaves the committed cassettes as they were


def test_changed_prompt_fails_in_none_and_is_recorded_in_once(
    pytester: pytest.Pytester,
    run_plugin: Any,
    app_env: pytest.MonkeyPatch,
    recording_server: FakeOpenAI,
) -> None:
    test = APP + """
@pytest.mark.textsim_replay
def test_answer():
    assert ask(os.environ.get("PROMPT", "capital of France?")).startswith("answer to")
"""
    pytester.makepyfile(test_app=test)
    run_plugin().assert_outcomes(passed=1)
    app_env.setenv("PROMPT", "capital of Spain?")
    result = run_plugin("--textsim-replay=none")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*textsim replay: no recording of POST http://127.0.0.1/v1/chat/completions for "
            "test_app.py::test_answer (replay mode none, cassette *test_app.py_test_answer-*"
            ".jsonl). The nearest recorded request to this URL differs in the body at: "
            "messages[[]0].content (name volatile fields in textsim_replay_ignore). Record it "
            "with --textsim-replay=once *",
        ]
    )
    assert "Traceback" not in result.stdout.str() and recording_server.requests == 1
    result = run_plugin()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["0 calls replayed, 1 recorded *"])
    (interactions,) = cassettes(pytester.path / "tests" / "replays").values()
    assert [i["request"]["json"]["messages"][0]["content"] for i in interactions] == [
        "capital of Spain?"
    ]


def test_volatile_fields_from_the_ini_file_and_the_marker(
    pytester: pytest.Pytester, app_env: pytest.MonkeyPatch, offline_server: FakeOpenAI
) -> None:
    test = APP + """
import time

def stamped(**extra):
    reply = client().chat.completions.create(
        model="app-model", messages=[{"role": "user", "content": "hi"}],
        extra_body={"metadata": {"sent_at": str(time.time()), **extra}})
    return reply.choices[0].message.content

@pytest.mark.textsim_replay
def test_ini_ignore():
    assert stamped() == "answer to: hi"

@pytest.mark.textsim_replay(ignore=["nonce"])
def test_marker_ignore():
    assert stamped(nonce=str(time.time_ns())) == "answer to: hi"
"""
    pytester.makepyfile(test_app=test)
    pytester.makeini("[pytest]\ntextsim_replay_ignore =\n    sent_at\n")
    pytester.runpytest_inprocess("-p", "no:xdist").assert_outcomes(passed=2)
    app_env.setenv("APP_BASE_URL", offline_server.base_url)
    result = pytester.runpytest_inprocess("-p", "no:xdist", "--textsim-replay=none")
    result.assert_outcomes(passed=2)
    pytester.makeini("[pytest]\n")
    result = pytester.runpytest_inprocess("-p", "no:xdist", "--textsim-replay=none")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*differs in the body at: metadata.sent_at*"])
    assert offline_server.requests == 0


def test_which_tests_replay(
    pytester: pytest.Pytester, app_env: pytest.MonkeyPatch, recording_server: FakeOpenAI
) -> None:
    test = APP + """
def test_unmarked():
    ask("one")

@pytest.mark.textsim_replay
class TestMarked:
    def test_in_class(self):
        ask("two")

    @pytest.mark.textsim_replay(enabled=False)
    def test_opted_out(self):
        ask("three")
"""
    pytester.makepyfile(test_app=test)
    folder = pytester.path / "tests" / "replays"
    pytester.runpytest_inprocess("-p", "no:xdist").assert_outcomes(passed=3)
    assert sorted(cassettes(folder)) == ["test_app.py::TestMarked::test_in_class"]
    pytester.makeini("[pytest]\ntextsim_replay = all\n")
    result = pytester.runpytest_inprocess("-p", "no:xdist", "--textsim-replay=rewrite")
    result.assert_outcomes(passed=3)
    assert sorted(cassettes(folder)) == [
        "test_app.py::TestMarked::test_in_class",
        "test_app.py::test_unmarked",
    ]
    recording_server_requests = recording_server.requests
    pytester.makeini("[pytest]\ntextsim_replay = all none\n")
    result = pytester.runpytest_inprocess("-p", "no:xdist")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        ["2 calls replayed, 0 recorded (2 tests, 0 cassettes written to tests/replays; "
         "mode none from textsim_replay in tox.ini)"]
    )  # fmt: skip
    assert recording_server.requests == recording_server_requests + 1  # the opted-out test
    result = pytester.runpytest_inprocess("-p", "no:xdist", "--textsim-replay=off")
    result.assert_outcomes(passed=3)
    assert "textsim replay" not in result.stdout.str()


def test_bad_settings_and_markers_name_their_source(
    pytester: pytest.Pytester, app_env: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_app=APP + """
@pytest.mark.textsim_replay("once")
def test_positional():
    pass

@pytest.mark.textsim_replay(mode="none")
def test_unknown():
    pass

@pytest.mark.textsim_replay(ignore=5)
def test_bad_ignore():
    pass
""")
    result = pytester.runpytest_inprocess("-p", "no:xdist")
    result.assert_outcomes(errors=3)
    result.stdout.fnmatch_lines(
        [
            "*test_app.py::test_positional: @pytest.mark.textsim_replay takes keyword arguments"
            " only*",
            "*test_app.py::test_unknown: @pytest.mark.textsim_replay got unknown option(s) mode;*",
            "*test_app.py::test_bad_ignore: @pytest.mark.textsim_replay(ignore=...) expects "
            "field names, got 5",
        ]
    )
    pytester.makeini("[pytest]\ntextsim_replay = sometimes\n")
    result = pytester.runpytest_inprocess("-p", "no:xdist")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*textsim_replay in tox.ini: expected a mode (once, none, rewrite, off)*'sometimes'*"]
    )
    pytester.makeini("[pytest]\n")
    result = pytester.runpytest_inprocess("-p", "no:xdist", "--textsim-replay-redact=(")
    result.stderr.fnmatch_lines(
        ["*--textsim-replay-redact on the command line: bad regular expression '('*"]
    )


def test_a_bad_cassette_fails_its_test_naming_file_and_line(
    pytester: pytest.Pytester, app_env: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_app=MARKED_ASK)
    pytester.runpytest_inprocess("-p", "no:xdist").assert_outcomes(passed=1)
    (path,) = (pytester.path / "tests" / "replays").iterdir()
    path.write_text(path.read_text() + "{not json\n")
    result = pytester.runpytest_inprocess("-p", "no:xdist")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*test_app.py::test_x: textsim replay: *{path.name}:3: *"])


def test_connections_outside_httpx_fail_in_none_mode(
    pytester: pytest.Pytester, app_env: pytest.MonkeyPatch, recording_server: FakeOpenAI
) -> None:
    pytester.makepyfile(test_app=APP + """
import urllib.request

@pytest.mark.textsim_replay
def test_urllib():
    try:
        urllib.request.urlopen(os.environ["APP_BASE_URL"] + "/models")
    except Exception:
        pass  # the app swallows errors: the test must fail all the same
""")
    result = pytester.runpytest_inprocess("-p", "no:xdist", "--textsim-replay=none")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [f"*test_app.py::test_urllib opened a connection to 127.0.0.1:{recording_server.port} "
         "outside httpx*"]
    )  # fmt: skip
    assert recording_server.requests == 0


@pytest.mark.xdist_matters  # the hub makes the judge calls
def test_judge_calls_stay_out_of_cassettes_and_no_key_is_written(
    pytester: pytest.Pytester,
    run_plugin: Any,
    app_env: pytest.MonkeyPatch,
    recording_server: FakeOpenAI,
) -> None:
    judge = FakeOpenAI(responder=lambda request: Reply.score(5, "same")).start()
    try:
        app_env.setenv("OPENAI_API_KEY", "sk-judge-SECRET-1f2e3d4c")
        pytester.makeini(
            "[pytest]\ntextsim_replay = all\ntextsim_judge_model = judge\n"
            f"textsim_judge_base_url = {judge.base_url}\ntextsim_cache = off\n"
            "textsim_replay_redact =\n    org-[a-z0-9]{8}\n"
            "textsim_replay_credentials =\n    x-tenant\n"
        )
        pytester.makepyfile(test_app=APP + """
def test_app_and_judge(similarity):
    llm = client(default_headers={"api-key": os.environ["APP_KEY"], "x-org": "org-abcd1234",
                                  "x-tenant": "tnt-1"})
    answer = ask("Paris?", llm)
    assert similarity(answer, "answer to: Paris?")["similarity"] == 5
""")
        run_plugin().assert_outcomes(passed=1)
        assert judge.requests == 1 and recording_server.requests == 1
        ((test_id, interactions),) = cassettes(pytester.path / "tests" / "replays").items()
        assert len(interactions) == 1 and interactions[0]["request"]["url"].startswith(
            recording_server.base_url
        )
        # The judge is called again (no judge cache here); the app call replays.
        run_plugin("--textsim-replay=none").assert_outcomes(passed=1)
        assert judge.requests == 2 and recording_server.requests == 1
    finally:
        judge.stop()
    text = "".join(p.read_text() for p in (pytester.path / "tests" / "replays").iterdir())
    for secret in (KEY, "sk-judge-SECRET-1f2e3d4c", "org-abcd1234", "tnt-1"):
        assert secret not in text
    assert text.count("<redacted>") >= 4  # authorization, api-key, x-org, x-tenant


@pytest.mark.xdist_matters  # the hub makes the embedding calls
def test_embedding_calls_stay_out_of_cassettes(
    pytester: pytest.Pytester,
    run_plugin: Any,
    app_env: pytest.MonkeyPatch,
    recording_server: FakeOpenAI,
) -> None:
    embedder = FakeOpenAI().start()
    try:
        app_env.setenv("OPENAI_API_KEY", "sk-embed-SECRET-9a8b7c6d")
        pytester.makeini(
            "[pytest]\ntextsim_replay = all\ntextsim_embedding_model = embed\n"
            f"textsim_embedding_base_url = {embedder.base_url}\ntextsim_cache = off\n"
        )
        pytester.makepyfile(test_app=APP + """
def test_app_and_embeddings(semantic_similarity):
    answer = ask("Paris?")
    assert semantic_similarity(answer, answer)["semantic_similarity"] > 0.999
""")
        run_plugin().assert_outcomes(passed=1)
        assert embedder.requests == 1 and recording_server.requests == 1
        ((_, interactions),) = cassettes(pytester.path / "tests" / "replays").items()
        assert [i["request"]["url"] for i in interactions] == [
            f"{recording_server.base_url}/chat/completions"
        ]
        # The embeddings are asked for again (no cache here); the app call replays.
        run_plugin("--textsim-replay=none").assert_outcomes(passed=1)
        assert embedder.requests == 2 and recording_server.requests == 1
    finally:
        embedder.stop()
    text = "".join(p.read_text() for p in (pytester.path / "tests" / "replays").iterdir())
    assert "sk-embed-SECRET-9a8b7c6d" not in text and "/embeddings" not in text


def test_replay_cli_stats_and_prune(
    pytester: pytest.Pytester,
    app_env: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from pytest_textsim.cli import main

    pytester.makepyfile(test_app=SUITE)
    pytester.runpytest_inprocess("-p", "no:xdist").assert_outcomes(passed=6)
    app_env.chdir(pytester.path)
    # prune's pytest --collect-only runs in a process of its own; here that
    # process is a fork of the suite's warm one (xdist_forks.py), which has
    # imported pytest, its plugins and this package, and it gets the same
    # arguments, environment, folder and pipes as prune's own command would.
    commands: list[list[str]] = []
    run = subprocess.run

    def forked(command: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
        commands.append(command)
        assert command[:3] == [sys.executable, "-m", "pytest"]
        return run(xdist_forks.python_command(*command[1:]), **options)

    app_env.setattr(subprocess, "run", forked)
    capsys.readouterr()
    assert main(["replay", "stats"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"replay cassettes in {pytester.path / 'tests' / 'replays'}: "
                          "6 cassettes, 8 calls (1 streamed, 0 partial)")  # fmt: skip
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[2:]}
    assert rows["test_app.py::test_same_question_twice"][:3] == ["2", "0", "0"]
    assert rows["test_app.py::test_stream"][:3] == ["1", "1", "0"]
    assert main(["replay", "stats", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert (len(figures["cassettes"]), figures["calls"], figures["streams"]) == (6, 8, 1)

    source = (pytester.path / "test_app.py").read_text()
    cut = source.index("def test_tool_call")
    rest = source[source.index("def test_rate") :]
    (pytester.path / "test_app.py").write_text(source[:cut] + rest)
    assert main(["replay", "prune", "--dry-run"]) == 0
    assert "would remove 1 cassette of tests that no longer exist" in capsys.readouterr().out
    assert len(list((pytester.path / "tests" / "replays").iterdir())) == 6
    assert main(["replay", "prune"]) == 0
    out = capsys.readouterr().out
    assert "(test_app.py::test_tool_call)" in out and "kept 5 (5 tests collected)" in out
    assert len(list((pytester.path / "tests" / "replays").iterdir())) == 5
    # A collection that leaves out tests of a file it collects is refused: the
    # cassettes of the deselected tests would look like those of tests gone.
    assert main(["replay", "prune", "--", "-k", "test_stream"]) == 2
    err = capsys.readouterr().err
    assert "(-k test_stream: 4 tests deselected)" in err and "nothing removed" in err
    assert len(list((pytester.path / "tests" / "replays").iterdir())) == 5
    # Collecting part of the suite keeps the cassettes of the files left out;
    # a file that is gone loses its cassettes.
    pytester.makepyfile(test_other="def test_other():\n    pass\n")
    assert main(["replay", "prune", "--", "test_other.py"]) == 0
    assert "removed 0 cassettes" in capsys.readouterr().out
    (pytester.path / "test_app.py").rename(pytester.path / "test_renamed.py")
    assert main(["replay", "prune", "--dry-run", "--", "test_other.py"]) == 0
    assert "would remove 5 cassettes" in capsys.readouterr().out
    (pytester.path / "test_renamed.py").rename(pytester.path / "test_app.py")
    # A collection error removes nothing.
    (pytester.path / "test_app.py").write_text("def broken(:\n")
    assert main(["replay", "prune"]) == 1
    assert "nothing removed" in capsys.readouterr().err
    assert len(list((pytester.path / "tests" / "replays").iterdir())) == 5
    assert len(commands) == 6


def test_a_cassette_folder_under_a_file_is_a_usage_error(
    pytester: pytest.Pytester, app_env: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_app=MARKED_ASK)
    (pytester.path / "blocker").write_text("a file where a folder should be")
    result = pytester.runpytest_inprocess("-p", "no:xdist", "-o", "textsim_replay_dir=blocker/r")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*textsim_replay_dir from -o on the command line: */blocker/r cannot be a folder for "
         "replay cassettes (*/blocker is a file); name another with textsim_replay_dir"]
    )  # fmt: skip


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc (Linux)")
def test_a_cassette_that_cannot_be_written_is_a_warning(
    pytester: pytest.Pytester, app_env: pytest.MonkeyPatch
) -> None:
    # Even root cannot make a folder in /proc: the write fails after the test passed.
    pytester.makepyfile(test_app=MARKED_ASK)
    result = pytester.runpytest_inprocess(
        "-p", "no:xdist", "-o", "textsim_replay_dir=/proc/textsim-replays"
    )
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(
        ["*test_app.py::test_x: textsim replay could not write /proc/textsim-replays/"
         "test_app.py_test_x-*.jsonl: *; its calls were made live and are not recorded"]
    )  # fmt: skip


REPEATING_CONFTEST = """
import pytest
from _pytest.runner import runtestprotocol

# Runs a test body three times inside its one test item, as textsim's repeat=N does.
@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    for run in range(3):
        reports = runtestprotocol(item, nextitem=item.parent if run < 2 else nextitem, log=False)
    for report in reports:
        item.ihook.pytest_runtest_logreport(report=report)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True
"""


def test_each_repeated_run_replays_its_own_answer_in_order(
    pytester: pytest.Pytester,
    app_env: pytest.MonkeyPatch,
    recording_server: FakeOpenAI,
    offline_server: FakeOpenAI,
) -> None:
    pytester.makeconftest(REPEATING_CONFTEST)
    pytester.makepyfile(test_app=APP + """
ANSWERS = []

@pytest.mark.textsim_replay
def test_repeated():
    ANSWERS.append(ask("again?"))
    assert ANSWERS[-1] == f"answer to: again? ({len(ANSWERS)})"
""")
    pytester.runpytest_inprocess("-p", "no:xdist").assert_outcomes(passed=1)
    assert recording_server.requests == 3
    ((_, interactions),) = cassettes(pytester.path / "tests" / "replays").items()
    assert len(interactions) == 3
    app_env.setenv("APP_BASE_URL", offline_server.base_url)
    result = pytester.runpytest_inprocess("-p", "no:xdist", "--textsim-replay=none")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["3 calls replayed, 0 recorded (1 test, 0 cassettes written*"])
    assert offline_server.requests == 0
