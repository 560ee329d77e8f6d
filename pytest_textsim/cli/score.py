"""``textsim score``: the metrics, gates and baselines of a pytest run, over JSONL files.

Exit status, for CI: 0 when everything passed, 1 when a gate failed (or, with
``--fail-on-regression``, a score regressed), 2 on usage or input errors, with
every bad line of the input reported as ``file:line``.

:func:`pytest_textsim.cli.build_parser` adds these subcommands; this module is
imported only when they run, and imports the evaluators only once the
arguments are known to be good.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from typing import IO, Any, NamedTuple

from ..engine.plan import (
    Choice,
    RowOptions,
    UsageError,
    apply_options,
    parse_mapping,
    parse_metrics,
    parse_rubrics,
    parse_thresholds,
)
from ..errors import ConfigError
from ..settings.table import Resolver
from .baselines import Baselines, baseline_overrides
from .common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    closed_pipe,
    usage_error,
)
from .project import command_resolver
from .rowerrors import ErrorLines


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
    except KeyboardInterrupt:
        # The workers are ended and the output ends with a whole line.
        print("\ntextsim: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _run_score(args: argparse.Namespace, out: IO[str] | None) -> int:
    request = _parse_arguments(args)
    overrides = {**baseline_overrides(args), "fail_on_threshold": args.fail_on_threshold,
                 "budget_usd": getattr(args, "budget_usd", None)}  # fmt: skip
    resolver = command_resolver(args, overrides)
    if getattr(args, "plan", False) or getattr(args, "budget_usd", None) is not None:
        refused = _planned(args, out, resolver, request)
        if refused is not None:
            return refused
    if getattr(args, "judge_batch", False):
        if args.variant:
            raise UsageError("--judge-batch and --variant cannot be given together")
        from .batch import run_batch

        waiting = run_batch(args, resolver, request.choices, request.mapping,
                            request.thresholds, _build)  # fmt: skip
        if waiting is not None:
            return waiting
    if args.variant:
        from .variants import run_variants

        return run_variants(args, out, resolver, request, _build)
    baselines = Baselines.from_arguments(args, resolver)
    try:
        return _score(args, out, resolver, request, baselines)
    finally:
        if any(c.judge for c in request.choices):
            from ..judge.wiring import release_judge

            # Close the judge cache now: this command may run inside a longer process.
            release_judge(resolver)


def _planned(
    args: argparse.Namespace, out: IO[str] | None, resolver: Resolver, request: Request
) -> int | None:
    """``--plan``: print the plan, exit 0; ``--budget-usd``: a plan over the budget (or
    with calls it cannot price) refuses the run, exit 1. ``None``: go on and score."""
    from .plan import run_plan

    if not any(c.judge for c in request.choices):
        if args.plan:
            print("plan: no judge metric asked for: nothing would be called", file=out)
            return EXIT_OK
        return None
    shown = out or sys.stdout
    if not args.plan:
        shown = sys.stderr  # the plan beside a refusal; stdout may be the scores
    try:
        planner, _, bad = run_plan(args, shown, resolver, request.choices, request.mapping,
                                   _build, request.thresholds)  # fmt: skip
    finally:
        from ..judge.wiring import release_judge

        release_judge(resolver)
    if args.plan:
        return EXIT_USAGE if bad else EXIT_OK  # as the scoring run will
    budget, total = args.budget_usd, planner.total()
    if total.unpriced:
        print(f"textsim: refusing to start: {total.unpriced} planned judge call(s) have no "
              f"price, so the plan cannot be held to --budget-usd {budget:g} (give the "
              "model's prices with textsim_prices)", file=sys.stderr)  # fmt: skip
        return EXIT_FAILED
    usd, batch = total.usd or 0.0, bool(getattr(args, "judge_batch", False))
    if batch:
        from ..judge.batch import BATCH_DISCOUNT

        usd *= BATCH_DISCOUNT  # the misses go in batches, at the batch price
    if usd > budget:
        priced = "at batch prices (--judge-batch)" if batch else "at ordinary prices"
        print(f"textsim: refusing to start: the plan costs about ${usd:.4f} {priced}, over "
              f"--budget-usd {budget:g}; raise --budget-usd"
              + ("" if batch else ", add --judge-batch (half the price)")
              + ", or score fewer rows or metrics", file=sys.stderr)  # fmt: skip
        return EXIT_FAILED
    return None


# -- the steps of a run -----------------------------------------------------------


class Request(NamedTuple):
    """What the arguments ask for, checked."""

    choices: list[Choice]
    thresholds: dict[str, float]
    mapping: dict[str, str]
    gates: list[Any]


def _parse_arguments(args: argparse.Namespace) -> Request:
    """Check every argument before saying anything, and report all that is wrong."""
    from ..gating.gates import GateError, parse_gates

    problems: list[str] = []
    choices: list[Choice] = []
    thresholds: dict[str, float] = {}
    mapping: dict[str, str] = {}
    gates = []
    try:
        # --rubric NAME=TEXT alone is enough to score that rubric.
        if args.metric or not args.rubric:
            choices = parse_metrics(args.metric)
    except UsageError as exc:
        problems.append(str(exc))
    try:
        choices.extend(parse_rubrics(args.rubric))
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
        if choices:
            apply_options(choices, args.option, args.map)
    except UsageError as exc:
        problems.append(str(exc))
    try:
        gates = parse_gates((expr, "--gate") for expr in args.gate)
    except GateError as exc:
        problems.append(str(exc))
    if problems:
        raise UsageError("\n".join(problems))
    return Request(choices, thresholds, mapping, _gates_on_renamed_keys(gates, choices))


def _gates_on_renamed_keys(gates: list[Any], choices: list[Choice]) -> list[Any]:
    """Let a gate name a key as the output rows do: with two ROUGE types,
    ``rouge1_f1_score.mean`` is ``rouge_f1_score[rouge_type=rouge1].mean``, and
    ``rubric_politeness.mean`` is ``rubric[name=politeness].mean``."""
    import dataclasses

    from ..catalog import METRICS

    aliases: dict[str, tuple[str, tuple[str, str]]] = {}
    for choice in choices:
        metric = METRICS.get(choice.name)
        if not (choice.renames and choice.variant and metric and metric.variant_option):
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
    request: Request,
    baselines: Baselines,
) -> int:
    """Build the evaluators, stream the rows through them, then print the summary and gates."""
    from ..engine import stream

    strict = _fail_on_threshold(resolver)  # a bad value is an error before any row is read
    display = "<stdin>" if args.data == "-" else args.data
    source = stream.Source(args.data, display)
    try:
        built, levels = _build(request.choices, request.thresholds, resolver)
    except BaseException:
        source.close()
        raise
    try:
        _check_fields(display, source, request)
    except BaseException:
        source.close()
        raise
    info = _slot_info(request.choices, built)
    plan, parent_corpus = _plan(display, args, request, levels, info)
    plan = dataclasses.replace(plan, keep_scores=baselines.wanted)
    shown = stream.Progress.wanted(sys.stderr, args.progress)
    progress = stream.Progress(sys.stderr, shown, source)
    errors = ErrorLines(progress)
    judge = _judge_step(request.choices, built, resolver, plan, parent_corpus)
    tally = _stream(args, plan, source, judge, errors, progress)
    errors.finish()
    if not tally.rows:
        if not errors.count:
            raise UsageError(f"{display}: no rows to score (the file is empty)")
        return EXIT_USAGE
    table_out = sys.stderr if args.output == "-" else (out or sys.stdout)
    seed = int(resolver.get("bootstrap_seed"))
    results = _report(table_out, args.data, tally, info, built, request.gates, seed, strict)
    failed = sum(not r.passed for r in results)
    regressed = baselines.finish(table_out, tally, info, errors.rows, failed)
    below = bool(strict and tally.rows_below)
    return _exit_status(errors.count, results, regressed or below)


def _fail_on_threshold(resolver: Resolver) -> str:
    """Where ``--fail-on-threshold`` was set (``""``: it was not)."""
    try:
        resolved = resolver.resolve("fail_on_threshold")
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    return resolved.source if resolved.value else ""


def _build(
    choices: Sequence[Choice], thresholds: dict[str, float], resolver: Resolver
) -> tuple[list[Any], list[float | None]]:
    """Each metric's evaluator built here (what the metric table made) and its threshold.

    The algorithmic ones score one short text here, so missing NLTK data is one
    clear error before any row is read and any worker started. A metric whose
    options come from each row (``--map contains.strings=COLUMN``) is built per
    set of values, as rows need it.
    """
    built: list[Any] = []
    levels: list[float | None] = []
    try:
        for choice in choices:
            threshold = thresholds.get(choice.name)
            if threshold is None:
                threshold = choice.threshold_default(resolver)
            if choice.row_options:
                built.append(RowOptions(choice, threshold, resolver))
            else:
                built.append(choice.build(threshold, resolver))
            levels.append(threshold)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    except Exception as exc:
        from ..catalog import MetricUnavailable
        from ..judge.errors import JudgeConfigError

        # No judge configured, no API key...: their messages say what to set.
        if isinstance(exc, (MetricUnavailable, JudgeConfigError)):
            raise UsageError(str(exc)) from None
        if isinstance(exc, ValueError):  # options the evaluator refuses together
            raise UsageError(f"{choice.shown}: {exc}") from None
        raise
    for choice, made in zip(choices, built):
        if not choice.judge and not isinstance(made, RowOptions):
            made(**{name: "A cat." for name in choice.inputs})
        judge = getattr(made, "judge", None)
        if judge is not None:
            # A judge found down by an earlier run is tried afresh by this one.
            judge.client.reachability.reset()
    return built, levels


def _check_fields(display: str, source: Any, request: Request) -> None:
    """A needed field that none of the first rows has is one error with the ``--map``
    that fixes it, before anything is scored (not the same problem on every row)."""
    from ..engine.fields import FIELD_CHECK_ROWS, absent_fields
    from ..jsonl import loads

    first = []
    for line in source.peek(FIELD_CHECK_ROWS):
        try:
            data = loads(line)
        except ValueError:
            continue  # reported with its line number when the rows are read
        if isinstance(data, dict):
            first.append(data)
    problems = absent_fields(display, request.choices, request.mapping, first)
    if problems:
        raise UsageError("\n".join(problems))


def _slot_info(choices: Sequence[Choice], built: Sequence[Any]) -> list[Any]:
    """How the summary and the gates name each metric: its name, variant and parameters."""
    from ..engine.tally import SlotInfo

    info = []
    for choice, made in zip(choices, built):
        params = dict(choice.options)
        if choice.params_of is not None and not isinstance(made, RowOptions):
            params.update(choice.params_of(made))
        # An unnamed rubric is known by its evaluator's label (a hash of its criteria).
        variant = choice.variant or (
            params.get(choice.variant_option) if choice.variant_option else None
        )
        if variant is None and choice.variant_param:
            variant = params.get(choice.variant_param)
        info.append(SlotInfo(choice.name, variant, params))
    return info


CorpusByJudge = tuple[str, str, tuple[str, ...], tuple[int, ...]]


def _plan(
    display: str,
    args: argparse.Namespace,
    request: Request,
    levels: Sequence[float | None],
    info: Sequence[Any],
) -> tuple[Any, list[CorpusByJudge]]:
    """What the chunk scorer needs, and the corpus gates only judge metrics feed."""
    from ..engine.chunks import CorpusNeed, MetricPlan, Plan
    from ..engine.tally import corpus_key, gate_globs, reps_of, sentence_keys
    from ..gating.gates import matches
    from ..nlp.nltk_data import located

    choices, gates = request.choices, request.gates
    worker_corpus: dict[str, CorpusNeed] = {}
    parent_corpus: dict[str, CorpusByJudge] = {}
    for gate in gates:
        if not gate.is_corpus:
            continue
        key = corpus_key(gate)
        plain = [(k, v) for k, v in gate.filters if k != "test"]
        # A row's pair counts when a metric given both texts scored it (and matches).
        sources = [
            i
            for i, c in enumerate(choices)
            if {"response", "ground_truth"} <= set(c.inputs + c.optional_inputs)
            and matches(reps_of(info[i], ""), plain)
        ]
        if any(not choices[i].judge for i in sources):
            worker_corpus[key] = CorpusNeed(key, gate.corpus_name, gate_globs(gate))
        elif sources:
            parent_corpus[key] = (key, gate.corpus_name, gate_globs(gate), tuple(sources))
    globs = sorted({gate_globs(g) for g in gates if not g.is_corpus and gate_globs(g)})
    plan = Plan(
        display,
        tuple(
            MetricPlan(
                c.spec,
                level,
                c.rename_keys,
                c.judge,
                tuple(sorted(c.given_options.items())),
                tuple(sorted(c.row_options.items())),
                c.label,
            )
            for c, level in zip(choices, levels)
        ),
        tuple(sorted(request.mapping.items())),
        args.id_field,
        tuple(globs),
        tuple(worker_corpus.values()),
        tuple(sorted(located().items())),
        sentence_keys(gates),
    )
    return plan, list(parent_corpus.values())


def _judge_step(
    choices: Sequence[Choice],
    built: Sequence[Any],
    resolver: Resolver,
    plan: Any,
    parent_corpus: Sequence[CorpusByJudge],
) -> Any:
    """The judge metrics, called in this process (None when there are none)."""
    from ..engine.stream import JudgeStep

    if not any(c.judge for c in choices):
        return None
    concurrency = int(resolver.get("judge_concurrency"))
    # The plugin's judge scorer turns judge errors into test failures;
    # here the judge evaluator inside it is called, so an error is a row error.
    evaluators = [getattr(m, "evaluator", m) if c.judge else None for c, m in zip(choices, built)]
    return JudgeStep(
        choices,
        evaluators,
        concurrency,
        plan.globs,
        parent_corpus,
        plan.sentence_keys,
        plan.display,
    )


def _stream(
    args: argparse.Namespace,
    plan: Any,
    source: Any,
    judge: Any,
    errors: ErrorLines,
    progress: Any,
) -> Any:
    """Read, score and write every row; the tally of what the summary and gates need."""
    from ..engine import stream
    from ..engine.cores import usable_cores

    sink = None
    try:
        sink = stream.Sink(args.output)
        return stream.run(
            plan,
            source,
            sink,
            jobs=args.jobs or usable_cores(),
            # Workers cost more than they save on a small input, unless asked for.
            in_process_below=0 if args.jobs else stream.IN_PROCESS_BELOW,
            errors=errors,
            progress=progress,
            judge=judge,
        )
    finally:
        progress.clear()
        source.close()
        if sink is not None:
            sink.close()
        if judge is not None:
            judge.close()


def _report(
    out: IO[str],
    data: str,
    tally: Any,
    info: Sequence[Any],
    built: Sequence[Any],
    gates: Any,
    seed: int,
    strict: str = "",
) -> list[Any]:
    """Print the summary table, the rows below threshold (always with ``strict``, the
    source of ``--fail-on-threshold``), the judge's calls and the gates (``seed``: of
    their bootstrap intervals); the gates' results."""
    from ..engine.tally import evaluate_gates
    from ..formatting import plural

    _print_summary(out, data, tally.rows, tally, info)
    if tally.rows_below or strict:
        line = f"{tally.rows_below} of {plural(tally.rows, 'row')} below threshold"
        print(line + (f" ({strict})" if strict else ""), file=out)
    judges = {id(j): j for j in (getattr(m, "judge", None) for m in built) if j is not None}
    for client in judges.values():
        print(client.client.stats.summary(), file=out)
    results = evaluate_gates(gates, tally, info, seed=seed)
    if results:
        print("gates:", file=out)
        for result in results:
            print("  " + result.line(), file=out)
    return results


def _exit_status(bad_rows: int, results: Sequence[Any], regressed: bool) -> int:
    """2 when a row could not be scored, else 1 when a gate failed or (with
    ``--fail-on-regression``) a score regressed or (with ``--fail-on-threshold``) a
    row is below threshold, else 0."""
    if bad_rows:
        return EXIT_USAGE
    return EXIT_FAILED if regressed or any(not r.passed for r in results) else EXIT_OK


def _print_summary(out: IO[str], data: str, count: int, tally: Any, info: Any) -> None:
    from ..engine.tally import summaries
    from ..formatting import plural
    from ..summary import metric_table

    source = "standard input" if data == "-" else data
    print(f"textsim score: {plural(count, 'row')} from {source}", file=out)
    for line in metric_table(*summaries(tally, info)):
        print(line if isinstance(line, str) else line[0], file=out)
