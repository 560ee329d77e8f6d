"""A dead judge fails fast in pytest and in ``textsim score``; a busy one does not.

End to end: pytester suites (without xdist, -n 0, -n 2) and the command line,
against a port where the local fake OpenAI server has just stopped.
"""

from __future__ import annotations

import json
import re
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_textsim.cli import main
from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply

SUITE = """
import pytest

@pytest.mark.parametrize("n", range(14))
def test_judged(n, similarity):
    similarity(f"Answer {n}.", f"Truth {n}.")
"""


def durations(path: Path) -> dict[str, float]:
    """Seconds per test from a JUnit XML file."""
    root = ET.parse(path).getroot()
    return {case.get("name", ""): float(case.get("time", 0)) for case in root.iter("testcase")}


@pytest.mark.xdist_matters  # the workers share one unreachable mark
def test_14_judge_tests_with_the_server_down_fail_fast(
    pytester: pytest.Pytester, run_plugin, dead_url: str
) -> None:
    pytester.makepyfile(test_dead=SUITE)
    pytester.makefile(
        ".ini",
        pytest=f"[pytest]\ntextsim_judge_model = m\ntextsim_judge_base_url = {dead_url}\n",
    )
    result = run_plugin("--junitxml=junit.xml", "--textsim-json=report.json")
    result.assert_outcomes(failed=14)
    times = sorted(durations(pytester.path / "junit.xml").values(), reverse=True)
    workers = 2 if run_plugin.xdist else 1
    # The first failure (one per worker at most) used its retries; the rest failed at once.
    rest = sum(times[workers:])
    assert rest < 3.0, f"13 tests after the first failure took {rest:.2f}s: {times}"
    assert times[0] > 0.1  # the first failure did wait between its retries
    # Counted in the failures section only: with CI set, pytest does not shorten the
    # short summary's lines, so they would repeat every message.
    output = result.stdout.str().split("short test summary info")[0]
    assert output.count("Later judge calls fail at once until it is tried again in 30s") <= workers
    unreachable = output.count("unreachable since test_dead.py::test_judged[")
    assert unreachable >= 14 - workers, output[-3000:]
    result.stdout.fnmatch_lines(
        [
            "*test_dead.py::test_judged[[]*[]]: similarity: judge at 127.0.0.1:* unreachable "
            "since test_dead.py::test_judged[[]*[]] (connection refused); * judge call* not "
            "attempted. It is tried again 30s after the last failed attempt; check that the "
            "service at 127.0.0.1:* is up (textsim_judge_base_url).",
        ]
    )
    # The report counts the calls not attempted.
    counters = json.loads((pytester.path / "report.json").read_text())["header"]["counters"]
    skipped = int(counters["judge_not_attempted"])
    # With two workers, one may stop retrying when the other marks the judge down:
    # that call was attempted, so it is not counted.
    assert 14 - 2 * workers <= skipped <= unreachable
    result.stdout.fnmatch_lines([f"judge: * {skipped} not attempted (judge unreachable)"])


@pytest.mark.xdist_matters  # the mark is shared through the cache folder
def test_a_new_run_tries_the_judge_again(
    pytester: pytest.Pytester, run_plugin, dead_url: str
) -> None:
    pytester.makepyfile(test_dead=SUITE.replace("range(14)", "range(2)"))
    pytester.makefile(
        ".ini",
        pytest=f"[pytest]\ntextsim_judge_model = m\ntextsim_judge_base_url = {dead_url}\n",
    )
    run_plugin().assert_outcomes(failed=2)
    marks = list((pytester.path / ".textsim_cache").glob("judge-unreachable-*.json"))
    assert marks  # the mark is shared through the cache folder
    # The judge is back at the same address: the next run does not trust the old mark.
    port = int(dead_url.rsplit(":", 1)[1].split("/")[0])
    with FakeOpenAI(port=port) as server:
        run_plugin().assert_outcomes(passed=2)
        assert server.requests == 2


@pytest.mark.xdist_matters  # retries in the hub, outcomes from the workers
def test_a_busy_judge_is_not_marked_unreachable(pytester: pytest.Pytester, run_plugin) -> None:
    with FakeOpenAI() as server:
        server.script(*[Reply.error(503)] * 2)
        pytester.makepyfile(test_busy=SUITE.replace("range(14)", "range(3)"))
        pytester.makefile(
            ".ini",
            pytest=f"[pytest]\ntextsim_judge_model = m\ntextsim_judge_base_url = "
            f"{server.base_url}\ntextsim_judge_max_retries = 1\n",
        )
        result = run_plugin("-p", "no:randomly")
        outcomes = result.parseoutcomes()
        assert outcomes.get("failed", 0) + outcomes["passed"] == 3
        assert "unreachable since" not in result.stdout.str()
        # Every test called the judge: the two 503s plus one success per passed test.
        assert server.requests == outcomes["passed"] + 2


def unreachable_rows(text: str, data: Path) -> int:
    """How many rows the error lines of ``textsim score`` report as failed at once
    (``rows.jsonl:3:`` is one row, ``rows.jsonl:3-10 (8 rows):`` eight)."""
    count = 0
    for match in re.finditer(
        rf"{re.escape(str(data))}:(\d+)(?:-\d+ \((\d+) rows\))?: similarity: JudgeUnreachable",
        text,
    ):
        count += int(match.group(2) or 1)
    return count


def test_textsim_score_fails_fast_on_a_dead_judge(
    tmp_path: Path, dead_url: str, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "rows.jsonl"
    data.write_text(
        "".join(json.dumps({"response": f"r{i}", "ground_truth": f"g{i}"}) + "\n"
                for i in range(10))
    )
    server_down = [dead_url]
    started = time.monotonic()
    rc = main(
        ["score", str(data), "--metric", "similarity", "--judge-model", "m",
         "--judge-base-url", server_down[0], "--judge-concurrency", "1"]
    )  # fmt: skip
    elapsed = time.monotonic() - started
    err = capsys.readouterr()
    assert rc == 2, err
    text = err.out + err.err
    assert f"{data}:1: similarity:" in text and "failed after 4 attempt(s)" in text
    assert f"unreachable since {data}:1 (connection refused)" in text
    # The other nine rows failed at once, printed as one line for the run of rows.
    assert f"{data}:2-10 (9 rows): similarity: JudgeUnreachable" in text
    assert unreachable_rows(text, data) == 9
    assert "9 not attempted (judge unreachable)" in text
    assert elapsed < 6.0, elapsed  # one row's retries, then nothing more to wait for


def test_textsim_score_rows_in_flight_wait_for_one_row_to_retry(
    tmp_path: Path, dead_url: str, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "rows.jsonl"
    rows = [json.dumps({"response": f"r{i}", "ground_truth": f"g{i}"}) for i in range(10)]
    data.write_text("\n".join(rows) + "\n")
    # Eight rows at a time (the default concurrency): one retries, the others wait
    # for its verdict instead of each retrying the dead judge.
    rc = main(["score", str(data), "--metric", "similarity", "--judge-model", "m",
               "--judge-base-url", dead_url])  # fmt: skip
    text = "".join(capsys.readouterr())
    assert rc == 2
    assert text.count("failed after 4 attempt(s)") == 1
    assert unreachable_rows(text, data) == 9, text
    calls = int(text.split("judge: ")[1].split(" calls")[0])
    assert calls <= 4 + 7, text  # was 40: four attempts for every row
