"""``simulate_conversation``: the run's judge plays a user talking to the app.

The simulation itself is :mod:`pytest_textsim.judge.simulation`; here it gets the
run's judge (its settings, cache, budget, hub and counters, as a judge metric
does) or a judge of its own (``model_config=``), and the transcript is added to
the running test's report, so a failing test shows the conversation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..judge.client import JudgeClient
from ..judge.simulation import SimulatedConversation, simulating
from ..judge.wiring import run_judge
from ..runtime.steps import Steps, driven
from ..settings.table import Resolver
from .session import active_session

#: The title of the transcript's section in a test's report.
SECTION = "textsim simulated conversation"


def simulation_steps(
    app: Callable[[list[dict[str, Any]]], Any],
    *,
    scenario: str,
    persona: str | None = None,
    goal: str | None = None,
    max_turns: int = 8,
    stop_when: Callable[[list[dict[str, Any]]], bool] | None = None,
    opening: str | None = None,
    model_config: Any = None,
) -> Steps[SimulatedConversation]:
    """Let the judge model play a user talking to ``app`` and return the conversation.

    ``app(messages)`` (sync or async) takes the messages so far, in the OpenAI
    chat format, and returns the assistant's next message (a string, or a dict
    with ``role`` and ``content``). The simulated user follows ``scenario``
    (what it comes for, what it knows), ``persona`` (who it is, how it writes)
    and ``goal``; it writes the first message (or ``opening`` is it), and after
    each answer it writes the next one or says the goal is reached. The
    simulation stops there, when ``stop_when(messages)`` holds, or after
    ``max_turns`` answers (asking the simulated user once more whether the goal
    was reached). Every user turn goes through the judge cache, keyed by the
    conversation so far, and the app's own LLM calls through replay
    (``textsim_replay``): a recorded simulation replays offline with no key.
    ``await asimulate_conversation(...)`` is the same in async tests.
    """
    if model_config is None:
        session = active_session()
        client = run_judge(session.resolver if session else Resolver()).client
    else:
        given = isinstance(model_config, JudgeClient)
        client = model_config if given else JudgeClient(model_config)
    conversation = yield from simulating(
        client, app, scenario=scenario, persona=persona, goal=goal, max_turns=max_turns,
        stop_when=stop_when, opening=opening,
    )  # fmt: skip
    session = active_session()
    item = session.current.item if session is not None else None
    if item is not None:
        item.add_report_section("call", SECTION, conversation.transcript())
    return conversation


simulate_conversation, asimulate_conversation = driven(
    simulation_steps, ("simulate_conversation", "asimulate_conversation")
)
