"""What a trace's spans map to: a model call from OpenInference's openai
instrumentation (the real client against the local server) and one by the GenAI
conventions, tool spans of both conventions, a retriever span; the call assertions
over a trace, the same mapping from the trace written to an OTLP JSON file, and the
retriever's chunks judged by ``faithfulness``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from test_otlp_files import collector_line

from pytest_textsim import (
    FaithfulnessEvaluator,
    JudgeOptions,
    Trace,
    assert_llm_limits,
    assert_tool_called,
    assert_tool_calls_valid,
    assert_tool_not_called,
    assert_tool_trajectory,
    load_trace,
    retrieved_context,
)
from pytest_textsim.calls.model import LLMCalls, Usage
from pytest_textsim.calls.parse import read
from pytest_textsim.calls.prices import ModelPrice, PriceTable
from pytest_textsim.evaluator import Chunk, as_chunks
from pytest_textsim.replay.intercept import install, observe, uninstall
from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply
from pytest_textsim.testing.rag import RagJudge
from pytest_textsim.traces.collect import from_readable
from pytest_textsim.traces.steps import Document

#: The tools the instrumented model call offers (its span records them).
ORDER = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}
TOOLS = [
    {"type": "function", "function": {"name": "lookup_order", "parameters": ORDER}},
    {"type": "function", "function": {"name": "refund", "parameters": {
        **ORDER, "properties": {**ORDER["properties"], "amount": {"type": "number"}}}}},
]  # fmt: skip


def run_agent(tracer: trace.Tracer, client: openai.OpenAI) -> None:
    """A support agent: a retrieval, a model call (instrumented), one by the GenAI
    conventions on a model with no price, a tool by each convention, one failing."""
    with tracer.start_as_current_span("agent run"):
        with tracer.start_as_current_span("retrieve") as retriever:
            retriever.set_attribute("openinference.span.kind", "RETRIEVER")
            retriever.set_attribute("input.value", "refund policy")
            # Set out of order: the documents' order is their index, not the keys'.
            for index, text, ident, score in (
                (1, "Shipping takes 5 days.", "kb-2", 0.5),
                (0, "Refunds are accepted within 30 days.", "kb-7", 0.9),
                (2, "", "kb-empty", 0.1),
            ):
                prefix = f"retrieval.documents.{index}.document"
                retriever.set_attribute(f"{prefix}.content", text)
                retriever.set_attribute(f"{prefix}.id", ident)
                retriever.set_attribute(f"{prefix}.score", score)
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "Refund A1"}], tools=TOOLS
        )
        with tracer.start_as_current_span(
            "chat my-own-model",
            attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "my-own-model",
                        "gen_ai.provider.name": "openai", "gen_ai.usage.input_tokens": 100,
                        "gen_ai.usage.output_tokens": 10},
            set_status_on_exception=False,
        ) as chat:  # fmt: skip
            # Its messages recorded as span events (GenAI events), and the exception.
            chat.add_event("gen_ai.user.message", {"content": "Refund A1"})
            chat.add_event("gen_ai.choice", {"index": 0, "finish_reason": "length",
                                             "message": '{"content": "Refunding A"}'})  # fmt: skip
            chat.record_exception(ConnectionError("peer closed"))
            chat.set_status(trace.Status(trace.StatusCode.ERROR, "stream cut"))
        with tracer.start_as_current_span(
            "execute_tool lookup_order",
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup_order",
                        "gen_ai.tool.call.id": "call_1",
                        "gen_ai.tool.call.arguments": '{"order_id": "A1"}',
                        "gen_ai.tool.call.result": '{"status": "delivered"}'},
        ):  # fmt: skip
            pass
        with tracer.start_as_current_span(
            "refund",
            attributes={"openinference.span.kind": "TOOL", "tool.name": "refund",
                        "input.value": '{"order_id": "A1", "amount": 20}'},
            set_status_on_exception=False,
        ) as refund:  # fmt: skip
            refund.set_status(trace.Status(trace.StatusCode.ERROR, "payment service down"))


@pytest.fixture
def client(fake_openai: FakeOpenAI) -> openai.OpenAI:
    fake_openai.script(Reply(content="Refunded.", usage=(30, 6)))
    return openai.OpenAI(base_url=fake_openai.base_url, api_key="sk-test", max_retries=0)


@pytest.fixture
def provider() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    """A tracer provider of the test's own, its model calls instrumented."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield provider, exporter
    finally:
        instrumentor.uninstrument()
        provider.shutdown()


def check_mapping(run: Trace, cost: float | None, own_cost: float | None = None) -> None:
    """What ``run_agent``'s spans map to, whichever way they were collected; ``cost``
    and ``own_cost``: the two model calls' by the trace's prices."""
    by_name = {span.name: span for span in run.spans}
    calls = run.as_llm_calls()
    assert [(c.api, c.provider, c.model) for c in calls] == [
        ("llm", "openai", "gpt-4o-mini"),
        ("chat", "openai", "my-own-model"),
    ]
    instrumented, own = calls
    assert instrumented.usage == Usage(input=30, output=6) and instrumented.tokens == 36
    assert instrumented.text == "Refunded." and instrumented.error is None
    # What the instrumentation recorded of the exchange: the messages and tools sent.
    assert instrumented.messages == [{"role": "user", "content": "Refund A1"}]
    assert instrumented.tools == {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
    assert (instrumented.tool_calls, own.tools_known) == ([], False)
    # The GenAI call's, from its span events.
    assert own.messages == [{"role": "user", "content": "Refund A1"}]
    assert (own.text, own.finish_reason) == ("Refunding A", "length")
    assert instrumented.cost_usd == cost
    assert instrumented.span_id == by_name["ChatCompletion"].span_id
    assert by_name["ChatCompletion"].parent_id == by_name["agent run"].span_id
    assert instrumented.latency_s == by_name["ChatCompletion"].duration_s
    # Failed, and billed for the tokens it recorded.
    assert own.error == "stream cut (ConnectionError: peer closed)"
    assert own.cost_usd == own_cost
    if own_cost is None:
        assert "no price for model 'my-own-model'" in str(own.price_note)
    assert calls.tokens == 146

    lookup, refund = calls.tool_calls
    assert (lookup.name, lookup.arguments, lookup.id) == (
        "lookup_order",
        {"order_id": "A1"},
        "call_1",
    )
    assert lookup.result == '{"status": "delivered"}' and lookup.failure is None
    assert lookup.span_id == by_name["execute_tool lookup_order"].span_id
    assert (refund.name, refund.arguments) == ("refund", {"order_id": "A1", "amount": 20})
    assert refund.result is None and refund.failure == "payment service down"
    assert (
        refund.describe()
        == 'refund({"amount": 20, "order_id": "A1"}) [failed: payment service down]'
    )

    (found,) = run.retrievals()
    assert found.span_id == by_name["retrieve"].span_id and found.query == "refund policy"
    assert found.documents == (
        Document("Refunds are accepted within 30 days.", "kb-7", 0.9),
        Document("Shipping takes 5 days.", "kb-2", 0.5),
    )
    context = retrieved_context(run)
    assert context == [
        {"text": "Refunds are accepted within 30 days.", "id": "kb-7"},
        {"text": "Shipping takes 5 days.", "id": "kb-2"},
    ]
    # What the RAG metrics read from it: the chunks, in retrieval order.
    assert as_chunks("context", context) == (
        Chunk("Refunds are accepted within 30 days.", "kb-7"),
        Chunk("Shipping takes 5 days.", "kb-2"),
    )


@pytest.fixture
def seen_calls() -> Iterator[LLMCalls]:
    """What the package's httpx interception (``llm_calls``' source) sees, installed for
    this test alone: the ``llm_calls`` fixture would leave it installed for the rest of
    the session, where in-process pytester runs check that nothing is patched."""
    log = LLMCalls(read)
    install()
    observe(log.add_raw)
    try:
        yield log
    finally:
        uninstall()  # and stops observing


def test_live_trace_maps_and_asserts(
    agent_trace: Trace, seen_calls: LLMCalls, client: openai.OpenAI, fake_openai: FakeOpenAI
) -> None:
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument()
    try:
        run_agent(trace.get_tracer("tests.steps"), client)
    finally:
        instrumentor.uninstrument()
    # Priced by the run's table (no textsim_prices here: genai-prices' when installed).
    check_mapping(agent_trace, PriceTable().cost("gpt-4o-mini", "openai", Usage(30, 6)))

    assert [t.name for t in assert_tool_called(agent_trace, "refund", {"amount": 20})] == ["refund"]
    assert_tool_called(agent_trace, "lookup_order", times=1)
    assert_tool_not_called(agent_trace, "cancel_order")
    assert_tool_trajectory(agent_trace, ["lookup_order", "refund"])
    assert_tool_trajectory(agent_trace, [("refund", {"amount": 20})], "superset", "superset")
    assert_llm_limits(agent_trace, max_calls=2, max_tokens=146, max_latency_s=60)
    # The tool spans against the tools the instrumented call's span recorded as offered.
    assert_tool_calls_valid(agent_trace)
    with pytest.raises(AssertionError, match=r"^1 invalid tool call:\ntool run 2: refund\(.*\) "
                       r"\[failed: payment service down\]: no such tool was offered "
                       r"\(offered: lookup_order\)$"):  # fmt: skip
        assert_tool_calls_valid(agent_trace, tools=TOOLS[:1])

    called = (
        'lookup_order({"order_id": "A1"}), '
        'refund({"amount": 20, "order_id": "A1"}) [failed: payment service down]'
    )
    with pytest.raises(AssertionError) as failed:
        assert_tool_trajectory(agent_trace, ["refund", "lookup_order"])
    assert str(failed.value) == (
        "tool trajectory (strict) differs from [refund, lookup_order]: call 1 is "
        f'lookup_order({{"order_id": "A1"}}), expected refund; the app called: {called}'
    )
    with pytest.raises(AssertionError) as failed:
        assert_tool_called(agent_trace, "refund", {"amount": 500})
    assert str(failed.value) == (
        f'tool refund with arguments {{"amount": 500}} was not called; the app called: {called}'
    )
    with pytest.raises(AssertionError) as failed:
        assert_tool_not_called(agent_trace, "refund")
    assert str(failed.value) == (
        f"tool refund was called 1 time, expected never; the app called: {called}"
    )
    with pytest.raises(AssertionError) as failed:
        assert_llm_limits(agent_trace, max_calls=1, max_tokens=100, max_cost_usd=1)
    message = str(failed.value)
    assert message.startswith(
        "2 calls, limit 1 (assert_llm_limits(max_calls=1)); "
        "146 tokens, limit 100 (assert_llm_limits(max_tokens=100)); "
        "cost unknown: call 2 (chat my-own-model) has no price: no price for model 'my-own-model'"
    )
    assert message.endswith("(assert_llm_limits(max_cost_usd=1))")
    # Two sources, never merged: llm_calls holds what httpx saw (the one request),
    # the trace its model-call spans (that request's span and the GenAI one).
    assert fake_openai.requests == 1
    assert [(c.api, c.model, c.tokens) for c in seen_calls] == [("chat", "gpt-4o-mini", 36)]


def test_loaded_trace_maps_the_same(
    provider: tuple[TracerProvider, InMemorySpanExporter], client: openai.OpenAI, tmp_path: Path
) -> None:
    tracer_provider, exporter = provider
    run_agent(tracer_provider.get_tracer("tests.steps"), client)
    made = list(exporter.get_finished_spans())
    prices = PriceTable(
        {"gpt-4o-mini": ModelPrice(input=1.0, output=2.0), "my-own-model": ModelPrice(0.5, 3.0)}
    )
    in_memory = Trace([from_readable(span) for span in made], prices=prices)
    path = tmp_path / "traces.jsonl"
    path.write_text(collector_line(made) + "\n", encoding="utf-8")
    loaded = load_trace(path, root="agent run")
    loaded.prices = prices
    check_mapping(loaded, (30 * 1.0 + 6 * 2.0) / 1e6, (100 * 0.5 + 10 * 3.0) / 1e6)
    assert loaded.as_llm_calls().cost_usd == pytest.approx((42 + 80) / 1e6)
    with pytest.raises(AssertionError, match=r"^\$0\.000122, limit \$0\.0001 \("):
        assert_llm_limits(loaded, max_cost_usd=0.0001)
    assert list(loaded.as_llm_calls()) == list(in_memory.as_llm_calls())
    assert loaded.as_llm_calls().tool_calls == in_memory.as_llm_calls().tool_calls
    assert loaded.retrievals() == in_memory.retrievals()
    with pytest.raises(
        AssertionError, match=r"call 2 is refund\(.*\) \[failed: .*\], expected cancel; "
    ):
        assert_tool_trajectory(loaded, ["lookup_order", "cancel"])


def test_retrieved_chunks_feed_faithfulness(
    provider: tuple[TracerProvider, InMemorySpanExporter], client: openai.OpenAI
) -> None:
    """The retriever span's documents, as ``retrieved_context`` gives them, are the
    chunks the judge reads, in retrieval order; the chunk a supported claim cites is a
    retrieved one, whose id ``retrieved_context`` kept."""
    tracer_provider, exporter = provider
    run_agent(tracer_provider.get_tracer("tests.steps"), client)
    run = Trace([from_readable(span) for span in exporter.get_finished_spans()])
    context = retrieved_context(run)
    response = "Shipping takes 5 days. Refunds are free."
    claims = ["Shipping takes 5 days.", "Refunds are free."]
    # The supporting chunk given by its text: the judge cites it by its number in the
    # request it reads, so a chunk sent out of order would be cited wrongly.
    judge = RagJudge(
        claims={response: claims}, verdicts={claims[0]: ("supported", "Shipping takes 5 days.")}
    )
    with FakeOpenAI(responder=judge) as server:
        config = {"model": "gpt-judge", "base_url": server.base_url, "api_key": "sk-test"}
        out = FaithfulnessEvaluator(config, options=JudgeOptions(max_attempts=1))(
            response=response, context=context
        )
        (asked,) = [r for r in server.chat_requests if judge.prompt_of(r) == "faithfulness"]
    assert (
        "<context>\n<chunk 1>\nRefunds are accepted within 30 days.\n</chunk 1>\n"
        "<chunk 2>\nShipping takes 5 days.\n</chunk 2>\n</context>"
    ) in asked.messages[-1]["content"]
    assert judge.asked == {"claims": 1, "faithfulness": 1}
    assert out["faithfulness"] == 0.5
    supported, missing = out["faithfulness_claims"]
    assert (supported["verdict"], supported["chunk"]) == ("supported", 1)
    assert context[supported["chunk"]]["id"] == "kb-2"
    assert (missing["verdict"], missing["chunk"]) == ("not_found", None)
    assert out["faithfulness_findings"] == [
        "claims not supported by the context:",
        "  - not_found: Refunds are free.",
    ]


def test_instrumented_tool_call_checked_against_the_tools_its_span_recorded(
    provider: tuple[TracerProvider, InMemorySpanExporter], fake_openai: FakeOpenAI
) -> None:
    tracer_provider, exporter = provider
    fake_openai.script(Reply.tool_call("lookup_order", {"order_id": 7}))
    client = openai.OpenAI(base_url=fake_openai.base_url, api_key="sk-test", max_retries=0)
    client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "Where is 7?"}], tools=TOOLS
    )
    run = Trace([from_readable(span) for span in exporter.get_finished_spans()])
    (call,) = run.as_llm_calls()
    assert [(t.name, t.arguments, t.id) for t in call.tool_calls] == [
        ("lookup_order", {"order_id": 7}, "call_1")
    ]
    with pytest.raises(AssertionError) as failed:
        assert_tool_calls_valid(run)
    assert str(failed.value) == (
        "1 invalid tool call:\nmodel call 1: lookup_order({\"order_id\": 7}): "
        "order_id: 7 is not of type 'string'"
    )
