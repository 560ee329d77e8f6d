"""``textsim score --judge-batch``: the run's judge cache misses sent through the judge
provider's batch API first (:mod:`pytest_textsim.judge.batch`), then the run scored
from the cache."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..engine.plan import Choice, UsageError
from ..runtime.untraced import untraced
from ..settings.table import Resolver
from .common import EXIT_INTERRUPTED

if TYPE_CHECKING:
    from ..judge.batch import BatchInterrupted


def run_batch(
    args: argparse.Namespace,
    resolver: Resolver,
    choices: Sequence[Choice],
    mapping: dict[str, str],
    thresholds: dict[str, float],
    build: Callable[..., Any],
) -> int | None:
    """Batch the judgments the run would call; ``None``: go on and score, else the
    exit status (a batch still running when ``--judge-batch-wait`` ran out)."""
    if args.data == "-":
        raise UsageError("--judge-batch reads a file, not standard input (it would read it twice)")
    if not any(c.judge for c in choices):
        print("judge batch: no judge metric asked for: nothing to batch", file=sys.stderr)
        return None
    from ..judge.batch import (
        BatchError,
        BatchInterrupted,
        Collector,
        Missing,
        run_batches,
        summary,
    )
    from ..judge.cache.stores import ensure_writable, judgments_of
    from ..judge.errors import JudgeConfigError
    from ..judge.wiring import release_judge, run_judge
    from .plan import plan

    built, _ = build(choices, thresholds, resolver)
    try:
        try:
            client = run_judge(resolver).client
        except JudgeConfigError as exc:
            raise UsageError(f"--judge-batch: {exc}") from None
        try:
            api = batch_api(client, args.judge_batch_deployment)
        except JudgeConfigError as exc:  # its SDK is not installed
            raise UsageError(f"--judge-batch: {exc}") from None
        store: Any = client.cache
        if judgments_of(store) is None or not hasattr(store, "put_batch"):
            raise UsageError("--judge-batch keeps its results in the judge cache: turn it on")
        if not (store.mode.reads and store.mode.writes):
            raise UsageError("--judge-batch writes the judge cache and the run reads it: "
                             f"its mode must be once, not {store.mode}")  # fmt: skip
        ensure_writable(store)

        def missing() -> dict[str, Missing]:
            collector = Collector(price=client.price)
            plan(args.data, choices, built, mapping, client, collector)
            return collector.missing

        try:
            # The batch API's calls are the judge's, as its chat completions are: no spans.
            with untraced():
                outcome = run_batches(client, store, missing, sys.stderr, api=api,
                                      first_poll=args.judge_batch_poll,
                                      wait=args.judge_batch_wait)  # fmt: skip
        except BatchError as exc:
            print(f"textsim: {exc}; the run judges the ordinary way", file=sys.stderr)
            return None
        except BatchInterrupted as stop:
            print(f"\ntextsim: interrupted; {interrupted(stop)}", file=sys.stderr)
            return EXIT_INTERRUPTED
        if outcome.unreachable:
            # Never the ordinary path: the batch may be judging (and billing) the same.
            kept = (f"; judge batch {outcome.pending} is kept in the judge cache: run the same "
                    "command again to collect it" if outcome.pending else "")  # fmt: skip
            print(f"textsim: {outcome.unreachable}{kept}", file=sys.stderr)
            return EXIT_INTERRUPTED
        if outcome.pending:
            print(f"textsim: judge batch {outcome.pending} is still running; its id is kept "
                  "in the judge cache: run the same command again to collect it",
                  file=sys.stderr)  # fmt: skip
            return EXIT_INTERRUPTED
        if outcome.batches:
            print(summary(client, outcome), file=sys.stderr)
        return None
    finally:
        # The scoring run that follows opens the judge (and its cache) afresh.
        release_judge(resolver)


def interrupted(stop: BatchInterrupted) -> str:
    """What a Ctrl-C while a batch was polled or collected leaves, and how to go on."""
    if stop.collecting:
        left = f"judge batch {stop.batch_id} has ended; what was read of it is cached"
    else:
        left = f"judge batch {stop.batch_id} goes on at the provider"
    return (f"{left}; its id is kept in the judge cache: run the same command again to "
            "collect it (nothing is submitted twice)")  # fmt: skip


def batch_api(client: Any, deployment: str | None) -> Any:
    """The judge provider's batch API, or a usage error saying it has none (or takes
    no ``--judge-batch-deployment``)."""
    made = getattr(client.provider, "batch_api", None)
    api = made(client, deployment) if made is not None else None
    title = getattr(client.provider, "title", client.spec.provider)
    if api is None:
        raise UsageError(f"--judge-batch needs a batch API, and the judge's provider "
                         f"({client.spec.provider}: {title}) has none; the providers with one "
                         "are openai, azure and anthropic")  # fmt: skip
    if deployment and not api.deployments:
        raise UsageError(f"--judge-batch-deployment names an Azure OpenAI Global Batch "
                         f"deployment; {api.title} sends the batch to the judge's model "
                         f"({client.spec.model})")  # fmt: skip
    return api
