"""Conversations as input: the OpenAI chat shape and azure's {"messages": [...]}, every bad
shape an error naming the message and what is wrong."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_textsim.conversation.messages import (
    ConversationError,
    ToolCall,
    conversation_problem,
    parse_conversation,
)
from pytest_textsim.records import text_lengths

CALL = {"id": "c1", "type": "function", "function": {"name": "book", "arguments": '{"n": 2}'}}
MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a travel agent."},
    {"role": "user", "content": "I am vegetarian. Book me a dinner."},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "c1", "content": "booked: Verde, 8 pm"},
    {"role": "assistant", "content": [{"type": "text", "text": "Done: Verde at 8 pm."}],
     "context": ["Verde is vegetarian."]},
]


def test_a_chat_transcript_is_parsed_with_its_turns_and_tool_calls() -> None:
    conversation = parse_conversation(MESSAGES)
    assert [m.role for m in conversation.messages] == [
        "system", "user", "assistant", "tool", "assistant"
    ]
    assert conversation.messages[2].tool_calls == (ToolCall("c1", "book", '{"n": 2}'),)
    assert conversation.messages[3].tool_call_id == "c1"
    # A tool-calling message is a step, not a turn: one turn, the last message.
    assert [m.index for m in conversation.turns] == [4]
    assert conversation.turns[0].content == "Done: Verde at 8 pm."
    assert conversation.turns[0].context == ["Verde is vegetarian."]
    assert conversation.system == "You are a travel agent."
    assert conversation.as_list()[2]["tool_calls"] == [CALL]


def test_azure_messages_dict_is_the_same_conversation() -> None:
    assert parse_conversation({"messages": MESSAGES}) == parse_conversation(MESSAGES)


def test_a_conversation_counts_its_messages_characters() -> None:
    expected = sum(len(m["content"]) for m in MESSAGES if isinstance(m["content"], str))
    assert text_lengths({"conversation": MESSAGES[:4]})["conversation"] == expected
    assert text_lengths({"conversation": {"messages": MESSAGES[:4]}})["conversation"] == expected


@pytest.mark.parametrize(
    ("value", "kind", "message"),
    [
        ("hello", TypeError, "'conversation' must be a list of chat messages"),
        ({"turns": []}, TypeError,
         "'conversation': a dict conversation needs a 'messages' list (its keys: 'turns')"),
        ([], ValueError, "'conversation' has no messages"),
        ({"messages": []}, ValueError, "'conversation['messages']' has no messages"),
        (["hi"], ConversationError, "conversation[0]: expected a message dict with 'role' and "
         "'content', got str"),
        ([{"role": "user", "content": "a"}, {"role": "bot", "content": "b"}], ConversationError,
         "conversation[1]: 'role' is 'bot', not one of system, user, assistant, tool"),
        ([{"content": "a"}], ConversationError, "conversation[0]: 'role' is missing"),
        ([{"role": "user", "text": "a"}], ConversationError,
         "conversation[0]: a user message needs 'content' (its keys: 'role', 'text')"),
        ([{"role": "user", "content": None}], ConversationError,
         "conversation[0]: 'content' is None; a user message needs text"),
        ([{"role": "user", "content": 3}], ConversationError,
         "conversation[0]: 'content' must be a string or a list of text parts, got int"),
        ([{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}],
         ConversationError, "conversation[0]: content[0] is not a text part"),
        ([{"role": "user", "content": "a\ud800"}], ConversationError,
         "conversation[0]: 'content' has a lone surrogate"),
        ([{"role": "user", "content": "a", "tool_calls": [CALL]}], ConversationError,
         "conversation[0]: a user message has 'tool_calls'"),
        ([{"role": "assistant", "content": None, "tool_calls": [{"id": "x"}]}],
         ConversationError, "conversation[0]: tool_calls[0] needs a 'function' with a 'name'"),
        ([{"role": "assistant", "content": "a", "tool_calls": "book"}], ConversationError,
         "conversation[0]: 'tool_calls' must be a list, got str"),
        ([{"role": "user", "content": "a"}, {"role": "tool", "content": "r"}], ConversationError,
         "conversation[1]: a tool message needs 'tool_call_id' (a string), got None"),
        ([{"role": "user", "content": "a"}, {"role": "tool", "tool_call_id": "zz",
                                             "content": "r"}],
         ConversationError, "conversation[1]: 'tool_call_id' 'zz' answers no earlier assistant"),
        ([{"role": "assistant", "content": "a", "context": 5}], ConversationError,
         "conversation[0]: 'context' must be a string or a non-empty list of chunks"),
        ([{"role": "assistant", "content": "a", "context": [{"id": 1}]}], ConversationError,
         "conversation[0]: 'context' must be a string or a non-empty list of chunks"),
        ({"messages": [{"role": "user", "content": "a"}, 7]}, ConversationError,
         "conversation['messages'][1]: expected a message dict"),
    ],
)
def test_a_bad_shape_names_the_message_and_what_is_wrong(
    value: Any, kind: type, message: str
) -> None:
    with pytest.raises(kind) as caught:
        parse_conversation(value)
    assert str(caught.value).startswith(message)
    assert conversation_problem("conversation", value) == str(caught.value)


def test_a_good_conversation_has_no_problem() -> None:
    assert conversation_problem("conversation", MESSAGES) == ""


def test_a_helper_names_itself_and_the_bad_message_before_any_judge_call() -> None:
    import pytest_textsim

    with pytest.raises(ConversationError, match=r"^assert_knowledge_retained\(\): "
                       r"conversation\[0\]: 'role' is 'bot'"):  # fmt: skip
        pytest_textsim.assert_knowledge_retained([{"role": "bot", "content": "x"}])
    with pytest.raises(TypeError, match=r"^assert_in_role\(\): 'conversation' must be a list"):
        pytest_textsim.assert_in_role("hi")
    with pytest.raises(ConversationError, match=r"^assert_relevant\(\): conversation\[1\]: "
                       r"'content' must be a string"):  # fmt: skip
        pytest_textsim.assert_relevant(
            conversation=[{"role": "user", "content": "x"}, {"role": "assistant", "content": 7}]
        )
