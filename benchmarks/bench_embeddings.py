"""Semantic similarity at scale against the local OpenAI-compatible server.

Scores ``--rows`` rows (default 1,000; 2,000 distinct texts) with
``semantic_similarity`` through ``score_rows`` while every request to the
server takes ``--latency`` seconds (default 0.05), and prints:

- requests sent and texts per request (goal: at most 1 request per 256 texts),
- the wall time of the cold run (the server builds 1,536-float vectors in
  the same process, so part of it is the server's own work),
- a warm rerun with a new evaluator on the same judge cache: requests sent
  (goal: 0) and its wall time,
- that both runs gave identical scores.

Run: ``.venv/bin/python benchmarks/bench_embeddings.py``
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time

from pytest_textsim.judge.embeddings import SemanticSimilarityEvaluator
from pytest_textsim.nlp.batch import score_rows
from pytest_textsim.testing.fake_openai import FakeOpenAI

KEY = "sk-bench-not-a-real-key"


def rows(count: int) -> list[dict[str, str]]:
    return [
        {
            "response": f"The capital of country {i} is City {i}, on river {i % 13}.",
            "ground_truth": f"City {i} is the capital of country {i}.",
        }
        for i in range(count)
    ]


def run(server: FakeOpenAI, data: list[dict[str, str]], cache: str) -> tuple[list, float, int]:
    config = {"model": "bench-embed", "base_url": server.base_url, "api_key": KEY}
    before = len(server.embedding_requests)
    evaluator = SemanticSimilarityEvaluator(config, cache=cache)
    started = time.perf_counter()
    out = score_rows(data, [evaluator])
    elapsed = time.perf_counter() - started
    return out, elapsed, len(server.embedding_requests) - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.05)
    args = parser.parse_args()
    data = rows(args.rows)
    started = time.perf_counter()
    import openai  # noqa: F401 - once per process; timed apart from the runs

    import_s = time.perf_counter() - started
    texts = len({t for row in data for t in row.values()})
    with FakeOpenAI(latency=args.latency, embedding_dimensions=1536) as server, \
            tempfile.TemporaryDirectory() as cache:  # fmt: skip
        cold, cold_s, cold_requests = run(server, data, cache)
        sizes = [len(r.inputs) for r in server.embedding_requests]
        warm, warm_s, warm_requests = run(server, data, cache)
    print(f"rows: {args.rows}, distinct texts: {texts}, latency: {args.latency * 1000:.0f} ms, "
          f"vectors: 1536 floats; importing openai took {import_s:.2f} s (not in the runs)")
    print(f"cold run: {cold_requests} requests (texts per request: {sizes}); goal <= "
          f"{math.ceil(texts / 256)}; wall {cold_s:.2f} s")
    print(f"warm run: {warm_requests} requests (goal 0); wall {warm_s:.2f} s")
    print(f"identical scores cold/warm: {cold == warm}")
    if cold_requests > math.ceil(texts / 256) or warm_requests or cold != warm:
        raise SystemExit("goal missed")


if __name__ == "__main__":
    main()
