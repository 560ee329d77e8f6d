"""What each variant's app calls cost (gating/variant_costs.py): figures summed per case,
an unknown price kept unknown, latency quantiles (numpy's) and the changes from the
reference; the HTML view's table of them."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_textsim import stats
from pytest_textsim.gating.variant_costs import compare_app
from pytest_textsim.html.variants import section


def figures(cost: float | None, latency: float | None = 0.5, calls: int = 1) -> dict[str, float]:
    """One test's figures as plugin/app_calls.py records them."""
    out = {"calls": float(calls), "tokens": 100.0 * calls}
    if cost is None:
        out["unpriced"] = float(calls)
    else:
        out["cost_usd"] = cost
    if latency is not None:
        out["latency_total_s"] = latency
    return out


def test_figures_per_variant_and_the_changes_over_the_paired_cases() -> None:
    rng = np.random.default_rng(3)
    big_cost, big_latency = rng.uniform(1e-3, 2e-3, 12), rng.uniform(0.5, 1.5, 12)
    tests = [("big", f"c{i:02}", figures(big_cost[i], big_latency[i])) for i in range(12)]
    # small: half the cost, case 11 not run, case 10 in two tests (summed), no latency for 9.
    for i in range(10):
        tests.append(("small", f"c{i:02}", figures(big_cost[i] / 2, None if i == 9 else 0.3)))
    tests += [("small", "c10", figures(1e-4, 0.1)), ("small", "c10", figures(2e-4, 0.2))]
    app = compare_app(tests, ["big", "small", "none"], "big", seed=5)
    assert app is not None
    big, small = app.arms  # "none" made no call: no arm
    assert (big.cases, big.calls, big.tokens) == (12, 12, 1200.0)
    assert big.cost_usd == pytest.approx(float(big_cost.sum()), rel=1e-12)
    assert big.latency_p50_s == pytest.approx(float(np.percentile(big_latency, 50)), rel=1e-12)
    assert big.latency_p95_s == pytest.approx(float(np.percentile(big_latency, 95)), rel=1e-12)
    assert (small.cases, small.calls, small.latency_cases) == (11, 12, 10)
    assert small.cost_per_case == pytest.approx(
        (big_cost[:10].sum() / 2 + 3e-4) / 11, rel=1e-12
    )
    cost, latency = app.differences
    old, new = list(big_cost[:11]), [*(big_cost[:10] / 2), 3e-4]
    assert (cost.pairs, latency.pairs) == (11, 10)
    assert (cost.change, cost.interval) == stats.relative_change(old, new, seed=5)
    paired = [i for i in range(11) if i != 9]
    expected = stats.relative_change(
        [big_latency[i] for i in paired], [0.3] * 9 + [0.1 + 0.2], seed=5
    )
    assert (latency.change, latency.interval) == expected
    assert cost.line().startswith("small vs big: cost per case -")
    assert cost.line().endswith("; 11 pairs)")
    document = {"variants": [{"parameter": "model", "reference": "big", "values": ["big"],
                              "app": app.to_dict()}]}  # fmt: skip
    html = section(document)
    assert f"<td class=\"num\">{big.tokens:.0f}</td>" in html and cost.line() in html


def test_an_unknown_price_is_unknown_never_zero() -> None:
    tests = [("a", f"c{i}", figures(1e-3)) for i in range(10)]
    tests += [("b", f"c{i}", figures(None if i < 2 else 1e-3)) for i in range(10)]
    app = compare_app(tests, ["a", "b"], "a")
    assert app is not None
    assert app.arms[1].cost_usd is None and app.arms[1].unpriced == 2
    lines = list(app.table_lines())
    assert lines[3].split()[5:7] == ["unknown", "unknown"]
    assert lines[4] == (
        "b: cost unknown, 2 calls without a price (add the model's price to a textsim_prices "
        "file)"
    )
    assert app.differences[0].line() == (
        "b vs a: cost per case: unknown, b has 2 calls without a price"
    )
    assert app.to_dict()["arms"][1]["cost_usd"] is None
    html = section({"variants": [{"app": app.to_dict()}]})
    row = html[html.index("<td>b</td>") :].split("</tr>")[0]
    assert row.count("<td class=\"num\">unknown</td>") == 2 and "$" not in row


def test_few_pairs_no_pairs_and_a_reference_that_costs_nothing() -> None:
    few = [(v, f"c{i}", figures(c * (i + 1))) for v, c in (("a", 1e-3), ("b", 2e-3))
           for i in range(4)]  # fmt: skip
    app = compare_app(few, ["a", "b"], "a")
    assert app is not None
    assert app.differences[0].line() == (
        "b vs a: cost per case +100.0% (4 pairs: too few for an interval, at least 10 needed)"
    )
    apart = [("a", "c1", figures(1e-3)), ("b", "c2", figures(1e-3))]
    app = compare_app(apart, ["a", "b"], "a")
    assert app is not None
    assert app.differences[0].line() == (
        "b vs a: cost per case: no case made app calls for both b and a"
    )
    free = [(v, f"c{i}", figures(0.0 if v == "a" else 1e-3)) for v in "ab" for i in range(10)]
    app = compare_app(free, ["a", "b"], "a")
    assert app is not None
    assert app.differences[0].line() == (
        "b vs a: cost per case: a's is 0 over the 10 pairs: no relative change"
    )
    assert compare_app([], ["a", "b"], "a") is None


def test_the_html_view_escapes_and_checks_what_a_json_report_gives_it() -> None:
    hostile = {"arms": [{"variant": "<i>v</i>", "cases": "<script>", "calls": 2, "tokens": 9}],
               "differences": [{"line": "<b>a vs b</b>"}]}  # fmt: skip
    html = section({"variants": [{"app": hostile}]})
    assert "&lt;i&gt;v&lt;/i&gt;" in html and "&lt;b&gt;a vs b&lt;/b&gt;" in html
    assert "<script>" not in html and "<i>" not in html and "<b>" not in html
