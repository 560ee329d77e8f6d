"""What an assertion helper (``assert_bleu``, ``assert_rouge``, ...) does.

The helpers themselves are made from the metric catalog on first use
(:mod:`pytest_textsim.plugin.helpers`, by :func:`make_helper` here, with real
signatures for ``help()``; ``pytest_textsim/__init__.pyi`` types them for IDEs
and type checkers); each calls :func:`check`. A helper takes the metric's texts
(positionally or by name), ``threshold=None``
(else ``@pytest.mark.textsim`` / command line / environment / ini / default),
``score=`` when the metric has several scores (ROUGE: ``"f1"``, ``"precision"``,
``"recall"``), and the metric's options. It records the checked score on the
running test, returns the evaluator's output dict, and on failure raises an
``AssertionError`` a person can act on without re-running::

    METEOR 0.528 < threshold 0.900 (from assert_meteor(threshold=...))
    response: "Marie Curie was a physicist from Paris."
    ground_truth: "Marie Curie was born in Warsaw."
    missing from the response: "born", "in", "Warsaw"
    METEOR matched 4/7 reference words (exact 4, stem 0, synonym 0); 2 chunks, penalty 0.062

``assert_ter`` checks an edit rate, where lower is better: it fails with
``TER 0.750 > threshold 0.500``. Judge metrics add the judge's reason. Helpers
work inside any test (no fixture needed) and outside pytest (nothing is
recorded then).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from typing import Any, Callable

from ..catalog import METRICS, Metric
from ..conversation.messages import parse_conversation
from ..formatting import plural, visible
from ..formatting import score as fmt_score
from ..records import ScoreRecord
from ..runtime.steps import AWAITED, Steps, driven
from .arguments import split_arguments
from .scoring import best_reference_steps, evaluating
from .signatures import ASYNC, SINGLE, describe

#: Texts longer than this are shortened in failure messages (start ... end).
MAX_TEXT = 240


#: A failure message shows at most this many messages of a conversation, then counts the rest.
LISTED_MESSAGES = 12


def transcript_lines(conversation: Any, turns: Any, whole: bool = False) -> list[str]:
    """A conversation as a failure message shows it: each message by its index and role,
    an assistant turn with its number and verdict (``turns``: the score's per-turn rows)."""
    messages = parse_conversation(conversation).messages
    verdicts = {row["message"]: row for row in turns or () if isinstance(row, dict)}
    lines = [f"conversation: {len(messages)} messages"]
    for message in messages[:LISTED_MESSAGES]:
        label = message.role
        row = verdicts.get(message.index)
        if row is not None:  # a verdict (a conversation metric's) or a score (a turn's)
            label += f" turn {row['turn']} " + (
                row["verdict"] if "verdict" in row else fmt_score(float(row["score"]), whole)
            )
        calls = ", ".join(f"calls {call.name}" for call in message.tool_calls)
        text = shorten(message.content, 60) if message.content else ""
        shown = " ".join(part for part in (calls, text) if part)
        lines.append(f"  [{message.index}] {label}: {shown}")
    if len(messages) > LISTED_MESSAGES:
        lines.append(f"  ... and {len(messages) - LISTED_MESSAGES} more messages")
    return lines


def shorten(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` as a quoted one-line literal, its middle cut out when longer than ``limit``;
    bidirectional controls are shown as escapes (:func:`~pytest_textsim.formatting.visible`)."""
    if len(text) <= limit:
        return visible(json.dumps(text, ensure_ascii=False))
    head, tail = text[: limit * 2 // 3].rstrip(), text[-(limit // 4) :].lstrip()
    cut = len(text) - len(head) - len(tail)
    quoted = (
        json.dumps(head, ensure_ascii=False)[:-1]
        + " ... "
        + json.dumps(tail, ensure_ascii=False)[1:]
    )
    return f"{visible(quoted)} ({len(text)} characters, {cut} not shown)"


def threshold_origin(metric: Metric, source: str | None) -> str:
    """`` (from textsim_threshold_bleu in pytest.ini)``, or for the default
    `` (default; set textsim_threshold_bleu or threshold=)``; ``""`` when unknown."""
    if not source:
        return ""
    if source == "default":
        return f" (default; set textsim_{metric.threshold_setting} or threshold=)"
    return f" (from {source})"


def failure_message(
    metric: Metric,
    score_name: str,
    output: dict[str, Any],
    inputs: dict[str, str],
    threshold: float | None,
    options: dict[str, Any],
    source: str | None = None,
    best: tuple[int, float] | None = None,
) -> str:
    """``BLEU 0.155 < threshold 0.300 (from ...)``, ``TER 0.750 > threshold 0.500 (...)``, texts.

    The threshold's ``source`` is named (``from textsim_threshold_bleu in
    pytest.ini``; ``default; set textsim_threshold_bleu or threshold=``).
    A list of references is shown one per line, ``best`` (its position and own
    score) marking the one that scored best. Judge metrics add the judge's reason;
    BLEU, GLEU, ROUGE, METEOR and F1 add one or two lines on what the response misses.
    """
    key = metric.score_keys[score_name]
    name = metric.label
    variant = None
    if metric.variant_option:
        # An unnamed rubric's label (a hash of its criteria) is in its output only.
        variant = options.get(metric.variant_option) or output.get(
            f"{metric.name}_{metric.variant_option}"
        )
    if variant:
        name = f"{name} ({variant})"
    if len(metric.score_keys) > 1:
        name = f"{name} {score_name}"
    whole = metric.integer_scores
    base = key[: -len("_score")] if key.endswith("_score") else key
    # The evaluator's own threshold when it chose it (a rubric's depends on its scale).
    limit = output.get(f"{base}_threshold", threshold)
    # The failed comparison: a TER (lower is better) fails by being above its threshold.
    op = "<" if metric.higher_is_better else ">"
    findings = output.get(f"{base}_findings") or ()
    # What a safety check found is shown masked, never whole.
    inputs = {**inputs, **output.get(f"{base}_masked", {})}
    lines = [
        f"{name} {fmt_score(float(output[key]), whole)} {op} threshold "
        f"{fmt_score(float(limit or 0), whole)}{threshold_origin(metric, source)}"
    ]
    for field, text in inputs.items():
        if isinstance(text, str):
            lines.append(f"{field}: {shorten(text)}")
            continue
        if field == "conversation":
            lines.extend(transcript_lines(text, output.get(f"{base}_turns"), whole))
            continue
        if field == "trace":
            # The steps the verdicts below name; a step's text is in the trajectory.
            lines.append(f"trace: {plural(len(text), 'step')}")
            continue
        if field == "context" and any(
            str(line).startswith("chunks in retrieval order") for line in findings
        ):
            continue  # listed below with their verdicts
        for index, one in enumerate(text):
            mark = ""
            if best is not None and best[0] == index:
                mark = f" (scored best: {fmt_score(best[1], whole)} alone)"
            shown = one.get("text") if isinstance(one, dict) else one  # a chunk's text
            lines.append(f"{field}[{index}]: {shorten(str(shown))}{mark}")
    reason = output.get(f"{base}_reason")
    if reason:
        lines.append(f"reason: {shorten(str(reason))}")
    # The RAG metrics' claims and chunks with their verdicts, bounded by the evaluator.
    lines.extend(str(line) for line in findings)
    # What the score misses: "missing from the response: ...", "METEOR matched 5/7 ...".
    from ..nlp.explain import failure_lines  # only when a helper fails

    explained = failure_lines(metric.name, inputs, options)
    if explained and best is not None:
        explained = explained[1:]  # its "best of N references" line: marked above
    lines.extend(explained[:2])
    return "\n".join(lines)


def checking(
    metric: Metric | str,
    texts: dict[str, Any],
    *,
    threshold: Any = None,
    score: Any = None,
    options: dict[str, Any] | None = None,
    callee: str | None = None,
    keyword: str = "threshold",
) -> Steps[dict[str, Any]]:
    """Score ``texts`` with ``metric`` (a catalog name or entry), record, assert it passes.

    ``options`` left at ``None`` are not passed, so the marker's or the
    metric's default applies. Returns the evaluator's output dict.
    :func:`check_async` is what an ``assert_<metric>_async`` helper does: a
    judge metric's calls go out on the SDK's async client; an algorithmic
    metric is scored at once (its work is CPU-bound).
    """
    __tracebackhide__ = True
    metric, score_name, inputs, given = _checked_call(metric, texts, score, options, callee)
    key = metric.score_keys[score_name]
    awaited = yield AWAITED
    output, records, used, chosen = yield from evaluating(
        metric, inputs, callee=callee or (async_name(metric.helper) if awaited else metric.helper),
        threshold=threshold, options=given, keep={key}, keyword=keyword,
    )  # fmt: skip
    passed, source = _verdict(metric, key, output, records, used)
    if not passed:
        best = yield from best_reference_steps(metric, inputs, used, chosen, key)
        raise AssertionError(
            failure_message(metric, score_name, output, inputs, used, chosen, source, best)
        )
    return output


check, check_async = driven(checking, ("check", "check_async"))


def async_name(helper: str) -> str:
    """The awaitable form of a helper's name: ``assert_similar`` -> ``assert_similar_async``."""
    return f"{helper}_async"


def _checked_call(
    metric: Metric | str,
    texts: dict[str, Any],
    score: Any,
    options: dict[str, Any] | None,
    callee: str | None = None,
) -> tuple[Metric, str, dict[str, Any], dict[str, Any]]:
    """``(metric, score name, inputs, options)`` of a helper's call, checked."""
    __tracebackhide__ = True
    if isinstance(metric, str):
        metric = METRICS[metric]
    callee = callee or metric.helper
    score_name = metric.default_score if score is None else score
    if score_name not in metric.score_keys:
        valid = ", ".join(repr(k) for k in metric.score_keys)
        raise ValueError(f"{callee}(): score must be one of {valid}, got {score!r}")
    given = {name: value for name, value in (options or {}).items() if value is not None}
    inputs, chosen_options = split_arguments(metric, callee, (), {**texts, **given})
    return metric, score_name, inputs, chosen_options


def _verdict(
    metric: Metric,
    key: str,
    output: dict[str, Any],
    records: list[ScoreRecord],
    used: float | None,
) -> tuple[bool, str | None]:
    """Whether the checked score passed, and where its threshold came from (``None``
    when unknown), for the failure message."""
    checked = next((r for r in records if r.score_key == key), None)
    if checked is not None:
        passed = checked.passed
    else:
        # The evaluator's own threshold when it chose it (a rubric's depends on its scale).
        limit = output.get(f"{key}_threshold", used)
        passed = metric.passes(float(output[key]), float(limit or 0))
    return bool(passed), checked.threshold_source if checked is not None else None


def make_helper(metric: Metric) -> Callable[..., dict[str, Any]]:
    """``assert_<metric>``, made from its catalog entry (built-in or a conftest's metric).

    Takes the metric's texts (and its required options, such as a rubric's
    criteria) positionally or by name, ``threshold=``, ``score=`` (a metric of
    several scores) and the metric's options; its ``__signature__`` and
    ``__doc__`` say so (:mod:`pytest_textsim.plugin.signatures`).
    """
    several = len(metric.score_keys) > 1

    def helper(*args: Any, threshold: Any = None, **kwargs: Any) -> dict[str, Any]:
        __tracebackhide__ = True
        # score= only where there is a choice: elsewhere it is an unknown keyword.
        score = kwargs.pop("score", None) if several else None
        inputs, options = split_arguments(metric, metric.helper, args, kwargs)
        return check(metric, inputs, threshold=threshold, score=score, options=options)

    describe(helper, metric, SINGLE)
    return helper


def make_async_helper(metric: Metric) -> Callable[..., Awaitable[dict[str, Any]]]:
    """``assert_<metric>_async``, as :func:`make_helper` makes ``assert_<metric>``."""
    several = len(metric.score_keys) > 1

    async def helper(*args: Any, threshold: Any = None, **kwargs: Any) -> dict[str, Any]:
        __tracebackhide__ = True
        score = kwargs.pop("score", None) if several else None
        inputs, options = split_arguments(metric, async_name(metric.helper), args, kwargs)
        return await check_async(metric, inputs, threshold=threshold, score=score, options=options)

    describe(helper, metric, ASYNC)
    return helper
