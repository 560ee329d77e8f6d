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

from ..converters import as_float
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
    build: Callable[[float, Resolver], Callable[..., dict[str, Any]]]
    threshold_default: Callable[[Resolver], float]
    check_threshold: Callable[[Any, str], float]
    options: dict[str, Any] = field(default_factory=dict)
    params_of: Callable[[Any], dict[str, Any]] | None = None
    rename_keys: bool = False  # two variants given: rouge_f1_score -> rougeL_f1_score
    judge: bool = False

    def output_key(self, key: str) -> str:
        """The output row's key for ``key``: ``rouge_f1_score`` -> ``rougeL_f1_score``."""
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
        known = sorted(m.name if m.integer_scores else f"{m.name}_score" for m in METRICS.values())
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

    def build(threshold: float, resolver: Resolver) -> Callable[..., dict[str, Any]]:
        return metric.build(threshold, dict(options), resolver)

    return Choice(
        spec=text,
        name=metric.name,
        variant=resolved_variant,
        inputs=metric.inputs,
        optional_inputs=metric.optional_inputs,
        build=build,
        threshold_default=lambda resolver: float(resolver.get(metric.threshold_setting)),
        check_threshold=metric.check_threshold,
        options=options,
        params_of=metric.params,
        judge=metric.integer_scores,
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
            # Text from the command line: parsed here, then checked as any threshold.
            parsed = as_float(number.strip())
        except ValueError as exc:
            errors.append(f"{source}: {exc}")
            continue
        try:
            found[name] = matching[0].check_threshold(parsed, source)
        except ValueError as exc:
            errors.append(str(exc))
    if errors:
        raise UsageError("\n".join(errors))
    return found


def parse_mapping(values: Sequence[str]) -> dict[str, str]:
    mapping, errors = {}, []
    for value in values:
        target, sep, column = value.partition("=")
        target, column = target.strip(), column.strip()
        if not sep or not column:
            errors.append(f"--map {value!r}: expected FIELD=COLUMN, e.g. response=answer")
        elif target not in FIELDS:
            errors.append(f"--map {value!r}: unknown field {target!r}; fields: {', '.join(FIELDS)}")
        else:
            mapping[target] = column
    if errors:
        raise UsageError("\n".join(errors))
    return mapping


# -- score: input -----------------------------------------------------------------


@dataclass
class Row:
    """One input line: where it came from, the whole object, and the texts to score."""

    where: str  # "data.jsonl:3"
    name: str  # "data.jsonl:3" or the --id-field value
    data: dict[str, Any]
    texts: dict[str, str]


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
    rows: list[Row] = []
    errors: list[tuple[str, str]] = []  # (field missing, or "", message)
    first: list[dict[str, Any]] = []  # the first rows: a field none has is a --map matter
    for line in _objects(path, display, stream):
        where, data = line.where, line.value
        if data is None:
            errors.append(("", f"{where}: {line.problem}"))
            continue
        if len(first) < FIELD_CHECK_ROWS:
            first.append(data)
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
                            ("", f'"{column}"{renamed} is null; a string is needed by {users}')
                        )
                    else:
                        present = ", ".join(data) or "none"
                        problems.append(
                            (
                                name,
                                f'missing "{column}"{renamed}, needed by {users}; '
                                f"fields present: {present}",
                            )
                        )
                continue
            if not isinstance(value, str):
                problems.append(("", f'"{column}" must be a string, got {json_type(value)}'))
                continue
            texts[name] = value
        if problems:
            errors.extend((field, f"{where}: {problem}") for field, problem in problems)
            continue
        name = where
        if id_field:
            if id_field not in data:
                errors.append(("", f'{where}: missing "{id_field}" (--id-field)'))
                continue
            name = str(data[id_field])
        rows.append(Row(where, name, data, texts))
    if errors:
        raise UsageError("\n".join(_field_errors(display, errors, first, needed, mapping)))
    if not rows:
        raise UsageError(f"{display}: no rows to score (the file is empty)")
    return rows


#: A needed field absent from every one of this many first rows is one error
#: (with the --map that fixes it), not one line per row.
FIELD_CHECK_ROWS = 100
#: Column names datasets often use for each field (suggested with --map).
_USUAL_NAMES = {
    "response": ("answer", "output", "prediction", "completion", "generated", "hypothesis"),
    "ground_truth": ("reference", "expected", "target", "gold", "label", "truth"),
    "query": ("question", "prompt", "input", "instruction"),
    "context": ("passage", "document", "source", "contexts"),
}
#: Row-specific problems listed by file:line before the rest is counted.
ROW_ERRORS_LISTED = 20


def _field_errors(
    display: str,
    errors: list[tuple[str, str]],
    first: list[dict[str, Any]],
    needed: dict[str, list[str]],
    mapping: dict[str, str],
) -> list[str]:
    """The error lines: a field no first row has once, with a ``--map`` suggestion;
    the row-specific problems by ``file:line``, at most :data:`ROW_ERRORS_LISTED`."""
    import difflib

    lines = []
    absent_everywhere = []
    for name in needed:
        column = mapping.get(name, name)
        if first and all(column not in data for data in first):
            absent_everywhere.append(name)
            checked = f"any of the first {len(first)} rows" if len(first) > 1 else "the row"
            columns = list(dict.fromkeys(k for data in first for k in data))
            used = {mapping.get(n, n) for n in needed}
            texts = [
                k for k in columns
                if k not in used and all(isinstance(d.get(k), str) for d in first if k in d)
            ]  # fmt: skip
            close = [c for c in texts if c.lower() in _USUAL_NAMES.get(name, ())][:1]
            close = close or difflib.get_close_matches(column, texts, n=1, cutoff=0.5)
            hint = ""
            if close:
                hint = f"; did you mean --map {name}={close[0]}?"
            elif len(texts) == 1:
                hint = f"; its only other text column is {texts[0]!r}: --map {name}={texts[0]}"
            shown = ", ".join(columns) or "none"
            lines.append(
                f'{display}: no "{column}" field in {checked} (needed by '
                f"{', '.join(needed[name])}); columns: {shown}{hint}"
            )
    rows = [message for field, message in errors if field not in absent_everywhere or not field]
    lines.extend(rows[:ROW_ERRORS_LISTED])
    if len(rows) > ROW_ERRORS_LISTED:
        lines.append(f"... and {len(rows) - ROW_ERRORS_LISTED} more rows with problems")
    return lines


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
        for r, merged in enumerate(iter_score_rows((row.texts for row in rows), local)):
            for index in local:
                prefix = index + "."
                results[r][int(index)] = {
                    k[len(prefix) :]: v for k, v in merged.items() if k.startswith(prefix)
                }
            if progress is not None:
                progress.advance()
    if not remote:
        return results

    def judge_row(r: int) -> None:
        for i, choice, evaluator in remote:
            wanted = choice.inputs + choice.optional_inputs
            kwargs = {k: v for k, v in rows[r].texts.items() if k in wanted}
            client = getattr(evaluator, "judge", None)
            if client is not None:
                client.caller = rows[r].where  # named if the judge is found down here
            try:
                results[r][i] = evaluator(**kwargs)
            except Exception as exc:  # reported per row, the run goes on
                results[r][i] = exc
        if progress is not None:
            progress.advance()

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        list(pool.map(judge_row, range(len(rows))))
    return results
