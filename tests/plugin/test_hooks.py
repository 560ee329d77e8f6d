"""The hooks of pytest_textsim/plugin/hookspec.py, implemented in a user's conftest.py."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_textsim.catalog import current_metrics
from pytest_textsim.plugin import hookspec
from pytest_textsim.plugin.report import hook_sections
from pytest_textsim.plugin.session import ReportParts
from pytest_textsim.settings.resolver import current_settings

REGISTERING = '''
def brevity(response, ground_truth):
    return min(1.0, len(ground_truth) / max(len(response), 1))


def pytest_textsim_register_metrics(registry):
    registry.register("brevity", brevity, threshold=0.3)
'''

USING = '''
import pytest
from pytest_textsim import assert_brevity


def test_fixture(brevity):
    assert brevity("Paris.", "Paris is it.")["brevity"] == 1.0


@pytest.mark.textsim(threshold_brevity=0.9)
def test_helper():
    with pytest.raises(AssertionError, match="brevity 0.500 < threshold 0.900"):
        assert_brevity("Paris is it, yes!!", "Paris.!!!")
'''


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist", *args)


def test_a_metric_registered_by_the_hook_has_a_fixture_helper_and_flag(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(REGISTERING)
    pytester.makepyfile(test_suite=USING)
    result = _run(pytester, "--textsim-threshold-brevity=0.6")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "test_suite.py::test_fixture * brevity * 1.000 * 0.600 * pass *",
            "test_suite.py::test_helper * brevity * 0.500 * 0.900 * below *",
        ]
    )
    # The run's metric stays the run's: this process's catalog and settings lack it.
    assert "brevity" not in current_metrics()
    assert "threshold_brevity" not in current_settings()


def test_two_runs_in_one_process_do_not_see_each_others_metrics(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(REGISTERING)
    pytester.makepyfile(test_suite=USING)
    _run(pytester).assert_outcomes(passed=2)
    # The next run has no such conftest.py: neither the fixture, nor the helper,
    # nor the flag, nor the marker key of the first run's metric.
    (pytester.path / "conftest.py").unlink()
    pytester.makepyfile(
        test_suite="""
        import pytest
        import pytest_textsim

        def test_fixture(brevity):
            pass

        def test_helper():
            with pytest.raises(AttributeError):
                pytest_textsim.assert_brevity

        @pytest.mark.textsim(threshold_brevity=0.5)
        def test_marker():
            pass
        """
    )
    result = _run(pytester)
    result.assert_outcomes(passed=1, errors=2)
    result.stdout.fnmatch_lines(
        ["*fixture 'brevity' not found*", "*unknown option 'threshold_brevity'*"]
    )
    assert _run(pytester, "--textsim-threshold-brevity=0.5").ret == pytest.ExitCode.USAGE_ERROR


@pytest.mark.xdist_matters  # the controller's hook sees the scores of every worker
def test_the_record_hook_sees_every_record_once(
    pytester: pytest.Pytester, run_plugin
) -> None:
    pytester.makeconftest(
        """
        import json

        def pytest_textsim_record(record):
            with open("seen.jsonl", "a", encoding="utf-8") as seen:
                seen.write(json.dumps([record.nodeid, record.score_key, record.score]) + "\\n")
        """
    )
    pytester.makepyfile(
        test_suite="""
        import pytest
        from pytest_textsim import assert_exact_match

        @pytest.mark.parametrize("answer", ["Paris", "Lyon", "Nice", "Metz"])
        def test_answer(answer, bleu):
            assert_exact_match(answer, answer)
            bleu(answer, "Paris")
        """
    )
    seen = pytester.path / "seen.jsonl"
    seen.unlink(missing_ok=True)
    result = run_plugin("--textsim-json=out.json")
    result.assert_outcomes(passed=4)
    report = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    expected = sorted([s["test_id"], s["metric"], s["score"]] for s in report["scores"])
    assert len(expected) == 8
    lines = seen.read_text(encoding="utf-8").splitlines()
    assert sorted(json.loads(line) for line in lines) == expected


def test_a_report_section_hook_adds_a_section_to_every_report(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        def pytest_textsim_report_sections(run):
            scores = [record.score for record in run.session.per_test]
            mean = sum(scores) / len(scores)
            return [
                ("my scores", [f"{len(scores)} scores, mean {mean:.2f}",
                               ("all passed", {"green": True}),
                               ("<script>alert(1)</script> & co", {"red": True, "bold": True})]),
                ("nothing to say", []),
            ]
        """
    )
    pytester.makepyfile(
        test_suite="""
        def test_one(exact_match):
            exact_match("a", "a")
            exact_match("a", "b")
        """
    )
    result = _run(pytester, "--textsim-html=report.html", "--textsim-json=report.json")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        ["*- textsim scores -*", "*- my scores -*", "2 scores, mean 0.50", "all passed"]
    )
    assert "nothing to say" not in result.stdout.str()
    # The same sections, asked for once, are in the JSON report and drawn in the HTML one.
    document = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    assert document["sections"] == [
        {
            "title": "my scores",
            "lines": [
                {"text": "2 scores, mean 0.50", "markup": {}},
                {"text": "all passed", "markup": {"green": True}},
                {"text": "<script>alert(1)</script> & co", "markup": {"red": True, "bold": True}},
            ],
        }
    ]
    page = (pytester.path / "report.html").read_text(encoding="utf-8")
    assert '<nav><a href="#metrics">Metrics</a><a href="#section-1">my scores</a>' in page
    assert (
        '<section id="section-1" class="hook-section"><h2>my scores</h2><pre class="lines">'
        '2 scores, mean 0.50\n<span class="m-green">all passed</span>\n'
        '<span class="m-bold m-red">&lt;script&gt;alert(1)&lt;/script&gt; &amp; co</span>'
        "</pre></section>"
    ) in page
    assert "nothing to say" not in page


class _Session:
    """What :func:`hook_sections` reads of a run's session, with a real plugin manager."""

    def __init__(self, *plugins: object) -> None:
        manager = pytest.PytestPluginManager()  # takes unmarked pytest_* functions as specs
        manager.add_hookspecs(hookspec)
        for plugin in plugins:
            manager.register(plugin)
        self.config = SimpleNamespace(hook=manager.hook, rootpath=Path(__file__).parent)
        self.run = object()
        self.report = ReportParts()
        self.failures: list[str] = []

    def fail(self, message: str) -> None:
        self.failures.append(message)


def _lookup(table: dict[str, str]) -> str:
    return table["missing"]


class _Raising:
    def pytest_textsim_report_sections(self, run: Any) -> Any:
        return [("never", [_lookup({})])]  # the line the failure names


class _Good:
    def pytest_textsim_report_sections(self, run: Any) -> Any:
        return [("kept", ["one", ("two", {"yellow": True})])]


def _broken_lines() -> Any:
    yield "half"
    raise RuntimeError("the data went away")


class _Malformed:
    def pytest_textsim_report_sections(self, run: Any) -> Any:
        return [("letters", "abc"), ("gone", _broken_lines()), "lonely", ("fine", ["ok"])]


class _NotPairs:
    def pytest_textsim_report_sections(self, run: Any) -> Any:
        return "a title"


def test_a_raising_section_hook_fails_the_run_naming_where() -> None:
    session = _Session(_Good(), _Raising())
    hook_sections(session)  # type: ignore[arg-type]
    line = _Raising.pytest_textsim_report_sections.__code__.co_firstlineno + 1
    assert session.failures == [
        f"pytest_textsim_report_sections in test_hooks.py:{line} raised KeyError: 'missing'; "
        "the hook's sections are missing from the reports"
    ]
    assert session.report.data == {}


def test_a_malformed_section_fails_the_run_and_the_others_are_kept() -> None:
    session = _Session(_Good(), _Malformed(), _NotPairs())
    hook_sections(session)  # type: ignore[arg-type]
    assert session.failures == [
        "pytest_textsim_report_sections returned 'a title': expected (title, lines) pairs or None",
        "pytest_textsim_report_sections returned the section ('letters', 'abc'): "
        "expected (title, lines)",
        "pytest_textsim_report_sections: the lines of the section 'gone' raised "
        "RuntimeError: the data went away",
        "pytest_textsim_report_sections returned the section 'lonely': expected (title, lines)",
    ]
    assert session.report.data == {
        "sections": [
            {"title": "fine", "lines": [{"text": "ok", "markup": {}}]},
            {
                "title": "kept",
                "lines": [
                    {"text": "one", "markup": {}},
                    {"text": "two", "markup": {"yellow": True}},
                ],
            },
        ]
    }
