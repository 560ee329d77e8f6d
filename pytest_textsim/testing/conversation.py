"""A scripted conversation judge for the fake servers: verdicts on turns from tables.

:class:`ConversationJudge` is a responder for :class:`~.fake_openai.FakeOpenAI`:
it reads which conversation prompt a request asks (the JSON Schema's name, or
the system prompt of a server without structured output) and the messages of
its transcript, and answers the way a judge would, from its tables::

    judge = ConversationJudge(
        verdicts={("knowledge_retention", "Which diet do you follow?"): "forgets"},
        intentions={"Book a table and a taxi.": [("book a table", "satisfied"),
                                                 ("book a taxi", "unsatisfied")]},
    )
    server = FakeOpenAI(responder=judge)

``verdicts`` maps ``(prompt, assistant turn text)`` (or the text alone, for
every prompt whose words hold the verdict) to a verdict; a turn missing from it
gets the prompt's positive verdict (``retains``, ``in_role``, ``relevant``).
``intentions`` maps a user message's text to its intentions with their
verdicts; a user message missing from it states one intention, itself,
``satisfied``. ``asked`` counts the requests per prompt; ``otherwise`` answers
every other prompt (a 1-5 metric's, scoring a turn).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .replies import Received, Reply

_OPENINGS = (
    ("You check each numbered assistant TURN of a CONVERSATION for lapses", "knowledge_retention"),
    ("The assistant of a CONVERSATION was given the ROLE", "role_adherence"),
    ("Check each numbered assistant TURN of a CONVERSATION for relevance", "turn_relevancy"),
    ("List what the user of a CONVERSATION came for", "conversation_completeness"),
)
_WORDS = MappingProxyType({
    "knowledge_retention": ("retains", "forgets"),
    "role_adherence": ("in_role", "out_of_role"),
    "turn_relevancy": ("relevant", "irrelevant"),
})  # fmt: skip
_MESSAGE = re.compile(
    r'<message index="(\d+)" role="(\w+)"(?: turn="(\d+)")?[^>]*>\n(.*?)\n</message>', re.S
)


@dataclass
class ConversationJudge:
    """Answers the conversation prompts from ``verdicts`` and ``intentions`` (see the module)."""

    verdicts: Mapping[Any, str] = field(default_factory=dict)
    intentions: Mapping[str, list[tuple[str, str]]] = field(default_factory=dict)
    asked: dict[str, int] = field(default_factory=dict)
    otherwise: Callable[[Received], Reply] | None = None

    def prompt_of(self, request: Received) -> str:
        return request.prompt(_OPENINGS)

    def __call__(self, request: Received) -> Reply:
        prompt = self.prompt_of(request)
        self.asked[prompt] = self.asked.get(prompt, 0) + 1
        user = str(request.messages[-1]["content"])
        messages = [
            (int(index), role, turn, text.replace("&lt;", "<"))
            for index, role, turn, text in _MESSAGE.findall(user)
        ]
        if prompt == "conversation_completeness":
            rows = []
            for index, role, _, text in messages:
                if role != "user":
                    continue
                for intention, verdict in self.intentions.get(text, [(text, "satisfied")]):
                    rows.append({"intention": intention, "message": index, "verdict": verdict,
                                 "reason": f"scripted {verdict}"})  # fmt: skip
            return Reply(content=json.dumps({"intentions": rows}))
        if prompt not in _WORDS:
            if self.otherwise is not None:
                return self.otherwise(request)
            return Reply(content="not a conversation prompt")
        words = _WORDS[prompt]
        verdicts = []
        for _, _, turn, text in messages:
            if not turn:
                continue
            found = self.verdicts.get((prompt, text), self.verdicts.get(text, words[0]))
            verdict = found if found in words else words[0]
            verdicts.append({"turn": int(turn), "verdict": verdict,
                             "reason": f"scripted {verdict}"})  # fmt: skip
        return Reply(content=json.dumps({"verdicts": verdicts}))
