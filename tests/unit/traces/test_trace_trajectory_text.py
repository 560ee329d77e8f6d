"""The trajectory the agent metrics judge, built from a real SDK trace: the support
agent of ``test_trace_steps`` (a retrieval, an instrumented model call of the real
client, a GenAI model call, two tools) in the order its spans started; and one
judgment of it."""

from __future__ import annotations

import json

import openai
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from test_trace_steps import TOOLS, client, provider, run_agent

from pytest_textsim import StepEfficiencyEvaluator, ToolArgumentCorrectnessEvaluator, Trace
from pytest_textsim.testing.agent import AgentJudge
from pytest_textsim.testing.fake_openai import FakeOpenAI
from pytest_textsim.traces.collect import from_readable
from pytest_textsim.traces.trajectory import trajectory_steps, trajectory_text

__all__ = ["client", "provider"]  # fixtures of test_trace_steps


def test_a_real_trace_is_numbered_steps_in_start_order(
    provider: tuple[TracerProvider, InMemorySpanExporter], client: openai.OpenAI
) -> None:
    tracer_provider, exporter = provider
    run_agent(tracer_provider.get_tracer("tests.trajectory"), client)
    run = Trace([from_readable(span) for span in exporter.get_finished_spans()])
    steps = trajectory_steps(run)
    assert [(s["type"], s.get("name") or s.get("model")) for s in steps] == [
        ("retrieval", None), ("model", "gpt-4o-mini"), ("model", "my-own-model"),
        ("tool", "lookup_order"), ("tool", "refund"),
    ]  # fmt: skip
    assert trajectory_text(steps).splitlines() == [
        "<trajectory>",
        '<step index="1" type="retrieval">',
        "retrieve refund policy: 2 documents",
        "  [1] Refunds are accepted within 30 days.",
        "  [2] Shipping takes 5 days.",
        "</step>",
        '<step index="2" type="model">',
        "model gpt-4o-mini",
        "says: Refunded.",
        "</step>",
        '<step index="3" type="model">',
        "model my-own-model",
        "failed: stream cut (ConnectionError: peer closed)",
        "says: Refunding A",
        "</step>",
        '<step index="4" type="tool" call="1">',
        'lookup_order({"order_id": "A1"}) -> {"status": "delivered"}',
        "</step>",
        '<step index="5" type="tool" call="2">',
        'refund({"order_id": "A1", "amount": 20}) -> failed: payment service down',
        "</step>",
        "</trajectory>",
    ]
    # The Trace itself goes to a metric: one judgment, a verdict per step.
    judge = AgentJudge(bad={"step_efficiency": ["my-own-model"]})
    with FakeOpenAI(responder=judge) as server:
        config = {"model": "gpt-judge", "base_url": server.base_url, "api_key": "sk-test"}
        out = StepEfficiencyEvaluator(config)(query="Refund order A1", trace=run)
        assert server.requests == 1
        # No tools=: the schemas the instrumented call's span recorded as offered.
        judged = ToolArgumentCorrectnessEvaluator(config)(query="Refund order A1", trace=run)
        shown = server.chat_requests[-1].messages[-1]["content"]
    assert judged["tool_argument_correctness"] == 1.0
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
    assert f"<tools>\n{json.dumps(schemas, sort_keys=True)}\n</tools>" in shown
    assert out["step_efficiency"] == 4 / 5
    assert out["step_efficiency_findings"] == [
        "unnecessary steps:", "  - step 3 (model call) unnecessary: scripted unnecessary"
    ]
