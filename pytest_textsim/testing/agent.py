"""A scripted agent judge for the fake servers: verdicts on a trajectory's steps from tables.

:class:`AgentJudge` is a responder for :class:`~.fake_openai.FakeOpenAI`: it
reads which agent prompt a request asks (the JSON Schema's name) and the
numbered steps of its trajectory, and answers the way a judge would::

    judge = AgentJudge(bad={"step_efficiency": ["lookup_order"]},
                       requirements=[("refund the order", "not_achieved")])
    server = FakeOpenAI(responder=judge)

``bad`` maps a metric to texts: a step (for tool argument correctness, a tool
call) whose text holds one of them gets the metric's negative verdict, every
other step its positive one. ``requirements`` and ``plan_items`` are the lists
the judge draws up, with their verdicts. ``asked`` counts the requests per
prompt; ``otherwise`` answers every other prompt.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .replies import Received, Reply

_WORDS = MappingProxyType({
    "step_efficiency": ("step", "necessary", "unnecessary"),
    "plan_adherence": ("step", "in_plan", "off_plan"),
    "tool_argument_correctness": ("call", "correct", "incorrect"),
})
_STEP = re.compile(r'<step index="(\d+)" type="(\w+)"(?: call="(\d+)")?>\n(.*?)\n</step>', re.S)


@dataclass
class AgentJudge:
    """Answers the agent prompts from its tables (see the module)."""

    bad: Mapping[str, Sequence[str]] = field(default_factory=dict)
    requirements: Sequence[tuple[str, str]] = (("do what the user asked", "achieved"),)
    plan_items: Sequence[tuple[str, str]] = (("follow the plan", "followed"),)
    asked: dict[str, int] = field(default_factory=dict)
    otherwise: Callable[[Received], Reply] | None = None

    def __call__(self, request: Received) -> Reply:
        prompt = request.prompt(())
        self.asked[prompt] = self.asked.get(prompt, 0) + 1
        user = str(request.messages[-1]["content"]) if request.messages else ""
        reply: dict[str, Any] = {}
        if prompt == "task_completion":
            reply["requirements"] = [
                {"requirement": text, "verdict": verdict, "reason": f"scripted {verdict}"}
                for text, verdict in self.requirements
            ]
        elif prompt == "plan_adherence":
            reply["plan_items"] = [
                {"item": text, "verdict": verdict, "reason": f"scripted {verdict}"}
                for text, verdict in self.plan_items
            ]
        if prompt in _WORDS:
            item, good, bad = _WORDS[prompt]
            verdicts = []
            for index, _, call, text in _STEP.findall(user):
                if item == "call" and not call:
                    continue
                lapse = any(marker in text for marker in self.bad.get(prompt, ()))
                verdict = bad if lapse else good
                verdicts.append({item: int(call if item == "call" else index),
                                 "verdict": verdict, "reason": f"scripted {verdict}"})  # fmt: skip
            reply["verdicts"] = verdicts
        if not reply:
            if self.otherwise is not None:
                return self.otherwise(request)
            return Reply(content="not an agent prompt")
        return Reply(content=json.dumps(reply))
