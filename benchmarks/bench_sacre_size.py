"""chrF and TER on very large texts: refused at once over the limit, and timed within it.

The audit: TER on a 10 MB response took 161 s and 7.3 GB; 1 MB against 1 MB
ran out of memory at 8 GB; chrF on 10 MB took 33 s. Each case runs in its own
process so its peak memory (max RSS) is its own.

    python benchmarks/bench_sacre_size.py            # refusals, and scores at the limits
    python benchmarks/bench_sacre_size.py --chrf-1mb # also chrF on 1 MB (about 10 s)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CASE = r"""
import json, random, resource, sys, time
from pytest_textsim.nlp.sacre import ChrFScoreEvaluator, TerScoreEvaluator
metric, size, similar = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "similar"
random.seed(1)
vocab = ["".join(random.choice("abcdefghijklmnop") for _ in range(random.randint(2, 9)))
         for _ in range(5000)]
words, total = [], 0
while total < size:
    words.append(random.choice(vocab)); total += len(words[-1]) + 1
reference = " ".join(words)[:size]
response = (" ".join(w if random.random() > 0.2 else random.choice(vocab) for w in words)[:size]
            if similar else reference[::-1])
evaluator = {"chrf": ChrFScoreEvaluator, "ter": TerScoreEvaluator}[metric]()
started = time.perf_counter()
try:
    evaluator(response=response, ground_truth=reference)
    outcome = "scored"
except ValueError as exc:
    outcome = "refused: " + str(exc)[:70]
seconds = time.perf_counter() - started
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "rss_mb": rss, "outcome": outcome}))
"""


def run(metric: str, size: int, similar: bool) -> dict[str, object]:
    args = [sys.executable, "-c", CASE, metric, str(size), "similar" if similar else "reversed"]
    out = subprocess.run(args, capture_output=True, text=True, check=True, timeout=600).stdout
    return dict(json.loads(out.splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chrf-1mb", action="store_true", help="also score chrF on 1 MB")
    args = parser.parse_args()
    cases = [
        ("ter", 10_000_000, True), ("ter", 1_000_000, True), ("chrf", 10_000_000, True),
        ("ter", 10_000, True), ("chrf", 100_000, True),
    ]  # fmt: skip
    if args.chrf_1mb:
        cases.append(("chrf", 1_000_000, True))
    print(f"{'metric':6} {'chars':>11} {'seconds':>8} {'max RSS MB':>10}  outcome")
    for metric, size, similar in cases:
        figures = run(metric, size, similar)
        print(f"{metric:6} {size:11,} {figures['seconds']:8.3f} {figures['rss_mb']:10.0f}  "
              f"{figures['outcome']}")  # fmt: skip


if __name__ == "__main__":
    main()
