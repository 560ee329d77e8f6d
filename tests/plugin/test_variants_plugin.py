"""Variants compared in one run, end to end (no xdist and -n 0 via ``run_plugin``; -n 2 where
the variant parameters travel from the workers)."""

from __future__ import annotations

import json

import pytest

# Behaviour xdist does not change: one way is enough (the -n 2 run costs seconds).
ONE_WAY = pytest.mark.parametrize("plugin_args", [["-p", "no:xdist"]], ids=["no-xdist"])

# Three variants of an "app": large answers nearly word for word, same is another draw
# of the same quality, small drops three to five words; same never ran case 39.
SUITE = """
import random
import pytest

WORDS = "the quick brown fox jumps over a lazy dog near the old river bank at dawn".split()
CASES = [" ".join(random.Random(i).sample(WORDS, 10)) for i in range(40)]


def answer(model, i):
    words = CASES[i].split()
    rng = random.Random(f"{model}-{i}")
    drop = {"large": rng.randint(0, 2), "same": rng.randint(0, 2), "small": rng.randint(3, 5)}
    for _ in range(drop[model]):
        words.pop(rng.randrange(len(words)))
    return " ".join(words)


@pytest.mark.parametrize("q", range(40))
@pytest.mark.parametrize("model", ["large", "small", "same"])
def test_answer(f1_score, model, q):
    if model == "same" and q == 39:
        pytest.skip("not run for same")
    f1_score(answer(model, q), CASES[q], threshold=0.75)
"""


@pytest.mark.xdist_matters  # the variant parameters travel on the workers' records
def test_three_variants_worse_equal_and_unpaired(pytester: pytest.Pytester, run_plugin) -> None:
    pytester.makepyfile(test_app=SUITE)
    result = run_plugin("--textsim-variants=model", "--textsim-json=out.json")
    result.assert_outcomes(passed=119, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*- textsim variants -*",
            "model: 3 values (large, small, same), reference large (the first value)",
            "variant  metric    cases   mean        95% CI     pass rate",
            "large    f1_score     40  0.959  0.943..0.975  40/40 (100%)",
            "small    f1_score     40  0.720  0.693..0.748   15/40 (38%)",
            "same     f1_score     39  0.939  0.921..0.956  39/39 (100%)",
            "small vs large: f1_score -0.239 (95% CI -0.270..-0.207), worse (40 pairs; p=*Holm)",
            "same vs large: f1_score -0.020 (95% CI -0.044..0.004), no detectable difference "
            "(39 pairs; 0.036 or more would have been detected)",
            "small vs large: f1_score pass/fail 25 passed -> failed, 0 failed -> passed of "
            "40 pairs (McNemar exact p=6.0e-08)",
            "1 unpaired case (left out of the differences of the variants they lack):",
            "  test_app.py::test_answer[39] f1_score: no score for same",
        ]
    )
    document = json.loads((pytester.path / "out.json").read_text())
    (section,) = document["variants"]
    assert section["parameter"] == "model" and section["reference"] == "large"
    verdicts = {d["variant"]: d["verdict"] for d in section["differences"]}
    assert verdicts == {"small": "worse", "same": "no detectable difference"}
    assert section["unpaired"] == 1
    case = next(c for c in section["cases"] if c["case"] == "test_app.py::test_answer[3]")
    assert case["tests"] == {
        v: f"test_app.py::test_answer[{v}-3]" for v in ("large", "small", "same")
    }


@ONE_WAY
def test_non_inferiority_gates_pass_and_fail(pytester: pytest.Pytester, run_plugin) -> None:
    pytester.makepyfile(test_app=SUITE)
    pytester.makeini(
        """
        [pytest]
        textsim_variants = model
        textsim_gates =
            f1.mean.diff[model=same-large].ci_low >= -0.1
            f1.mean.diff[model=small-large].ci_low >= -0.2
        """
    )
    result = run_plugin()
    assert result.ret == 1  # every test passed; a gate failed the run
    result.stdout.fnmatch_lines(
        [
            "PASS f1.mean.diff[model=same-large].ci_low >= -0.1: -0.0441 (mean -0.0197 of "
            "same - large over 39 pairs; 1 unpaired case left out: test_app.py::test_answer[39], "
            "95% CI -0.0441..0.0038)",
            "FAIL f1.mean.diff[model=small-large].ci_low >= -0.2: -0.2703 (mean -0.2392 of "
            "small - large over 40 pairs, 95% CI -0.2703..-0.2073)",
            "FAILED: gate failed: f1.mean.diff?model=small-large?.ci_low >= -0.2: *",
        ]
    )


@ONE_WAY
def test_a_partial_run_leaves_diff_gates_unchecked(
    pytester: pytest.Pytester, run_plugin, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)  # CI=true checks the ini's gates in a partial run
    pytester.makepyfile(test_app=SUITE)
    pytester.makeini("[pytest]\ntextsim_gates = f1.mean.diff[model=small-large].ci_low >= -0.2\n")
    result = run_plugin("--textsim-variants=model", "-k", "not same")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["1 gate not checked: partial run (-k 'not same': *"])


@ONE_WAY
def test_marker_and_chosen_reference(pytester: pytest.Pytester, run_plugin) -> None:
    pytester.makepyfile(
        test_app=SUITE.replace(
            "def test_answer(", "@pytest.mark.textsim(variants='model')\ndef test_answer("
        )
    )
    result = run_plugin("--textsim-reference-variant=small")
    result.stdout.fnmatch_lines(
        [
            "model: 3 values (large, small, same), reference small (chosen by "
            "--textsim-reference-variant on the command line)",
            "large vs small: f1_score +0.239 (95% CI 0.207..0.270), better (40 pairs; p=*Holm)",
        ]
    )


@ONE_WAY
def test_bad_settings_and_an_unknown_reference(pytester: pytest.Pytester, run_plugin) -> None:
    pytester.makepyfile(test_app=SUITE)
    result = run_plugin("--textsim-variants=model", "--textsim-reference-variant=huge")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "FAILED: reference variant 'huge' (--textsim-reference-variant on the command line) "
            "is no value the compared tests ran (model: large, small, same)",
        ]
    )
    result = run_plugin("--textsim-variants=model name")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*--textsim-variants on the command line: expected test parameter names "
            "(model, prompt), got 'model name'"
        ]
    )
    pytester.makepyfile(
        test_app=SUITE.replace(
            "def test_answer(", "@pytest.mark.textsim(variants=3)\ndef test_answer("
        )
    )
    result = run_plugin()
    result.stdout.fnmatch_lines(
        ["*@pytest.mark.textsim on test_app.py::test_answer?large-0?: variants must name test "
         "parameters, e.g. variants='model', got 3"]
    )  # fmt: skip
