"""A scripted RAG judge for the fake servers: claims and verdicts from tables.

:class:`RagJudge` is a responder for :class:`~.fake_openai.FakeOpenAI`: it reads
which RAG prompt a request asks (the JSON Schema's name, or the system prompt
of a server without structured output), the text, claims or chunks it numbers,
and answers the way a judge would, from its tables:

    judge = RagJudge(
        claims={"Refunds take 30 days. Shipping is free.": ["Refunds take 30 days.",
                                                           "Shipping is free."]},
        verdicts={"Refunds take 30 days.": ("supported", 1),
                  "Shipping is free.": "not_found"},
    )
    server = FakeOpenAI(responder=judge)

A claim or chunk missing from ``verdicts`` (or whose verdict, not keyed by a
prompt, is not one of the prompt's words) gets the prompt's negative verdict
(``not_found``, ``irrelevant``, ``not_attributed``, ``not_in_...``); a text
missing from ``claims`` has one claim, itself. ``verdicts`` may also be keyed
``(prompt, text)`` where the same text needs another verdict from another
prompt (``("answer_correctness", "Shipping is free.")``); the ``chunks`` prompt's
lists are answered as ``context_relevance`` (``on_topic``) and
``context_precision`` (``useful``) would be.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Union

from .replies import Received, Reply

Verdict = Union[str, tuple[str, Union[int, str]]]

# The system prompt's first words, for a server that takes no JSON Schema.
_OPENINGS = (
    ("You break a TEXT", "claims"),
    ("You break two texts", "claims_pair"),
    ("You check each numbered CLAIM", "faithfulness"),
    ("Each numbered CLAIM comes from the reference", "context_recall"),
    ("A retriever returned the numbered chunks of a CONTEXT, in order, for the QUERY. Give each",
     "chunks"),
    ("A retriever returned the numbered chunks of a CONTEXT, in order", "context_precision"),
    ("A retriever returned the numbered chunks", "context_relevance"),
    ("Compare the numbered CLAIMS", "answer_correctness"),
)
_NEGATIVE = MappingProxyType(
    {
        "faithfulness": "not_found",
        "context_recall": "not_attributed",
        "context_precision": "irrelevant",
        "context_relevance": "irrelevant",
        "response_claims": "not_in_ground_truth",
        "ground_truth_claims": "not_in_response",
    }
)
_WORDS = MappingProxyType(
    {
        "faithfulness": ("supported", "contradicted", "not_found"),
        "context_recall": ("attributed", "not_attributed"),
        "context_precision": ("relevant", "irrelevant"),
        "context_relevance": ("relevant", "irrelevant"),
        "response_claims": ("in_ground_truth", "not_in_ground_truth"),
        "ground_truth_claims": ("in_response", "not_in_response"),
    }
)
_CHUNK = re.compile(r"<chunk (\d+)>\n(.*?)\n</chunk \1>", re.S)


def _block(text: str, name: str) -> str | None:
    found = re.search(rf"<{name}>\n(.*?)\n</{name}>", text, re.S)
    return None if found is None else found.group(1)


def _numbered(text: str | None) -> list[str]:
    if text is None:
        return []
    return [line.split(". ", 1)[1] for line in text.split("\n") if ". " in line]


@dataclass
class RagJudge:
    """Answers the RAG prompts from ``claims`` (text -> its claims) and ``verdicts``
    (claim or chunk text -> verdict, or (verdict, chunk number) for a claim a chunk
    supports; the chunk may be given by its text, for a verdict that holds only
where that chunk is among the request's). ``asked`` counts the requests per prompt."""

    claims: Mapping[str, list[str]] = field(default_factory=dict)
    verdicts: Mapping[Any, Verdict] = field(default_factory=dict)
    asked: dict[str, int] = field(default_factory=dict)

    def prompt_of(self, request: Received) -> str:
        return request.prompt(_OPENINGS)

    def __call__(self, request: Received) -> Reply:
        prompt = self.prompt_of(request)
        self.asked[prompt] = self.asked.get(prompt, 0) + 1
        user = str(request.messages[-1]["content"])
        if prompt == "claims":
            text = _block(user, "text") or ""
            return Reply(content=json.dumps({"claims": list(self.claims.get(text, [text]))}))
        if prompt == "claims_pair":
            return Reply(content=json.dumps({
                key: list(self.claims.get(text, [text]))
                for key, text in (("response_claims", _block(user, "response") or ""),
                                  ("ground_truth_claims", _block(user, "ground_truth") or ""))
            }))  # fmt: skip
        if prompt == "chunks":
            # Each list as the prompt of its own would have it (the verdicts a table keys
            # by "context_relevance" or "context_precision" hold for the list).
            chunks = [text for _, text in _CHUNK.findall(user)]
            return Reply(content=json.dumps({
                "on_topic": self._list("context_relevance", "context_relevance", "chunk", chunks),
                "useful": self._list("context_precision", "context_precision", "chunk", chunks),
            }))  # fmt: skip
        if prompt == "answer_correctness":
            return Reply(content=json.dumps({
                "response_claims": self._list(prompt, "response_claims", "claim",
                                              _numbered(_block(user, "claims"))),
                "ground_truth_claims": self._list(prompt, "ground_truth_claims", "claim",
                                                  _numbered(_block(user, "ground_truth_claims"))),
            }))  # fmt: skip
        if prompt in ("context_precision", "context_relevance"):
            chunks = [text for _, text in _CHUNK.findall(user)]
            return Reply(
                content=json.dumps({"verdicts": self._list(prompt, prompt, "chunk", chunks)})
            )
        if prompt in ("faithfulness", "context_recall"):
            claims = _numbered(_block(user, "claims"))
            chunks = [text for _, text in _CHUNK.findall(user)]
            return Reply(content=json.dumps(
                {"verdicts": self._list(prompt, prompt, "claim", claims, chunks)}
            ))  # fmt: skip
        return Reply(content="not a RAG prompt")

    def _list(
        self, prompt: str, kind: str, item: str, texts: list[str], chunks: list[str] | None = None
    ) -> list[dict[str, Any]]:
        out = []
        for index, text in enumerate(texts, 1):
            found = self.verdicts.get((prompt, text), self.verdicts.get(text, _NEGATIVE[kind]))
            word, chunk = (found, None) if isinstance(found, str) else found
            if (prompt, text) not in self.verdicts and word not in _WORDS[kind]:
                word, chunk = _NEGATIVE[kind], None  # a verdict of another prompt's
            if isinstance(chunk, str):  # the chunk by its text: its number in this request
                number = (chunks or []).index(chunk) + 1 if chunk in (chunks or []) else None
                word, chunk = (word, number) if number else (_NEGATIVE[kind], None)
            entry: dict[str, Any] = {item: index, "verdict": word}
            if prompt in ("faithfulness", "context_recall"):
                entry["chunk"] = (
                    chunk if chunk is not None or word in ("not_found", "not_attributed") else 1
                )
            entry["reason"] = f"scripted {word}"
            out.append(entry)
        return out
