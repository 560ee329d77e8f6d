"""``explain()``: every score recomputed from its explanation, to the last digit.

The recomputation below uses only what the explanation dict holds (the lists
of matched n-grams, the LCS pairs, METEOR's alignment, the common tokens) and
the reference libraries' formulas, and must equal azure-ai-evaluation's score
on the shared parity corpus exactly. The spans must point at the tokens in the
original texts.
"""

from __future__ import annotations

import json
import math
import os
import random
import string
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_textsim.nlp import lcs
from pytest_textsim.nlp.explain import _explained, explain, failure_lines
from pytest_textsim.nlp.explain_summary import summary_lines
from pytest_textsim.nlp.lcs import lcs_pairs

PARITY_DIR = Path(
    os.environ.get("TEXTSIM_PARITY_DIR", Path(__file__).resolve().parents[4] / "shared" / "parity")
)
ROUGE_TYPES = ["rouge1", "rouge2", "rouge3", "rouge4", "rouge5", "rougeL"]


def _pairs() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    corpus = PARITY_DIR / "corpus.jsonl"
    if not corpus.exists():
        pytest.fail(f"parity corpus not found at {corpus}; set TEXTSIM_PARITY_DIR")
    rows = [json.loads(line) for line in corpus.open(encoding="utf-8") if line.strip()]
    expected = {
        row["id"]: row
        for row in map(json.loads, (PARITY_DIR / "expected.jsonl").open(encoding="utf-8"))
    }
    return [(row, expected[row["id"]]) for row in rows]


PAIRS = _pairs()


def _bleu(e: dict[str, Any]) -> float:
    hyp_len, ref_len = e["response_length"], e["reference_length"]
    assert len(e["tokens"]["response"]) == hyp_len
    fractions = []
    for order in e["orders"]:
        numerator = sum(m["count"] for m in order["matched"])
        assert numerator + sum(u["count"] for u in order["unmatched"]) == max(
            0, hyp_len - order["n"] + 1
        )
        fractions.append((numerator, max(1, hyp_len - order["n"] + 1)))
    if fractions[0][0] == 0:
        return 0.0
    bp = 1 if hyp_len > ref_len else math.exp(1 - ref_len / hyp_len)
    precisions, k = [], 1
    for numerator, denominator in fractions:
        if numerator == 0 and hyp_len > 1:
            precisions.append(1 / (2**k * 5 / math.log(hyp_len)) / denominator)
            k += 1
        else:
            precisions.append(numerator / denominator)
    return bp * math.exp(math.fsum(0.25 * math.log(p) for p in precisions if p > 0))


def _gleu(e: dict[str, Any]) -> float:
    tp = sum(m["count"] for o in e["orders"] for m in o["matched"])
    hyp_len, ref_len = e["response_length"], e["reference_length"]
    tpfp = sum(max(0, hyp_len - n + 1) for n in range(1, 5))
    tpfn = sum(max(0, ref_len - n + 1) for n in range(1, 5))
    return tp / max(tpfp, tpfn) if max(tpfp, tpfn) > 0 else 0.0


def _fmeasure(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def _rouge(e: dict[str, Any]) -> tuple[float, float, float]:
    response = [t[0] for t in e["tokens"]["response"]]
    reference = [t[0] for t in e["tokens"]["ground_truth"]]
    if e["metric"] == "rougeL":
        pairs = [(m["response"], m["ground_truth"]) for m in e["lcs"]]
        # A common subsequence: strictly increasing on both sides, equal tokens.
        for (p0, t0), (p1, t1) in zip(pairs, pairs[1:]):
            assert p1 > p0 and t1 > t0
        assert all(response[p] == reference[t] for p, t in pairs)
        if not response or not reference:
            return 0.0, 0.0, 0.0
        p, r = len(pairs) / len(response), len(pairs) / len(reference)
        return p, r, _fmeasure(p, r)
    n = e["n"]
    common = sum(m["count"] for m in e["matched"])
    assert common + sum(m["count"] for m in e["missing_ngrams"]) == max(0, len(reference) - n + 1)
    assert common + sum(m["count"] for m in e["extra_ngrams"]) == max(0, len(response) - n + 1)
    p = common / max(len(response) - n + 1, 1)
    r = common / max(len(reference) - n + 1, 1)
    return p, r, _fmeasure(p, r)


def _meteor(e: dict[str, Any]) -> float:
    alpha, beta, gamma = (e["params"][k] for k in ("alpha", "beta", "gamma"))
    alignment = e["alignment"]
    response = [t[0].lower() for t in e["tokens"]["response"]]
    reference = [t[0].lower() for t in e["tokens"]["ground_truth"]]
    assert len({a["response"] for a in alignment}) == len(alignment)
    assert len({a["ground_truth"] for a in alignment}) == len(alignment)
    for a in alignment:
        if a["kind"] == "exact":
            assert response[a["response"]] == reference[a["ground_truth"]]
        elif a["kind"] == "stem":
            assert a["response_stem"] == a["ground_truth_stem"]
        else:
            assert a["kind"] == "synonym" and a["synonym"] == a["ground_truth_stem"]
    matches = sorted((a["response"], a["ground_truth"]) for a in alignment)
    count = len(matches)
    if count == 0 or not response or not reference:
        return 0.0
    precision = float(count) / len(response)
    recall = float(count) / len(reference)
    fmean = (precision * recall) / (alpha * precision + (1 - alpha) * recall)
    chunks = 1 + sum(
        1 for (h0, r0), (h1, r1) in zip(matches, matches[1:]) if not (h1 == h0 + 1 and r1 == r0 + 1)
    )
    assert chunks == e["chunks"]
    return float((1 - gamma * (chunks / count) ** beta) * fmean)


def _f1(e: dict[str, Any]) -> float:
    common = sum(c["count"] for c in e["common"])
    if common == 0:
        return 0.0
    p = 1.0 * common / len(e["tokens"]["response"])
    r = 1.0 * common / len(e["tokens"]["ground_truth"])
    return (2.0 * p * r) / (p + r)


def _span_text_ok(metric: str, token: str, piece: str) -> bool:
    if metric.startswith("rouge"):
        return token in piece.lower()  # "İ" lower-cases to "i" and a combining dot
    if metric == "f1":
        return "".join(c for c in piece.lower() if c not in string.punctuation) == token
    return piece == token or (token in ("``", "''") and piece == '"')


def _check_spans(e: dict[str, Any], response: str, ground_truth: str) -> int:
    """Each placed token's span holds that token; returns the number not placed."""
    unplaced = 0
    for side, text in (("response", response), ("ground_truth", ground_truth)):
        end = 0
        for token, start, stop in e["tokens"][side]:
            if start is None:
                unplaced += 1
                continue
            assert start >= end, (token, start, end)
            assert _span_text_ok(e["metric"], token, text[start:stop]), (token, text[start:stop])
            end = stop
        for h in e["highlights"][side]:
            assert h["kind"] in ("matched", "stem", "synonym", "missing", "extra")
            assert 0 <= h["start"] < h["end"] <= len(text)
    return unplaced


@pytest.mark.parametrize("row,expected", PAIRS, ids=[row["id"] for row, _ in PAIRS])
def test_every_score_recomputed_from_its_explanation(
    row: dict[str, Any], expected: dict[str, Any]
) -> None:
    texts = {"response": row["response"], "ground_truth": row["ground_truth"]}
    unplaced = 0
    for metric, recompute in (("bleu", _bleu), ("gleu", _gleu), ("meteor", _meteor), ("f1", _f1)):
        e = explain(metric, **texts)
        assert recompute(e) == expected[metric], metric
        assert e["score"] == expected[metric], metric
        unplaced += _check_spans(e, **texts)
    for rouge_type in ROUGE_TYPES:
        e = explain("rouge", rouge_type=rouge_type, **texts)
        assert list(_rouge(e)) == expected[rouge_type], rouge_type
        assert [e["precision"], e["recall"], e["score"]] == expected[rouge_type]
        unplaced += _check_spans(e, **texts)
    assert unplaced == 0


def test_missing_words_and_meteor_counts_in_the_summary() -> None:
    response = "Marie Curie was a physicist from Paris."
    truth = "Marie Curie was born in Warsaw."
    e = explain("meteor", response=response, ground_truth=truth)
    assert e["summary"] == [
        'missing from the response: "born", "in", "Warsaw"',
        "METEOR matched 4/7 reference words (exact 4, stem 0, synonym 0); 2 chunks, penalty 0.062",
    ]
    missing = [
        truth[h["start"] : h["end"]]
        for h in e["highlights"]["ground_truth"]
        if h["kind"] == "missing"
    ]
    assert missing == ["born", "in", "Warsaw"]
    bleu = explain("bleu_score", response=response, ground_truth=truth)
    assert bleu["missing"] == ["born", "in", "Warsaw"]
    assert bleu["summary"][1].startswith("BLEU matched 1-grams 4/8, 2-grams 2/7")


def test_meteor_stem_and_synonym_matches_are_named() -> None:
    truth = "The child running quickly."
    e = explain("meteor", response="The kid ran fast.", ground_truth=truth)
    kinds = {(a["response_word"], a["ground_truth_word"]): a["kind"] for a in e["alignment"]}
    assert kinds == {
        ("The", "The"): "exact",
        ("kid", "child"): "synonym",
        ("ran", "running"): "synonym",
        (".", "."): "exact",
    }
    # NLTK compares synonyms after stemming: "running" is matched as "run".
    assert [a.get("synonym") for a in e["alignment"]] == [None, "child", "run", None]
    highlighted = {truth[h["start"] : h["end"]]: h["kind"] for h in e["highlights"]["ground_truth"]}
    assert highlighted == {
        "The": "matched",
        "child": "synonym",
        "running": "synonym",
        "quickly": "missing",
        ".": "matched",
    }
    assert e["summary"][1].startswith(
        "METEOR matched 4/5 reference words (exact 2, stem 0, synonym 2)"
    )


def test_spans_point_into_the_original_text_across_normalisation() -> None:
    response = 'He said "don\'t" -- the İstanbul café &amp; bar.'
    for metric in ("bleu", "f1", "rouge1", "meteor"):
        e = explain(metric, response=response, ground_truth=response)
        assert _check_spans(e, response, response) == 0, metric
        assert e["score"] > 0.9
        assert e["missing"] == []
    f1 = explain("f1", response="I don't know", ground_truth="dont")
    assert f1["tokens"]["response"][1] == ["dont", 2, 7]
    assert f1["highlights"]["ground_truth"] == [
        {"start": 0, "end": 4, "kind": "matched", "token": 0}
    ]


def test_rouge_l_lcs_is_a_longest_common_subsequence() -> None:
    a = "a b c b d a b".split()
    b = "b d c a b a".split()
    pairs = lcs_pairs(a, b)
    assert len(pairs) == 4  # the classic CLRS example
    assert [a[i] for i, _ in pairs] == [b[j] for _, j in pairs]
    e = explain("rougeL", response="the cat sat on the mat", ground_truth="a cat was on a mat")
    assert [m["response"] for m in e["lcs"]] == [1, 3, 5]
    assert e["missing"] == ["a", "was"]  # each word once


def test_summary_lines_are_bounded() -> None:
    truth = " ".join(f"word{i}" for i in range(200))
    e = explain("rouge1", response="nothing here", ground_truth=truth)
    lines = summary_lines(e)
    assert len(lines) == 2
    assert all(len(line) <= 160 for line in lines)
    assert lines[0].startswith('missing from the response: "word0", "word1"')
    assert lines[0].endswith("more)")


def test_unknown_metric_and_option_are_errors() -> None:
    with pytest.raises(ValueError, match="cannot explain 'similarity'"):
        explain("similarity", response="a", ground_truth="b")
    with pytest.raises(TypeError, match="bleu takes no option 'alpha'"):
        explain("bleu", response="a", ground_truth="b", alpha=0.5)
    with pytest.raises(ValueError, match="unknown rouge_type 'rouge9'"):
        explain("rouge", response="a", ground_truth="b", rouge_type="rouge9")
    with pytest.raises(TypeError, match="'response' must be a string"):
        explain("bleu", response=None, ground_truth="b")  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(2))
def test_the_rouge_l_alignment_in_parts_is_as_long_as_the_scores(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Tiny parts and strips, so that these small texts are split as a long pair is.
    monkeypatch.setattr(lcs, "ALIGNMENT_ROW_BYTES", 200)
    monkeypatch.setattr(lcs, "STRIP_BITS", 7)
    rng = random.Random(seed)
    for _ in range(250):
        vocabulary = "abcdef"[: rng.randint(1, 6)]
        a = rng.choices(vocabulary, k=rng.randint(0, 70))
        b = rng.choices(vocabulary, k=rng.randint(0, 70))
        pairs = lcs.lcs_alignment(a, b)
        # A common subsequence, strictly increasing on both sides ...
        assert all(a[i] == b[j] for i, j in pairs)
        assert all(i0 < i1 and j0 < j1 for (i0, j0), (i1, j1) in zip(pairs, pairs[1:]))
        # ... as long as the whole-table walk's and the score's LCS.
        assert len(pairs) == len(lcs.lcs_pairs(a, b)) == lcs.lcs_length(a, b)


MEMORY_CHILD = """
import random, resource, sys
from pytest_textsim import explain
from pytest_textsim.nlp.lcs import lcs_length
from pytest_textsim.nlp.tokenize import rouge_tokens

rng = random.Random(5)
words = [f"w{i}" for i in range(5000)]
reference = rng.choices(words, k=20_000)
response = [w if rng.random() > 0.1 else rng.choice(words) for w in reference]
reference, response = " ".join(reference), " ".join(response)
lcs = lcs_length(rouge_tokens(reference), rouge_tokens(response))
with open("/proc/self/status") as status:
    size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize"))
resource.setrlimit(resource.RLIMIT_AS, (size + 48 * 2**20, resource.RLIM_INFINITY))
try:
    result = explain("rougeL", response=response, ground_truth=reference)
except MemoryError:
    sys.exit(3)
assert result["lcs_length"] == lcs, (result["lcs_length"], lcs)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc")
def test_the_rouge_l_explanation_of_20k_words_fits_in_48_mb() -> None:
    # An alignment that keeps every bit-parallel row (lcs_pairs) needs 20,000 rows
    # of 20,000 bits, 50 MB, besides the explanation itself: it stops at the limit.
    child = subprocess.run([sys.executable, "-c", MEMORY_CHILD], timeout=60)
    assert child.returncode == 0  # 3: MemoryError


def test_a_failure_message_explains_rouge_without_what_only_a_report_shows() -> None:
    texts = {"response": "the cat sat on the mat", "ground_truth": "a cat was on a mat"}
    for rouge_type in ("rougeL", "rouge2"):
        full = explain(rouge_type, **texts)
        brief = _explained(rouge_type, texts["response"], texts["ground_truth"], {}, detail=False)
        assert brief["summary"] == full["summary"] and brief["score"] == full["score"]
        assert not {"tokens", "highlights", "lcs"} & set(brief)
        assert failure_lines("rouge", texts, {"rouge_type": rouge_type}) == full["summary"][:2]
