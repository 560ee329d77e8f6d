"""Agents and hand-offs, the messages and tools offered of model-call spans, GenAI
retrieval spans, and ``assert_tool_calls_valid`` on a trace: spans made by hand, in
each convention's attribute names."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_textsim import AgentStep, assert_handoff, assert_tool_calls_valid, retrieved_context
from pytest_textsim.traces.model import Trace
from pytest_textsim.traces.report import compact, figures, tree_lines
from pytest_textsim.traces.span import Span
from pytest_textsim.traces.steps import Document
from pytest_textsim.traces.trajectory import trajectory_steps, trajectory_text

MS = 1_000_000
OI = "openinference.span.kind"
OP = "gen_ai.operation.name"


def span(name: str, ident: str, parent: str | None, start: int, **attributes: Any) -> Span:
    status = attributes.pop("status", "UNSET")
    message = attributes.pop("message", "")
    end = (start + 1) * MS
    return Span(name, "t", ident, parent, start * MS, end, attributes, status, message)


# A triage agent (GenAI) hands off to billing (OpenInference's Agents SDK form, a TOOL
# span without a tool name), whose agent span (OpenInference AGENT) hands off on.
AGENTS = [
    span("invoke_agent triage", "a1", None, 0, **{OP: "invoke_agent", "gen_ai.agent.id": "ag_7",
         "gen_ai.agent.description": "routes requests"}),  # fmt: skip
    span("handoff to billing", "h1", "a1", 1, **{OI: "TOOL"}),
    span("billing", "a2", None, 2, **{OI: "AGENT", "agent.name": "Billing",
                                      "graph.node.parent_id": "triage"}),  # fmt: skip
    span("execute_tool refund", "t1", "a2", 3,
         **{OP: "execute_tool", "gen_ai.tool.name": "refund"}),
    span("handoff from Billing to refunds", "h2", "a2", 4, **{OP: "handoff"},
         status="ERROR", message="refunds is offline"),  # fmt: skip
]


def test_agent_and_handoff_steps_their_assertion_trajectory_and_report() -> None:
    run = Trace(AGENTS)
    assert run.agent_steps() == [
        AgentStep("triage", "agent", None, None, "a1", None, 0.001, None, "ag_7",
                  "routes requests", "invoke_agent"),
        AgentStep("billing", "handoff", "triage", "billing", "h1", "triage", 0.001),
        AgentStep("Billing", "agent", None, None, "a2", "triage", 0.001),
        AgentStep("refunds", "handoff", "Billing", "refunds", "h2", "Billing", 0.001,
                  "refunds is offline", operation="handoff"),
    ]  # fmt: skip
    # A hand-off is not a tool run.
    assert [s.tool_name for s in run.tool_calls()] == ["refund"]
    assert [t.name for t in run.as_llm_calls().tool_calls] == ["refund"]

    assert assert_handoff(run, to="billing").span_id == "h1"
    assert assert_handoff(run, from_="Billing").span_id == "h2"
    with pytest.raises(AssertionError) as failed:
        assert_handoff(run, from_="triage", to="refunds")
    assert str(failed.value) == (
        "no hand-off from triage to refunds; the trace's hand-offs: triage -> billing, "
        "Billing -> refunds [failed: refunds is offline]"
    )
    # OpenLLMetry's agent span (its decorator's) names its agent too.
    openllmetry = span("research.agent", "a3", None, 5, **{"traceloop.span.kind": "agent",
                                                           "traceloop.entity.name": "research"})
    with pytest.raises(AssertionError, match=r"^no hand-off to x; the trace has no hand-off "
                                              r"\(agents: triage, Billing, research\)$"):
        assert_handoff(Trace([AGENTS[0], AGENTS[2], openllmetry]), to="x")
    with pytest.raises(ValueError, match="assert_handoff\\(to=...\\) expects an agent's name"):
        assert_handoff(run, to="")

    steps = trajectory_steps(run)
    assert [step["type"] for step in steps] == ["agent", "handoff", "agent", "tool", "handoff"]
    assert trajectory_text(steps).splitlines()[1:6] == [
        '<step index="1" type="agent">', "agent triage", "</step>",
        '<step index="2" type="handoff">', "handoff triage -> billing",
    ]  # fmt: skip
    assert "handoff Billing -> refunds -> failed: refunds is offline" in trajectory_text(steps)

    assert figures(run)["handoffs"] == 2.0
    kept = compact(run)
    assert list(tree_lines(kept["spans"])) == [
        "invoke_agent triage (1.0 ms, agent triage)",
        "└── handoff to billing (1.0 ms, triage -> billing)",
        "billing (1.0 ms, agent Billing)",
        "├── execute_tool refund (1.0 ms)",
        "└── handoff from Billing to refunds (1.0 ms, Billing -> refunds) "
        "ERROR: refunds is offline",
    ]


WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def test_model_call_messages_in_each_convention() -> None:
    genai = span("chat m", "c1", None, 0, **{
        OP: "chat",
        "gen_ai.system_instructions": json.dumps([{"type": "text", "content": "Be brief."}]),
        "gen_ai.input.messages": json.dumps([
            {"role": "user", "parts": [{"type": "text", "content": "Weather in "},
                                       {"type": "text", "content": "Paris?"}]},
            {"role": "assistant", "parts": [{"type": "tool_call", "id": "c_1", "name": "weather",
                                             "arguments": {"city": "Paris"}}]},
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c_1",
                                        "result": "rainy"}]},
        ]),
        # Structured, as an OTLP file's kvlist reads.
        "gen_ai.output.messages": [{"role": "assistant", "finish_reason": "tool_call", "parts": [
            {"type": "tool_call", "id": "c_2", "name": "weather", "arguments": {"city": "Lyon"}}]}],
        "gen_ai.tool.definitions": json.dumps(
            [{"type": "function", "name": "weather", "parameters": WEATHER}]),
    })  # fmt: skip
    openllmetry = span("openai.chat", "c2", None, 1, **{
        OP: "chat", "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Hi",
        "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": "Hello",
        "gen_ai.completion.0.finish_reason": "stop",
        "llm.request.functions.0.name": "weather",
        "llm.request.functions.0.parameters": json.dumps(WEATHER),
    })  # fmt: skip
    older = span("chat", "c3", None, 2, **{OP: "chat", "gen_ai.prompt": "Hi there",
                                           "gen_ai.system_instructions": "Be kind.",
                                           "gen_ai.completion": "Hello there"})  # fmt: skip
    first, second, third = Trace([genai, openllmetry, older]).as_llm_calls()
    assert first.messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"type": "function", "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
             "id": "c_1"}]},
        {"role": "tool", "content": "rainy", "tool_call_id": "c_1"},
    ]  # fmt: skip
    assert (first.text, first.finish_reason) == ("", "tool_call")
    assert [(t.name, t.arguments, t.id) for t in first.tool_calls] == [
        ("weather", {"city": "Lyon"}, "c_2")
    ]
    assert first.tools == {"weather": WEATHER} and first.tools_known
    assert second.messages == [{"role": "user", "content": "Hi"}]
    assert (second.text, second.finish_reason) == ("Hello", "stop")
    assert second.tools == {"weather": WEATHER}
    assert third.messages == [
        {"role": "system", "content": "Be kind."}, {"role": "user", "content": "Hi there"}
    ]
    assert third.text == "Hello there" and third.tools == {} and not third.tools_known


def test_genai_retrieval_spans_beside_openinference_ones() -> None:
    documents = [{"id": "d1", "score": 0.9, "content": "Refunds in 30 days."},
                 {"id": "d2", "score": 0.4}, {"id": "d3", "text": "Ships in 5 days."}]  # fmt: skip
    genai = span("retrieval kb", "r1", None, 0, **{
        OP: "retrieval", "gen_ai.retrieval.query.text": "refunds",
        "gen_ai.retrieval.documents": json.dumps(documents)})  # fmt: skip
    oi = span("retrieve", "r2", None, 1, **{OI: "RETRIEVER", "input.value": "shipping",
              "retrieval.documents.0.document.content": "Returns are free."})  # fmt: skip
    run = Trace([oi, genai][::-1])
    first, second = run.retrievals()
    assert (first.span_id, first.query) == ("r1", "refunds")
    assert first.documents == (  # a document without text gives no chunk
        Document("Refunds in 30 days.", "d1", 0.9), Document("Ships in 5 days.", "d3")
    )
    assert second.documents == (Document("Returns are free."),)
    assert retrieved_context(run) == [
        {"text": "Refunds in 30 days.", "id": "d1"}, {"text": "Ships in 5 days.", "id": "d3"},
        {"text": "Returns are free."},
    ]  # fmt: skip


def chat(ident: str, start: int, asked: dict[str, Any] | None, offered: bool) -> Span:
    attributes: dict[str, Any] = {OI: "LLM"}
    if asked is not None:
        attributes.update({
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.tool_calls.0.tool_call.id": "c_1",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "weather",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments":
                json.dumps(asked),
        })  # fmt: skip
    if offered:
        tool = {"type": "function", "function": {"name": "weather", "parameters": WEATHER}}
        attributes["llm.tools.0.tool.json_schema"] = json.dumps(tool)
    return span(f"chat {ident}", ident, None, start, **attributes)


def run_tool(ident: str, start: int, call_id: str, arguments: dict[str, Any]) -> Span:
    return span("weather", ident, None, start, **{
        OI: "TOOL", "tool.name": "weather", "tool_call.id": call_id,
        "input.value": json.dumps(arguments)})  # fmt: skip


def test_tool_calls_valid_on_a_trace() -> None:
    # The model's call and the tool span that answers it are checked once.
    assert_tool_calls_valid(Trace([chat("m1", 0, {"city": "Paris"}, True),
                                   run_tool("t1", 1, "c_1", {"city": "Paris"})]))  # fmt: skip
    bad = Trace([chat("m1", 0, {"town": "Paris"}, True), run_tool("t1", 1, "c_9", {"city": 3}),
                 chat("m2", 2, None, False)])  # fmt: skip
    with pytest.raises(AssertionError) as failed:
        assert_tool_calls_valid(bad)
    assert str(failed.value).splitlines() == [
        "2 invalid tool calls:",
        "model call 1: weather({\"town\": \"Paris\"}): (root): 'city' is a required property",
        "tool run 1: weather({\"city\": 3}): city: 3 is not of type 'string'",
    ]
    unrecorded = Trace([chat("m1", 0, {"city": "Paris"}, False)])
    with pytest.raises(ValueError) as error:
        assert_tool_calls_valid(unrecorded)
    assert str(error.value) == (
        "assert_tool_calls_valid: the trace records no tool definitions (gen_ai.tool.definitions, "
        "llm.tools.N.tool.json_schema, llm.request.functions.N on its model-call spans), so "
        "there is nothing to check its 1 tool call against: pass the tools the app offered, "
        "assert_tool_calls_valid(trace, tools=[...])"
    )
    assert_tool_calls_valid(unrecorded, tools={"weather": WEATHER})
    with pytest.raises(AssertionError, match="no such tool was offered \\(offered: lookup\\)$"):
        assert_tool_calls_valid(unrecorded, tools=[{"name": "lookup", "input_schema": {}}])
    with pytest.raises(TypeError, match="expects the tools offered to the model"):
        assert_tool_calls_valid(unrecorded, tools="weather")
