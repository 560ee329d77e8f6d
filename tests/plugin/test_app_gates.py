"""What the app and the judge did, beyond one test: gates over it, baselines that track
it, the judge's budget, the run line and the HTML report's columns, end to end.

The app is the local OpenAI server (``pytest_textsim.testing``) called with the real
``openai`` client; the judge is another such server, priced from a ``textsim_prices``
file so that every call costs an exact amount.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from fnmatch import fnmatch
from typing import Any

import numpy
import pytest

from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply

APP = """
import os
import openai

def ask(question, model="house-model"):
    llm = openai.OpenAI(base_url=os.environ["APP_BASE_URL"], api_key="sk-app", max_retries=0)
    return llm.chat.completions.create(
        model=model, messages=[{"role": "user", "content": question}]
    ).choices[0].message.content
"""

AGENTS = (
    APP
    + """
def test_agent_one(llm_calls):
    for question in ("a", "b", "c"):
        ask(question)
    print("LATENCIES", [c.latency_s for c in llm_calls])

def test_agent_two(llm_calls):
    ask("d")
    print("LATENCIES", [c.latency_s for c in llm_calls])

def test_unpriced(llm_calls):
    ask("e", model="my-local-llm")
    print("LATENCIES", [c.latency_s for c in llm_calls])
"""
)

#: USD per million tokens: with the server's default usage (50 in, 12 out) a call of
#: house-model costs 50 * 2 / 1e6 + 12 * 10 / 1e6 = $0.00022.
PRICES = '[models."house-model"]\ninput = 2.0\noutput = 10.0\n'
HOUSE_CALL = (50 * 2.0 + 12 * 10.0) / 1e6


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    with FakeOpenAI(latency=0.002) as server:
        monkeypatch.setenv("APP_BASE_URL", server.base_url)
        yield server


def run_inner(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist", *args)


def gate_lines(result: pytest.RunResult) -> dict[str, str]:
    """``{expression: its report line}`` from the ``textsim gates`` section."""
    found = {}
    for line in result.outlines:
        match = re.match(r"^(PASS|FAIL|SKIP) (.+?): ", line)
        if match:
            found[match[2]] = line
    return found


def test_gates_over_the_apps_figures_aggregate_per_test_and_per_call(
    pytester: pytest.Pytester, app: FakeOpenAI
) -> None:
    pytester.makefile(".toml", prices=PRICES)
    gates = [
        "app.calls.sum <= 5",
        "app.calls[test=*agent_one].sum <= 2",
        "app.tokens.mean <= 200",
        "app.tokens.max <= 200",
        "app.cost_usd[test=*test_agent_*].sum <= 1",
        "app.cost_usd.sum <= 1",
        "app.latency_s.p95 <= 30",
        "app.latency_s[test=*agent_two].count == 1",
        "judge.calls.sum <= 0",
    ]
    pytester.makeini(
        "[pytest]\ntextsim_prices = prices.toml\ntextsim_gates =\n"
        + "".join(f"    {gate}\n" for gate in gates)
    )
    pytester.makepyfile(test_agents=AGENTS)
    result = run_inner(pytester, "-s", "--textsim-json=out.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the tests pass, two gates fail
    result.assert_outcomes(passed=3)
    lines = gate_lines(result)
    assert set(lines) == set(gates)
    latencies = [
        float(s)
        for line in result.outlines
        if "LATENCIES " in line
        for s in re.findall(r"[\d.e-]+", line.split("LATENCIES ", 1)[1])
    ]
    assert len(latencies) == 5
    p95 = float(numpy.percentile(latencies, 95))
    assert lines["app.calls.sum <= 5"] == "PASS app.calls.sum <= 5: 5 (sum of 3 tests)"
    assert lines["app.calls[test=*agent_one].sum <= 2"] == (
        "FAIL app.calls[test=*agent_one].sum <= 2: 3 (sum of 1 test)"
    )
    assert lines["app.tokens.mean <= 200"].startswith(
        "PASS app.tokens.mean <= 200: 103.3 (mean of 3 tests"  # (186 + 62 + 62) / 3
    )
    assert lines["app.tokens.max <= 200"] == "PASS app.tokens.max <= 200: 186 (max of 3 tests)"
    report = json.loads((pytester.path / "out.json").read_text())
    verdicts = {g["expression"]: g for g in report["gates"]}
    assert verdicts["app.cost_usd[test=*test_agent_*].sum <= 1"]["value"] == pytest.approx(
        4 * HOUSE_CALL, rel=1e-12
    )
    assert verdicts["app.latency_s.p95 <= 30"]["value"] == pytest.approx(p95, rel=1e-9)
    assert lines["app.latency_s.p95 <= 30"].endswith("(p95 of 5 calls)")
    assert lines["app.latency_s[test=*agent_two].count == 1"] == (
        "PASS app.latency_s[test=*agent_two].count == 1: 1 (1 call)"
    )
    # A call without a price is never a cost of 0: the gate fails, saying how to add one.
    assert fnmatch(
        lines["app.cost_usd.sum <= 1"],
        "FAIL app.cost_usd.sum <= 1: no value (cost unknown: 1 call of 1 test without a "
        "price, e.g. in test_agents.py::test_unpriced: no price for model 'my-local-llm' (*); "
        'add it to a textsim_prices file: [[]models."my-local-llm"[]] input = ..., '
        "output = ... (USD per million tokens))",
    )
    assert lines["judge.calls.sum <= 0"] == (
        "PASS judge.calls.sum <= 0: 0 (judge calls made in this run)"
    )
    result.stdout.fnmatch_lines_random(
        ["*gate failed: app.calls[[]test=*agent_one[]].sum <= 2: 3 (sum of 1 test)*",
         "*gate failed: app.cost_usd.sum <= 1: no value (cost unknown: *"]
    )  # fmt: skip


def test_a_misspelt_figure_is_a_usage_error_with_the_closest_name(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = run_inner(
        pytester, "--textsim-gate", "app.cost.sum <= 1", "--textsim-gate", "jugde.calls.sum < 3"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*invalid gate 'app.cost.sum <= 1' (--textsim-gate): unknown app figure 'cost' "
            "(did you mean 'cost_usd'?); use calls, tokens, cost_usd, latency_s",
            "invalid gate 'jugde.calls.sum < 3' (--textsim-gate): unknown figure "
            "'jugde.calls' (did you mean 'judge.calls'?)",
        ]
    )


ONE_APP_TEST = APP + "\ndef test_one(llm_calls):\n    ask('a')\n\ndef test_two(llm_calls):\n" \
    "    ask('b')\n    ask('c')\n"  # fmt: skip


def test_a_rise_in_app_cost_beyond_textsim_max_cost_rise_is_a_regression(
    pytester: pytest.Pytester, app: FakeOpenAI
) -> None:
    pytester.makefile(".toml", prices=PRICES)
    pytester.makeini("[pytest]\ntextsim_prices = prices.toml\n")
    pytester.makepyfile(test_app=ONE_APP_TEST)
    run_inner(pytester, "--textsim-save-baseline=base.json").assert_outcomes(passed=2)
    saved = json.loads((pytester.path / "base.json").read_text())["scores"]
    assert [(e["test"].split("::")[1], e["metric"], e["score"]) for e in saved] == [
        ("test_one", "app.cost_usd", pytest.approx(HOUSE_CALL, rel=1e-12)),
        ("test_one", "app.tokens", 62.0),
        ("test_two", "app.cost_usd", pytest.approx(2 * HOUSE_CALL, rel=1e-12)),
        ("test_two", "app.tokens", 124.0),
    ]
    before = (pytester.path / "base.json").read_bytes()
    # The price rises by 20%: beyond the default 10%, a regression; the tokens did not move.
    pytester.makefile(".toml", prices='[models."house-model"]\ninput = 2.4\noutput = 12.0\n')
    compared = ["--textsim-compare=base.json", "--textsim-fail-on-regression"]
    result = run_inner(pytester, *compared, "--textsim-save-baseline=base.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "test_app.py::test_one  app.cost_usd  0.00022   0.000264  +4.4e-05  2.2e-05",
            "*test_app.py::test_two*app.cost_usd*",
            "*scores: 2 regressed, 0 improved, 2 unchanged, 0 new, 0 vanished*",
            "kept base.json as it was: 2 app figures regressed",
            "FAILED: 2 app figures regressed against base.json (--textsim-fail-on-regression)",
        ]
    )
    assert (pytester.path / "base.json").read_bytes() == before  # never rewritten on failure
    # Within a 25% tolerance it is no regression (a share given as a percentage).
    run_inner(pytester, *compared, "--textsim-max-cost-rise=25%").assert_outcomes(passed=2)
    # A partial run updates the tests it ran and keeps the others' figures.
    result = run_inner(pytester, "-k", "test_one", "--textsim-save-baseline=base.json")
    result.stdout.fnmatch_lines(["*saved base.json: updated 2 of 4 scores; 2 kept (partial*"])
    merged = json.loads((pytester.path / "base.json").read_text())["scores"]
    costs = {e["test"].split("::")[1]: e["score"] for e in merged if e["metric"] == "app.cost_usd"}
    assert costs == {
        "test_one": pytest.approx(1.2 * HOUSE_CALL, rel=1e-12),
        "test_two": pytest.approx(2 * HOUSE_CALL, rel=1e-12),
    }


def test_max_cost_rise_must_be_a_share(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ntextsim_max_cost_rise = lots\n")
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = run_inner(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*textsim_max_cost_rise*: expected a share such as 0.1 or 10% (0 or more), got 'lots'"]
    )


# -- the judge's budget ---------------------------------------------------------

JUDGED = (
    APP
    + """
import pytest

@pytest.mark.parametrize("case", range(6))
def test_judged(llm_calls, similarity, case):
    answer = ask(f"question {case}")
    similarity(response=answer, query=f"question {case}", ground_truth="Paris")
"""
)

#: A judgment of the server's default usage (50 tokens in, 12 out) costs $0.50.
JUDGE_PRICES = PRICES + '[models."gpt-judge"]\ninput = 10000.0\noutput = 0.0\n'


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    def reply(request: Received) -> Reply:
        return Reply.score(5)

    with FakeOpenAI(responder=reply) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-judge")
        yield server


def judge_ini(judge: FakeOpenAI, extra: str = "") -> str:
    return (
        f"[pytest]\ntextsim_judge_model = gpt-judge\ntextsim_judge_base_url = {judge.base_url}\n"
        f"textsim_prices = prices.toml\n{extra}"
    )


@pytest.mark.xdist_matters  # the hub makes every worker's judge calls, from one budget
def test_once_the_budget_is_spent_no_judge_call_is_made_and_cached_judgments_are_free(
    pytester: pytest.Pytester,
    app: FakeOpenAI,
    judge: FakeOpenAI,
    run_plugin: Any,
    plugin_args: list[str],
) -> None:
    pytester.makefile(".toml", prices=JUDGE_PRICES)
    pytester.makeini(judge_ini(judge, "textsim_gates = judge.cost_usd.sum <= 1.25\n"))
    pytester.makepyfile(test_judged=JUDGED)
    result = run_plugin("--textsim-budget-usd", "1.25")
    # $0.50 a call: the third call reaches $1.25 and no fourth is made. Under xdist two
    # workers' calls may be in flight at once: at most one more.
    made = judge.requests
    assert 3 <= made <= (4 if run_plugin.xdist else 3)
    result.assert_outcomes(passed=made, failed=6 - made)
    result.stdout.fnmatch_lines_random(
        [
            "*judge budget of $1.25 spent (cached judgments are free)*",
            f"app: 6 calls, 372 tokens, $0.0013 · judge: {made} calls, "
            f"${0.5 * made:.2f} of the $1.25 budget",
            f"FAIL judge.cost_usd.sum <= 1.25: {0.5 * made:g} (judge spend in this run, in USD)",
        ]
    )
    if "-n" in plugin_args:
        return  # the cache is the same without xdist: checked once, in the plain run
    # Again, with the cache: the judged cases are free, the others spend the new budget.
    again = run_plugin("--textsim-budget-usd", "1.25", "-o", "textsim_gates=")
    again.assert_outcomes(passed=6)
    assert judge.requests == 6
    again.stdout.fnmatch_lines(
        ["app: 6 calls, 372 tokens, $0.0013 · judge: 3 calls, $1.50 of the $1.25 budget, "
         "3 cached (saved $1.50)"]
    )  # fmt: skip


def test_a_budget_needs_the_judges_price_and_an_unknown_one_is_no_cost_of_0(
    pytester: pytest.Pytester, app: FakeOpenAI, judge: FakeOpenAI
) -> None:
    pytester.makefile(".toml", prices=PRICES)  # no price for gpt-judge
    pytester.makeini(judge_ini(judge, "textsim_cache = off\n"))
    pytester.makepyfile(test_judged=JUDGED.replace("range(6)", "range(2)"))
    result = run_inner(pytester, "--textsim-budget-usd=5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*pytest-textsim: --textsim-budget-usd on the command line needs the judge's price, "
         "and there is none: no price for model 'gpt-judge' (*); add it to a textsim_prices file: "
         '?models."gpt-judge"? input = ..., output = ... (USD per million tokens)']
    )  # fmt: skip
    assert judge.requests == 0
    result = run_inner(pytester, "--textsim-gate", "judge.cost_usd.sum <= 1")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines_random(
        [
            "app: 2 calls, 124 tokens, $0.00044 · judge: 2 calls, cost unknown (no price for "
            "the judge model)",
            "FAIL judge.cost_usd.sum <= 1: no value (cost unknown: 2 judge calls without a "
            "price: no price for model 'gpt-judge' *)",
        ]
    )


def test_the_budget_caps_concurrent_calls_at_the_concurrencys_worth(
    fake_openai: FakeOpenAI,
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from pytest_textsim.calls.prices import LazyPrice, ModelPrice
    from pytest_textsim.judge.budget import JudgeBudget, JudgeBudgetSpent
    from pytest_textsim.judge.client import JudgeClient, JudgeOptions

    fake_openai.latency = 0.05
    fake_openai.responder = lambda request: Reply.score(5)
    client = JudgeClient(
        {"model": "m", "base_url": fake_openai.base_url, "api_key": "sk-test"},
        JudgeOptions(concurrency=4),
    )
    client.price = LazyPrice("m", "openai", ModelPrice(input=10000.0, output=0.0))  # $0.50 a call
    client.budget = JudgeBudget(1.25)
    messages = [{"role": "user", "content": "x"}]

    def judge(_: int) -> str:
        try:
            return client.complete(messages)[0] and "made"
        except JudgeBudgetSpent as exc:
            return str(exc)

    with ThreadPoolExecutor(16) as pool:
        outcomes = list(pool.map(judge, range(16)))
    made = fake_openai.requests
    # Three calls reach the budget; calls already holding one of the 4 slots finish.
    assert 3 <= made <= 3 + 4 - 1
    assert outcomes.count("made") == made
    assert set(outcomes) - {"made"} == {"judge budget of $1.25 spent (cached judgments are free)"}
    assert client.stats.cost_usd == pytest.approx(0.5 * made)


def test_the_html_report_shows_each_tests_calls_tokens_cost_and_latency(
    pytester: pytest.Pytester, app: FakeOpenAI
) -> None:
    pytester.makefile(".toml", prices=PRICES)
    pytester.makeini("[pytest]\ntextsim_prices = prices.toml\n")
    pytester.makepyfile(test_agents=AGENTS)
    run_inner(pytester, "--textsim-html=report.html", "--textsim-json=out.json").assert_outcomes(
        passed=3
    )
    page = (pytester.path / "report.html").read_text()
    tests = {
        t["test_id"]: t
        for t in json.loads((pytester.path / "out.json").read_text())["app_calls"]["tests"]
    }
    section = page.split('<section id="app-calls">', 1)[1].split("</section>", 1)[0]
    assert '<a href="#app-calls">App calls</a>' in page
    heads = re.findall(r"<th>(.*?)</th>", section)
    assert heads == ["test", "calls", "tokens", "cost", "p50 latency", "p95 latency"]
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in section.split("<tr>")[2:]]
    assert rows == [
        ["test_agents.py::test_agent_one", "3", "186", "$0.00066", *latency(tests, "agent_one")],
        ["test_agents.py::test_agent_two", "1", "62", "$0.00022", *latency(tests, "agent_two")],
        ["test_agents.py::test_unpriced", "1", "62", "unknown", *latency(tests, "unpriced")],
    ]


def latency(tests: dict[str, Any], name: str) -> list[str]:
    test = tests[f"test_agents.py::test_{name}"]
    return [f"{test['latency_p50_s']:.3f}s", f"{test['latency_p95_s']:.3f}s"]


def test_without_the_judge_hub_each_xdist_worker_gets_an_equal_share_of_the_budget() -> None:
    from types import SimpleNamespace

    from pytest_textsim.judge.budget import JudgeBudgetSpent
    from pytest_textsim.plugin.judge import _budget
    from pytest_textsim.settings.table import Resolver

    environ = {"TEXTSIM_BUDGET_USD": "5", "TEXTSIM_JUDGE_MODEL": "gpt-4o"}

    def worker(workerinput: dict[str, Any]) -> Any:
        config = SimpleNamespace(stash=pytest.Stash(), workerinput=workerinput)
        session = SimpleNamespace(
            resolver=Resolver(environ=environ),
            config=config,
            path_setting=lambda name: None,
            is_worker=bool(workerinput),
        )
        return _budget(session)  # type: ignore[arg-type]

    share = worker({"workercount": 2})
    assert (share.limit, share.total, share.workers) == (2.5, 5.0, 2)
    share.spend(2.5)
    with pytest.raises(JudgeBudgetSpent) as spent:
        share.check()
    assert str(spent.value) == (
        "judge budget of $5.00 spent (cached judgments are free); without the judge hub each "
        "of 2 xdist workers spends an equal share, $2.50"
    )
    whole = worker({})  # no xdist, or the controller whose hub makes the workers' calls
    assert (whole.limit, whole.workers) == (5.0, 1)
