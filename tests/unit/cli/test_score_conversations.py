"""textsim score over conversations: --map conversation=COLUMN, each bad message a row error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_textsim.cli import main
from pytest_textsim.testing.conversation import ConversationJudge
from pytest_textsim.testing.fake_openai import FakeOpenAI

SECRET = "sk-test-SECRET-score-conversations-32"


def conversation(i: int) -> list[dict[str, str]]:
    return [
        {"role": "user", "content": f"I am Ann {i}; I read only poetry."},
        {"role": "assistant", "content": f"Welcome, Ann {i}."},
        {"role": "user", "content": "Suggest a book."},
        {"role": "assistant", "content": f"Try 'Ariel', Ann {i}."},
    ]


def test_textsim_score_reads_conversations_from_a_mapped_column(
    tmp_path: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake_openai.responder = ConversationJudge(
        verdicts={("knowledge_retention", "Try 'Ariel', Ann 3."): "forgets"}
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    (tmp_path / "pytest.ini").write_text(
        f"[pytest]\ntextsim_judge_model = gpt-judge\ntextsim_judge_base_url = "
        f"{fake_openai.base_url}\n"
    )
    data = [{"id": f"conv{i}", "messages": conversation(i)} for i in (1, 3)]
    data.insert(1, {"id": "conv2", "messages": {"messages": [
        {"role": "user", "content": "hi"}, {"role": "robot", "content": "x"}]}})  # fmt: skip
    source = tmp_path / "conversations.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in data), encoding="utf-8")
    out = tmp_path / "scored.jsonl"
    rc = main(["score", str(source), "--metric", "knowledge_retention", "--metric",
               "turn_relevancy", "--map", "conversation=messages", "--id-field", "id",
               "-o", str(out)])  # fmt: skip
    assert rc == 2  # a row could not be scored: a usage error
    problem = "messages['messages'][1]: 'role' is 'robot', not one of system, user, assistant"
    assert f"{source}:2: {problem}, tool" in capsys.readouterr().err
    by_id = {row["id"]: row for row in map(json.loads, out.read_text().splitlines())}
    assert sorted(by_id) == ["conv1", "conv3"]
    assert (by_id["conv1"]["knowledge_retention"], by_id["conv3"]["knowledge_retention"]) == (
        1.0, 0.5
    )
    assert by_id["conv3"]["knowledge_retention_turns"][1]["verdict"] == "forgets"
    assert {row["turn_relevancy"] for row in by_id.values()} == {1.0}
    assert fake_openai.responder.asked == {"knowledge_retention": 2, "turn_relevancy": 2}
    # A gate over the conversation metric, on the rows that are conversations.
    good = tmp_path / "good.jsonl"
    good.write_text("".join(json.dumps(row) + "\n" for row in data if row["id"] != "conv2"))
    gate = ["score", str(good), "--metric", "knowledge_retention", "--map",
            "conversation=messages", "--gate"]  # fmt: skip
    assert main([*gate, "knowledge_retention.mean >= 0.75"]) == 0
    assert main([*gate, "knowledge_retention.min >= 0.75"]) == 1
