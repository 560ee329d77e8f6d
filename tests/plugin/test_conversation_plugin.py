"""The conversation metrics in pytest: a JSONL suite of conversations, failures that name
the turn, per-turn verdicts in the JSON output."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_textsim.testing.conversation import ConversationJudge
from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply

SECRET = "sk-test-SECRET-conversation-plugin-32"

SUITE = """
import json

import pytest
from pytest_textsim import (
    assert_conversation_complete, assert_in_role, assert_knowledge_retained, assert_relevant,
    assert_rubric, assert_scores, jsonl_cases,
)

CASES = jsonl_cases("conversations.jsonl", id_field="id")

@pytest.mark.parametrize("case", CASES)
def test_memory(case):
    assert_knowledge_retained(case["messages"])

@pytest.mark.parametrize("case", CASES)
def test_role(case):
    assert_in_role(case["messages"])

@pytest.mark.parametrize("case", CASES)
def test_done(case):
    assert_conversation_complete(conversation=case["messages"])

def test_turn_by_turn(coherence):
    messages = json.loads(open("conversations.jsonl", encoding="utf-8").readline())["messages"]
    out = coherence(conversation=messages)
    assert (out["coherence"], out["coherence_min"]) == (4.0, 4.0)
    assert [row["message"] for row in out["coherence_turns"]] == [2, 4, 6]
    outs = coherence.each(cases=[{"id": "chat", "conversation": messages},
                                 {"id": "one", "response": "Poetry.", "query": "Genre?",
                                  "conversation": messages}])
    assert [sorted(k for k in out if k.startswith("coherence_")) for out in outs] == [
        ["coherence_findings", "coherence_min", "coherence_reason", "coherence_result",
         "coherence_threshold", "coherence_turns"],
        ["coherence_reason", "coherence_result", "coherence_threshold"],
    ]  # the second case has its own texts: one answer
    with pytest.raises(AssertionError) as caught:
        assert_relevant(conversation=messages, threshold=5)
    assert "  [4] assistant turn 2 4: " in str(caught.value)
    assert "  - turn 2 (conversation[4]) 4: Scripted reply." in str(caught.value)
    # assert_scores: the conversation to the metrics that take one (their judgments cached)
    outs = assert_scores(conversation=messages, coherence=3, knowledge_retention=0.5)
    assert outs["coherence"]["coherence_min"] == 4.0
    assert outs["knowledge_retention"]["knowledge_retention"] == 1.0
    with pytest.raises(TypeError, match="bleu needs response and ground_truth"):
        assert_scores(conversation=messages, bleu=0.1)
    rubric = assert_rubric(conversation=messages, criteria="Polite.", threshold=1)
    assert [row["message"] for row in rubric["rubric_turns"]] == [2, 4, 6]

def test_each(turn_relevancy):
    lines = open("conversations.jsonl", encoding="utf-8").read().splitlines()[:2]
    rows = [{"id": row["id"], "conversation": row["messages"]} for row in map(json.loads, lines)]
    outs = turn_relevancy.each(cases=rows, ids="id", window=3)
    assert [out["turn_relevancy"] for out in outs] == [1.0, 1.0]
"""

FORGETS, BREAKS_ROLE, UNMET = 3, 6, 8  # the conversations with a lapse (ids conv3, ...)


def conversation(i: int) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": f"You are agent {i} of a bookshop; talk only about books."},
        {"role": "user", "content": f"My name is Ann {i} and I read only poetry."},
        {"role": "assistant", "content": f"Welcome, Ann {i}. Poetry it is."},
        {"role": "user", "content": f"Suggest a book and reserve copy {i}."},
        {"role": "assistant", "content": f"Try 'Ariel' for you, Ann {i}. Shall I reserve it?"},
        {"role": "user", "content": "Yes please."},
        {"role": "assistant", "content": f"Reserved copy {i} under Ann {i}."},
    ]


def rows() -> list[dict[str, Any]]:
    out = []
    for i in range(1, 11):
        messages = conversation(i)
        if i % 2:  # half of them in azure's shape
            out.append({"id": f"conv{i}", "messages": {"messages": messages}})
        else:
            out.append({"id": f"conv{i}", "messages": messages})
    return out


def judge() -> ConversationJudge:
    return ConversationJudge(
        verdicts={
            ("knowledge_retention", f"Try 'Ariel' for you, Ann {FORGETS}. Shall I reserve it?"):
                "forgets",
            ("role_adherence", f"Reserved copy {BREAKS_ROLE} under Ann {BREAKS_ROLE}."):
                "out_of_role",
        },
        intentions={f"Suggest a book and reserve copy {UNMET}.": [
            ("suggest a book", "satisfied"), ("reserve the copy", "unsatisfied")]},
        otherwise=lambda request: Reply.score(4),  # the 1-5 metrics, turn by turn
    )  # fmt: skip


@pytest.fixture
def project(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> pytest.Pytester:
    fake_openai.responder = judge()
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    for var in ("OPENAI_BASE_URL", "TEXTSIM_JUDGE_MODEL", "TEXTSIM_CACHE", "TEXTSIM_CACHE_DIR"):
        monkeypatch.delenv(var, raising=False)
    pytester.makeini(
        "[pytest]\ntextsim_judge_model = gpt-judge\n"
        f"textsim_judge_base_url = {fake_openai.base_url}\n"
        "textsim_threshold_knowledge_retention = 1\ntextsim_threshold_role_adherence = 1\n"
        "textsim_threshold_conversation_completeness = 1\n"
    )
    pytester.makepyfile(test_conversations=SUITE)
    lines = "\n".join(json.dumps(row) for row in rows())
    (pytester.path / "conversations.jsonl").write_text(lines + "\n", encoding="utf-8")
    return pytester


# One way only: what xdist changes (records sent to the controller) is the same for
# these scores as for the RAG metrics.
@pytest.mark.parametrize("plugin_args", ["n0"], indirect=True)
def test_a_jsonl_suite_of_conversations_fails_exactly_the_lapses_naming_the_turn(
    project: pytest.Pytester, fake_openai: FakeOpenAI, run_plugin: Any
) -> None:
    result = run_plugin("--textsim-json=scores.json", "--textsim-json-texts",
                        "--textsim-html=report.html", "-rf")
    result.assert_outcomes(passed=29, failed=3)
    failed = sorted(
        line.split("::")[1].split(" ")[0] for line in result.outlines if line.startswith("FAILED")
    )
    assert failed == [f"test_done[conv{UNMET}]", f"test_memory[conv{FORGETS}]",
                      f"test_role[conv{BREAKS_ROLE}]"]  # fmt: skip
    result.stdout.fnmatch_lines([
        "*knowledge_retention 0.667 < threshold 1.000*",
        "*conversation: 7 messages",
        "*  [[]0] system: *",
        f"*  [[]4] assistant turn 2 forgets: \"Try 'Ariel' for you, Ann {FORGETS}. Shall I*",
        "*  [[]6] assistant turn 3 retains: *",
        '*reason: "2 of 3 assistant turns retain what the user said"',
        "*turns that forget:",
        "*  - turn 2 (conversation[[]4]) forgets: scripted forgets",
        f"*    \"Try 'Ariel' for you, Ann {FORGETS}. Shall I reserve it?\"",
    ])  # fmt: skip
    result.stdout.fnmatch_lines([
        "*role_adherence 0.667 < threshold 1.000*",
        "*  - turn 3 (conversation[[]6]) out_of_role: scripted out_of_role",
        f'*    "Reserved copy {BREAKS_ROLE} under Ann {BREAKS_ROLE}."',
    ])  # fmt: skip
    result.stdout.fnmatch_lines([
        "*conversation_completeness 0.750 < threshold 1.000*",
        "*intentions left unsatisfied:",
        "*  - asked in conversation[[]3]: reserve the copy: scripted unsatisfied",
        f'*    "Suggest a book and reserve copy {UNMET}."',
    ])  # fmt: skip
    # One judgment per conversation and metric, whatever its number of turns.
    # coherence and relevance turn by turn: a judgment per turn, 3 each, and coherence's
    # second case of .each one (answered otherwise; the first case's turns cached).
    assert fake_openai.responder.asked.pop("") == 6 + 1 + 3  # and the rubric's 3 turns
    assert fake_openai.responder.asked == {
        "knowledge_retention": 10, "role_adherence": 10, "conversation_completeness": 10,
        "turn_relevancy": 2,
    }  # fmt: skip
    text = (project.path / "scores.json").read_text(encoding="utf-8")
    assert SECRET not in text
    # The HTML report shows the transcript, each turn with its verdict.
    page = (project.path / "report.html").read_text(encoding="utf-8")
    assert "conversation[4] assistant, turn 2: forgets" in page
    assert f"Try 'Ariel' for you, Ann {FORGETS}. Shall I reserve it?" in page
    scores = json.loads(text)["scores"]
    memory = next(s for s in scores if s["test_id"].endswith(f"test_memory[conv{FORGETS}]"))
    assert memory["score"] == pytest.approx(2 / 3)
    assert memory["params"]["prompt_version"] == "knowledge_retention-1"
    assert [(t["turn"], t["message"], t["verdict"]) for t in memory["details"]["turns"]] == [
        (1, 2, "retains"), (2, 4, "forgets"), (3, 6, "retains")
    ]
    done = next(s for s in scores if s["test_id"].endswith(f"test_done[conv{UNMET}]"))
    assert [i["verdict"] for i in done["details"]["intentions"]] == [
        "satisfied", "satisfied", "unsatisfied", "satisfied"
    ]
