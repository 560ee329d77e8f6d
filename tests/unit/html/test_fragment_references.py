"""pytest-html's fragment with a list of references: the best one beside the response."""

from __future__ import annotations

from pytest_textsim.html.fragment import scores_fragment


def test_fragment_explains_the_best_reference() -> None:
    score = {
        "evaluator": "meteor", "metric": "meteor_score", "score": 0.84, "threshold": 0.99,
        "passed": False, "params": {},
        "texts": {"response": "The cat sat on the mat.",
                  "ground_truth": ["A dog ran home.", "The cat is on the mat."]},
    }  # fmt: skip
    html = scores_fragment([score])
    assert "best of 2 references: ground_truth[1]" in html
    assert "<mark" in html and "A dog ran home." not in html.split("</ul>")[1]
