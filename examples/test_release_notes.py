"""A JSONL-driven suite guarded by dataset gates and a committed baseline.

Each case is scored and recorded, but no single case has to pass: a release
note may be worded differently from the reference. What CI enforces is the
suite as a whole (the gates in ``conftest.py``) and that no note got worse
than the committed baseline, ``data/release_notes_baseline.json``.

Refresh the baseline after an intended change and commit the diff:

    pytest examples/test_release_notes.py \
        --textsim-save-baseline=examples/data/release_notes_baseline.json
"""

import pytest
from release_notes import release_note

from pytest_textsim import jsonl_cases

CASES = jsonl_cases("data/release_notes.jsonl", id_field="id", fields=["change", "ground_truth"])


@pytest.mark.parametrize("case", CASES)
def test_release_note(case, rouge, meteor):
    note = release_note(case["change"])
    # The threshold gives each ROUGE score a verdict, which the pass_rate gate counts;
    # without one the scores are recorded with none, and the gate would say so.
    rouge(note, case["ground_truth"], rouge_type="rougeL", threshold=0.5)
    scores = meteor(note, case["ground_truth"])
    # A floor for nonsense only; the gates and the baseline judge the quality.
    assert scores["meteor_score"] > 0.2, scores
