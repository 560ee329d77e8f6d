"""Every entry of the metric catalog is wired everywhere: one entry is all a metric needs."""

from __future__ import annotations

import inspect

import pytest

import pytest_textsim
from pytest_textsim.catalog import METRICS, Metric, default_drop, higher_is_better
from pytest_textsim.engine.plan import metric_choice
from pytest_textsim.settings.table import SETTINGS
from tools import codegen

ENTRIES = list(METRICS.values())


def test_the_generated_stub_is_up_to_date() -> None:
    # After changing the catalog or the exports: python tools/codegen.py
    assert codegen.STUB.read_text(encoding="utf-8") == codegen.render_stub()


def test_codegen_check_reports_a_stale_stub(tmp_path, monkeypatch, capsys) -> None:
    # A copy of the stub, so that nothing writes into the checkout.
    stale = tmp_path / "__init__.pyi"
    stale.write_text("# edited by hand\n")
    monkeypatch.setattr(codegen, "STUB", stale)
    assert codegen.main(["--check"]) == 1
    assert f"stale: {stale}" in capsys.readouterr().out
    assert stale.read_text() == "# edited by hand\n"  # --check writes nothing
    assert codegen.main([]) == 0
    assert stale.read_text() == codegen.render_stub()
    assert codegen.main(["--check"]) == 0


@pytest.mark.parametrize("metric", ENTRIES, ids=lambda m: m.name)
def test_helper_has_the_real_signature_and_is_exported(metric: Metric) -> None:
    helper = getattr(pytest_textsim, metric.helper)
    assert helper.__module__ == "pytest_textsim.plugin.helpers"
    assert helper.__name__ == helper.__qualname__ == metric.helper
    params = inspect.signature(helper).parameters
    # Required options (a rubric's criteria) come positionally right after the texts.
    texts = [*metric.inputs, *metric.leading_options, *metric.optional_inputs]
    assert list(params)[: len(texts)] == texts
    for name in metric.leading_options:
        if metric.takes_turns:
            # After texts that conversation= may stand for, it has a default, and a call
            # without it is refused all the same.
            assert params[name].default is None
            with pytest.raises(TypeError, match=f"missing required argument: '{name}'"):
                helper("An answer.")
        else:
            assert params[name].default is inspect.Parameter.empty
    assert "threshold" in params and params["threshold"].kind is inspect.Parameter.KEYWORD_ONLY
    assert set(metric.options) <= set(params)
    assert metric.label in (helper.__doc__ or "")
    assert metric.helper in pytest_textsim.__all__


@pytest.mark.parametrize("metric", ENTRIES, ids=lambda m: m.name)
def test_every_helper_has_an_awaitable_form_with_its_signature(metric: Metric) -> None:
    helper = getattr(pytest_textsim, metric.helper)
    awaited = getattr(pytest_textsim, f"{metric.helper}_async")
    assert awaited.__module__ == "pytest_textsim.plugin.helpers"
    assert awaited.__name__ == f"{metric.helper}_async"
    assert inspect.iscoroutinefunction(awaited)
    assert inspect.signature(awaited) == inspect.signature(helper)
    assert f"{metric.helper}_async" in pytest_textsim.__all__
    assert metric.helper in (awaited.__doc__ or "")


@pytest.mark.parametrize("metric", ENTRIES, ids=lambda m: m.name)
def test_evaluator_class_is_exported(metric: Metric) -> None:
    cls = metric.evaluator_class()
    assert getattr(pytest_textsim, cls.__name__) is cls
    assert cls.__name__ in pytest_textsim.__all__


@pytest.mark.parametrize("metric", ENTRIES, ids=lambda m: m.name)
def test_threshold_setting_comes_from_the_entry(metric: Metric) -> None:
    setting = SETTINGS[metric.threshold_setting]
    assert setting.default == metric.default_threshold
    assert setting.help == metric.threshold_help
    assert setting.env == (f"TEXTSIM_{metric.threshold_setting.upper()}",)
    low, high = metric.threshold_range
    assert setting.convert(str(high)) == high
    with pytest.raises(ValueError, match=f"from {low:g} to {high:g}"):
        setting.convert(str(high + 1))


@pytest.mark.parametrize("metric", ENTRIES, ids=lambda m: m.name)
def test_textsim_score_knows_the_metric(metric: Metric) -> None:
    choice = metric_choice(metric.name)
    assert choice.name == metric.name
    assert choice.judge == metric.calls_model
    assert choice.inputs == metric.inputs


@pytest.mark.parametrize("metric", ENTRIES, ids=lambda m: m.name)
def test_direction_and_tolerance_follow_the_entry(metric: Metric) -> None:
    key = metric.score_keys[metric.default_score]
    if metric.name == "qa":  # its default score is similarity's own
        key = "f1_score"
        assert default_drop(key, "qa") == METRICS["f1"].baseline_drop
        return
    assert higher_is_better(key, metric.name) is metric.higher_is_better
    assert default_drop(key, metric.name) == metric.baseline_drop


def test_every_fixture_is_registered(pytester: pytest.Pytester) -> None:
    tests = "\n".join(
        f"def test_{m.name}({m.fixture}):\n    assert {m.fixture}.metric.name == {m.name!r}\n"
        for m in ENTRIES
    )
    pytester.makepyfile(tests)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=len(ENTRIES))


def test_textsim_score_help_lists_every_metric() -> None:
    from pytest_textsim.cli.score_parser import metric_help

    text = " ".join(metric_help().split())
    for metric in ENTRIES:
        # Judge metrics and checks by name, the other metrics by their score key.
        by_name = metric.calls_model or metric.score_keys.get(metric.name) == metric.name
        assert (metric.name if by_name else f"{metric.name}_score") in text
        assert metric_choice(metric.name if by_name else f"{metric.name}_score").name == metric.name
