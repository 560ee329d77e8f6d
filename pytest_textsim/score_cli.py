"""``textsim score`` and ``textsim compare``: the gates and baselines outside pytest.

Exit status, for CI: 0 when everything passed, 1 when a gate failed (``score``)
or a score regressed (``compare``), 2 on usage or input errors, with every bad
line of the input reported as ``file:line``.

:func:`pytest_textsim.cli.build_parser` adds these subcommands; this module is
imported only when they run, and imports the evaluators only once the
arguments are known to be good.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable, Union

from .config import SETTINGS, ConfigError, Resolver

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

FIELDS = ("response", "ground_truth", "query", "context")

# Settings of the judge issue that `textsim score` takes as flags (--judge-model, --cache...).
_JUDGE_FLAGS = (
    "judge_provider",
    "judge_model",
    "judge_base_url",
    "judge_azure_endpoint",
    "judge_api_version",
    "judge_timeout",
    "judge_max_retries",
    "judge_concurrency",
    "judge_samples",
    "cache",
    "cache_dir",
)

SCORE_EPILOG = """\
metrics:
  f1_score, bleu_score, gleu_score, meteor_score, rouge_score[:TYPE] (TYPE: rouge1..rouge5,
  rougeL; default rougeL), chrf_score, ter_score (TER: lower is better), and with a judge
  configured similarity, coherence, fluency, relevance, groundedness, qa.
  Plain names work too: bleu, rouge:rouge1, meteor.

gates (METRIC.AGGREGATE OP NUMBER):
  bleu_score.mean >= 0.35        rouge_f1_score.min >= 0.2     meteor_score.p10 >= 0.3
  similarity.pass_rate >= 0.9    bleu_score.count >= 100       sacrebleu.corpus_bleu.score >= 30
  aggregates: mean min max median pNN pass_rate count; operators: >= > <= < ==
  rouge_f1_score[rouge_type=rouge1].mean >= 0.4 keeps only the rouge1 scores.

examples:
  textsim score answers.jsonl --metric bleu_score --metric rouge_score:rougeL
  textsim score answers.jsonl --metric meteor_score -o scored.jsonl --gate 'meteor_score.p10 >= 0.3'
  textsim score qa.jsonl --map response=answer --map ground_truth=expected --metric f1_score
  textsim score qa.jsonl --metric similarity --judge-model gpt-4o-mini --cache none
  textsim score mt.jsonl --metric chrf_score --gate 'sacrebleu.corpus_bleu.score >= 30'

Each input line is a JSON object with the fields the metrics need: response,
ground_truth, query, context (rename with --map FIELD=COLUMN). Output rows are
the input rows with every score key added (bleu_score, bleu_result, ...); when
one metric is given with two variants, the variant names its keys
(rouge1_f1_score, rougeL_f1_score, rougeL_f1_score_result, ...).

Judge settings come from these flags or the TEXTSIM_* / OPENAI_* environment
variables, the API key from OPENAI_API_KEY or AZURE_OPENAI_API_KEY.

exit status: 0 all gates passed, 1 a gate failed, 2 usage or input error.
"""

COMPARE_EPILOG = """\
examples:
  textsim compare baseline.json textsim-report.json
  textsim compare old.json new.json --max-drop 0.05
  textsim compare old.json new.json --max-drop bleu_score=0.05 --max-drop similarity=1

OLD and NEW are baselines (pytest --textsim-save-baseline=PATH) or JSON reports
(pytest --textsim-json=PATH), in any combination. A score regresses when it
dropped by more than the tolerance: by default 0.02 for 0..1 scores and 0 for
judge scores (1-5); TER, where lower is better, regresses when it rises.
Scores made with different evaluator parameters (ROUGE type, judge prompt
version or model) are listed as not compared.

exit status: 0 no regression, 1 at least one regression, 2 a file cannot be read.
"""


class UsageError(Exception):
    """Bad arguments or input; the message says what and where (one problem per line)."""


# -- parser ---------------------------------------------------------------------


def add_score_command(subparsers: Any) -> None:
    """Add ``textsim score`` to the CLI."""
    parser = subparsers.add_parser(
        "score",
        help="score a JSONL file, print a summary per metric, check gates",
        description="Score each row of a JSONL file with one or more metrics, write the "
        "rows with their scores, print a summary per metric and check dataset gates.",
        epilog=SCORE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "data",
        metavar="DATA.jsonl",
        help="input rows, one JSON object a line ('-' reads standard input)",
    )
    parser.add_argument(
        "-m",
        "--metric",
        action="append",
        default=[],
        metavar="METRIC",
        help="a metric to score (repeatable), e.g. bleu_score, rouge_score:rouge1",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUT.jsonl",
        help="write the rows with score keys added ('-' for standard output; "
        "the summary then goes to standard error)",
    )
    parser.add_argument(
        "-g",
        "--gate",
        action="append",
        default=[],
        metavar="EXPR",
        help="a dataset gate (repeatable), e.g. 'bleu_score.mean >= 0.35'",
    )
    parser.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="FIELD=COLUMN",
        help="read FIELD (response, ground_truth, query, context) from COLUMN, "
        "e.g. --map response=answer (repeatable)",
    )
    parser.add_argument(
        "--threshold",
        action="append",
        default=[],
        metavar="METRIC=X",
        help="pass threshold of a metric, e.g. bleu_score=0.3 (default: "
        "TEXTSIM_THRESHOLD_<METRIC>, else 0.5, judge metrics 3)",
    )
    parser.add_argument(
        "--id-field",
        metavar="COLUMN",
        help="name rows by this column in messages (default: file:line)",
    )
    progress = parser.add_mutually_exclusive_group()
    progress.add_argument(
        "--progress",
        dest="progress",
        action="store_true",
        default=None,
        help="always show the progress bar",
    )
    progress.add_argument(
        "--no-progress",
        dest="progress",
        action="store_false",
        help="never show it (default: only on a terminal, not under CI)",
    )
    judge = parser.add_argument_group("judge (for similarity, coherence, ... metrics)")
    for name in _JUDGE_FLAGS:
        setting = SETTINGS.get(name)
        if setting is not None:
            judge.add_argument(
                "--" + name.replace("_", "-"),
                dest=f"setting_{name}",
                metavar=setting.metavar or name.split("_")[-1].upper(),
                help=setting.help,
            )
    parser.set_defaults(run=run_score)


def add_compare_command(subparsers: Any) -> None:
    """Add ``textsim compare`` to the CLI."""
    parser = subparsers.add_parser(
        "compare",
        help="list the scores that regressed between two baselines or JSON reports",
        description="Compare two runs score by score and print the regressions table.",
        epilog=COMPARE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("old", metavar="OLD.json", help="the baseline (or an older report)")
    parser.add_argument("new", metavar="NEW.json", help="this run's baseline or report")
    parser.add_argument(
        "--max-drop",
        action="append",
        default=[],
        metavar="X|METRIC=X",
        help="tolerated drop: for every metric (0.05) or one (bleu_score=0.05); "
        "repeatable (default: TEXTSIM_MAX_DROP, else 0.02, judge metrics 0)",
    )
    parser.set_defaults(run=run_compare)


# -- compare --------------------------------------------------------------------


def run_compare(args: argparse.Namespace, out: IO[str] | None = None) -> int:
    """``textsim compare OLD NEW``; returns the exit status."""
    from . import baseline

    out = out or sys.stdout
    try:
        raw: Any = args.max_drop or os.environ.get("TEXTSIM_MAX_DROP") or []
        tolerances = baseline.parse_tolerances(raw)
    except ValueError as exc:
        source = "--max-drop" if args.max_drop else "TEXTSIM_MAX_DROP in the environment"
        return _usage(f"{source}: {exc}")
    try:
        old = baseline.load(args.old)
        new = baseline.load(args.new)
    except baseline.BaselineError as exc:
        return _usage(str(exc))
    comparison = baseline.compare(old, new, tolerances)
    try:
        print(f"textsim regressions: {args.old} -> {args.new}", file=out)
        for line in baseline.report_lines(comparison, args.old):
            print(line, file=out)
    except BrokenPipeError:
        return _closed_pipe()
    return EXIT_FAILED if comparison.regressions else EXIT_OK


def _usage(message: str) -> int:
    for line in message.splitlines():
        print(f"textsim: error: {line}", file=sys.stderr)
    return EXIT_USAGE


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


def _sacre_choice(spec: str, name: str, variant: str | None) -> Choice:
    class_name = {"chrf": "ChrFScoreEvaluator", "ter": "TerScoreEvaluator"}[name]

    def build(threshold: float, resolver: Resolver) -> Callable[..., dict[str, Any]]:
        from .evaluators import sacre

        evaluator: Callable[..., dict[str, Any]] = getattr(sacre, class_name)(threshold=threshold)
        return evaluator

    def check(value: Any, source: str) -> float:
        from .config import as_float

        try:
            number = as_float(value)
        except ValueError as exc:
            raise ValueError(f"{source}: {exc}") from None
        if number < 0:
            raise ValueError(f"{source}: a {name} threshold must be >= 0, got {value!r}")
        return number

    return Choice(
        spec,
        name,
        variant,
        ("response", "ground_truth"),
        (),
        build,
        lambda r: 0.5,
        check,
        params_of=lambda evaluator: dict(evaluator.params),
    )


def metric_choice(spec: str) -> Choice:
    """Parse one ``--metric`` value; :class:`UsageError` says what names exist."""
    from .metrics import METRICS

    text = spec.strip()
    base, _, variant_text = text.partition(":")
    base = base.strip().lower()
    variant = variant_text.strip() or None
    name = base[: -len("_score")] if base.endswith("_score") else base
    if name in ("chrf", "ter"):
        if variant:
            raise UsageError(f"--metric {spec!r}: {base} takes no ':variant'")
        return _sacre_choice(text, name, None)
    metric = METRICS.get(name)
    if metric is None:
        known = sorted(
            [f"{m}_score" if m in ("f1", "bleu", "gleu", "meteor", "rouge") else m for m in METRICS]
            + ["chrf_score", "ter_score"]
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

    def build(threshold: float, resolver: Resolver) -> Callable[..., dict[str, Any]]:
        return metric.factory(threshold, dict(options), resolver)

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


def _choices(specs: Sequence[str]) -> list[Choice]:
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
    if errors:
        raise UsageError("\n".join(errors))
    # Two variants of one evaluator write the same keys: name them by variant.
    names = [c.name for c in choices]
    for choice in choices:
        if names.count(choice.name) > 1 and choice.variant:
            choice.rename_keys = True
    return choices


def _thresholds(values: Sequence[str], choices: Sequence[Choice]) -> dict[str, float]:
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


def _mapping(values: Sequence[str]) -> dict[str, str]:
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
    rows, errors = [], []
    for lineno, line in _lines(path, display, stream):
        where = f"{display}:{lineno}"
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})")
            continue
        if not isinstance(data, dict):
            errors.append(f"{where}: expected a JSON object, got {_json_type(data)}")
            continue
        texts, problems = {}, []
        for name in [*needed, *sorted(optional - needed.keys())]:
            column = mapping.get(name, name)
            value = data.get(column)
            if value is None:
                if name in needed:
                    present = ", ".join(data) or "none"
                    renamed = f" (the {name})" if column != name else ""
                    problems.append(
                        f'missing "{column}"{renamed}, needed by {", ".join(needed[name])}; '
                        f"fields present: {present}"
                    )
                continue
            if not isinstance(value, str):
                problems.append(f'"{column}" must be a string, got {_json_type(value)}')
                continue
            texts[name] = value
        if problems:
            errors.extend(f"{where}: {problem}" for problem in problems)
            continue
        name = where
        if id_field:
            if id_field not in data:
                errors.append(f'{where}: missing "{id_field}" (--id-field)')
                continue
            name = str(data[id_field])
        rows.append(Row(where, name, data, texts))
    if errors:
        raise UsageError("\n".join(errors))
    if not rows:
        raise UsageError(f"{display}: no rows to score (the file is empty)")
    return rows


def _lines(path: str, display: str, stream: Iterable[str] | None) -> Iterator[tuple[int, str]]:
    if stream is None and path == "-":
        stream = sys.stdin
    if stream is not None:
        yield from enumerate(stream, 1)
        return
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        raise UsageError(f"{display}: no such file") from None
    except OSError as exc:
        raise UsageError(f"{display}: cannot read it ({exc.strerror})") from None
    with handle:
        # Decode line by line, so a bad byte is reported on its own line.
        for lineno, raw in enumerate(handle, 1):
            try:
                text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise UsageError(
                    f"{display}:{lineno}: not UTF-8 text ({exc.reason} at byte {exc.start + 1}); "
                    "convert the file to UTF-8"
                ) from None
            yield lineno, text


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "true/false"}
    if value is None:
        return "null"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"a number ({value!r})"
    return names.get(type(value), type(value).__name__)


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


def score_rows(
    rows: Sequence[Row],
    evaluators: Sequence[tuple[Choice, Callable[..., dict[str, Any]]]],
    workers: int = 1,
    progress: Progress | None = None,
) -> list[list[Output]]:
    """Outputs per row and metric; an exception in place of a judge output that failed.

    Algorithmic metrics go through :func:`pytest_textsim.batch.iter_score_rows`
    (each text tokenized once per row, whatever the number of metrics). Judge
    metrics run ``workers`` rows at a time (the judge client bounds the calls
    in flight), and a failed call is reported for its row while the run goes on.
    """
    from .batch import iter_score_rows

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
            try:
                results[r][i] = evaluator(**kwargs)
            except Exception as exc:  # reported per row, the run goes on
                results[r][i] = exc
        if progress is not None:
            progress.advance()

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        list(pool.map(judge_row, range(len(rows))))
    return results


def run_score(args: argparse.Namespace, out: IO[str] | None = None) -> int:
    """``textsim score DATA.jsonl ...``; returns the exit status."""
    try:
        return _run_score(args, out)
    except UsageError as exc:
        return _usage(str(exc))
    except BrokenPipeError:
        return _closed_pipe()


def _closed_pipe() -> int:
    """The reader went away (``textsim score ... | head``): stop quietly, not with a traceback."""
    # Point stdout at devnull so the interpreter's final flush cannot fail again.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return EXIT_FAILED


def _run_score(args: argparse.Namespace, out: IO[str] | None) -> int:
    from .gates import GateError, evaluate_gates, needs_texts, parse_gates
    from .records import records_from_output

    # Check every argument before saying anything, and report all that is wrong.
    problems: list[str] = []
    choices: list[Choice] = []
    thresholds: dict[str, float] = {}
    mapping: dict[str, str] = {}
    gates = []
    try:
        choices = _choices(args.metric)
    except UsageError as exc:
        problems.append(str(exc))
    try:
        if choices:
            thresholds = _thresholds(args.threshold, choices)
    except UsageError as exc:
        problems.append(str(exc))
    try:
        mapping = _mapping(args.map)
    except UsageError as exc:
        problems.append(str(exc))
    try:
        gates = parse_gates((expr, "--gate") for expr in args.gate)
    except GateError as exc:
        problems.append(str(exc))
    if problems:
        raise UsageError("\n".join(problems))
    overrides = {
        name: getattr(args, f"setting_{name}", None)
        for name in _JUDGE_FLAGS
        if getattr(args, f"setting_{name}", None) is not None
    }
    resolver = Resolver(overrides=overrides)
    rows = read_rows(args.data, choices, mapping, args.id_field)

    evaluators = []  # (choice, what to call)
    built: list[Any] = []  # what the metric table built: params and judge statistics
    try:
        for choice in choices:
            threshold = thresholds.get(choice.name)
            if threshold is None:
                threshold = choice.threshold_default(resolver)
            made = choice.build(threshold, resolver)
            built.append(made)
            # The plugin's judge scorer turns judge errors into test failures;
            # here the judge evaluator inside it is called, so an error is a row error.
            evaluators.append((choice, getattr(made, "evaluator", made) if choice.judge else made))
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    except Exception as exc:
        from .judge import JudgeConfigError
        from .metrics import MetricUnavailable

        # No judge configured, no API key...: their messages say what to set.
        if isinstance(exc, (MetricUnavailable, JudgeConfigError)):
            raise UsageError(str(exc)) from None
        raise

    workers = 1
    if any(c.judge for c in choices) and "judge_concurrency" in SETTINGS:
        workers = int(resolver.get("judge_concurrency"))
    table_out = sys.stderr if args.output == "-" else (out or sys.stdout)
    # One pass over the rows for the algorithmic metrics, one for the judge's.
    passes = any(not c.judge for c in choices) + any(c.judge for c in choices)
    wanted = Progress.wanted(sys.stderr, args.progress)
    progress = Progress(len(rows) * passes, sys.stderr, wanted)
    try:
        outputs = score_rows(rows, evaluators, workers, progress)
    finally:
        progress.close()

    keep_texts = needs_texts(gates)
    records, errors, scored = [], [], []
    for row, row_outputs in zip(rows, outputs):
        data = dict(row.data)
        for (choice, _), made, output in zip(evaluators, built, row_outputs):
            if isinstance(output, Exception):
                errors.append(f"{row.where}: {choice.spec}: {type(output).__name__}: {output}")
                continue
            data.update({choice.output_key(key): value for key, value in output.items()})
            params = dict(choice.options)
            if choice.params_of is not None:
                params.update(choice.params_of(made))
            used = {
                k: v for k, v in row.texts.items() if k in choice.inputs + choice.optional_inputs
            }
            for record in records_from_output(
                choice.name, output, params=params, inputs=used, keep_texts=keep_texts
            ):
                record.nodeid = row.name
                record.variant = choice.variant
                records.append(record)
        scored.append(data)

    if args.output:
        _write_rows(args.output, scored)
    _print_summary(table_out, args.data, len(rows), records)
    judges = {id(j): j for j in (getattr(m, "judge", None) for m in built) if j is not None}
    for judge in judges.values():
        print(judge.client.stats.summary(), file=table_out)
    results = evaluate_gates(gates, records)
    if results:
        print("gates:", file=table_out)
        for result in results:
            print("  " + result.line(), file=table_out)
    if errors:
        for line in errors:
            print(f"textsim: error: {line}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_FAILED if any(not r.passed for r in results) else EXIT_OK


def _write_rows(path: str, rows: Sequence[dict[str, Any]]) -> None:
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"-o {path}: cannot write it ({exc.strerror})") from None


def _print_summary(out: IO[str], data: str, count: int, records: Sequence[Any]) -> None:
    from .report import summary_rows

    source = "standard input" if data == "-" else data
    print(f"textsim score: {count} rows from {source}", file=out)
    for line in summary_rows(records):
        print(line if isinstance(line, str) else line[0], file=out)
