"""Throughput of the algorithmic evaluators against azure-ai-evaluation, same rows, same scores.

Scores every row of a corpus (default: ../shared/parity/corpus.jsonl) with all
ten scores -- F1, BLEU, GLEU, METEOR, ROUGE 1-5 and L -- through this package
(:func:`pytest_textsim.score_rows`) and through azure-ai-evaluation's
evaluators, checks that every score is identical, and prints both times and
the ratio. One "evaluation" is one evaluator call on one row (ten per row).

Each side runs in its own fresh process and is timed three ways: "import" is
importing the package and building the evaluators (azure-ai-evaluation imports
nltk here), "cold" the first pass over the rows (lazy imports, tokenizer and
WordNet loading included), "warm" a second pass (our memo caches cleared first,
so it is not a cache replay). The headline ratio is import + cold: what a user
waits for when a fresh process scores the corpus.

azure-ai-evaluation imports nltk (~0.25 s) in its import column; this package
never imports it when scoring (Punkt, the Porter stemmer and the tokenizer
patterns are ported from nltk 3.10.4). The script also runs this package with
``import nltk`` done before the clock ("nltk preloaded"), as a control: its cold
pass should match the plain one, and "nltk preloaded on both sides" compares the
scoring work alone, like for like.

azure-ai-evaluation usually lives in another environment; point at its
interpreter (it needs NLTK data with the zip files it checks for, see
../shared/README.md)::

    NLTK_DATA=../shared/nltk_data .venv/bin/python benchmarks/bench_nlp.py \\
        --azure-python /tmp/ref/venv/bin/python --azure-nltk-data /tmp/ref/nltk_data

Without ``--azure-python`` it uses this interpreter for azure-ai-evaluation if
that is importable, else reports this package's figures only. ``--repeat N``
runs each side N times (alternating, fresh processes) and keeps each timing's
best, which steadies the figures on a busy machine. Then METEOR of two texts of
32,000 distinct words a side (``--disjoint N``; 0 skips it) is timed here and in
nltk, in this process one after the other, as nltk's own
``test_meteor_on_disjoint_text_is_linear_time`` does. Exit status 1 if any score
differs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT.parent / "shared" / "parity" / "corpus.jsonl"
ROUGE_TYPES = ("rouge1", "rouge2", "rouge3", "rouge4", "rouge5", "rougeL")
SINGLE: tuple[tuple[str, str], ...] = (
    ("f1", "f1_score"),
    ("bleu", "bleu_score"),
    ("gleu", "gleu_score"),
    ("meteor", "meteor_score"),
)
EVALUATIONS_PER_ROW = len(SINGLE) + len(ROUGE_TYPES)

Scores = list[dict[str, Any]]


def load(corpus: Path) -> list[dict[str, Any]]:
    with corpus.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def run_ours(rows: list[dict[str, Any]], preload_nltk: bool = False) -> dict[str, Any]:
    """Import, then both passes through pytest_textsim.score_rows, in this process.

    ``preload_nltk`` imports nltk in the import phase, as azure-ai-evaluation does.
    """
    sys.path.insert(0, str(ROOT))
    start = time.perf_counter()
    if preload_nltk:
        import nltk  # noqa: F401
    from pytest_textsim import (
        BleuScoreEvaluator,
        F1ScoreEvaluator,
        GleuScoreEvaluator,
        MeteorScoreEvaluator,
        RougeScoreEvaluator,
        score_rows,
    )
    from pytest_textsim.nlp import porter as _porter
    from pytest_textsim.nlp.tokenize import nltk_tokens
    from pytest_textsim.nlp.wordnet import default_wordnet

    evaluators: dict[str, Any] = {
        "f1": F1ScoreEvaluator(),
        "bleu": BleuScoreEvaluator(),
        "gleu": GleuScoreEvaluator(),
        "meteor": MeteorScoreEvaluator(),
        **{t: RougeScoreEvaluator(t) for t in ROUGE_TYPES},
    }
    imported = time.perf_counter() - start
    times = []
    outputs: list[dict[str, Any]] = []
    for _ in range(2):
        start = time.perf_counter()
        outputs = score_rows(rows, evaluators)
        times.append(time.perf_counter() - start)
        # Forget memoized tokens, stems and synonyms before the warm pass.
        nltk_tokens.cache_clear()
        default_wordnet().cache_clear()
        _porter._stem.cache_clear()
    scores = []
    for out in outputs:
        row: dict[str, Any] = {name: out[f"{name}.{key}"] for name, key in SINGLE}
        for t in ROUGE_TYPES:
            row[t] = [out[f"{t}.rouge_{k}"] for k in ("precision", "recall", "f1_score")]
        scores.append(row)
    return {"import": imported, "cold": times[0], "warm": times[1], "scores": scores}


def run_azure(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Import, then both passes through azure-ai-evaluation's evaluators, in this process."""
    import warnings

    warnings.filterwarnings("ignore")
    start = time.perf_counter()
    from azure.ai.evaluation import (
        BleuScoreEvaluator,
        F1ScoreEvaluator,
        GleuScoreEvaluator,
        MeteorScoreEvaluator,
        RougeScoreEvaluator,
    )

    single = {
        "f1": F1ScoreEvaluator(),
        "bleu": BleuScoreEvaluator(),
        "gleu": GleuScoreEvaluator(),
        "meteor": MeteorScoreEvaluator(),
    }
    rouge = {t: RougeScoreEvaluator(t) for t in ROUGE_TYPES}
    imported = time.perf_counter() - start
    keys = dict(SINGLE)
    times = []
    scores: Scores = []
    for _ in range(2):
        scores = []
        start = time.perf_counter()
        for row in rows:
            kwargs = {"response": row["response"], "ground_truth": row["ground_truth"]}
            got: dict[str, Any] = {n: ev(**kwargs)[keys[n]] for n, ev in single.items()}
            for t, ev in rouge.items():
                out = ev(**kwargs)
                # 1.18 nests the three ROUGE scores under rouge_properties.
                out = out.get("rouge_properties") or out
                got[t] = [out["rouge_precision"], out["rouge_recall"], out["rouge_f1_score"]]
            scores.append(got)
        times.append(time.perf_counter() - start)
    return {"import": imported, "cold": times[0], "warm": times[1], "scores": scores}


def in_subprocess(side: str, python: str, corpus: Path, nltk_data: str | None) -> dict[str, Any]:
    """Run one side in a fresh ``python`` process; its JSON result."""
    env = dict(os.environ)
    if nltk_data:
        env["NLTK_DATA"] = nltk_data
    proc = subprocess.run(
        [python, __file__, "--worker", side, "--corpus", str(corpus)],
        capture_output=True,
        text=True,
        env=env,
    )
    if proc.returncode != 0:
        sys.exit(f"the {side} run with {python} failed:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def best_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each timing's minimum over the runs (the least disturbed by other load)."""
    best = dict(runs[0])
    for key in ("import", "cold", "warm"):
        best[key] = min(run[key] for run in runs)
    return best


def compare(ours: Scores, theirs: Scores) -> list[str]:
    diffs = []
    for i, (a, b) in enumerate(zip(ours, theirs)):
        for name, value in b.items():
            if a[name] != value:
                diffs.append(f"row {i} {name}: ours {a[name]!r}, azure {value!r}")
    if len(ours) != len(theirs):
        diffs.append(f"row count: ours {len(ours)}, azure {len(theirs)}")
    return diffs


def disjoint_meteor(tokens: int) -> bool:
    """METEOR of two texts of ``tokens`` distinct words a side, no word shared (nltk's
    ``test_meteor_on_disjoint_text_is_linear_time``): this package and nltk, same run.

    Prints both times and the ratio; returns whether the scores are equal.
    """
    from nltk.translate.meteor_score import meteor_score

    from pytest_textsim.nlp import algorithms
    from pytest_textsim.nlp.evaluators import porter_stem
    from pytest_textsim.nlp.wordnet import default_wordnet

    hypothesis = [f"hyp{i}word" for i in range(tokens)]
    reference = [f"ref{i}word" for i in range(tokens)]
    synonyms = default_wordnet().synonyms
    started = time.perf_counter()
    ours = algorithms.meteor(hypothesis, reference, stem=porter_stem, synonyms=synonyms)
    ours_s = time.perf_counter() - started
    started = time.perf_counter()
    theirs = meteor_score([reference], hypothesis)
    nltk_s = time.perf_counter() - started
    print(
        f"METEOR on {tokens:,} disjoint tokens a side: pytest-textsim {ours_s:.2f} s, "
        f"nltk {nltk_s:.2f} s ({ours_s / nltk_s:.2f}x nltk's time); scores "
        + ("equal" if ours == theirs else f"differ: {ours!r} vs {theirs!r}")
    )
    return bool(ours == theirs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="JSONL rows")
    parser.add_argument("--azure-python", help="interpreter with azure-ai-evaluation installed")
    parser.add_argument("--azure-nltk-data", help="NLTK_DATA for the azure-ai-evaluation run")
    parser.add_argument(
        "--repeat", type=int, default=1, help="fresh processes per side; report the best"
    )
    parser.add_argument(
        "--disjoint", type=int, default=32_000, metavar="N",
        help="also time METEOR on N disjoint tokens a side against nltk (0: skip)",
    )
    parser.add_argument(
        "--worker", choices=("ours", "ours-preloaded", "azure"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.worker:
        rows = load(args.corpus)
        if args.worker == "azure":
            result = run_azure(rows)
        else:
            result = run_ours(rows, preload_nltk=args.worker == "ours-preloaded")
        print(json.dumps(result))
        return 0

    rows = load(args.corpus)
    evaluations = len(rows) * EVALUATIONS_PER_ROW
    azure_python = args.azure_python
    if azure_python is None:
        try:
            import azure.ai.evaluation  # noqa: F401
        except ImportError:
            print("azure-ai-evaluation is not importable here; pass --azure-python PATH")
        else:
            azure_python = sys.executable
    ours_runs: list[dict[str, Any]] = []
    preloaded_runs: list[dict[str, Any]] = []
    azure_runs: list[dict[str, Any]] = []
    for _ in range(args.repeat):
        # Alternate the sides so a burst of load on the machine hits both.
        ours_runs.append(in_subprocess("ours", sys.executable, args.corpus, None))
        preloaded_runs.append(in_subprocess("ours-preloaded", sys.executable, args.corpus, None))
        if azure_python:
            azure_runs.append(
                in_subprocess("azure", azure_python, args.corpus, args.azure_nltk_data)
            )
    ours = best_of(ours_runs)
    preloaded = best_of(preloaded_runs)
    azure = best_of(azure_runs) if azure_runs else None

    print(f"{len(rows)} rows x {EVALUATIONS_PER_ROW} scores = {evaluations} evaluations", end="")
    print(f", best of {args.repeat} fresh processes per side" if args.repeat > 1 else "")
    print(
        f"{'seconds':22}{'import':>8}{'cold':>8}{'warm':>8}"
        f"{'import+cold eval/s':>20}{'warm eval/s':>13}"
    )
    sides = [("pytest-textsim", ours), ("  nltk preloaded", preloaded)]
    sides += [("azure-ai-evaluation", azure)] if azure else []
    for name, side in sides:
        first = side["import"] + side["cold"]
        print(
            f"{name:22}{side['import']:8.3f}{side['cold']:8.3f}{side['warm']:8.3f}"
            f"{evaluations / first:20.0f}{evaluations / side['warm']:13.0f}"
        )
    disjoint_equal = disjoint_meteor(args.disjoint) if args.disjoint else True
    if azure is None:
        return 0 if disjoint_equal else 1
    first_ratio = (azure["import"] + azure["cold"]) / (ours["import"] + ours["cold"])
    print(
        f"speed-up: {first_ratio:.1f}x import+cold, {azure['cold'] / ours['cold']:.1f}x cold, "
        f"{azure['warm'] / ours['warm']:.1f}x warm; "
        f"nltk preloaded on both sides: {azure['cold'] / preloaded['cold']:.1f}x cold"
    )
    diffs = compare(ours["scores"], azure["scores"])
    diffs += [f"nltk preloaded: {d}" for d in compare(preloaded["scores"], ours["scores"])]
    if diffs:
        print(f"{len(diffs)} scores differ:\n" + "\n".join(diffs[:20]))
        return 1
    print(f"all {evaluations} scores identical (exact float equality)")
    return 0 if disjoint_equal else 1


if __name__ == "__main__":
    sys.exit(main())
