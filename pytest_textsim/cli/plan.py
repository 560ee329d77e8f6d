"""``textsim score --plan``: what scoring a file would ask the judge and cost, before it runs.

Every row is scored as ``textsim score`` would score it, with the judge's client
planning instead of calling (:mod:`pytest_textsim.judge.planning`): judgments the
cache holds are read, the others counted with their estimated tokens and price.
Nothing is called and nothing is written. ``--budget-usd`` makes a scoring run
plan first and refuse to start when the plan's price is over the budget.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any

from ..engine.plan import Choice, RowCheck, RowOptions, UsageError, read_row_options
from ..evaluator import scoring_case
from ..judge.planning import PLANNING, Planner, Unplanned, table
from ..settings.table import Resolver

SHOWN_BAD = 10  # bad rows named one by one, the rest counted


def plan(
    path: str,
    choices: Sequence[Choice],
    built: Sequence[Any],
    mapping: dict[str, str],
    client: Any,
    planner: Planner | None = None,
) -> tuple[Planner, int, list[str]]:
    """``(planner, rows, bad rows)`` of scoring ``path``'s rows with the run's judge
    ``client`` (every judge metric's, rubrics with options read per row too), into
    ``planner`` (a new one by default); each bad row as ``file:line: problem``."""
    judged = [(c, made) for c, made in zip(choices, built) if c.judge]
    if planner is None:
        planner = Planner(price=client.price)
    check = RowCheck([(c.spec, c.inputs, c.optional_inputs) for c, _ in judged], mapping)
    rows, bad = 0, []
    client.planner = planner
    try:
        for number, data in _rows(path):
            planner.where = f"{path}:{number}"
            if isinstance(data, str):
                bad.append(f"{planner.where}: {data}")
                continue
            texts, problems = check.texts(data)
            options, more = read_row_options([c for c, _ in judged], data)
            if problems or more:
                bad.append(f"{planner.where}: {'; '.join([*problems, *more])}")
                continue
            rows += 1
            with scoring_case(texts):
                for choice, made in judged:
                    _planned(choice, made, texts, options)
    finally:
        client.planner = None
    return planner, rows, bad


def _planned(choice: Choice, made: Any, texts: dict[str, Any], options: dict[str, Any]) -> None:
    """Plan one score: its cached judgments read, the first missing one counted."""
    wanted = (*choice.inputs, *choice.optional_inputs)
    kwargs = {name: value for name, value in texts.items() if name in wanted}
    if isinstance(made, RowOptions):
        kwargs.update(options)
    token = PLANNING.set(choice.name)
    try:
        made(**kwargs)
    except Unplanned:
        pass
    finally:
        PLANNING.reset(token)


def _rows(path: str) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """Each row's line number and object, or what is wrong with a line that is not one."""
    with open(path, encoding="utf-8-sig") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except (ValueError, RecursionError) as exc:
                yield number, f"not JSON ({exc})"
                continue
            if not isinstance(data, dict):
                data = f"a JSON {type(data).__name__}, not an object"
            yield number, data


def run_plan(
    args: Any,
    out: IO[str],
    resolver: Resolver,
    choices: Sequence[Choice],
    mapping: dict[str, str],
    build: Callable[..., Any],
    thresholds: dict[str, float],
) -> tuple[Planner, int, int]:
    """Plan the run ``args`` ask for and print it (a table, or JSON with ``--format json``);
    returns the plan, the rows planned and the bad rows (named on stderr with ``--plan``)."""
    if args.data == "-":
        raise UsageError("--plan reads a file, not standard input (it would read it twice)")
    from ..judge.errors import JudgeConfigError
    from ..judge.wiring import run_judge

    built, _ = build(choices, thresholds, resolver)
    try:
        client = run_judge(resolver).client
    except JudgeConfigError as exc:
        # A metric that asks a judge only now and then (refusal) builds without one.
        raise UsageError(f"planning the judge's calls: {exc}") from None
    planner, rows, bad = plan(args.data, choices, built, mapping, client)
    model, host = client.spec.model, client.spec.host
    if getattr(args, "format", "table") == "json":
        data = {**planner.as_dict(model, host), "rows": rows, "bad_rows": len(bad),
                "bad_lines": bad}  # fmt: skip
        out.write(json.dumps(data, indent=2) + "\n")
    else:
        out.write("\n".join(table(planner, rows, model)) + "\n")
    if getattr(args, "plan", False):  # a scoring run reports them itself
        report_bad_rows(bad, sys.stderr)
    return planner, rows, len(bad)


def report_bad_rows(bad: Sequence[str], out: IO[str]) -> None:
    """Each bad row as ``file:line: problem`` (the first 10, then a count): the run
    would report them and exit 2."""
    for line in bad[:SHOWN_BAD]:
        print(f"textsim: {line}", file=out)
    if len(bad) > SHOWN_BAD:
        print(f"textsim: ... and {len(bad) - SHOWN_BAD} more bad row(s)", file=out)
    if bad:
        print(f"textsim: {len(bad)} row(s) could not be read: they are not planned, and the "
              "scoring run reports them and exits 2", file=out)  # fmt: skip
