"""Time and memory of the ROUGE-L explanation against the ROUGE-L score.

The explanation (``explain("rougeL", ...)``; its summary lines are shown when
an assertion fails) aligns the texts' longest common subsequence in memory
linear in the texts: for a 100,000-word pair its working memory must stay under
100 MB and its time within 5 times the score's. Prints the CPU time of each
(best of ``--repeat``, without tracing: the figures hold on a shared machine)
and the peak memory each allocates (tracemalloc, a separate run): the peak
over the score's own, and the working memory, the peak less the explanation
returned (a list and a dict per token, which a report keeps).

    python benchmarks/bench_explain_rouge.py [--words 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import time
import tracemalloc
from typing import Any, Callable

from pytest_textsim import RougeScoreEvaluator, explain
from pytest_textsim.nlp import lcs as lcs_module
from pytest_textsim.nlp.explain import failure_lines
from pytest_textsim.nlp.tokenize import rouge_tokens


def texts(words: int, seed: int = 7) -> tuple[str, str]:
    """A reference of ``words`` words (Zipf-like over 20,000 distinct words) and a
    response that keeps about 85% of it, with words changed, dropped and added."""
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(20_000)]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    reference = rng.choices(vocabulary, weights, k=words)
    response: list[str] = []
    for word in reference:
        roll = rng.random()
        if roll < 0.05:
            continue  # dropped
        if roll < 0.10:
            response.append(rng.choice(vocabulary))  # changed
            continue
        response.append(word)
        if roll > 0.95:
            response.append(rng.choice(vocabulary))  # added
    return " ".join(response), " ".join(reference)


def rouge_pair(response: str, reference: str) -> tuple[list[str], list[str]]:
    """The ROUGE tokens the explanation aligns: (reference, response)."""
    return rouge_tokens(reference), rouge_tokens(response)


def best_time(run: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        run()
        best = min(best, time.process_time() - started)
    return best


def traced_mb(run: Callable[[], Any]) -> tuple[float, float]:
    """The peak memory ``run`` allocated and what its result holds, in MB."""
    tracemalloc.start()
    try:
        result = run()
        held, peak = tracemalloc.get_traced_memory()
        del result
        return peak / 1e6, held / 1e6
    finally:
        tracemalloc.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    response, reference = texts(args.words)
    evaluator = RougeScoreEvaluator(rouge_type="rougeL")

    def score() -> Any:
        return evaluator(response=response, ground_truth=reference)

    def explanation() -> Any:
        return explain("rougeL", response=response, ground_truth=reference)

    def message() -> Any:  # the lines under a failing assert_rouge
        texts = {"response": response, "ground_truth": reference}
        return failure_lines("rouge", texts, {"rouge_type": "rougeL"})

    score()  # tokenizer tables and imports, outside the figures
    result = explanation()
    lcs = lcs_module.lcs_length(*rouge_pair(response, reference))
    assert result["lcs_length"] == lcs, (result["lcs_length"], lcs)
    score_s, explain_s = best_time(score, args.repeat), best_time(explanation, args.repeat)
    message_s = best_time(message, args.repeat)
    (score_mb, _), (explain_mb, result_mb) = traced_mb(score), traced_mb(explanation)
    message_mb, _ = traced_mb(message)
    align_mb, _ = traced_mb(lambda: lcs_module.lcs_alignment(*rouge_pair(response, reference)))
    print(f"{args.words:,} words a side, LCS {lcs:,} words")
    print(f"{'':12} {'CPU s':>8} {'peak MB':>9}")
    print(f"{'score':12} {score_s:8.2f} {score_mb:9.1f}")
    print(f"{'explanation':12} {explain_s:8.2f} {explain_mb:9.1f}")
    print(f"{'its lines':12} {message_s:8.2f} {message_mb:9.1f}  (a failing helper's message)")
    print(f"of the explanation's peak: {result_mb:.1f} MB is the explanation returned (a list "
          f"and a dict per token), {align_mb:.1f} MB the LCS alignment's own peak")  # fmt: skip
    ratio = explain_s / score_s
    working_mb = explain_mb - result_mb
    print(f"explanation / score time: {ratio:.1f} (target <= 5)")
    print(f"peak extra over the score's: explanation {explain_mb - score_mb:+.1f} MB, "
          f"its lines {message_mb - score_mb:+.1f} MB")  # fmt: skip
    print(f"working memory (peak less what is returned): explanation {working_mb:.1f} MB, "
          f"its lines {message_mb:.1f} MB (target < 100)")  # fmt: skip
    verdict = "ok" if max(working_mb, message_mb) < 100 and ratio <= 5 else "OVER"
    print(f"verdict: {verdict}")


if __name__ == "__main__":
    main()
