"""Scoring one chunk of input lines: the same code in the parent and in every worker.

A :class:`Plan` is small and picklable: the metric specs with their resolved
thresholds, ``--map``, ``--id-field``, what the gates need counted, and where
the parent found the NLTK data. :func:`score_chunk` turns a chunk of raw JSONL
lines into their output lines (or, with judge metrics, into rows the parent
finishes), the per-line errors and a :class:`~.tally.Tally`. Each process builds
the evaluators of a plan once (:func:`scorer`), so WordNet, Punkt and the
tokenizer caches load once per worker, not once per chunk.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

from ..jsonl import decode_error, json_type, loads
from ..records import row_name
from ..settings.table import Resolver
from .plan import Choice, RowCheck, RowOptions, metric_choice, read_row_options
from .tally import CorpusPart, Globs, Tally


@dataclass(frozen=True)
class MetricPlan:
    """One metric as a worker rebuilds it."""

    spec: str  # the --metric value (a rubric's: rubric:NAME)
    threshold: float | None  # None: the evaluator's own default (a rubric's)
    rename_keys: bool = False
    judge: bool = False
    options: tuple[tuple[str, str], ...] = ()  # --option and --rubric texts, converted here
    row_options: tuple[tuple[str, str], ...] = ()  # --map METRIC.OPTION=COLUMN
    label: str = ""  # how messages name it when not by its spec: "--rubric politeness"


@dataclass(frozen=True)
class CorpusNeed:
    """A corpus gate whose pairs the chunk scorer counts: every scored row matching ``globs``."""

    key: str  # tally key (see tally.corpus_key)
    name: str  # corpus_bleu, corpus_chrf, corpus_ter
    globs: Globs = ()


@dataclass(frozen=True)
class Plan:
    """Everything a process needs to score chunks of one input."""

    display: str  # how messages name the input: "data.jsonl", "<stdin>"
    metrics: tuple[MetricPlan, ...]
    mapping: tuple[tuple[str, str], ...] = ()
    id_field: str | None = None
    globs: tuple[Globs, ...] = ()  # test= filters of the sentence gates
    corpus: tuple[CorpusNeed, ...] = ()
    nltk_data: tuple[tuple[str, str], ...] = ()  # resource id -> where the parent found it
    # Corpus keys whose per-pair statistics are kept (see tally.sentence_keys).
    sentence_keys: tuple[str, ...] = ()
    # Keep every row's scores (Tally.kept), for a baseline: memory grows with the rows.
    keep_scores: bool = False


class RowError(NamedTuple):
    """A problem of one input line, shown as ``file:line: text``.

    ``key`` tells errors that are the same apart from their wording (``None``:
    the text): a run of rows with the same key is reported as one line.
    """

    source: str  # how messages name the input: "data.jsonl"
    line: int
    text: str
    key: Any = None

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.text}"

    @property
    def same(self) -> Any:
        """What two errors share when they are the same error."""
        return self.text if self.key is None else self.key


class Row(NamedTuple):
    """A scored row that still needs its judge metrics (scored in the parent)."""

    where: str
    name: str
    data: dict[str, Any]
    texts: dict[str, str]
    outputs: list[dict[str, Any] | None]  # None: a judge metric, not scored yet
    options: dict[str, Any]  # option values read from the row, by "metric.option"
    test: str = ""  # the row's test id in a baseline: its --id-field value, or "row N"
    line: int = 0  # its line number in the input


class ChunkResult(NamedTuple):
    """What a chunk gives back, in input order."""

    text: str  # output lines of the rows (no judge metric)
    rows: list[Row]  # rows the parent finishes (judge metrics)
    errors: list[RowError]  # one per problem, in line order
    lines: int  # input lines read, blank ones included
    tally: Tally


def output_line(data: dict[str, Any], choices: Sequence[Choice], outputs: Sequence[Any]) -> str:
    """The output JSONL line: the input object with every metric's keys added."""
    row = dict(data)
    for choice, output in zip(choices, outputs):
        if isinstance(output, dict):
            if choice.renames:
                row.update({choice.output_key(key): value for key, value in output.items()})
            else:
                row.update(output)
    return json.dumps(row, ensure_ascii=False) + "\n"


class PlanEvaluators:
    """The evaluators of a :class:`Plan`, built once in this process."""

    def __init__(self, plan: Plan) -> None:
        from ..nlp.evaluators import _TextPairEvaluator

        self.plan = plan
        self.choices: list[Choice] = []
        self.evaluators: list[Callable[..., dict[str, Any]] | None] = []
        resolver = Resolver(config=None)  # algorithmic metrics read no setting
        for metric in plan.metrics:
            choice = plan_choice(metric)
            self.choices.append(choice)
            # Judge metrics stay in the parent: one client, one concurrency limit.
            evaluator: Callable[..., dict[str, Any]] | None = None
            if metric.judge:
                pass
            elif choice.row_options:
                evaluator = RowOptions(choice, metric.threshold, resolver)
            else:
                evaluator = choice.build(metric.threshold, resolver)
            self.evaluators.append(evaluator)
        self.row_options = any(c.row_options for c in self.choices)
        self.fast = [isinstance(ev, _TextPairEvaluator) for ev in self.evaluators]
        self.wanted = [c.inputs + c.optional_inputs for c in self.choices]
        self.judged = any(m.judge for m in plan.metrics)
        self.check = RowCheck(
            [(c.shown, c.inputs, c.optional_inputs) for c in self.choices],
            dict(plan.mapping),
            plan.id_field,
            lists=[c.shown for c in self.choices if c.reference_lists],
        )

    def score_texts(
        self, texts: dict[str, str], options: dict[str, Any] | None = None
    ) -> list[dict[str, Any] | None]:
        """Every algorithmic metric's output for one row's texts (None for judge metrics);
        ``options``: the row's option values (:func:`~.plan.read_row_options`)."""
        from ..evaluator import as_references
        from ..nlp.tokenize import TextPair

        pair: TextPair | None = None
        outputs: list[dict[str, Any] | None] = []
        for evaluator, fast, wanted in zip(self.evaluators, self.fast, self.wanted):
            if evaluator is None:
                outputs.append(None)
            elif fast:
                if pair is None:
                    pair = TextPair(texts["response"], as_references(texts["ground_truth"]))
                outputs.append(evaluator._evaluate(pair))  # type: ignore[attr-defined]
            elif isinstance(evaluator, RowOptions):
                given = {k: v for k, v in texts.items() if k in wanted}
                outputs.append(evaluator(**given, **(options or {})))
            else:
                outputs.append(evaluator(**{k: v for k, v in texts.items() if k in wanted}))
        return outputs

    def chunk(self, start: int, lines: Sequence[str]) -> ChunkResult:
        """Score ``lines``, the first of which is line number ``start`` of the input."""
        plan, check, choices = self.plan, self.check, self.choices
        tally = Tally(kept=[] if plan.keep_scores else None)
        out: list[str] = []
        rows: list[Row] = []
        errors: list[RowError] = []
        pairs: dict[str, tuple[list[str], list[str]]] = {n.key: ([], []) for n in plan.corpus}
        for number, text in enumerate(lines, start):
            if not text.strip():
                continue
            where = f"{plan.display}:{number}"

            def problem(text: str, number: int = number) -> None:
                errors.append(RowError(plan.display, number, text))

            try:
                # Without the line break, so that a truncated line's error column is on it.
                data = loads(text.rstrip("\r\n"))
            except json.JSONDecodeError as exc:
                problem(f"not valid JSON ({decode_error(exc)})")
                continue
            except ValueError as exc:  # too deep, or a lone surrogate
                problem(str(exc))
                continue
            if not isinstance(data, dict):
                problem(f"expected a JSON object, got {json_type(data)}")
                continue
            texts, problems = check.texts(data)
            options: dict[str, Any] = {}
            if self.row_options:
                options, more = read_row_options(choices, data)
                problems.extend(more)
            if problems:
                for text_problem in problems:
                    problem(text_problem)
                continue
            name = check.name(data, where)
            # The baseline's test id; check.texts refused a row without its --id-field.
            test = row_name(data, number, plan.id_field) or name
            try:
                outputs = self.score_texts(texts, options)
            except ValueError as exc:
                # A text an evaluator refuses (over TER's size limit): this row's
                # error, and the other rows go on.
                problem(str(exc))
                continue
            row = tally.rows
            for index, output in enumerate(outputs):
                if output is not None:
                    tally.add(index, output, row, name, plan.globs, test=test)
            for need in plan.corpus:
                if need.globs and not all(_match(name, g) for g in need.globs):
                    continue
                hyps, refs = pairs[need.key]
                hyps.append(texts["response"])
                refs.append(texts["ground_truth"])
            tally.rows += 1
            if self.judged:
                rows.append(Row(where, name, data, texts, outputs, options, test, number))
            else:
                out.append(output_line(data, choices, outputs))
        if plan.corpus:
            from ..nlp.sacre import CorpusStats

            for need in plan.corpus:
                hyps, refs = pairs[need.key]
                stats = CorpusStats(need.name, sentences=need.key in plan.sentence_keys)
                stats.add(hyps, refs)
                tally.corpus.setdefault(need.key, CorpusPart()).add(
                    stats.total, stats.pairs, stats.sentences, stats.num_refs
                )
        return ChunkResult("".join(out), rows, errors, len(lines), tally)


def plan_choice(metric: MetricPlan) -> Choice:
    """The :class:`~.plan.Choice` of a :class:`MetricPlan`, its options converted again."""
    choice = metric_choice(metric.spec)
    choice.rename_keys = metric.rename_keys
    choice.label = metric.label
    choice.row_options = dict(metric.row_options)
    for key, text in metric.options:
        assert choice.convert_option is not None
        choice.options[key] = choice.convert_option(key, text, choice.shown)
        choice.given_options[key] = text
    return choice


def _match(name: str, pattern: str) -> bool:
    from fnmatch import fnmatchcase

    return fnmatchcase(name, pattern)


@functools.cache
def scorer(plan: Plan) -> PlanEvaluators:
    """This process's :class:`PlanEvaluators` for ``plan``, built on first use."""
    if plan.nltk_data:
        from ..nlp.nltk_data import use_located

        use_located(dict(plan.nltk_data))
    return PlanEvaluators(plan)


def score_chunk(plan: Plan, start: int, lines: Sequence[str]) -> ChunkResult:
    """Score one chunk with this process's evaluators for ``plan`` (what workers run)."""
    return scorer(plan).chunk(start, lines)
