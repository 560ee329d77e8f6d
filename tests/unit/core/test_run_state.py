"""The Run: a run's own metrics, settings, evaluators and judges, found through one ContextVar."""

from __future__ import annotations

import contextvars
import json
from pathlib import Path

import pytest

from pytest_textsim.catalog import METRICS, current_metrics
from pytest_textsim.cli import main
from pytest_textsim.judge.wiring import Judges, run_judge
from pytest_textsim.plugin.usermetrics import register_metric, registry_of
from pytest_textsim.runtime import run as run_module
from pytest_textsim.runtime.run import Run, Table, current_run
from pytest_textsim.settings.resolver import SETTINGS, Resolver, current_settings
from pytest_textsim.settings.table import new_run, this_run


def brevity(response: str, ground_truth: str) -> float:
    return min(1.0, len(ground_truth) / max(len(response), 1))


def test_a_table_lays_a_runs_entries_over_its_base() -> None:
    table: Table[int] = Table({"a": 1, "b": 2})
    table.add("c", 3)
    assert list(table) == ["a", "b", "c"] and len(table) == 3 and table["c"] == 3
    with pytest.raises(KeyError):
        table.add("a", 9)  # a base entry is not the run's to change
    with pytest.raises(KeyError):
        table.remove("a")
    table.replace("c", 4)
    assert dict(table) == {"a": 1, "b": 2, "c": 4} and dict(table.own) == {"c": 4}


def _in_a_run_of_its_own() -> tuple[Run, dict[str, object]]:
    run = this_run()  # an empty context: a script run, made current here
    helper = register_metric("brevity", brevity)
    seen = {
        "current": current_run() is run,
        "metric": current_metrics()["brevity"].name,
        "setting": current_settings()["threshold_brevity"].default,
        "resolved": Resolver(environ={}).get("threshold_brevity"),
        "helper": helper("Paris.", "Paris is it.")["brevity_result"],
    }
    return run, seen


@pytest.fixture(autouse=True)
def no_process_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty context here is a script's: a process without a pytest run, whose
    innermost run (what a thread without a context finds) is none."""
    monkeypatch.setattr(run_module, "_innermost", None)


def test_a_script_run_holds_its_metrics_and_the_package_tables_never_change() -> None:
    run, seen = contextvars.Context().run(_in_a_run_of_its_own)
    assert seen == {
        "current": True, "metric": "brevity", "setting": 0.5, "resolved": 0.5, "helper": "pass",
    }  # fmt: skip
    assert run.config is None and list(run.metrics.own) == ["brevity"]
    assert "brevity" not in METRICS and "threshold_brevity" not in SETTINGS
    assert "brevity" not in current_metrics()  # this test's run never saw it
    # The script run's evaluators are its own: built once, kept by the run.
    assert [key[0] for key in run.evaluators] == ["brevity"]


def _nested() -> dict[str, object]:
    outer = this_run()
    register_metric("brevity", brevity)
    seen: dict[str, object] = {}
    for name in ("first", "second"):
        inner = new_run()
        inner.activate()
        try:
            registry_of(inner).register(f"{name}_metric", brevity)
            seen[name] = sorted(m for m in current_metrics() if m not in METRICS)
            # The outer run's metric, registered again the same way, is the outer's.
            register_metric("brevity", brevity)
        finally:
            inner.deactivate()
    seen["outer"] = sorted(outer.metrics.own)
    seen["current"] = current_run() is outer
    return seen


def test_a_run_inside_a_run_sees_the_outer_metrics_and_not_its_siblings() -> None:
    assert contextvars.Context().run(_nested) == {
        "first": ["brevity", "first_metric"],
        "second": ["brevity", "second_metric"],
        "outer": ["brevity"],
        "current": True,
    }


def _judges() -> tuple[bool, bool]:
    run = this_run()
    resolver = Resolver(environ={"TEXTSIM_JUDGE_MODEL": "gpt-4o-mini", "OPENAI_API_KEY": "sk-x",
                                 "TEXTSIM_CACHE": "off"})  # fmt: skip
    judge = run_judge(resolver)
    again = run_judge(Resolver(environ=dict(resolver.environ)))
    return judge is again, list(run.part(Judges).built.values()) == [judge]


def test_a_scripts_judges_belong_to_its_run() -> None:
    assert contextvars.Context().run(_judges) == (True, True)
    assert contextvars.Context().run(_judges) == (True, True)  # another run: its own judge


def _score(data: Path, metric: str) -> int:
    register_metric("brevity", brevity)
    return main(["score", str(data), "--metric", metric])


def test_textsim_score_in_process_scores_the_package_metrics_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"response": "Paris.", "ground_truth": "Paris."}) + "\n")
    assert contextvars.Context().run(_score, data, "bleu_score") == 0
    capsys.readouterr()
    assert contextvars.Context().run(_score, data, "brevity") != 0
    assert "brevity" in capsys.readouterr().err
