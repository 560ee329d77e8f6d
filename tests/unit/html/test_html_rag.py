"""The HTML report's data for RAG scores: claims by side, where they stand in the text,
and the chunks in retrieval order with the claims that rest on them."""

from __future__ import annotations

from typing import Any

from pytest_textsim.html import model

RESPONSE = "Refunds take 30 days. Shipping is free."
CHUNKS: list[Any] = [
    {"text": "Refunds: within 30 days.", "id": "kb-7", "source": "refunds.md"},
    "Shipping costs $5.",
    "Unrelated.",
]


def _faithfulness(**fields: Any) -> dict[str, Any]:
    score = {
        "test_id": "test_rag.py::test_a",
        "evaluator": "faithfulness",
        "metric": "faithfulness",
        "score": 0.5,
        "threshold": 0.8,
        "passed": False,
        "test_outcome": "failed",
        "texts": {"response": RESPONSE, "context": CHUNKS, "query": "Refunds?"},
        "details": {
            "claims": [
                {"claim": "Refunds take 30 days.", "verdict": "supported", "chunk": 0,
                 "reason": "chunk 1 says so"},
                {"claim": "Shipping is free.", "verdict": "contradicted", "chunk": 1,
                 "reason": "it costs $5"},
                {"claim": "Support is friendly.", "verdict": "not_found", "chunk": None,
                 "reason": ""},
            ]
        },
    }  # fmt: skip
    score.update(fields)
    return score


def test_claims_are_placed_in_the_response_and_chunks_carry_who_cites_them() -> None:
    rag = model.rag_detail(_faithfulness())
    assert rag is not None
    [side] = rag["sides"]
    assert side["name"] == "response" and side["text"] == RESPONSE
    assert [(c["verdict"], c["tone"], c.get("chunk")) for c in side["claims"]] == [
        ("supported", "good", 0), ("contradicted", "bad", 1), ("not_found", "miss", None),
    ]  # fmt: skip
    # Claim 3 is not in the response's words: listed, not placed.
    assert side["spans"] == [[0, 20, 0], [22, 38, 1]]
    assert [RESPONSE[s:e] for s, e, _ in side["spans"]] == [
        "Refunds take 30 days",
        "Shipping is free",
    ]
    chunks = rag["chunks"]
    assert [c["text"] for c in chunks] == [
        "Refunds: within 30 days.",
        "Shipping costs $5.",
        "Unrelated.",
    ]
    assert [c["label"] for c in chunks] == ["kb-7 refunds.md", "", ""]
    assert [c["cited"] for c in chunks] == [[[0, "support"]], [[1, "against"]], []]
    assert [c.get("mark") for c in chunks] == ["support", "against", None]


def test_the_page_data_interns_the_texts_and_keeps_dict_chunks() -> None:
    data = model.build({"scores": [_faithfulness()]})
    [detail] = data["details"]
    strings = data["strings"]
    rag = detail["rag"]
    assert strings[rag["sides"][0]["text"]] == RESPONSE
    assert [strings[c["text"]] for c in rag["chunks"]][0] == "Refunds: within 30 days."
    # A chunk given as a dict is kept among the texts too (its text), not dropped.
    assert strings[detail["texts"]["context[0]"]] == "Refunds: within 30 days."


def test_context_recall_claims_are_the_ground_truths_and_answer_correctness_names_sides() -> None:
    truth = "Refunds take 30 days. A receipt is needed."
    recall = model.rag_detail(
        _faithfulness(
            evaluator="context_recall", metric="context_recall",
            texts={"response": RESPONSE, "ground_truth": truth, "context": CHUNKS},
            details={"claims": [
                {"claim": "A receipt is needed.", "verdict": "not_attributed", "chunk": None},
                {"claim": "Refunds take 30 days.", "verdict": "attributed", "chunk": 0},
            ]},
        )
    )  # fmt: skip
    assert recall is not None
    [side] = recall["sides"]
    assert side["name"] == "ground_truth"
    assert side["spans"] == [[0, 20, 1], [22, 41, 0]]  # in the text's order
    assert recall["chunks"][0]["cited"] == [[1, "support"]]
    correct = model.rag_detail(
        _faithfulness(
            evaluator="answer_correctness", metric="answer_correctness",
            texts={"response": RESPONSE, "ground_truth": truth},
            details={"claims": [
                {"claim": "Refunds take 30 days.", "verdict": "in_ground_truth", "of": "response"},
                {"claim": "Refunds take 30 days.", "verdict": "in_response", "of": "ground_truth"},
                {"claim": "A receipt is needed.", "verdict": "not_in_response",
                 "of": "ground_truth"},
            ]},
        )
    )  # fmt: skip
    assert correct is not None
    assert [(s["name"], len(s["claims"])) for s in correct["sides"]] == [
        ("response", 1), ("ground_truth", 2),
    ]  # fmt: skip
    assert correct["chunks"] == []


def test_chunk_verdicts_and_odd_details() -> None:
    rows = [
        {"chunk": 0, "text": "Useful.", "id": "a", "verdict": "relevant", "reason": "r"},
        {"chunk": 1, "text": "Noise.", "verdict": "irrelevant", "reason": "r"},
    ]
    rag = model.rag_detail(
        _faithfulness(evaluator="context_precision", metric="context_precision",
                      details={"chunks": rows})
    )  # fmt: skip
    assert rag is not None and rag["sides"] == []
    assert [(c["text"], c["verdict"], c["tone"]) for c in rag["chunks"]] == [
        ("Useful.", "relevant", "good"), ("Noise.", "irrelevant", "miss"),
    ]  # fmt: skip
    # No details, or details of another shape: nothing to show, nothing raised.
    assert model.rag_detail(_faithfulness(details=None)) is None
    assert model.rag_detail(_faithfulness(details={"claims": "x"})) is None
    odd = model.rag_detail(
        _faithfulness(texts=None, details={"claims": [{"claim": "A.", "chunk": 7}, "junk"]})
    )
    assert odd is not None
    assert odd["chunks"] == [] and "chunk" not in odd["sides"][0]["claims"][0]
    assert odd["sides"][0]["text"] == ""


def test_pytest_html_fragment_lists_a_failing_scores_claims_and_chunks_escaped() -> None:
    from pytest_textsim.html.fragment import scores_fragment

    xss = "<img src=x onerror=alert(1)>"
    score = _faithfulness(texts={"response": RESPONSE, "context": [*CHUNKS[:2], xss]})
    score["details"]["claims"][2]["claim"] = xss
    html = scores_fragment([score])
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "claims of the response:" in html
    assert "contradicted</b> Shipping is free. (context[1])" in html
    assert (
        '<li style="background:#e8f5e9">context[0] kb-7 refunds.md (supports claim 1): '
        "Refunds: within 30 days.</li>" in html
    )
    assert "context[1] (contradicts claim 2): Shipping costs $5." in html
    # A passing score shows no claims.
    assert "claims of" not in scores_fragment([_faithfulness(passed=True)])
