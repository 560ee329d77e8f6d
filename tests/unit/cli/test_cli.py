"""The ``textsim score`` and ``textsim compare`` commands, through ``main([...])``."""

from __future__ import annotations

import importlib.metadata
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_textsim.cli import main
from pytest_textsim.engine.stream import Progress
from pytest_textsim.gating import baseline
from pytest_textsim.records import ScoreRecord

ROWS = [
    {"id": "curie", "query": "Where was Marie Curie born?",
     "response": "According to wikipedia, Marie Curie was not born in Paris but in Warsaw.",
     "ground_truth": "Marie Curie was born in Warsaw."},
    {"id": "cat", "response": "The cat sat on the mat.", "ground_truth": "The cat sat on the mat."},
]  # fmt: skip


def write_jsonl(path: Path, rows: list[object], blank_after: int | None = None) -> Path:
    lines = [json.dumps(row) if not isinstance(row, str) else row for row in rows]
    if blank_after is not None:
        lines.insert(blank_after, "")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "data.jsonl", ROWS, blank_after=1)


def test_score_writes_rows_and_prints_summary(data: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "scored.jsonl"
    rc = main(["score", str(data), "--metric", "bleu_score", "--metric", "rouge_score:rougeL",
               "-m", "f1", "--threshold", "bleu_score=0.3", "-o", str(out)])  # fmt: skip
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert captured.out.splitlines() == [
        f"textsim score: 2 rows from {data}",
        "metric                    count   mean    min    max  pass rate",
        "bleu_score                    2  0.578  0.155  1.000  50% (1/2)",
        "rouge_precision (rougeL)      2  0.731  0.462  1.000  50% (1/2)",
        "rouge_recall (rougeL)         2  1.000  1.000  1.000  100% (2/2)",
        "rouge_f1_score (rougeL)       2  0.816  0.632  1.000  100% (2/2)",
        "f1_score                      2  0.816  0.632  1.000  100% (2/2)",
        "1 of 2 rows below threshold",
    ]
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows[0] == {
        **ROWS[0],
        "bleu_score": 0.1550967560878879, "bleu_result": "fail", "bleu_threshold": 0.3,
        "rouge_precision": 0.46153846153846156, "rouge_recall": 1.0,
        "rouge_f1_score": 0.631578947368421, "rouge_precision_result": "fail",
        "rouge_recall_result": "pass", "rouge_f1_score_result": "pass",
        "rouge_precision_threshold": 0.5, "rouge_recall_threshold": 0.5,
        "rouge_f1_score_threshold": 0.5,
        "f1_score": 0.631578947368421, "f1_result": "pass", "f1_threshold": 0.5,
    }  # fmt: skip
    assert list(rows[0])[:4] == ["id", "query", "response", "ground_truth"]  # input order kept
    assert rows[1]["bleu_score"] == 1.0


def test_rows_below_threshold_fail_the_command_with_fail_on_threshold(
    data: Path, tmp_path: Path, capsys
) -> None:
    args = ["score", str(data), "-m", "bleu_score", "-m", "f1_score", "--threshold", "f1=0.9"]
    assert main(args) == 0  # a row misses a threshold; without the flag, a line says so
    assert capsys.readouterr().out.splitlines()[-1] == "1 of 2 rows below threshold"
    assert main([*args, "--fail-on-threshold"]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == "1 of 2 rows below threshold (--fail-on-threshold on the command line)"
    ini = tmp_path / "pytest.ini"
    ini.write_text("[pytest]\ntextsim_fail_on_threshold = true\n", encoding="utf-8")
    assert main([*args, "-c", str(ini)]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == "1 of 2 rows below threshold (textsim_fail_on_threshold in pytest.ini)"
    # With the flag and every row passing, the line says none is below.
    assert main(["score", str(data), "-m", "f1_score", "--threshold", "f1=0.1",
                 "--fail-on-threshold"]) == 0  # fmt: skip
    assert "0 of 2 rows below threshold (--fail-on-threshold" in capsys.readouterr().out
    ini.write_text("[pytest]\ntextsim_fail_on_threshold = maybe\n", encoding="utf-8")
    assert main([*args, "-c", str(ini)]) == 2
    assert "textsim_fail_on_threshold" in capsys.readouterr().err


def test_gates_decide_the_exit_status(data: Path, capsys) -> None:
    args = ["score", str(data), "-m", "bleu_score", "-m", "chrf_score", "-m", "ter_score"]
    rc = main([*args, "--gate", "bleu_score.mean >= 0.5", "--gate", "ter_score.max <= 0.5",
               "--gate", "sacrebleu.corpus_bleu.score >= 30"])  # fmt: skip
    out = capsys.readouterr().out
    assert rc == 1
    assert out.splitlines()[-4:] == [
        "gates:",
        "  PASS bleu_score.mean >= 0.5: 0.5775 (mean of 2 scores)",
        "  FAIL ter_score.max <= 0.5: 1.1667 (max of 2 scores)",
        "  PASS sacrebleu.corpus_bleu.score >= 30: 42.9495 (2 pairs) "
        "[nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:" + _sacrebleu_version() + "]",
    ]
    assert main([*args, "--gate", "chrf_score.min >= 0.6"]) == 0


def test_chrf_and_ter_thresholds_like_the_plugin(
    data: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    # TER passes when <= its threshold; the default comes from TEXTSIM_THRESHOLD_TER
    # (or the ini file) as in pytest, and the plugin's 0..5 range is checked.
    monkeypatch.setenv("TEXTSIM_THRESHOLD_TER", "1.2")
    args = ["score", str(data), "-m", "ter_score", "-m", "chrf", "-o", "-"]
    assert main([*args, "--threshold", "chrf_score=0.9"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()[:2]]
    assert [(r["ter_score"], r["ter_threshold"], r["ter_result"]) for r in rows] == [
        (pytest.approx(1.1667, abs=1e-4), 1.2, "pass"), (0.0, 1.2, "pass")]  # fmt: skip
    assert [r["chrf_result"] for r in rows] == ["fail", "pass"]
    assert main([*args, "--threshold", "ter_score=45"]) == 2
    assert "a TER threshold must be from 0 to 5, got 45.0" in capsys.readouterr().err


def _sacrebleu_version() -> str:
    import sacrebleu

    return str(sacrebleu.__version__)


def test_map_id_field_and_two_variants(tmp_path: Path, capsys) -> None:
    data = write_jsonl(tmp_path / "qa.jsonl", [
        {"q": "x", "answer": "the cat sat", "expected": "the cat sat down"},
    ])  # fmt: skip
    out = tmp_path / "out.jsonl"
    rc = main(["score", str(data), "--map", "response=answer", "--map", "ground_truth=expected",
               "-m", "rouge:rouge1", "-m", "rouge_score:rouge2", "-o", str(out),
               "--gate", "rouge_f1_score[rouge_type=rouge2].mean >= 0.8",
               # the names the output rows use work in gates too
               "--gate", "rouge1_recall.min >= 0.75", "--gate", "rouge2_f1_score.max <= 0.8",
               ])  # fmt: skip
    assert rc == 0, capsys.readouterr().err
    row = json.loads(out.read_text(encoding="utf-8"))
    assert row["rouge1_recall"] == 0.75 and row["rouge1_recall_result"] == "pass"
    assert row["rouge2_f1_score"] == 0.8 and row["rouge2_f1_score_threshold"] == 0.5
    assert "rouge_recall" not in row
    out = capsys.readouterr().out
    assert "PASS rouge_f1_score[rouge_type=rouge2].mean >= 0.8: 0.8000" in out
    assert "PASS rouge1_recall.min >= 0.75: 0.7500 (min of 1 score)" in out
    assert "PASS rouge2_f1_score.max <= 0.8: 0.8000 (max of 1 score)" in out


def test_every_bad_line_is_reported_with_file_and_line(tmp_path: Path, capsys) -> None:
    data = write_jsonl(tmp_path / "bad.jsonl", [
        ROWS[1],
        {"response": "a", "ground_truth": 3},
        "[1, 2]",
        "{oops",
        {"answer": "x"},
        {"response": None, "ground_truth": "y", "query": None},
        ROWS[1],
    ], blank_after=1)  # fmt: skip
    out = tmp_path / "scored.jsonl"
    rc = main(["score", str(data), "-m", "bleu_score", "-m", "f1_score", "-o", str(out)])
    assert rc == 2
    # The rows around the bad lines are scored and written, in order.
    assert [json.loads(line)["bleu_score"] for line in out.read_text().splitlines()] == [1, 1]
    assert capsys.readouterr().err.splitlines() == [
        f'textsim: error: {data}:3: "ground_truth" must be a string, got a number (3)',
        f"textsim: error: {data}:4: expected a JSON object, got an array",
        f"textsim: error: {data}:5: not valid JSON (Expecting property name enclosed in "
        "double quotes at column 2)",
        f'textsim: error: {data}:6: missing "response", needed by bleu_score, f1_score; '
        "fields present: answer",
        f'textsim: error: {data}:6: missing "ground_truth", needed by bleu_score, f1_score; '
        "fields present: answer",
        f'textsim: error: {data}:7: "response" is null; a string is needed by bleu_score, '
        "f1_score",
    ]  # fmt: skip


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_text_an_evaluator_refuses_is_that_rows_error(tmp_path: Path, capsys, jobs: str) -> None:
    # 1,000 rows, so that --jobs 2 scores them in worker processes.
    rows: list[object] = [ROWS[1]] * 1000
    rows[1] = {"response": "word " * 20, "ground_truth": "word"}
    data = write_jsonl(tmp_path / "rows.jsonl", rows)
    out = tmp_path / "scored.jsonl"
    rc = main(["score", str(data), "-m", "ter", "--option", "ter.max_chars=50",
               "-o", str(out), "--jobs", jobs])  # fmt: skip
    assert rc == 2
    assert len(out.read_text().splitlines()) == 999  # the other rows are scored
    assert capsys.readouterr().err.splitlines() == [
        f"textsim: error: {data}:2: TerScoreEvaluator(): response is 100 characters, over "
        "the limit of 50 (TER's shift search grows faster than the square of the length); "
        "raise max_chars to score it anyway: max_chars= on the class, fixture, helper or "
        "marker, or --option ter.max_chars=N for textsim score"
    ]
    rc = main(["score", str(data), "-m", "ter", "--option", "ter.max_chars=100",
               "-o", str(out), "--jobs", jobs])  # fmt: skip
    assert rc == 0
    assert len(out.read_text().splitlines()) == 1000


@pytest.mark.parametrize(
    ("args", "errors"),
    [
        (["-m", "blue", "-m", "rouge:rouge10", "--gate", "bleu_score.avg >= 1",
          "--map", "answer", "--map", "foo=bar"],
         ["--metric 'blue': unknown metric; known: *bleu_score*chrf_score*",
          "--metric 'rouge:rouge10': option 'rouge_type': expected one of rouge1, *",
          "--map 'answer': expected FIELD=COLUMN, e.g. response=answer",
          "--map 'foo=bar': unknown field 'foo'; fields: response, ground_truth, query, context, "
          "conversation, trace",
          "invalid gate 'bleu_score.avg >= 1' (--gate): unknown aggregate 'avg'*"]),
        (["-m", "bleu", "-m", "bleu_score"],
         ["--metric 'bleu_score': same metric as --metric 'bleu'"]),
        (["-m", "bleu_score:x"], ["--metric 'bleu_score:x': bleu_score takes no ':variant'"]),
        (["-m", "similarity", "-m", "qa", "-m", "f1", "-m", "bleu"],
         ["--metric 'similarity': --metric 'qa' already scores similarity; give one of the two",
          "--metric 'f1': --metric 'qa' already scores f1; give one of the two"]),
        (["-m", "bleu", "--threshold", "bleu=2", "--threshold", "meteor=0.1", "--threshold", "x"],
         ["--threshold 'bleu=2': a BLEU threshold must be from 0 to 1, got 2.0",
          "--threshold 'meteor=0.1': no --metric meteor to apply it to",
          "--threshold 'x': expected METRIC=X, e.g. bleu_score=0.3"]),
        ([], ["give at least one --metric, e.g. --metric bleu_score"]),
    ],
)  # fmt: skip
def test_usage_errors_are_all_reported(data: Path, capsys, args: list[str], errors) -> None:
    assert main(["score", str(data), *args]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == len(errors), lines
    for line, pattern in zip(lines, errors):
        from fnmatch import fnmatch

        assert fnmatch(line, "textsim: error: " + pattern), line


def test_missing_and_empty_files(tmp_path: Path, capsys) -> None:
    assert main(["score", str(tmp_path / "nope.jsonl"), "-m", "bleu"]) == 2
    assert capsys.readouterr().err == f"textsim: error: {tmp_path / 'nope.jsonl'}: no such file\n"
    empty = write_jsonl(tmp_path / "empty.jsonl", [""])
    assert main(["score", str(empty), "-m", "bleu"]) == 2
    assert "no rows to score (the file is empty)" in capsys.readouterr().err
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"response": "a", "ground_truth": "a"}\n{"response": "caf\xe9"}\n')
    assert main(["score", str(latin), "-m", "bleu"]) == 2
    assert f"{latin}:2: not UTF-8 text" in capsys.readouterr().err


def test_judge_metric_without_a_judge_says_what_to_set(
    data: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("TEXTSIM_JUDGE_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    assert main(["score", str(data), "-m", "similarity"]) == 2
    assert "no LLM judge is configured" in capsys.readouterr().err


def _baseline(path: Path, scores: dict[str, float], **params: object) -> Path:
    records = [
        ScoreRecord(metric_name="bleu", score_key="bleu_score", score=s, threshold=0.5, passed=True,
                    nodeid=f"t.py::{name}", params=dict(params))
        for name, s in scores.items()
    ]  # fmt: skip
    baseline.save(path, records)
    return path


def test_compare(tmp_path: Path, capsys) -> None:
    old = _baseline(tmp_path / "old.json", {"a": 0.5, "b": 0.5, "gone": 0.3})
    new = _baseline(tmp_path / "new.json", {"a": 0.49, "b": 0.2, "fresh": 0.9})
    assert main(["compare", str(old), str(new)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"textsim regressions: {old} -> {new}",
        "test     metric      baseline  now     change   tolerance",
        "t.py::b  bleu_score  0.5000    0.2000  -0.3000  0.0200",
        "new, not in the baseline (1 test, 1 score):",
        "  t.py::fresh (bleu_score)",
        "vanished, in the baseline but no longer recorded (1 test, 1 score):",
        "  t.py::gone (bleu_score)",
        "scores: 1 regressed, 0 improved, 1 unchanged, 1 new, 1 vanished",
    ]
    assert main(["compare", str(old), str(new), "--max-drop", "bleu_score=0.4"]) == 0
    assert "no regressions against" in capsys.readouterr().out
    assert main(["compare", str(old), str(new), "--max-drop", "blue_score=0.4"]) == 1
    assert capsys.readouterr().out.splitlines()[-2] == (
        "tolerance for 'blue_score' matches no score; metrics here: bleu_score"
    )
    assert main(["compare", str(old), str(new), "--max-drop", "0.001"]) == 1
    assert "2 regressed" in capsys.readouterr().out


def test_compare_takes_the_cost_rise_it_tolerates(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    def costs(path: Path, cost: float) -> Path:
        records = [ScoreRecord(metric_name="app", score_key="app.cost_usd", score=cost,
                               threshold=None, passed=None, nodeid="t.py::a")]  # fmt: skip
        baseline.save(path, records)
        return path

    old, new = costs(tmp_path / "old.json", 0.002), costs(tmp_path / "new.json", 0.0024)
    assert main(["compare", str(old), str(new)]) == 1  # 20%: beyond the default 10%
    out = capsys.readouterr().out
    assert "t.py::a  app.cost_usd  0.002     0.0024  +0.0004  0.0002" in out
    assert main(["compare", str(old), str(new), "--max-cost-rise", "25%"]) == 0
    assert "no regressions against" in capsys.readouterr().out
    monkeypatch.setenv("TEXTSIM_MAX_COST_RISE", "0.3")
    assert main(["compare", str(old), str(new)]) == 0
    assert main(["compare", str(old), str(new), "--max-cost-rise", "0.15"]) == 1  # flag first
    capsys.readouterr()
    assert main(["compare", str(old), str(new), "--max-cost-rise", "lots"]) == 2
    assert "--max-cost-rise on the command line: " in capsys.readouterr().err


def test_compare_reads_json_reports_and_refuses_other_parameters(tmp_path: Path, capsys) -> None:
    old = _baseline(tmp_path / "old.json", {"a": 0.5}, tokenizer="13a")
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"format": "pytest-textsim/1", "scores": [
        {"test_id": "t.py::a", "evaluator": "bleu", "metric": "bleu_score", "variant": None,
         "score": 0.1, "params": {"tokenizer": "intl"}},
    ]}), encoding="utf-8")  # fmt: skip
    assert main(["compare", str(old), str(report)]) == 0
    out = capsys.readouterr().out
    assert '  bleu: tokenizer "13a" -> "intl" (1 score, e.g. t.py::a)' in out
    assert "0 regressed, 0 improved, 0 unchanged, 0 new, 0 vanished, 1 not compared" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.json", "old.json"], "missing.json: no such file"),
        (["old.json", "old.json", "--max-drop", "x=y"],
         "--max-drop on the command line: 'x=y': expected a number (0.05) or metric=number "
         "(bleu_score=0.05)"),
    ],
)  # fmt: skip
def test_compare_errors(tmp_path: Path, capsys, monkeypatch, args, message: str) -> None:
    monkeypatch.chdir(tmp_path)
    _baseline(tmp_path / "old.json", {"a": 0.5})
    assert main(["compare", *args]) == 2
    assert message in capsys.readouterr().err


def test_help_has_examples(capsys) -> None:
    for argv in (["--help"], ["score", "--help"], ["compare", "--help"], ["cache", "--help"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 0
        assert "examples:" in capsys.readouterr().out, argv
    assert main([]) == 2  # no command: the help, and a usage error status


def test_progress_bar_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert Progress.wanted(Tty(), None) and not Progress.wanted(io.StringIO(), None)
    assert Progress.wanted(io.StringIO(), True) and not Progress.wanted(Tty(), False)
    monkeypatch.setenv("CI", "true")
    assert not Progress.wanted(Tty(), None)
    stream = Tty()

    class HalfRead:
        fraction = 0.5

    bar = Progress(stream, enabled=True, source=HalfRead())  # type: ignore[arg-type]
    bar.start -= 2.0  # two seconds in: 1,000 rows is 500 rows/s, 2 s to go
    bar.advance(1000)
    bar.clear()
    assert stream.getvalue().startswith("\rscoring [##########----------] 50% 1,000 rows ")
    assert " 500 rows/s ETA 0:02\x1b[K" in stream.getvalue()
    assert stream.getvalue().endswith("\r\x1b[K")


def test_console_script_end_to_end(data: Path, tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("textsim")
    env = {**os.environ, "CI": ""}
    # Rows from standard input ('-'), rows out on standard output ('-o -').
    proc = subprocess.run(
        [str(script), "score", "-", "-m", "meteor_score", "-o", "-",
         "--gate", "meteor_score.p10 >= 0.3"],
        capture_output=True, text=True, env=env, timeout=120, input=data.read_text(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "textsim score: 2 rows from standard input" in proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["meteor_result"] for r in rows] == ["pass", "pass"]
    assert "\r" not in proc.stderr  # piped: no progress bar
    assert "PASS meteor_score.p10 >= 0.3" in proc.stderr  # the summary goes to stderr with -o -


def test_judge_metric_uses_the_cache_and_reports_row_errors(tmp_path: Path, fake_openai) -> None:
    from pytest_textsim.testing.fake_openai import Reply

    # Row 1 fails (HTTP 500, no retries); rows 2 and 3 are scored and cached.
    fake_openai.script(Reply.error(500), Reply.score(4), Reply.score(5), Reply.score(2))
    data = write_jsonl(tmp_path / "qa.jsonl", [ROWS[0], ROWS[1], {**ROWS[1], "id": "again",
                       "response": "A cat sat on the mat."}])  # fmt: skip
    command = [
        str(Path(sys.executable).with_name("textsim")), "score", str(data), "-m", "similarity",
        "--judge-model", "judge-test", "--judge-base-url", fake_openai.base_url,
        "--judge-max-retries", "0", "--judge-concurrency", "1", "--id-field", "id",
        "--gate", "similarity.min >= 2", "-o", "out.jsonl",
    ]  # fmt: skip
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "CI": "true"}
    first = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path,
                           timeout=120)  # fmt: skip
    assert first.returncode == 2, first.stderr
    assert first.stderr.startswith(f"textsim: error: {data}:1: similarity: JudgeError: judge at ")
    assert "sk-test" not in first.stderr + first.stdout
    assert "judge: 3 calls, 0 cache hits" in first.stdout
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert "similarity" not in rows[0]
    assert [r["similarity"] for r in rows[1:]] == [4.0, 5.0]
    assert rows[1]["similarity_reason"] == "Scripted reply."

    # Second run: two judgments come from the cache in .textsim_cache, one call is made.
    second = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path,
                            timeout=120)  # fmt: skip
    assert second.returncode == 0, second.stderr
    assert "judge: 1 calls, 2 cache hits" in second.stdout
    assert "PASS similarity.min >= 2: 2 (min of 3 scores)" in second.stdout
    assert len(fake_openai.received) == 4
    assert {r.model for r in fake_openai.received} == {"judge-test"}


def test_in_process_score_has_its_own_judge(
    data: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch, fake_openai
) -> None:
    # main() called from inside a test (this one, in a pytest run with the plugin):
    # it must use its own flags and cache, not the surrounding run's judge.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    command = ["score", str(data), "-m", "similarity", "--judge-model", "inner-model",
               "--judge-base-url", fake_openai.base_url, "--judge-max-retries", "0"]  # fmt: skip
    assert main(command) == 0, capsys.readouterr().err
    assert {r.model for r in fake_openai.received} == {"inner-model"}
    assert (tmp_path / ".textsim_cache" / "judge.sqlite3").is_file()
    assert main(command) == 0
    assert "judge: 0 calls, 2 cache hits" in capsys.readouterr().out
    assert fake_openai.requests == 2


_NLTK = importlib.metadata.version("nltk")


# The README's figures come from a run with nltk 3.10.4; nltk 3.9.x (the newest on
# Python 3.9) tokenizes some words differently, so the scores differ in the last digits.
@pytest.mark.skipif(
    tuple(int(part) for part in _NLTK.split(".")[:2]) < (3, 10),
    reason=f"the README's scores were made with nltk 3.10; nltk {_NLTK} tokenizes differently",
)
def test_documented_cli_output_is_real(tmp_path: Path, capsys, monkeypatch) -> None:
    root = Path(__file__).resolve().parents[3]
    monkeypatch.chdir(root)
    rc = main(["score", "examples/data/support_answers.jsonl", "--map", "response=answer",
               "--map", "ground_truth=expected", "--metric", "bleu_score",
               "--metric", "rouge_score:rougeL", "--metric", "meteor_score",
               "--gate", "meteor_score.p10 >= 0.5",
               "--gate", "sacrebleu.corpus_bleu.score >= 30",
               "-o", str(tmp_path / "s.jsonl")])  # fmt: skip
    assert rc == 0
    printed = capsys.readouterr().out.replace(_sacrebleu_version(), "2.6.0")
    assert printed in (root / "docs" / "cli.md").read_text(encoding="utf-8")


def test_missing_nltk_data_is_one_error_not_a_traceback(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A machine without NLTK data and downloads off: exit 2 with the data
    # error's own message (what is missing, how to fix it), no traceback.
    env = {**os.environ, "NLTK_DATA": str(tmp_path / "empty"), "HOME": str(tmp_path),
           "TEXTSIM_NLTK_DOWNLOAD": "never"}  # fmt: skip
    for name in ("WNHOME", "WNSEARCHDIR"):
        env.pop(name, None)
    (tmp_path / "empty").mkdir()
    textsim = str(Path(sys.executable).with_name("textsim"))
    proc = subprocess.run([textsim, "score", str(data), "-m", "bleu_score"], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=120)  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(
        "textsim: error: NLTK data punkt_tab (tokenizers/punkt_tab) is missing; "
    )
    assert "Fix it one of these ways:" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_a_field_no_row_has_is_one_error_with_the_map_that_fixes_it(tmp_path: Path, capsys) -> None:
    rows = [{"question": f"q{i}", "answer": f"a{i}", "ground_truth": f"g{i}"} for i in range(10)]
    data = write_jsonl(tmp_path / "chat.jsonl", rows)
    assert main(["score", str(data), "-m", "bleu_score", "-m", "f1_score"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f'textsim: error: {data}: no "response" field in any of the first 10 rows (needed by '
        "bleu_score, f1_score); columns: question, answer, ground_truth; did you mean "
        "--map response=answer?"
    ]
    # The only other text column is suggested too, and the fix works.
    only = write_jsonl(tmp_path / "only.jsonl", [{"out": "a b", "ground_truth": "a b"}] * 3)
    assert main(["score", str(only), "-m", "bleu"]) == 2
    assert "its only other text column is 'out': --map response=out" in capsys.readouterr().err
    assert main(["score", str(only), "-m", "bleu", "--map", "response=out"]) == 0
