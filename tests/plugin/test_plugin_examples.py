"""The README's first command, ``pytest examples``, passes and reports scores."""

from __future__ import annotations

from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_examples_pass(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist", str(EXAMPLES))
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) >= 20 and set(outcomes) <= {"passed", "seconds"}
    result.stdout.fnmatch_lines(
        [
            "*- textsim scores -*",
            "test * metric * score * threshold * result * outcome",
            "examples/test_qa.py::test_answer_means_the_same[[]capital-france[]] * meteor_score *",
        ]
    )
