"""Scoring the rows of a JSONL file for ``textsim score``.

Three steps, each usable on its own: :func:`metric_choice` turns ``--metric``
values into evaluators of the metric table (plus chrF/TER), :func:`read_rows`
reads and checks every line (one error per bad line, ``file:line``), and
:func:`score_metrics` runs the evaluators: algorithmic ones through the batch
scorer, judge ones a few rows at a time with per-row errors.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Union

from ..jsonl import JsonlError, Line, json_type, read_objects
from ..settings import Resolver

FIELDS = ("response", "ground_truth", "query", "context")


class UsageError(Exception):
    """Bad arguments or input; the message says what and where (one problem per line)."""


# -- score: metrics ---------------------------------------------------------------


@dataclass
class Choice:
    """One ``--metric``: how to build its evaluator and what it needs."""

    spec: str  # as given: "rouge_score:rougeL"
    name: str  # evaluator name in records: "rouge"
    variant: str | None
    inputs: tuple[str, ...]
    optional_inputs: tuple[str, ...]
    build: Callable[..., Callable[..., dict[str, Any]]]  # (threshold, resolver, extra options)
    threshold_default: Callable[[Resolver], float | None]
    check_threshold: Callable[[Any, str], float]
    options: dict[str, Any] = field(default_factory=dict)
    params_of: Callable[[Any], dict[str, Any]] | None = None
    rename_keys: bool = False  # two variants given: rouge_f1_score -> rougeL_f1_score
    judge: bool = False
    # Options read from a column of each row (--map contains.strings=COLUMN): option -> column.
    row_options: dict[str, str] = field(default_factory=dict)
    convert_option: Callable[[str, Any, str], Any] | None = None
    required_options: tuple[str, ...] = ()
    option_names: tuple[str, ...] = ()
    variant_option: str | None = None
    output_params: dict[str, str] = field(default_factory=dict)

    def output_key(self, key: str) -> str:
        """The output row's key for ``key``: ``rouge_f1_score`` -> ``rougeL_f1_score``,
        ``rubric_result`` -> ``rubric_politeness_result``."""
        if self.name == "rubric" and self.variant and key.startswith("rubric"):
            return f"rubric_{self.variant}{key[len('rubric') :]}"
        if self.rename_keys and self.variant:
            prefix = f"{self.name}_"
            if key.startswith(prefix):
                return f"{self.variant}_{key[len(prefix) :]}"
            return f"{key}_{self.variant}"
        return key


def metric_choice(spec: str) -> Choice:
    """Parse one ``--metric`` value; :class:`UsageError` says what names exist."""
    from ..catalog import METRICS

    text = spec.strip()
    base, _, variant_text = text.partition(":")
    base = base.strip().lower()
    variant = variant_text.strip() or None
    name = base[: -len("_score")] if base.endswith("_score") else base
    metric = METRICS.get(name)
    if metric is None:
        # Algorithmic metrics by their score key (bleu_score), judge metrics by name.
        known = sorted(
            m.name if m.score_keys.get(m.name) == m.name else f"{m.name}_score"
            for m in METRICS.values()
        )
        raise UsageError(f"--metric {spec!r}: unknown metric; known: {', '.join(known)}")
    options = dict(metric.option_defaults)
    if variant:
        if not metric.variant_option:
            raise UsageError(f"--metric {spec!r}: {base} takes no ':variant'")
        try:
            options[metric.variant_option] = metric.convert_option(
                metric.variant_option, variant, f"--metric {spec!r}"
            )
        except (TypeError, ValueError) as exc:
            raise UsageError(str(exc)) from None
    resolved_variant = options.get(metric.variant_option) if metric.variant_option else None

    def build(
        threshold: float | None, resolver: Resolver, extra: dict[str, Any] | None = None
    ) -> Callable[..., dict[str, Any]]:
        return metric.build(threshold, {**options, **(extra or {})}, resolver)

    def threshold_default(resolver: Resolver) -> float | None:
        value = resolver.get(metric.threshold_setting)
        return None if value is None else float(value)

    return Choice(
        spec=text,
        name=metric.name,
        variant=resolved_variant,
        inputs=metric.inputs,
        optional_inputs=metric.optional_inputs,
        build=build,
        threshold_default=threshold_default,
        check_threshold=metric.check_threshold,
        options=options,
        params_of=metric.params,
        judge=metric.calls_model,
        convert_option=metric.convert_option,
        required_options=metric.leading_options,
        option_names=tuple(metric.options),
        variant_option=metric.variant_option,
        output_params=dict(metric.output_params),
    )


def parse_metrics(specs: Sequence[str]) -> list[Choice]:
    if not specs:
        raise UsageError("give at least one --metric, e.g. --metric bleu_score")
    choices, errors = [], []
    for spec in specs:
        try:
            choices.append(metric_choice(spec))
        except UsageError as exc:
            errors.append(str(exc))
    seen: dict[tuple[str, str | None], str] = {}
    for choice in choices:
        key = (choice.name, choice.variant)
        if key in seen:
            errors.append(f"--metric {choice.spec!r}: same metric as --metric {seen[key]!r}")
        seen[key] = choice.spec
    # qa scores its parts too: with one of them again, both would write the same
    # keys and every summary and gate would count those scores twice.
    qa = next((c for c in choices if c.name == "qa"), None)
    if qa is not None:
        from ..catalog import METRICS

        for choice in choices:
            if choice is not qa and choice.name in METRICS["qa"].score_keys:
                errors.append(
                    f"--metric {choice.spec!r}: --metric {qa.spec!r} already scores "
                    f"{choice.name}; give one of the two"
                )
    if errors:
        raise UsageError("\n".join(errors))
    # Two variants of one evaluator write the same keys: name them by variant.
    names = [c.name for c in choices]
    for choice in choices:
        if names.count(choice.name) > 1 and choice.variant:
            choice.rename_keys = True
    return choices


def parse_thresholds(values: Sequence[str], choices: Sequence[Choice]) -> dict[str, float]:
    """``--threshold bleu_score=0.3`` values by evaluator name (and variant spec)."""
    found: dict[str, float] = {}
    errors = []
    for value in values:
        key, sep, number = value.partition("=")
        source = f"--threshold {value!r}"
        if not sep:
            errors.append(f"{source}: expected METRIC=X, e.g. bleu_score=0.3")
            continue
        key = key.strip().lower()
        name = key[: -len("_score")] if key.endswith("_score") else key
        matching = [c for c in choices if c.name == name]
        if not matching:
            errors.append(f"{source}: no --metric {key} to apply it to")
            continue
        try:
            found[name] = matching[0].check_threshold(number.strip(), source)
        except ValueError as exc:
            errors.append(str(exc))
    if errors:
        raise UsageError("\n".join(errors))
    return found


def parse_mapping(values: Sequence[str]) -> dict[str, str]:
    """``--map FIELD=COLUMN`` for the texts (``METRIC.OPTION=COLUMN`` ones are left
    to :func:`apply_options`)."""
    mapping, errors = {}, []
    for value in values:
        target, sep, column = value.partition("=")
        target, column = target.strip(), column.strip()
        if "." in target:
            continue  # an option column
        if not sep or not column:
            errors.append(f"--map {value!r}: expected FIELD=COLUMN, e.g. response=answer")
        elif target not in FIELDS:
            errors.append(f"--map {value!r}: unknown field {target!r}; fields: {', '.join(FIELDS)}")
        else:
            mapping[target] = column
    if errors:
        raise UsageError("\n".join(errors))
    return mapping


def _option_value(text: str, source: str) -> str:
    """``@FILE`` as the file's text (a schema, a rubric), anything else as given."""
    if not text.startswith("@"):
        return text
    path = text[1:]
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise UsageError(f"{source}: cannot read {path} ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise UsageError(f"{source}: {path} is not UTF-8 text") from None


def parse_rubrics(values: Sequence[str]) -> list[Choice]:
    """``--rubric NAME=TEXT`` or ``--rubric NAME=@FILE``: one rubric metric each."""
    choices, errors = [], []
    for value in values:
        name, sep, text = value.partition("=")
        source = f"--rubric {value[:60]!r}"
        if not sep or not name.strip() or not text.strip():
            errors.append(f"{source}: expected NAME=CRITERIA or NAME=@FILE, e.g. "
                          "politeness='The answer is polite.'")  # fmt: skip
            continue
        try:
            choice = metric_choice(f"rubric:{name.strip()}")
            criteria = _option_value(text, source)
            assert choice.convert_option is not None
            choice.options["criteria"] = choice.convert_option("criteria", criteria, source)
        except (UsageError, ValueError, TypeError) as exc:
            errors.append(str(exc))
            continue
        choice.spec = f"--rubric {name.strip()}"
        choices.append(choice)
    if errors:
        raise UsageError("\n".join(errors))
    return choices


def apply_options(
    choices: Sequence[Choice], options: Sequence[str], mapping: Sequence[str]
) -> None:
    """``--option METRIC.KEY=VALUE`` and ``--map METRIC.KEY=COLUMN`` onto the metrics.

    ``VALUE`` may be ``@FILE`` (the file's text: a JSON Schema, a rubric's
    criteria). A metric whose required option (``contains.strings``,
    ``regex.pattern``, ``json_schema.schema``, a rubric's ``criteria``) comes
    from neither is a :class:`UsageError` naming it.
    """
    errors = []

    def target(text: str, source: str) -> tuple[list[Choice], str] | None:
        metric, dot, key = text.strip().partition(".")
        metric = metric.strip().lower()
        metric = metric[: -len("_score")] if metric.endswith("_score") else metric
        if not dot or not key.strip():
            errors.append(f"{source}: expected METRIC.OPTION, e.g. contains.strings")
            return None
        matching = [c for c in choices if c.name == metric]
        if not matching:
            errors.append(f"{source}: no --metric {metric} to apply it to")
            return None
        return matching, key.strip()

    for value in options:
        name, sep, raw = value.partition("=")
        source = f"--option {value[:60]!r}"
        if not sep:
            errors.append(f"{source}: expected METRIC.OPTION=VALUE, e.g. contains.strings=a,b")
            continue
        found = target(name, source)
        if found is None:
            continue
        try:
            text = _option_value(raw, source)
            for choice in found[0]:
                assert choice.convert_option is not None
                choice.options[found[1]] = choice.convert_option(found[1], text, source)
        except (UsageError, ValueError, TypeError) as exc:
            errors.append(str(exc))
    for value in mapping:
        name, _, column = value.partition("=")
        if "." not in name:
            continue
        source = f"--map {value!r}"
        found = target(name, source)
        if found is None:
            continue
        if not column.strip():
            errors.append(f"{source}: expected METRIC.OPTION=COLUMN")
            continue
        for choice in found[0]:
            if found[1] not in choice.option_names:
                valid = ", ".join(choice.option_names) or "none"
                errors.append(f"{source}: {choice.name} has no option {found[1]!r} "
                              f"(valid: {valid})")  # fmt: skip
                continue
            choice.row_options[found[1]] = column.strip()
    for choice in choices:
        for option in choice.required_options:
            if option not in choice.options and option not in choice.row_options:
                errors.append(
                    f"{choice.spec}: needs option {option!r}: give --option "
                    f"{choice.name}.{option}=VALUE (or @FILE) or --map "
                    f"{choice.name}.{option}=COLUMN"
                )
    if errors:
        raise UsageError("\n".join(errors))


# -- score: input -----------------------------------------------------------------


@dataclass
class Row:
    """One input line: where it came from, the whole object, and the texts to score."""

    where: str  # "data.jsonl:3"
    name: str  # "data.jsonl:3" or the --id-field value
    data: dict[str, Any]
    texts: dict[str, str]
    # Option values from the row's columns, by "metric.option" (--map contains.strings=COL).
    options: dict[str, Any] = field(default_factory=dict)


def read_rows(
    path: str,
    choices: Sequence[Choice],
    mapping: dict[str, str],
    id_field: str | None = None,
    stream: Iterable[str] | None = None,
) -> list[Row]:
    """Read and check every line; one :class:`UsageError` lists every bad line."""
    display = "<stdin>" if path == "-" else path
    needed: dict[str, list[str]] = {}
    optional: set[str] = set()
    for choice in choices:
        for name in choice.inputs:
            needed.setdefault(name, []).append(choice.spec)
        optional.update(choice.optional_inputs)
    rows, errors = [], []
    for line in _objects(path, display, stream):
        where, data = line.where, line.value
        if data is None:
            errors.append(f"{where}: {line.problem}")
            continue
        texts, problems = {}, []
        for name in [*needed, *sorted(optional - needed.keys())]:
            column = mapping.get(name, name)
            value = data.get(column)
            if value is None:  # absent, or null: an optional text is then left out
                if name in needed:
                    renamed = f" (the {name})" if column != name else ""
                    users = ", ".join(needed[name])
                    if column in data:
                        problems.append(
                            f'"{column}"{renamed} is null; a string is needed by {users}'
                        )
                    else:
                        present = ", ".join(data) or "none"
                        problems.append(
                            f'missing "{column}"{renamed}, needed by {users}; '
                            f"fields present: {present}"
                        )
                continue
            if not isinstance(value, str):
                problems.append(f'"{column}" must be a string, got {json_type(value)}')
                continue
            texts[name] = value
        options: dict[str, Any] = {}
        for choice in choices:
            for option, column in choice.row_options.items():
                value = data.get(column)
                if value is None:
                    problems.append(
                        f'missing "{column}", the {option} of {choice.spec} '
                        f"(--map {choice.name}.{option}={column})"
                    )
                    continue
                try:
                    assert choice.convert_option is not None
                    options[f"{choice.name}.{option}"] = choice.convert_option(
                        option, value, f'"{column}"'
                    )
                except (ValueError, TypeError) as exc:
                    problems.append(str(exc))
        if problems:
            errors.extend(f"{where}: {problem}" for problem in problems)
            continue
        name = where
        if id_field:
            if id_field not in data:
                errors.append(f'{where}: missing "{id_field}" (--id-field)')
                continue
            name = str(data[id_field])
        rows.append(Row(where, name, data, texts, options))
    if errors:
        raise UsageError("\n".join(errors))
    if not rows:
        raise UsageError(f"{display}: no rows to score (the file is empty)")
    return rows


def _objects(path: str, display: str, stream: Iterable[str] | None) -> Iterator[Line]:
    try:
        yield from read_objects(path, display, stream)
    except JsonlError as exc:  # missing file, not UTF-8: nothing more can be read
        raise UsageError(str(exc)) from None


# -- score: running -----------------------------------------------------------------


class Progress:
    """A one-line progress bar on a terminal; silent in CI logs and pipes."""

    def __init__(self, total: int, stream: IO[str], enabled: bool) -> None:
        self.total, self.stream, self.enabled = total, stream, enabled
        self.done = 0
        self.start = time.monotonic()
        self._shown = 0.0
        self._lock = threading.Lock()  # judge rows finish on several threads

    @staticmethod
    def wanted(stream: IO[str], forced: bool | None) -> bool:
        if forced is not None:
            return forced
        # CI systems set CI=true; their logs are not terminals but some fake one.
        interactive = getattr(stream, "isatty", lambda: False)()
        return bool(interactive) and not os.environ.get("CI") and os.environ.get("TERM") != "dumb"

    def advance(self) -> None:
        with self._lock:
            self.done += 1
            self._draw()

    def _draw(self) -> None:
        now = time.monotonic()
        if self.enabled and (now - self._shown >= 0.1 or self.done == self.total):
            self._shown = now
            width = 30
            filled = width * self.done // self.total
            bar = "#" * filled + "-" * (width - filled)
            self.stream.write(
                f"\rscoring [{bar}] {self.done}/{self.total} rows {now - self.start:.1f}s"
            )
            self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.done:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


Output = Union[dict[str, Any], Exception]  # a runtime alias: no "|" on Python 3.9


def score_metrics(
    rows: Sequence[Row],
    evaluators: Sequence[tuple[Choice, Callable[..., dict[str, Any]]]],
    workers: int = 1,
    progress: Progress | None = None,
) -> list[list[Output]]:
    """Outputs per row and metric; an exception in place of a judge output that failed.

    Algorithmic metrics go through :func:`pytest_textsim.nlp.batch.iter_score_rows`
    (each text tokenized once per row, whatever the number of metrics). Judge
    metrics run ``workers`` rows at a time (the judge client bounds the calls
    in flight), and a failed call is reported for its row while the run goes on.
    """
    from ..nlp.batch import iter_score_rows

    results: list[list[Output]] = [[{} for _ in evaluators] for _ in rows]
    local = {str(i): ev for i, (c, ev) in enumerate(evaluators) if not c.judge}
    remote = [(i, c, ev) for i, (c, ev) in enumerate(evaluators) if c.judge]
    if local:
        texts = ({**row.texts, **row.options} for row in rows)
        for r, merged in enumerate(iter_score_rows(texts, local)):
            for index in local:
                prefix = index + "."
                results[r][int(index)] = {
                    k[len(prefix) :]: v for k, v in merged.items() if k.startswith(prefix)
                }
            if progress is not None:
                progress.advance()
    if not remote:
        return results
    failed: dict[int, Exception] = {}
    for i, _, evaluator in remote:
        prepare = getattr(evaluator, "prepare", None)
        if callable(prepare):
            # Embeddings: every row's texts in batches now, so each row is a cache hit.
            try:
                prepare([row.texts for row in rows])
            except Exception as exc:  # the same for every row: reported per row
                failed[i] = exc

    def judge_row(r: int) -> None:
        for i, choice, evaluator in remote:
            if i in failed:
                results[r][i] = failed[i]
                continue
            wanted = choice.inputs + choice.optional_inputs
            kwargs = {k: v for k, v in rows[r].texts.items() if k in wanted}
            prefix = f"{choice.name}."
            kwargs.update({k: v for k, v in rows[r].options.items() if k.startswith(prefix)})
            try:
                results[r][i] = evaluator(**kwargs)
            except Exception as exc:  # reported per row, the run goes on
                results[r][i] = exc
        if progress is not None:
            progress.advance()

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        list(pool.map(judge_row, range(len(rows))))
    return results


class RowOptions:
    """A metric whose options come from each row (``--map contains.strings=COLUMN``):
    one evaluator per distinct set of values, built on first use."""

    def __init__(self, choice: Choice, threshold: float | None, resolver: Resolver) -> None:
        self.choice, self.threshold, self.resolver = choice, threshold, resolver
        self._made: dict[str, Any] = {}
        self._lock = threading.Lock()
        self.judge: Any = None  # the judge of the evaluators built, for its statistics

    def _picked(self, values: dict[str, Any]) -> dict[str, Any]:
        prefix = f"{self.choice.name}."
        return {k[len(prefix) :]: v for k, v in values.items() if k.startswith(prefix)}

    def _evaluator(self, picked: dict[str, Any]) -> Any:
        key = repr(sorted(picked.items()))
        with self._lock:
            made = self._made.get(key)
            if made is None:
                made = self._made[key] = self.choice.build(self.threshold, self.resolver, picked)
                self.judge = getattr(made, "judge", None) or self.judge
        return made

    def params_for(self, row_options: dict[str, Any]) -> dict[str, Any]:
        """The parameters of the evaluator that scored a row with these option values."""
        picked = self._picked(row_options)
        params = dict(picked)
        if self.choice.params_of is not None:
            params.update(self.choice.params_of(self._evaluator(picked)))
        return params

    def __call__(self, **kwargs: Any) -> dict[str, Any]:
        made = self._evaluator(self._picked(kwargs))
        evaluator = getattr(made, "evaluator", made) if self.choice.judge else made
        wanted = self.choice.inputs + self.choice.optional_inputs
        return evaluator(**{k: v for k, v in kwargs.items() if k in wanted})  # type: ignore[no-any-return]
