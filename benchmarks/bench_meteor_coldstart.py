"""METEOR cold start: the first ``MeteorScoreEvaluator()(...)`` call in fresh processes.

Each run starts a new Python process that imports pytest_textsim, builds the
evaluator and times its first call (which loads Punkt, without importing nltk, and opens
WordNet), then a second call. For comparison, ``--nltk-reader`` also times the
first call of NLTK's own ``meteor_score`` with ``nltk.corpus.wordnet`` (what
azure-ai-evaluation does) in as many fresh processes.

    NLTK_DATA=../shared/nltk_data .venv/bin/python benchmarks/bench_meteor_coldstart.py
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESPONSE = "According to wikipedia, Marie Curie was not born in Paris but in Warsaw."
GROUND_TRUTH = "Marie Curie was born in Warsaw."

OURS = f"""
import json, sys, time
sys.path.insert(0, {str(ROOT)!r})
start = time.perf_counter()
from pytest_textsim import MeteorScoreEvaluator
evaluator = MeteorScoreEvaluator()
imported = time.perf_counter()
out = evaluator(response={RESPONSE!r}, ground_truth={GROUND_TRUTH!r})
first = time.perf_counter()
evaluator(response={GROUND_TRUTH!r}, ground_truth={RESPONSE!r})
second = time.perf_counter()
print(json.dumps({{"import": imported - start, "first": first - imported,
                  "second": second - first, "score": out["meteor_score"]}}))
"""

NLTK_READER = f"""
import json, time
start = time.perf_counter()
import nltk
from nltk.corpus import wordnet
from nltk.translate.meteor_score import meteor_score
imported = time.perf_counter()
score = meteor_score([nltk.word_tokenize({GROUND_TRUTH!r})], nltk.word_tokenize({RESPONSE!r}),
                     wordnet=wordnet)
first = time.perf_counter()
print(json.dumps({{"import": imported - start, "first": first - imported, "score": score}}))
"""


def run(code: str) -> dict[str, float]:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"child process failed:\n{proc.stderr[-3000:]}")
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes (default 5)")
    parser.add_argument("--nltk-reader", action="store_true", help="also time NLTK's reader")
    args = parser.parse_args()

    print("pytest-textsim, fresh process each run (seconds):")
    print(f"{'run':>4}{'import':>9}{'1st call':>10}{'2nd call':>10}  meteor_score")
    firsts = []
    for i in range(1, args.runs + 1):
        r = run(OURS)
        firsts.append(r["first"])
        print(f"{i:>4}{r['import']:9.3f}{r['first']:10.3f}{r['second']:10.5f}  {r['score']!r}")
    print(f"first call: max {max(firsts):.3f} s, mean {sum(firsts) / len(firsts):.3f} s")
    if args.nltk_reader:
        print("\nNLTK meteor_score with nltk.corpus.wordnet, fresh process each run (seconds):")
        print(f"{'run':>4}{'import':>9}{'1st call':>10}  meteor_score")
        for i in range(1, args.runs + 1):
            r = run(NLTK_READER)
            print(f"{i:>4}{r['import']:9.3f}{r['first']:10.3f}  {r['score']!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
