"""The parser of ``textsim score``: its arguments, help and epilog (from the metric catalog).

:func:`pytest_textsim.cli.build_parser` adds the subcommand; running it is
:func:`pytest_textsim.cli.score.run_score`.
"""

from __future__ import annotations

import argparse
from typing import Any

from .baselines import add_baseline_arguments
from .project import add_config_argument, add_judge_arguments
from .score import run_score

SCORE_EPILOG = """\
metrics:
{metrics}

gates (METRIC.AGGREGATE[.ci_low|.ci_high] OP NUMBER):
  bleu_score.mean >= 0.35        rouge_f1_score.min >= 0.2     meteor_score.p10 >= 0.3
  similarity.pass_rate >= 0.9    bleu_score.count >= 100       sacrebleu.corpus_bleu.score >= 30
  aggregates: mean min max median pNN pass_rate count; operators: >= > <= < ==
  rouge_f1_score[rouge_type=rouge1].mean >= 0.4 keeps only the rouge1 scores.
  bleu_score.mean.ci_low >= 0.3 gates the lower bound of the mean's 95% interval
  (from 10 scores on; bootstrap, seed textsim_bootstrap_seed).

examples:
  textsim score answers.jsonl --metric bleu_score --metric rouge_score:rougeL
  textsim score answers.jsonl --metric meteor_score -o scored.jsonl --gate 'meteor_score.p10 >= 0.3'
  textsim score qa.jsonl --map response=answer --map ground_truth=expected --metric f1_score
  textsim score qa.jsonl --metric similarity --judge-model gpt-4o-mini --cache none
  textsim score mt.jsonl --metric chrf_score --gate 'sacrebleu.corpus_bleu.score >= 30'
  textsim score chat.jsonl --rubric politeness='Apologises and offers a refund.'
  textsim score chat.jsonl --rubric politeness=@rubrics/politeness.txt \
      --gate 'rubric_politeness.mean >= 4'
  textsim score api.jsonl --metric json_schema --option json_schema.schema=@schema.json
  textsim score chat.jsonl --metric contains --option contains.strings=refund,apolog
  textsim score chat.jsonl --metric contains --map contains.strings=must_mention
  textsim score qa.jsonl --metric semantic_similarity --embedding-model text-embedding-3-small
  textsim score qa.jsonl --metric bleu_score --id-field id --save-baseline base.json
  textsim score qa.jsonl --metric bleu_score --id-field id --compare base.json --fail-on-regression
  zcat big.jsonl.gz | textsim score - --metric meteor_score --jobs 4 -o - | gzip > scored.jsonl.gz

Rows stream: they are read, scored (by --jobs worker processes) and written in
input order as they go, so memory stays flat whatever the size of the input
(with --compare or --save-baseline, every row's scores are kept for the baseline).
A bad line is reported as file:line and the other rows are scored.

Each input line is a JSON object with the fields the metrics need: response,
ground_truth, query, context (rename with --map FIELD=COLUMN). Output rows are
the input rows with every score key added (bleu_score, bleu_result, ...); when
one metric is given with two variants, the variant names its keys
(rouge1_f1_score, rougeL_f1_score, rougeL_f1_score_result, ...); a rubric's name
always does (rubric_politeness, rubric_politeness_result, ...).

Settings come from these flags, then the TEXTSIM_* / OPENAI_* environment
variables, then the textsim_* keys of the pytest configuration file pytest would
use when started here (pytest.ini, pyproject.toml, tox.ini, setup.cfg; -c names
another), so the command scores with the judge, thresholds and cache of the
project's test suite. The API key comes from OPENAI_API_KEY or
AZURE_OPENAI_API_KEY (or the variable textsim_judge_api_key_env names).

exit status: 0 all gates passed, 1 a gate failed (or a score regressed, with
--fail-on-regression, or a row is below threshold, with --fail-on-threshold), 2
usage or input error (or the NLTK data the metrics need is missing), 130
interrupted (Ctrl-C).
"""


# -- parser ---------------------------------------------------------------------


def metric_names() -> list[tuple[str, list[str]]]:
    """Each ``--metric`` name of the metric catalog with its notes: ``("rouge_score[:ROUGE_TYPE]",
    ["default rougeL"])``. ``--help`` and the docs' list are both made from it."""
    from ..catalog import METRICS

    names = []
    for metric in METRICS.values():
        # Judge metrics and checks by name, the other metrics by their score key.
        by_name = metric.calls_model or metric.score_keys.get(metric.name) == metric.name
        name = metric.name if by_name else f"{metric.name}_score"
        notes = []
        if metric.variant_option:
            default = metric.option_defaults.get(metric.variant_option)
            name += f"[:{metric.variant_option.upper()}]"
            if default is not None:
                notes.append(f"default {default}")
        if not metric.higher_is_better:
            notes.append(f"{metric.label}: lower is better")
        if metric.name == "rubric":
            notes.append("needs a judge; --rubric NAME=TEXT")
        elif metric.name == "refusal":
            notes.append("a judge for unclear responses")
        elif str(metric.evaluator).startswith("judge.embeddings:"):
            notes.append("needs an embedding model")
        elif metric.calls_model:
            notes.append("needs a judge")
        elif metric.leading_options:
            notes.append(f"--option {metric.name}.{metric.leading_options[0]}=...")
        names.append((name, notes))
    return names


def metric_help() -> str:
    """The ``metrics:`` part of ``textsim score --help``, from the metric catalog."""
    import textwrap

    names = [name + "".join(f" ({note})" for note in notes) for name, notes in metric_names()]
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
        "e.g. --map response=answer, or a metric's option (contains.strings=COLUMN) "
        "(repeatable)",
    )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="METRIC.KEY=VALUE",
        help="an option of a metric, e.g. contains.strings=refund,apolog, "
        "json_schema.schema=@schema.json (@FILE: the file's text); repeatable. "
        "--map METRIC.KEY=COLUMN reads it from each row instead",
    )
    parser.add_argument(
        "--rubric",
        action="append",
        default=[],
        metavar="NAME=TEXT|@FILE",
        help="score a custom rubric with the judge (G-Eval), e.g. "
        "politeness='The answer is polite.'; its keys are rubric_NAME, rubric_NAME_result, ...",
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
    parser.add_argument(
        "--fail-on-threshold",
        action="store_true",
        default=None,
        help="exit 1 when a row has a score below its threshold, as a failing test would "
        "(default: TEXTSIM_FAIL_ON_THRESHOLD, else textsim_fail_on_threshold, else off)",
    )
    parser.add_argument(
        "-j",
        "--jobs",
        type=_jobs,
        default=None,
        metavar="N",
        help="worker processes scoring chunks of rows (default: the cores this process may "
        "use, at most 8, and none for inputs under 1,000 rows; 1: score in this process)",
    )
    parser.add_argument(
        "--plan",
        action="store_true",
        help="print what the run would ask the judge (judgments, cached, to call), its "
        "estimated tokens and USD, without calling anything or writing output; exit 0",
    )
    parser.add_argument(
        "--format",
        choices=("table", "json"),
        default="table",
        help="how --plan prints the plan (default: table)",
    )
    parser.add_argument(
        "--budget-usd",
        type=_usd,
        default=None,
        metavar="USD",
        help="plan first and refuse to start (exit 1, the plan shown) when the judge calls "
        "would cost more; the run's calls stop at it too",
    )
    parser.add_argument(
        "--judge-batch",
        action="store_true",
        help="send every judgment the cache lacks through the judge provider's batch API "
        "first (OpenAI, Azure OpenAI, Anthropic: half price, up to 24 h), then score from the "
        "cache; a run started again resumes its batch",
    )
    parser.add_argument(
        "--judge-batch-deployment",
        default=None,
        metavar="NAME",
        help="with --judge-batch and the azure provider: the Global Batch deployment the batch "
        "goes to (default: the judge's deployment); it must serve the judge's model, whose "
        "cache keys the judgments are kept under",
    )
    parser.add_argument(
        "--judge-batch-wait",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="with --judge-batch: stop polling after this long, leaving the batch running "
        "(exit 130; run again to collect it) (default: wait until it ends)",
    )
    parser.add_argument(
        "--judge-batch-poll",
        type=_seconds,
        default=5.0,
        metavar="SECONDS",
        help="with --judge-batch: the wait between polls after the first (which comes "
        "after 1 s), doubled after each up to 60 (default: 5)",
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
    add_judge_arguments(parser, "judge (for similarity, coherence, ... metrics)")
    add_baseline_arguments(parser)
    from .variants import add_variant_arguments

    add_variant_arguments(parser)
    parser.set_defaults(run=run_score)


def _usd(text: str) -> float:
    from ..settings.converters import as_usd

    try:
        return float(as_usd(text))
    except (TypeError, ValueError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def _seconds(text: str) -> float:
    """A number of seconds, 0 or more (finite)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds (0 or more), got {text!r}")
    return value
