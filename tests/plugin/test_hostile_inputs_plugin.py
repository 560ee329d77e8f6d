"""End to end in pytest and in ``textsim score``: a hostile judge server, odd texts,
NaN, Markdown in test ids, long JSONL ids. Each case reproduces one of an audit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply

SECRET = "sk-test-SECRET-hostile-77"


@pytest.fixture
def judged(pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    pytester.makeini(
        "[pytest]\ntextsim_judge_model = gpt-judge\n"
        f"textsim_judge_base_url = {fake_openai.base_url}\ntextsim_cache = off\n"
    )
    return pytester


def test_endless_chunks_end_each_test_within_the_timeout(
    judged: pytest.Pytester, fake_openai: FakeOpenAI
) -> None:
    """The audit: with timeout 2 and no retries, one test was still running at 100 s."""
    fake_openai.responder = lambda request: Reply(endless=0.2)
    judged.makepyfile(
        """
        def test_a(similarity):
            similarity(response="Paris.", ground_truth="Paris is the capital.")

        def test_b(similarity):
            similarity(response="Lyon.", ground_truth="Paris is the capital.")
        """
    )
    started = time.monotonic()
    result = judged.runpytest_inprocess(
        "-p", "no:cacheprovider", "--textsim-judge-timeout=1", "--textsim-judge-max-retries=0"
    )
    took = time.monotonic() - started
    result.assert_outcomes(failed=2)
    # Each judgment: one attempt of 1 s (the re-ask is only after a reply).
    assert took < 6, took
    result.stdout.fnmatch_lines(
        ["*test_a: similarity: judge at 127.0.0.1:* failed after 1 attempt(s); last: no "
         "complete reply within 1s (textsim_judge_timeout bounds each attempt, reply included)*"]
    )  # fmt: skip


def test_a_malformed_reply_fails_the_test_with_its_shape(
    judged: pytest.Pytester, fake_openai: FakeOpenAI
) -> None:
    fake_openai.responder = lambda request: Reply.completion(choices=[{"index": 0}])
    judged.makepyfile(
        """
        def test_a(similarity):
            similarity(response="Paris.", ground_truth="Paris is the capital.")
        """
    )
    result = judged.runpytest_inprocess("-p", "no:cacheprovider", "--textsim-judge-max-retries=1")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*test_a: similarity: judge at * failed after 2 attempt(s); last: malformed reply: "
         "choices[[]0[]].message is missing, not an object. Check that textsim_judge_base_url*"]
    )  # fmt: skip
    assert "Traceback" not in result.stdout.str() and "AttributeError" not in result.stdout.str()


def test_a_reply_over_the_byte_limit_is_a_clear_failure(
    judged: pytest.Pytester, fake_openai: FakeOpenAI
) -> None:
    fake_openai.responder = lambda request: Reply.score(4, reason="x" * 5000)
    judged.makepyfile(
        """
        def test_a(similarity):
            similarity(response="Paris.", ground_truth="Paris is the capital.")
        """
    )
    result = judged.runpytest_inprocess(
        "-p", "no:cacheprovider", "--textsim-judge-max-retries=0",
        "-o", "textsim_judge_max_reply_bytes=1000",
    )  # fmt: skip
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*malformed reply: the reply is larger than 1000 bytes (textsim_judge_max_reply_bytes)*"]
    )


def test_lone_surrogates_in_fixtures_helpers_and_jsonl(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("cases.jsonl").write_text(
        '{"id": "ok", "response": "Paris.", "ground_truth": "Paris."}\n'
        '{"id": "half", "response": "Paris \\ud83d", "ground_truth": "Paris."}\n',
        encoding="utf-8",
    )
    pytester.makepyfile(
        test_fixture='''
        from pytest_textsim import assert_meteor

        def test_fixture(meteor):
            meteor(response="Paris \\ud83d is big.", ground_truth="Paris is big.", threshold=0.1)

        def test_helper():
            assert_meteor("caf\\udce9", "cafe", threshold=0.1)
        ''',
        test_cases='''
        import pytest
        from pytest_textsim import jsonl_cases

        @pytest.mark.parametrize("case", jsonl_cases("cases.jsonl", id_field="id"))
        def test_case(case, bleu):
            bleu(response=case["response"], ground_truth=case["ground_truth"], threshold=0.0)
        ''',
    )  # fmt: skip
    args = ("-p", "no:cacheprovider", "-p", "no:xdist")
    result = pytester.runpytest_inprocess("test_fixture.py", *args)
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    assert "'response' has a lone surrogate '\\ud83d' at position 6" in out
    assert "'response' has a lone surrogate '\\udce9' at position 3" in out
    assert "UnicodeEncodeError" not in out
    result = pytester.runpytest_inprocess("test_cases.py", *args)
    result.assert_outcomes(errors=1)
    assert "cases.jsonl:2: 'response': a lone surrogate '\\ud83d' at position 6" in (
        result.stdout.str()
    )


def test_record_refuses_nan_and_the_json_report_stays_valid(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import math
        import pytest
        from pytest_textsim import record

        def test_nan():
            with pytest.raises(ValueError, match="is nan, not a finite number"):
                record("custom", {"custom_score": math.nan, "custom_result": "pass"})
            with pytest.raises(ValueError, match="threshold of 'custom' is inf"):
                record("custom", {"custom": 0.5, "custom_threshold": math.inf})
            record("custom", {"custom": 0.5})
        """
    )
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "-p", "no:xdist", "--textsim-json=out.json",
        "--textsim-save-baseline=base.json",
    )  # fmt: skip
    result.assert_outcomes(passed=1)

    def strict(name: str) -> object:
        def refuse(constant: str) -> object:
            raise AssertionError(f"{name} holds {constant}, which is not JSON")

        return json.loads((pytester.path / name).read_text(), parse_constant=refuse)

    assert [s["score"] for s in strict("out.json")["scores"]] == [0.5]  # type: ignore[index]
    strict("base.json")


def test_markdown_in_a_test_id_is_not_rendered_in_the_step_summary(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = pytester.path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.parametrize("name", ["x` [click](http://evil.example) `y"])
        def test_id(name, bleu):
            bleu(response="a b c", ground_truth="x y z", threshold=0.5)
        """
    )
    pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist")
    text = summary.read_text()
    row = next(line for line in text.splitlines() if "test_id" in line)
    # A code span fenced with two backticks: the single ones inside cannot end it.
    assert row.startswith("| ``test_"), row
    assert "::test_id[x` [click](http://evil.example) `y]`` |" in row, row


def test_long_jsonl_ids_differing_at_the_end_are_not_duplicates(pytester: pytest.Pytester) -> None:
    """The audit: two 80-character ids differing at the end broke collection."""
    first, second = "q" * 79 + "1", "q" * 79 + "2"
    pytester.path.joinpath("cases.jsonl").write_text(
        "".join(
            json.dumps({"id": i, "response": "a", "ground_truth": "a"}) + "\n"
            for i in (first, second)
        ),
        encoding="utf-8",
    )
    pytester.makepyfile(
        """
        import pytest
        from pytest_textsim import jsonl_cases

        @pytest.mark.parametrize("case", jsonl_cases("cases.jsonl", id_field="id"))
        def test_case(case):
            pass
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist", "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["*test_case[[]qqq*...[]] PASSED*", "*test_case[[]qqq*...@line2[]] PASSED*"]
    )
    pytester.path.joinpath("cases.jsonl").write_text(
        json.dumps({"id": first}) + "\n" + json.dumps({"id": first}) + "\n", encoding="utf-8"
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist")
    result.stdout.fnmatch_lines([f"*cases.jsonl:2: duplicate id '{first}' (also on line 1)*"])


def test_textsim_score_against_endless_chunks_is_bounded(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    # Timed from the request's arrival: the command's start-up (seconds of imports
    # on a loaded machine) is not what the 1 s limit bounds.
    arrived: list[float] = []

    def endless(request: object) -> Reply:
        arrived.append(time.monotonic())
        return Reply(endless=0.2)

    fake_openai.responder = endless
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"response": "Paris.", "ground_truth": "Paris."}) + "\n")
    textsim = str(Path(sys.executable).with_name("textsim"))
    env = {**os.environ, "OPENAI_API_KEY": SECRET}
    done = subprocess.run(
        [textsim, "score", str(data), "-m", "similarity", "--judge-model", "judge",
         "--judge-base-url", fake_openai.base_url, "--judge-max-retries", "0",
         "--judge-timeout", "1", "--cache", "off"],
        capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert len(arrived) == 1 and time.monotonic() - arrived[0] < 10
    assert done.returncode == 2, done.stderr
    assert "no complete reply within 1s" in done.stderr
    assert SECRET not in done.stderr + done.stdout


def test_textsim_score_reads_stdin_strictly_and_refuses_deep_json(tmp_path: Path) -> None:
    textsim = str(Path(sys.executable).with_name("textsim"))
    latin1 = b'{"response": "caf\xe9", "ground_truth": "cafe"}\n'
    done = subprocess.run([textsim, "score", "-", "-m", "bleu"], input=latin1,
                          capture_output=True, cwd=tmp_path, timeout=60)  # fmt: skip
    assert done.returncode == 2
    assert b"<stdin>:1: not UTF-8 text (invalid continuation byte at byte 18)" in done.stderr
    deep = b'{"response": ' + b"[" * 5000 + b"]" * 5000 + b', "ground_truth": "x"}\n'
    done = subprocess.run([textsim, "score", "-", "-m", "bleu"], input=deep,
                          capture_output=True, cwd=tmp_path, timeout=60)  # fmt: skip
    assert done.returncode == 2
    assert b"<stdin>:1: JSON nested deeper than 200 levels" in done.stderr
    assert b"RecursionError" not in done.stderr


def test_textsim_compare_exits_2_for_bad_input(tmp_path: Path) -> None:
    textsim = str(Path(sys.executable).with_name("textsim"))
    (tmp_path / "deep.json").write_bytes(b"[" * 100_000 + b"]" * 100_000)
    (tmp_path / "latin1.json").write_bytes(b'{"note": "caf\xe9"}')
    for name in ("deep.json", "latin1.json"):
        done = subprocess.run([textsim, "compare", name, name], capture_output=True, text=True,
                              cwd=tmp_path, timeout=60)  # fmt: skip
        assert done.returncode == 2, (name, done.stderr)
        assert "Traceback" not in done.stderr and "INTERNALERROR" not in done.stderr


def test_deep_or_non_utf8_inputs_in_pytest_are_clear_errors(pytester: pytest.Pytester) -> None:
    """The audit: a 5,000-deep JSONL line gave a RecursionError at collection, and a
    100k-deep or non-UTF-8 baseline an INTERNALERROR."""
    pytester.path.joinpath("cases.jsonl").write_text(
        '{"id": "deep", "response": ' + "[" * 5000 + "]" * 5000 + "}\n", encoding="utf-8"
    )
    pytester.makepyfile(
        test_cases="""
        import pytest
        from pytest_textsim import jsonl_cases

        @pytest.mark.parametrize("case", jsonl_cases("cases.jsonl", id_field="id"))
        def test_case(case):
            pass
        """,
        test_plain="def test_plain(bleu):\n    bleu(response='a', ground_truth='a')\n",
    )
    args = ("-p", "no:cacheprovider", "-p", "no:xdist")
    result = pytester.runpytest_inprocess("test_cases.py", *args)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*cases.jsonl:1: JSON nested deeper than 200 levels*"])
    assert "RecursionError" not in result.stdout.str()
    pytester.path.joinpath("deep.json").write_bytes(b"[" * 100_000 + b"]" * 100_000)
    pytester.path.joinpath("latin1.json").write_bytes(b'{"note": "caf\xe9"}')
    bad = {"deep.json": "JSON nested deeper than 200 levels",
           "latin1.json": "not UTF-8 text (invalid continuation byte"}  # fmt: skip
    for name, message in bad.items():
        result = pytester.runpytest_inprocess("test_plain.py", f"--textsim-compare={name}", *args)
        out = result.stdout.str() + result.stderr.str()
        assert "INTERNALERROR" not in out and "Traceback" not in out, out[-2000:]
        assert message in out, out[-2000:]
        assert result.ret != 0


def test_deep_json_and_hand_edited_cassettes_fail_only_their_test_under_replay(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI
) -> None:
    """The audit: a reply nested past Python's parser's limit from the app's server,
    and a cassette hand-edited to a chunk of the wrong type, each aborted the whole
    session with INTERNALERROR under replay."""
    from pytest_textsim.replay import cassette_name

    deep = "[" * 100_000 + "]" * 100_000
    fake_openai.script(Reply(body=('{"choices": ' + deep + "}").encode()))
    folder = pytester.path / "tests" / "replays"
    folder.mkdir(parents=True)
    header = {"format": "pytest-textsim-replay/1", "test": "test_app.py::test_edited"}
    line = {"request": {"method": "POST", "url": f"{fake_openai.base_url}/chat/completions",
                        "headers": {}, "json": {"model": "m"}},
            "response": {"status": 200, "headers": {}, "chunks": [1]}}  # fmt: skip
    edited = folder / cassette_name("test_app.py::test_edited")
    edited.write_text(json.dumps(header) + "\n" + json.dumps(line) + "\n")
    pytester.makeini("[pytest]\ntextsim_replay = all\n")
    pytester.makepyfile(
        test_app=f"""
        import httpx

        def post():
            with httpx.Client() as http:
                return http.post("{fake_openai.base_url}/chat/completions", json={{"model": "m"}})

        def test_deep(llm_calls):
            assert post().status_code == 200
            assert llm_calls[0].error == "the reply's contents are JSON nested too deeply to read"

        def test_edited():
            post()

        def test_after():
            pass
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist")
    out = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in out and "RecursionError" not in out, out[-3000:]
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        [f"*test_app.py::test_edited: textsim replay: {edited}:2: response.chunks[[]0[]]: "
         "expected a string, got a number (1); delete the file or run with "
         "--textsim-replay=rewrite to record it again*"]
    )  # fmt: skip
    recorded = folder / cassette_name("test_app.py::test_deep")
    assert json.loads(recorded.read_text().splitlines()[1])["response"]["text"].endswith("]}")


def test_the_json_report_is_replaced_whole(pytester: pytest.Pytester) -> None:
    """Written in place, a reader of the old report (a dashboard, a CI step) saw it
    truncated and half written; replaced by a rename, it reads the old file whole."""
    report = pytester.path / "out" / "report.json"
    report.parent.mkdir()
    report.write_text('{"old": true}\n')
    pytester.makepyfile("def test_a(bleu):\n    bleu(response='a b', ground_truth='a b')\n")
    with report.open() as reader:
        result = pytester.runpytest_inprocess(
            "-p", "no:cacheprovider", "-p", "no:xdist", f"--textsim-json={report}"
        )
        result.assert_outcomes(passed=1)
        assert json.loads(reader.read()) == {"old": True}
    assert json.loads(report.read_text())["scores"][0]["metric"] == "bleu_score"
    assert [p.name for p in report.parent.iterdir()] == ["report.json"]  # no temporary left
