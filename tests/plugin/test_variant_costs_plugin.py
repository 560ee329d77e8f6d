"""What each variant's app calls cost, in the variants section (terminal, JSON, HTML), end
to end: two variants of an app call the local stand-in server with the real ``openai``
client; its replies report more tokens for ``big`` than for ``tiny``, and a
``textsim_prices`` file prices both models."""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import scipy.stats as st

from pytest_textsim.formatting import usd
from pytest_textsim.stats import DEFAULT_SEED
from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply

CASES = 10
PRICES = {"big": (2.5, 10.0), "tiny": (0.1, 0.4)}  # USD per million input, output tokens

SUITE = f"""
import os
import openai
import pytest

LLM = openai.OpenAI(base_url=os.environ["APP_BASE_URL"], api_key="sk-app", max_retries=0)

def app(model, q):
    reply = LLM.chat.completions.create(
        model=model, messages=[{{"role": "user", "content": f"question {{q}}"}}]
    )
    return reply.choices[0].message.content

@pytest.mark.parametrize("q", range({CASES}))
@pytest.mark.parametrize("model", ["big", "tiny"])
def test_answer(f1_score, llm_calls, model, q):
    f1_score(app(model, q), f"the answer is {{q}}")
"""


def tokens(model: str, q: int) -> tuple[int, int]:
    """The usage the stand-in reports: big reads a longer prompt and writes more."""
    return (200 + 10 * q, 40 + q) if model == "big" else (50 + 5 * q, 12 + 9 * (q % 4))


def respond(request: Received) -> Reply:
    q = int(str(request.messages[0]["content"]).split()[-1])
    words = f"the answer is {q}" if request.model == "big" else f"answer {q}"
    return Reply(content=words, usage=tokens(str(request.model), q))


def cost(model: str, q: int) -> float:
    (read, written), (per_input, per_output) = tokens(model, q), PRICES[model]
    return (read * per_input + written * per_output) / 1e6


def scipy_rng(seed: int) -> dict[str, object]:
    # scipy >= 1.15 calls the generator argument `rng`; older ones `random_state`.
    name = "rng" if "rng" in inspect.signature(st.bootstrap).parameters else "random_state"
    return {name: np.random.default_rng(seed)}


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    with FakeOpenAI(responder=respond) as server:
        monkeypatch.setenv("APP_BASE_URL", server.base_url)
        yield server


# The variants of each test travel from the workers on its teardown report, so -n 2; the
# run without xdist is docs/variants.md's example (tests/docs), which shows the same section.
@pytest.mark.parametrize("plugin_args", [["-n", "2"]], ids=["n2"])
def test_each_variants_cost_tokens_and_latency_with_the_change_from_the_reference(
    pytester: pytest.Pytester, app: FakeOpenAI, run_plugin: Any
) -> None:
    pytester.makepyfile(test_app=SUITE)
    prices = "".join(
        f'[models."{m}"]\ninput = {i}\noutput = {o}\n' for m, (i, o) in PRICES.items()
    )
    pytester.makefile(".toml", prices=prices)
    pytester.makeini("[pytest]\ntextsim_prices = prices.toml\ntextsim_variants = model\n")
    result = run_plugin("--textsim-json=out.json", "--textsim-html=out.html")
    result.assert_outcomes(passed=2 * CASES)

    # Pairs in the order of their case ids, as the comparison takes them.
    order = sorted(range(CASES), key=lambda q: f"test_app.py::test_answer[{q}]")
    big, tiny = [cost("big", q) for q in order], [cost("tiny", q) for q in order]
    change = sum(tiny) / sum(big) - 1

    def ratio(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.mean(b, axis=axis) / np.mean(a, axis=axis) - 1

    interval = st.bootstrap(
        (np.array(big), np.array(tiny)), ratio, paired=True, n_resamples=10_000, batch=500,
        method="percentile", **scipy_rng(DEFAULT_SEED),
    ).confidence_interval  # fmt: skip
    tokens_big = sum(sum(tokens("big", q)) for q in range(CASES))
    tokens_tiny = sum(sum(tokens("tiny", q)) for q in range(CASES))
    result.stdout.fnmatch_lines(
        [
            "*- textsim variants -*",
            "model: 2 values (big, tiny), reference big (the first value)",
            "variant  metric    cases   mean*",
            "app calls per variant (p50, p95: a case's latency, its calls' added up):",
            "variant  cases  calls  tokens  tokens/case * cost  cost/case * p50 * p95",
            f"big * 10 * 10 * {tokens_big} * {tokens_big / CASES:.0f} * {usd(sum(big))} * "
            f"{usd(sum(big) / CASES)} * 0.*s * 0.*s",
            f"tiny * 10 * 10 * {tokens_tiny} * {tokens_tiny / CASES:.0f} * {usd(sum(tiny))} * "
            f"{usd(sum(tiny) / CASES)} * 0.*s * 0.*s",
            "tiny vs big: f1_score *",
            f"tiny vs big: cost per case {change:+.1%} (95% CI {interval.low:+.1%}.."
            f"{interval.high:+.1%}; 10 pairs)",
            "tiny vs big: latency per case *% (95% CI *%..*%; 10 pairs)",
        ]
    )
    (section,) = json.loads((pytester.path / "out.json").read_text())["variants"]
    arms = {arm["variant"]: arm for arm in section["app"]["arms"]}
    assert arms["big"]["cost_usd"] == pytest.approx(sum(big), rel=1e-12)
    assert arms["tiny"]["cost_per_case_usd"] == pytest.approx(sum(tiny) / CASES, rel=1e-12)
    assert (arms["big"]["calls"], arms["big"]["tokens"], arms["big"]["unpriced"]) == (
        CASES, tokens_big, 0,
    )  # fmt: skip
    assert 0 < arms["big"]["latency_p50_s"] <= arms["big"]["latency_p95_s"]
    figures = {d["figure"]: d for d in section["app"]["differences"]}
    assert figures["cost"]["change"] == pytest.approx(change, rel=1e-12)
    assert figures["cost"]["interval"]["low"] == pytest.approx(interval.low, rel=1e-12)
    assert figures["cost"]["interval"]["high"] == pytest.approx(interval.high, rel=1e-12)
    assert figures["latency"]["pairs"] == CASES
    # The HTML view's app table and the changes.
    html = (pytester.path / "out.html").read_text()
    view = html[html.index('<section id="variants">') :]
    cells = re.findall(r'<table class="variant-app">.*?</table>', view)
    assert len(cells) == 1 and usd(sum(tiny)) in cells[0] and str(tokens_big) in cells[0]
    assert figures["cost"]["line"] in view
