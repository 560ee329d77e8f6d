"""``textsim score --judge-batch``: the run's judge cache misses sent through the judge
provider's batch API first (:mod:`pytest_textsim.judge.batch`), then the run scored
from the cache."""

from __future__ import annotations

import argparse
import shlex
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
    from .plan import plan, report_bad_rows

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
            raise UsageError(cache_needed(resolver, "keeps its results in the judge cache, "
                                          "which is off"))  # fmt: skip
        if not (store.mode.reads and store.mode.writes):
            raise UsageError(cache_needed(resolver, "writes the judge cache and the run reads "
                                          f"it, which mode {store.mode} does not"))  # fmt: skip
        ensure_writable(store)

        reported: list[str] = []

        def missing() -> dict[str, Missing]:
            collector = Collector(price=client.price)
            bad = plan(args.data, choices, built, mapping, client, collector)[2]
            if not reported:  # before the first batch is sent; the good rows still go
                report_bad_rows(bad, sys.stderr)
                reported.append(args.data)
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
        if outcome.refused:
            raise UsageError(refused(outcome, store.directory, client.spec.key_var))
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


def cache_needed(resolver: Resolver, why: str) -> str:
    """Why ``--judge-batch`` needs the judge cache mode ``once``, the mode's source
    and how to set it."""
    source = resolver.resolve("cache").source
    return (f"--judge-batch {why} (cache mode from {source}): set the judge cache mode "
            "to once (--cache once, TEXTSIM_CACHE=once, or textsim_cache = once in the "
            "ini file)")  # fmt: skip


def refused(outcome: Any, cache_dir: Any, key_var: str) -> str:
    """Why the provider will not give up kept batch ``outcome.pending`` (it has no
    such batch, or refuses the key), where it was kept and polled, and the
    command that forgets it."""
    batch_id, kept, now = outcome.pending, outcome.kept_at, outcome.now_at
    from ..judge.endpoints import is_batch_endpoint

    if not is_batch_endpoint(kept):
        where = (f"it was kept as submitted through {kept} by an earlier release, which "
                 f"did not keep the scheme and port; this run asked {now}")  # fmt: skip
    elif kept != now:
        where = f"it was submitted through {kept}; this run asked {now}"
    else:
        where = f"it was submitted through {now}, the endpoint this run asked"
    if outcome.refused == 404:
        other = "another endpoint, or " if kept != now else ""
        head = (f"the judge provider has no batch {batch_id} ({outcome.unreachable}); "
                f"{where}: it may belong to {other}another account or project than the "
                "key's, or have been deleted")  # fmt: skip
    else:
        key = key_var or "the judge's API key"
        head = (f"the judge provider refused the key while polling batch {batch_id} "
                f"({outcome.unreachable}): check {key}; {where}")  # fmt: skip
    forget = shlex.join(["textsim", "cache", "--dir", str(cache_dir), "batches",
                         "--forget", batch_id])  # fmt: skip
    return (f"{head}. It stays kept in the judge cache: run again with the "
            f"endpoint and key that submitted it to collect it, or give it up (still "
            f"billed if it runs) with: {forget}")  # fmt: skip


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
