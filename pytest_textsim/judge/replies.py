"""Reading a judge reply's body: every wrong shape one error that names it."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..errors import TextsimError


class MalformedReply(TextsimError):
    """A 200 reply that is not a chat completion; the message names its shape."""


def shape(value: Any) -> str:
    from ..jsonl import json_type

    shown = json_type(value)
    return shown if len(shown) <= 40 else shown[:37] + "..."


def read_completion(body: bytes) -> tuple[str, int, int, str, dict[str, str]]:
    """``(text, tokens_in, tokens_out, finish_reason, served)`` from a chat completion's
    body; ``served`` is ``{"served_model": ..., "fingerprint": ...}``: the reply's
    ``model`` and ``system_fingerprint`` ("" when absent or not a string).

    Checked field by field rather than trusted: a proxy, a broken server or a
    hostile one can send anything, and each kind of wrong body must be one
    :class:`MalformedReply` naming what was wrong, not an ``AttributeError``
    from deep inside. Non-finite numbers and nesting deeper than JSON
    decoders allow count as malformed.
    """
    try:
        data = json.loads(body.decode("utf-8"), parse_constant=no_constant)
    except UnicodeDecodeError:
        raise MalformedReply("the body is not UTF-8") from None
    except RecursionError:
        raise MalformedReply("the body is JSON nested too deeply") from None
    except ValueError:
        raise MalformedReply("the body is not JSON") from None
    if not isinstance(data, dict):
        raise MalformedReply(f"the body is {shape(data)}, not a JSON object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        what = "missing" if "choices" not in data else (
            "an empty array" if choices == [] else shape(choices))  # fmt: skip
        raise MalformedReply(f"'choices' is {what}, not an array of choices")
    first = choices[0]
    if not isinstance(first, dict):
        raise MalformedReply(f"choices[0] is {shape(first)}, not an object")
    message = first.get("message")
    if not isinstance(message, dict):
        what = "missing" if "message" not in first else shape(message)
        raise MalformedReply(f"choices[0].message is {what}, not an object")
    content = message.get("content")
    if content is None:
        content = ""  # a refusal or a tool call: parsed as an empty reply
    if not isinstance(content, str):
        raise MalformedReply(f"choices[0].message.content is {shape(content)}, not a string")
    finish = first.get("finish_reason")
    if finish is not None and not isinstance(finish, str):
        raise MalformedReply(f"choices[0].finish_reason is {shape(finish)}, not a string")
    counts = token_counts(data, ("prompt_tokens", "completion_tokens"))
    served = {
        "served_model": label(data.get("model")),
        "fingerprint": label(data.get("system_fingerprint")),
    }
    return content, counts[0], counts[1], finish or "", served


def label(value: Any) -> str:
    """A short text the reply names itself by: what served it is a note beside the
    score, so a missing or odd value is "" rather than a failed judgment."""
    return value[:_LABEL_CHARS] if isinstance(value, str) else ""


_LABEL_CHARS = 200


def read_logprobs(body: bytes) -> list[Any]:
    """The ``choices[0].logprobs.content`` entries of a chat completion's body, or ``[]``.

    Read after :func:`read_completion` accepted the body. Missing or odd
    log-probabilities are not an error: G-Eval scoring then falls back to the
    judge's integer. Entries that are not objects are left out.
    """
    try:
        data = json.loads(body.decode("utf-8"), parse_constant=no_constant)
        content = data["choices"][0]["logprobs"]["content"]
    except (ValueError, RecursionError, LookupError, TypeError):
        return []
    if not isinstance(content, list):
        return []
    return [entry for entry in content if isinstance(entry, dict)]


def no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def token_counts(data: dict[str, Any], names: tuple[str, str]) -> tuple[int, int]:
    """The reply's ``usage`` counts ``names`` (tokens in, tokens out; 0 when absent),
    or :class:`MalformedReply` naming the field that is not a whole number."""
    usage = data.get("usage")
    if usage is not None and not isinstance(usage, dict):
        raise MalformedReply(f"'usage' is {shape(usage)}, not an object")
    counts = []
    for name in names:
        value = (usage or {}).get(name)
        if value is None:
            value = 0
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise MalformedReply(f"usage.{name} is {shape(value)}, not a whole number >= 0")
        counts.append(value)
    return counts[0], counts[1]


class ObjectEnd:
    """Watches a reply's text as it streams in and says when its first JSON object
    is complete: its braces balanced, those inside strings not counted."""

    def __init__(self) -> None:
        self.depth, self.quoted, self.escaped = 0, False, False

    def feed(self, piece: str) -> bool:
        """Whether the first object ends in ``piece`` (the text that came after the
        pieces fed before)."""
        for char in piece:
            if self.quoted:
                if self.escaped:
                    self.escaped = False
                elif char == "\\":
                    self.escaped = True
                elif char == '"':
                    self.quoted = False
            elif char == '"':
                self.quoted = self.depth > 0  # a quote in prose before the object is prose
            elif char == "{":
                self.depth += 1
            elif char == "}" and self.depth:
                self.depth -= 1
                if not self.depth:
                    return True
        return False


def read_stream(
    lines: Iterable[str],
) -> tuple[tuple[str, int, int, str, dict[str, str]], list[Any]]:
    """``(completion, logprobs)`` as :func:`read_completion` and :func:`read_logprobs`
    give them, from the server-sent events of a streamed chat completion (``lines``).

    Reading stops at ``data: [DONE]``, at the end of the lines, or at the first
    event with more text after the text's first JSON object is complete
    (:class:`ObjectEnd`): that text is left out and the rest not read, so a
    model that rambles on after its verdict is not waited for, while one that
    stops there is read to its end (its finish reason, its usage). The token
    counts are those of a ``usage`` the events carried, else 0 (a reply left
    early); ``finish_reason`` is "" when the reply was left before its last event.
    Each event is checked as :func:`read_completion` checks a body.
    """
    pieces: list[str] = []
    logprobs: list[Any] = []
    counts, finish, served = (0, 0), "", {"served_model": "", "fingerprint": ""}
    end, ended = ObjectEnd(), False
    for line in lines:
        if not line.startswith("data:"):
            continue  # event names, comments (": ping"), blank separators
        data = line[5:].strip()
        if data == "[DONE]":
            break
        try:
            chunk = json.loads(data, parse_constant=no_constant)
        except RecursionError:
            raise MalformedReply("an event is JSON nested too deeply") from None
        except ValueError:
            raise MalformedReply("an event is not JSON") from None
        if not isinstance(chunk, dict):
            raise MalformedReply(f"an event is {shape(chunk)}, not a JSON object")
        if "error" in chunk:
            raise MalformedReply("the stream ended in an error event")
        if chunk.get("usage") is not None:
            counts = token_counts(chunk, ("prompt_tokens", "completion_tokens"))
        served = {
            "served_model": label(chunk.get("model")) or served["served_model"],
            "fingerprint": label(chunk.get("system_fingerprint")) or served["fingerprint"],
        }
        choices = chunk.get("choices")
        if choices is None or choices == []:
            continue  # the usage chunk
        if not isinstance(choices, list) or not isinstance(choices[0], dict):
            what = shape(choices if not isinstance(choices, list) else choices[0])
            raise MalformedReply(f"an event's 'choices' holds {what}, not choices")
        first = choices[0]
        delta = first.get("delta")
        if delta is None:
            delta = {}
        if not isinstance(delta, dict):
            raise MalformedReply(f"an event's choices[0].delta is {shape(delta)}, not an object")
        content = delta.get("content")
        if content is not None and not isinstance(content, str):
            raise MalformedReply(
                f"an event's choices[0].delta.content is {shape(content)}, not a string"
            )
        reason = first.get("finish_reason")
        if reason is not None and not isinstance(reason, str):
            raise MalformedReply(f"an event's choices[0].finish_reason is {shape(reason)}")
        finish = reason or finish
        tokens = first.get("logprobs")
        if isinstance(tokens, dict) and isinstance(tokens.get("content"), list):
            logprobs.extend(t for t in tokens["content"] if isinstance(t, dict))
        if content:
            if ended:
                break  # more words after the verdict: left unread
            pieces.append(content)
            ended = end.feed(content)
    return ("".join(pieces), counts[0], counts[1], finish, served), logprobs
