"""textsim score over agent trajectories: a row's steps (``trace``), each bad step a row error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_textsim.cli import main
from pytest_textsim.testing.agent import AgentJudge
from pytest_textsim.testing.fake_openai import FakeOpenAI

SECRET = "sk-test-SECRET-score-trajectories-32"


def steps(order: str) -> list[dict[str, object]]:
    return [
        {"type": "tool", "name": "lookup_order", "arguments": {"order_id": order}},
        {"type": "tool", "name": "refund", "arguments": {"order_id": order}},
    ]


def test_textsim_score_judges_trajectories_from_jsonl(
    tmp_path: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    fake_openai.responder = AgentJudge(bad={"tool_argument_correctness": ["B7"]})
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    (tmp_path / "pytest.ini").write_text(
        f"[pytest]\ntextsim_judge_model = gpt-judge\ntextsim_judge_base_url = "
        f"{fake_openai.base_url}\n"
    )
    data = [
        {"id": "a1", "query": "Refund order A1", "steps": steps("A1")},
        {"id": "bad", "query": "Refund order A2", "steps": [{"type": "tool"}]},
        {"id": "b7", "query": "Refund order B1", "steps": steps("B7")},
    ]
    source = tmp_path / "runs.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in data), encoding="utf-8")
    out = tmp_path / "scored.jsonl"
    rc = main(["score", str(source), "--metric", "tool_argument_correctness",
               "--metric", "task_completion", "--map", "trace=steps", "--id-field", "id",
               "-o", str(out)])  # fmt: skip
    assert rc == 2  # a row could not be scored: a usage error
    assert f"{source}:2: steps[0]: a tool step needs a 'name'" in capsys.readouterr().err
    by_id = {row["id"]: row for row in map(json.loads, out.read_text().splitlines())}
    assert sorted(by_id) == ["a1", "b7"]
    assert by_id["a1"]["tool_argument_correctness"] == 1.0
    assert by_id["b7"]["tool_argument_correctness"] == 0.0
    assert {row["task_completion"] for row in by_id.values()} == {1.0}
    # One judgment per row and metric.
    assert fake_openai.responder.asked == {"tool_argument_correctness": 2, "task_completion": 2}
    assert SECRET not in out.read_text()
    # A gate over an agent metric, on the rows that can be scored (their judgments cached).
    good = tmp_path / "good.jsonl"
    good.write_text("".join(json.dumps(row) + "\n" for row in data if row["id"] != "bad"))
    gate = ["score", str(good), "--metric", "tool_argument_correctness", "--map",
            "trace=steps", "--gate"]  # fmt: skip
    assert main([*gate, "tool_argument_correctness.mean >= 0.5"]) == 0
    assert main([*gate, "tool_argument_correctness.min >= 0.5"]) == 1
    assert fake_openai.responder.asked["tool_argument_correctness"] == 2  # none asked again


def test_a_missing_trajectory_column_suggests_a_list_column() -> None:
    """--map trace=... is suggested among the list columns, not the text ones."""
    from pytest_textsim.engine.fields import absent_fields
    from pytest_textsim.engine.plan import metric_choice

    choices = [metric_choice("step_efficiency")]
    row = {"id": "r1", "goal": "Refund A1.", "steps": steps("lookup_order,refund")}
    assert absent_fields("runs.jsonl", choices, {}, [row]) == [
        'runs.jsonl: no "query" field in the row (needed by step_efficiency); columns: '
        "id, goal, steps; did you mean --map query=goal?",
        'runs.jsonl: no "trace" field in the row (needed by step_efficiency); columns: '
        "id, goal, steps; did you mean --map trace=steps?",
    ]
    row = {"id": "r1", "goal": "Refund A1.", "path": steps("refund")}
    (line,) = absent_fields("runs.jsonl", choices, {"query": "goal"}, [row])
    assert line.endswith("; its only other list column is 'path': --map trace=path")
