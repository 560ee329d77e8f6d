"""What a metric's helpers and fixture take and return, described from its catalog entry.

The helpers (``assert_bleu``, ``assert_bleu_async``, ``assert_each_bleu``) are
made at run time from the catalog (:mod:`pytest_textsim.plugin.helpers`); their
``__signature__`` and ``__doc__`` come from here, so ``help()`` and
``inspect.signature`` show the real parameters. ``tools/codegen.py`` writes the
same signatures into ``pytest_textsim/__init__.pyi``, with one ``Protocol`` per
fixture, for type checkers and IDEs: one description, read by both.

Annotations are strings, as the stub spells them: ``BleuResult`` is the
``TypedDict`` of the stub (at run time the output is a plain ``dict``).
"""

from __future__ import annotations

import inspect
import textwrap
from typing import Any, Callable

from ..catalog import Metric
from .arguments import unknown_keywords

#: The forms of a metric's helper: ``assert_bleu``, ``assert_bleu_async``, ``assert_each_bleu``.
SINGLE, ASYNC, EACH = "single", "async", "each"

_POSITIONAL = inspect.Parameter.POSITIONAL_OR_KEYWORD
_KEYWORD = inspect.Parameter.KEYWORD_ONLY
#: A batch form's texts: one per case; its first may be case dicts instead.
_TEXTS = "Sequence[str | None] | None"
_ROWS = "Sequence[str | None] | Sequence[Any] | None"
#: A batch's references where a case may have several: a string or a list of them each.
_REFERENCES = "Sequence[str | list[str] | None] | None"


def type_name(metric: Metric, kind: str) -> str:
    """``BleuFixture`` / ``BleuResult`` (``kind``: ``"Fixture"`` or ``"Result"``): the
    stub's names for what fixture ``bleu`` is and what it returns."""
    return "".join(part.capitalize() for part in metric.fixture.split("_")) + kind


def option_type(metric: Metric, name: str) -> str:
    """The option's Python type, from its converter's return annotation."""
    annotation = inspect.signature(metric.options[name]).return_annotation
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "Any")
    return text if text in ("str", "int", "float", "bool") else "Any"


def _text_type(metric: Metric, name: str) -> str:
    """A text's annotation: ``str``, or ``str | list[str]`` for a list of references,
    and a list of chunks (strings or dicts with ``text``) for a context."""
    if name == "context":
        return "str | Sequence[str | Mapping[str, Any]]"
    if name == "conversation":
        return "Sequence[Mapping[str, Any]] | Mapping[str, Any]"
    if name == "trace":
        return "Trace | Sequence[Mapping[str, Any]]"
    return "str | list[str]" if metric.reference_lists and name == "ground_truth" else "str"


def _optional(annotation: str) -> str:
    return annotation if annotation == "Any" else f"{annotation} | None"


def signature(metric: Metric, form: str, *, score: bool = True) -> inspect.Signature:
    """The signature of ``metric``'s helper ``form`` (:data:`SINGLE`, :data:`ASYNC`,
    :data:`EACH`); ``score=False``: the fixture's, which has no ``score=``.

    The texts come first (a rubric's criteria right after them), positionally or by
    name; ``threshold``, ``score`` (a metric of several scores) and the options
    are keywords. The batch form takes sequences of texts, or case dicts first.
    """
    each = form == EACH
    params: list[inspect.Parameter] = []
    for index, name in enumerate(metric.inputs):
        if not each and metric.takes_turns:
            # conversation= may stand for the texts: none of them is required then.
            annotation = _optional(_text_type(metric, name))
            params.append(inspect.Parameter(name, _POSITIONAL, default=None, annotation=annotation))
        elif not each:
            params.append(inspect.Parameter(name, _POSITIONAL, annotation=_text_type(metric, name)))
        else:
            rows = _ROWS if index == 0 else _TEXTS
            if _text_type(metric, name) != "str":
                # A sequence of conversations is rows too: each a list of messages.
                rows = _ROWS if name in ("conversation", "trace") else _REFERENCES
            params.append(inspect.Parameter(name, _POSITIONAL, default=None, annotation=rows))
    for name in metric.leading_options:
        kind = option_type(metric, name)
        # Required in one call; in a batch the case dicts may carry them instead, and
        # after texts that conversation= may stand for, a default is needed too (a
        # call without it is refused all the same: see split_arguments).
        loose = each or metric.takes_turns
        given = {"default": None, "annotation": _optional(kind)} if loose else {"annotation": kind}
        params.append(inspect.Parameter(name, _POSITIONAL, **given))
    for name in metric.optional_inputs:
        annotation = _TEXTS if each else _optional(_text_type(metric, name))
        params.append(inspect.Parameter(name, _POSITIONAL, default=None, annotation=annotation))
    if each:
        for name, annotation in (
            ("cases", "Iterable[Any] | None"),
            ("ids", "Sequence[Any] | str | None"),
            ("fields", "Mapping[str, str] | None"),
        ):
            params.append(inspect.Parameter(name, _KEYWORD, default=None, annotation=annotation))
    params.append(inspect.Parameter("threshold", _KEYWORD, default=None, annotation="float | None"))
    if score and len(metric.score_keys) > 1:
        params.append(
            inspect.Parameter("score", _KEYWORD, default=metric.default_score, annotation="str")
        )
    for name in metric.options:
        if name not in metric.leading_options:
            annotation = _optional(option_type(metric, name))
            params.append(inspect.Parameter(name, _KEYWORD, default=None, annotation=annotation))
    # A conftest's metric has no TypedDict in the stub: its output is a plain dict.
    builtin = isinstance(metric.evaluator, str)
    result = type_name(metric, "Result") if builtin else "dict[str, Any]"
    returns = f"list[{result} | None]" if each else result
    return inspect.Signature(params, return_annotation=returns)


def helper_name(metric: Metric, form: str) -> str:
    """``assert_bleu``, ``assert_bleu_async`` or ``assert_each_bleu``."""
    if form == ASYNC:
        return f"{metric.helper}_async"
    if form == EACH:
        return "assert_each_" + metric.helper[len("assert_") :]
    return metric.helper


def _wrap(text: str) -> str:
    return "\n".join(textwrap.wrap(text, 88))


def helper_doc(metric: Metric, form: str) -> str:
    """The docstring of ``metric``'s helper ``form``: what it checks, records and returns."""
    texts = ", ".join(metric.inputs)
    if form == EACH:
        at_once = " (judge calls at once)" if metric.calls_model else ""
        return (
            f"Assert that every case passes {metric.helper}: sequences of texts, or case dicts."
            "\n\n"
            + _wrap(
                f"Each case{at_once} is checked as ``{metric.helper}`` checks one, recorded "
                "under ``test[case]`` and reported as a subtest; returns the output dicts in "
                "order (``None`` for a case that could not be scored)."
            )
        )
    reaches = (
        "reaches its threshold"
        if metric.higher_is_better
        else "is at or below its threshold (lower is better)"
    )
    cls = metric.evaluator_name
    default = (
        f"default {metric.default_threshold:g}"
        if metric.default_threshold is not None
        else f"default: ``{cls}``'s own"
    )
    text = (
        f"Records the score on the running test and returns the output dict of "
        f"``{cls}``; raises ``AssertionError`` with the score, the threshold and the texts "
        f"when it does not pass. ``threshold=None``: the marker's, else "
        f"``textsim_{metric.threshold_setting}`` ({default})."
    )
    if metric.reference_lists:
        text += " ``ground_truth`` may be a list of references (see Multiple references)."
    if len(metric.score_keys) > 1:
        keys = ", ".join(f'``"{k}"``' for k in metric.score_keys)
        text += f" ``score`` picks the score that must pass: {keys}."
    if metric.leading_options:
        required = ", ".join(f"``{n}``" for n in metric.leading_options)
        text += f" Required: {required}"
        if metric.builtin_variants is not None:
            names = ", ".join(f"``{n}``" for n in metric.builtin_variants())
            text += f", unless ``{metric.variant_option}`` is a built-in one ({names})"
        text += "."
    keyword = [n for n in metric.options if n not in metric.leading_options]
    if keyword:
        given = metric.option_defaults
        defaults = ", ".join(
            f"``{n}``" + (f" ({given[n]!r})" if n in given else "") for n in keyword
        )
        text += f" Options left at ``None`` take the marker's value or the default: {defaults}."
    title = f"Assert that the {metric.label} score of {texts} {reaches}."
    if form == ASYNC:
        title = f"Await {metric.helper}: the {metric.label} score of {texts}."
        how = (
            "its judge calls are awaited on the SDK's async client, so that many awaited "
            "at once share the event loop"
            if metric.calls_model
            else "scored right away (there is no network to wait on)"
        )
        text = f"The same checks, record and message as ``{metric.helper}``; {how}. " + text
    return f"{title}\n\n{_wrap(text)}"


def describe(func: Callable[..., Any], metric: Metric, form: str) -> None:
    """Give ``func`` (a helper made at run time) its name, signature and docstring."""
    func.__name__ = func.__qualname__ = helper_name(metric, form)
    func.__signature__ = signature(metric, form)  # type: ignore[attr-defined]
    func.__doc__ = helper_doc(metric, form)


def refuse_unknown(
    metric: Metric, callee: str, accepted: frozenset[str], keywords: dict[str, Any]
) -> None:
    """``TypeError`` for a keyword not among ``accepted`` (the helper's parameters),
    named with the closest valid one (``rouge_typ``: did you mean ``rouge_type``?)."""
    __tracebackhide__ = True
    unknown = [key for key in keywords if key not in accepted]
    if unknown:
        raise unknown_keywords(metric, callee, unknown)
