"""How often does a test's verdict flip from one CI run to the next? Single runs vs repeat=10.

A generated suite has 9 cases: the app under test answers case i correctly with
probability p_i in {0.05, 0.5, 0.95} (three cases each), drawing from a seeded
random generator, so APP_SEED=s replays run s exactly. The suite is run with
seeds 0..9 (each seed: a CI run on a new day), once with single runs and once per
repeat policy. A flip is a verdict that differs from the previous seed's; the
measured flip rate of a case is flips / 9, beside the binomial expectation
2q(1-q), where q is the probability that the case passes: p for a single run,
P(Binomial(10, p) >= ceil(10 * min_pass_rate)) with repeat=10.

    NLTK_DATA=../shared/nltk_data .venv/bin/python benchmarks/flip_rate.py
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SUITE = '''
import os
import random
import pytest

CASES = [(f"p{p:g}-{k}", p) for p in (0.05, 0.5, 0.95) for k in "abc"]
TRUTH = "the invoice total is 42 euros and it is due on friday"
RUNS = {}

def app(case, seed, run):
    """A stand-in LLM app: right with probability p, else a vague answer."""
    rng = random.Random(f"{seed}/{case}/{run}")
    p = dict(CASES)[case]
    return TRUTH if rng.random() < p else "I am not sure what the total is"

@pytest.mark.parametrize("case", [c for c, _ in CASES])
def test_case(bleu, case):
    run = RUNS[case] = RUNS.get(case, -1) + 1
    answer = app(case, int(os.environ["APP_SEED"]), run)
    out = bleu(answer, TRUTH, threshold=0.5)
    assert out["bleu_result"] == "pass", f"BLEU {out['bleu_score']:.2f} < 0.5"
'''

POLICIES = [
    ("single run", []),
    ("repeat=10, min_pass_rate=0.5", ["--textsim-repeat", "10", "-o", "textsim_min_pass_rate=0.5"]),
    ("repeat=10, min_pass_rate=1 (pass^10)", ["--textsim-repeat", "10"]),
]


def pass_probability(p: float, runs: int, rate: float) -> float:
    """P(at least ceil(runs * rate) of ``runs`` independent runs pass)."""
    need = math.ceil(runs * rate - 1e-9)
    return sum(math.comb(runs, k) * p**k * (1 - p) ** (runs - k) for k in range(need, runs + 1))


def verdicts(folder: Path, seed: int, extra: list[str]) -> dict[str, str]:
    report = folder / f"report-{seed}.json"
    env = {**os.environ, "APP_SEED": str(seed)}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
               f"--textsim-json={report}", "--textsim-report=none", *extra]  # fmt: skip
    subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, check=False)
    data = json.loads(report.read_text())
    out: dict[str, str] = {}
    for score in data["scores"]:
        out[score["test_id"].split("[")[1].rstrip("]")] = score["test_outcome"]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10, help="CI runs (default 10: seeds 0..9)")
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "test_app.py").write_text(SUITE)
        (folder / "pytest.ini").write_text("[pytest]\n")
        cases = [f"p{p:g}-{k}" for p in (0.05, 0.5, 0.95) for k in "abc"]
        for name, extra in POLICIES:
            rate = 0.5 if "0.5" in name else 1.0
            history = [verdicts(folder, seed, extra) for seed in range(args.seeds)]
            print(f"\n{name}: verdict flips between consecutive seeds (0..{args.seeds - 1})")
            print(f"{'case':<9}{'p':>6}  {'verdicts (seed 0..)':<{args.seeds + 2}}"
                  f"{'flips':>6}{'measured':>10}{'expected':>10}")  # fmt: skip
            for case in cases:
                p = float(case[1:].split("-")[0])
                line = "".join("P" if h[case] == "passed" else "F" for h in history)
                flips = sum(a != b for a, b in zip(line, line[1:]))
                q = p if name == "single run" else pass_probability(p, 10, rate)
                expected = 2 * q * (1 - q)
                measured = flips / (args.seeds - 1)
                print(f"{case:<9}{p:>6g}  {line:<{args.seeds + 2}}{flips:>6}"
                      f"{measured:>10.2f}{expected:>10.2f}")  # fmt: skip
    print(f"\n{len(POLICIES) * args.seeds} pytest runs in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
