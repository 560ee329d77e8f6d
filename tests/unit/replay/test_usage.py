"""Token counts read from a model API's reply."""

from __future__ import annotations

import json

import pytest

from pytest_textsim.calls.parse import read
from pytest_textsim.replay.cassette import Interaction


def _chat(usage: object) -> Interaction:
    reply = {"choices": [{"message": {"role": "assistant", "content": "hi"}}], "usage": usage}
    return Interaction(
        method="POST",
        url="http://127.0.0.1:1/v1/chat/completions",
        request_headers={},
        request_body=json.dumps({"model": "m", "messages": []}).encode(),
        status=200,
        response_headers={"content-type": "application/json"},
        chunks=[json.dumps(reply).encode()],
    )


@pytest.mark.parametrize(
    ("usage", "tokens"),
    [
        ({"prompt_tokens": 7, "completion_tokens": 3}, (7, 3)),
        # A negative count would take tokens off the app's total and hide another
        # call's from a limit: it counts as none, as an unreadable one does.
        ({"prompt_tokens": -999_999, "completion_tokens": -1}, (0, 0)),
        ({"prompt_tokens": True, "completion_tokens": "3"}, (0, 0)),
    ],
)
def test_token_counts_are_what_the_reply_says_or_none(
    usage: object, tokens: tuple[int, int]
) -> None:
    call = read(_chat(usage))
    assert call is not None and call.usage is not None
    assert (call.usage.input, call.usage.output) == tokens
