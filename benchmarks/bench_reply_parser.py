"""Time the judge reply parser on large and pathological replies.

The parser must run in linear time: a 1 MB reply in under 100 ms, and
time(1 MB) / time(100 KB) at most 15. Prints one line per case.

    python benchmarks/bench_reply_parser.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import time
from typing import Callable

from pytest_textsim.judge.prompts import ReplyParseError, parse_reply

CASES: dict[str, Callable[[int], str]] = {
    "fence + spaces": lambda n: "```" + " " * n + "x",
    "fenced JSON + spaces": lambda n: "```json\n" + '{"score": 3}' + " " * n + "```",
    "nested braces": lambda n: "{" * (n // 2) + "}" * (n // 2),
    "open braces": lambda n: "{" * n,
    "filler then JSON": lambda n: "filler " * (n // 7) + '{"score": 4, "reason": "ok"}',
    "filler only": lambda n: "x" * n,
    "label + spaces": lambda n: "score:" + " " * n + "x",
    "bare digit + spaces": lambda n: "4" + " " * n + "x",
    "tag + spaces": lambda n: "<score>" + " " * n + "x",
    "many labels": lambda n: "score: x " * (n // 9),
    "many fences": lambda n: "```" * (n // 3),
}


def best_of(text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        try:
            parse_reply(text)
        except ReplyParseError:
            pass
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    worst_ms, worst_ratio = 0.0, 0.0
    print(f"{'case':24} {'100 KB ms':>10} {'1 MB ms':>10} {'ratio':>7}")
    for name, make in CASES.items():
        small = best_of(make(100_000), args.repeat)
        large = best_of(make(1_000_000), args.repeat)
        ratio = large / small if small > 0 else 0.0
        worst_ms, worst_ratio = max(worst_ms, large * 1000), max(worst_ratio, ratio)
        print(f"{name:24} {small * 1000:10.2f} {large * 1000:10.2f} {ratio:7.1f}")
    verdict = "ok" if worst_ms < 100 and worst_ratio <= 15 else "TOO SLOW"
    print(
        f"worst 1 MB: {worst_ms:.1f} ms (target < 100); worst ratio {worst_ratio:.1f} "
        f"(target <= 15): {verdict}"
    )


if __name__ == "__main__":
    main()
