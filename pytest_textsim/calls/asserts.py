"""Assertions over what the app did: its tool calls, their trajectory, their validity, and
the calls' count, tokens, latency and cost. Each takes the ``llm_calls`` fixture (or any
sequence of :class:`~pytest_textsim.calls.model.LLMCall`, or a trace: ``agent_trace`` or
a loaded one, whose model-call spans are its calls and whose tool spans its tool
calls) first and raises an
``AssertionError`` saying what was expected and what the app did::

    tool refund was not called; the app called: lookup_order({"order_id": "A1"})
    3 calls, limit 2 (assert_llm_limits(max_calls=2))

The trajectory modes are agentevals' (``create_trajectory_match_evaluator``):
``strict`` (the same tool calls in the same order), ``unordered`` (the same calls in
any order), ``subset`` (the app called nothing beyond the expected calls) and
``superset`` (the app made at least the expected calls); each expected call is
matched to one distinct call of the app, in order, the first that matches.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Literal, Union

from ..formatting import plural
from .model import CallSource, LLMCall, LLMCalls, ToolCall

#: An expected step of a trajectory: a tool's name, or its name and arguments.
Step = Union[str, tuple[str, Mapping[str, Any]]]
MODES = ("strict", "unordered", "subset", "superset")
ARGUMENT_MODES = ("exact", "subset", "superset", "ignore")
#: Keys that make an ``arguments=`` dict a JSON Schema rather than a subset of the arguments.
_SCHEMA_MARKS = ("$schema", "properties", "required", "additionalProperties")


#: What the tool and limit assertions take: the calls, or a trace.
Calls = Union[Sequence[LLMCall], CallSource]


def _calls(llm_calls: Calls, caller: str) -> Sequence[LLMCall]:
    """The calls themselves, or a trace's (:meth:`as_llm_calls`); a trace with no
    spans fails for ``caller`` (a check over nothing collected passes nothing)."""
    __tracebackhide__ = True
    if isinstance(llm_calls, Sequence):
        return llm_calls
    convert = getattr(llm_calls, "as_llm_calls", None)
    if not callable(convert):
        raise TypeError(
            f"expected the llm_calls fixture, a list of LLMCall or a trace, got "
            f"{type(llm_calls).__name__}"
        )
    check = getattr(llm_calls, "check_spans", None)
    if callable(check):
        check(caller)
    calls: Sequence[LLMCall] = convert()
    return calls


def _arguments(arguments: Any, caller: str) -> Mapping[str, Any] | None:
    """``arguments=`` as a dict: a JSON object's text (the arguments as the model
    sends them) is parsed; anything else but a dict is a TypeError."""
    if arguments is None or isinstance(arguments, Mapping):
        return arguments
    if isinstance(arguments, (str, bytes)):
        try:
            parsed = json.loads(arguments)
        except ValueError as exc:
            raise TypeError(
                f"{caller}(arguments=...): a string must be a JSON object's text, "
                f"and {arguments!r} is not JSON ({exc})"
            ) from None
        if isinstance(parsed, dict):
            return parsed
    raise TypeError(
        f"{caller}(arguments=...) expects a dict (or a JSON object's text), "
        f"got {type(arguments).__name__}: {arguments!r}"
    )


def _tool_calls(llm_calls: Sequence[LLMCall]) -> list[ToolCall]:
    if isinstance(llm_calls, LLMCalls):  # a trace's are its tool spans
        return llm_calls.tool_calls
    return [tool for call in llm_calls for tool in call.tool_calls]


def _called(llm_calls: Sequence[LLMCall]) -> str:
    tools = _tool_calls(llm_calls)
    if not tools:
        return f"the app called no tool ({plural(len(llm_calls), 'model call')})"
    return "the app called: " + ", ".join(tool.describe() for tool in tools)


def _is_schema(arguments: Mapping[str, Any]) -> bool:
    return arguments.get("type") == "object" and any(key in arguments for key in _SCHEMA_MARKS)


def _contains(actual: Any, expected: Any) -> bool:
    """Whether ``actual`` holds ``expected``: dicts key by key (recursively), else equal."""
    if isinstance(expected, Mapping):
        return isinstance(actual, Mapping) and all(
            key in actual and _contains(actual[key], value) for key, value in expected.items()
        )
    return bool(actual == expected)


def _schema_errors(arguments: Any, given: Mapping[str, Any]) -> list[str]:
    import jsonschema

    schema = dict(given)

    validator_class = jsonschema.validators.validator_for(schema)
    try:
        validator_class.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return [f"the schema is not valid: {exc.message}"]
    errors = sorted(validator_class(schema).iter_errors(arguments), key=lambda e: list(e.path))
    return [
        f"{'/'.join(str(p) for p in error.path) or '(root)'}: {error.message}" for error in errors
    ]


def _matches(tool: ToolCall, name: str, arguments: Mapping[str, Any] | None) -> bool:
    if tool.name != name:
        return False
    if arguments is None:
        return True
    if tool.arguments is None:
        return False
    if _is_schema(arguments):
        return not _schema_errors(tool.arguments, arguments)
    return _contains(tool.arguments, arguments)


def assert_tool_called(
    llm_calls: Calls,
    name: str,
    arguments: Mapping[str, Any] | str | None = None,
    times: int | None = None,
) -> list[ToolCall]:
    """The app's model asked for tool ``name`` (with ``arguments``, ``times`` times).

    ``arguments`` is either a subset of the call's arguments (``{"order_id": "A1"}``;
    nested dicts are subsets too; or the same as a JSON object's text) or a JSON Schema
    the arguments must validate against
    (a dict with ``"type": "object"`` and ``properties`` or ``required``). Without
    ``times``, at least once. Returns the matching tool calls.

    >>> assert_tool_called(llm_calls, "lookup_order", {"order_id": "A1"}, times=1)  # doctest: +SKIP
    """
    __tracebackhide__ = True  # pytest shows the test's line, not ours
    llm_calls = _calls(llm_calls, "assert_tool_called")
    arguments = _arguments(arguments, "assert_tool_called")
    if times is not None and (isinstance(times, bool) or not isinstance(times, int) or times < 0):
        raise ValueError(f"assert_tool_called(times=...) expects a count >= 0, got {times!r}")
    matching = [tool for tool in _tool_calls(llm_calls) if _matches(tool, name, arguments)]
    if (times is None and matching) or (times is not None and len(matching) == times):
        return matching
    what = f"tool {name}"
    if arguments is not None:
        kind = "arguments matching the schema" if _is_schema(arguments) else "arguments"
        what += f" with {kind} {json.dumps(arguments, ensure_ascii=False, sort_keys=True)}"
    if times is None:
        message = f"{what} was not called; {_called(llm_calls)}"
    else:
        message = (
            f"{what} was called {plural(len(matching), 'time')}, expected {times}; "
            f"{_called(llm_calls)}"
        )
    if arguments is not None and _is_schema(arguments):
        for tool in _tool_calls(llm_calls):
            if tool.name == name and tool.arguments is not None:
                message += f"\n{tool.describe()}: " + "; ".join(
                    _schema_errors(tool.arguments, arguments)
                )
    raise AssertionError(message)


def assert_tool_not_called(llm_calls: Calls, name: str) -> None:
    """The app's model never asked for tool ``name``."""
    __tracebackhide__ = True  # pytest shows the test's line, not ours
    llm_calls = _calls(llm_calls, "assert_tool_not_called")
    calls = [tool for tool in _tool_calls(llm_calls) if tool.name == name]
    if calls:
        raise AssertionError(
            f"tool {name} was called {plural(len(calls), 'time')}, expected never; "
            f"{_called(llm_calls)}"
        )


# -- trajectories ---------------------------------------------------------------------


def _steps(expected: Sequence[Step]) -> list[tuple[str, Mapping[str, Any] | None]]:
    if isinstance(expected, (str, bytes)) or not isinstance(expected, Sequence):
        raise ValueError(
            "assert_tool_trajectory expects a list of tool names or (name, arguments) "
            f"pairs, got {expected!r}"
        )
    steps: list[tuple[str, Mapping[str, Any] | None]] = []
    for step in expected:
        if isinstance(step, str):
            steps.append((step, None))
        elif (
            isinstance(step, (tuple, list))
            and len(step) == 2
            and isinstance(step[0], str)
            and isinstance(step[1], Mapping)
        ):
            steps.append((step[0], step[1]))
        else:
            raise ValueError(
                f"assert_tool_trajectory: step {step!r} is neither a tool name nor a "
                "(name, arguments) pair"
            )
    return steps


Arguments = Union[Mapping[str, Any], None]


def _argument_matcher(mode: str) -> Callable[[Arguments, Arguments], bool]:
    """agentevals' tool_args_match_mode: ``matcher(first, second)``; ``subset``: every
    argument of ``first`` is in ``second``, ``superset``: every one of ``second`` in ``first``."""

    def exact(first: Arguments, second: Arguments) -> bool:
        return first is not None and second is not None and dict(first) == dict(second)

    def subset(first: Arguments, second: Arguments) -> bool:
        return (
            first is not None
            and second is not None
            and all(key in second and second[key] == value for key, value in first.items())
        )

    def superset(first: Arguments, second: Arguments) -> bool:
        return subset(second, first)

    def ignore(first: Arguments, second: Arguments) -> bool:
        return True

    matchers = {"exact": exact, "subset": subset, "superset": superset, "ignore": ignore}
    return matchers[mode]


def _step_text(name: str, arguments: Mapping[str, Any] | None) -> str:
    if arguments is None:
        return name
    return f"{name}({json.dumps(arguments, ensure_ascii=False, sort_keys=True)})"


def _first_unmatched(
    wanted: Sequence[Any], pool: Sequence[Any], same: Callable[..., bool]
) -> int | None:
    """agentevals' superset check: each wanted item takes the first unused item of
    ``pool`` that ``same(wanted, item)``; the index of the first left without one."""
    used: set[int] = set()
    for index, item in enumerate(wanted):
        found = next(
            (i for i, other in enumerate(pool) if i not in used and same(item, other)), None
        )
        if found is None:
            return index
        used.add(found)
    return None


def assert_tool_trajectory(
    llm_calls: Calls,
    expected: Sequence[Step],
    mode: Literal["strict", "unordered", "subset", "superset"] = "strict",
    arguments: Literal["exact", "subset", "superset", "ignore"] = "exact",
) -> None:
    """The app's tool calls follow ``expected``: tool names, or ``(name, arguments)``.

    ``mode``: ``strict`` -- the same calls in the same order; ``unordered`` -- the
    same calls in any order; ``subset`` -- no call beyond the expected ones;
    ``superset`` -- at least the expected ones. A step given as a bare name matches
    any arguments; a ``(name, arguments)`` step compares them by ``arguments``
    (agentevals' ``tool_args_match_mode``): ``exact``, ``subset`` (the app gave only
    expected arguments), ``superset`` (the app gave at least the expected ones) or
    ``ignore``. A failure shows the first difference.

    >>> assert_tool_trajectory(llm_calls, ["lookup_order", "refund"])  # doctest: +SKIP
    """
    __tracebackhide__ = True  # pytest shows the test's line, not ours
    llm_calls = _calls(llm_calls, "assert_tool_trajectory")
    if mode not in MODES:
        raise ValueError(
            f"assert_tool_trajectory(mode=...) must be one of {', '.join(MODES)}, got {mode!r}"
        )
    if arguments not in ARGUMENT_MODES:
        raise ValueError(
            f"assert_tool_trajectory(arguments=...) must be one of "
            f"{', '.join(ARGUMENT_MODES)}, got {arguments!r}"
        )
    steps = _steps(expected)
    tools = _tool_calls(llm_calls)
    compare = _argument_matcher(arguments)

    def same(step: tuple[str, Mapping[str, Any] | None], tool: ToolCall) -> bool:
        name, args = step
        return tool.name == name and (args is None or compare(tool.arguments, args))

    wanted = ", ".join(_step_text(*step) for step in steps) or "no tool call"
    head = f"tool trajectory ({mode}) differs from [{wanted}]"
    if mode == "strict":
        for index, (step, tool) in enumerate(zip(steps, tools), start=1):
            if not same(step, tool):
                raise AssertionError(
                    f"{head}: call {index} is {tool.describe()}, expected "
                    f"{_step_text(*step)}; {_called(llm_calls)}"
                )
        if len(steps) != len(tools):
            if len(tools) > len(steps):
                detail = f"an extra call {tools[len(steps)].describe()}"
            else:
                detail = f"no call {len(tools) + 1}, expected {_step_text(*steps[len(tools)])}"
            raise AssertionError(
                f"{head}: {plural(len(tools), 'tool call')}, expected {len(steps)} "
                f"({detail}); {_called(llm_calls)}"
            )
        return
    if mode in ("unordered", "superset"):
        missing = _first_unmatched(steps, tools, same)
        if missing is not None:
            raise AssertionError(
                f"{head}: no call matches {_step_text(*steps[missing])}; {_called(llm_calls)}"
            )
    if mode in ("unordered", "subset"):
        # The app's calls against the expected ones; as in agentevals, the argument
        # matcher then sees the expected arguments first.
        def expected_by(tool: ToolCall, step: tuple[str, Mapping[str, Any] | None]) -> bool:
            name, args = step
            return tool.name == name and (args is None or compare(args, tool.arguments))

        extra = _first_unmatched(tools, steps, expected_by)
        if extra is not None:
            raise AssertionError(
                f"{head}: the call {tools[extra].describe()} is not expected; {_called(llm_calls)}"
            )


# -- validity and limits ------------------------------------------------------------


#: Where a trace's model-call spans record the tools offered, for the error that says
#: none does.
_DEFINITIONS = "gen_ai.tool.definitions, llm.tools.N.tool.json_schema, llm.request.functions.N"


def _given_tools(tools: Any) -> dict[str, dict[str, Any]]:
    """``tools=`` as ``{name: parameters schema}``: that mapping, or the tools as
    passed to the client (chat, Responses or Anthropic form)."""
    from .parse import offered_tools

    if isinstance(tools, Mapping):
        if all(isinstance(k, str) and isinstance(v, Mapping) for k, v in tools.items()):
            return {name: dict(schema) for name, schema in tools.items()}
    elif isinstance(tools, Sequence) and not isinstance(tools, (str, bytes)):
        found = offered_tools([dict(t) if isinstance(t, Mapping) else t for t in tools])
        if found or not tools:
            return found
    raise TypeError(
        "assert_tool_calls_valid(tools=...) expects the tools offered to the model, as "
        "passed to the client ([{\"type\": \"function\", \"function\": {\"name\": ..., "
        "\"parameters\": {...}}}]) or as {name: parameters schema}, got "
        f"{type(tools).__name__}"
    )


def _tool_problems(where: str, tool: ToolCall, offered: Mapping[str, Any] | None) -> list[str]:
    if offered is None:
        return [f"{where}: the tools offered were not recorded (pass them as tools=...)"]
    if tool.name not in offered:
        names = ", ".join(sorted(offered)) or "none"
        return [f"{where}: no such tool was offered (offered: {names})"]
    if tool.arguments is None:
        return [f"{where}: {tool.error}"]
    return [f"{where}: {error}" for error in _schema_errors(tool.arguments, offered[tool.name])]


def assert_tool_calls_valid(
    llm_calls: Calls,
    tools: Sequence[Mapping[str, Any]] | Mapping[str, Mapping[str, Any]] | None = None,
) -> None:
    """Every tool call names a tool its request offered, and its arguments parse as a
    JSON object that validates against that tool's parameters schema.

    On a trace: the tool calls its model-call spans recorded, each against the tools
    that span recorded as offered, and the tool spans that answer none of those
    calls, each against the tools of the last model call before it. ``tools`` (as
    passed to the client, or ``{name: parameters schema}``) replaces the tools offered
    for every check: for a trace whose spans recorded none, which is an error otherwise.
    """
    __tracebackhide__ = True  # pytest shows the test's line, not ours
    calls = _calls(llm_calls, "assert_tool_calls_valid")
    given = None if tools is None else _given_tools(tools)
    runs = calls.unrequested_runs() if isinstance(calls, LLMCalls) else []
    checks: list[tuple[str, ToolCall, Mapping[str, Any] | None]] = []
    for number, call in enumerate(calls, start=1):
        offered = given if given is not None else call.tools if call.tools_known else None
        checks += [(f"model call {number}: {tool.describe()}", tool, offered)
                   for tool in call.tool_calls]  # fmt: skip
    numbers = {id(tool): n for n, tool in enumerate(_tool_calls(calls), start=1)}
    for tool, source in runs:
        offered = given if given is not None else None if source is None else source.tools
        where = f"tool run {numbers.get(id(tool), '?')}: {tool.describe()}"
        checks.append((where, tool, offered))
    if checks and given is None and not any(call.tools_known for call in calls):
        raise ValueError(
            f"assert_tool_calls_valid: the trace records no tool definitions ({_DEFINITIONS} "
            "on its model-call spans), so there is nothing to check its "
            f"{plural(len(checks), 'tool call')} against: pass the tools the app offered, "
            "assert_tool_calls_valid(trace, tools=[...])"
        )
    problems = [p for where, tool, offered in checks for p in _tool_problems(where, tool, offered)]
    if problems:
        raise AssertionError(
            f"{plural(len(problems), 'invalid tool call')}:\n" + "\n".join(problems)
        )


def assert_llm_limits(
    llm_calls: Calls,
    max_calls: int | None = None,
    max_tokens: int | None = None,
    max_latency_s: float | None = None,
    max_cost_usd: float | None = None,
) -> None:
    """The calls stay within limits: their number, their tokens (input plus output,
    all calls), the slowest call's latency, and their cost in USD.

    A cost limit over a call with no known price fails, saying how to add one; a
    latency limit over calls with no measured latency (replayed from a cassette
    recorded before latency was stored) fails too.
    """
    __tracebackhide__ = True  # pytest shows the test's line, not ours
    llm_calls = _calls(llm_calls, "assert_llm_limits")
    given = {"max_calls": max_calls, "max_tokens": max_tokens,
             "max_latency_s": max_latency_s, "max_cost_usd": max_cost_usd}  # fmt: skip
    for name, value in given.items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or value < 0):  # fmt: skip
            raise ValueError(f"assert_llm_limits({name}=...) expects a number >= 0, got {value!r}")
    problems = []

    def over(figure: str, limit: str, name: str) -> None:
        problems.append(f"{figure}, limit {limit} (assert_llm_limits({name}={given[name]!r}))")

    calls = list(llm_calls)
    if max_calls is not None and len(calls) > max_calls:
        over(plural(len(calls), "call"), str(max_calls), "max_calls")
    if max_tokens is not None:
        tokens = sum(call.tokens or 0 for call in calls)
        if tokens > max_tokens:
            over(f"{tokens} tokens", str(max_tokens), "max_tokens")
    if max_latency_s is not None and calls:
        measured = [c for c in calls if c.latency_s is not None]
        if len(measured) < len(calls):
            problems.append(
                f"latency unknown for {plural(len(calls) - len(measured), 'call')} (replayed "
                "from a cassette recorded without timings: record it again with "
                "--textsim-replay=rewrite) (assert_llm_limits(max_latency_s=...))"
            )
        slowest = max(measured, key=lambda c: c.latency_s or 0.0, default=None)
        if slowest is not None and (slowest.latency_s or 0.0) > max_latency_s:
            index = calls.index(slowest) + 1
            over(f"call {index} took {slowest.latency_s:.3f}s", f"{max_latency_s:g}s",
                 "max_latency_s")  # fmt: skip
    if max_cost_usd is not None:
        unpriced = [(i, c) for i, c in enumerate(calls, start=1) if c.cost_usd is None]
        if unpriced:
            index, call = unpriced[0]
            problems.append(
                f"cost unknown: call {index} ({call.api} {call.model or '?'}) has no price: "
                f"{call.price_note} (assert_llm_limits(max_cost_usd={max_cost_usd!r}))"
            )
        else:
            cost = sum(c.cost_usd or 0.0 for c in calls)
            if cost > max_cost_usd:
                over(f"${cost:.6f}".rstrip("0").rstrip("."), f"${max_cost_usd:g}", "max_cost_usd")
    if problems:
        raise AssertionError("; ".join(problems))
