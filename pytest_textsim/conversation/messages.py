"""A conversation as input: chat messages in OpenAI's format, parsed and checked.

A conversation is a list of messages in the OpenAI chat format, or
azure-ai-evaluation's ``{"messages": [...]}`` around that list::

    [{"role": "system", "content": "You are a travel agent."},
     {"role": "user", "content": "I am vegetarian. Book me a dinner."},
     {"role": "assistant", "content": None,
      "tool_calls": [{"id": "c1", "type": "function",
                      "function": {"name": "book", "arguments": "{}"}}]},
     {"role": "tool", "tool_call_id": "c1", "content": "booked: Verde, 8 pm"},
     {"role": "assistant", "content": "Done: Verde, a vegetarian place, at 8 pm."}]

Roles are ``system``, ``user``, ``assistant`` (its ``content`` may be ``None``
when it calls tools) and ``tool`` (answering an earlier ``tool_calls`` id);
``content`` is a string or a list of text parts (``{"type": "text", "text":
...}``). A message may carry the ``context`` its turn was grounded on (a string
or a list of chunks). Anything else is an error naming the message by its index
and what is wrong with it: ``conversation[3]: 'role' is 'bot', not one of
system, user, assistant, tool``.

An *assistant turn* is an assistant message with text: what the conversation
metrics judge, numbered from 1. An assistant message that only calls tools is a
step of the turn after it, shown to the judge, never judged alone.

No pytest, no judge: it sits below both (the evaluators, the plugin and the
command line all read conversations through it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import TextsimError
from ..jsonl import surrogate_problem

ROLES = ("system", "user", "assistant", "tool")
_SHOWN_KEYS = 5


@dataclass(frozen=True)
class ToolCall:
    """One tool call of an assistant message: its id, function name and arguments (text)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Message:
    """One message: its ``index`` in the conversation (from 0), role and text."""

    index: int
    role: str
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    #: The context the turn was grounded on, as given (a string or a list of chunks).
    context: Any = None


@dataclass(frozen=True)
class Conversation:
    """A checked conversation: its messages in order (see the module)."""

    messages: tuple[Message, ...]

    @property
    def turns(self) -> tuple[Message, ...]:
        """The assistant turns (assistant messages with text), in order: turn k is
        ``turns[k - 1]``."""
        return tuple(m for m in self.messages if m.role == "assistant" and m.content.strip())

    @property
    def system(self) -> str:
        """The system messages' text, joined ("" when there is none)."""
        return "\n\n".join(m.content for m in self.messages if m.role == "system").strip()

    def as_list(self) -> list[dict[str, Any]]:
        """The messages as JSON-ready dicts in the OpenAI shape (a report keeps them)."""
        out = []
        for m in self.messages:
            one: dict[str, Any] = {"role": m.role, "content": m.content}
            if m.tool_calls:
                one["tool_calls"] = [
                    {"id": c.id, "type": "function",
                     "function": {"name": c.name, "arguments": c.arguments}}
                    for c in m.tool_calls
                ]  # fmt: skip
            for key in ("tool_call_id", "name", "context"):
                if getattr(m, key) is not None:
                    one[key] = getattr(m, key)
            out.append(one)
        return out


class ConversationError(TextsimError, ValueError):
    """A message of the wrong shape, named by its index in the conversation."""


def _kind(value: object) -> str:
    return "None" if value is None else type(value).__name__


def _content(where: str, message: Mapping[str, Any], role: str) -> str:
    if "content" not in message:
        if role == "assistant" and message.get("tool_calls"):
            return ""
        keys = ", ".join(repr(k) for k in list(message)[:_SHOWN_KEYS])
        raise ConversationError(f"{where}: a {role} message needs 'content' (its keys: {keys})")
    content = message["content"]
    if content is None:
        if role == "assistant" and message.get("tool_calls"):
            return ""
        raise ConversationError(f"{where}: 'content' is None; a {role} message needs text")
    if isinstance(content, list):
        parts = []
        for k, part in enumerate(content):
            if not (isinstance(part, Mapping) and part.get("type") == "text"
                    and isinstance(part.get("text"), str)):  # fmt: skip
                raise ConversationError(
                    f"{where}: content[{k}] is not a text part "
                    '({"type": "text", "text": "..."}); only text is judged'
                )
            parts.append(part["text"])
        content = "\n".join(parts)
    if not isinstance(content, str):
        raise ConversationError(
            f"{where}: 'content' must be a string or a list of text parts, got {_kind(content)}"
        )
    problem = surrogate_problem(content)
    if problem:
        raise ConversationError(f"{where}: 'content' has {problem}")
    return content


def _tool_calls(where: str, value: object) -> tuple[ToolCall, ...]:
    if not isinstance(value, (list, tuple)):
        raise ConversationError(f"{where}: 'tool_calls' must be a list, got {_kind(value)}")
    calls = []
    for k, call in enumerate(value):
        at = f"{where}: tool_calls[{k}]"
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            raise ConversationError(f"{at} needs a 'function' with a 'name'")
        arguments = function.get("arguments", "")
        if not isinstance(arguments, str):  # some clients keep them parsed
            arguments = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
        ident = call.get("id")
        if ident is not None and not isinstance(ident, str):
            raise ConversationError(f"{at}: 'id' must be a string, got {_kind(ident)}")
        calls.append(ToolCall(ident or "", function["name"], arguments))
    return tuple(calls)


def _context(where: str, value: object) -> Any:
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and value and all(
        isinstance(c, str) or (isinstance(c, Mapping) and isinstance(c.get("text"), str))
        for c in value
    ):
        return list(value)
    raise ConversationError(
        f"{where}: 'context' must be a string or a non-empty list of chunks "
        f"(strings or dicts with 'text'), got {_kind(value)}"
    )


def _message(name: str, index: int, item: object, called: set[str]) -> Message:
    where = f"{name}[{index}]"
    if not isinstance(item, Mapping):
        raise ConversationError(
            f"{where}: expected a message dict with 'role' and 'content', got {_kind(item)}"
        )
    role = item.get("role")
    if role not in ROLES:
        shown = "missing" if "role" not in item else repr(role)
        raise ConversationError(f"{where}: 'role' is {shown}, not one of {', '.join(ROLES)}")
    content = _content(where, item, role)
    calls: tuple[ToolCall, ...] = ()
    if item.get("tool_calls") is not None:
        if role != "assistant":
            raise ConversationError(f"{where}: a {role} message has 'tool_calls'")
        calls = _tool_calls(where, item["tool_calls"])
        called.update(c.id for c in calls if c.id)
    ident = item.get("tool_call_id")
    if role == "tool":
        if not isinstance(ident, str):
            raise ConversationError(
                f"{where}: a tool message needs 'tool_call_id' (a string), got {_kind(ident)}"
            )
        if ident not in called:
            raise ConversationError(
                f"{where}: 'tool_call_id' {ident!r} answers no earlier assistant tool call"
            )
    speaker = item.get("name")
    if speaker is not None and not isinstance(speaker, str):
        raise ConversationError(f"{where}: 'name' must be a string, got {_kind(speaker)}")
    context = item.get("context")
    return Message(
        index, role, content, calls, ident if role == "tool" else None, speaker,
        None if context is None else _context(where, context),
    )  # fmt: skip


def parse_conversation(value: object, name: str = "conversation") -> Conversation:
    """``value`` (a list of messages, or ``{"messages": [...]}``) as a :class:`Conversation`.

    ``TypeError`` for a value that is no conversation at all, ``ValueError`` for a
    message of the wrong shape, naming it: ``conversation[2]: ...``.
    """
    messages = value
    if isinstance(value, Mapping):
        if "messages" not in value:
            keys = ", ".join(repr(k) for k in list(value)[:_SHOWN_KEYS]) or "none"
            raise TypeError(
                f"'{name}': a dict conversation needs a 'messages' list (its keys: {keys})"
            )
        messages, name = value["messages"], f"{name}['messages']"
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise TypeError(
            f"'{name}' must be a list of chat messages (or {{\"messages\": [...]}}), "
            f"got {_kind(messages)}"
        )
    if not messages:
        raise ValueError(f"'{name}' has no messages")
    called: set[str] = set()
    parsed = tuple(_message(name, k, item, called) for k, item in enumerate(messages))
    return Conversation(parsed)


def conversation_problem(name: str, value: object) -> str:
    """Why ``value`` is not a conversation ("" when it is): :func:`parse_conversation`'s
    message, for the paths that report problems rather than raise them."""
    try:
        parse_conversation(value, name)
    except (TypeError, ValueError) as exc:
        return str(exc)
    return ""
