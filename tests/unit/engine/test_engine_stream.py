"""The streaming engine: same bytes for every number of workers, exact summaries and
gates in constant memory, bounded chunks in flight, workers always ended."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from pytest_textsim.engine import stream
from pytest_textsim.engine.chunks import CorpusNeed, MetricPlan, Plan
from pytest_textsim.engine.pool import Workers
from pytest_textsim.engine.tally import (
    SlotInfo,
    corpus_key,
    evaluate_gates,
    summaries,
)
from pytest_textsim.engine.tally import gate_globs as globs_of
from pytest_textsim.gating.gates import evaluate_gates as gates_over_records
from pytest_textsim.gating.gates import parse_gates
from pytest_textsim.records import records_from_output
from pytest_textsim.summary import summarize

PARITY = (
    Path(
        os.environ.get(
            "TEXTSIM_PARITY_DIR", Path(__file__).resolve().parents[4] / "shared" / "parity"
        )
    )
    / "corpus.jsonl"
)
SPECS = ("bleu_score", "meteor_score", "rouge_score:rouge1", "rouge_score:rougeL", "chrf_score")


def _plan(display: str, **extra) -> Plan:
    metrics = tuple(MetricPlan(s, 0.4, rename_keys=s.startswith("rouge")) for s in SPECS)
    return Plan(display, metrics, **extra)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The parity corpus twice: 1,180 rows, past the in-process limit."""
    text = PARITY.read_text(encoding="utf-8")
    path = tmp_path_factory.mktemp("corpus") / "corpus.jsonl"
    path.write_text(text + text, encoding="utf-8")
    return path


def _run(path: Path, jobs: int, out: Path, start_method: str | None = None, **plan):
    errors: list[str] = []
    pids: list[int] = []
    tally = stream.run(
        _plan("corpus.jsonl", **plan),
        stream.Source(str(path), "corpus.jsonl"),
        stream.Sink(str(out)),
        jobs=jobs,
        errors=lambda error: errors.append(str(error)),
        progress=stream.Progress(sys.stderr, False),
        start_method=start_method,
        on_workers=pids.extend,
    )
    return tally, errors, pids


@pytest.fixture(scope="module")
def in_process(corpus: Path, tmp_path_factory: pytest.TempPathFactory):
    """The corpus scored with one job (in this process): its tally, worker ids, output."""
    out = tmp_path_factory.mktemp("one") / "one.jsonl"
    one, errors, pids = _run(corpus, 1, out)
    assert errors == []
    return one, pids, out.read_bytes()


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_output_is_the_same_bytes_with_workers(
    corpus: Path, in_process, tmp_path: Path, method: str
) -> None:
    one, no_pids, one_bytes = in_process
    two, errors, pids = _run(corpus, 2, tmp_path / "two.jsonl", method)
    assert not no_pids and errors == []
    assert len(pids) == 2 and os.getpid() not in pids  # really scored by two workers
    assert one_bytes == (tmp_path / "two.jsonl").read_bytes()
    assert one.rows == two.rows == 1180
    info = [SlotInfo("x", None, {})] * len(SPECS)
    assert summaries(one, info) == summaries(two, info)
    for pid in pids:  # the workers are gone once the run is over
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_small_inputs_stay_in_process(tmp_path: Path) -> None:
    _, errors, pids = _run(PARITY, 2, tmp_path / "out.jsonl")
    assert errors == [] and pids == []
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 590


def test_tally_gives_the_summary_and_gates_of_the_records(tmp_path: Path) -> None:
    """Everything the summary and the gates print equals the record-based functions."""
    from pytest_textsim.engine.plan import metric_choice
    from pytest_textsim.nlp.batch import score_rows as score_evaluators

    gates = parse_gates(
        (g, "--gate")
        for g in [
            "bleu_score.mean >= 0.3", "bleu_score.p10 >= 0.01", "bleu_score.median > 0",
            "rouge_f1_score.p90 >= 0.5", "rouge_f1_score[rouge_type=rouge1].pass_rate >= 0.5",
            "meteor_score[test=corpus.jsonl:1?].min >= 0", "chrf_score.count == 590",
            "sacrebleu.corpus_bleu.score >= 30", "sacrebleu.corpus_ter.score <= 60",
            "sacrebleu.corpus_chrf[test=corpus.jsonl:2*].score >= 10",
            "gleu_score.mean >= 0", "meteor_score[rouge_type=rouge1].mean >= 0",
        ]
    )  # fmt: skip
    globs = tuple({globs_of(g) for g in gates if globs_of(g) and not g.is_corpus})
    needs = tuple(
        CorpusNeed(corpus_key(g), g.corpus_name, globs_of(g)) for g in gates if g.is_corpus
    )
    tally, errors, _ = _run(PARITY, 1, tmp_path / "o.jsonl", globs=globs, corpus=needs)
    assert errors == []
    choices = [metric_choice(s) for s in SPECS]
    info = [SlotInfo(c.name, c.variant, dict(c.options)) for c in choices]

    rows = [json.loads(line) for line in PARITY.read_text(encoding="utf-8").splitlines()]
    records = []
    evaluators = {str(i): c.build(0.4, None) for i, c in enumerate(choices)}  # type: ignore[arg-type]
    for number, out in enumerate(score_evaluators(rows, evaluators), 1):
        for i, choice in enumerate(choices):
            output = {k[len(f"{i}.") :]: v for k, v in out.items() if k.startswith(f"{i}.")}
            texts = {k: rows[number - 1][k] for k in ("response", "ground_truth")}
            for record in records_from_output(
                choice.name, output, params=dict(choice.options), inputs=texts, keep_texts=True
            ):
                record.nodeid = f"corpus.jsonl:{number}"
                record.variant = choice.variant
                records.append(record)
    expected = [
        (s.label, s.count, s.mean, s.min, s.max, s.passed, s.judged) for s in summarize(records)
    ]
    got = [
        (s.label, s.count, s.mean, s.min, s.max, s.passed, s.judged)
        for s in summaries(tally, info)[0]
    ]
    assert got == expected
    # The one difference: a corpus gate here keeps sums only (no .ci_* gate asks for the
    # pairs' statistics), so it shows no interval where the records' gate does.
    assert [r.line() for r in evaluate_gates(gates, tally, info)] == [
        re.sub(r", 95% CI [^)]*\)", ")", r.line()) if r.gate.is_corpus else r.line()
        for r in gates_over_records(gates, records)
    ]


def test_bad_lines_are_reported_and_the_rest_go_on(tmp_path: Path) -> None:
    data = tmp_path / "in.jsonl"
    good = json.dumps({"response": "a cat", "ground_truth": "a cat"})
    data.write_text("\n".join([good, "{oops", "", "[1]", '{"response": 1}', good]) + "\n")
    out = tmp_path / "out.jsonl"
    tally, errors, _ = _run(data, 1, out)
    assert errors == [
        "corpus.jsonl:2: not valid JSON (Expecting property name enclosed in double quotes "
        "at column 2)",
        "corpus.jsonl:4: expected a JSON object, got an array",
        'corpus.jsonl:5: "response" must be a string, got a number (1)',
        'corpus.jsonl:5: missing "ground_truth", needed by bleu_score, meteor_score, '
        "rouge_score:rouge1, rouge_score:rougeL, chrf_score; fields present: response",
    ]
    assert tally.rows == 2 and len(out.read_text().splitlines()) == 2


def _square(x: int) -> int:
    return x * x


def test_at_most_twice_the_jobs_in_flight_and_in_order() -> None:
    pulled = 0
    in_flight: list[int] = []

    def tasks():
        nonlocal pulled
        for i in range(40):
            pulled += 1
            yield (i,)

    results = []
    with Workers(2, "spawn") as workers:
        for value in workers.ordered_map(_square, tasks()):
            results.append(value)
            in_flight.append(pulled - len(results))
    assert results == [i * i for i in range(40)]
    assert max(in_flight) <= 3  # 4 submitted, the oldest one returned


def test_an_error_ends_the_workers() -> None:
    with pytest.raises(ZeroDivisionError):
        with Workers(2, "forkserver") as workers:
            for _ in workers.ordered_map(_square, [(1,), (2,)]):
                pids = workers.pids()
                raise ZeroDivisionError
    assert pids
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_tally_counts_each_row_below_threshold_once_across_chunks_and_late_judgments() -> None:
    from pytest_textsim.engine.tally import Tally

    def output(passed: bool) -> dict[str, object]:
        return {"f1_score": 1.0 if passed else 0.0, "f1_result": "pass" if passed else "fail"}

    first, second = Tally(), Tally()
    for tally, verdicts in ((first, [True, False, False]), (second, [False, True])):
        for row, passed in enumerate(verdicts):
            tally.add(0, output(passed), row, f"r{row}")
            tally.add(1, output(passed), row, f"r{row}")  # a second metric: still one row
            tally.rows += 1
    first.merge(second)
    assert (first.rows, first.rows_below) == (5, 3)
    first.add(2, output(False), 4, "r4", judge=True)  # a judge's score after the merge
    first.add(2, output(False), 1, "r1", judge=True)  # a row already below
    assert first.rows_below == 4
