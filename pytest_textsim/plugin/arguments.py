"""A fixture's or helper's call mapped onto the metric's texts and options.

The single forms (``bleu(...)``, ``assert_bleu(...)`` and their awaitable forms)
and the batch forms (``bleu.each(...)``, ``assert_each_bleu(...)``) take the same
arguments: the texts, positionally or by name, then the metric's options; a
keyword the metric does not take is named with the closest one it does.
"""

from __future__ import annotations

from typing import Any

from ..catalog import Metric
from ..conversation.messages import parse_conversation
from ..evaluator import chunks_problem, plain, plain_texts, references_problem
from ..formatting import with_hint
from ..traces.trajectory import trajectory_steps


def unknown_keywords(metric: Metric, callee: str, unknown: list[str]) -> TypeError:
    """The error for keywords ``callee`` (a fixture or helper of ``metric``) does not
    take: each named, with the closest valid keyword, then the texts and keywords it takes."""
    names = (*metric.inputs, *metric.optional_inputs)
    valid = [*names, "threshold", *metric.options]
    named = [with_hint(key, valid) for key in unknown]
    noun = "keyword argument" if len(named) == 1 else "keyword arguments"
    texts = ", ".join(names)
    extra = ", ".join(["threshold", *metric.options])
    return TypeError(
        f"{callee}() got unexpected {noun} {', '.join(named)}; it takes the texts "
        f"{texts} and the keywords {extra}"
    )


def call_arguments(
    metric: Metric, callee: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A fixture/helper call's ``(texts given, options)``: positional arguments named,
    unknown keywords refused (``TypeError`` naming ``callee``), required options (a
    rubric's criteria, which may come positionally after the texts) moved to the options."""
    __tracebackhide__ = True
    # Required options (a rubric's criteria) may come positionally after the texts.
    names = (*metric.inputs, *metric.leading_options, *metric.optional_inputs)
    if len(args) > len(names):
        raise TypeError(
            f"{callee}() takes {len(names)} arguments ({', '.join(names)}), got {len(args)}"
        )
    given: dict[str, Any] = dict(zip(names, args))
    options: dict[str, Any] = {}
    for key, value in kwargs.items():
        if key in names:
            if key in given:
                raise TypeError(f"{callee}() got multiple values for {key!r}")
            given[key] = value
        else:
            options[key] = value
    unknown = [key for key in options if key not in metric.options]
    if unknown:
        # Named before any "missing argument": bleu(prediction=..., reference=...) is
        # two wrong names, not a missing response.
        raise unknown_keywords(metric, callee, unknown)
    for name in metric.leading_options:
        if name in given:
            options[name] = given.pop(name)
        elif name not in options and metric.builtin_variants is None:
            # With built-in variants, the marker may name one: checked in prepare.
            raise TypeError(f"{callee}() missing required argument: {name!r}")
    return given, options


def split_arguments(
    metric: Metric, callee: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Map a fixture/helper call onto ``(inputs, options)``; ``TypeError`` if it does not fit."""
    __tracebackhide__ = True
    given, options = call_arguments(metric, callee, args, kwargs)
    names = (*metric.inputs, *metric.optional_inputs)
    inputs: dict[str, Any] = {}
    turns = metric.takes_turns and given.get("conversation") is not None
    for name in names:
        if name not in given:
            if name in metric.inputs and not turns:
                raise TypeError(f"{callee}() missing required argument: {name!r}")
            continue
        value = given[name]
        if value is None and name in metric.optional_inputs:
            continue  # query=None: the optional text is absent, as in the evaluator classes
        if metric.reference_lists and name == "ground_truth" and isinstance(value, (list, tuple)):
            problem = references_problem(name, value)
            if problem:
                raise (ValueError if "empty list" in problem else TypeError)(
                    f"{callee}(): {problem}"
                )
            inputs[name] = plain_texts(value)
            continue
        if name == "context" and isinstance(value, (list, tuple)):
            # Chunks in retrieval order: strings, or dicts with text and optional id/source.
            problem = chunks_problem(name, value)
            if problem:
                raise (ValueError if "empty" in problem else TypeError)(f"{callee}(): {problem}")
            inputs[name] = list(value)
            continue
        if name == "conversation":
            # Chat messages (or {"messages": [...]}), each bad one named by its index.
            try:
                parse_conversation(value, name)
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"{callee}(): {exc}") from None
            inputs[name] = value
            continue
        if name == "trace":
            # A Trace, or steps as data: kept as steps, which records and reports hold.
            try:
                inputs[name] = trajectory_steps(value, name)
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"{callee}(): {exc}") from None
            continue
        if not isinstance(value, str):
            # Given, but not text: often an app that returned None. Say that, not "missing".
            got = "None" if value is None else type(value).__name__
            takes_list = metric.reference_lists and name == "ground_truth"
            lists = " or a list of strings" if takes_list else ""
            if name == "context":
                lists = " or a list of chunks"
            raise TypeError(f"{callee}(): {name!r} must be a string{lists}, got {got}")
        inputs[name] = plain(value)
    return inputs, options
