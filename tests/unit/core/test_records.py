"""ScoreRecord's names: ``metric_name`` and ``score_key``, written to JSON under the
names every report and baseline has used (``evaluator``, ``metric``), and the former
attribute and keyword names kept as deprecated aliases."""

from __future__ import annotations

import json
import warnings

import pytest

from pytest_textsim.records import ScoreRecord, fold_runs, records_from_output

# One score as a JSON report written before the rename has it.
OLD_JSON = (
    '{"evaluator": "rouge", "metric": "rouge_f1_score", "score": 0.5, "threshold": 0.4, '
    '"passed": true, "params": {"rouge_type": "rougeL"}, "nodeid": "t.py::a", '
    '"variant": "rougeL", "run": 1}'
)


def _record() -> ScoreRecord:
    return ScoreRecord(
        metric_name="rouge", score_key="rouge_f1_score", score=0.5, threshold=0.4, passed=True
    )


def test_the_json_keeps_the_names_reports_and_baselines_use() -> None:
    data = _record().to_dict()
    assert list(data)[:3] == ["evaluator", "metric", "score"]
    assert (data["evaluator"], data["metric"]) == ("rouge", "rouge_f1_score")
    assert not {"metric_name", "score_key"} & data.keys()


def test_a_record_written_before_the_rename_reads_back_and_round_trips() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        record = ScoreRecord.from_dict(json.loads(OLD_JSON))
        assert (record.metric_name, record.score_key) == ("rouge", "rouge_f1_score")
        assert (record.variant, record.run) == ("rougeL", 1)
        assert record.params == {"rouge_type": "rougeL"}
        again = ScoreRecord.from_dict(json.loads(json.dumps(record.to_dict())))
    assert again == record
    assert {k: v for k, v in record.to_dict().items() if k in json.loads(OLD_JSON)} == json.loads(
        OLD_JSON
    )


@pytest.mark.parametrize(
    ("old", "new", "value"),
    [("evaluator", "metric_name", "rouge"), ("metric", "score_key", "rouge_f1_score")],
)
def test_the_former_attribute_names_warn_and_read_the_new_fields(
    old: str, new: str, value: str
) -> None:
    record = _record()
    with pytest.warns(DeprecationWarning, match=rf"ScoreRecord\.{old} is deprecated; use "
                      rf"ScoreRecord\.{new}$") as caught:  # fmt: skip
        assert getattr(record, old) == value
    assert caught[0].filename == __file__  # the warning points at the caller


def test_the_former_attribute_names_are_read_only() -> None:
    record = _record()
    with pytest.raises(AttributeError):
        record.metric = "bleu_score"  # type: ignore[misc]
    assert record.score_key == "rouge_f1_score"


def test_the_former_keywords_warn_and_set_the_new_fields() -> None:
    with pytest.warns(DeprecationWarning) as caught:
        record = ScoreRecord(  # type: ignore[call-arg]
            evaluator="bleu", metric="bleu_score", score=0.25, threshold=None, passed=None
        )
    assert (record.metric_name, record.score_key, record.score) == ("bleu", "bleu_score", 0.25)
    assert sorted(str(w.message) for w in caught) == [
        "ScoreRecord(evaluator=...) is deprecated; use metric_name=",
        "ScoreRecord(metric=...) is deprecated; use score_key=",
    ]
    assert {w.filename for w in caught} == {__file__}


def test_a_former_keyword_beside_its_new_name_is_refused() -> None:
    with pytest.raises(TypeError, match=r"both metric= and score_key=: use score_key=$"):
        ScoreRecord(  # type: ignore[call-arg]
            metric_name="bleu", score_key="bleu_score", metric="x", score=0.0, threshold=None,
            passed=None,
        )  # fmt: skip


def test_positional_fields_and_the_package_own_code_use_no_alias() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        record = ScoreRecord("bleu", "bleu_score", 0.5, 0.4, True)
        assert (record.metric_name, record.score_key) == ("bleu", "bleu_score")
        made = records_from_output(
            "rouge",
            {"rouge_f1_score": 0.5, "rouge_f1_result": "pass", "rouge_f1_threshold": 0.4},
        )
        assert [(r.metric_name, r.score_key) for r in made] == [("rouge", "rouge_f1_score")]
        runs = []
        for run, score in enumerate((0.2, 0.6)):
            one = ScoreRecord.from_dict({**made[0].to_dict(), "nodeid": "t::a", "run": run})
            one.score = score
            runs.append(one)
        [folded] = fold_runs(runs, {"t::a": {"min_pass_rate": 0.5}})
    assert (folded.metric_name, folded.score_key, folded.score) == ("rouge", "rouge_f1_score", 0.4)
