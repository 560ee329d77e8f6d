"""Baselines on the command line: ``textsim score --compare/--save-baseline``,
``textsim compare`` of ``textsim score`` outputs, and row errors one line per run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_textsim.cli import main

REFERENCE = "The cat sat on the mat by the door."


def rows(count: int = 12, changed: dict[int, str] | None = None) -> list[dict[str, str]]:
    """``count`` rows scoring alike; ``changed``: row index -> another response."""
    changed = changed or {}
    return [
        {"id": f"q{i}", "response": changed.get(i, f"The cat sat on the mat by door {i}."),
         "ground_truth": REFERENCE}
        for i in range(count)
    ]  # fmt: skip


def write(path: Path, data: list[object]) -> Path:
    lines = [row if isinstance(row, str) else json.dumps(row) for row in data]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def score(path: Path, *args: str) -> list[str]:
    return ["score", str(path), "-m", "bleu_score", "-m", "rouge_score:rougeL", *args]


def after(lines: list[str], heading: str) -> list[str]:
    """The indented lines under ``heading``, unindented."""
    start = lines.index(heading) + 1
    out = []
    for line in lines[start:]:
        if not line.startswith("  "):
            break
        out.append(line[2:])
    return out


def test_a_regression_fails_the_run_and_keeps_the_baseline(tmp_path: Path, capsys) -> None:
    base = tmp_path / "base.json"
    good = write(tmp_path / "good.jsonl", rows())
    assert main(score(good, "--save-baseline", str(base))) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == f"baseline: saved {base}: new file, 48 scores of 12 tests"
    saved = json.loads(base.read_text(encoding="utf-8"))["scores"]
    assert {s["test"] for s in saved} == {f"row {n}" for n in range(1, 13)}
    assert {(s["evaluator"], s["metric"], s.get("variant")) for s in saved} == {
        ("bleu", "bleu_score", None), ("rouge", "rouge_f1_score", "rougeL"),
        ("rouge", "rouge_precision", "rougeL"), ("rouge", "rouge_recall", "rougeL"),
    }  # fmt: skip
    before = base.read_bytes()

    worse = write(tmp_path / "worse.jsonl", rows(changed={2: "A dog ran."}))
    args = score(worse, "--compare", str(base), "--save-baseline", str(base))
    assert main([*args, "--fail-on-regression"]) == 1
    out = capsys.readouterr().out.splitlines()
    report = after(out, f"regressions against {base}:")
    assert report[:2] == [
        "test   metric                    baseline  now     change   tolerance",
        "row 3  bleu_score                0.6804    0.0136  -0.6668  0.0200",
    ]
    assert report[-1] == "scores: 4 regressed, 0 improved, 44 unchanged, 0 new, 0 vanished"
    assert out[-2:] == [
        f"FAILED: 4 scores regressed against {base} (--fail-on-regression)",
        f"baseline: kept {base} as it was: 4 scores regressed "
        "(--save-baseline-force writes it anyway)",
    ]
    assert base.read_bytes() == before

    # The same lines as textsim compare prints for the same two runs.
    new = tmp_path / "new.json"
    assert main([*score(worse, "--save-baseline", str(new))]) == 0
    capsys.readouterr()
    assert main(["compare", str(base), str(new)]) == 1
    assert capsys.readouterr().out.splitlines()[1:] == report

    # Without --fail-on-regression the regressions are reported, and the run saves.
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert f"FAILED: 4 scores regressed against {base} (--fail-on-regression)" not in out
    assert out[-1] == f"baseline: saved {base}: 48 -> 48 scores: 4 scores changed"
    assert base.read_bytes() != before


def test_significance_spares_a_drop_that_is_noise(tmp_path: Path, capsys) -> None:
    base = tmp_path / "base.json"
    assert main(score(write(tmp_path / "a.jsonl", rows(40)), "--save-baseline", str(base))) == 0
    one = write(tmp_path / "b.jsonl", rows(40, changed={5: "A dog ran."}))
    args = [*score(one, "--compare", str(base), "--fail-on-regression")]
    capsys.readouterr()
    assert main(args) == 1  # the max-drop rule alone: that row regressed
    capsys.readouterr()
    assert main([*args, "--significance", "0.05"]) == 0
    out = capsys.readouterr().out.splitlines()
    report = after(out, f"regressions against {base}:")
    assert report[0] == f"no regressions against {base}"
    assert "beyond tolerance but not significant at 0.05 (1 test, 4 scores), not regressions:" in (
        report
    )
    assert not any(line.startswith("FAILED") for line in out)


def test_rows_are_matched_by_id_field(tmp_path: Path, capsys) -> None:
    base = tmp_path / "base.json"
    data = rows()
    assert main(score(write(tmp_path / "a.jsonl", data), "--id-field", "id",
                      "--save-baseline", str(base))) == 0  # fmt: skip
    assert {s["test"] for s in json.loads(base.read_text())["scores"]} == {
        f"q{i}" for i in range(12)
    }
    shuffled = write(tmp_path / "b.jsonl", data[::-1])
    assert main(score(shuffled, "--id-field", "id", "--compare", str(base))) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "  scores: 0 regressed, 0 improved, 48 unchanged, 0 new, 0 vanished"
    # Without --id-field the rows are "row N": nothing lines up, so nothing is compared.
    assert main(score(shuffled, "--compare", str(base))) == 2
    assert capsys.readouterr().err == (
        f"textsim: error: --compare: only 0 of 48 scores of {base} belong to a test of this "
        "run, fewer than half: the two name their tests differently, so every score would "
        f"be new or vanished and nothing could regress. {base} has 'q0', 'q1', 'q2', ... "
        "(12 tests); this run has 'row 1', 'row 2', 'row 3', ... (12 tests); score the rows "
        "with the --id-field the baseline was saved with (without it a row is 'row N', its "
        "line number)\n"
    )


def test_a_failing_run_never_writes_unless_forced(tmp_path: Path, capsys) -> None:
    base = tmp_path / "base.json"
    broken = write(tmp_path / "broken.jsonl", [*rows(3), {"id": "x"}])
    assert main(score(broken, "--save-baseline", str(base))) == 2
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"baseline: did not write {base}: 1 row could not be scored "
        "(--save-baseline-force writes it anyway)"
    )
    assert not base.exists()
    gated = score(write(tmp_path / "ok.jsonl", rows(3)), "--gate", "bleu_score.mean >= 0.9")
    assert main([*gated, "--save-baseline", str(base)]) == 1
    assert "1 gate failed (--save-baseline-force" in capsys.readouterr().out
    assert not base.exists()
    assert main([*gated, "--save-baseline", str(base), "--save-baseline-force"]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"baseline: saved {base}: new file, 12 scores of 3 tests (forced despite: 1 gate failed)"
    )


def test_a_baseline_that_cannot_be_read_is_kept(tmp_path: Path, capsys) -> None:
    base = tmp_path / "base.json"
    data = score(write(tmp_path / "a.jsonl", rows(3)), "--save-baseline", str(base))
    assert main(data) == 0
    # Saved again with the same scores: the file is left alone, and the line says so.
    written = base.read_bytes()
    assert main(data) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"baseline: saved {base}: unchanged, 12 scores of 3 tests"
    )
    assert base.read_bytes() == written
    # A newer format, a merge conflict: this run cannot read what it would replace.
    for text, why in (
        (written.decode().replace('"version": 2', '"version": 3'),
         f"{base}: baseline format version 3 is newer than this pytest-textsim understands "
         "(2); upgrade pytest-textsim"),
        ("<<<<<<< HEAD\n" + written.decode(), f"{base}:1: not valid JSON (Expecting value)"),
    ):  # fmt: skip
        base.write_text(text, encoding="utf-8")
        assert main(data) == 2
        captured = capsys.readouterr()
        assert captured.out == ""  # refused before any row is scored
        assert captured.err == (
            f"textsim: error: --save-baseline: {why}; this run would replace the file and "
            "cannot read it, so it is kept as it was: fix it, or pass --save-baseline-force "
            "to replace it with this run's scores\n"
        )
        assert base.read_text(encoding="utf-8") == text
    assert main([*data, "--save-baseline-force"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"baseline: saved {base}: replaced what could not be read ({base}:1: not valid JSON "
        "(Expecting value)) with 12 scores of 3 tests"
    )
    assert base.read_bytes() == written


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--fail-on-regression"], "--fail-on-regression needs --compare BASE.json"),
        (["--save-baseline-force"], "--save-baseline-force needs --save-baseline BASE.json"),
        (["--compare", "{tmp}/none.json"],
         "--compare {tmp}/none.json: no such file; save one with textsim score ... "
         "--save-baseline {tmp}/none.json"),
        (["--compare", "{tmp}/a.jsonl"],
         "--compare: {tmp}/a.jsonl: a JSONL file of 2 input rows without scores, not textsim "
         "score output; expected a baseline"),
        (["--compare", "{tmp}/scored.jsonl"],
         "--compare {tmp}/scored.jsonl: textsim score output holds the scores but not the "
         "metrics' parameters"),
        (["--compare", "{tmp}/base.json", "--max-drop", "lots"], "--max-drop"),
    ],
)  # fmt: skip
def test_bad_baseline_arguments_are_usage_errors(
    tmp_path: Path, capsys, extra: list[str], message: str
) -> None:
    data = write(tmp_path / "a.jsonl", rows(2))
    assert main(score(data, "-o", str(tmp_path / "scored.jsonl"),
                      "--save-baseline", str(tmp_path / "base.json"))) == 0  # fmt: skip
    capsys.readouterr()
    extra = [e.format(tmp=tmp_path) for e in extra]
    assert main(score(data, *extra)) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing scored
    assert captured.err.startswith("textsim: error: ")
    assert message.format(tmp=tmp_path) in captured.err


# -- textsim compare on textsim score outputs ------------------------------------------


def test_compare_reads_two_score_outputs(tmp_path: Path, capsys) -> None:
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    assert main(score(write(tmp_path / "a.jsonl", rows()), "-o", str(old))) == 0
    changed = write(tmp_path / "b.jsonl", rows(changed={2: "A dog ran."})[::-1])
    assert main(score(changed, "-o", str(new))) == 0
    capsys.readouterr()
    assert main(["compare", str(old), str(new), "--id-field", "id"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[:3] == [
        f"textsim regressions: {old} -> {new}",
        "test  metric           baseline  now     change   tolerance",
        "q2    bleu_score       0.6804    0.0136  -0.6668  0.0200",
    ]
    assert out[-1] == "scores: 4 regressed, 0 improved, 44 unchanged, 0 new, 0 vanished"
    # By line number: the new file's rows are in reverse order, so q2 is on line 10.
    assert main(["compare", str(old), str(new)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[2].startswith("row 10  bleu_score ")


def test_a_row_whose_id_is_null_is_a_row_error(tmp_path: Path, capsys) -> None:
    # Named "None" it would be a test of the baseline that no later run could match.
    data = write(tmp_path / "a.jsonl", [{**rows(1)[0], "id": None}, *rows(2)[1:]])
    assert main(score(data, "--id-field", "id")) == 2
    assert f'{data}:1: missing "id" (--id-field)' in capsys.readouterr().err


def test_compare_refuses_two_files_that_name_their_rows_differently(
    tmp_path: Path, capsys
) -> None:
    data = write(tmp_path / "a.jsonl", rows(4))
    by_id, by_line = tmp_path / "by_id.json", tmp_path / "by_line.json"
    assert main(score(data, "--id-field", "id", "--save-baseline", str(by_id))) == 0
    assert main(score(data, "--save-baseline", str(by_line))) == 0
    capsys.readouterr()
    assert main(["compare", str(by_id), str(by_line)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"textsim: error: only 0 of 16 scores of {by_id} belong to a test of {by_line}, fewer "
        "than half: the two name their tests differently, so every score would be new or "
        f"vanished and nothing could regress. {by_id} has 'q0', 'q1', 'q2', ... (4 tests); "
        f"{by_line} has 'row 1', 'row 2', 'row 3', ... (4 tests); compare two runs of the "
        "same tests; a baseline saved by textsim score names its rows by the --id-field it "
        "was scored with ('row N' without), so score both runs with the same --id-field\n"
    )


def test_score_outputs_name_the_variants_of_their_keys(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out.jsonl"
    data = write(tmp_path / "a.jsonl", rows(3))
    assert main(["score", str(data), "-m", "rouge_score:rouge1", "-m", "rouge_score:rougeL",
                 "-o", str(out)]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["compare", str(out), str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "scores: 0 regressed, 0 improved, 18 unchanged, 0 new, 0 vanished"
    )
    from pytest_textsim.gating.baseline import load_baseline

    entries = load_baseline(out).entries
    assert {(e.evaluator, e.metric, e.variant) for e in entries} == {
        ("rouge", m, v) for m in ("rouge_f1_score", "rouge_precision", "rouge_recall")
        for v in ("rouge1", "rougeL")
    }  # fmt: skip
    from pytest_textsim.gating.scored import output_key, score_of_key

    # A named rubric's keys, and keys no metric writes.
    assert output_key("rubric", "tone", False, "rubric") == "rubric_tone"
    assert score_of_key("rubric_tone") == ("rubric", "rubric", "tone")
    assert score_of_key("rougeX_f1_score") is None  # no such ROUGE type
    assert score_of_key("answer_score") is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"response": "a", "ground_truth": "b"}\n{"response": "c", "ground_truth": "d"}\n',
         "{p}: a JSONL file of 2 input rows without scores, not textsim score output; "
         "expected a baseline (--textsim-save-baseline, textsim score --save-baseline), "
         "a --textsim-json report or textsim score output (-o)"),
        ('{\n  "scores": []\n}\n',
         '{p}: a JSON object without a "format" field (keys: scores), not a pytest-textsim '
         "baseline or --textsim-json report"),
        ('{"format": "textsim-cassette/1", "calls": []}',
         '{p}: a JSON object with "format": "textsim-cassette/1", not a pytest-textsim '
         "baseline"),
        ("[1, 2]", "{p}: a JSON document holding an array, not a pytest-textsim baseline"),
        ('{"id": "a", "bleu_score": 0.5, "bleu_result": "pass"}\n[1]\n',
         "{p}:2: expected a JSON object (a scored row), got an array"),
        ("", "{p}:1: not valid JSON (Expecting value)"),
    ],
)  # fmt: skip
def test_compare_names_what_a_wrong_file_is(
    tmp_path: Path, capsys, content: str, message: str
) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text(content, encoding="utf-8")
    base = tmp_path / "base.json"
    assert main(score(write(tmp_path / "d.jsonl", rows(2)), "--save-baseline", str(base))) == 0
    capsys.readouterr()
    assert main(["compare", str(path), str(base)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"textsim: error: {message.format(p=path)}"), err
    assert err.count("\n") == 1


def test_compare_refuses_a_score_output_against_a_baseline(tmp_path: Path, capsys) -> None:
    base, out = tmp_path / "base.json", tmp_path / "out.jsonl"
    data = write(tmp_path / "d.jsonl", rows(2))
    assert main(score(data, "--save-baseline", str(base), "-o", str(out))) == 0
    capsys.readouterr()
    assert main(["compare", str(base), str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"textsim: error: {out} is textsim score output and {base} is not")
    assert f"textsim score DATA.jsonl ... --compare {base}" in err
    assert main(["compare", str(out), str(out), "--id-field", "nope"]) == 2
    assert capsys.readouterr().err == f'textsim: error: {out}:1: no "nope" field (--id-field)\n'


# -- row errors: one line per run of the same error -------------------------------------


def test_a_dead_judge_is_one_line_per_metric(tmp_path: Path, dead_url: str, capsys,
                                             monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    data = write(tmp_path / "d.jsonl", rows(12))
    args = ["score", str(data), "-m", "similarity", "-m", "bleu_score", "--judge-model", "m",
            "--judge-base-url", dead_url, "--judge-concurrency", "1", "--judge-max-retries", "0",
            "--cache-dir", str(tmp_path / "cache")]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err.splitlines()
    host = dead_url.split("//")[1].split("/")[0]
    assert len(err) == 2, err
    assert err[0].startswith(f"textsim: error: {data}:1: similarity: JudgeError: judge at {host} ")
    assert err[1].startswith(
        f"textsim: error: {data}:2-12 (11 rows): similarity: JudgeUnreachable: judge at {host} "
        f"unreachable since {data}:1 (connection refused); "
    )


def test_the_same_problem_on_adjacent_rows_is_one_line(tmp_path: Path, capsys) -> None:
    ok = {"response": "a", "ground_truth": "b"}
    null = {"response": None, "ground_truth": "b"}
    data = write(tmp_path / "d.jsonl", [ok, null, null, null, ok, null, "", null, "[]", "[]"])
    assert main(["score", str(data), "-m", "bleu"]) == 2
    problem = '"response" is null; a string is needed by bleu'
    assert capsys.readouterr().err.splitlines() == [
        f"textsim: error: {data}:2-4 (3 rows): {problem}",
        f"textsim: error: {data}:6: {problem}",  # a scored row, then a blank line: three runs
        f"textsim: error: {data}:8: {problem}",
        f"textsim: error: {data}:9-10 (2 rows): expected a JSON object, got an array",
    ]


def test_row_problems_are_listed_up_to_20_lines_then_counted(tmp_path: Path, capsys) -> None:
    ok = {"response": "a", "ground_truth": "b"}
    data = write(tmp_path / "d.jsonl", [ok] + [{"response": None, "ground_truth": "b"},
                                               {"response": 1, "ground_truth": "b"}] * 13)
    assert main(["score", str(data), "-m", "bleu"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 21
    assert lines[0] == f'textsim: error: {data}:2: "response" is null; a string is needed by bleu'
    assert lines[1] == f'textsim: error: {data}:3: "response" must be a string, got a number (1)'
    assert lines[-1] == "textsim: error: ... and 6 more problems"


def test_worker_processes_save_the_same_baseline(tmp_path: Path) -> None:
    data = write(tmp_path / "d.jsonl", rows(600))
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    assert main(score(data, "--jobs", "1", "--save-baseline", str(one))) == 0
    assert main(score(data, "--jobs", "2", "--save-baseline", str(two))) == 0
    assert one.read_bytes() == two.read_bytes()
    assert len(json.loads(one.read_text())["scores"]) == 2400


def test_the_report_names_the_command_lines_own_flags(tmp_path: Path, capsys) -> None:
    base = tmp_path / "base.json"
    assert main(score(write(tmp_path / "good.jsonl", rows()), "--save-baseline", str(base))) == 0
    worse = write(tmp_path / "worse.jsonl", rows(changed={0: "A dog.", 1: "A dog ran."}))
    capsys.readouterr()
    main(score(worse, "--compare", str(base)))
    out = capsys.readouterr().out
    assert "max-drop rule only; --significance 0.05 also asks for significance" in out
    assert "--textsim-" not in out
    old = json.loads(base.read_text(encoding="utf-8"))
    (tmp_path / "v1.json").write_text(json.dumps({**old, "version": 1}), encoding="utf-8")
    main(["compare", str(tmp_path / "v1.json"), str(base)])
    assert (
        "save a new baseline with --textsim-save-baseline (or textsim score --save-baseline)"
        in capsys.readouterr().out
    )
