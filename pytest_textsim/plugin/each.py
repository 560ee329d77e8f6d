"""Batches: many cases scored in one test, each reported as a case of its own.

``assert_each_similar(responses, ground_truths, ids=...)`` (and ``similarity.each(...)``
on the fixtures) takes parallel sequences of texts or a sequence of case dicts
(``jsonl_cases`` rows, ``fields=`` renaming fields as ``textsim score --map``
does), scores every case (judge metrics ``textsim_judge_concurrency`` at a
time, through the run's one judge client: its cache first, its retries and
back-off), then reports each case:

- as a subtest (pytest 9's built-in ``subtests``, or pytest-subtests on pytest
  7 and 8): ``-v`` shows a line per case, a failing case shows the message the
  single helper prints, and one failing case never stops the others; pytest's
  closing line counts the cases, passed ones too, at any verbosity
  (``1 failed, 180 subtests passed, 20 subtests failed``);
- without subtests, as one failure of the test listing every failing case.

Each case's scores are recorded under its own id, ``test_x[case]``
(``test_x[p-case]`` in a parametrized test), so the report, JSON, JUnit
properties, HTML, gates and baselines see the rows a parametrized test gives.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

import pytest

from ..calls.gathering import GatherError
from ..catalog import METRICS, TEXT_ORDER, Metric
from ..conversation.messages import conversation_problem
from ..evaluator import CASE_TEXTS, case_texts, chunks_problem, plain_texts, references_problem
from ..formatting import plural
from ..records import ScoreRecord
from ..runtime.steps import Steps, driven
from ..traces.trajectory import trajectory_problem, trajectory_steps
from .arguments import call_arguments
from .assertion import failure_message
from .casecounts import REPORTING_CASES
from .progress import scoring_all
from .scoring import Prepared, active_session, prepare
from .session import CASE, CaseRecords, TextsimSession
from .signatures import EACH, describe


@dataclass
class Case:
    """One case of a batch: its id, its texts, and what scoring it gave."""

    id: str
    texts: dict[str, Any]
    holder: CaseRecords
    output: dict[str, Any] | None = None
    error: BaseException | None = None
    records: list[ScoreRecord] = field(default_factory=list)


def case_nodeid(parent: str, case_id: str) -> str:
    """``test_x[case]``, or ``test_x[p-case]`` for a parametrized ``test_x[p]``:
    the id the case would have as a parameter of the test."""
    if parent.endswith("]") and "[" in parent:
        return f"{parent[:-1]}-{case_id}]"
    return f"{parent}[{case_id}]"


def _is_case_row(value: Any) -> bool:
    """A case dict, or a ``pytest.param`` holding one (``jsonl_cases`` gives those)."""
    if isinstance(value, Mapping):
        return True
    values = getattr(value, "values", None)
    return (
        hasattr(value, "marks")
        and isinstance(values, tuple)
        and len(values) == 1
        and isinstance(values[0], Mapping)
    )


def _case_rows(value: Any) -> bool:
    """Whether ``value`` is a non-empty sequence of case dicts (or ``pytest.param`` objects)."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        return False
    return bool(value) and all(_is_case_row(row) for row in value)


def _column(callee: str, name: str, value: Any) -> list[Any]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        got = type(value).__name__
        raise TypeError(
            f"{callee}(): {name!r} must be a sequence of texts, one per case, got {got}"
        )
    return list(value)


def batch_cases(
    metric: Metric,
    callee: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    cases: Any = None,
    ids: Any = None,
    fields: Mapping[str, str] | None = None,
) -> tuple[list[tuple[str, dict[str, Any]]], dict[str, Any]]:
    """The ``(id, texts)`` of every case and the options shared by all of them.

    A call that does not fit (sequences of different lengths, a case without a
    text field, duplicate ids) raises ``TypeError``/``ValueError`` naming the
    callee and every problem, before anything is scored.
    """
    __tracebackhide__ = True
    given, options = call_arguments(metric, callee, args, kwargs)
    first = metric.inputs[0]
    if cases is None and set(given) == {first} and _case_rows(given[first]):
        cases = given.pop(first)  # assert_each_bleu(rows): case dicts in the first place
    if cases is not None:
        if given:
            named = ", ".join(repr(n) for n in given)
            raise TypeError(f"{callee}(): give the cases or the texts ({named}), not both")
        rows = _rows(metric, callee, cases, ids, fields or {})
    else:
        if fields:
            raise TypeError(f"{callee}(): fields= renames the fields of case dicts; no cases given")
        rows = _columns(metric, callee, given, ids)
    _check_ids(callee, [case_id for case_id, _ in rows])
    return rows, options


def _columns(
    metric: Metric, callee: str, given: dict[str, Any], ids: Any
) -> list[tuple[str, dict[str, Any]]]:
    __tracebackhide__ = True
    turns = metric.takes_turns and given.get("conversation") is not None
    missing = [name for name in metric.inputs if name not in given and not turns]
    if missing:
        raise TypeError(
            f"{callee}() missing required argument: {missing[0]!r} (a sequence of texts, "
            "or case dicts as the first argument)"
        )
    columns = {
        name: _column(callee, name, value) for name, value in given.items() if value is not None
    }
    sizes = {name: len(column) for name, column in columns.items()}
    if ids is not None:
        sizes["ids"] = len(_column(callee, "ids", ids))
    if len(set(sizes.values())) > 1:
        told = ", ".join(f"{name} has {size}" for name, size in sizes.items())
        raise ValueError(f"{callee}(): every sequence needs one entry per case; {told}")
    count = next(iter(sizes.values()))
    labels = [str(i) for i in range(count)] if ids is None else [str(i) for i in ids]
    return [
        (labels[i], {name: column[i] for name, column in columns.items()}) for i in range(count)
    ]


class CaseDict(dict[str, Any]):
    """The texts of a case dict that its metric takes, and (``case``) every text of
    the case, which the metrics of one case may share judgments by (:data:`CASE_TEXTS`)."""

    case: Mapping[str, Any] | None = None


def _rows(
    metric: Metric, callee: str, cases: Any, ids: Any, fields: Mapping[str, str]
) -> list[tuple[str, dict[str, Any]]]:
    __tracebackhide__ = True
    texts_names = (*metric.inputs, *metric.optional_inputs)
    wrong = [name for name in fields if name not in texts_names]
    if wrong:
        raise TypeError(
            f"{callee}(): fields= maps the texts ({', '.join(texts_names)}) to case fields; "
            f"{', '.join(repr(w) for w in wrong)} is not one"
        )
    rows = list(_column(callee, "cases", cases))
    if isinstance(ids, str) or ids is None:
        id_field = ids
    else:
        labels = [str(i) for i in _column(callee, "ids", ids)]
        if len(labels) != len(rows):
            raise ValueError(f"{callee}(): {len(rows)} cases but {len(labels)} ids")
        id_field = None
    found: list[tuple[str, dict[str, Any]]] = []
    problems: list[str] = []
    for index, row in enumerate(rows):
        param_id = None
        if not isinstance(row, Mapping) and _is_case_row(row):
            param_id, row = row.id, row.values[0]
        if not isinstance(row, Mapping):
            problems.append(f"cases[{index}]: expected a dict, got {type(row).__name__}")
            continue
        absent = [name for name in metric.inputs if fields.get(name, name) not in row]
        # A case without the metric's texts but with a conversation: scored turn by turn.
        turns = bool(absent) and metric.takes_turns and row.get(
            fields.get("conversation", "conversation")
        ) is not None
        if absent and not turns:
            wanted = ", ".join(repr(fields.get(name, name)) for name in absent)
            has = ", ".join(repr(k) for k in row) or "none"
            problems.append(f"cases[{index}]: no field {wanted} (it has {has})")
            continue
        if id_field is not None:
            if id_field not in row:
                problems.append(f"cases[{index}]: no id field {id_field!r}")
                continue
            case_id = str(row[id_field])
        elif ids is not None:
            case_id = labels[index]
        elif param_id is not None:
            case_id = str(param_id)
        elif "id" in row:
            case_id = str(row["id"])
        else:
            case_id = str(index)
        if turns:
            texts = CaseDict({"conversation": row[fields.get("conversation", "conversation")]})
        else:
            texts = CaseDict({name: row[fields.get(name, name)] for name in metric.inputs})
            for name in metric.optional_inputs:
                if name != "conversation" and fields.get(name, name) in row:
                    texts[name] = row[fields.get(name, name)]
        texts.case = case_texts({name: row.get(fields.get(name, name)) for name in TEXT_ORDER})
        found.append((case_id, texts))
    if problems:
        hint = "; rename fields with fields={'response': 'answer', ...}"
        raise TypeError(
            f"{callee}(): {plural(len(problems), 'case')} of {len(rows)} cannot be scored"
            f"{hint}\n" + "\n".join(problems)
        )
    return found


def _check_ids(callee: str, labels: list[str]) -> None:
    __tracebackhide__ = True
    seen: dict[str, int] = {}
    problems = []
    for index, label in enumerate(labels):
        if not label.strip():
            problems.append(f"cases[{index}] has an empty id")
        elif label in seen:
            problems.append(f"cases[{index}] has the id {label!r} of cases[{seen[label]}]")
        else:
            seen[label] = index
    if problems:
        raise ValueError(
            f"{callee}(): each case needs its own id (it names the case's row)\n"
            + "\n".join(problems)
        )


def _text_problem(where: str, metric: Metric, texts: dict[str, Any]) -> str:
    """Why a case's texts cannot be scored (a response that is ``None``), or ``""``."""
    for name, value in texts.items():
        if value is None and name in metric.optional_inputs:
            continue
        if metric.reference_lists and name == "ground_truth" and isinstance(value, (list, tuple)):
            problem = references_problem(name, value)
            if problem:
                return f"{where} {problem}"
            continue
        if name == "context" and isinstance(value, (list, tuple)):
            problem = chunks_problem(name, value)
            if problem:
                return f"{where} {problem}"
            continue
        if name == "conversation":
            problem = conversation_problem(name, value)
            if problem:
                return f"{where} {problem}"
            continue
        if name == "trace":
            problem = trajectory_problem(name, value)
            if problem:
                return f"{where} {problem}"
            continue
        if not isinstance(value, str):
            got = "None" if value is None else type(value).__name__
            return f"{where} {name!r} must be a string, got {got}"
    return ""


def batch_steps(
    metric: Metric | str,
    rows: list[tuple[str, dict[str, Any]]],
    *,
    callee: str,
    threshold: Any = None,
    score: Any = None,
    options: dict[str, Any] | None = None,
    asserting: bool = True,
    keyword: str = "threshold",
) -> Steps[list[dict[str, Any] | None]]:
    """Score ``rows`` (from :func:`batch_cases`) and report each as its own case.

    ``asserting=True`` (the ``assert_each_*`` helpers): a case fails when its
    score misses the threshold, with the single helper's message. Otherwise
    (a fixture's ``.each``) scores are recorded as the fixture records them and
    a case fails only when it cannot be scored. Returns each case's output dict
    in order, ``None`` for a case that could not be scored.

    Every case is a task of an event loop (:func:`run_batch_async`: the running
    one), a judge metric's ``textsim_judge_concurrency`` at a time, its calls
    made through the client's limit; then every case is reported the same way.
    """
    __tracebackhide__ = True
    batch = _Batch.of(metric, rows, callee, threshold, score, options, asserting, keyword)
    yield from scoring_all(batch.cases, batch.scoring, batch.workers, batch.session, batch.stats)
    return batch.report()


run_batch, run_batch_async = driven(batch_steps, ("run_batch", "run_batch_async"))


@dataclass
class _Batch:
    """A batch being scored: its metric, settings, cases and how one case is scored."""

    metric: Metric
    callee: str
    score_name: str
    prepared: Prepared
    session: TextsimSession | None
    item: pytest.Item | None
    cases: list[Case]
    workers: int
    asserting: bool

    @classmethod
    def of(
        cls,
        metric: Metric | str,
        rows: list[tuple[str, dict[str, Any]]],
        callee: str,
        threshold: Any,
        score: Any,
        options: dict[str, Any] | None,
        asserting: bool,
        keyword: str = "threshold",
    ) -> _Batch:
        __tracebackhide__ = True
        if isinstance(metric, str):
            metric = METRICS[metric]
        score_name = metric.default_score if score is None else score
        if score_name not in metric.score_keys:
            valid = ", ".join(repr(k) for k in metric.score_keys)
            raise ValueError(f"{callee}(): score must be one of {valid}, got {score!r}")
        given = {name: value for name, value in (options or {}).items() if value is not None}
        prepared = prepare(
            metric, callee=callee, threshold=threshold, options=given, keyword=keyword
        )
        session = active_session()
        item = session.current.item if session is not None else None
        parent = item.nodeid if item is not None else ""
        cases = [
            Case(case_id, texts, CaseRecords(case_nodeid(parent, case_id) if parent else case_id))
            for case_id, texts in rows
        ]
        resolver = prepared.call.resolver
        workers = int(resolver.get("judge_concurrency")) if metric.calls_model else 1
        return cls(metric, callee, score_name, prepared, session, item, cases, workers, asserting)

    @property
    def stats(self) -> Any:
        """The judge's counters (for the progress line), or ``None`` without a judge."""
        judge = getattr(getattr(self.prepared.evaluator, "judge", None), "client", None)
        return getattr(judge, "stats", None)

    @property
    def keep(self) -> set[str] | None:
        return {self.metric.score_keys[self.score_name]} if self.asserting else None

    def _texts(self, case: Case) -> dict[str, Any] | None:
        """The case's texts to score, or ``None`` (its error set) when it cannot be."""
        CASE.set(case.holder)
        CASE_TEXTS.set(getattr(case.texts, "case", None))
        failed_call = next((v for v in case.texts.values() if isinstance(v, GatherError)), None)
        if failed_call is not None:
            case.error = failed_call  # the app's call for this case raised (gather)
            return None
        problem = _text_problem(f"{self.callee}(): case {case.id!r}:", self.metric, case.texts)
        if problem:
            case.error = TypeError(problem)
            return None
        # A Trace as its steps: the records hold data, not the spans.
        return {
            k: trajectory_steps(v) if k == "trace" else plain_texts(v)
            for k, v in case.texts.items() if v is not None
        }  # fmt: skip

    def scoring(self, case: Case) -> Steps[None]:
        """Score one case (in its own context: its records go to the case)."""
        texts = self._texts(case)
        if texts is None:
            return
        try:
            case.output, case.records = yield from self.prepared.scoring(
                texts, keep=self.keep, verdict_by_default=self.asserting
            )
        except (Exception, pytest.fail.Exception) as exc:
            self._failed(case, exc)
            return
        self._check(case)

    def _failed(self, case: Case, exc: BaseException) -> None:
        case.error = exc
        case.records = list(case.holder.records)

    def _check(self, case: Case) -> None:
        if self.asserting:
            message = _missed(self.metric, self.score_name, self.prepared, case)
            if message:
                case.error = AssertionError(message)

    def report(self) -> list[dict[str, Any] | None]:
        """Report every case; each case's output in order (``None``: not scored)."""
        __tracebackhide__ = True
        _report(self.cases, self.session, self.item, self.metric, self.callee)
        return [
            case.output if case.error is None or self.asserting else None for case in self.cases
        ]


def _missed(metric: Metric, score_name: str, prepared: Prepared, case: Case) -> str:
    """The single helper's failure message when the case's checked score misses, else ``""``."""
    output = case.output or {}
    key = metric.score_keys[score_name]
    checked = next((r for r in case.records if r.score_key == key), None)
    if checked is not None:
        passed = checked.passed
    else:
        limit = output.get(f"{key}_threshold", prepared.threshold)
        passed = metric.passes(float(output[key]), float(limit or 0))
    if passed:
        return ""
    source = checked.threshold_source if checked is not None else None
    inputs = {k: v for k, v in case.texts.items() if v is not None}
    return failure_message(
        metric, score_name, output, inputs, prepared.threshold, prepared.options, source
    )


def _report(
    cases: list[Case],
    session: TextsimSession | None,
    item: pytest.Item | None,
    metric: Metric,
    callee: str,
) -> None:
    """Report every case: a subtest each when there are subtests, else one failure
    listing the failing cases (outside pytest too)."""
    __tracebackhide__ = True
    for case in cases:
        outcome = "passed" if case.error is None else "failed"
        for record in case.records:
            record.test_outcome = outcome
    subtests = _subtests(item)
    if session is None or item is None or subtests is None:
        if session is not None and item is not None:
            for case in cases:
                _attach(session, item, case)
        failed = [case for case in cases if case.error is not None]
        if failed:
            listed = "\n".join(f"[{case.id}] {_message(case.error)}" for case in failed)
            raise AssertionError(
                f"{callee}: {plural(len(failed), 'case')} of {len(cases)} failed "
                f"({metric.label}):\n{listed}"
            )
        return
    # The test's own scores so far are not a case's: kept for the test's report.
    held = list(session.current.pending)
    session.current.pending.clear()
    reporting = REPORTING_CASES.set(True)
    try:
        for case in cases:
            with subtests.test(msg=case.id):
                _attach(session, item, case)
                if case.error is not None:
                    raise case.error
    finally:
        REPORTING_CASES.reset(reporting)
        session.current.pending[:0] = held


def _attach(session: TextsimSession, item: pytest.Item, case: Case) -> None:
    """Put the case's records on the report pytest makes next (and its JUnit properties)."""
    case_id = case.id
    for record in case.records:
        item.user_properties.append((f"textsim.{record.score_key}[{case_id}]", record.score))
    session.current.pending.extend(case.records)


def _message(error: BaseException | None) -> str:
    text = str(error) if error is not None else ""
    if isinstance(error, AssertionError) or isinstance(error, pytest.fail.Exception):
        return text.replace("\n", "\n    ")
    return f"{type(error).__name__}: {text}".replace("\n", "\n    ")


def _subtests(item: pytest.Item | None) -> Any:
    """The running test's ``subtests`` fixture (pytest 9, or pytest-subtests), or ``None``."""
    if item is None or not item.config.pluginmanager.hasplugin("subtests"):
        return None
    request = getattr(item, "_request", None)
    if request is None:
        return None
    return request.getfixturevalue("subtests")


def each_name(helper: str) -> str:
    """The batch form of a helper's name: ``assert_similar`` -> ``assert_each_similar``."""
    return "assert_each_" + helper[len("assert_") :]


def check_each(
    metric: Metric | str,
    texts: dict[str, Any],
    *,
    cases: Any = None,
    ids: Any = None,
    fields: Mapping[str, str] | None = None,
    threshold: Any = None,
    score: Any = None,
    options: dict[str, Any] | None = None,
    callee: str | None = None,
    keyword: str = "threshold",
) -> list[dict[str, Any] | None]:
    """What a written-out ``assert_each_*`` helper does: texts left at ``None`` are
    not given, options left at ``None`` take the marker's value or the default.
    ``callee`` and ``keyword`` name the call and its threshold argument in messages
    (``assert_each_scores(bleu=...)``)."""
    __tracebackhide__ = True
    if isinstance(metric, str):
        metric = METRICS[metric]
    callee = callee or each_name(metric.helper)
    given = {k: v for k, v in {**texts, **(options or {})}.items() if v is not None}
    rows, chosen = batch_cases(metric, callee, (), given, cases=cases, ids=ids, fields=fields)
    return run_batch(
        metric, rows, callee=callee, threshold=threshold, score=score, options=chosen,
        keyword=keyword,
    )  # fmt: skip


def make_each_helper(metric: Metric) -> Callable[..., list[dict[str, Any] | None]]:
    """``assert_each_<metric>``, made from its catalog entry (built-in or a conftest's
    metric), with its signature and docstring (:mod:`pytest_textsim.plugin.signatures`)."""
    several = len(metric.score_keys) > 1

    def helper(
        *args: Any,
        cases: Any = None,
        ids: Any = None,
        fields: Mapping[str, str] | None = None,
        threshold: Any = None,
        **kwargs: Any,
    ) -> list[dict[str, Any] | None]:
        __tracebackhide__ = True
        callee = each_name(metric.helper)
        score = kwargs.pop("score", None) if several else None
        # A text or an option left at None is not given: the marker's value or the default.
        given = {key: value for key, value in kwargs.items() if value is not None}
        rows, options = batch_cases(
            metric, callee, args, given, cases=cases, ids=ids, fields=fields
        )
        return run_batch(
            metric, rows, callee=callee, threshold=threshold, score=score, options=options
        )

    describe(helper, metric, EACH)
    return helper
