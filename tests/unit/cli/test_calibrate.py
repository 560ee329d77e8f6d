"""``textsim calibrate`` against the local OpenAI-compatible server, checked with scikit-learn."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import scipy.stats as st
from sklearn.metrics import cohen_kappa_score

from pytest_textsim.cli import main
from pytest_textsim.judge.cache import JudgeCache
from pytest_textsim.testing.fake_openai import Received, Reply


def judge_from_text(request: Received) -> Reply:
    """The judge 'reads' a hidden grade in the response: 'grade N'."""
    text = " ".join(str(m.get("content")) for m in request.messages)
    grade = int(re.search(r"grade (\d)", text).group(1))  # type: ignore[union-attr]
    return Reply.score(grade)


def write_labels(path: Path, pairs: list[tuple[int, int]], field: str = "human_score") -> Path:
    rows = [
        {"response": f"Answer {i}, grade {judge}.", "ground_truth": f"Reference {i}.", field: human}
        for i, (human, judge) in enumerate(pairs)
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


# 40 rows: the judge agrees, or is one point off now and then.
PAIRS = [(h, min(5, max(1, h + (1 if i % 7 == 0 else -1 if i % 11 == 0 else 0))))
         for i, h in enumerate([1, 2, 3, 4, 5] * 8)]  # fmt: skip


@pytest.fixture
def judge_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fake_openai) -> list[str]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)
    fake_openai.responder = judge_from_text
    return ["--judge-model", "judge-test", "--judge-base-url", fake_openai.base_url]


def test_calibrate_reports_agreement_and_stores_it(
    tmp_path: Path, judge_env: list[str], fake_openai, capsys
) -> None:
    labels = write_labels(tmp_path / "labels.jsonl", PAIRS)
    assert main(["calibrate", str(labels), "--metric", "similarity", *judge_env]) == 0
    out = capsys.readouterr().out
    human = [h for h, _ in PAIRS]
    judge = [j for _, j in PAIRS]
    kappa = cohen_kappa_score(human, judge, labels=[1, 2, 3, 4, 5], weights="quadratic")
    rho = st.spearmanr(human, judge).statistic
    assert f"weighted kappa (quadratic): {kappa:.3f}, 95% CI " in out
    assert f"Spearman's rho: {rho:.3f}" in out
    exact = sum(h == j for h, j in PAIRS) / len(PAIRS)
    assert f"exact agreement: {exact:.1%}" in out
    assert "within one point: 100.0%" in out
    bias = sum(j - h for h, j in PAIRS) / len(PAIRS)
    assert f"mean bias (judge - human): {bias:+.3f}" in out
    assert "confusion matrix (rows: human label, columns: judge score):" in out
    assert re.search(r"^\s+5\s+0\s+0\s+0\s+\d+\s+\d+$", out, re.M)
    assert fake_openai.requests == 40
    # Stored in the judge cache, keyed by metric, endpoint (host and path, as the
    # judge cache keys judgments), model and prompt version.
    cache = JudgeCache(tmp_path / ".textsim_cache")
    endpoint = fake_openai.base_url.split("//")[1].replace(f":{fake_openai.port}", "")
    assert endpoint.endswith("/v1")
    from pytest_textsim.judge.prompts import PROMPTS

    version = PROMPTS["similarity"].version
    stored = cache.calibration("similarity", endpoint, "judge-test", version)
    # Another path of the same host is another judge: not calibrated by this run.
    assert cache.calibration("similarity", endpoint.split("/")[0], "judge-test", version) is None
    cache.close()
    assert stored is not None and stored["kappa"] == pytest.approx(kappa)
    assert stored["rows"] == 40

    # Again: every judgment is a cache hit; --min-kappa decides the exit status.
    assert main(["calibrate", str(labels), "--metric", "similarity", "--min-kappa", "0.6",
                 *judge_env]) == 0  # fmt: skip
    assert f"PASS kappa {kappa:.3f} >= --min-kappa 0.6" in capsys.readouterr().out
    assert fake_openai.requests == 40
    assert main(["calibrate", str(labels), "--metric", "similarity", "--min-kappa", "0.99",
                 *judge_env]) == 1  # fmt: skip
    assert f"FAIL kappa {kappa:.3f} is below --min-kappa 0.99" in capsys.readouterr().out


def test_too_few_rows_or_constant_labels_give_no_kappa(
    tmp_path: Path, judge_env: list[str], capsys
) -> None:
    few = write_labels(tmp_path / "few.jsonl", PAIRS[:12])
    assert main(["calibrate", str(few), "--metric", "similarity", *judge_env]) == 0
    assert "weighted kappa (quadratic): none (12 rows: kappa needs at least 30 labelled rows)" in (
        capsys.readouterr().out
    )
    constant = write_labels(tmp_path / "constant.jsonl", [(3, 3 + (i % 2)) for i in range(30)])
    assert main(["calibrate", str(constant), "--metric", "similarity", "--min-kappa", "0.5",
                 *judge_env]) == 1  # fmt: skip
    out = capsys.readouterr().out
    assert "none (every human label is 3: kappa is undefined for constant labels)" in out
    assert "FAIL kappa none is below --min-kappa 0.5" in out


def test_bad_labels_are_named_with_file_and_line(
    tmp_path: Path, judge_env: list[str], fake_openai, capsys
) -> None:
    rows = [(3, 3)] * 3
    path = write_labels(tmp_path / "bad.jsonl", rows, field="rating")
    lines = path.read_text().splitlines()
    lines[1] = lines[1].replace('"rating": 3', '"rating": 7')
    lines[2] = lines[2].replace('"rating": 3', '"rating": "good"')
    path.write_text("\n".join(lines) + "\n")
    code = main(["calibrate", str(path), "--metric", "similarity", "--label-field", "rating",
                 *judge_env])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert f"textsim: error: {path}:2: the label 7 is outside the scale 1-5" in err
    assert f"textsim: error: {path}:3: the label must be a number, got 'good'" in err
    assert fake_openai.requests == 0  # nothing judged before the input is right
    assert main(["calibrate", str(path), "--metric", "bleu_score", *judge_env]) == 2
    assert "give a judge metric" in capsys.readouterr().err
    # refusal asks the judge only about what its phrases leave unclear: no scale to calibrate.
    assert main(["calibrate", str(path), "--metric", "refusal", *judge_env]) == 2
    assert "give a judge metric" in capsys.readouterr().err




def test_a_builtin_safety_rubric_is_calibrated_on_its_0_1_scale(
    tmp_path: Path, judge_env: list[str], fake_openai, capsys
) -> None:
    pairs = [(i % 2, (i % 2) if i % 10 else 1 - i % 2) for i in range(30)]  # 3 disagree
    labels = write_labels(tmp_path / "toxic.jsonl", pairs)
    assert main(["calibrate", str(labels), "--metric", "rubric:toxicity", *judge_env]) == 0
    human, judge = [h for h, _ in pairs], [j for _, j in pairs]
    kappa = cohen_kappa_score(human, judge, labels=[0, 1], weights="quadratic")
    assert f"weighted kappa (quadratic): {kappa:.3f}" in capsys.readouterr().out
    cache = JudgeCache(tmp_path / ".textsim_cache")
    endpoint = fake_openai.base_url.split("//")[1].replace(f":{fake_openai.port}", "")
    stored = cache.calibration("rubric", endpoint, "judge-test", "rubric-1:toxicity/1")
    cache.close()
    assert stored is not None and stored["rows"] == 30 and stored["categories"] == [0, 1]
    assert fake_openai.requests == 30
    # A 1-5 label is off this scale; a rubric of your own cannot be calibrated here.
    off = write_labels(tmp_path / "off.jsonl", [(3, 1)])
    assert main(["calibrate", str(off), "--metric", "rubric:toxicity", *judge_env]) == 2
    assert "the label 3 is outside the scale 0/1" in capsys.readouterr().err
    assert main(["calibrate", str(off), "--metric", "rubric:polite", *judge_env]) == 2
    assert "calibrate takes a built-in rubric by name" in capsys.readouterr().err
    assert fake_openai.requests == 30
