"""Scoring a batch of rows inside a cluster engine: Dask, Ray Data, Spark.

:func:`score_batch` is the body of a Dask ``map_partitions``, a Ray Data
``map_batches`` or (through :func:`score_batches`) a Spark ``mapInPandas``. It
takes a batch in the shape the engine hands over and returns the same shape
with the columns ``textsim score`` writes added: ``bleu_score``,
``bleu_result``, ``bleu_threshold``... The scores are those of ``textsim score``
to the last bit, as the same code computes them.

Each worker process builds the evaluators of a metric list once, on its first
batch, and keeps them (WordNet and the tokenizers load once per process).
pandas and pyarrow are only touched when the batch is one of theirs.

Judge metrics (``similarity``...) work too: each worker process builds its own
judge client from the ``TEXTSIM_*`` / ``OPENAI_*`` environment variables of
that process, with its own SQLite cache (keep ``TEXTSIM_CACHE_DIR`` on a local
disk of each worker, never a shared network folder), and ``textsim cache
export`` / ``import`` merge the workers' caches afterwards.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

from .chunks import MetricPlan, Plan, PlanEvaluators, scorer
from .plan import Choice, UsageError, parse_mapping, parse_metrics

B = TypeVar("B")

def _option_texts(options: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """``{"bleu_score": {"weights": (1,)}}`` as ``--option`` values: ``bleu_score.weights=1``."""
    texts = []
    for metric, chosen in options.items():
        if not isinstance(chosen, Mapping):
            raise UsageError(
                f"options[{metric!r}]: expected a dict of options such as {{'weights': (1,)}}, "
                f"got {type(chosen).__name__}"
            )
        for key, value in chosen.items():
            if isinstance(value, bool):
                text = "true" if value else "false"
            elif isinstance(value, (list, tuple)):
                text = ",".join(str(v) for v in value)
            else:
                text = str(value)
            texts.append(f"{metric}.{key}={text}")
    return texts


def _plan(
    metrics: Sequence[str] | str,
    thresholds: Mapping[str, float] | None,
    mapping: Mapping[str, str] | None,
    options: Mapping[str, Mapping[str, Any]] | None = None,
) -> Plan:
    from ..settings.table import Resolver
    from .plan import apply_options

    specs = [metrics] if isinstance(metrics, str) else list(metrics)
    try:
        choices = parse_metrics(specs)
        if options:
            apply_options(choices, _option_texts(options), [])
        wanted = _thresholds(thresholds or {}, choices)
        maps = parse_mapping([f"{k}={v}" for k, v in (mapping or {}).items()])
    except UsageError as exc:
        raise ValueError(f"score_batch(): {exc}") from None
    resolver = Resolver(config=None)
    return Plan(
        "batch",
        tuple(
            MetricPlan(
                c.spec,
                wanted[c.name] if c.name in wanted else c.threshold_default(resolver),
                c.rename_keys,
                c.judge,
                tuple(sorted(c.given_options.items())),
            )
            for c in choices
        ),
        tuple(sorted(maps.items())),
    )


def _thresholds(given: Mapping[str, float], choices: Sequence[Choice]) -> dict[str, float]:
    from .plan import parse_thresholds

    return parse_thresholds([f"{k}={v}" for k, v in given.items()], choices)


def _cached_plan(
    metrics: Sequence[str] | str,
    thresholds: Mapping[str, float] | None,
    mapping: Mapping[str, str] | None,
    options: Mapping[str, Mapping[str, Any]] | None = None,
) -> Plan:
    key = (
        (metrics,) if isinstance(metrics, str) else tuple(metrics),
        tuple(sorted((thresholds or {}).items())),
        tuple(sorted((mapping or {}).items())),
        repr(sorted((m, sorted(o.items()) if isinstance(o, Mapping) else o)
                    for m, o in (options or {}).items())),
    )  # fmt: skip
    return _plan_once(_Request(key, (metrics, thresholds, mapping, options)))


@dataclass(frozen=True)
class _Request:
    """What to build, compared and hashed by ``key`` alone (``args`` build it)."""

    key: Any
    args: tuple[Any, ...] = field(compare=False)


@functools.cache
def _plan_once(request: _Request) -> Plan:
    """The plan ``request`` asks for, built once per process."""
    return _plan(*request.args)


def _judge(plan: Plan, index: int, choice: Choice) -> Callable[..., dict[str, Any]]:
    return _judge_once(_Request((plan, index), (plan, index, choice)))


@functools.cache
def _judge_once(request: _Request) -> Callable[..., dict[str, Any]]:
    """The judge evaluator of a plan's metric, built once per process."""
    from ..settings.table import Resolver

    plan, index, choice = request.args
    made = choice.build(plan.metrics[index].threshold, Resolver(config=None))
    found: Callable[..., dict[str, Any]] = getattr(made, "evaluator", made)
    return found


def _score_rows(plan: Plan, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The output columns of each row (not the input's), in ``textsim score``'s order."""
    work: PlanEvaluators = scorer(plan)
    results: list[dict[str, Any]] = []
    for number, row in enumerate(rows):
        texts, problems = work.check.texts(_without_missing(row))
        if problems:
            raise ValueError(f"score_batch(): row {number}: {'; '.join(problems)}")
        outputs = work.score_texts(texts)
        columns: dict[str, Any] = {}
        for index, (choice, output) in enumerate(zip(work.choices, outputs)):
            if output is None:
                wanted = choice.inputs + choice.optional_inputs
                output = _judge(plan, index, choice)(
                    **{k: v for k, v in texts.items() if k in wanted}
                )
            columns.update({choice.output_key(k): v for k, v in output.items()})
        results.append(columns)
    return results


def _without_missing(row: Mapping[str, Any]) -> Mapping[str, Any]:
    """``row`` with pandas' and Arrow's stand-ins for a missing value (NaN, ``pd.NA``) as None.

    A column absent from some rows of a file is NaN there once in a DataFrame:
    an optional text (``query``) must then count as absent, not as a number.
    A list of references in a DataFrame cell is a numpy array (a pyarrow list
    column converted): it is read as the list it holds.
    """
    missing = [
        key
        for key, value in row.items()
        if (isinstance(value, float) and value != value) or type(value).__name__ == "NAType"
    ]
    arrays = [key for key, value in row.items() if type(value).__name__ == "ndarray"]
    if not missing and not arrays:
        return row
    return {
        key: None if key in missing else value.tolist() if key in arrays else value
        for key, value in row.items()
    }


def _sample_columns(plan: Plan) -> dict[str, Any]:
    """Each output column with a value of its type, for an empty batch.

    Dask calls the function on an empty frame to learn the output's columns and
    types (its ``meta``); judge metrics are not called for that.
    """
    work = scorer(plan)
    sample = {"response": "a", "ground_truth": "a", "query": "a", "context": "a"}
    columns: dict[str, Any] = {}
    for choice, output in zip(work.choices, work.score_texts(sample)):
        columns.update({choice.output_key(k): v for k, v in (output or {}).items()})
    return columns


def _kind(batch: object) -> str:
    module = type(batch).__module__.split(".", 1)[0]
    if module == "pandas" and hasattr(batch, "to_dict"):
        return "pandas"
    if module == "pyarrow" and hasattr(batch, "to_pylist"):
        return "arrow"
    if isinstance(batch, Mapping):
        return "columns"
    if isinstance(batch, Iterable) and not isinstance(batch, (str, bytes)):
        return "rows"  # a list, or a Dask bag partition (any iterable of dicts)
    raise TypeError(
        "score_batch(): expected a list of dicts, a dict of columns, a pandas DataFrame "
        f"or a pyarrow Table, got {type(batch).__name__}"
    )


def score_batch(
    batch: B,
    metrics: Sequence[str] | str,
    *,
    thresholds: Mapping[str, float] | None = None,
    mapping: Mapping[str, str] | None = None,
    options: Mapping[str, Mapping[str, Any]] | None = None,
) -> B:
    """Score every row of ``batch``; the same batch type back with the score columns added.

    ``batch`` is a list (or any iterable) of dicts, as a Dask bag partition is,
    a dict of columns (Ray Data's default batch: lists or numpy arrays), a pandas DataFrame or a
    pyarrow Table. ``metrics`` are ``textsim score --metric`` names
    (``"bleu_score"``, ``"rouge_score:rouge1"``, ``"similarity"``),
    ``thresholds`` maps a metric to its pass threshold (``{"bleu_score": 0.3}``;
    default: the ``TEXTSIM_THRESHOLD_*`` variables, else 0.5, judge metrics 3)
    and ``mapping`` reads a field from another column
    (``{"response": "answer"}``). ``options`` gives a metric's options as
    ``textsim score --option`` does (``{"bleu_score": {"weights": (1,), "smoothing": 0}}``).
    A row without a text a metric needs raises
    ``ValueError`` naming the row.

    >>> rows = [{"response": "The cat sat.", "ground_truth": "The cat sat down."}]
    >>> score_batch(rows, ["f1_score"])  # doctest: +NORMALIZE_WHITESPACE
    [{'response': 'The cat sat.', 'ground_truth': 'The cat sat down.',
      'f1_score': 0.8, 'f1_result': 'pass', 'f1_threshold': 0.5}]
    """
    plan = _cached_plan(metrics, thresholds, mapping, options)
    kind = _kind(batch)
    if kind == "rows":
        rows: Sequence[Mapping[str, Any]] = list(batch)  # type: ignore[call-overload]
        return [  # type: ignore[return-value]
            {**row, **scores} for row, scores in zip(rows, _score_rows(plan, rows))
        ]
    if kind == "columns":
        return _score_columns(plan, batch)  # type: ignore[arg-type, return-value]
    if kind == "pandas":
        frame: Any = batch
        out = frame.copy()
        if len(frame) == 0:
            import pandas

            for name, value in _sample_columns(plan).items():
                out[name] = pandas.Series([value]).iloc[:0].set_axis(frame.index)
            return out  # type: ignore[no-any-return]
        for name, values in _columns(_score_rows(plan, frame.to_dict("records"))).items():
            out[name] = values
        return out  # type: ignore[no-any-return]
    table: Any = batch
    import pyarrow

    if table.num_rows == 0:
        for name, value in _sample_columns(plan).items():
            table = table.append_column(name, pyarrow.array([value])[:0])
        return table  # type: ignore[no-any-return]
    for name, values in _columns(_score_rows(plan, table.to_pylist())).items():
        table = table.append_column(name, pyarrow.array(values))
    return table  # type: ignore[no-any-return]


def _columns(scored: Sequence[dict[str, Any]]) -> dict[str, list[Any]]:
    names = list(scored[0]) if scored else []
    return {name: [row.get(name) for row in scored] for name in names}


def _score_columns(plan: Plan, batch: Mapping[str, Any]) -> dict[str, Any]:
    names = list(batch)
    count = len(batch[names[0]]) if names else 0
    rows = [{name: _native(batch[name][i]) for name in names} for i in range(count)]
    out = dict(batch)
    numpy_in = any(type(v).__module__.split(".", 1)[0] == "numpy" for v in batch.values())
    for name, values in _columns(_score_rows(plan, rows)).items():
        if numpy_in:
            import numpy

            out[name] = numpy.asarray(values)
        else:
            out[name] = values
    return out


def _native(value: Any) -> Any:
    """A numpy scalar (``numpy.str_``) as the Python value it stands for."""
    item = getattr(value, "item", None)
    return item() if item is not None and type(value).__module__ == "numpy" else value


def score_batches(
    batches: Iterable[B],
    metrics: Sequence[str] | str,
    *,
    thresholds: Mapping[str, float] | None = None,
    mapping: Mapping[str, str] | None = None,
    options: Mapping[str, Mapping[str, Any]] | None = None,
) -> Iterator[B]:
    """:func:`score_batch` over an iterator of batches: the body of Spark's ``mapInPandas``.

    >>> from functools import partial
    >>> body = partial(score_batches, metrics=["bleu_score"])
    >>> [len(batch) for batch in body(iter([[{"response": "a b", "ground_truth": "a b"}]]))]
    [1]
    """
    for batch in batches:
        yield score_batch(batch, metrics, thresholds=thresholds, mapping=mapping, options=options)
