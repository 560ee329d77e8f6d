"""Interval gates and significant regressions in pytest and on the command line, end to end."""

from __future__ import annotations

import json
import re

# In-process pytester runs drop the modules an inner run imported; numpy's C core
# cannot be imported twice in one process, so import it once, before any inner run.
import numpy  # noqa: F401
import pytest

from pytest_textsim.cli import main

# 30 answers; DROP (an environment variable) makes every other one worse.
SUITE = '''
import os
import pytest

TRUTHS = [f"the report for region {i} shows sales rose by {i} percent in march" for i in range(30)]

@pytest.mark.parametrize("i", range(30))
def test_answer(bleu, chrf, i):
    truth = TRUTHS[i]
    words = truth.split()
    if os.environ.get("DROP") and i % 2:
        words = words[:5] + ["and", "nothing", "else"]
    elif i % 3 == 0:
        words = words[:-2]
    bleu(" ".join(words), truth, threshold=0.1)
    chrf(" ".join(words), truth, threshold=0.1)
'''

INI = """
[pytest]
textsim_gates =
    bleu_score.mean.ci_low >= 0.5
    chrf_score.p10.ci_high <= 1
    bleu_score.pass_rate.ci_low >= 80%
    sacrebleu.corpus_bleu.score.ci_low >= 40
"""


@pytest.mark.xdist_matters  # interval gates and the paired comparison on the controller
def test_interval_gates_and_significant_regression(
    pytester: pytest.Pytester, run_plugin, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_app=SUITE)
    pytester.makeini(INI)
    first = run_plugin("--textsim-save-baseline=base.json")
    first.assert_outcomes(passed=30)
    assert first.ret == 0
    first.stdout.fnmatch_lines(
        [
            "*- textsim gates -*",
            "PASS bleu_score.mean.ci_low >= 0.5: 0.* (mean 0.* of 30 scores, 95% CI 0.*..*)",
            "PASS chrf_score.p10.ci_high <= 1: * (p10 * of 30 scores, 95% CI *..*)",
            "PASS bleu_score.pass_rate.ci_low >= 80%: 0.88* (pass_rate 1: 30 of 30 passed, "
            "95% CI 0.88*..1)",
            "PASS sacrebleu.corpus_bleu.score.ci_low >= 40: * (score *: 30 pairs, 95% CI *..*) "
            "[[]nrefs:1|*]",
        ]
    )
    saved = json.loads((pytester.path / "base.json").read_text())
    assert saved["version"] == 2 and len(saved["corpus"]["corpus_bleu"]["sentences"]) == 30

    monkeypatch.setenv("DROP", "1")
    second = run_plugin(
        "--textsim-compare=base.json", "--textsim-significance", "0.05",
        "--textsim-fail-on-regression", "--textsim-save-baseline=new.json",
    )  # fmt: skip
    second.assert_outcomes(passed=30)
    assert second.ret == pytest.ExitCode.TESTS_FAILED
    second.stdout.fnmatch_lines(
        [
            "FAIL bleu_score.mean.ci_low >= 0.5: * (mean * of 30 scores, 95% CI *..*)",
            "*- textsim regressions -*",
            "paired bootstrap per metric (95% CI of the difference; one-sided p of a drop, "
            "Holm-corrected over 3 metrics; a drop is a regression when beyond tolerance and "
            "significant at 0.05):",
            "  bleu_score.mean 0.* -> 0.* (-0.*, 95% CI -0.*..-0.*, p=0.0003) REGRESSION",
            "  chrf_score.mean 0.* -> 0.* (-0.*, 95% CI -0.*..-0.*, p=0.0003) REGRESSION",
            "  sacrebleu.corpus_bleu.score * -> * (-*, 95% CI -*..-*, p=0.0010) REGRESSION",
            "*FAILED: 30 scores and 3 metrics regressed against base.json "
            "(--textsim-fail-on-regression)",
        ]
    )


def test_compare_command_significance(tmp_path, capsys) -> None:
    def baseline(path, scores, version=2):
        rows = [
            {"test": f"t.py::test[{i}]", "evaluator": "bleu", "metric": "bleu_score",
             "params": {}, "score": s, "outcome": "passed" if s >= 0.3 else "failed"}
            for i, s in enumerate(scores)
        ]  # fmt: skip
        path.write_text(json.dumps({"format": "pytest-textsim baseline", "version": version,
                                    "scores": rows}))  # fmt: skip
        return str(path)

    old = [0.3 + 0.02 * i for i in range(20)]
    # Large, inconsistent moves: beyond the tolerance, but noise.
    noisy = [s + (0.1 if i % 2 else -0.11) for i, s in enumerate(old)]
    a = baseline(tmp_path / "a.json", old)
    b = baseline(tmp_path / "b.json", noisy)
    assert main(["compare", a, b]) == 1  # the max-drop rule alone: 10 regressions
    plain = capsys.readouterr().out
    assert "scores: 10 regressed, 10 improved" in plain
    assert main(["compare", a, b, "--significance", "0.05"]) == 0
    out = capsys.readouterr().out
    assert "  bleu_score.mean 0.4900 -> 0.4850 (-0.0050, 95% CI " in out
    assert (
        "beyond tolerance but not significant at 0.05 (10 tests, 10 scores), not regressions:"
    ) in out
    assert (
        "tests: 3 passed -> failed, 0 failed -> passed of 20 in both runs (McNemar exact p=0.1250)"
    ) in out
    # A version-1 baseline: compared without significance, and the output says so.
    v1 = baseline(tmp_path / "v1.json", old, version=1)
    assert main(["compare", v1, b, "--significance", "0.05"]) == 1
    assert f"compared without significance: {v1} is a version 1 baseline" in (
        capsys.readouterr().out
    )
    assert main(["compare", a, b, "--significance", "2"]) == 2
    assert "expected a significance level between 0 and 1" in capsys.readouterr().err


def test_score_command_interval_gates(tmp_path, capsys) -> None:
    rows = [{"response": f"the cat sat on mat number {i}",
             "ground_truth": f"the cat sat on the mat number {i}"} for i in range(12)]  # fmt: skip
    data = tmp_path / "rows.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    code = main(["score", str(data), "--metric", "bleu_score", "--no-progress",
                 "--gate", "bleu_score.mean.ci_low >= 0.3",
                 "--gate", "bleu_score.mean.ci_high <= 0.5"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1, out
    assert re.search(r"PASS bleu_score\.mean\.ci_low >= 0\.3: 0\.\d{4} \(mean 0\.\d{4} of 12 "
                     r"scores, 95% CI 0\.\d{4}\.\.0\.\d{4}\)", out)  # fmt: skip
    assert "FAIL bleu_score.mean.ci_high <= 0.5: " in out
