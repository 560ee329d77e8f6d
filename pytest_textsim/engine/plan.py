"""What to score: ``--metric`` specs as metric-table evaluators, and the checks of one row.

:func:`metric_choice` turns ``bleu_score`` or ``rouge_score:rouge1`` into a
:class:`Choice` of the metric table (so the command line, the batch function
and the workers build exactly the same evaluators), and :class:`RowCheck` turns
one parsed input object into the texts to score or the problems that stop it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

from ..converters import as_float
from ..jsonl import json_type, surrogate_problem
from ..settings import Resolver

FIELDS = ("response", "ground_truth", "query", "context")


class UsageError(ValueError):
    """Bad arguments or input; the message says what and where (one problem per line)."""


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
    """Every ``--metric``; one :class:`UsageError` lists every bad or clashing one."""
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
    """``--threshold bleu_score=0.3`` values by evaluator name."""
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
    """``--map response=answer`` values as ``{field: column}``."""
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


def absent_fields(
    display: str,
    choices: Sequence[Choice],
    mapping: Mapping[str, str],
    first: Sequence[Mapping[str, Any]],
) -> list[str]:
    """One line per needed field that none of the ``first`` input objects has.

    Such a field is a ``--map`` matter, not a problem of each row: the line
    names the columns there are and, when a column has a usual or a similar
    name or is the only other text column, the ``--map`` that would fix it.
    """
    import difflib

    if not first:
        return []
    needed: dict[str, list[str]] = {}
    for choice in choices:
        for name in choice.inputs:
            needed.setdefault(name, []).append(choice.spec)
    used = {mapping.get(name, name) for name in needed}
    columns = list(dict.fromkeys(key for data in first for key in data))
    texts = [
        key for key in columns
        if key not in used and all(isinstance(d.get(key), str) for d in first if key in d)
    ]  # fmt: skip
    checked = f"any of the first {len(first)} rows" if len(first) > 1 else "the row"
    lines = []
    for name, users in needed.items():
        column = mapping.get(name, name)
        if any(column in data for data in first):
            continue
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
            f"{', '.join(users)}); columns: {shown}{hint}"
        )
    return lines


class RowCheck:
    """The texts each metric needs, read from one input object, or what is wrong with it.

    Built once from the metric specs and ``--map``; :meth:`texts` is called for
    every row, in the parent or in a worker.
    """

    def __init__(
        self,
        specs: Sequence[tuple[str, tuple[str, ...], tuple[str, ...]]],
        mapping: Mapping[str, str],
        id_field: str | None = None,
    ) -> None:
        """``specs``: ``(spec, inputs, optional_inputs)`` of each metric."""
        needed: dict[str, list[str]] = {}
        optional: set[str] = set()
        for spec, inputs, optional_inputs in specs:
            for name in inputs:
                needed.setdefault(name, []).append(spec)
            optional.update(optional_inputs)
        self._fields = [
            (name, mapping.get(name, name), name in needed, ", ".join(needed.get(name, ())))
            for name in [*needed, *sorted(optional - needed.keys())]
        ]
        self.id_field = id_field

    def texts(self, data: Mapping[str, Any]) -> tuple[dict[str, str], list[str]]:
        """``(texts, problems)``: the texts by field name, and each problem as a phrase."""
        texts: dict[str, str] = {}
        problems: list[str] = []
        for name, column, required, users in self._fields:
            value = data.get(column)
            if value is None:  # absent, or null: an optional text is then left out
                if required:
                    renamed = f" (the {name})" if column != name else ""
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
            # JSONL lines were checked when parsed; a batch from a cluster engine was not.
            surrogate = surrogate_problem(value)
            if surrogate:
                problems.append(f'"{column}" has {surrogate}')
                continue
            texts[name] = value
        if not problems and self.id_field and self.id_field not in data:
            problems.append(f'missing "{self.id_field}" (--id-field)')
        return texts, problems

    def name(self, data: Mapping[str, Any], where: str) -> str:
        """How messages and ``test=`` gate filters name the row: ``--id-field`` or file:line."""
        return str(data[self.id_field]) if self.id_field else where
