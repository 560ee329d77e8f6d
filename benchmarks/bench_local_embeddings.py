"""The local embedding model (WordLlama, the ``local`` extra): speed and the scores it gives.

Prints how many texts a second the local model embeds through the package's
embedding client (``--texts`` short texts, best of ``--repeat``; the vector cache
off, so every text is embedded), and, for the real-text pairs of a parity corpus
(``--corpus``, default ``../shared/parity/corpus.jsonl``; rows with ``kind``,
``response`` and ``ground_truth``), each kind's cosines and the share at or above
the local model's default threshold.

Run: ``.venv/bin/python benchmarks/bench_local_embeddings.py``
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict
from pathlib import Path

from pytest_textsim import SemanticSimilarityEvaluator
from pytest_textsim.judge.providers import local

CONFIG = {"type": "local", "model": local.MODEL}


def speed(texts: int, repeat: int) -> float:
    words = "the a refund order parcel weather capital city river song meeting friday".split()
    rows = [" ".join(words[(i * 7 + j) % len(words)] for j in range(8)) + f" {i}"
            for i in range(texts)]  # fmt: skip
    best = float("inf")
    for _ in range(repeat):
        client = SemanticSimilarityEvaluator(CONFIG).client  # no cache: every text embedded
        started = time.perf_counter()
        client.vectors(rows)
        best = min(best, time.perf_counter() - started)
    return texts / best


def kinds(corpus: Path) -> dict[str, list[float]]:
    similar = SemanticSimilarityEvaluator(CONFIG, threshold=local.THRESHOLD)
    found: dict[str, list[float]] = defaultdict(list)
    for line in corpus.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        truth = row["ground_truth"]
        if not row["response"].strip() or not str(truth).strip():
            continue
        score = similar(response=row["response"], ground_truth=truth)["semantic_similarity"]
        found[row["kind"]].append(score)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    default = Path(__file__).resolve().parents[2] / "shared" / "parity" / "corpus.jsonl"
    parser.add_argument("--corpus", type=Path, default=default)
    args = parser.parse_args()
    started = time.perf_counter()
    local._model()
    print(f"model loaded in {time.perf_counter() - started:.2f} s ({local.LABEL})")
    print(f"{speed(args.texts, args.repeat):,.0f} texts/s ({args.texts:,} short texts)")
    if not args.corpus.exists():
        print(f"no corpus at {args.corpus}: scores not measured")
        return
    print(f"\n{'kind':28s} {'pairs':>5s} {'min':>6s} {'median':>6s} {'max':>6s} "
          f"{'>= ' + str(local.THRESHOLD):>7s}")  # fmt: skip
    for kind, scores in sorted(kinds(args.corpus).items()):
        passed = sum(score >= local.THRESHOLD for score in scores) / len(scores)
        print(f"{kind:28s} {len(scores):5d} {min(scores):6.3f} {statistics.median(scores):6.3f} "
              f"{max(scores):6.3f} {passed:7.0%}")  # fmt: skip


if __name__ == "__main__":
    main()
