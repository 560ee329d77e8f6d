"""Judge calls and wall time of the five RAG metrics against the local fake OpenAI server.

``--cases`` cases (default 200) of ``--chunks`` chunks each (default 5), every
case scored by all five RAG metrics (faithfulness, context precision, context
recall, context relevance, answer correctness) in one pytest test, one metric's
``each(cases=...)`` after another, one process, no xdist,
``textsim_judge_concurrency`` ``--concurrency`` (default 16), every reply taking
``--latency`` seconds (default 0.2). The judge is :class:`RagJudge`, which
answers each RAG prompt with a reply valid for it (claims, and one verdict per
claim or chunk). The run is made twice on one judge cache:

- cold: judge calls per case (target: at most 5), the calls per prompt, the most
  requests in flight at once, and the batch's wall time against its floor
  (calls x latency / concurrency; target: within 1.3x of it);
- warm: the same run again, every judgment cached (target: 0 calls).

Beside them: the batch's wall and CPU seconds (timed inside the test), the
pytest run's wall and CPU seconds, start-up included, and every score of the
two runs compared.

Run: ``NLTK_DATA=../shared/nltk_data .venv/bin/python benchmarks/bench_rag.py``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pytest_textsim.testing.fake_openai import FakeOpenAI
from pytest_textsim.testing.rag import RagJudge

KEY = "sk-bench-not-a-real-key"
METRICS = (
    "faithfulness", "context_precision", "context_recall", "context_relevance",
    "answer_correctness",
)  # fmt: skip

SUITE = """
import json, pathlib, resource, time

HERE = pathlib.Path(__file__).parent
CASES = json.loads((HERE / "cases.json").read_text())

def test_rag(faithfulness, context_precision, context_recall, context_relevance,
             answer_correctness):
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu, started = usage.ru_utime + usage.ru_stime, time.perf_counter()
    for metric in (faithfulness, context_precision, context_recall, context_relevance,
                   answer_correctness):
        metric.each(cases=CASES, ids="id")
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime - cpu
    (HERE / "batch_seconds.txt").write_text(f"{wall} {cpu}")
"""


def response_claims(i: int) -> list[str]:
    return [f"Item {i} ships in {i % 9 + 1} days.", f"Item {i} can be returned for 30 days."]


def truth_claims(i: int) -> list[str]:
    return [f"Item {i} is shipped within {i % 9 + 1} days.", f"Item {i} comes with a warranty."]


def cases(count: int, chunks: int) -> list[dict[str, Any]]:
    """Cases whose context holds the facts in its first two chunks, then noise."""
    rows = []
    for i in range(count):
        context = [
            {"text": f"Shipping policy {i}: item {i} ships in {i % 9 + 1} days.", "id": f"d{i}a"},
            {"text": f"Returns policy {i}: 30 days to return item {i}.", "id": f"d{i}b"},
        ]
        context += [{"text": f"Unrelated note {i}.{k}.", "id": f"d{i}n{k}"} for k in range(chunks)]
        rows.append({
            "id": f"case{i}",
            "query": f"How long does item {i} take to ship, and can it be returned?",
            "response": " ".join(response_claims(i)),
            "ground_truth": " ".join(truth_claims(i)),
            "context": context[:chunks],
        })  # fmt: skip
    return rows


def judge(rows: list[dict[str, Any]]) -> RagJudge:
    """Replies for every prompt: the response's first claim supported by chunk 1 and
    in the ground truth, its second supported by chunk 2 and not in the ground
    truth; the ground truth's warranty claim in no chunk and not in the response;
    the first two chunks relevant."""
    claims: dict[str, list[str]] = {}
    verdicts: dict[Any, Any] = {}
    for i, row in enumerate(rows):
        said, truth = response_claims(i), truth_claims(i)
        claims[row["response"]], claims[row["ground_truth"]] = said, truth
        verdicts[said[0]] = ("supported", 1)
        verdicts[said[1]] = ("supported", 2)
        verdicts[("context_recall", truth[0])] = ("attributed", 1)
        # A plain key would answer every prompt that numbers the claim.
        verdicts[("answer_correctness", said[0])] = "in_ground_truth"
        verdicts[("answer_correctness", said[1])] = "not_in_ground_truth"
        verdicts[("answer_correctness", truth[0])] = "in_response"
        for chunk in row["context"][:2]:
            verdicts[chunk["text"]] = "relevant"
    return RagJudge(claims=claims, verdicts=verdicts)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(project: Path, name: str) -> tuple[float, float, float, float, list[dict[str, Any]]]:
    """One pytest run: wall seconds, the batch's own wall and CPU seconds, the run's CPU
    seconds, score records."""
    report = project / f"{name}.json"
    env = dict(os.environ, OPENAI_API_KEY=KEY, TEXTSIM_CACHE_DIR=str(project / ".textsim_cache"))
    cpu, started = children_cpu(), time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         "--textsim-report=none", f"--textsim-json={report}", str(project)],
        cwd=project, env=env, capture_output=True, text=True,
    )  # fmt: skip
    wall, cpu = time.perf_counter() - started, children_cpu() - cpu
    if proc.returncode != 0:
        sys.exit(f"pytest run {name} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}")
    batch, batch_cpu = map(float, (project / "batch_seconds.txt").read_text().split())
    return wall, batch, batch_cpu, cpu, json.loads(report.read_text())["scores"]


def scores(records: list[dict[str, Any]]) -> dict[tuple[str, str], Any]:
    return {(r["test_id"], r["metric"]): (r["score"], r.get("passed")) for r in records}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--chunks", type=int, default=5, help="chunks per case (at least 2)")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per reply")
    parser.add_argument("--concurrency", type=int, default=16, help="judge calls at once")
    args = parser.parse_args()
    if args.chunks < 2:
        parser.error("--chunks: at least 2")

    rows = cases(args.cases, args.chunks)
    responder = judge(rows)
    with FakeOpenAI(latency=args.latency, responder=responder) as server, \
            tempfile.TemporaryDirectory() as tmp:  # fmt: skip
        project = Path(tmp)
        (project / "cases.json").write_text(json.dumps(rows))
        (project / "test_rag_bench.py").write_text(SUITE)
        (project / "pytest.ini").write_text(
            f"[pytest]\ntextsim_judge_model = bench-judge\n"
            f"textsim_judge_base_url = {server.base_url}\n"
            f"textsim_judge_concurrency = {args.concurrency}\n"
        )
        print(f"{args.cases} cases of {args.chunks} chunks, all five RAG metrics "
              f"(each(cases=...), one metric after another), {args.latency * 1000:.0f} ms "
              f"per reply, concurrency {args.concurrency}, one process, no xdist")  # fmt: skip
        cold_wall, cold_batch, cold_batch_cpu, cold_cpu, cold_scores = run(project, "cold")
        cold_calls, in_flight = server.requests, server.max_in_flight
        asked = dict(responder.asked)
        warm_wall, warm_batch, warm_batch_cpu, warm_cpu, warm_scores = run(project, "warm")
        warm_calls = server.requests - cold_calls

    per_case = cold_calls / args.cases
    floor = cold_calls * args.latency / args.concurrency
    ratio = cold_batch / floor
    table = [
        ("", "measured", "target"),
        ("judge calls per case, cold", f"{per_case:.2f} ({cold_calls} calls)", "<= 5"),
        ("judge calls per case, warm", f"{warm_calls / args.cases:.2f} ({warm_calls} calls)",
         "0"),
        ("most calls in flight", f"{in_flight}", f"{args.concurrency}"),
        ("cold batch (inside the test)", f"{cold_batch:.2f} s, {cold_batch_cpu:.1f} CPU s", "-"),
        (f"floor ({cold_calls} x {args.latency:g} / {args.concurrency})", f"{floor:.2f} s", "-"),
        ("cold batch / floor", f"{ratio:.2f}x", "<= 1.3x"),
        ("warm batch (inside the test)", f"{warm_batch:.2f} s, {warm_batch_cpu:.1f} CPU s", "-"),
        ("cold run (wall, pytest start-up included)", f"{cold_wall:.2f} s, {cold_cpu:.1f} CPU s",
         "-"),
        ("warm run (wall, pytest start-up included)", f"{warm_wall:.2f} s, {warm_cpu:.1f} CPU s",
         "-"),
    ]  # fmt: skip
    widths = [max(len(row[i]) for row in table) for i in range(3)]
    for row in table:
        print("  " + "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
    print("  calls per prompt, cold: "
          + ", ".join(f"{name} {count}" for name, count in sorted(asked.items())))  # fmt: skip
    same = scores(cold_scores) == scores(warm_scores)
    counted = sorted({r["metric"] for r in cold_scores})
    print(f"  scores: {len(cold_scores)} ({', '.join(counted)}); warm equal to cold: {same}")
    missed = [
        name for name, ok in (
            ("calls per case cold <= 5", per_case <= 5), ("0 calls warm", warm_calls == 0),
            ("wall <= 1.3x floor", ratio <= 1.3),
        ) if not ok
    ]  # fmt: skip
    print(f"  targets missed: {', '.join(missed)}" if missed else "  every target met")
    if not same or len(cold_scores) != args.cases * len(METRICS):
        sys.exit("the warm run's scores differ from the cold run's, or scores are missing")


if __name__ == "__main__":
    main()
