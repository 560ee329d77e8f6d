"""Shared plumbing for evaluators: call shape, input and threshold validation, pass/fail."""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping, Sequence
from numbers import Real
from typing import Any, Callable, TypeVar

# The one threshold check, shared with the plugin's fixtures, helpers and markers.
from ..converters import SACRE_SCALE_NOTE as SACRE_SCALE_NOTE
from ..converters import check_threshold as check_threshold
from ..formatting import with_hint
from ..jsonl import surrogate_problem

_MISSING: Any = object()

_Call = TypeVar("_Call", bound=Callable[..., Any])


def keyword_call(call: _Call) -> _Call:
    """Give an evaluator's ``__call__(self, *args, text=_MISSING, **unknown)`` its public signature.

    Evaluators take their texts as keywords only, like azure-ai-evaluation's.
    Python's own error for a positional or misspelt argument names the
    function's qualified name (a private base class, ``_TextPairEvaluator``)
    and not the keywords, so ``__call__`` collects them in ``*args`` and
    ``**unknown`` and raises :func:`bad_call`. The signature set here, without
    those two, is what ``help()``, ``inspect.signature`` and
    :func:`~pytest_textsim.score_rows` see: keywords defaulting to ``_MISSING``
    are required, the others optional. The function itself is returned as it
    is, so the call costs nothing more.
    """
    signature = inspect.signature(call)
    params = [
        p.replace(default=p.empty) if p.default is _MISSING else p
        for p in signature.parameters.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    call.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    return call


def call_keywords(evaluator: object) -> tuple[list[str], list[str]]:
    """The required and the optional keywords of ``evaluator``'s ``__call__``."""
    params = inspect.signature(evaluator).parameters.values()  # type: ignore[arg-type]
    keywords = [p for p in params if p.kind is p.KEYWORD_ONLY]
    return (
        [p.name for p in keywords if p.default is p.empty],
        [p.name for p in keywords if p.default is not p.empty],
    )


def called_as(evaluator: object) -> str:
    """How ``evaluator`` is called: ``evaluator(response=..., ground_truth=...)``."""
    required, optional = call_keywords(evaluator)
    shape = f"evaluator({', '.join(f'{name}=...' for name in required)})"
    if optional:
        shape += ", optionally " + ", ".join(f"{name}=..." for name in optional)
    return shape


def bad_call(
    evaluator: object, args: tuple[object, ...], unknown: Mapping[str, object]
) -> TypeError:
    """The error for positional arguments or unknown keywords, in the evaluator's own words.

    Raised only after the call has failed, so none of this work is on the
    path of a good call.
    """
    name = type(evaluator).__name__
    shape = called_as(evaluator)
    if args:
        count = f"{len(args)} positional argument{'s' if len(args) != 1 else ''}"
        return TypeError(f"{name} is called with keywords: {shape}; got {count}")
    required, optional = call_keywords(evaluator)
    named = [with_hint(keyword, required + optional) for keyword in unknown]
    noun = "an unexpected keyword argument" if len(named) == 1 else "unexpected keyword arguments"
    return TypeError(f"{name} got {noun} {', '.join(named)}; it is called with keywords: {shape}")


def call_problems(evaluator: object, kwargs: Mapping[str, object]) -> list[str]:
    """What is wrong with calling ``evaluator(**kwargs)``, without calling it.

    The same checks, in the same words, as the call itself makes: lets a
    batch report every bad row before any row costs a judge call.
    """
    required, optional = call_keywords(evaluator)
    problems = []
    for keyword in kwargs:
        if keyword not in required and keyword not in optional:
            problems.append(
                f"unexpected keyword argument {with_hint(keyword, required + optional)}"
            )
    for keyword in required + optional:
        value = kwargs.get(keyword, _MISSING)
        if keyword in optional and (value is _MISSING or value is None):
            continue
        # An evaluator with reference_lists = True takes a list of references too.
        if keyword == "ground_truth" and getattr(evaluator, "reference_lists", False):
            problem = references_problem(keyword, value)
        else:
            problem = text_problem(keyword, value)
        if problem:
            problems.append(problem)
    return problems


def check_number(name: str, value: object) -> float:
    """Return ``value`` if it is a finite real number (not a bool), else ``ValueError``.

    For numeric options such as METEOR's ``alpha``; thresholds go through
    :func:`check_threshold`, which also checks the metric's range.
    """
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    number = value if isinstance(value, int) else float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return number


def check_flag(name: str, value: object) -> bool:
    """``value`` if it is ``True`` or ``False``, else a ``ValueError`` naming ``name``.

    ``bool("no")`` is ``True``: accepting any value would make ``lowercase="no"``
    lowercase here while a marker's ``"no"`` means no. Markers and helper options
    convert their text (yes/no, true/false) before it reaches the evaluators.
    """
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value


def check_weights(value: object, name: str = "weights") -> tuple[float, ...]:
    """N-gram weights (BLEU's): a non-empty sequence of finite numbers, as a tuple."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise ValueError(f"{name} must be a sequence of numbers such as (0.5, 0.5), got {value!r}")
    weights = tuple(check_number(name, w) for w in value)
    if not weights:
        raise ValueError(f"{name} must name at least one n-gram order, got {value!r}")
    return weights


def text_problem(name: str, value: object) -> str:
    """Why ``value`` is not a usable text for the keyword ``name`` ("" when it is)."""
    if isinstance(value, str):
        problem = surrogate_problem(value)
        return f"'{name}' has {problem}" if problem else ""
    if value is _MISSING:
        return f"missing required keyword argument: '{name}'"
    return f"'{name}' must be str, got {type(value).__name__}" + (
        " (decode bytes first)" if isinstance(value, (bytes, bytearray)) else ""
    )


def check_text(evaluator: str, name: str, value: object) -> str:
    """Return ``value`` if it is Unicode text; ``TypeError`` for another type,
    ``ValueError`` (naming the position) for a lone surrogate."""
    if isinstance(value, str):
        if value.isascii():
            return value
        problem = surrogate_problem(value)
        if problem:
            raise ValueError(f"{evaluator}(): '{name}' has {problem}")
        return value
    # "Name() missing required keyword argument", as Python words it; "Name(): 'x' must be".
    raise TypeError(f"{evaluator}(){' ' if value is _MISSING else ': '}{text_problem(name, value)}")


def references_problem(name: str, value: object) -> str:
    """Why ``value`` is not one reference or a non-empty list of them ("" when it is)."""
    if not isinstance(value, (list, tuple)):
        return text_problem(name, value)
    if not value:
        return f"'{name}' is an empty list: give at least one reference"
    for index, item in enumerate(value):
        if not isinstance(item, str):
            return f"{name}[{index}]: expected a string, got {item!r}"
        problem = surrogate_problem(item)
        if problem:
            return f"{name}[{index}] has {problem}"
    return ""


def as_references(value: str | Sequence[str]) -> str | tuple[str, ...]:
    """A ground truth already checked (:func:`references_problem`) as a
    :class:`~.tokenize.TextPair` takes it: a string, or a tuple of two or more."""
    if isinstance(value, str):
        return value
    return value[0] if len(value) == 1 else tuple(value)


def check_references(evaluator: str, name: str, value: object) -> str | tuple[str, ...]:
    """``value`` as one reference (a string) or a tuple of two or more.

    A list or tuple of one reference is that string: nltk, rouge-score and
    sacreBLEU score one reference in a list as they score it alone. An empty
    list, or an element that is not a string, is an error naming the argument
    and the position: ``ground_truth[2]: expected a string, got 3``.
    """
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        return check_text(evaluator, name, value)
    problem = references_problem(name, value)
    if problem:
        bad_type = problem.startswith(f"{name}[") and "expected a string" in problem
        raise (TypeError if bad_type else ValueError)(f"{evaluator}(): {problem}")
    return as_references(value)


def check_max_chars(max_chars: object, default: int) -> int:
    """``max_chars`` of an evaluator (``None``: ``default``), a whole number >= 1."""
    if max_chars is None:
        return default
    if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
        raise ValueError(f"max_chars must be a whole number >= 1, got {max_chars!r}")
    return max_chars


def check_size(
    evaluator: str, key: str, texts: Mapping[str, str], max_chars: int, cost: str
) -> None:
    """Refuse a text over ``max_chars`` characters, naming it, the limit, why (``cost``)
    and how to raise it: a hostile or runaway response must not stall a run."""
    for name, text in texts.items():
        if len(text) > max_chars:
            raise ValueError(
                f"{evaluator}(): {name} is {len(text):,} characters, over the limit of "
                f"{max_chars:,} ({cost}); raise max_chars to score it anyway: max_chars= on "
                f"the class, fixture, helper or marker, or --option {key}.max_chars=N for "
                "textsim score"
            )


def result(passed: bool) -> str:
    return "pass" if passed else "fail"
