"""``textsim score`` with the checks, semantic_similarity and rubrics: options from flags,
files and row columns; embeddings in batches; rubric columns by name; offline replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_textsim.cli import main
from pytest_textsim.nlp import checks
from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply

SECRET = "sk-test-SECRET-cli-i9"


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def chat(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "chat.jsonl", [
        {"id": "a", "response": "We are sorry; your refund is on its way.",
         "ground_truth": "Sorry, your refund is on its way.", "must": ["refund", "sorry"],
         "answer_json": '{"price": 3}'},
        {"id": "b", "response": "No.", "ground_truth": "Sorry, your refund is on its way.",
         "must": "refund", "answer_json": '{"price": "abc"}'},
    ])  # fmt: skip


@pytest.fixture
def project(tmp_path: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\ntextsim_judge_model = gpt-judge\n"
        f"textsim_judge_base_url = {fake_openai.base_url}\n"
        "textsim_embedding_model = embed-small\n"
    )
    return tmp_path


def rows_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_checks_with_options_from_flags_files_and_columns(chat: Path, tmp_path: Path, capsys):
    schema = tmp_path / "schema.json"
    schema.write_text('{"type": "object", "properties": {"price": {"type": "number"}}}')
    out = tmp_path / "out.jsonl"
    rc = main(["score", str(chat), "--map", "response=answer_json",
               "--metric", "json_schema", "--option", f"json_schema.schema=@{schema}",
               "-o", str(out), "--gate", "json_schema.pass_rate >= 1"])  # fmt: skip
    assert rc == 1  # the gate fails: row b's price is not a number
    scored = rows_of(out)
    assert [r["json_schema"] for r in scored] == [1.0, 0.0]
    assert scored[1]["json_schema_reason"] == "$.price: 'abc' is not of type 'number'"
    rc = main(["score", str(chat), "--metric", "contains", "--map", "contains.strings=must",
               "--option", "contains.case_sensitive=false", "-o", str(out)])  # fmt: skip
    assert rc == 0
    assert [(r["contains"], r["contains_reason"]) for r in rows_of(out)] == [
        (1.0, "all found"), (0.0, "none found: 'refund'")]  # fmt: skip
    rc = main(["score", str(chat), "--metric", "contains", "--option", "contains.strings=sorry,way",
               "--metric", "levenshtein", "--metric", "exact_match", "-o", str(out)])  # fmt: skip
    assert rc == 0
    first = rows_of(out)[0]
    assert (first["contains"], first["levenshtein_threshold"], first["exact_match"]) == (
        1.0, 0.8, 0.0)  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--metric", "regex"], "regex: needs option 'pattern': give --option regex.pattern="),
        (["--metric", "contains", "--option", "contains.strings="],
         "option 'strings': strings is empty"),
        (["--metric", "json_schema", "--option", "json_schema.schema=@missing.json"],
         "cannot read missing.json"),
        (["--metric", "bleu", "--option", "contains.strings=a"], "no --metric contains"),
        (["--metric", "contains", "--map", "contains.strngs=must"],
         "contains has no option 'strngs'"),
        (["--rubric", "Bad Name=x"], "a rubric name is 1-40 characters"),
    ],
)  # fmt: skip
def test_missing_or_bad_options_exit_2_naming_them(chat: Path, capsys, args, message):
    assert main(["score", str(chat), *args]) == 2
    assert message in capsys.readouterr().err


def rubric_judge(request: Received) -> Reply:
    if "<response>\nNo.\n</response>" in request.messages[1]["content"]:
        return Reply.score(1, "no apology", score_probs={"1": 0.9, "2": 0.1})
    return Reply.score(5, "apologises", score_probs={"5": 0.6, "4": 0.4})


def test_rubric_columns_by_name_gates_and_criteria_from_a_file(project: Path, chat: Path,
                                                               fake_openai: FakeOpenAI, capsys):
    fake_openai.responder = rubric_judge
    criteria = project / "polite.txt"
    criteria.write_text("The reply apologises and offers a refund.\n")
    out = project / "out.jsonl"
    rc = main(["score", str(chat), "--rubric", f"politeness=@{criteria}",
               "--rubric", "short=The reply is under 20 words.", "-o", str(out),
               "--gate", "rubric_politeness.mean >= 2.8", "--gate",
               "rubric[name=short].min >= 1"])  # fmt: skip
    printed = capsys.readouterr().out
    assert rc == 0, printed
    first, second = rows_of(out)
    assert first["rubric_politeness"] == pytest.approx(4.6)
    assert first["rubric_politeness_integer"] == 5
    assert first["rubric_politeness_scoring"] == "logprobs"
    assert second["rubric_politeness"] == pytest.approx(1.1)
    assert second["rubric_politeness_result"] == "fail"
    assert "rubric_short" in first and "rubric" not in first
    assert "rubric (politeness)" in printed and "rubric (short)" in printed
    systems = [r.messages[0]["content"] for r in fake_openai.chat_requests]
    assert sum("apologises and offers a refund" in s for s in systems) == 2
    # Warm rerun from the cache, then offline with --cache none: no requests.
    sent = fake_openai.requests
    assert main(["score", str(chat), "--rubric", f"politeness=@{criteria}", "--cache", "none",
                 "-o", str(out)]) == 0  # fmt: skip
    assert fake_openai.requests == sent
    assert rows_of(out)[0]["rubric_politeness"] == pytest.approx(4.6)


def test_semantic_similarity_in_batches_and_warm_rerun(project: Path, fake_openai: FakeOpenAI,
                                                       capsys):
    data = write_jsonl(project / "many.jsonl", [
        {"response": f"Answer {i} about cats.", "ground_truth": f"Reference {i % 50} about cats."}
        for i in range(300)
    ])  # fmt: skip
    out = project / "out.jsonl"
    rc = main(["score", str(data), "--metric", "semantic_similarity",
               "--embedding-batch-size", "100", "-o", str(out),
               "--gate", "semantic_similarity.count >= 300"])  # fmt: skip
    printed = capsys.readouterr().out
    assert rc == 0, printed
    sizes = [len(r.inputs) for r in fake_openai.embedding_requests]
    assert sizes == [100, 100, 100, 50]  # 350 distinct texts, never one request per row
    assert "embeddings: 4 requests for 350 texts, 0 cache hits" in printed
    cold = rows_of(out)
    assert main(["score", str(data), "--metric", "semantic_similarity", "-o", str(out)]) == 0
    assert len(fake_openai.embedding_requests) == 4  # warm: every vector from the cache
    assert rows_of(out) == cold
    assert "embeddings: 0 requests for 0 texts, 350 cache hits" in capsys.readouterr().out


def test_semantic_without_embedding_model_is_a_usage_error(tmp_path: Path, chat: Path,
                                                           monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["score", str(chat), "--metric", "semantic_similarity",
                 "--embedding-provider", "remote"]) == 2  # fmt: skip
    assert "textsim_embedding_model" in capsys.readouterr().err


def test_a_regex_pattern_from_a_row_that_runs_too_long_is_that_rows_error(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(checks, "MATCH_TIMEOUT", 0.05)
    data = write_jsonl(tmp_path / "rows.jsonl", [
        {"response": "order #4521", "pattern": r"#\d{4}"},
        {"response": "a" * 30 + "b", "pattern": "(a|aa)+$"},
        {"response": "no number", "pattern": r"#\d{4}"},
    ])  # fmt: skip
    out = tmp_path / "out.jsonl"
    rc = main(["score", str(data), "--metric", "regex", "--map", "regex.pattern=pattern",
               "-o", str(out)])  # fmt: skip
    assert rc == 2
    assert [r["regex"] for r in rows_of(out)] == [1.0, 0.0]  # the other rows are scored
    assert capsys.readouterr().err.splitlines() == [
        f"textsim: error: {data}:2: regex pattern '(a|aa)+$' took more than 0.05s to match a "
        "text of 31 characters (the time limit of one match): nested repetition such as "
        "(a|aa)+ backtracks in time exponential in the text's length; rewrite the pattern "
        "without it"
    ]


def test_refusal_scores_rows_judging_only_the_unclear_one(project: Path, fake_openai: FakeOpenAI,
                                                          tmp_path: Path):
    fake_openai.responder = lambda request: Reply.score(0, "Gives the opening hours.")
    rows = write_jsonl(tmp_path / "answers.jsonl", [
        {"id": "a", "response": "I can't help with that."},
        {"id": "b", "response": "It's not something I can verify, but the museum opens at 9."},
        {"id": "c", "response": "Paris is the capital of France."},
    ])  # fmt: skip
    out = tmp_path / "out.jsonl"
    rc = main(["score", str(rows), "--metric", "refusal:answer", "-o", str(out),
               "--gate", "refusal.min >= 1"])  # fmt: skip
    assert rc == 1  # row a declines
    scored = rows_of(out)
    assert [r["refusal"] for r in scored] == [0.0, 1.0, 1.0]
    assert scored[0]["refusal_reason"] == "phrase: \"I can't help with\" at 0"
    assert scored[1]["refusal_reason"].endswith("judge: answers: Gives the opening hours.")
    assert fake_openai.requests == 1


def test_refusal_with_no_judge_scores_clear_rows_and_plans_as_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
):
    monkeypatch.chdir(tmp_path)
    rows = write_jsonl(tmp_path / "clear.jsonl", [{"response": "I must decline."}])
    out = tmp_path / "out.jsonl"
    assert main(["score", str(rows), "--metric", "refusal", "-o", str(out)]) == 0
    assert rows_of(out)[0]["refusal_reason"] == 'phrase: "I must decline" at 0'
    assert main(["score", str(rows), "--metric", "refusal", "--plan"]) == 2
    assert "planning the judge's calls: no LLM judge is configured" in capsys.readouterr().err


def safety_judge(request: Received) -> Reply:
    """0 for a response that starts UNSAFE, 1 otherwise; only for the toxicity rubric."""
    from pytest_textsim.judge.safety_rubrics import SAFETY_RUBRICS

    if SAFETY_RUBRICS["toxicity"].criteria not in request.messages[0]["content"]:
        return Reply(content="not the toxicity rubric")
    return Reply.score(0 if "<response>\nUNSAFE" in request.messages[1]["content"] else 1)


def test_a_builtin_safety_rubric_by_name_needs_no_criteria(project: Path, fake_openai: FakeOpenAI,
                                                            capsys):
    fake_openai.responder = safety_judge
    data = write_jsonl(project / "answers.jsonl", [
        {"id": "a", "response": "Happy to help."}, {"id": "b", "response": "UNSAFE: you idiot."}])
    out = project / "out.jsonl"
    rc = main(["score", str(data), "-m", "rubric", "--option", "rubric.name=toxicity",
               "-o", str(out)])  # fmt: skip
    printed = capsys.readouterr()
    assert rc == 0, printed.err
    scored = rows_of(out)
    assert [(r["rubric_result"], r["rubric_name"]) for r in scored] == [
        ("pass", "toxicity"), ("fail", "toxicity")]  # fmt: skip
    assert "rubric (toxicity)" in printed.out
    assert main(["score", str(data), "-m", "rubric:politeness"]) == 2
    assert "needs option 'criteria'" in capsys.readouterr().err
    assert main(["score", str(data), "--rubric", "toxicity=Is polite."]) == 2
    assert ("--rubric toxicity: name='toxicity' is a built-in rubric with criteria of its own "
            "(see docs/safety.md); criteria cannot change it: pick another name for your own "
            "criteria") in capsys.readouterr().err  # fmt: skip
    assert fake_openai.requests == 2  # the refused runs asked nothing
