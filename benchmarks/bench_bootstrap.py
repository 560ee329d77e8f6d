"""Bootstrap speed: 10,000 percentile resamples of the mean of 10,000 scores (goal < 2 s).

Also times the paired bootstrap of a mean difference (the same work on differences),
the kappa bootstrap over 200 labelled rows, and sacreBLEU-style corpus BLEU resampling
(1,000 resamples over 1,000 sentences). Each figure is the best of ``--repeat`` runs,
with numpy's import excluded (it is paid once per process, timed separately).

    .venv/bin/python benchmarks/bench_bootstrap.py
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def best_of(repeat: int, fn: object) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scores", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    start = time.perf_counter()
    import numpy as np

    print(f"numpy import: {time.perf_counter() - start:.3f} s")
    from pytest_textsim import stats
    from pytest_textsim.nlp.sacre import corpus_interval, sentence_statistics

    rng = np.random.default_rng(0)
    scores = list(rng.beta(2, 5, size=args.scores))
    other = [min(1.0, s + d) for s, d in zip(scores, rng.normal(0, 0.05, args.scores))]

    mean_s = best_of(
        args.repeat, lambda: stats.bootstrap_mean(scores, resamples=args.resamples)
    )
    print(
        f"bootstrap_mean: {args.resamples:,} resamples x {args.scores:,} scores: "
        f"{mean_s:.3f} s (goal < 2 s) -> {'OK' if mean_s < 2 else 'SLOW'}"
    )
    paired_s = best_of(
        args.repeat, lambda: stats.paired_bootstrap(scores, other, resamples=args.resamples)
    )
    print(f"paired_bootstrap: {args.resamples:,} resamples x {args.scores:,} pairs: "
          f"{paired_s:.3f} s")

    human = list(rng.integers(1, 6, size=200))
    judge = [int(min(5, max(1, h + d))) for h, d in zip(human, rng.integers(-1, 2, 200))]
    kappa_s = best_of(
        args.repeat, lambda: stats.bootstrap_kappa(human, judge, [1, 2, 3, 4, 5])
    )
    print(f"bootstrap_kappa: 10,000 resamples x 200 rows: {kappa_s:.3f} s")

    words = "the a cat dog sat ran on under mat table quickly slowly".split()
    hyps = [" ".join(rng.choice(words, size=12)) for _ in range(1000)]
    refs = [" ".join(rng.choice(words, size=12)) for _ in range(1000)]
    table = sentence_statistics("corpus_bleu", hyps, refs)
    corpus_s = best_of(args.repeat, lambda: corpus_interval("corpus_bleu", table))
    print(f"corpus BLEU interval: 1,000 resamples x 1,000 sentences: {corpus_s:.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
