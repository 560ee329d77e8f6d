"""Gate expressions: parsing, aggregates and verdicts, as tables of exact values."""

from __future__ import annotations

import pytest

from pytest_textsim.gating.gates import (
    Gate,
    GateError,
    aggregate,
    corpus_pairs,
    evaluate_gates,
    parse_gate,
    parse_gates,
    percentile,
)
from pytest_textsim.records import ScoreRecord


def rec(metric: str, score: float, passed: bool | None = True, nodeid: str = "t::a", **kw):
    return ScoreRecord(
        metric_name=metric.split("_")[0], score_key=metric, score=score,
        threshold=None if passed is None else 0.5, passed=passed, nodeid=nodeid, **kw,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("text", "metric", "aggregate_", "op", "threshold", "filters"),
    [
        ("bleu_score.mean >= 0.35", "bleu_score", "mean", ">=", 0.35, ()),
        ("similarity.pass_rate >= 0.9", "similarity", "pass_rate", ">=", 0.9, ()),
        ("rouge_f1_score.min>=0.2", "rouge_f1_score", "min", ">=", 0.2, ()),
        ("  meteor_score.p10 > .3 ", "meteor_score", "p10", ">", 0.3, ()),
        ("ter_score.max <= 1e-1", "ter_score", "max", "<=", 0.1, ()),
        ("f1_score.median < 1", "f1_score", "median", "<", 1.0, ()),
        ("bleu_score.count == 12", "bleu_score", "count", "==", 12.0, ()),
        ("similarity.pass_rate >= 90%", "similarity", "pass_rate", ">=", 0.9, ()),
        ("sacrebleu.corpus_bleu.score >= 30", "sacrebleu.corpus_bleu", "score", ">=", 30.0, ()),
        ("sacrebleu.corpus_ter.score <= 60.5", "sacrebleu.corpus_ter", "score", "<=", 60.5, ()),
        ("sacrebleu[tokenize=intl].mean >= 0.2", "sacrebleu_score", "mean", ">=", 0.2,
         (("tokenize", "intl"),)),
        ("rouge_f1_score[rouge_type=rougeL].mean >= 0.3", "rouge_f1_score", "mean", ">=", 0.3,
         (("rouge_type", "rougeL"),)),
        ("bleu_score.p0 >= -0.5", "bleu_score", "p0", ">=", -0.5, ()),
        ("bleu_score.p100 >= 0", "bleu_score", "p100", ">=", 0.0, ()),
    ],
)  # fmt: skip
def test_parse(text, metric, aggregate_, op, threshold, filters) -> None:
    gate = parse_gate(text, "--textsim-gate")
    assert (gate.metric, gate.aggregate, gate.op, gate.filters) == (metric, aggregate_, op, filters)
    assert gate.threshold == pytest.approx(threshold)
    assert gate.expression == text.strip()
    assert gate.source == "--textsim-gate"
    assert gate.is_corpus == metric.startswith("sacrebleu.")


@pytest.mark.parametrize(
    ("text", "metric", "filters"),
    [
        ("meteor.mean >= 0.3", "meteor_score", ()),  # the fixture's name
        ("meteor_score.mean >= 0.3", "meteor_score", ()),  # the score key
        ("f1.mean >= 0.3", "f1_score", ()),  # the evaluator's name
        ("rouge.mean >= 0.3", "rouge_f1_score", ()),  # ROUGE's default score
        ("rouge[rougeL].mean >= 0.3", "rouge_f1_score", (("rouge_type", "rougeL"),)),
        ("rouge_recall[rouge1, test=t*].p10 >= 0.3", "rouge_recall",
         (("rouge_type", "rouge1"), ("test", "t*"))),
        ("rubric[clarity].mean >= 3", "rubric", (("name", "clarity"),)),
        ("semantic_similarity.mean >= 0.3", "semantic_similarity", ()),
        ("qa.mean >= 3", "qa", ()),  # QA's default is similarity's own score: no alias
        ("my_score.mean >= 0.3", "my_score", ()),  # a custom score, as written
    ],
)  # fmt: skip
def test_gate_names_a_metric_as_the_catalog_does(text: str, metric: str, filters) -> None:
    gate = parse_gate(text)
    assert (gate.metric, gate.filters, gate.expression) == (metric, filters, text)


def test_every_fixture_and_evaluator_name_gates_its_default_score() -> None:
    from pytest_textsim.catalog import METRICS

    checked = 0
    for entry in METRICS.values():
        default = entry.score_keys[entry.default_score]
        if next(m for m in METRICS.values() if default in m.score_keys.values()) is entry:
            assert parse_gate(f"{entry.fixture}.mean >= 0").metric == default
            assert parse_gate(f"{entry.name}.mean >= 0").metric == default
            checked += 1
    assert checked == len(METRICS) - 1  # all but QA


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("bleu_score >= 0.3", "expected METRIC.AGGREGATE OP NUMBER"),
        ("bleu_score.mean => 0.3", "expected METRIC.AGGREGATE OP NUMBER"),
        ("bleu_score.mean >= high", "expected METRIC.AGGREGATE OP NUMBER"),
        ("bleu_score.avg >= 0.3", "unknown aggregate 'avg'"),
        ("bleu_score.pNN >= 0.3", "unknown aggregate 'pNN'"),
        ("bleu_score.p101 >= 0.3", "'p101' is above p100"),
        ("bleu_score.mean.x >= 0.3", "unknown aggregate 'mean.x'"),
        ("sacrebleu.corpus_meteor.score >= 3", "unknown corpus metric 'sacrebleu.corpus_meteor'"),
        ("sacrebleu.corpus_bleu.mean >= 3", "write sacrebleu.corpus_bleu.score"),
        ("bleu_score[rougeL].mean >= 0.3", "filter 'rougeL' is not key=value"),
        ("", "expected METRIC.AGGREGATE OP NUMBER"),
        ("app.cost.sum <= 1", "unknown app figure 'cost' (did you mean 'cost_usd'?)"),
        ("apps.tokens.mean <= 1", "unknown figure 'apps.tokens' (did you mean 'app.tokens'?)"),
        ("judge.tokens.mean <= 1", "the judge's figures are totals of the run: write "
         "judge.tokens.sum"),
        ("judge.calls[test=a].sum <= 1", "the judge's figures are totals of the run: they "
         "take no [filters]"),
        ("app.calls.pass_rate >= 1", "unknown aggregate 'pass_rate' for app.calls"),
        ("app.calls[model=m].sum >= 1", "take only a [test=GLOB] filter, not 'model'"),
        ("app.tokens.mean.diff[model=a-b] >= 1", "a difference of variants is of scores"),
        ("app.cost_usd.sum.ci_high <= 1", "sum has no confidence interval"),
        ("trace.tool_call.max <= 1",
         "unknown trace figure 'tool_call' (did you mean 'tool_calls'?)"),
        ("trace.steps[model=m].max <= 1", "the trace figures take only a [test=GLOB] filter"),
    ],
)
def test_parse_errors_name_the_expression_and_source(text: str, message: str) -> None:
    with pytest.raises(GateError) as info:
        parse_gate(text, "textsim_gates in pytest.ini")
    prefix = f"invalid gate {text.strip()!r} (textsim_gates in pytest.ini): "
    assert str(info.value).startswith(prefix)
    assert message in str(info.value)


def test_parse_gates_reports_every_bad_expression() -> None:
    with pytest.raises(GateError) as info:
        parse_gates([("bleu_score.avg >= 1", "a"), ("ok.mean >= 1", "b"), ("x", "c"), ("", "d")])
    lines = str(info.value).splitlines()
    assert len(lines) == 2 and "(a)" in lines[0] and "(c)" in lines[1]
    assert [g.expression for g in parse_gates([("ok.mean >= 1", "b"), (" ", "d")])] == [
        "ok.mean >= 1"
    ]


SCORES = [0.1, 0.4, 0.2, 0.9, 0.5]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("mean", 0.42),
        ("min", 0.1),
        ("max", 0.9),
        ("median", 0.4),
        ("p0", 0.1),
        ("p10", 0.14),
        ("p25", 0.2),
        ("p50", 0.4),
        ("p90", 0.74),
        ("p100", 0.9),
        ("count", 5.0),
        ("pass_rate", 0.6),
        ("sum", 2.1),
    ],
)
def test_aggregates(name: str, expected: float) -> None:
    records = [rec("bleu_score", s, passed=s >= 0.4) for s in SCORES]
    assert aggregate(name, records) == pytest.approx(expected, abs=1e-12)


def test_aggregates_of_nothing() -> None:
    assert aggregate("mean", []) is None
    assert aggregate("p10", []) is None
    assert aggregate("pass_rate", [rec("x_score", 1.0, passed=None)]) is None
    assert aggregate("count", []) == 0.0
    assert aggregate("sum", []) is None
    assert percentile([3.0], 37) == 3.0
    assert aggregate("median", [rec("x", 1.0), rec("x", 2.0)]) == 1.5


def _results(expressions: list[str], records: list[ScoreRecord]):
    return evaluate_gates([parse_gate(e) for e in expressions], records)


def test_evaluate_verdicts_and_lines() -> None:
    records = [rec("bleu_score", s, passed=s >= 0.4) for s in SCORES]
    records.append(rec("meteor_score", 0.7))
    results = _results(
        ["bleu_score.mean >= 0.4", "bleu_score.p10 >= 0.2", "bleu_score.pass_rate >= 60%",
         "bleu_score.count == 5", "meteor_score.max < 0.7"],
        records,
    )  # fmt: skip
    assert [r.passed for r in results] == [True, False, True, True, False]
    assert [r.line() for r in results] == [
        "PASS bleu_score.mean >= 0.4: 0.4200 (mean of 5 scores)",
        "FAIL bleu_score.p10 >= 0.2: 0.1400 (p10 of 5 scores)",
        "PASS bleu_score.pass_rate >= 60%: 0.6000 (3 of 5 passed)",
        "PASS bleu_score.count == 5: 5 (5 scores)",
        "FAIL meteor_score.max < 0.7: 0.7000 (max of 1 score)",
    ]


def test_gate_over_missing_metric_fails_clearly() -> None:
    (result,) = _results(["blue_score.mean >= 0.3"], [rec("bleu_score", 0.5), rec("f1_score", 1)])
    assert not result.passed and result.value is None
    assert result.line() == (
        "FAIL blue_score.mean >= 0.3: no value (no blue_score scores were recorded; "
        "unknown metric 'blue_score' (did you mean 'bleu_score'?); "
        "recorded metrics: bleu_score, f1_score)"
    )
    (empty,) = _results(["bleu_score.count >= 0"], [])
    assert empty.passed  # count of nothing is 0, a valid answer
    (none,) = _results(["bleu_score.mean >= 0"], [])
    assert none.detail == "no bleu_score scores were recorded; no scores were recorded"
    (judge,) = _results(["x_score.pass_rate >= 0.5"], [rec("x_score", 1.0, passed=None)])
    assert not judge.passed
    assert judge.detail == (
        "pass_rate counts only scores with a threshold, and none of the 1 x_score score has "
        "one; pass threshold= to the fixture or set textsim_threshold_x"
    )
    # Scores without a verdict are left out of the rate, not counted as passed or failed.
    (mixed,) = _results(
        ["bleu_score.pass_rate >= 0.5"],
        [rec("bleu_score", 0.9, passed=None), rec("bleu_score", 0.1, passed=False),
         rec("bleu_score", 0.6, passed=True)],
    )  # fmt: skip
    assert mixed.value == 0.5 and mixed.detail == "1 of 2 passed"


def test_filters_select_by_params() -> None:
    records = [
        rec("rouge_f1_score", 0.2, params={"rouge_type": "rouge1"}),
        rec("rouge_f1_score", 0.6, params={"rouge_type": "rougeL"}),
        rec("rouge_f1_score", 0.8, params={"rouge_type": "rougeL"}),
    ]
    mean_l, min_all, none = _results(
        ["rouge_f1_score[rouge_type=rougeL].mean >= 0.7", "rouge_f1_score.min >= 0.2",
         "rouge_f1_score[rouge_type=rouge2].mean >= 0"],
        records,
    )  # fmt: skip
    assert (mean_l.value, mean_l.passed) == (pytest.approx(0.7), True)
    assert (min_all.value, min_all.passed) == (0.2, True)
    assert not none.passed and none.detail == (
        "no rouge_f1_score scores matching rouge_type=rouge2 were recorded; "
        "rouge_type is one of rouge1, rougeL"
    )
    (typo,) = _results(["rouge_f1_score[rouge_tpye=rougeL].mean >= 0"], records)
    assert not typo.passed and typo.detail == (
        "no rouge_f1_score score has a parameter 'rouge_tpye'; filters can use: test, rouge_type"
    )


def _pair(nodeid: str, response: str, truth: str, metric: str = "bleu_score") -> ScoreRecord:
    return rec(metric, 0.5, nodeid=nodeid, texts={"response": response, "ground_truth": truth})


def test_corpus_pairs_are_distinct_and_ordered_by_test() -> None:
    records = [
        _pair("t::b", "b1", "B1"),
        _pair("t::a", "a1", "A1"),
        _pair("t::a", "a1", "A1", metric="rouge_f1_score"),  # same pair, another metric
        _pair("t::a", "a2", "A2"),
        rec("fluency", 4.0, texts={"response": "only a response"}),
        rec("bleu_score", 0.3),  # texts not kept
    ]
    assert corpus_pairs(records) == [("a1", "A1"), ("a2", "A2"), ("b1", "B1")]


def test_corpus_gate_value_and_signature() -> None:
    records = [_pair("t::a", "the cat sat on the mat", "the cat sat on the mat")]
    bleu, ter, chrf = _results(
        ["sacrebleu.corpus_bleu.score >= 30", "sacrebleu.corpus_ter.score <= 0",
         "sacrebleu.corpus_chrf.score > 100"],
        records,
    )  # fmt: skip
    assert (bleu.value, bleu.passed, bleu.detail) == (pytest.approx(100.0), True, "1 pair")
    assert bleu.signature is not None and bleu.signature.startswith("nrefs:1|case:mixed|eff:no")
    line = "PASS sacrebleu.corpus_bleu.score >= 30: 100.0000 (1 pair) [nrefs:"
    assert bleu.line().startswith(line)
    assert (ter.value, ter.passed) == (0.0, True)
    assert (chrf.value, chrf.passed) == (pytest.approx(100.0), False)


def test_corpus_gate_without_texts_fails_clearly() -> None:
    (result,) = _results(["sacrebleu.corpus_bleu.score >= 30"], [rec("bleu_score", 0.5)])
    assert not result.passed and result.value is None
    assert "no response/ground_truth pairs were recorded with their texts" in result.detail


def test_gate_dataclass_properties() -> None:
    gate = Gate("x", "sacrebleu.corpus_chrf", "score", ">=", 1.0)
    assert gate.is_corpus and gate.corpus_name == "corpus_chrf"
    assert Gate("x", "bleu_score", "mean", ">=", 1.0).corpus_name == ""


def test_test_id_filter_for_sentence_and_corpus_gates() -> None:
    records = [
        _pair("tests/test_mt.py::test_a", "the cat sat on the mat", "the cat sat on the mat"),
        _pair("tests/test_qa.py::test_b", "a dog", "the cat sat on the mat"),
        rec("bleu_score", 0.1, nodeid="tests/test_qa.py::test_c"),
    ]
    mt, qa, corpus_mt, corpus_all, nothing = _results(
        ["bleu_score[test=tests/test_mt.py::*].count == 1",
         "bleu_score[test=*test_qa.py::*].count == 2",
         "sacrebleu.corpus_bleu[test=tests/test_mt.py::*].score >= 99",
         "sacrebleu.corpus_bleu.score >= 99",
         "sacrebleu.corpus_ter[test=nowhere/*].score <= 1"],
        records,
    )  # fmt: skip
    assert [r.passed for r in (mt, qa, corpus_mt, corpus_all, nothing)] == [
        True, True, True, False, False,
    ]  # fmt: skip
    assert corpus_mt.detail == "1 pair" and corpus_all.detail == "2 pairs"
    assert nothing.detail.startswith("no response/ground_truth pairs matching test=nowhere/* ")
    gate = parse_gate("sacrebleu.corpus_chrf[test=a/*, rouge_type=x].score > 1")
    assert gate.filters == (("test", "a/*"), ("rouge_type", "x"))


def test_figure_gates_over_nothing_fail_saying_where_figures_come_from() -> None:
    from pytest_textsim.gating.figures import Figures, evaluate

    nothing = evaluate(parse_gate("app.calls.sum <= 3"), Figures())
    assert (nothing.passed, nothing.empty) == (False, True)
    assert nothing.detail == (
        "no test made a model call that pytest-textsim saw (the app's figures come from "
        "tests that ask for llm_calls or are marked textsim_replay)"
    )
    untimed = evaluate(
        parse_gate("app.latency_s.max <= 3"), Figures(tests={"t::a": {"calls": 2.0}})
    )
    assert untimed.detail == (
        "no latency was measured for the calls of 1 test (replayed from cassettes "
        "recorded without timings)"
    )
    spent = evaluate(parse_gate("judge.cached.sum >= 2"), Figures(judge={"cached": 3.0}))
    assert (spent.value, spent.passed, spent.detail) == (
        3.0, True, "cached judgments used in this run"
    )
    # A sum over the scores of a misspelt metric fails too: nothing is no 0.
    (typo,) = evaluate_gates([parse_gate("bleu_scor.sum >= 0")], [rec("bleu_score", 0.5)])
    assert not typo.passed and "did you mean 'bleu_score'?" in typo.detail


def test_trace_gates_aggregate_each_tests_trace_figures() -> None:
    from pytest_textsim.gating.figures import Figures, evaluate

    figures = Figures(
        tests={"t::a": {"calls": 9.0}},  # the app's figures are not the traces'
        traces={
            "t::a": {"steps": 4.0, "tool_calls": 2.0, "error_spans": 0.0, "tokens": 62.0},
            "t::b": {"steps": 9.0, "tool_calls": 7.0, "error_spans": 1.0},
        },
    )
    errors, tools, tools_a, tokens = (
        evaluate(parse_gate(text), figures)
        for text in ("trace.error_spans.max <= 0", "trace.tool_calls.mean <= 5",
                     "trace.tool_calls[test=t::a].max <= 2", "trace.tokens.sum <= 100")
    )  # fmt: skip
    assert (errors.value, errors.passed, errors.detail) == (1.0, False, "max of 2 tests")
    assert (tools.value, tools.passed) == (4.5, True)
    assert (tools_a.value, tools_a.passed) == (2.0, True)
    assert (tokens.value, tokens.passed, tokens.detail) == (62.0, True, "sum of 1 test")
    nothing = evaluate(parse_gate("trace.steps.max <= 3"), Figures(tests={"t::a": {"calls": 1.0}}))
    assert (nothing.passed, nothing.detail) == (False, (
        "no test produced spans that pytest-textsim collected (the trace figures come "
        "from tests that ask for agent_trace, or all with textsim_traces)"
    ))  # fmt: skip
    untold = evaluate(parse_gate("trace.tokens.max <= 3"), Figures(traces={"t::b": {"steps": 1.0}}))
    assert untold.detail == "none of the model-call spans of 1 test recorded token usage"
