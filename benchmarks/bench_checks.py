"""Speed of the deterministic checks: levenshtein, exact_match and json_schema.

Scores ``--rows`` rows (default 10,000) with each check through
``score_rows`` and prints rows per second (best of ``--repeat`` runs).

Run: ``.venv/bin/python benchmarks/bench_checks.py``
"""

from __future__ import annotations

import argparse
import json
import random
import time

from pytest_textsim.nlp.batch import score_rows
from pytest_textsim.nlp.checks import (
    ExactMatchEvaluator,
    JsonSchemaEvaluator,
    LevenshteinEvaluator,
)

SCHEMA = {
    "type": "object",
    "required": ["id", "items"],
    "properties": {
        "id": {"type": "integer"},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "price"],
                "properties": {"name": {"type": "string"}, "price": {"type": "number"}},
            },
        },
    },
}


def rows(count: int) -> list[dict[str, str]]:
    rng = random.Random(1)
    words = "the cat sat on a mat while Paris is the capital of France today".split()
    out = []
    for i in range(count):
        text = " ".join(rng.choice(words) for _ in range(rng.randrange(8, 30)))
        reference = text if i % 3 == 0 else " ".join(rng.choice(words) for _ in range(20))
        items = [{"name": f"item {j}", "price": j * 1.5 if i % 5 else "abc"} for j in range(3)]
        out.append({"response": text, "ground_truth": reference,
                    "json": json.dumps({"id": i, "items": items})})  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    data = rows(args.rows)
    json_rows = [{"response": row["json"]} for row in data]
    text_rows = [{"response": r["response"], "ground_truth": r["ground_truth"]} for r in data]
    for name, evaluator, batch in (
        ("levenshtein", LevenshteinEvaluator(), text_rows),
        ("exact_match", ExactMatchEvaluator(squad_normalize=True), text_rows),
        ("json_schema", JsonSchemaEvaluator(schema=SCHEMA), json_rows),
    ):
        best = float("inf")
        for _ in range(args.repeat):
            started = time.perf_counter()
            out = score_rows(batch, [evaluator])
            best = min(best, time.perf_counter() - started)
        passed = sum(1 for o in out if o[f"{name}_result"] == "pass")
        print(f"{name}: {args.rows} rows in {best:.3f} s = {args.rows / best:,.0f} rows/s "
              f"({passed} pass)")  # fmt: skip


if __name__ == "__main__":
    main()
