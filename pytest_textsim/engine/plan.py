"""What to score: ``--metric`` specs as metric-table evaluators, and the checks of one row.

:func:`metric_choice` turns ``bleu_score`` or ``rouge_score:rouge1`` into a
:class:`Choice` of the metric table (so the command line, the batch function
and the workers build exactly the same evaluators), :func:`parse_rubrics` and
:func:`apply_options` add ``--rubric NAME=TEXT`` and the metrics' options
(``--option contains.strings=a,b``, ``--map contains.strings=COLUMN``), and
:class:`RowCheck` turns one parsed input object into the texts to score or the
problems that stop it.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

from ..conversation.messages import conversation_problem
from ..errors import TextsimError
from ..evaluator import chunks_problem
from ..jsonl import json_type, surrogate_problem
from ..settings.converters import as_float
from ..settings.table import Resolver
from ..traces.trajectory import trajectory_problem

FIELDS = ("response", "ground_truth", "query", "context", "conversation", "trace")


class UsageError(TextsimError, ValueError):
    """Bad arguments or input; the message says what and where (one problem per line)."""


@dataclass
class Choice:
    """One ``--metric``: how to build its evaluator and what it needs."""

    spec: str  # as given: "rouge_score:rougeL"
    name: str  # evaluator name in records: "rouge"
    variant: str | None
    inputs: tuple[str, ...]
    optional_inputs: tuple[str, ...]
    build: Callable[..., Callable[..., dict[str, Any]]]  # (threshold, resolver, extra options)
    # None: the evaluator's own default (a rubric's depends on its scale).
    threshold_default: Callable[[Resolver], float | None]
    check_threshold: Callable[[Any, str], float]
    options: dict[str, Any] = field(default_factory=dict)
    params_of: Callable[[Any], dict[str, Any]] | None = None
    rename_keys: bool = False  # two variants given: rouge_f1_score -> rougeL_f1_score
    judge: bool = False  # asks a model (judge, embeddings): called in the parent only
    # Options read from a column of each row (--map contains.strings=COLUMN): option -> column.
    row_options: dict[str, str] = field(default_factory=dict)
    # Options given as text (--option, --rubric; @FILE already read), as a worker
    # process converts them again: option -> text.
    given_options: dict[str, str] = field(default_factory=dict)
    convert_option: Callable[[str, Any, str], Any] | None = None
    required_options: tuple[str, ...] = ()
    is_builtin: Callable[[Any], bool] = lambda variant: False  # brings the required options
    option_names: tuple[str, ...] = ()
    variant_option: str | None = None
    variant_param: str | None = None
    output_params: dict[str, str] = field(default_factory=dict)
    reference_lists: bool = False  # its ground_truth may be a list of references
    label: str = ""  # how messages name it when not by its spec: "--rubric politeness"

    @property
    def renames(self) -> bool:
        """Whether :meth:`output_key` changes any key (a named rubric always does)."""
        return bool(self.variant) and (self.rename_keys or self.name == "rubric")

    @property
    def shown(self) -> str:
        """How messages name this metric: ``--metric`` as given, or ``--rubric NAME``."""
        return self.label or self.spec

    def output_key(self, key: str) -> str:
        """The output row's key for ``key``: ``rouge_f1_score`` -> ``rougeL_f1_score``,
        ``rubric_result`` -> ``rubric_politeness_result``."""
        from ..gating.scored import output_key

        return output_key(self.name, self.variant, self.rename_keys, key)


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
        # Algorithmic metrics by their score key (bleu_score), judge metrics and checks by name.
        known = sorted(
            m.name
            if m.calls_model or m.score_keys.get(m.name) == m.name
            else f"{m.name}_score"
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
        # ``options`` is the Choice's own dict: --option and --rubric fill it later.
        return metric.build(threshold, {**options, **(extra or {})}, resolver)

    def threshold_default(resolver: Resolver) -> float | None:
        value = resolver.get(metric.threshold_setting)
        return None if value is None else float(value)

    return Choice(
        spec=text,
        name=metric.name,
        variant=resolved_variant,
        inputs=metric.inputs,
        # A single-answer metric scores a row's own texts here, never a conversation's
        # turns (a row's "conversation" field is another metric's).
        optional_inputs=tuple(
            name for name in metric.optional_inputs
            if not (metric.takes_turns and name == "conversation")
        ),
        build=build,
        threshold_default=threshold_default,
        check_threshold=metric.check_threshold,
        options=options,
        params_of=metric.params,
        judge=metric.calls_model,
        convert_option=metric.convert_option,
        required_options=metric.leading_options,
        is_builtin=metric.is_builtin,
        option_names=tuple(metric.options),
        variant_option=metric.variant_option,
        variant_param=metric.variant_param,
        output_params=dict(metric.output_params),
        reference_lists=metric.reference_lists,
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
    """``--map response=answer`` values as ``{field: column}`` (``METRIC.OPTION=COLUMN``
    ones are left to :func:`apply_options`)."""
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
        # A byte order mark (some Windows editors write one) is skipped, as in baselines.
        with open(path, encoding="utf-8-sig") as handle:
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
        choice.given_options["criteria"] = criteria
        choice.label = f"--rubric {name.strip()}"
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
                choice.given_options[found[1]] = text
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
        variant = choice.options.get(choice.variant_option or "")
        for option in () if choice.is_builtin(variant) else choice.required_options:
            if option not in choice.options and option not in choice.row_options:
                errors.append(
                    f"{choice.shown}: needs option {option!r}: give --option "
                    f"{choice.name}.{option}=VALUE (or @FILE) or --map "
                    f"{choice.name}.{option}=COLUMN"
                )
    if errors:
        raise UsageError("\n".join(errors))


class RowOptions:
    """A metric whose options come from each row (``--map contains.strings=COLUMN``):
    one evaluator per distinct set of values, built on first use.

    Called with the row's texts and its option values as ``metric.option``
    keywords. The last :data:`KEEP` evaluators are kept, so memory stays flat
    over a stream of rows that all differ.
    """

    KEEP = 256

    def __init__(self, choice: Choice, threshold: float | None, resolver: Resolver) -> None:
        self.choice, self.threshold, self.resolver = choice, threshold, resolver
        self._made: OrderedDict[str, Any] = OrderedDict()
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
                if len(self._made) > self.KEEP:
                    self._made.popitem(last=False)
            else:
                self._made.move_to_end(key)
        return made

    def __call__(self, **kwargs: Any) -> dict[str, Any]:
        made = self._evaluator(self._picked(kwargs))
        evaluator = getattr(made, "evaluator", made) if self.choice.judge else made
        wanted = self.choice.inputs + self.choice.optional_inputs
        return evaluator(**{k: v for k, v in kwargs.items() if k in wanted})  # type: ignore[no-any-return]


def read_row_options(
    choices: Sequence[Choice], data: Mapping[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """``(options, problems)``: the option values ``--map METRIC.OPTION=COLUMN`` reads
    from one input object, by ``metric.option``, and each problem as a phrase."""
    options: dict[str, Any] = {}
    problems: list[str] = []
    for choice in choices:
        for option, column in choice.row_options.items():
            value = data.get(column)
            if value is None:
                problems.append(
                    f'missing "{column}", the {option} of {choice.shown} '
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
    return options, problems


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
        lists: Sequence[str] = (),
    ) -> None:
        """``specs``: ``(spec, inputs, optional_inputs)`` of each metric; ``lists``: the
        specs whose ground_truth may be a JSON array of references."""
        needed: dict[str, list[str]] = {}
        optional: set[str] = set()
        takers: dict[str, list[str]] = {}
        for spec, inputs, optional_inputs in specs:
            for name in inputs:
                needed.setdefault(name, []).append(spec)
            for name in (*inputs, *optional_inputs):
                takers.setdefault(name, []).append(spec)
            optional.update(optional_inputs)
        # A list of references is read when every metric taking the ground truth takes one.
        truth = takers.get("ground_truth", [])
        self._lists = bool(truth) and all(spec in lists for spec in truth)
        self._no_lists = ", ".join(spec for spec in truth if spec not in lists)
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
            if name == "context" and isinstance(value, list):
                # Chunks in retrieval order: strings, or objects with text (and id, source).
                problem = chunks_problem(column, value)
                if problem:
                    problems.append(problem)
                else:
                    texts[name] = value  # type: ignore[assignment]
                continue
            if name in ("conversation", "trace"):
                # Chat messages (or {"messages": [...]}), or an agent's steps: each bad
                # message or step named by its index.
                check = conversation_problem if name == "conversation" else trajectory_problem
                problem = check(column, value)
                if problem:
                    problems.append(problem)
                else:
                    texts[name] = value
                continue
            if name == "ground_truth" and isinstance(value, list):
                problem = self._references_problem(column, value)
                if problem:
                    problems.append(problem)
                else:
                    texts[name] = value  # type: ignore[assignment]
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
        if not problems and self.id_field and data.get(self.id_field) is None:
            problems.append(f'missing "{self.id_field}" (--id-field)')
        return texts, problems

    def _references_problem(self, column: str, value: list[Any]) -> str:
        """What is wrong with an array of references in ``column`` ("" when nothing)."""
        if not self._lists:
            return (
                f'"{column}" is an array of references, which {self._no_lists} does not '
                "take; give a string"
            )
        if not value:
            return f'"{column}" is an empty array; give at least one reference'
        for index, item in enumerate(value):
            if not isinstance(item, str):
                shown = json.dumps(item, ensure_ascii=False)
                shown = shown if len(shown) <= 40 else f"{json_type(item)}"
                return f'"{column}"[{index}]: expected a string, got {shown}'
            surrogate = surrogate_problem(item)
            if surrogate:
                return f'"{column}"[{index}] has {surrogate}'
        return ""

    def name(self, data: Mapping[str, Any], where: str) -> str:
        """How messages and ``test=`` gate filters name the row: ``--id-field`` or file:line."""
        return str(data[self.id_field]) if self.id_field else where
