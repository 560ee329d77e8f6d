"""textsim score --plan: what a run would ask the judge and cost, counted before it calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply
from pytest_textsim.testing.rag import RagJudge

SECRET = "sk-test-SECRET-plan"


def rows(first: int, count: int) -> list[dict[str, Any]]:
    return [
        {"id": f"r{k}", "answer": f"Item {k} ships in {k} days.", "truth": f"Item {k} ships.",
         "chunks": [f"Policy {k}: item {k} ships in {k} days.", "Unrelated."], "q": f"Q{k}?"}
        for k in range(first, first + count)
    ]  # fmt: skip


class Judge:
    """The RAG prompts from tables; every other prompt (similarity) a score of 4."""

    def __init__(self) -> None:
        self.rag = RagJudge()

    def __call__(self, request: Received) -> Reply:
        return self.rag(request) if self.rag.prompt_of(request) else Reply.score(4)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("TEXTSIM_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "prices.toml").write_text('[models."judge-m"]\ninput = 1.0\noutput = 2.0\n')
    monkeypatch.setenv("TEXTSIM_PRICES", str(tmp_path / "prices.toml"))
    return tmp_path


def score(server: FakeOpenAI, *more: str) -> int:
    from pytest_textsim.cli import main

    return main([
        "score", "rows.jsonl", "-m", "similarity", "-m", "faithfulness", "-m", "context_recall",
        "--map", "response=answer", "--map", "ground_truth=truth", "--map", "context=chunks",
        "--map", "query=q", "--judge-model", "judge-m", "--judge-base-url", server.base_url,
        "--id-field", "id", "--no-progress", *more,
    ])  # fmt: skip


def write(path: Path, data: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in data))


def test_a_plan_counts_exactly_what_the_run_then_asks(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project / "rows.jsonl", rows(0, 4))
    with FakeOpenAI(responder=Judge()) as server:
        assert score(server, "--plan", "--format", "json") == 0
        assert server.requests == 0  # nothing called
        plan = json.loads(capsys.readouterr().out)
        # Per row: similarity 1; faithfulness the claims pair and its verdicts; recall
        # its verdicts on the same pair's claims.
        assert {name: m["to_call"] for name, m in plan["metrics"].items()} == {
            "similarity": 4, "faithfulness": 8, "context_recall": 4}
        assert plan["total"]["to_call"] == 16 and plan["total"]["cached"] == 0
        assert plan["rows"] == 4 and plan["judge"]["model"] == "judge-m"
        assert plan["total"]["token_estimate"] == ["characters"]
        assert plan["total"]["usd"] > 0
        assert score(server, "-o", "scored.jsonl") == 0
        assert server.requests == 16  # as planned
        capsys.readouterr()
        # Half the file cached: the plan counts the new half only, and reads the old.
        write(project / "rows.jsonl", rows(0, 8))
        assert score(server, "--plan", "--format", "json") == 0
        plan = json.loads(capsys.readouterr().out)
        assert plan["total"]["to_call"] == 16
        assert {name: m["cached"] for name, m in plan["metrics"].items()} == {
            "similarity": 4, "faithfulness": 8, "context_recall": 8}  # the pair read by both
        assert plan["total"]["cached"] == 16
        # The claims pair is read by both RAG metrics: under each, once in the total.
        assert plan["shared_judgments"] == 4
        assert sum(m["judgments"] for m in plan["metrics"].values()) == (
            plan["total"]["judgments"] + plan["shared_judgments"])
        # Recall's verdicts, sized after its missing claims, from its recorded usage too.
        assert plan["metrics"]["context_recall"]["token_estimate"] == ["cache"]
        # Measured from the cache's recorded usage for the same prompts.
        assert "cache" in plan["total"]["token_estimate"]
        assert score(server, "-o", "scored.jsonl") == 0
        assert server.requests == 32
    assert SECRET not in capsys.readouterr().out


def test_a_plan_over_the_budget_refuses_to_start(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project / "rows.jsonl", rows(0, 4))
    with FakeOpenAI(responder=Judge()) as server:
        assert score(server, "--budget-usd", "0.000001", "-o", "scored.jsonl") == 1
        printed = capsys.readouterr()
        assert "refusing to start: the plan costs about $" in printed.err
        assert "over --budget-usd 1e-06" in printed.err
        assert "plan: 4 rows, judge judge-m, nothing called" in printed.err  # the plan shown
        assert server.requests == 0 and not (project / "scored.jsonl").exists()
        assert score(server, "--budget-usd", "5", "-o", "scored.jsonl") == 0
        assert server.requests == 16


def test_the_plan_table_names_each_metric_and_the_estimates(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project / "rows.jsonl", rows(0, 2))
    with FakeOpenAI(responder=Judge()) as server:
        assert score(server, "--plan") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "plan: 2 rows, judge judge-m, nothing called"
    assert lines[1].split() == ["metric", "judgments", "cached", "to", "call", "tokens", "in",
                                "tokens", "out", "USD"]  # fmt: skip
    assert lines[2].split()[:4] == ["context_recall", "2", "0", "2"]
    assert lines[-2].split()[:4] == ["total", "8", "0", "8"]
    assert lines[-1] == ("  tokens estimated from: characters (output at most ~1,466, the "
                         "replies' caps); 4 judgment(s) follow a missing "
                         "one and are sized from it")  # fmt: skip


def test_estimated_output_follows_the_reply_format_with_the_cap_as_the_bound(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project / "rows.jsonl", rows(0, 2))
    with FakeOpenAI(responder=Judge()) as server:
        assert score(server, "--plan", "--format", "json") == 0
    similarity = json.loads(capsys.readouterr().out)["metrics"]["similarity"]
    # A score and a short reason, not half the 300-token cap; the cap is the bound.
    assert similarity["token_estimate"] == ["characters"]
    assert similarity["tokens_out"] == 2 * 40
    assert similarity["tokens_out_at_most"] == 2 * 300


def test_a_budget_with_judge_batch_holds_the_batch_price(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project / "rows.jsonl", rows(0, 2))
    with FakeOpenAI(responder=Judge()) as server:
        assert score(server, "--plan", "--format", "json") == 0
        usd = json.loads(capsys.readouterr().out)["total"]["usd"]
        between = f"{usd * 0.75:.8f}"  # over the batch price, under the ordinary one
        assert score(server, "--budget-usd", between) == 1
        err = capsys.readouterr().err
        assert "at ordinary prices" in err and "add --judge-batch" in err
        assert score(server, "--budget-usd", f"{usd * 0.25:.8f}", "--judge-batch") == 1
        err = capsys.readouterr().err
        assert "at batch prices (--judge-batch)" in err and "raise --budget-usd" in err
        assert server.requests == 0
        assert score(server, "--budget-usd", between, "--judge-batch",
                     "--judge-batch-poll", "0.001") == 0  # fmt: skip
        assert server.batches.created >= 1


def test_bad_rows_are_named_by_line_before_anything_is_planned_or_sent(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = "".join(json.dumps(row) + "\n" for row in rows(0, 2))
    (project / "rows.jsonl").write_text(good + '{"id": "bad", "answer": \n[1]\n')
    with FakeOpenAI(responder=Judge()) as server:
        assert score(server, "--plan") == 2  # as the scoring run exits
        err = capsys.readouterr().err
        assert "rows.jsonl:3: not JSON" in err
        assert "rows.jsonl:4: a JSON list, not an object" in err
        assert score(server, "--judge-batch", "--judge-batch-poll", "0.001") == 2
        err = capsys.readouterr().err
        assert err.index("rows.jsonl:3: not JSON") < err.index("submitted")
        assert server.batches.created == 2  # the good rows still go: claims, then verdicts
