"""Every score equals azure-ai-evaluation's, within 1e-12, on two tables of pairs.

- ``../shared/parity``: the shared development corpus and its expected scores.
- ``tests/data/parity_extra.jsonl``: 294 hard cases kept with the tests -- WordNet
  glosses and examples with synonym swaps and inflections, multi-sentence prose
  with abbreviations, quotes, brackets, contractions, newlines and tabs, random
  punctuation soup, non-ASCII scripts (accents, CJK, Cyrillic, Arabic, emoji,
  ligatures, the Kelvin sign, XML entities, ``<skipped>``, U+2028), empty and
  whitespace-only text, and hand-written cases. The expected values were
  produced by azure-ai-evaluation 1.18.10 (nltk 3.10.4, rouge-score 0.1.2) with
  its default evaluators: ``F1ScoreEvaluator()``, ``BleuScoreEvaluator()``,
  ``GleuScoreEvaluator()``, ``MeteorScoreEvaluator()`` and
  ``RougeScoreEvaluator(t)`` for t in rouge1..rouge5, rougeL, each called with
  ``response=`` and ``ground_truth=``; ROUGE values are ``[precision, recall, f1]``.

Both the single-call path (``evaluator(response=..., ground_truth=...)``) and the
batch path (:func:`pytest_textsim.score_rows`) are checked.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_textsim import (
    BleuScoreEvaluator,
    F1ScoreEvaluator,
    GleuScoreEvaluator,
    MeteorScoreEvaluator,
    RougeScoreEvaluator,
    score_rows,
)

PARITY_DIR = Path(
    os.environ.get("TEXTSIM_PARITY_DIR", Path(__file__).resolve().parents[3] / "shared" / "parity")
)
EXTRA = Path(__file__).resolve().parents[1] / "data" / "parity_extra.jsonl"
ROUGE_TYPES = ["rouge1", "rouge2", "rouge3", "rouge4", "rouge5", "rougeL"]
SINGLE = {"f1": "f1_score", "bleu": "bleu_score", "gleu": "gleu_score", "meteor": "meteor_score"}

Pair = tuple[dict[str, Any], dict[str, Any]]

# The expected scores come from nltk 3.10.4's tokenizers and stemmer. This package
# scores with its own port of them (pytest_textsim.nlp.punkt, ._porter, .tokenize), not
# with the installed nltk, so the same values are checked on any nltk (3.9.x on
# Python 3.9 tokenizes some text differently, azure-ai-evaluation with it too).


def _read(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _shared_pairs() -> list[Pair]:
    corpus = PARITY_DIR / "corpus.jsonl"
    if not corpus.exists():
        pytest.fail(f"parity corpus not found at {corpus}; set TEXTSIM_PARITY_DIR")
    expected = {row["id"]: row for row in _read(PARITY_DIR / "expected.jsonl")}
    return [(row, expected[row["id"]]) for row in _read(corpus)]


def _extra_pairs() -> list[Pair]:
    # The table holds the inputs and azure-ai-evaluation's scores in one row.
    return [(row, row) for row in _read(EXTRA)]


def _evaluators() -> dict[str, Any]:
    return {
        "f1": F1ScoreEvaluator(),
        "bleu": BleuScoreEvaluator(),
        "gleu": GleuScoreEvaluator(),
        "meteor": MeteorScoreEvaluator(),
        **{t: RougeScoreEvaluator(t) for t in ROUGE_TYPES},
    }


def _mismatches(row_id: str, got: dict[str, Any], want: dict[str, Any]) -> list[str]:
    """``got`` maps each score name to a float (F1..METEOR) or [p, r, f1] (ROUGE)."""
    out = []
    for name in [*SINGLE, *ROUGE_TYPES]:
        g = got[name] if isinstance(got[name], list) else [got[name]]
        w = want[name] if isinstance(want[name], list) else [want[name]]
        if len(g) != len(w) or any(abs(a - b) > 1e-12 for a, b in zip(g, w)):
            out.append(f"{row_id} {name}: got {got[name]!r}, azure {want[name]!r}")
    return out


def _check_single_calls(pairs: list[Pair]) -> None:
    evaluators = _evaluators()
    mismatches = []
    for row, want in pairs:
        kwargs = {"response": row["response"], "ground_truth": row["ground_truth"]}
        got: dict[str, Any] = {}
        for name, evaluator in evaluators.items():
            out = evaluator(**kwargs)
            if name in SINGLE:
                got[name] = out[SINGLE[name]]
            else:
                got[name] = [out["rouge_precision"], out["rouge_recall"], out["rouge_f1_score"]]
        mismatches += _mismatches(row["id"], got, want)
    assert not mismatches, f"{len(mismatches)} mismatches:\n" + "\n".join(mismatches[:20])


def _check_batch(pairs: list[Pair]) -> None:
    outputs = score_rows([row for row, _ in pairs], _evaluators())
    mismatches = []
    for (row, want), out in zip(pairs, outputs):
        got: dict[str, Any] = {name: out[f"{name}.{key}"] for name, key in SINGLE.items()}
        for t in ROUGE_TYPES:
            got[t] = [out[f"{t}.rouge_{k}"] for k in ("precision", "recall", "f1_score")]
        mismatches += _mismatches(row["id"], got, want)
    assert not mismatches, f"{len(mismatches)} mismatches:\n" + "\n".join(mismatches[:20])


def test_parity_corpus_matches_azure_ai_evaluation() -> None:
    pairs = _shared_pairs()
    assert len(pairs) >= 500
    _check_single_calls(pairs)


def test_parity_corpus_matches_through_score_rows() -> None:
    _check_batch(_shared_pairs())


def test_extra_hard_cases_match_azure_ai_evaluation() -> None:
    pairs = _extra_pairs()
    assert len(pairs) >= 250
    kinds = {row["kind"] for row, _ in pairs}
    assert {"unicode", "empty-ws", "prose-perturb", "soup", "hand"} <= kinds
    _check_single_calls(pairs)


def test_extra_hard_cases_match_through_score_rows() -> None:
    _check_batch(_extra_pairs())
