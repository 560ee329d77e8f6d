"""Single-answer judge metrics over a conversation: each assistant turn scored, then aggregated.

An evaluator that mixes in :class:`TurnByTurn` (coherence, fluency, relevance,
groundedness, a rubric, faithfulness, context precision and context relevance)
takes ``conversation=`` in place of its texts: each assistant turn is scored as
one answer, all turns at once, with

- ``response``: the turn's text;
- ``query``: the last user message before it;
- ``context``: the turn's own ``context``, else the results of the tools called
  since the last user message (a turn with neither, for a metric that needs a
  context, is an error naming it). Faithfulness reads the turn's own context and
  every earlier system, user and tool message, each a chunk whose ``id`` names
  it (``conversation[3]``): a claim the user or a tool stated earlier is
  supported, and each claim of ``<metric>_turns`` names its ``source``.

The score is the mean of the turns' scores, as azure-ai-evaluation aggregates a
conversation; ``<metric>_min`` is the lowest, ``<metric>_turns`` each turn's
score, result and reason, and ``evaluation_per_turn`` (azure's shape) each
output key's value per turn. A failure lists the turns that fail their own
threshold, by number and message index, with the judge's reason and the text.

    >>> relevance = RelevanceEvaluator({"model": "gpt-4o-mini"})  # doctest: +SKIP
    >>> relevance(conversation=[{"role": "user", "content": "Capital of France?"},
    ...                         {"role": "assistant", "content": "Paris."}])
    {'relevance': 5.0, 'relevance_min': 5.0, 'relevance_result': 'pass', ...}
"""

from __future__ import annotations

import functools
import statistics
from collections.abc import Callable
from typing import Any, ClassVar

from ..conversation.messages import Conversation, Message
from ..evaluator import Evaluator, bad_call, check_conversation, result
from ..records import score_keys
from ..runtime.steps import All, Steps

#: A failure message lists at most this many failing turns, then counts the rest.
LISTED_TURNS = 5
_SHOWN = 100


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def turn_texts(
    owner: str, conversation: Conversation, turn: Message, number: int, names: frozenset[str],
    required: tuple[str, ...], earlier: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """The texts of one assistant turn, as a single-answer metric taking ``names`` reads them;
    ``earlier``: its context holds every earlier system, user and tool message too."""
    before = conversation.messages[: turn.index]
    asked = next((m for m in reversed(before) if m.role == "user"), None)
    where = f"{owner}(): turn {number} (conversation[{turn.index}])"
    texts: dict[str, Any] = {"response": turn.content}
    if "query" in names:
        if asked is not None:
            texts["query"] = asked.content
        elif "query" in required:
            raise ValueError(f"{where} has no user message before it to answer")
    if "context" in names:
        since = before[asked.index + 1 :] if asked is not None else before
        results = [m.content for m in since if m.role == "tool" and m.content.strip()]
        if earlier:
            own = turn.context if turn.context is not None else []
            texts["context"] = [*([own] if isinstance(own, str) else own), *(
                {"text": m.content, "id": f"conversation[{m.index}]", "source": m.role}
                for m in before if m.role in ("system", "user", "tool") and m.content.strip()
            )]  # fmt: skip
        elif turn.context is not None:
            texts["context"] = turn.context
        elif results:
            texts["context"] = results
        if "context" not in texts and "context" in required:
            raise ValueError(
                f"{where} has no 'context' and no tool result since the user's message; "
                "give the assistant message a 'context'"
            )
    return texts


class TurnByTurn(Evaluator):
    """Mixed into a single-answer evaluator: ``conversation=`` scores each assistant turn
    (see the module)."""

    #: Whether a turn's context holds the conversation's earlier system, user and tool
    #: messages (each a chunk with its ``id``, ``conversation[i]``) beside its own.
    _earlier_context: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        if "conversation" not in cls.optional_inputs:
            cls.optional_inputs = (*cls.optional_inputs, "conversation")
        # A class's own scoring (a RAG metric's, a rubric's) scores one answer; given a
        # conversation, the turns are scored with it instead.
        own = cls.__dict__.get("_scoring")
        if own is not None:
            cls._scoring = _or_turns(own)  # type: ignore[method-assign,assignment]
        empty = cls.__dict__.get("_empty_response")
        if empty is not None:
            cls._empty_response = _unless_turns(empty)  # type: ignore[method-assign,assignment]
        super().__init_subclass__(**kwargs)

    def _checked(self, args: tuple[Any, ...], texts: dict[str, Any]) -> dict[str, Any]:
        if texts.get("conversation") is None:
            return super()._checked(args, {k: v for k, v in texts.items() if k != "conversation"})
        name = type(self).__name__
        others = sorted(k for k, v in texts.items() if k != "conversation" and v is not None)
        if args:
            raise bad_call(self, args, {})
        if others:
            raise TypeError(
                f"{name}(): give conversation= alone (its turns are the responses), "
                f"not with {', '.join(others)}"
            )
        conversation = check_conversation(name, "conversation", texts["conversation"])
        if not conversation.turns:
            raise ValueError(
                f"{name}(): the conversation has no assistant turn to judge "
                "(an assistant message with text)"
            )
        names = frozenset(self.inputs + self.optional_inputs)
        return {
            "conversation": conversation,
            "turns": [
                turn_texts(name, conversation, turn, k, names, self.inputs,
                           self._earlier_context)
                for k, turn in enumerate(conversation.turns, 1)
            ],
        }

    def _empty_response(self, texts: dict[str, Any]) -> dict[str, Any] | None:
        if texts.get("conversation") is not None:
            return None  # each turn's own
        return super()._empty_response(texts)

    def _scoring(self, texts: dict[str, Any]) -> Steps[dict[str, Any]]:
        if texts.get("conversation") is None:
            return super()._scoring(texts)
        return self._turns_scoring(texts)

    def _turns_scoring(self, texts: dict[str, Any]) -> Steps[dict[str, Any]]:
        """Every turn scored as one answer, all at once, then aggregated."""
        conversation: Conversation = texts["conversation"]
        outputs: list[dict[str, Any]] = yield All(
            [Evaluator.textsim_steps(self, **one) for one in texts["turns"]]
        )
        return _aggregated(conversation, outputs, [one.get("context") for one in texts["turns"]])


_Scoring = Callable[[Any, dict[str, Any]], Steps[dict[str, Any]]]
_Empty = Callable[[Any, dict[str, Any]], "dict[str, Any] | None"]


def _or_turns(scoring: _Scoring) -> _Scoring:
    @functools.wraps(scoring)
    def one_or_turns(self: TurnByTurn, texts: dict[str, Any]) -> Steps[dict[str, Any]]:
        if texts.get("conversation") is None:
            return scoring(self, texts)
        return self._turns_scoring(texts)

    return one_or_turns


def _unless_turns(empty: _Empty) -> _Empty:
    @functools.wraps(empty)
    def unless_turns(self: TurnByTurn, texts: dict[str, Any]) -> dict[str, Any] | None:
        return None if texts.get("conversation") is not None else empty(self, texts)

    return unless_turns


def _sources(claims: list[dict[str, Any]], context: Any) -> list[dict[str, Any]]:
    """A turn's claims, each with the ``source`` it rests on: its chunk's ``id`` (an
    earlier message, ``conversation[3]``), else ``context[k]``; ``None`` for none."""
    chunks = context if isinstance(context, list) else [context]
    out = []
    for claim in claims:
        k = claim.get("chunk")
        chunk = chunks[k] if isinstance(k, int) and 0 <= k < len(chunks) else None
        ident = chunk.get("id") if isinstance(chunk, dict) else None
        out.append({**claim, "source": None if k is None else ident or f"context[{k}]"})
    return out


def _aggregated(
    conversation: Conversation, outputs: list[dict[str, Any]], contexts: list[Any]
) -> dict[str, Any]:
    """The conversation's output from its turns': the mean, the lowest and each turn's."""
    score_key, result_key, threshold_key, reason_key = score_keys(outputs[0])[0]
    metric = result_key[: -len("_result")]
    scores = [float(out[score_key]) for out in outputs]
    mean = statistics.fmean(scores)
    threshold = outputs[0][threshold_key] if threshold_key else None
    rows = [
        {"turn": k, "message": turn.index, "score": out[score_key], "result": out[result_key],
         "reason": out.get(reason_key, "") if reason_key else ""}
        for k, (turn, out) in enumerate(zip(conversation.turns, outputs), 1)
    ]  # fmt: skip
    for row, out, context in zip(rows, outputs, contexts):
        if isinstance(out.get(f"{metric}_claims"), list):  # a RAG metric's claims
            row["claims"] = _sources(out[f"{metric}_claims"], context)
    lowest = min(rows, key=lambda row: (row["score"], row["turn"]))
    # What every turn's output agrees on (a rubric's name, its scoring) is the whole's too.
    output = {
        key: value for key, value in outputs[0].items()
        if all(out.get(key) == value for out in outputs[1:])
    }  # fmt: skip
    output[score_key] = mean
    if f"gpt_{metric}" in outputs[0]:
        output[f"gpt_{metric}"] = mean
    output[f"{metric}_min"] = min(scores)
    output[result_key] = result(threshold is None or mean >= threshold)
    reason = (
        f"mean of {len(rows)} assistant turn{'s' if len(rows) != 1 else ''}; lowest "
        f"{lowest['score']:g} at turn {lowest['turn']} (conversation[{lowest['message']}])"
    )
    output[f"{metric}_reason"] = reason + (f": {lowest['reason']}" if lowest["reason"] else "")
    failing = [row for row in rows if row["result"] == "fail"]
    findings = ["turns under the threshold:"] if failing else []
    for row in failing[:LISTED_TURNS]:
        findings.append(
            f"  - turn {row['turn']} (conversation[{row['message']}]) {row['score']:g}: "
            f"{_short(str(row['reason'])) or 'no reason given'}"
        )
        findings.append(f'    "{_short(conversation.messages[row["message"]].content)}"')
    if len(failing) > LISTED_TURNS:
        findings.append(f"  ... and {len(failing) - LISTED_TURNS} more")
    output[f"{metric}_findings"] = findings
    output[f"{metric}_turns"] = rows
    output["evaluation_per_turn"] = {
        key: [out.get(key) for out in outputs]
        for key in outputs[0]
        if not key.endswith("_findings")
    }
    return output
