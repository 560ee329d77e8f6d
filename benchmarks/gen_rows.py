"""Generate N ``(response, ground_truth)`` JSONL rows in which no text repeats.

Sentences of 8 to 30 words drawn from WordNet's lemmas (so METEOR's stem and
synonym stages do real work) and common function words. Words follow Zipf's
law over the lemmas in a fixed random order, as words of real text do (a few
words are frequent, most are rare); ``--uniform`` draws every lemma equally
often instead, the worst case for the per-word memos. The ground truth is
the response with words dropped, swapped and replaced, so scores spread over
0..1. Every text carries its row number as one more word, so no two texts are
equal and the memo caches (tokens, WordNet look-ups of whole texts) cannot
flatter the figures. Deterministic for a given ``--seed``::

    python benchmarks/gen_rows.py 200000 -o /tmp/rows200k.jsonl
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import sys
from pathlib import Path

FUNCTION_WORDS = (
    "the a an of to in and or but is was are were be been has have had it its this that "
    "these those with for on at by from as not no can will would should may might"
).split()


def vocabulary() -> list[str]:
    """Single-word WordNet lemmas from NLTK_DATA (about 80,000), or a small fallback."""
    words: list[str] = []
    for root in os.environ.get("NLTK_DATA", "").split(os.pathsep):
        folder = Path(root, "corpora", "wordnet")
        for pos in ("noun", "verb", "adj", "adv"):
            index = folder / f"index.{pos}"
            if not index.is_file():
                continue
            for line in index.read_text(encoding="utf-8").splitlines():
                if line.startswith(" "):
                    continue
                lemma = line.split(" ", 1)[0]
                if lemma.isalpha():
                    words.append(lemma)
        if words:
            return sorted(set(words))
    return [f"word{i}" for i in range(5000)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int)
    parser.add_argument("-o", "--output", default="-")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--uniform", action="store_true", help="every lemma equally often")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    words = vocabulary()
    rng.shuffle(words)
    if args.uniform:
        weights = None
    else:
        weights = list(itertools.accumulate(1.0 / rank for rank in range(1, len(words) + 1)))

    def word() -> str:
        if weights is None:
            return rng.choice(words)
        return rng.choices(words, cum_weights=weights)[0]

    out = sys.stdout if args.output == "-" else open(args.output, "w", encoding="utf-8")
    with out:
        for number in range(args.count):
            length = rng.randint(8, 30)
            response = [
                rng.choice(FUNCTION_WORDS) if rng.random() < 0.35 else word()
                for _ in range(length)
            ]
            truth = list(response)
            for _ in range(rng.randint(0, length // 2)):
                action = rng.random()
                where = rng.randrange(len(truth))
                if action < 0.3 and len(truth) > 3:
                    del truth[where]
                elif action < 0.6:
                    other = rng.randrange(len(truth))
                    truth[where], truth[other] = truth[other], truth[where]
                else:
                    truth[where] = word()
            tag = f"n{number}"
            row = {
                "id": number,
                "response": " ".join([*response, tag]).capitalize() + ".",
                "ground_truth": " ".join([tag, *truth]).capitalize() + ".",
            }
            out.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
