"""``textsim score`` gates on 95% intervals: the streaming engine keeps each pair's
sacreBLEU statistics only for a corpus gate with a ``.ci_*`` bound, in input order,
across chunks, worker processes and the judge step."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_textsim.cli import main
from pytest_textsim.engine.stream import CHUNK_LINES
from pytest_textsim.formatting import number
from pytest_textsim.nlp.sacre import corpus_interval, corpus_score, sentence_statistics

ROWS = [
    {"response": f"the cat sat on mat number {i}" + " again" * (i % 3),
     "ground_truth": f"the cat sat on the mat number {i}"}
    for i in range(2 * CHUNK_LINES + 17)
]  # fmt: skip


def _data(tmp_path: Path, rows: list[dict[str, str]]) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _expected(rows: list[dict[str, str]], seed: int = 12345) -> tuple[str, str, str]:
    hyps = [r["response"] for r in rows]
    refs = [r["ground_truth"] for r in rows]
    low, high = corpus_interval("corpus_bleu", sentence_statistics("corpus_bleu", hyps, refs),
                                seed=seed)  # fmt: skip
    return number(corpus_score("corpus_bleu", hyps, refs).score), number(low), number(high)


@pytest.mark.parametrize("jobs", [[], ["--jobs", "1"], ["--jobs", "2"]])
def test_corpus_interval_gate_over_chunks_and_workers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], jobs: list[str]
) -> None:
    score, low, high = _expected(ROWS)
    code = main(["score", str(_data(tmp_path, ROWS)), "--metric", "bleu_score", "--no-progress",
                 *jobs, "--gate", "sacrebleu.corpus_bleu.score.ci_low >= 1",
                 "--gate", "sacrebleu.corpus_bleu.score >= 1"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    pairs = f"{len(ROWS)} pairs"
    assert (
        f"PASS sacrebleu.corpus_bleu.score.ci_low >= 1: {low} (score {score}: {pairs}, "
        f"95% CI {low}..{high}) [nrefs:1|" in out
    ), out
    # The plain gate on the same corpus shares the kept statistics, so it shows the interval.
    assert f"PASS sacrebleu.corpus_bleu.score >= 1: {score} ({pairs}, 95% CI {low}..{high})" in out


def test_without_a_bound_no_sentence_is_kept_and_no_interval_is_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["score", str(_data(tmp_path, ROWS[:40])), "--metric", "bleu_score",
                 "--no-progress", "--gate", "sacrebleu.corpus_bleu.score >= 1"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert re.search(r"PASS sacrebleu\.corpus_bleu\.score >= 1: [\d.]+ \(40 pairs\) \[nrefs", out)


def test_the_bootstrap_seed_setting_moves_the_interval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = ROWS[:60]
    monkeypatch.setenv("TEXTSIM_BOOTSTRAP_SEED", "7")
    _, low, high = _expected(rows, seed=7)
    assert (low, high) != _expected(rows)[1:]
    main(["score", str(_data(tmp_path, rows)), "--metric", "bleu_score", "--no-progress",
          "--gate", "sacrebleu.corpus_bleu.score.ci_high >= 1"])  # fmt: skip
    assert f"95% CI {low}..{high})" in capsys.readouterr().out


def test_corpus_interval_fed_by_a_judge_metric_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    fake_openai,
) -> None:
    """Rows a judge scored (in the parent, not in workers) feed the corpus interval too."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)
    rows = ROWS[:30]
    score, low, high = _expected(rows)
    code = main(["score", str(_data(tmp_path, rows)), "--metric", "similarity",
                 "--no-progress", "--judge-model", "judge-test",
                 "--judge-base-url", fake_openai.base_url,
                 "--gate", "sacrebleu.corpus_bleu.score.ci_low >= 1"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"(score {score}: 30 pairs, 95% CI {low}..{high})" in out
    assert fake_openai.requests == 30


def test_too_few_pairs_for_an_interval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["score", str(_data(tmp_path, ROWS[:7])), "--metric", "bleu_score",
                 "--no-progress", "--gate", "sacrebleu.corpus_bleu.score.ci_low >= 1"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1
    assert "no 95% interval from 7 pairs, an interval needs at least 10" in out
