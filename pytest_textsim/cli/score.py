"""``textsim score``: the metrics, gates and baselines of a pytest run, over JSONL files.

Exit status, for CI: 0 when everything passed, 1 when a gate failed, 2 on
usage or input errors, with every bad line of the input reported as
``file:line``.

:func:`pytest_textsim.cli.build_parser` adds these subcommands; this module is
imported only when they run, and imports the evaluators only once the
arguments are known to be good.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from ..errors import ConfigError
from ..settings import JUDGE_COMMAND_FLAGS, SETTINGS, Resolver
from .common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, closed_pipe, usage_error
from .project import add_config_argument, find
from .rows import (
    Choice,
    Progress,
    UsageError,
    parse_mapping,
    parse_metrics,
    parse_thresholds,
    read_rows,
    score_metrics,
)

SCORE_EPILOG = """\
metrics:
{metrics}

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

Settings come from these flags, then the TEXTSIM_* / OPENAI_* environment
variables, then the textsim_* keys of the pytest configuration file pytest would
use when started here (pytest.ini, pyproject.toml, tox.ini, setup.cfg; -c names
another), so the command scores with the judge, thresholds and cache of the
project's test suite. The API key comes from OPENAI_API_KEY or
AZURE_OPENAI_API_KEY (or the variable textsim_judge_api_key_env names).

exit status: 0 all gates passed, 1 a gate failed, 2 usage or input error (or
the NLTK data the metrics need is missing).
"""


# -- parser ---------------------------------------------------------------------


def metric_help() -> str:
    """The ``metrics:`` part of ``textsim score --help``, from the metric catalog."""
    import textwrap

    from ..catalog import METRICS

    names = []
    for metric in METRICS.values():
        name = metric.name if metric.calls_model else f"{metric.name}_score"
        if metric.variant_option:
            default = metric.option_defaults.get(metric.variant_option)
            name += f"[:{metric.variant_option.upper()}] (default {default})"
        if not metric.higher_is_better:
            name += f" ({metric.label}: lower is better)"
        if metric.calls_model:
            name += " (needs a judge)"
        names.append(name)
    text = ", ".join(names) + ". Plain names work too: bleu, rouge:rouge1, meteor."
    return textwrap.fill(text, 86, initial_indent="  ", subsequent_indent="  ")


def add_score_command(subparsers: Any) -> None:
    """Add ``textsim score`` to the CLI."""
    parser = subparsers.add_parser(
        "score",
        help="score a JSONL file, print a summary per metric, check gates",
        description="Score each row of a JSONL file with one or more metrics, write the "
        "rows with their scores, print a summary per metric and check dataset gates.",
        epilog=SCORE_EPILOG.format(metrics=metric_help()),
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
        "TEXTSIM_THRESHOLD_<METRIC>, else textsim_threshold_<metric> in the pytest "
        "configuration file, else 0.5, judge metrics 3)",
    )
    parser.add_argument(
        "--id-field",
        metavar="COLUMN",
        help="name rows by this column in messages (default: file:line)",
    )
    add_config_argument(parser)
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
    for name in JUDGE_COMMAND_FLAGS:
        setting = SETTINGS[name]
        judge.add_argument(
            "--" + name.replace("_", "-"),
            dest=f"setting_{name}",
            metavar=setting.metavar or name.split("_")[-1].upper(),
            help=setting.help,
        )
    parser.set_defaults(run=run_score)


def run_score(args: argparse.Namespace, out: IO[str] | None = None) -> int:
    """``textsim score DATA.jsonl ...``; returns the exit status."""
    from ..nlp.nltk_data import NltkDataError

    try:
        return _run_score(args, out)
    except UsageError as exc:
        return usage_error(str(exc))
    except NltkDataError as exc:
        # Nothing can be scored on this machine: its message says how to fix it.
        return usage_error(str(exc))
    except BrokenPipeError:
        return closed_pipe()


def _run_score(args: argparse.Namespace, out: IO[str] | None) -> int:
    from ..gating.gates import GateError, parse_gates

    # Check every argument before saying anything, and report all that is wrong.
    problems: list[str] = []
    choices: list[Choice] = []
    thresholds: dict[str, float] = {}
    mapping: dict[str, str] = {}
    gates = []
    try:
        choices = parse_metrics(args.metric)
    except UsageError as exc:
        problems.append(str(exc))
    try:
        if choices:
            thresholds = parse_thresholds(args.threshold, choices)
    except UsageError as exc:
        problems.append(str(exc))
    try:
        mapping = parse_mapping(args.map)
    except UsageError as exc:
        problems.append(str(exc))
    try:
        gates = parse_gates((expr, "--gate") for expr in args.gate)
    except GateError as exc:
        problems.append(str(exc))
    if problems:
        raise UsageError("\n".join(problems))
    gates = _gates_on_renamed_keys(gates, choices)
    overrides = {
        name: getattr(args, f"setting_{name}", None)
        for name in JUDGE_COMMAND_FLAGS
        if getattr(args, f"setting_{name}", None) is not None
    }
    try:
        resolver = Resolver(find(args.config_file), overrides=overrides, override_prefix="--")
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    try:
        return _score(args, out, resolver, choices, thresholds, mapping, gates)
    finally:
        if any(c.judge for c in choices):
            from ..judge.setup import release_judge

            # Close the judge cache now: this command may run inside a longer process.
            release_judge(resolver)


def _gates_on_renamed_keys(gates: list[Any], choices: list[Choice]) -> list[Any]:
    """Let a gate name a key as the output rows do: with two ROUGE types,
    ``rouge1_f1_score.mean`` is ``rouge_f1_score[rouge_type=rouge1].mean``."""
    import dataclasses

    from ..catalog import METRICS

    aliases: dict[str, tuple[str, tuple[str, str]]] = {}
    for choice in choices:
        metric = METRICS.get(choice.name)
        if not (choice.rename_keys and choice.variant and metric and metric.variant_option):
            continue
        for key in metric.score_keys.values():
            aliases[choice.output_key(key)] = (key, (metric.variant_option, choice.variant))
    renamed = []
    for gate in gates:
        if gate.metric in aliases:
            key, variant = aliases[gate.metric]
            gate = dataclasses.replace(gate, metric=key, filters=(*gate.filters, variant))
        renamed.append(gate)
    return renamed


def _score(
    args: argparse.Namespace,
    out: IO[str] | None,
    resolver: Resolver,
    choices: list[Choice],
    thresholds: dict[str, float],
    mapping: dict[str, str],
    gates: list[Any],
) -> int:
    from ..gating.gates import evaluate_gates, needs_texts
    from ..records import records_from_output

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
        from ..catalog import MetricUnavailable
        from ..judge.errors import JudgeConfigError

        # No judge configured, no API key...: their messages say what to set.
        if isinstance(exc, (MetricUnavailable, JudgeConfigError)):
            raise UsageError(str(exc)) from None
        raise

    for made in built:
        # A judge found down by an earlier run is tried afresh by this one.
        judge = getattr(made, "judge", None)
        if judge is not None:
            judge.client.reachability.reset()
    workers = 1
    if any(c.judge for c in choices):
        workers = int(resolver.get("judge_concurrency"))
    table_out = sys.stderr if args.output == "-" else (out or sys.stdout)
    # One pass over the rows for the algorithmic metrics, one for the judge's.
    passes = any(not c.judge for c in choices) + any(c.judge for c in choices)
    wanted = Progress.wanted(sys.stderr, args.progress)
    progress = Progress(len(rows) * passes, sys.stderr, wanted)
    try:
        outputs = score_metrics(rows, evaluators, workers, progress)
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
    from ..summary import summary_table

    source = "standard input" if data == "-" else data
    print(f"textsim score: {count} {'row' if count == 1 else 'rows'} from {source}", file=out)
    for line in summary_table(records):
        print(line if isinstance(line, str) else line[0], file=out)
