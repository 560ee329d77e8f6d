"""A hostile or broken judge server: every attempt is bounded, every bad reply a JudgeError.

The cases are those of an adversarial audit, against the real local server
(pytest_textsim/testing/fake_openai.py) and the real openai client.
"""

from __future__ import annotations

import base64
import json
import logging
import socket
import struct
import time
from pathlib import Path

import pytest

from pytest_textsim.judge.cache import JudgeCache
from pytest_textsim.judge.client import JudgeClient, JudgeError, JudgeOptions
from pytest_textsim.judge.judgment import Judgment
from pytest_textsim.judge.prompts import SIMILARITY, ReplyParseError, parse_reply
from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply

SECRET = "sk-test-SECRET-5f1c9e0a"
INPUTS = {"query": None, "response": "Paris.", "ground_truth": "The capital is Paris."}


def client_for(url: str, **options: object) -> JudgeClient:
    opts = JudgeOptions(**{"timeout": 1.0, "max_attempts": 1, "backoff": 0.01, **options})  # type: ignore[arg-type]
    return JudgeClient({"model": "judge", "base_url": url, "api_key": SECRET}, opts)


# -- the wall-clock bound of one attempt -------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        # The audit: one byte every 0.5 s of a chunked body ran for 100 s and more.
        Reply(endless=0.2),
        # A body trickled a byte at a time: 85 s for one attempt with timeout 1.
        Reply(trickle=0.1),
        # Headers a byte at a time.
        Reply(slow_headers=0.1),
    ],
    ids=["endless-chunks", "trickled-body", "slow-headers"],
)
def test_one_attempt_ends_within_the_timeout(fake_openai: FakeOpenAI, reply: Reply) -> None:
    fake_openai.script(reply)
    client = client_for(fake_openai.base_url, timeout=1.0)
    client._connect()  # the first call imports openai: not part of the attempt
    started = time.monotonic()
    with pytest.raises(JudgeError, match=r"last: no complete reply within 1s") as info:
        client.judge(SIMILARITY, INPUTS)
    took = time.monotonic() - started
    assert 0.9 <= took < 1.6, took
    assert "Raise textsim_judge_timeout" in str(info.value)


def test_judgment_bound_is_attempts_times_timeout_plus_waits(fake_openai: FakeOpenAI) -> None:
    """Attempts against endless chunks: a timed-out attempt is tried once more, so 2 x
    timeout plus the backoff, no more, though 3 attempts are allowed (a 5xx would get
    them); the endpoint's later calls that time out get one attempt."""
    fake_openai.script(*[Reply(endless=0.1)] * 3)
    client = client_for(fake_openai.base_url, timeout=0.5, max_attempts=3, max_backoff=0.05)
    client._connect()
    started = time.monotonic()
    with pytest.raises(JudgeError, match="failed after 2 attempt"):
        client.judge(SIMILARITY, INPUTS)
    took = time.monotonic() - started
    assert 0.9 <= took < 1.7, took
    assert fake_openai.requests == 2
    started = time.monotonic()
    with pytest.raises(JudgeError, match="failed after 1 attempt"):
        client.judge(SIMILARITY, {**INPUTS, "response": "another"})
    assert 0.45 <= time.monotonic() - started < 1.0
    assert fake_openai.requests == 3


def test_a_server_that_never_accepts_is_bounded() -> None:
    """A socket that listens but never accepts: connect succeeds, no answer ever comes."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        started = time.monotonic()
        with pytest.raises(JudgeError, match="no complete reply within 0.5s"):
            client_for(url, timeout=0.5).judge(SIMILARITY, INPUTS)
        assert time.monotonic() - started < 1.2


def test_a_slow_but_steady_reply_within_the_timeout_still_counts(fake_openai: FakeOpenAI) -> None:
    body = json.dumps({"choices": [{"message": {"content": '{"score": 5}'}}]}).encode()
    fake_openai.script(Reply(body=body, trickle=0.005))
    assert client_for(fake_openai.base_url, timeout=5.0).judge(SIMILARITY, INPUTS).score == 5


def redirecting(server: FakeOpenAI, delay: float = 0.0) -> None:
    """Make ``server`` answer every chat request with a 307 back to the same path."""
    to = server.base_url + "/chat/completions"
    server.responder = lambda request: Reply(
        status=307, body=b"", headers={"Location": to}, delay=delay
    )


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_redirects_share_the_attempts_deadline(
    fake_openai: FakeOpenAI, asynchronous: bool
) -> None:
    """The audit: each redirect started a new deadline; with timeout 2 and no
    retries one attempt took 39 s (20 slow redirects) and said "connection failed"."""
    import asyncio

    client = client_for(fake_openai.base_url, timeout=1.0)

    def judge(response: str) -> Judgment:
        if asynchronous:
            return asyncio.run(client.ajudge(SIMILARITY, {**INPUTS, "response": response}))
        return client.judge(SIMILARITY, {**INPUTS, "response": response})

    fake_openai.script(Reply.score(4))  # the first call sets up the client, unbounded
    assert judge("Lyon.").score == 4
    redirecting(fake_openai, delay=0.4)
    started = time.monotonic()
    with pytest.raises(JudgeError) as info:
        judge("Paris.")
    took = time.monotonic() - started
    assert took < 3.0, took  # 1 s and the call's own work; each hop its own deadline: 8 s
    assert "last: no complete reply within 1s" in str(info.value)
    assert "connection failed" not in str(info.value)
    assert fake_openai.requests <= 1 + 4  # about 1 s / 0.4 s hops, not 21


def test_a_redirect_loop_is_named_as_one(fake_openai: FakeOpenAI) -> None:
    redirecting(fake_openai)
    client = client_for(fake_openai.base_url, timeout=5.0)
    with pytest.raises(JudgeError) as info:
        client.judge(SIMILARITY, INPUTS)
    message = str(info.value)
    assert "last: redirected again and again, never answered (a redirect loop; last to " in message
    assert f"{fake_openai.base_url}/chat/completions)" in message
    assert "connection failed" not in message and "up and reachable" not in message
    assert "Check that textsim_judge_base_url names an OpenAI" in message
    assert info.value.setting == "judge_base_url"
    # It answered: the endpoint is not marked down for the calls after it.
    fake_openai.responder = lambda request: Reply.score(3)
    assert client.judge(SIMILARITY, {**INPUTS, "response": "Lyon."}).score == 3


def test_a_redirect_within_the_deadline_is_followed(fake_openai: FakeOpenAI) -> None:
    to = fake_openai.base_url + "/chat/completions"
    fake_openai.script(Reply(status=307, body=b"", headers={"Location": to}), Reply.score(5))
    assert client_for(fake_openai.base_url).judge(SIMILARITY, INPUTS).score == 5
    assert fake_openai.requests == 2


# -- size -------------------------------------------------------------------------


def test_a_reply_over_the_size_limit_is_an_error_and_not_cached(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    big = Reply.score(4, reason="x" * 3000)
    fake_openai.script(big, big)
    cache = JudgeCache(tmp_path, "once")
    client = client_for(fake_openai.base_url, max_reply_bytes=2000, max_attempts=2)
    client.cache = cache
    with pytest.raises(JudgeError) as info:
        client.judge(SIMILARITY, INPUTS)
    assert (
        "malformed reply: the reply is larger than 2000 bytes (textsim_judge_max_reply_bytes)"
        in (str(info.value))
    )
    assert fake_openai.requests == 2  # retried like any malformed reply
    assert cache.stats()["entries"] == 0
    # Under the limit, the same server's reply is used and cached.
    fake_openai.script(Reply.score(4, reason="x" * 100))
    assert client.judge(SIMILARITY, INPUTS).score == 4
    assert cache.stats()["entries"] == 1


def test_a_chunked_reply_over_the_limit_is_cut_off(fake_openai: FakeOpenAI) -> None:
    """No Content-Length to refuse up front: the body is counted as it comes."""
    fake_openai.script(Reply(endless=0.0001))
    client = client_for(fake_openai.base_url, max_reply_bytes=500, timeout=5)
    started = time.monotonic()
    with pytest.raises(JudgeError, match="larger than 500 bytes"):
        client.judge(SIMILARITY, INPUTS)
    assert time.monotonic() - started < 4


def test_a_compressed_reply_is_not_inflated(fake_openai: FakeOpenAI) -> None:
    import gzip

    bomb = gzip.compress(b" " * 5_000_000)  # 5 MB of spaces in a few kB
    fake_openai.script(Reply(body=bomb, headers={"Content-Encoding": "gzip"}))
    with pytest.raises(JudgeError, match="malformed reply: the body is not"):
        client_for(fake_openai.base_url).judge(SIMILARITY, INPUTS)
    assert fake_openai.received[0].headers["accept-encoding"] == "identity"


# -- malformed replies: each a JudgeError naming the shape, retried, never cached ----

MALFORMED = [
    (Reply.score(float("inf")), "score is inf, not a finite number"),  # {"score": Infinity}
    (Reply(content='{"score": 1e999}'), "score is inf, not a finite number"),
    (Reply.completion(choices=[{"index": 0}]), "choices[0].message is missing, not an object"),
    (Reply.completion(choices="abc"), "'choices' is a string, not an array of choices"),
    (Reply.completion(choices=[]), "'choices' is an empty array"),
    (Reply.completion(choices=None), "'choices' is missing"),
    (Reply.completion(choices=[{"message": {"content": 5}}]),
     "choices[0].message.content is a number (5), not a string"),
    (Reply.completion(usage={"prompt_tokens": "many"}),
     "usage.prompt_tokens is a string, not a whole number >= 0"),
    (Reply.completion(usage=[1]), "'usage' is an array, not an object"),
    (Reply(body=b"[1, 2]"), "the body is an array, not a JSON object"),
    (Reply(body=b"\xff\xfe{}"), "the body is not UTF-8"),
    (Reply(body=b'{"choices": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
     "the body is JSON nested too deeply"),
    (Reply(body=b"<html>Bad gateway</html>"), "the body is not JSON"),
    (Reply(body=b'{"choices": NaN}'), "the body is not JSON"),
]  # fmt: skip


@pytest.mark.parametrize(("reply", "shape"), MALFORMED, ids=[s for _, s in MALFORMED])
def test_malformed_reply_is_a_judge_error_naming_its_shape(
    fake_openai: FakeOpenAI, tmp_path: Path, reply: Reply, shape: str
) -> None:
    fake_openai.script(reply, reply, reply, reply)
    client = client_for(fake_openai.base_url, max_attempts=2)
    client.cache = JudgeCache(tmp_path, "once")
    with pytest.raises(JudgeError) as info:
        client.judge(SIMILARITY, INPUTS)
    assert shape in str(info.value)
    assert type(info.value) is JudgeError
    assert client.cache.stats()["entries"] == 0


def test_a_malformed_reply_is_retried(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply.completion(choices="abc"), Reply.score(3))
    client = client_for(fake_openai.base_url, max_attempts=2)
    assert client.judge(SIMILARITY, INPUTS).score == 3
    assert client.stats.retries == 1


def test_error_body_of_odd_shape(fake_openai: FakeOpenAI) -> None:
    """A 500 whose body is {"error": {"error": "x"}} raised AttributeError."""
    fake_openai.script(Reply(status=500, body=b'{"error": {"error": "x"}}'))
    with pytest.raises(JudgeError, match=r"last: HTTP 500 \(x\)\. "):
        client_for(fake_openai.base_url).judge(SIMILARITY, INPUTS)
    fake_openai.script(Reply(status=500, body=b'{"error": "plain words"}'))
    with pytest.raises(JudgeError, match=r"last: HTTP 500 \(plain words\)"):
        client_for(fake_openai.base_url).judge(SIMILARITY, INPUTS)


def test_map_keeps_the_other_rows_after_a_malformed_reply(fake_openai: FakeOpenAI) -> None:
    from pytest_textsim.judge.evaluators import MapError, SimilarityEvaluator

    def answer(request: object) -> Reply:
        user = request.messages[-1]["content"]  # type: ignore[attr-defined]
        return Reply.completion(choices="abc") if "BAD" in user else Reply.score(5)

    fake_openai.responder = answer
    evaluator = SimilarityEvaluator(client_for(fake_openai.base_url, max_attempts=1))
    rows = [{"response": r, "ground_truth": "g"} for r in ("one", "BAD", "three")]
    with pytest.raises(MapError) as info:
        evaluator.map(rows)
    results = info.value.results
    assert results[0] is not None and results[2] is not None and results[1] is None
    assert "'choices' is a string" in str(info.value)


# -- secrets ----------------------------------------------------------------------


def test_basic_auth_token_echoed_by_the_server_is_scrubbed(
    fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    user_secret = "pw-URLSECRET-91ad"
    token = base64.b64encode(f"me:{user_secret}".encode()).decode()
    url = f"http://me:{user_secret}@127.0.0.1:{fake_openai.port}/v1"
    # The server echoes the Authorization header in its error message.
    fake_openai.script(*[Reply.error(503, f"bad header Basic {token}")] * 2)
    client = JudgeClient(
        {"model": "m", "base_url": url, "api_key": SECRET},
        JudgeOptions(timeout=2, max_attempts=2, backoff=0.01),
    )
    with pytest.raises(JudgeError) as info:
        client.judge(SIMILARITY, INPUTS)
    assert fake_openai.received[0].headers["authorization"] == f"Basic {token}"
    retry_lines = [r.getMessage() for r in caplog.records if r.name == "pytest_textsim.judge"]
    shown = str(info.value) + "\n".join(retry_lines)
    assert "bad header Basic ***" in str(info.value)
    assert token not in shown and user_secret not in shown


# -- options ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"concurrency": 0}, "JudgeOptions(concurrency=0): expected a whole number >= 1, got 0"),
        ({"max_attempts": 0}, "JudgeOptions(max_attempts=0): expected a whole number >= 1, got 0"),
        ({"timeout": -1}, "JudgeOptions(timeout=-1): expected seconds (a positive number), got -1"),
        ({"timeout": float("inf")}, "expected seconds (a positive number), got inf"),
        ({"backoff": -0.5}, "JudgeOptions(backoff=-0.5): expected seconds (0 or more), got -0.5"),
        ({"max_tokens": 2.5}, "JudgeOptions(max_tokens=2.5): expected a whole number, got 2.5"),
        ({"temperature": 3}, "expected a temperature from 0 to 2, got 3"),
        ({"max_reply_bytes": True}, "expected a whole number, got True"),
        ({"reasoning": "yes"}, "JudgeOptions(reasoning='yes'): expected true or false"),
    ],
)
def test_judge_options_are_validated(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as info:
        JudgeOptions(**options)  # type: ignore[arg-type]
    assert message in str(info.value)


# -- the reply parser: linear time on the audit's pathological replies --------------

PATHOLOGICAL = [
    "```" + " " * 100_000 + "x",  # the audit: quadratic in _FENCE
    "```json\n" + " " * 100_000 + "```",
    "{" * 100_000 + "}" * 100_000,  # nesting too deep for the decoder
    "{" * 1_000_000,
    "x" * 1_000_000,
    "score:" + " " * 500_000 + "x",
    "4" + " " * 500_000 + "x",
    "<score>" + " " * 500_000 + "x",
    "Reason:" + " " * 500_000,
    '{"score": ' + "9" * 5000 + "}",  # an integer too long to convert
    ("filler " * 150_000) + '{"score": 4}',
]


@pytest.mark.parametrize("reply", PATHOLOGICAL, ids=[f"case{i}" for i in range(len(PATHOLOGICAL))])
def test_parser_on_pathological_replies(reply: str) -> None:
    started = time.perf_counter()
    try:
        parse_reply(reply)
    except ReplyParseError:
        pass
    # The benchmark (benchmarks/bench_reply_parser.py) has the real figures; this
    # bound only catches a return of quadratic time (minutes at these sizes).
    assert time.perf_counter() - started < 2.0


def test_parser_still_reads_a_score_after_1mb_of_filler() -> None:
    assert parse_reply(("filler " * 150_000) + '{"score": 4, "reason": "ok"}') == (4, "ok")
    assert parse_reply("```json\n" + '{"score": 2}' + " " * 100_000 + "```") == (2, "")


def test_labels_are_read_at_the_ends_of_a_long_reply() -> None:
    filler = "lorem ipsum " * 20_000  # 240 KB
    assert parse_reply(filler + "Score: 4\nReason: fine.") == (4, "fine.")
    assert parse_reply("<score>2</score> " + filler) == (2, "")
    with pytest.raises(ReplyParseError, match="no score found"):
        parse_reply(filler + "Score: 4" + filler)  # a label lost in the middle


def test_a_lone_surrogate_given_to_the_client_is_refused_before_any_call(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    client = client_for(fake_openai.base_url)
    client.cache = JudgeCache(tmp_path, "once")
    with pytest.raises(ValueError, match="similarity: 'response' has a lone surrogate '.ud83d'"):
        client.judge(SIMILARITY, {"response": "Paris \ud83d", "ground_truth": "Paris."})
    assert fake_openai.requests == 0


def test_a_client_that_hangs_up_leaves_the_server_quiet(capfd: pytest.CaptureFixture[str]) -> None:
    """A client gone before its reply (a timeout) is routine for this server: no
    traceback of the broken pipe on stderr, and the server goes on answering."""
    with FakeOpenAI(latency=0.2) as server:
        host, port = server.base_url.split("//")[1].split("/")[0].split(":")
        for _ in range(3):
            with socket.create_connection((host, int(port))) as conn:
                # Linger 0: closing resets the connection, as a client killed mid-call.
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                body = json.dumps({"model": "judge", "messages": []}).encode()
                conn.sendall(
                    b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                    b"Content-Type: application/json\r\n"
                    + f"Content-Length: {len(body)}\r\n\r\n".encode() + body
                )
            time.sleep(0.4)  # the reply is written to a reset connection
        assert client_for(server.base_url).judge(SIMILARITY, INPUTS).score == 4
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Broken pipe" not in err and "reset" not in err, err



def test_a_body_past_its_deadline_ends_as_the_sdks_timeout() -> None:
    """Between two chunks of a body the deadline is checked above httpcore, where
    httpx no longer maps httpcore's errors: it must raise httpx's ReadTimeout, which
    the SDK turns into its timeout error ("no complete reply within 1s"). Raised as
    httpcore's, it escaped as "ReadTimeout: the attempt's time is up" (seen once,
    on a loaded machine, when a chunk came in just before the deadline)."""
    import threading

    import openai

    from pytest_textsim.judge import transport

    body = b'{"choices": []}' * 100
    reply = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)

        def serve() -> None:
            conn, _ = listener.accept()
            with conn:
                conn.recv(65536)
                conn.sendall(reply)  # headers and body in one write: read in one go
                conn.recv(1)  # until the client hangs up

        threading.Thread(target=serve, daemon=True).start()
        httpx, _ = transport.http_modules(openai.DefaultHttpxClient)
        sent = transport.deadline_transport(openai.DefaultHttpxClient, 5.0, 10**6, "/x")
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/x"
        response = sent.handle_request(httpx.Request("GET", url))
        # The body is in the client's buffer already: no socket read comes before the
        # check between chunks, which now finds the attempt's time up.
        token = transport._DEADLINE.set(time.monotonic() - 0.01)
        try:
            with pytest.raises(httpx.TimeoutException, match="the attempt's time is up"):
                b"".join(response.stream)
        finally:
            transport._DEADLINE.reset(token)
            response.close()
            sent.close()
