"""Baselines: the saved file, loading (baselines and JSON reports), tolerances, comparison."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_textsim.gating import baseline
from pytest_textsim.gating.baseline import BaselineError, Entry, entries_from_records
from pytest_textsim.gating.compare import compare, unmatched
from pytest_textsim.gating.regressions import regressed, report_lines
from pytest_textsim.records import ScoreRecord
from pytest_textsim.settings.tolerances import Tolerances, parse_tolerances


def rec(nodeid: str, metric: str, score: float, evaluator: str = "", **kw) -> ScoreRecord:
    return ScoreRecord(
        metric_name=evaluator or metric.split("_")[0], score_key=metric, score=score,
        threshold=0.5, passed=True, nodeid=nodeid, **kw,
    )  # fmt: skip


RECORDS = [
    rec("t.py::b", "bleu_score", 0.25),
    rec("t.py::a", "rouge_f1_score", 0.5, "rouge",
        params={"rouge_type": "rougeL"}, variant="rougeL"),
    rec("t.py::a", "bleu_score", 0.1550967560878879),
    rec("t.py::a", "bleu_score", 0.75),  # a second BLEU call in the same test
    rec("t.py::a", "similarity", 4.0, params={"prompt_version": "2", "model": "m"},
        reason="close", texts={"response": "secret text", "ground_truth": "x"}),
]  # fmt: skip

EXPECTED_FILE = """\
{
  "format": "pytest-textsim baseline",
  "version": 2,
  "scores": [
    {"test": "t.py::a", "evaluator": "bleu", "metric": "bleu_score", "params": {}, "score": 0.1550967560878879},
    {"test": "t.py::a", "evaluator": "bleu", "metric": "bleu_score", "params": {}, "score": 0.75, "index": 1},
    {"test": "t.py::a", "evaluator": "rouge", "metric": "rouge_f1_score", "variant": "rougeL", "params": {"rouge_type": "rougeL"}, "score": 0.5},
    {"test": "t.py::a", "evaluator": "similarity", "metric": "similarity", "params": {"model": "m", "prompt_version": "2"}, "score": 4.0},
    {"test": "t.py::b", "evaluator": "bleu", "metric": "bleu_score", "params": {}, "score": 0.25}
  ]
}
"""  # noqa: E501


def test_save_writes_a_sorted_one_line_per_score_file(tmp_path) -> None:
    path = tmp_path / "sub" / "baseline.json"
    baseline.save(path, RECORDS)
    assert path.read_text(encoding="utf-8") == EXPECTED_FILE
    assert "secret text" not in EXPECTED_FILE and "close" not in EXPECTED_FILE
    # Stable: the same scores in another order give the same bytes.
    baseline.save(tmp_path / "again.json", list(reversed(RECORDS[:1])) + RECORDS[1:])
    assert (tmp_path / "again.json").read_text(encoding="utf-8") == EXPECTED_FILE
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["baseline.json"]  # no temp files


def test_load_round_trips(tmp_path) -> None:
    path = tmp_path / "b.json"
    saved = baseline.save(path, RECORDS)
    assert baseline.load(path) == saved
    empty = tmp_path / "empty.json"
    baseline.save(empty, [])
    assert baseline.load(empty) == []


def test_load_a_json_report(tmp_path) -> None:
    scores = []
    for r in RECORDS:  # the --textsim-json shape (pytest_textsim.plugin.outputs)
        row = r.to_dict()
        row["test_id"] = row.pop("nodeid")
        scores.append(row)
    report = {"format": "pytest-textsim/1", "header": {}, "scores": scores}
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    assert baseline.load(path) == entries_from_records(RECORDS)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "b.json:1: not valid JSON (Expecting property name"),
        ("[1, 2]", "not a pytest-textsim baseline or --textsim-json report"),
        ('{"format": "pytest-textsim baseline", "version": 9, "scores": []}',
         "format version 9 is newer than this pytest-textsim understands (2)"),
        ('{"format": "pytest-textsim baseline", "version": 1, "scores": {}}',
         '"scores" must be a list'),
        ('{"format": "pytest-textsim baseline", "version": 1, "scores": [{"test": "x"}]}',
         "score #1 must be an object with test, evaluator, metric, params and a finite numeric "
         "score"),
        ('{"format": "pytest-textsim baseline", "version": 1, "scores": [{"test": "x", '
         '"evaluator": "b", "metric": "m", "score": "0.5"}]}', "numeric score"),
        ('{"format": "pytest-textsim/1", "scores": [{"nodeid": "x", "metric": "m", "score": 1}]}',
         "score #1 must have test_id, evaluator, metric and a finite numeric score"),
        ('{"format": "pytest-textsim/1", "scores": null}', '"scores" must be a list'),
        ('{"format": "pytest-textsim baseline", "version": "2", "scores": []}',
         '"version" must be a whole number such as 2 (the baseline format version), got "2"'),
        ('{"format": "pytest-textsim baseline", "version": true, "scores": []}',
         '"version" must be a whole number such as 2 (the baseline format version), got true'),
        # Listed twice (a merge that kept both sides): neither may silently win.
        ('{"format": "pytest-textsim baseline", "version": 2, "scores": ['
         '{"test": "t::a", "evaluator": "bleu", "metric": "bleu_score", "score": 0.2}, '
         '{"test": "t::b", "evaluator": "bleu", "metric": "bleu_score", "score": 0.2}, '
         '{"test": "t::a", "evaluator": "bleu", "metric": "bleu_score", "score": 0.9}]}',
         "score #3 repeats score #1 (t::a, bleu bleu_score): keep one of them, or save the "
         "baseline again"),
    ],
)  # fmt: skip
def test_load_errors_name_the_file(tmp_path, content: str, message: str) -> None:
    path = tmp_path / "b.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(BaselineError) as info:
        baseline.load(path)
    assert str(info.value).startswith(str(path))
    assert message in str(info.value)


def test_load_missing_file_says_how_to_create_it(tmp_path) -> None:
    with pytest.raises(BaselineError, match="no such file; create it with --textsim-save-baseline"):
        baseline.load(tmp_path / "nope.json")


@pytest.mark.parametrize(
    ("value", "default", "per_metric"),
    [
        ("0.05", 0.05, {}),
        (0.1, 0.1, {}),
        ("bleu_score=0.05, similarity = 1", None, {"bleu_score": 0.05, "similarity": 1.0}),
        (["0.03", "bleu_score = 0.05", ""], 0.03, {"bleu_score": 0.05}),
        (["meteor_score=0", "rouge_f1_score=0.1\nbleu_score=0.2"], None,
         {"meteor_score": 0.0, "rouge_f1_score": 0.1, "bleu_score": 0.2}),
        ([], None, {}),
    ],
)  # fmt: skip
def test_parse_tolerances(value, default, per_metric) -> None:
    assert parse_tolerances(value) == Tolerances(default, per_metric)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("lots", "'lots': expected a number (0.05) or metric=number (bleu_score=0.05)"),
        ("bleu_score=x", "'bleu_score=x': expected a number"),
        ("=0.1", "'=0.1': expected metric=number"),
        ("-0.1", "'-0.1': a tolerance must be a number >= 0"),
        ("nan", "a tolerance must be a number >= 0"),
        ({"a": 1}, "expected a number or metric=number entries"),
    ],
)
def test_parse_tolerance_errors(value, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_tolerances(value)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("tolerances", "metric", "evaluator", "expected"),
    [
        (Tolerances(), "bleu_score", "bleu", 0.02),
        (Tolerances(), "similarity", "similarity", 0.0),
        (Tolerances(), "coherence", "qa", 0.0),
        (Tolerances(), "f1_score", "qa", 0.02),
        (Tolerances(0.1), "similarity", "similarity", 0.1),
        (Tolerances(0.1, {"bleu_score": 0.3}), "bleu_score", "bleu", 0.3),
        (Tolerances(None, {"similarity": 1.0}), "similarity", "similarity", 1.0),
    ],
)
def test_tolerance_for_metric(tolerances, metric, evaluator, expected) -> None:
    assert tolerances.for_metric(metric, evaluator) == expected


def E(test: str, metric: str, score: float, **kw) -> Entry:
    return Entry(test, kw.pop("evaluator", metric.split("_")[0]), metric, score, **kw)


@pytest.mark.parametrize(
    ("old", "new", "kind"),
    [
        (E("a", "bleu_score", 0.50), E("a", "bleu_score", 0.47), "regression"),
        (E("a", "bleu_score", 0.50), E("a", "bleu_score", 0.48), "unchanged"),  # at tolerance
        (E("a", "bleu_score", 0.50), E("a", "bleu_score", 0.52), "unchanged"),
        (E("a", "bleu_score", 0.50), E("a", "bleu_score", 0.53), "improvement"),
        (E("a", "similarity", 4.0), E("a", "similarity", 3.0), "regression"),
        (E("a", "similarity", 4.0), E("a", "similarity", 5.0), "improvement"),
        (E("a", "similarity", 4.0), E("a", "similarity", 4.0), "unchanged"),
        # TER: lower is better, so a rise is the regression.
        (E("a", "ter_score", 0.30), E("a", "ter_score", 0.40), "regression"),
        (E("a", "ter_score", 0.40), E("a", "ter_score", 0.30), "improvement"),
        (E("a", "similarity", 4.0, params={"prompt_version": "1"}),
         E("a", "similarity", 2.0, params={"prompt_version": "2"}), "incomparable"),
    ],
)  # fmt: skip
def test_compare_one_score(old: Entry, new: Entry, kind: str) -> None:
    (change,) = compare([old], [new]).changes
    assert change.kind == kind
    assert (change.old, change.new) == (old.score, new.score)


def test_compare_new_vanished_not_run_and_tolerances() -> None:
    old = [E("a", "bleu_score", 0.5), E("gone", "bleu_score", 0.3), E("skipped", "f1_score", 1)]
    new = [E("a", "bleu_score", 0.4), E("fresh", "bleu_score", 0.9)]
    tolerances = Tolerances(None, {"bleu_score": 0.2})
    result = compare(old, new, tolerances)
    assert [(c.kind, c.test) for c in result.changes] == [
        ("unchanged", "a"), ("new", "fresh"), ("vanished", "gone"), ("vanished", "skipped"),
    ]  # fmt: skip
    # The plugin says which tests did not run this time: their scores are "not run".
    result = compare(old, new, tolerances, not_run={"skipped"}.__contains__)
    assert result.counts() == {
        "regression": 0, "improvement": 0, "unchanged": 1, "new": 1, "vanished": 1,
        "not run": 1, "incomparable": 0,
    }  # fmt: skip


def test_a_tolerance_for_a_metric_nowhere_is_reported() -> None:
    old = [E("a", "bleu_score", 0.5), E("a", "meteor_score", 0.5)]
    new = [E("a", "bleu_score", 0.4), E("b", "rouge_f1_score", 0.4)]
    tolerances = Tolerances(None, {"blue_score": 0.2, "meteor_score": 0.1, "rouge_f1_score": 0})
    result = compare(old, new, tolerances)
    assert result.unmatched_tolerances == ["blue_score"]  # a metric on one side is used
    lines = list(report_lines(result, "b.json"))
    assert lines[-2:] == [
        "tolerance for 'blue_score' matches no score; metrics here: bleu_score, meteor_score, "
        "rouge_f1_score",
        "scores: 1 regressed, 0 improved, 0 unchanged, 1 new, 1 vanished",
    ]
    assert not any("tolerance for" in line for line in report_lines(compare(old, new), ""))


_ROOT_FILES = ("tests/test_a.py", "tests/test_left_out.py")


@pytest.mark.parametrize(
    ("test", "narrowed", "kind"),
    [
        ("tests/test_a.py::test_ran", False, "vanished"),  # ran, recorded no such score
        ("tests/test_a.py::test_skipped", False, "not run"),  # collected, no call phase
        ("tests/test_a.py::test_k", False, "not run"),  # deselected
        ("tests/test_a.py::test_removed", False, "vanished"),  # its file was collected
        ("tests/test_a.py::test_removed", True, "not run"),  # tests/test_a.py::test_ran given
        ("tests/test_left_out.py::test_x", False, "not run"),  # file exists, not collected
        ("tests/test_deleted.py::test_x", False, "vanished"),  # file gone
    ],
)  # fmt: skip
def test_which_tests_did_not_run(tmp_path, test: str, narrowed: bool, kind: str) -> None:
    from pytest_textsim.plugin.gating import SeenTests

    for name in _ROOT_FILES:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("", encoding="utf-8")
    seen = SeenTests(
        tmp_path,
        narrowed,
        selected={"tests/test_a.py::test_ran", "tests/test_a.py::test_skipped"},
        deselected={"tests/test_a.py::test_k"},
        ran={"tests/test_a.py::test_ran"},
    )
    (change,) = compare([E(test, "bleu_score", 0.5)], [], not_run=seen.not_run).changes
    assert change.kind == kind


def _scores(*tests: str) -> list[Entry]:
    return [E(test, metric, 0.5) for test in tests for metric in ("bleu_score", "f1_score")]


@pytest.mark.parametrize(
    ("new", "not_run", "refused"),
    [
        (["a", "b", "c", "d"], (), False),
        (["a", "b"], (), False),  # half of the baseline's scores match: compared
        (["a"], (), True),  # fewer than half
        (["a", "x", "y", "z"], (), True),  # however many new tests there are
        ([], (), True),
        (["a"], ("b", "c"), False),  # tests that did not run are not counted
        (["a"], ("b",), True),  # 1 of the 3 that count
        ([], ("a", "b", "c", "d"), False),  # nothing left to count: nothing to refuse
        (["b"], ("b", "c"), True),  # a test that ran counts, even if not_run says otherwise
    ],
)  # fmt: skip
def test_a_comparison_needs_half_of_the_baselines_scores(new, not_run, refused) -> None:
    old = _scores("a", "b", "c", "d")
    problem = unmatched(old, new, not_run=set(not_run).__contains__)
    assert bool(problem) is refused


def test_a_comparison_of_nothing_names_both_sides() -> None:
    old = _scores(*(f"q{n}" for n in range(12)))
    problem = unmatched(old, (f"row {n}" for n in range(12, 0, -1)), old_name="base.json",
                        new_name="out.jsonl", fix="use --id-field")  # fmt: skip
    assert problem == (
        "only 0 of 24 scores of base.json belong to a test of out.jsonl, fewer than half: "
        "the two name their tests differently, so every score would be new or vanished and "
        "nothing could regress. base.json has 'q0', 'q1', 'q2', ... (12 tests); out.jsonl "
        "has 'row 1', 'row 2', 'row 3', ... (12 tests); use --id-field"
    )
    # The run's tests that the baseline knows are left out of its list when others are not.
    assert unmatched(old[:6], ["q0", "z"]).endswith("this run has 'z'")
    assert unmatched(old[:6], []).endswith("this run has no test")


def test_a_file_already_holding_the_baseline_is_left_alone(tmp_path) -> None:
    path = tmp_path / "b.json"
    entries = entries_from_records(RECORDS)
    assert baseline.write(path, entries) is True
    path.touch()
    stamp = path.stat().st_mtime_ns
    assert baseline.write(path, entries) is False
    assert path.stat().st_mtime_ns == stamp
    assert baseline.write(path, entries[1:]) is True
    assert baseline.load(path) == entries[1:]
    assert baseline.describe_same_or_replaced(entries, written=False, unreadable="") == (
        "unchanged, 5 scores of 2 tests"
    )


def test_variants_are_different_scores() -> None:
    old = [E("a", "rouge_f1_score", 0.5, variant="rouge1")]
    new = [E("a", "rouge_f1_score", 0.5, variant="rougeL")]
    kinds = [(c.kind, c.metric) for c in compare(old, new).changes]
    assert kinds == [("vanished", "rouge_f1_score (rouge1)"), ("new", "rouge_f1_score (rougeL)")]


def test_report_lines() -> None:
    old = [
        E("t::a", "bleu_score", 0.5),
        E("t::b", "similarity", 4.0),
        E("t::c", "meteor_score", 0.2),
        E("t::gone", "bleu_score", 0.3),
        E("t::d", "similarity", 5.0, params={"prompt_version": "1"}),
    ]
    new = [
        E("t::a", "bleu_score", 0.3),
        E("t::b", "similarity", 3.0),
        E("t::c", "meteor_score", 0.6),
        E("t::new", "bleu_score", 0.3),
        E("t::d", "similarity", 4.0, params={"prompt_version": "2"}),
    ]
    assert list(report_lines(compare(old, new), "base.json")) == [
        "test  metric      baseline  now     change   tolerance",
        "t::a  bleu_score  0.5000    0.3000  -0.2000  0.0200",
        "t::b  similarity  4         3       -1       0",
        "improved (1 score):",
        "  t::c meteor_score 0.2000 -> 0.6000",
        "new, not in the baseline (1 test, 1 score):",
        "  t::new (bleu_score)",
        "vanished, in the baseline but no longer recorded (1 test, 1 score):",
        "  t::gone (bleu_score)",
        "not compared (1 score): the evaluator parameters differ from the baseline's, so the "
        "scores measure different things; save a new baseline with --textsim-save-baseline",
        '  similarity: prompt_version "1" -> "2" (1 score, e.g. t::d)',
        "scores: 2 regressed, 1 improved, 0 unchanged, 1 new, 1 vanished, 1 not compared",
    ]


def test_numbers_of_a_row_are_formatted_alike() -> None:
    old = [E("t::a", "bleu_score", 1.0), E("t::b", "rouge_f1_score", 0.7), E("t::c", "x", 0.9)]
    new = [E("t::a", "bleu_score", 0.7), E("t::b", "rouge_f1_score", 0.0), E("t::c", "x", 1.0)]
    lines = list(report_lines(compare(old, new), "base.json"))
    assert lines[:3] == [
        "test  metric          baseline  now     change   tolerance",
        "t::a  bleu_score      1.0000    0.7000  -0.3000  0.0200",
        "t::b  rouge_f1_score  0.7000    0.0000  -0.7000  0.0200",
    ]
    assert "  t::c x 0.9000 -> 1.0000" in lines


def test_report_without_regressions_says_so() -> None:
    same = [E("t::a", "bleu_score", 0.5)]
    assert list(report_lines(compare(same, same), "base.json")) == [
        "no regressions against base.json",
        "scores: 0 regressed, 0 improved, 1 unchanged, 0 new, 0 vanished",
    ]


def test_long_lists_are_brief() -> None:
    old = [E(f"t::old{i}", "bleu_score", 0.5) for i in range(7)]
    new = [E(f"t::new{i}", "bleu_score", 0.5) for i in range(6)]
    lines = list(report_lines(compare(old, new)))
    assert lines[1:8] == [
        "new, not in the baseline (6 tests, 6 scores):",
        "  t::new0 (bleu_score)", "  t::new1 (bleu_score)", "  t::new2 (bleu_score)",
        "  t::new3 (bleu_score)", "  t::new4 (bleu_score)", "  ... and 1 more test",
    ]  # fmt: skip
    assert lines[-2] == "  ... and 2 more tests"


def test_describe_change_says_how_a_new_baseline_differs() -> None:
    from pytest_textsim.gating.baseline import describe_change

    old = [E(f"t::{i}", "bleu_score", 0.5) for i in range(70)]
    new = old[18:]
    assert describe_change(old, new) == (
        "70 -> 52 scores: 18 tests no longer scored (t::0, t::1, t::10, ...)"
    )
    changed = [E("t::20", "bleu_score", 0.6), *old[21:], E("t::new", "f1_score", 1.0)]
    assert describe_change(old[20:], changed) == (
        "50 -> 51 scores: 1 test newly scored, 1 score changed"
    )
    assert describe_change(old, old) == "70 -> 70 scores, unchanged"
    assert describe_change(None, new) == "new file, 52 scores of 52 tests"


def test_the_apps_cost_and_tokens_regress_on_a_relative_rise() -> None:
    def app(test: str, metric: str, score: float) -> Entry:
        return Entry(test, "app", metric, score)

    old = [app("t::a", "app.cost_usd", 0.002), app("t::b", "app.tokens", 800.0),
           app("t::c", "app.tokens", 800.0), app("t::d", "app.cost_usd", 0.002)]  # fmt: skip
    new = [app("t::a", "app.cost_usd", 0.0023), app("t::b", "app.tokens", 870.0),
           app("t::c", "app.tokens", 700.0), app("t::d", "app.cost_usd", 0.0021)]  # fmt: skip
    kinds = {c.test: (c.kind, c.tolerance) for c in compare(old, new).changes}
    # 15% more cost, 8.75% more tokens, 12.5% fewer tokens, 5% more cost: within 10%
    # only the rises below it; a fall beyond it is an improvement.
    assert kinds == {
        "t::a": ("regression", pytest.approx(0.0002)),
        "t::b": ("unchanged", 80.0),
        "t::c": ("improvement", 80.0),
        "t::d": ("unchanged", pytest.approx(0.0002)),
    }
    wider = compare(old, new, max_cost_rise=0.2)
    assert [c.kind for c in wider.changes].count("regression") == 0
    # A cost is not a 0..1 score: no paired bootstrap of it among the metrics' tests.
    assert wider.metric_tests == []
    assert list(report_lines(compare(old, new)))[:2] == [
        "test  metric        baseline  now     change   tolerance",
        "t::a  app.cost_usd  0.002     0.0023  +0.0003  0.0002",
    ]
    # The verdict counts a cost or a token count apart from the scores.
    assert regressed(compare(old, new)) == "1 app figure"
    scores = [Entry("t::a", "bleu", "bleu_score", 0.9), Entry("t::b", "bleu", "bleu_score", 0.9)]
    worse = [Entry("t::a", "bleu", "bleu_score", 0.5), Entry("t::b", "bleu", "bleu_score", 0.5)]
    assert regressed(compare(old + scores, new + worse)) == "2 scores and 1 app figure"


def test_trace_figures_are_saved_and_regress_like_the_apps() -> None:
    from pytest_textsim.gating.figures import Figures, baseline_records

    figures = Figures(
        tests={"t::a": {"calls": 1.0, "tokens": 80.0}},
        traces={"t::a": {"steps": 4.0, "tool_calls": 2.0, "model_calls": 1.0,
                         "handoffs": 1.0, "duration_s": 0.5, "error_spans": 0.0}},
    )  # fmt: skip
    saved = sorted((r.metric_name, r.score_key, r.score) for r in baseline_records(figures))
    # The duration varies from run to run: gated, not tracked.
    assert saved == [
        ("app", "app.tokens", 80.0),
        ("trace", "trace.error_spans", 0.0),
        ("trace", "trace.handoffs", 1.0),
        ("trace", "trace.steps", 4.0),
        ("trace", "trace.tool_calls", 2.0),
    ]
    old = entries_from_records(baseline_records(figures))
    figures.traces = {
        "t::a": {"steps": 4.0, "tool_calls": 3.0, "handoffs": 1.0, "error_spans": 1.0}
    }
    comparison = compare(old, entries_from_records(baseline_records(figures)))
    kinds = {c.metric: c.kind for c in comparison.changes}
    assert kinds == {"app.tokens": "unchanged", "trace.error_spans": "regression",
                     "trace.handoffs": "unchanged", "trace.steps": "unchanged",
                     "trace.tool_calls": "regression"}  # fmt: skip
    assert comparison.metric_tests == []
    assert regressed(comparison) == "2 trace figures"
    scores = [Entry("t::a", "bleu", "bleu_score", 0.9), Entry("t::b", "app", "app.tokens", 10.0)]
    worse = [Entry("t::a", "bleu", "bleu_score", 0.5), Entry("t::b", "app", "app.tokens", 20.0)]
    new = entries_from_records(baseline_records(figures))
    assert regressed(compare(old + scores, new + worse)) == (
        "1 score, 1 app figure and 2 trace figures"
    )


@pytest.mark.parametrize(
    ("seen", "suite", "files"),
    [
        ({}, "", ""),
        ({"picked": ["tests/test_a.py"]}, "only tests/test_a.py given", ""),
        ({"ignored": {"tests/slow"}}, "tests/slow ignored", ""),
        ({"picked": ["tests/test_a.py::test_x"]}, "only tests/test_a.py::test_x given", "same"),
        ({"deselected": {"t.py::a"}, "selectors": ["-k x"]}, "-k x: 1 test deselected", "same"),
        ({"last_failed": True}, "--lf", "same"),
    ],
)  # fmt: skip
def test_which_partial_runs_leave_out_tests_of_their_files(
    tmp_path, seen: dict, suite: str, files: str
) -> None:
    # Files named, or left out with --ignore, are not collected at all: textsim replay
    # prune keeps their cassettes. Test ids and deselection split a collected file.
    from pytest_textsim.plugin.gating import SeenTests

    tests = SeenTests(tmp_path, False, **seen)
    assert tests.part_of_the_suite() == suite
    assert tests.part_of_its_files() == (suite if files == "same" else files)


def test_replay_prune_names_the_collection_probe_as_it_is() -> None:
    from pytest_textsim.cli import replay
    from pytest_textsim.plugin import collection_probe

    assert replay._PROBE == collection_probe.__name__
    assert replay._PROBE_REPORT == collection_probe.REPORT_VARIABLE


def test_a_byte_order_mark_is_skipped_in_baselines_as_in_jsonl(tmp_path: Path) -> None:
    """One rule for both inputs: a baseline with a BOM (some Windows editors write one)
    was refused ("Unexpected UTF-8 BOM") while a JSONL file with one was read."""
    from pytest_textsim.gating.baseline import load_baseline
    from pytest_textsim.jsonl import read_objects

    body = '{"format": "pytest-textsim baseline", "version": 1, "scores": []}'
    baseline = tmp_path / "baseline.json"
    baseline.write_bytes(b"\xef\xbb\xbf" + body.encode())
    assert load_baseline(baseline).entries == []
    cases = tmp_path / "cases.jsonl"
    cases.write_bytes(b'\xef\xbb\xbf{"response": "a"}\n')
    assert [line.value for line in read_objects(cases)] == [{"response": "a"}]


def test_a_number_too_long_for_python_is_a_clear_error(tmp_path: Path) -> None:
    """Python's own message named sys.set_int_max_str_digits(), of no use to a user."""
    from pytest_textsim.gating.baseline import load_baseline

    baseline = tmp_path / "baseline.json"
    baseline.write_text('{"format": "pytest-textsim baseline", "version": ' + "9" * 5000 + "}")
    with pytest.raises(BaselineError) as info:
        load_baseline(baseline)
    assert str(info.value) == f"{baseline}: a number of more than 4300 digits"
