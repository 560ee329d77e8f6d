"""Conversation metrics, turn by turn: knowledge retention, role adherence, turn
relevancy and conversation completeness.

Each asks the judge once for the whole conversation and scores from 0 to 1 as
a plain fraction of its verdicts (:mod:`.turn_prompts`):

- ``knowledge_retention``: assistant turns that do not forget or contradict a fact
  the user gave earlier / assistant turns.
- ``role_adherence``: assistant turns in the role (``role=``, else the system
  messages) / assistant turns.
- ``turn_relevancy``: assistant turns relevant to the messages before them (at most
  ``window`` of them, 10 by default) / assistant turns.
- ``conversation_completeness``: the user's intentions the assistant satisfied /
  intentions.

A reply that does not give one allowed verdict for every assistant turn (or a
non-empty list of intentions, each tied to a user message) is asked again once,
then a :class:`JudgeError`: an outage or a parse failure never scores. The
output keeps each turn's verdict (``<metric>_turns``, or ``<metric>_intentions``)
and a failure lists the failing turns by number and message index with the
judge's reason and the turn's text.

    >>> retention = KnowledgeRetentionEvaluator({"model": "gpt-4o-mini"})  # doctest: +SKIP
    >>> retention(conversation=[{"role": "user", "content": "I am vegan."},
    ...                         {"role": "assistant", "content": "Noted: vegan."}])
    {'knowledge_retention': 1.0, 'knowledge_retention_result': 'pass', ...}
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

from ..conversation.messages import Conversation, Message
from ..evaluator import check_text
from ..runtime.steps import Steps
from .cache import Store
from .evaluators import ModelConfigArg
from .options import JudgeOptions
from .rag import RagEvaluator, _plural, _short
from .turn_prompts import (
    CONVERSATION_COMPLETENESS,
    KNOWLEDGE_RETENTION,
    ROLE_ADHERENCE,
    TURN_RELEVANCY,
    ConversationPrompt,
    encode_conversation,
)

#: A failure message lists at most this many failing turns, then counts the rest.
LISTED_TURNS = 5


def _quoted(message: Message) -> str:
    return f'    "{_short(message.content)}"'


class ConversationEvaluator(RagEvaluator):
    """A conversation metric: the judge's verdicts on its assistant turns, a fraction 0-1."""

    inputs = ("conversation",)
    _judges_response = False
    _prompt: ClassVar[ConversationPrompt]
    # The verdict that counts for the score, the one against it, and how the reason
    # and the failure list word them.
    _good: ClassVar[str]
    _held: ClassVar[str]  # "turns keep to the role"
    _lapse: ClassVar[str]  # "turns out of role:"

    def _checked(self, args: tuple[Any, ...], texts: dict[str, Any]) -> dict[str, Any]:
        checked = super()._checked(args, texts)
        if not checked["conversation"].turns:
            raise ValueError(
                f"{type(self).__name__}(): the conversation has no assistant turn to judge "
                "(an assistant message with text)"
            )
        return checked

    def _inputs(self, conversation: Conversation) -> dict[str, str | None]:
        return {"conversation": encode_conversation(conversation)}

    def _scoring(self, texts: dict[str, Any]) -> Steps[dict[str, Any]]:
        conversation: Conversation = texts["conversation"]
        turns = conversation.turns
        found = yield from self._ask(self._prompt.sized(len(turns)), self._inputs(conversation))
        rows = [
            {"turn": k, "message": m.index, "verdict": v.verdict, "reason": v.reason}
            for k, (m, v) in enumerate(zip(turns, found["verdicts"]), 1)
        ]
        failing = [row for row in rows if row["verdict"] != self._good]
        held = len(rows) - len(failing)
        reason = f"{held} of {_plural(len(rows), 'assistant turn')} {self._held}"
        lines = [self._lapse] if failing else []
        for row in failing[:LISTED_TURNS]:
            message = conversation.messages[row["message"]]
            lines.append(
                f"  - turn {row['turn']} (conversation[{row['message']}]) {row['verdict']}: "
                f"{_short(row['reason']) or 'no reason given'}"
            )
            lines.append(_quoted(message))
        if len(failing) > LISTED_TURNS:
            lines.append(f"  ... and {len(failing) - LISTED_TURNS} more")
        return self._output(held / len(rows), reason, lines, turns=rows)


class KnowledgeRetentionEvaluator(ConversationEvaluator):
    """The share of assistant turns that remember what the user said, 0-1.

    Each assistant turn gets ``retains`` or ``forgets`` (asks again for, ignores
    or contradicts a fact the user stated before it). Score = turns that retain /
    assistant turns.
    """

    _metric = "knowledge_retention"
    _prompts = (KNOWLEDGE_RETENTION,)
    _prompt = KNOWLEDGE_RETENTION
    _good, _held, _lapse = "retains", "retain what the user said", "turns that forget:"


class RoleAdherenceEvaluator(ConversationEvaluator):
    """The share of assistant turns in the role, 0-1: ``role=``, else the system messages.

    Each assistant turn gets ``in_role`` or ``out_of_role``. Score = in-role turns /
    assistant turns. A conversation with neither a ``role=`` nor a system message
    is an error: there is no role to keep to.
    """

    _metric = "role_adherence"
    _prompts = (ROLE_ADHERENCE,)
    _prompt = ROLE_ADHERENCE
    _good, _held, _lapse = "in_role", "keep to the role", "turns out of role:"

    def __init__(
        self,
        model_config: ModelConfigArg,
        *,
        threshold: float = 0.5,
        role: str | None = None,
        cache: Store | str | os.PathLike[str] | None = None,
        options: JudgeOptions | None = None,
    ) -> None:
        super().__init__(model_config, threshold=threshold, cache=cache, options=options)
        name = type(self).__name__
        self._role = None if role is None else check_text(name, "role", role)
        if self._role is not None and not self._role.strip():
            raise ValueError(f"{name}(): 'role' is empty; describe the assistant's role")

    def _checked(self, args: tuple[Any, ...], texts: dict[str, Any]) -> dict[str, Any]:
        checked = super()._checked(args, texts)
        if self._role is None and not checked["conversation"].system:
            raise ValueError(
                f"{type(self).__name__}(): no role to judge against: the conversation has no "
                "system message; give role='...'"
            )
        return checked

    def _inputs(self, conversation: Conversation) -> dict[str, str | None]:
        role = self._role if self._role is not None else conversation.system
        return {"role": role, **super()._inputs(conversation)}


class TurnRelevancyEvaluator(ConversationEvaluator):
    """The share of assistant turns relevant to the messages before them, 0-1.

    Each assistant turn is judged against at most ``window`` messages before it
    (10 by default): ``relevant`` or ``irrelevant``. Score = relevant turns /
    assistant turns.
    """

    _metric = "turn_relevancy"
    _prompts = (TURN_RELEVANCY,)
    _prompt = TURN_RELEVANCY
    _good, _held, _lapse = "relevant", "relevant", "irrelevant turns:"

    def __init__(
        self,
        model_config: ModelConfigArg,
        *,
        threshold: float = 0.5,
        window: int = 10,
        cache: Store | str | os.PathLike[str] | None = None,
        options: JudgeOptions | None = None,
    ) -> None:
        super().__init__(model_config, threshold=threshold, cache=cache, options=options)
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise ValueError(f"window must be a whole number >= 1, got {window!r}")
        self._window = window

    def params(self) -> dict[str, Any]:
        return {**super().params(), "window": self._window}

    def _inputs(self, conversation: Conversation) -> dict[str, str | None]:
        return {"window": str(self._window), **super()._inputs(conversation)}


class ConversationCompletenessEvaluator(ConversationEvaluator):
    """The share of the user's intentions the assistant satisfied, 0-1.

    The judge lists what the user came for, each intention with the user message
    that states it, and gives each ``satisfied`` or ``unsatisfied``. Score =
    satisfied / intentions. A reply with no intention is not a score (it is asked
    again, then an error).
    """

    _metric = "conversation_completeness"
    _prompts = (CONVERSATION_COMPLETENESS,)

    def _scoring(self, texts: dict[str, Any]) -> Steps[dict[str, Any]]:
        conversation: Conversation = texts["conversation"]
        users = tuple(m.index for m in conversation.messages if m.role == "user")
        prompt = CONVERSATION_COMPLETENESS.for_users(users)
        found = yield from self._ask(prompt, self._inputs(conversation))
        rows: list[dict[str, Any]] = found["intentions"]
        unmet = [row for row in rows if row["verdict"] != "satisfied"]
        met = len(rows) - len(unmet)
        reason = f"{met} of {_plural(len(rows), 'intention')} of the user satisfied"
        lines = ["intentions left unsatisfied:"] if unmet else []
        for row in unmet[:LISTED_TURNS]:
            lines.append(
                f"  - asked in conversation[{row['message']}]: {_short(row['intention'])}: "
                f"{_short(row['reason']) or 'no reason given'}"
            )
            lines.append(_quoted(conversation.messages[row["message"]]))
        if len(unmet) > LISTED_TURNS:
            lines.append(f"  ... and {len(unmet) - LISTED_TURNS} more")
        return self._output(met / len(rows), reason, lines, intentions=rows)
