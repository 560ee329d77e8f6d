"""The plugin session: a composition root whose concerns (the record store, the test
in progress, the report's parts, the run's verdicts) each own their state, and whose
documented surface (records, per_test, add_section, on_finish, on_close, fail,
keep_texts, count/counters, exit_status/stopped) reaches them. Unit-level: no
inner pytest run."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from pytest_textsim.plugin.session import (
    REPORT_ATTR,
    CurrentTest,
    RecordStore,
    TextsimSession,
)
from pytest_textsim.records import ScoreRecord
from pytest_textsim.settings.table import Resolver


def _report(nodeid: str, records: list[ScoreRecord], *, when: str = "call",
            outcome: str = "passed", **extra: Any) -> pytest.TestReport:  # fmt: skip
    report = SimpleNamespace(
        nodeid=nodeid, when=when, outcome=outcome, passed=outcome == "passed",
        skipped=outcome == "skipped", **extra,
    )  # fmt: skip
    # As the test's own process stamped them (CurrentTest.add_records).
    setattr(report, REPORT_ATTR, [{**r.to_dict(), "nodeid": nodeid} for r in records])
    return cast(pytest.TestReport, report)


def _record(score: float, run: int | None = None) -> ScoreRecord:
    return ScoreRecord("bleu", "bleu_score", score, 0.5, score >= 0.5, run=run)


def _session(recorded: list[ScoreRecord], **config: Any) -> TextsimSession:
    hook = SimpleNamespace(pytest_textsim_record=lambda record: recorded.append(record))
    fake = SimpleNamespace(hook=hook, invocation_params=SimpleNamespace(dir=Path.cwd()), **config)
    return TextsimSession(config=cast(pytest.Config, fake), resolver=Resolver(),
                          run=cast(Any, None))  # fmt: skip


def test_the_session_holds_its_settings_and_counters_and_one_object_per_concern() -> None:
    names = [f.name for f in dataclasses.fields(TextsimSession)]
    assert names == ["config", "resolver", "run", "counters", "store", "current", "report",
                     "verdicts"]  # fmt: skip


def test_the_record_store_puts_workers_records_in_collection_order_and_folds_repeats() -> None:
    store = RecordStore(test_order={"t::a": 0, "t::b": 1, "t::c": 2})
    announced: list[ScoreRecord] = []
    repeat = {"runs": 2, "passed": 1, "min_pass_rate": 0.5}
    # Workers finish in any order: c, then b's two runs, then a (an expected failure).
    store.collect(_report("t::c", [_record(0.9)]), announced.append)
    store.collect(_report("t::b", [_record(0.2, run=0), _record(0.6, run=1)],
                          textsim_repeat=repeat), announced.append)  # fmt: skip
    store.collect(_report("t::a", [_record(0.1)], outcome="skipped", wasxfail=""), None)
    assert [r.nodeid for r in announced] == ["t::c", "t::b", "t::b"]
    assert [r.test_outcome for r in store.records] == ["passed", "passed", "passed", "xfail"]
    store.finish()
    assert [r.nodeid for r in store.records] == ["t::a", "t::b", "t::b", "t::c"]
    assert list(store.repeats) == ["t::b"]
    assert [(r.nodeid, r.score, r.passed) for r in store.per_test] == [
        ("t::a", 0.1, False), ("t::b", pytest.approx(0.4), True), ("t::c", 0.9, True)
    ]  # fmt: skip


def test_a_failed_teardown_marks_the_tests_records_failed() -> None:
    store = RecordStore()
    store.collect(_report("t::a", [_record(0.9)]), None)
    store.collect(_report("t::a", [], when="teardown", outcome="failed"), None)
    assert [r.test_outcome for r in store.records] == ["failed"]


def test_the_current_test_stamps_its_records_and_hands_them_to_one_report() -> None:
    current = CurrentTest()
    item = cast(pytest.Item, SimpleNamespace(nodeid="t::a", user_properties=[]))
    current.add_records([_record(0.9)])  # no test running: nowhere to attach them
    assert current.pending == []
    current.start(item)
    current.run = 1
    current.marker_options["t::a"] = {"threshold": 0.5}
    flaky = dataclasses.replace(_record(0.4), flaky=True)
    current.add_records([_record(0.9), flaky])
    assert item.user_properties == [("textsim.bleu_score", 0.9), ("textsim.bleu_score", 0.4),
                                    ("textsim.flaky", "true")]  # fmt: skip
    taken = current.take_pending()
    assert [(d["nodeid"], d["run"], d["metric"]) for d in taken] == [("t::a", 1, "bleu_score")] * 2
    assert current.take_pending() == []
    current.end(item)
    assert (current.item, current.marker_options) == (None, {})


def test_the_documented_surface_reaches_the_concerns() -> None:
    recorded: list[ScoreRecord] = []
    session = _session(recorded)
    seen: list[tuple[str, object]] = []
    session.add_section("mine", lambda: ["a line"])
    session.on_finish(lambda s: seen.append(("finish", len(s.per_test))))
    session.on_close(lambda s: seen.append(("close", (s.exit_status, s.stopped, s.failures))))
    session.keep_texts = True
    session.count("calls")
    session.merge_counters({"calls": 2, "hits": 1})
    session.collect(_report("t::a", [_record(0.9)]))
    session.fail("gate bleu_score.mean >= 0.95 failed")
    session.finish()
    session.close(1, "-x")
    assert session.store.keep_texts and session.keep_texts
    assert session.sections is session.report.sections and session.sections[0][0] == "mine"
    assert session.counters == {"calls": 3, "hits": 1}
    assert session.records is session.store.records and recorded == session.records
    assert session.per_test == session.records
    assert seen == [("finish", 1), ("close", (1, "-x", ["gate bleu_score.mean >= 0.95 failed"]))]
    assert session.path_setting("json") is None


def test_a_worker_keeps_its_records_without_announcing_them() -> None:
    recorded: list[ScoreRecord] = []
    session = _session(recorded, workerinput={"workerid": "gw0"})
    session.collect(_report("t::a", [_record(0.9)]))
    assert session.is_worker and len(session.records) == 1 and recorded == []
