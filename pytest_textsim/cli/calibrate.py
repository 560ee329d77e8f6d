"""``textsim calibrate LABELS.jsonl --metric similarity``: agreement of the judge with people.

Each labelled row is judged (through the judge cache, so a second run makes no
call) and the judge's scores are compared with the human labels: weighted kappa
with its 95% interval, Spearman's rho, exact and within-one agreement, mean bias
and the confusion matrix. The result is stored in the judge cache, keyed by
metric, endpoint (host and path), model and prompt version, for ``textsim_require_calibration``.

Exit status: 0 done (and kappa at least ``--min-kappa``), 1 kappa below
``--min-kappa`` or not computable, 2 usage or input errors (each bad line as file:line).
"""

from __future__ import annotations

import argparse
import sys
from typing import IO, Any, NamedTuple

from ..engine.plan import UsageError, metric_choice, parse_mapping
from ..errors import ConfigError
from ..settings.table import Resolver
from .common import EXIT_FAILED, EXIT_OK, closed_pipe, usage_error
from .project import add_config_argument, add_judge_arguments, command_resolver

EPILOG = """\
examples:
  textsim calibrate labels.jsonl --metric similarity
  textsim calibrate labels.jsonl --metric relevance --label-field rating --map response=answer
  textsim calibrate labels.jsonl --metric similarity --min-kappa 0.6

Each line of LABELS.jsonl holds the metric's inputs (response, ground_truth, query,
context: rename with --map) and a human label on the judge's scale (1-5, or 0/1)
in --label-field (default human_score). Kappa needs at least 30 rows and labels
that are not all the same.

exit status: 0 done, 1 kappa below --min-kappa (or none), 2 a usage or input error.
"""


def add_calibrate_command(subparsers: Any) -> None:
    """Add ``textsim calibrate`` to the CLI."""
    parser = subparsers.add_parser(
        "calibrate",
        help="measure the judge's agreement with human labels and store it",
        description="Judge each labelled row and print the judge's agreement with the labels.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("labels", metavar="LABELS.jsonl", help="labelled rows ('-' for stdin)")
    parser.add_argument("--metric", required=True, help="the judge metric, e.g. similarity")
    parser.add_argument(
        "--label-field", default="human_score", help="field of the human label (human_score)"
    )
    parser.add_argument(
        "--map", action="append", default=[], metavar="INPUT=FIELD",
        help="read an input from another field, e.g. response=answer (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--min-kappa", type=float, metavar="K", help="exit 1 when kappa is below K (e.g. 0.6)"
    )
    add_config_argument(parser)
    add_judge_arguments(parser, "judge")
    parser.set_defaults(run=run_calibrate)


def run_calibrate(args: argparse.Namespace, out: IO[str] | None = None) -> int:
    """``textsim calibrate LABELS.jsonl --metric M``; returns the exit status."""
    try:
        return _run(args, out or sys.stdout)
    except UsageError as exc:
        return usage_error(str(exc))
    except BrokenPipeError:
        return closed_pipe()


def _run(args: argparse.Namespace, out: IO[str]) -> int:
    from ..judge.calibration import check_label, scale_of

    choice = metric_choice(args.metric)
    # refusal's scores are mostly the phrases', not the judge's: nothing to calibrate.
    if not choice.judge or choice.name == "refusal":
        raise UsageError(
            f"--metric {args.metric!r}: calibration compares a judge with people; "
            "give a judge metric (similarity, coherence, fluency, relevance, groundedness, "
            "rubric:toxicity)"
        )
    if choice.name == "rubric" and not choice.is_builtin(choice.options.get("name")):
        raise UsageError(
            f"--metric {args.metric!r}: calibrate takes a built-in rubric by name "
            "(rubric:toxicity, rubric:jailbreak, ...); a rubric of your own has no criteria here"
        )
    mapping = parse_mapping(args.map)
    resolver = command_resolver(args)
    rows = _read_rows(args.labels, choice, mapping)
    raw = [row.data.get(args.label_field) for row in rows]
    categories = scale_of(choice.name, choice.options)
    labels, errors = [], []
    for row, value in zip(rows, raw):
        if args.label_field not in row.data:
            errors.append(f'{row.where}: missing "{args.label_field}" (--label-field)')
            continue
        label, why = check_label(value, categories)
        if label is None:
            errors.append(f"{row.where}: {why}")
        labels.append(label)
    if errors:
        raise UsageError("\n".join(errors))
    try:
        return _judge_and_report(args, out, resolver, choice, rows, labels, categories)
    finally:
        from ..judge.wiring import release_judge

        release_judge(resolver)


def _judge_and_report(
    args: argparse.Namespace,
    out: IO[str],
    resolver: Resolver,
    choice: Any,
    rows: list[Any],
    labels: list[Any],
    categories: tuple[int, ...],
) -> int:
    from ..catalog import MetricUnavailable
    from ..judge.calibration import agreement, report_lines
    from ..judge.errors import JudgeConfigError
    from ..judge.wiring import run_judge

    try:
        scorer = choice.build(choice.threshold_default(resolver), resolver)
        client = run_judge(resolver).client
    except (ConfigError, MetricUnavailable, JudgeConfigError) as exc:
        raise UsageError(str(exc)) from None
    evaluator = getattr(scorer, "evaluator", scorer)
    workers = int(resolver.get("judge_concurrency"))
    judged, errors = [], []
    for row, output in zip(rows, _judge_rows(rows, choice, evaluator, workers)):
        if isinstance(output, Exception):
            errors.append(f"{row.where}: {choice.spec}: {type(output).__name__}: {output}")
            continue
        # A rubric's own score may be a probability (logprobs): the judge's integer is compared.
        judged.append(int(output["rubric_integer" if choice.name == "rubric" else choice.name]))
    if errors:
        for line in errors:
            print(f"textsim: error: {line}", file=sys.stderr)
        return 2
    params = scorer.params() if hasattr(scorer, "params") else {}
    key = {
        "metric": choice.name,
        "host": client.spec.endpoint_key,
        "model": str(params.get("model", client.spec.model)),
        "prompt_version": str(params.get("prompt_version", "")),
    }
    result = agreement(labels, judged, categories, seed=int(resolver.get("bootstrap_seed")))
    result.key = key
    from ..judge.cache.stores import calibrations_of

    store = calibrations_of(client.cache)
    if store is not None:
        store.put_calibration(
            key["metric"], key["host"], key["model"], key["prompt_version"], result.to_dict()
        )
    print(f"textsim calibrate: {args.labels}", file=out)
    for line in report_lines(result, choice.name):
        print(line, file=out)
    if store is None:
        print("not stored: the judge cache is off (textsim_cache = off)", file=out)
    else:
        print(f"stored in the judge cache {getattr(store, 'path', store)}", file=out)
    if args.min_kappa is not None:
        if result.kappa is None or result.kappa < args.min_kappa:
            shown = "none" if result.kappa is None else f"{result.kappa:.3f}"
            print(f"FAIL kappa {shown} is below --min-kappa {args.min_kappa:g}", file=out)
            return EXIT_FAILED
        print(f"PASS kappa {result.kappa:.3f} >= --min-kappa {args.min_kappa:g}", file=out)
    return EXIT_OK


class _Row(NamedTuple):
    where: str  # "labels.jsonl:3"
    data: dict[str, Any]
    texts: dict[str, str]


def _read_rows(path: str, choice: Any, mapping: dict[str, str]) -> list[_Row]:
    """Every labelled row with the texts ``choice`` judges; one :class:`UsageError`
    lists every bad line (``file:line``)."""
    from ..engine.plan import RowCheck
    from ..jsonl import JsonlError, read_objects

    display = "<stdin>" if path == "-" else path
    check = RowCheck([(choice.spec, choice.inputs, choice.optional_inputs)], mapping)
    rows: list[_Row] = []
    errors: list[str] = []
    try:
        for line in read_objects(path, display):
            if line.value is None:
                errors.append(f"{line.where}: {line.problem}")
                continue
            texts, problems = check.texts(line.value)
            if problems:
                errors.extend(f"{line.where}: {problem}" for problem in problems)
                continue
            rows.append(_Row(line.where, line.value, texts))
    except JsonlError as exc:  # missing file, not UTF-8: nothing more can be read
        raise UsageError(str(exc)) from None
    if errors:
        raise UsageError("\n".join(errors))
    if not rows:
        raise UsageError(f"{display}: no labelled rows (the file is empty)")
    return rows


def _judge_rows(
    rows: list[_Row], choice: Any, evaluator: Any, workers: int
) -> list[dict[str, Any] | Exception]:
    """The judge's output for each row, ``workers`` at a time (the judge client bounds
    the calls in flight); a failed call is that row's exception, the others go on."""
    from concurrent.futures import ThreadPoolExecutor

    wanted = choice.inputs + choice.optional_inputs

    def judge(row: _Row) -> dict[str, Any] | Exception:
        try:
            output: dict[str, Any] = evaluator(
                **{k: v for k, v in row.texts.items() if k in wanted}
            )
            return output
        except Exception as exc:  # reported per row
            return exc

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(judge, rows))
