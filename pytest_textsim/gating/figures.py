"""Gates and baselines over what the app and the judge did: ``app.cost_usd.sum <= 2``.

A gate over ``app.FIGURE`` aggregates one value per test whose model calls were
seen (it asked for ``llm_calls`` or replayed): ``calls``, ``tokens`` and
``cost_usd`` of that test, and ``latency_s`` of each call (so
``app.latency_s.p95`` is the 95th percentile of the calls' latencies). A
``[test=GLOB]`` filter keeps some tests. A gate over ``trace.FIGURE`` aggregates
one value per test whose spans were collected (``agent_trace`` or
``textsim_traces``): ``steps`` (spans), ``tool_calls``, ``model_calls``,
``handoffs``, ``duration_s`` (its root spans' wall time), ``error_spans`` and ``tokens`` (of the
model-call spans that recorded usage). ``judge.FIGURE.sum`` is a total of
the run: ``calls`` made, ``tokens`` (in and out), ``cost_usd``, ``cached``
judgments.

A cost is never taken as 0 when a price is unknown: a cost gate over a call
without a price fails, saying which model has none and how to add it.

Baselines track each test's ``app.cost_usd``, ``app.tokens`` and its trace's
:data:`TRACE_TRACKED` figures; a rise of more
than ``textsim_max_cost_rise`` (relative: 0.1 is 10%) is a regression
(:func:`.compare.compare`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from ..formatting import plural
from ..records import ScoreRecord
from .expressions import Gate
from .gates import GateResult, sentence_result
from .names import APP, TRACE

#: The app's figures a baseline tracks: a rise beyond textsim_max_cost_rise regresses.
TRACKED = ("cost_usd", "tokens")
#: The trace figures a baseline tracks (a duration varies too much from run to run).
TRACE_TRACKED = ("steps", "tool_calls", "handoffs", "error_spans", "tokens")


@dataclass
class Figures:
    """What the app and the judge did in a run, as gates and baselines read it."""

    #: Per test: ``calls``, ``tokens``, ``cost_usd`` (absent when a call had no
    #: price) and ``unpriced`` (calls without a price).
    tests: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    #: Per test: each call's latency in seconds (calls with a measured one).
    latencies: Mapping[str, Sequence[float]] = field(default_factory=dict)
    #: Per test with an unpriced call: why that call has no price, how to add one.
    price_notes: Mapping[str, str] = field(default_factory=dict)
    #: The judge's totals: ``calls``, ``tokens``, ``cost_usd``, ``cached``, ``unpriced``.
    judge: Mapping[str, float] = field(default_factory=dict)
    judge_price_note: str = ""  # why the judge's calls have no price
    #: Per test whose spans were collected: ``steps``, ``tool_calls``, ``model_calls``,
    #: ``handoffs``, ``duration_s``, ``error_spans`` and ``tokens`` (when a span recorded usage).
    traces: Mapping[str, Mapping[str, float]] = field(default_factory=dict)


def evaluate(gate: Gate, figures: Figures) -> GateResult:
    """The verdict of an ``app.*``, ``trace.*`` or ``judge.*`` gate."""
    owner, _, name = gate.metric.partition(".")
    if owner == "judge":
        return _judge(gate, name, figures)
    tests = {
        test: values
        for test, values in (figures.traces if owner == TRACE else figures.tests).items()
        if all(fnmatchcase(test, glob) for key, glob in gate.filters if key == "test")
    }
    if owner == TRACE:
        return _trace(gate, name, tests)
    if name == "cost_usd":
        unpriced = {test: values for test, values in tests.items() if values.get("unpriced")}
        if unpriced:
            calls = int(sum(values["unpriced"] for values in unpriced.values()))
            test = next(iter(unpriced))
            note = figures.price_notes.get(test, "no price")
            return GateResult(
                gate,
                None,
                False,
                f"cost unknown: {plural(calls, 'call')} of {plural(len(unpriced), 'test')} "
                f"without a price, e.g. in {test}: {note}",
            )
    if name == "latency_s":
        values = [s for test in tests for s in figures.latencies.get(test, ())]
        unit = "call"
    else:
        values = [v[name] for v in tests.values() if name in v]
        unit = "test"

    def nothing() -> str:
        if name == "latency_s" and tests:
            return (
                f"no latency was measured for the calls of {plural(len(tests), 'test')} "
                "(replayed from cassettes recorded without timings)"
            )
        where = "" if not gate.filters else " matching " + ",".join(
            f"{k}={v}" for k, v in gate.filters
        )
        return (
            f"no test{where} made a model call that pytest-textsim saw (the app's figures "
            "come from tests that ask for llm_calls or are marked textsim_replay)"
        )

    return sentence_result(gate, values, 0, 0, nothing, unit=unit)


def _trace(gate: Gate, name: str, tests: Mapping[str, Mapping[str, float]]) -> GateResult:
    values = [v[name] for v in tests.values() if name in v]

    def nothing() -> str:
        where = "" if not gate.filters else " matching " + ",".join(
            f"{k}={v}" for k, v in gate.filters
        )
        if tests and name == "tokens":
            return (
                f"none of the model-call spans of {plural(len(tests), 'test')}{where} "
                "recorded token usage"
            )
        return (
            f"no test{where} produced spans that pytest-textsim collected (the trace "
            "figures come from tests that ask for agent_trace, or all with textsim_traces)"
        )

    return sentence_result(gate, values, 0, 0, nothing, unit="test")


def _judge(gate: Gate, name: str, figures: Figures) -> GateResult:
    judge = figures.judge
    if name == "cost_usd" and judge.get("unpriced"):
        calls = int(judge["unpriced"])
        return GateResult(
            gate,
            None,
            False,
            f"cost unknown: {plural(calls, 'judge call')} without a price: "
            f"{figures.judge_price_note or 'no price for the judge model'}",
        )
    value = float(judge.get(name, 0.0))
    result = sentence_result(gate, [value], 0, 0, lambda: "", unit="total")
    detail = {
        "calls": "judge calls made in this run",
        "tokens": "judge tokens in and out in this run",
        "cost_usd": "judge spend in this run, in USD",
        "cached": "cached judgments used in this run",
    }[name]
    return GateResult(gate, result.value, result.passed, detail, aggregate=result.value)


def baseline_records(figures: Figures) -> list[ScoreRecord]:
    """Each test's tracked figures (:data:`TRACKED`) as records a baseline saves and
    compares: evaluator ``app``, metric ``app.cost_usd`` or ``app.tokens``; evaluator
    ``trace``, metric ``trace.tokens``..."""
    records = []
    for owner, per_test, tracked in (
        (APP, figures.tests, TRACKED),
        (TRACE, figures.traces, TRACE_TRACKED),
    ):
        for test, values in per_test.items():
            for name in tracked:
                if name in values:
                    records.append(
                        ScoreRecord(
                            owner, f"{owner}.{name}", float(values[name]), None, None, nodeid=test
                        )
                    )
    return records
