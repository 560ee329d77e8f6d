"""``textsim score --variant a=answer_a --variant b=answer_b``: variants of recorded outputs.

Each row of the JSONL file is one case; each ``--variant NAME=COLUMN`` reads that
variant's response from COLUMN (the other inputs as ``--map`` says). Every metric
scores every variant of every row, and the same comparison as the plugin's
``textsim variants`` section is printed (:mod:`pytest_textsim.gating.variants`),
with the first variant as the reference unless ``--reference-variant`` names
another. ``--gate`` takes the diff gates too: ``bleu_score.mean.diff[variant=b-a]``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import IO, Any, Callable

from ..engine.plan import UsageError
from ..settings.table import Resolver

#: The parameter the variants of ``textsim score`` are values of (in diff gates).
PARAMETER = "variant"


def add_variant_arguments(parser: argparse.ArgumentParser) -> None:
    """``--variant NAME=COLUMN`` (repeatable) and ``--reference-variant NAME``."""
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME=COLUMN",
        help="compare variants: NAME's response is in COLUMN (repeatable, at least two); "
        "prints the comparison of textsim_variants; diff gates name them "
        "(bleu_score.mean.diff[variant=b-a].ci_low >= -0.05)",
    )
    parser.add_argument(
        "--reference-variant",
        metavar="NAME",
        help="the variant the others are compared with (default: the first --variant)",
    )


def parse_variants(values: Sequence[str], reference: str | None) -> list[tuple[str, str]]:
    """``[(name, column), ...]`` from ``--variant`` values; a usage error names the bad one."""
    found: list[tuple[str, str]] = []
    for value in values:
        name, sep, column = value.partition("=")
        name, column = name.strip(), column.strip()
        if not sep or not name or not column:
            raise UsageError(f"--variant {value!r}: expected NAME=COLUMN, e.g. a=answer_a")
        if name in dict(found):
            raise UsageError(f"--variant {value!r}: variant {name!r} is given twice")
        found.append((name, column))
    if len(found) < 2:
        raise UsageError("--variant: give at least two variants to compare")
    if reference is not None and reference not in dict(found):
        raise UsageError(
            f"--reference-variant {reference!r} is none of the variants "
            f"({', '.join(name for name, _ in found)})"
        )
    return found


def run_variants(
    args: argparse.Namespace,
    out: IO[str] | None,
    resolver: Resolver,
    request: Any,
    build: Callable[..., tuple[list[Any], list[float | None]]],
) -> int:
    """Score every variant of every row, print the comparison and the gates; the exit status."""
    import sys

    from ..gating.gates import evaluate_gates
    from ..gating.variants import compare_variants
    from ..jsonl import JsonlError, read_objects
    from ..records import records_from_output

    chosen = parse_variants(args.variant, args.reference_variant)
    if any(choice.row_options for choice in request.choices):
        raise UsageError("--variant: options read from each row (--map METRIC.KEY=COLUMN) "
                         "are not supported with variants")  # fmt: skip
    built, _ = build(request.choices, request.thresholds, resolver)
    display = "<stdin>" if args.data == "-" else args.data
    stream = sys.stdin if args.data == "-" else None
    records = []
    try:
        lines = list(read_objects(args.data, display, stream))
    except JsonlError as exc:
        raise UsageError(str(exc)) from None
    problems = [f"{line.where}: {line.problem}" for line in lines if line.problem]
    for line in lines:
        row = line.value
        if row is None:
            continue
        case = str(row.get(args.id_field)) if args.id_field and args.id_field in row else line.where
        for name, column in chosen:
            for choice, evaluator in zip(request.choices, built):
                inputs = {}
                for field in choice.inputs:
                    source = column if field == "response" else request.mapping.get(field, field)
                    value = row.get(source)
                    if not isinstance(value, str):
                        problems.append(f"{line.where}: {name}: no text in {source!r}")
                        break
                    inputs[field] = value
                else:
                    output = evaluator(**inputs)
                    for record in records_from_output(choice.name, output, params={}):
                        record.nodeid = f"{case}[{name}]"
                        record.variant = choice.variant
                        record.variants = {PARAMETER: name}
                        record.cases = {PARAMETER: case}
                        records.append(record)
    target = out or sys.stdout
    for problem in problems:
        print(f"textsim: {problem}", file=sys.stderr)
    if not records:
        raise UsageError(f"{display}: no row could be scored")
    seed = int(resolver.get("bootstrap_seed"))
    comparison = compare_variants(
        records, PARAMETER, args.reference_variant,
        chosen="--reference-variant" if args.reference_variant else "", seed=seed,
    )  # fmt: skip
    for text in comparison.lines():
        print(text, file=target)
    results = evaluate_gates(request.gates, records, seed=seed)
    for result in results:
        print(result.line(), file=target)
    # As textsim score: 2 when a row could not be scored, else 1 when a gate failed.
    return 2 if problems else 1 if any(not r.passed for r in results) else 0
