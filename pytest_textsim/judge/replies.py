"""Reading a judge reply's body: every wrong shape one error that names it."""

from __future__ import annotations

import json
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
