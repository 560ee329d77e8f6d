"""Every score on the shared parity corpus equals azure-ai-evaluation's, within 1e-12."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_textsim import (
    BleuScoreEvaluator,
    F1ScoreEvaluator,
    GleuScoreEvaluator,
    MeteorScoreEvaluator,
    RougeScoreEvaluator,
)

PARITY_DIR = Path(
    os.environ.get("TEXTSIM_PARITY_DIR", Path(__file__).resolve().parents[2] / "shared" / "parity")
)
ROUGE_TYPES = ["rouge1", "rouge2", "rouge3", "rouge4", "rouge5", "rougeL"]


def _load() -> list[tuple[dict, dict]]:
    corpus = PARITY_DIR / "corpus.jsonl"
    expected_file = PARITY_DIR / "expected.jsonl"
    if not corpus.exists():
        pytest.fail(f"parity corpus not found at {corpus}; set TEXTSIM_PARITY_DIR")
    expected = {}
    with expected_file.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            expected[row["id"]] = row
    with corpus.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return [(row, expected[row["id"]]) for row in rows]


def test_parity_corpus_matches_azure_ai_evaluation() -> None:
    pairs = _load()
    assert len(pairs) >= 500
    single = {
        "f1": (F1ScoreEvaluator(), "f1_score"),
        "bleu": (BleuScoreEvaluator(), "bleu_score"),
        "gleu": (GleuScoreEvaluator(), "gleu_score"),
        "meteor": (MeteorScoreEvaluator(), "meteor_score"),
    }
    rouge = {t: RougeScoreEvaluator(t) for t in ROUGE_TYPES}
    mismatches = []
    for row, want in pairs:
        kwargs = {"response": row["response"], "ground_truth": row["ground_truth"]}
        for name, (evaluator, key) in single.items():
            got = evaluator(**kwargs)[key]
            if abs(got - want[name]) > 1e-12:
                mismatches.append(f"{row['id']} {name}: got {got!r}, azure {want[name]!r}")
        for name, evaluator in rouge.items():
            out = evaluator(**kwargs)
            got3 = [out["rouge_precision"], out["rouge_recall"], out["rouge_f1_score"]]
            if any(abs(g - w) > 1e-12 for g, w in zip(got3, want[name])):
                mismatches.append(f"{row['id']} {name}: got {got3!r}, azure {want[name]!r}")
    assert not mismatches, f"{len(mismatches)} mismatches:\n" + "\n".join(mismatches[:20])
