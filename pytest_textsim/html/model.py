"""What the HTML report shows, computed from a ``--textsim-json`` report document.

:func:`build` turns the report (scores, summary, gates, baseline comparison,
flaky tests: whatever the document has) into the page's data: compact table
rows, one detail per score that has texts, a reason or parameters to show, and
the explanations of the n-gram scores (:func:`pytest_textsim.nlp.explain.explain`)
for the scores with both texts, failing ones first, up to ``explain_limit``.
Fields the document lacks are simply not shown; nothing here raises on an
older or newer report.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from ..catalog import current_metrics
from ..nlp.explain import KINDS, explain, explainable
from ..nlp.spans import VERDICT_TONES, claim_spans
from ..summary import score_verdict
from .agent import agent_detail

#: Explanations computed for one report at most (failing scores first): each
#: costs about 0.1-1 ms and adds its highlights to the file.
EXPLAIN_LIMIT = 2000


#: A row's verdict: the score against its threshold and whether its test failed on it
#: (report.js reads the same codes; None: no threshold).
VERDICTS = MappingProxyType({"pass": 1, "fail": 0, "below": 2, "above": 3, "xfail": 4})


def verdict(score: Mapping[str, Any]) -> str:
    """``pass``, ``fail``, ``below``/``above`` (missed in a test that did not fail), ``xfail``
    (missed in a test expected to fail), ``none``."""
    passed = score.get("passed")
    outcome = score.get("test_outcome")
    return score_verdict(
        passed if isinstance(passed, bool) else None,
        outcome if isinstance(outcome, str) else None,
        str(score.get("evaluator") or ""),
    )


def _number(value: Any) -> float | None:
    if type(value) is float:
        return value if value - value == 0 else None  # NaN and infinities are not
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def label(score: Mapping[str, Any]) -> str:
    """The metric as reports show it: ``rouge_f1_score (rougeL)``."""
    metric = str(score.get("metric") or score.get("evaluator") or "?")
    variant = score.get("variant")
    return f"{metric} ({variant})" if variant else metric


class _Strings:
    """Interned strings: the table stores indices, the page stores each text once."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, text: Any) -> int:
        text = "" if text is None else str(text)
        found = self._index.get(text)
        if found is None:
            found = self._index[text] = len(self.items)
            self.items.append(text)
        return found


def _explain_options(score: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The ``explain()`` metric and options of a recorded score, or None."""
    evaluator = str(score.get("evaluator") or "")
    metric = str(score.get("metric") or "")
    params = score.get("params") if isinstance(score.get("params"), dict) else {}
    assert isinstance(params, dict)
    if evaluator == "rouge" or metric.startswith("rouge_"):
        rouge_type = params.get("rouge_type") or score.get("variant")
        if not rouge_type:
            return None
        return "rouge", {"rouge_type": str(rouge_type)}
    name = evaluator or metric
    if not explainable(name) or name == "qa":
        return None
    if name.startswith("meteor"):
        options = {k: params[k] for k in ("alpha", "beta", "gamma") if _number(params.get(k))}
        return "meteor", options
    return name, {}


def _highlights(result: Mapping[str, Any]) -> dict[str, list[list[int]]]:
    codes = {kind: i for i, kind in enumerate(KINDS)}
    return {
        side: [[h["start"], h["end"], codes[h["kind"]]] for h in result["highlights"][side]]
        for side in ("response", "ground_truth")
    }


def _texts(score: Mapping[str, Any]) -> dict[str, str] | None:
    texts = score.get("texts")
    if not isinstance(texts, dict):
        return None
    kept: dict[str, str] = {}
    for name, value in texts.items():
        if isinstance(value, str):
            kept[name] = value
        elif name == "trace":
            continue  # an agent's steps: shown with their verdicts (agent.py)
        elif name == "conversation":
            kept.update(_transcript(value, score.get("details")))
        elif isinstance(value, list):
            # A list of references, or of chunks: each shown as ground_truth[i], context[i].
            kept.update(
                {
                    f"{name}[{i}]": t
                    for i, v in enumerate(value)
                    if (t := _chunk_text(v)) is not None
                }
            )
    return kept or None


def _transcript(value: Any, details: Any) -> dict[str, str]:
    """A conversation's messages as texts, ``conversation[4] assistant, turn 2: forgets``:
    each by its index and role, an assistant turn with its verdict or score."""
    messages = value.get("messages") if isinstance(value, Mapping) else value
    turns = details.get("turns") if isinstance(details, Mapping) else None
    judged = {row.get("message"): row for row in turns or () if isinstance(row, Mapping)}
    shown: dict[str, str] = {}
    for index, message in enumerate(messages if isinstance(messages, list) else ()):
        if not isinstance(message, Mapping) or not isinstance(message.get("content"), str):
            continue
        label = f"conversation[{index}] {message.get('role')}"
        row = judged.get(index)
        if row is not None:
            label += f", turn {row.get('turn')}: {row.get('verdict', row.get('score'))}"
        shown[label] = message["content"]
    return shown


def _chunk_text(value: Any) -> str | None:
    """The text of one item of a list of texts: a string, or a chunk dict's ``text``."""
    if isinstance(value, Mapping):
        value = value.get("text")
    return value if isinstance(value, str) else None


# The verdicts by which a claim rests on the chunk it names, and by which it goes against it.
_CITES = MappingProxyType(
    {"supported": "support", "attributed": "support", "contradicted": "against"}
)


def _context(score: Mapping[str, Any], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chunks in retrieval order: from the score's chunk verdicts, else its texts."""
    chunks: list[Mapping[str, Any]] = list(rows)
    if not rows:
        texts = score.get("texts")
        context = texts.get("context") if isinstance(texts, dict) else None
        items = context if isinstance(context, list) else [] if context is None else [context]
        chunks = [item if isinstance(item, Mapping) else {"text": item} for item in items]
    out = []
    for chunk in chunks:
        label = " ".join(str(chunk[k]) for k in ("id", "source") if chunk.get(k))
        one: dict[str, Any] = {"text": _chunk_text(chunk) or "", "label": label, "cited": []}
        if isinstance(chunk.get("verdict"), str):
            one["verdict"] = chunk["verdict"]
            one["tone"] = VERDICT_TONES.get(chunk["verdict"], "miss")
        out.append(one)
    return out


def rag_detail(score: Mapping[str, Any]) -> dict[str, Any] | None:
    """A RAG score's claims and chunks as the page shows them, or None: each side's
    claims (the response's, the ground truth's) with their verdicts and where they
    appear in its text, and the chunks in retrieval order, each with the claims
    that rest on it or go against it."""
    details = score.get("details")
    if not isinstance(details, dict):
        return None
    claims = [c for c in details.get("claims") or [] if isinstance(c, dict)]
    rows = [c for c in details.get("chunks") or [] if isinstance(c, dict)]
    if not claims and not rows:
        return None
    chunks = _context(score, rows)
    texts = score.get("texts") if isinstance(score.get("texts"), dict) else {}
    assert isinstance(texts, dict)
    # A claim of context_recall is the ground truth's; answer_correctness names its side.
    default = "ground_truth" if score.get("metric") == "context_recall" else "response"
    sides: dict[str, list[dict[str, Any]]] = {}
    for number, claim in enumerate(claims):
        verdict = str(claim.get("verdict") or "")
        chunk = claim.get("chunk")
        one: dict[str, Any] = {
            "n": number, "claim": str(claim.get("claim") or ""), "verdict": verdict,
            "tone": VERDICT_TONES.get(verdict, "miss"), "reason": str(claim.get("reason") or ""),
        }  # fmt: skip
        if type(chunk) is int and 0 <= chunk < len(chunks):
            one["chunk"] = chunk
            chunks[chunk]["cited"].append([number, _CITES.get(verdict, "cited")])
        side = claim.get("of") if claim.get("of") in ("response", "ground_truth") else default
        sides.setdefault(str(side), []).append(one)
    out_sides = []
    for name, items in sides.items():
        text = texts.get(name)
        text = text if isinstance(text, str) else ""
        spans = claim_spans(text, [(c["n"], c["claim"]) for c in items])
        out_sides.append({"name": name, "text": text, "claims": items, "spans": spans})
    for chunk in chunks:
        tones = {how for _, how in chunk["cited"]}
        if tones:
            chunk["mark"] = "support" if "support" in tones else next(iter(sorted(tones)))
    return {"sides": out_sides, "chunks": chunks}


def reason_by(score: Mapping[str, Any]) -> str | None:
    """Who gave a score's reason, by the metric's catalog entry: ``judge`` (a metric
    that asks the judge), ``check`` (one that does not), None (a metric this run
    does not know)."""
    metric = current_metrics().get(str(score.get("evaluator") or ""))
    if metric is None:
        return None
    return "judge" if metric.calls_model else "check"


def _truth(score: Mapping[str, Any]) -> str | tuple[str, ...] | None:
    """The kept ground truth of ``score``: a string, a tuple of references, or ``None``."""
    texts = score.get("texts")
    truth = texts.get("ground_truth") if isinstance(texts, dict) else None
    if isinstance(truth, str):
        return truth
    if isinstance(truth, list) and truth and all(isinstance(t, str) for t in truth):
        return tuple(truth)
    return None


def _change_key(
    test: str, evaluator: str, metric_label: str, index: int
) -> tuple[str, str, str, int]:
    return (test, evaluator, metric_label, index)


def build(document: Mapping[str, Any], *, explain_limit: int = EXPLAIN_LIMIT) -> dict[str, Any]:
    """The page's data for ``document`` (a ``--textsim-json`` report)."""
    scores = [s for s in document.get("scores") or [] if isinstance(s, dict)]
    strings = _Strings()
    baseline = document.get("baseline") if isinstance(document.get("baseline"), dict) else None
    changes: dict[tuple[str, str, str, int], dict[str, Any]] = {}
    if baseline:
        for change in baseline.get("changes") or []:
            if isinstance(change, dict):
                key = _change_key(
                    str(change.get("test", "")),
                    str(change.get("evaluator", "")),
                    str(change.get("metric", "")),
                    int(change.get("index") or 0),
                )
                changes[key] = change

    # Which scores get an explanation: failing ones first, then the rest, in order.
    candidates = [i for i, s in enumerate(scores) if s.get("passed") is False] + [
        i for i, s in enumerate(scores) if s.get("passed") is not False
    ]
    verdicts = [verdict(s) for s in scores]
    to_explain: set[int] = set()
    for i in candidates:
        if len(to_explain) >= explain_limit:
            break
        texts = _texts(scores[i])
        if texts and "response" in texts and _truth(scores[i]) is not None:
            if _explain_options(scores[i]) is not None:
                to_explain.add(i)
    memo: dict[tuple[Any, ...], dict[str, Any] | None] = {}
    explained = 0
    skipped = 0

    metric_labels = _Strings()
    params_text: dict[Any, str] = {}
    rows: list[list[Any]] = []
    details: list[dict[str, Any]] = []
    seen: dict[tuple[str, str, str], int] = {}
    for i, score in enumerate(scores):
        metric_label = label(score)
        test = str(score.get("test_id", ""))
        evaluator = str(score.get("evaluator", ""))
        group = (test, evaluator, metric_label)
        index = seen.get(group, 0)
        seen[group] = index + 1
        change = changes.get(_change_key(test, evaluator, metric_label, index))
        detail: dict[str, Any] = {}
        texts = _texts(score)
        if texts:
            # The same texts come with each score of a call: stored once, by index.
            detail["texts"] = {name: strings(text) for name, text in texts.items()}
        rag = rag_detail(score)
        if rag is not None:
            # Texts by index into the page's strings, as the other texts are.
            for side in rag["sides"]:
                side["text"] = strings(side["text"])
            for chunk in rag["chunks"]:
                chunk["text"] = strings(chunk["text"])
            detail["rag"] = rag
        agent = agent_detail(score)
        if agent is not None:
            detail["agent"] = agent
        for field in ("reason", "samples", "run"):
            value = score.get(field)
            if value not in (None, [], {}, ""):
                detail[field] = value
        by = reason_by(score) if "reason" in detail else None
        if by is not None:
            detail["reason_by"] = by
        params = score.get("params")
        if isinstance(params, dict) and params:
            # Most scores share a few parameter sets: each is stored once, as JSON text.
            try:
                frozen: Any = tuple(sorted(params.items()))
                hash(frozen)
            except TypeError:  # unhashable values: no shortcut
                frozen = None
            text = params_text.get(frozen) if frozen is not None else None
            if text is None:
                text = json.dumps(params, sort_keys=True, default=str)
                if frozen is not None:
                    params_text[frozen] = text
            detail["params"] = strings(text)
        if change is not None:
            detail["baseline"] = [
                _number(change.get("old")),
                _number(change.get("tolerance")),
                str(change.get("why") or ""),
            ]
        if i in to_explain:
            assert texts is not None
            how = _explain_options(score)
            assert how is not None
            name, options = how
            truth = _truth(score)
            assert truth is not None
            memo_key = (name, tuple(sorted(options.items())), texts["response"], truth)
            if memo_key not in memo:
                try:
                    result = explain(
                        name,
                        response=texts["response"],
                        ground_truth=truth if isinstance(truth, str) else list(truth),
                        **options,
                    )
                    memo[memo_key] = {"hl": _highlights(result), "lines": result["summary"]}
                    if "reference" in result:
                        memo[memo_key]["best"] = result["reference"]  # type: ignore[index]
                except (ValueError, TypeError, LookupError, OSError):
                    # No NLTK data here, or parameters this version does not know:
                    # the texts are still shown, without highlights.
                    memo[memo_key] = None
            found = memo[memo_key]
            if found is not None:
                detail.update({k: v for k, v in found.items() if k != "best"})
                if not isinstance(truth, str):
                    # The reference that scored best (of a list of one, that one) goes
                    # beside the response, highlighted; the others stay below it.
                    best = int(found.get("best", 0))
                    detail["texts"]["ground_truth"] = detail["texts"].pop(f"ground_truth[{best}]")
                explained += 1
        elif texts and _explain_options(score) is not None:
            skipped += 1
        if texts and "hl" not in detail and _explain_options(score) is not None:
            detail["unexplained"] = 1  # an n-gram score drawn without its highlights
        delta = None
        if change is not None:
            old, new = _number(change.get("old")), _number(change.get("new"))
            if old is not None and new is not None:
                delta = new - old
        rows.append(
            [
                strings(test),
                metric_labels(metric_label),
                _number(score.get("score")),
                _number(score.get("threshold")),
                VERDICTS.get(verdicts[i]),
                strings(score.get("test_outcome") or ""),
                len(details) if detail else -1,
                delta,
                strings(change.get("kind", "")) if change else strings(""),
                1 if score.get("flaky") else 0,
            ]
        )
        if detail:
            details.append(detail)
    failing_tests = {str(s.get("test_id", "")) for s in scores if s.get("test_outcome") == "failed"}
    header = document.get("header")
    outcomes = header.get("outcomes") if isinstance(header, dict) else None
    # The run's own count, tests without a score included; a document from before
    # it was kept (or from scored rows) counts the failed tests its scores name.
    failed = outcomes.get("failed") if isinstance(outcomes, dict) else None
    return {
        "strings": strings.items,
        "metrics": metric_labels.items,
        "rows": rows,
        "failing_tests": failed if isinstance(failed, int) else len(failing_tests),
        "failing_scores": verdicts.count("fail"),
        "unasserted": sum(1 for v in verdicts if v in ("below", "above")),
        "details": details,
        "kinds": list(KINDS),
        "explained": explained,
        "not_explained": skipped,
        "explain_limit": explain_limit,
    }


def metric_groups(document: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The document's scores grouped by metric label, in order of first appearance."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for score in document.get("scores") or []:
        if isinstance(score, dict):
            groups.setdefault(label(score), []).append(score)
    return groups


def summary_by_label(document: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The document's ``summary`` rows by metric label."""
    out: dict[str, dict[str, Any]] = {}
    for row in document.get("summary") or []:
        if isinstance(row, dict) and row.get("metric"):
            out[str(row["metric"])] = row
    return out


def changes_by_label(document: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The baseline comparison's changes by metric label (empty without a comparison)."""
    baseline = document.get("baseline")
    out: dict[str, list[dict[str, Any]]] = {}
    if isinstance(baseline, dict):
        for change in baseline.get("changes") or []:
            if isinstance(change, dict):
                out.setdefault(str(change.get("metric", "")), []).append(change)
    return out


def flaky_tests(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Flaky tests: the document's ``flaky`` list, else the tests of scores marked flaky."""
    listed = document.get("flaky")
    if isinstance(listed, list) and listed:
        return [item if isinstance(item, dict) else {"test_id": str(item)} for item in listed]
    seen: dict[str, dict[str, Any]] = {}
    for score in document.get("scores") or []:
        if isinstance(score, dict) and score.get("flaky"):
            seen.setdefault(str(score.get("test_id", "")), {"test_id": score.get("test_id")})
    return list(seen.values())


def finite(values: Iterable[Any]) -> list[float]:
    """The finite numbers among ``values``."""
    out = []
    for value in values:
        number = _number(value)
        if number is not None:
            out.append(number)
    return out


def listed_tests(document: Mapping[str, Any], key: str) -> list[dict[str, Any]] | None:
    """The tests of the report's ``key`` section (its ``tests``), by test id (None: the
    section has none)."""
    found = document.get(key)
    tests = found.get("tests") if isinstance(found, dict) else None
    if not isinstance(tests, list) or not tests:
        return None
    return sorted((t for t in tests if isinstance(t, dict)), key=lambda t: str(t.get("test_id")))
