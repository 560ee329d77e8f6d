"""How often does a variant comparison say worse or better when the variants are alike?

Each simulated run scores two variants of one app on N cases: a case has a true
quality q ~ Uniform(0.3, 0.9) and each variant's score is q plus its own noise
(normal, sd 0.1, clipped to 0..1), so the variants differ by noise alone. The run
is compared with :func:`pytest_textsim.gating.variants.compare_variants`, exactly
as the plugin compares it; a wrong verdict is any ``worse`` or ``better``. With
three metrics the run is wrong when any metric's verdict is (Holm's correction
holds that familywise rate at alpha). Fixed seed: the table is the same on every
machine.

    .venv/bin/python benchmarks/variants_flip_rate.py [--runs 1000]
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from pytest_textsim.gating.variants import ALPHA, NO_DIFFERENCE, compare_variants
from pytest_textsim.records import ScoreRecord

SEED = 20240623
CONFIGURATIONS = [(10, 1), (20, 1), (40, 1), (100, 1), (40, 3)]  # (cases, metrics)
METRICS = ("f1_score", "bleu_score", "meteor_score")


def _run(rng: np.random.Generator, cases: int, metrics: int) -> bool:
    """One simulated run; True when some verdict claims a difference."""
    records = []
    for metric in METRICS[:metrics]:
        truth = rng.uniform(0.3, 0.9, size=cases)
        for variant in ("a", "b"):
            scores = np.clip(truth + rng.normal(0.0, 0.1, size=cases), 0.0, 1.0)
            records += [
                ScoreRecord(metric.removesuffix("_score"), metric, float(s), None, None,
                            variants={"model": variant}, cases={"model": f"case{i}"})
                for i, s in enumerate(scores)
            ]  # fmt: skip
    found = compare_variants(records, "model")
    return any(d.verdict != NO_DIFFERENCE for d in found.differences)


def _upper(wrong: int, runs: int) -> float:
    """The one-sided 95% upper bound of the rate (Wilson)."""
    p, z = wrong / runs, 1.6448536269514722
    centre = (p + z * z / (2 * runs)) / (1 + z * z / runs)
    half = z / (1 + z * z / runs) * math.sqrt(p * (1 - p) / runs + z * z / (4 * runs * runs))
    return centre + half


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    runs = parser.parse_args().runs
    rng = np.random.default_rng(SEED)
    print("| cases | metrics | runs | wrong verdicts | rate | 95% upper bound | alpha |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for cases, metrics in CONFIGURATIONS:
        wrong = sum(_run(rng, cases, metrics) for _ in range(runs))
        print(
            f"| {cases} | {metrics} | {runs} | {wrong} | {wrong / runs:.1%} | "
            f"{_upper(wrong, runs):.1%} | {ALPHA:g} |"
        )


if __name__ == "__main__":
    main()
