"""The judge in pytest: fixtures, helpers, settings, cache modes, report line, xdist."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_textsim.cli import main
from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply

SECRET = "sk-test-SECRET-plugin-93d1"

SUITE = """
from pytest_textsim import assert_grounded, assert_similar

def test_fixture(similarity):
    out = similarity("Paris is the capital.", "The capital of France is Paris.",
                     query="What is the capital of France?")
    assert out["similarity"] == 5.0 and out["similarity_reason"] == "same facts"

def test_helper_without_query():
    assert_similar("Paris is the capital.", "The capital of France is Paris.", threshold=4)

def test_grounded_fails():
    assert_grounded("The Eiffel Tower is 500 m tall.", context="The tower is 330 m tall.")

def test_qa(qa):
    out = qa("Paris.", "Paris", "Paris is the capital of France.", "Capital?")
    assert out["f1_threshold"] == 0.5 and out["f1_result"] == "pass"
    assert out["similarity_result"] == "pass" and out["groundedness_result"] == "fail"
"""


def by_metric(request: Received) -> Reply:
    """Similarity 5, groundedness 2 ("unsupported"), anything else 4."""
    system = request.messages[0]["content"]
    if "GROUNDEDNESS" in system:
        return Reply.score(2, "the height is unsupported")
    if "matches a reference answer" in system:
        return Reply.score(5, "same facts")
    return Reply.score(4, "fine")


@pytest.fixture
def run(run_plugin: object) -> object:
    """pytest in the project: without xdist, -n 0, and -n 2 where xdist matters (conftest.py)."""
    return run_plugin


@pytest.fixture
def project(pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch):
    fake_openai.responder = by_metric
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    for var in ("OPENAI_BASE_URL", "TEXTSIM_JUDGE_MODEL", "TEXTSIM_CACHE", "TEXTSIM_CACHE_DIR"):
        monkeypatch.delenv(var, raising=False)
    pytester.makeini(
        f"[pytest]\ntextsim_judge_model = gpt-judge\n"
        f"textsim_judge_base_url = {fake_openai.base_url}\n"
    )
    pytester.makepyfile(test_app=SUITE)
    return pytester


def leaked(root: Path, *texts: str) -> list[str]:
    where = [str(p) for p in root.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    return where + [t[:80] for t in texts if SECRET in t]


@pytest.mark.xdist_matters  # the hub's calls, counters summed
def test_fixtures_helpers_report_and_warm_cache(
    project: pytest.Pytester, fake_openai: FakeOpenAI, run, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every file a run writes is searched for the key by leaked() below.
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(project.path / "summary.md"))
    result = run("--textsim-json=scores.json", "--junitxml=junit.xml")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*groundedness 2 < threshold 3*",
            '*response: "The Eiffel Tower is 500 m tall."',
            '*reason: "the height is unsupported"',
            "*textsim judge*",
            "judge: 8 calls, 0 cache hits, 0 retries, 400 tokens in / 96 out, *s waiting",
        ]
    )
    assert fake_openai.requests == 8  # 1 + 1 + 1 + 5 (QA)
    report = json.loads((project.path / "scores.json").read_text())
    counters = report["header"]["counters"]
    # Whole counts are written as integers ("judge_calls": 8, not 8.0).
    assert [type(counters[k]) for k in ("judge_calls", "judge_tokens_in")] == [int, int]
    assert counters["judge_calls"] == 8 and isinstance(counters["judge_wait_seconds"], float)
    records = report["scores"]
    assert sorted(r["metric"] for r in records) == sorted(
        [
            "similarity",
            "similarity",
            "groundedness",
            "relevance",
            "groundedness",
            "fluency",
            "coherence",
            "similarity",
            "f1_score",
        ]  # fmt: skip
    )
    similarity = next(r for r in records if r["test_id"].endswith("test_fixture"))
    assert similarity["params"]["prompt_version"] == "similarity-2"
    assert similarity["params"]["model"] == "gpt-judge"
    # QA's scores name all five prompts, so a baseline notices a change to any.
    qa_scores = [r for r in records if r["test_id"].endswith("test_qa")]
    assert {r["params"]["prompt_version"] for r in qa_scores} == {
        "coherence-2,fluency-2,groundedness-2,relevance-2,similarity-2"
    }

    again = run()
    again.assert_outcomes(passed=3, failed=1)
    again.stdout.fnmatch_lines(["judge: 0 calls, 8 cache hits, 0 retries, 0 tokens in / 0 out*"])
    assert fake_openai.requests == 8, "a warm cache makes no HTTP request"
    assert (project.path / ".textsim_cache" / "judge.sqlite3").exists()
    assert "textsim.similarity" in (project.path / "junit.xml").read_text()
    assert "similarity" in (project.path / "summary.md").read_text()
    assert not leaked(project.path, result.stdout.str(), result.stderr.str(), again.stdout.str())


@pytest.mark.xdist_matters  # a miss in the hub names the worker's test
def test_offline_mode_needs_no_key_and_names_the_test_on_a_miss(
    project: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, run
) -> None:
    project.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist", "-k", "fixture")
    monkeypatch.delenv("OPENAI_API_KEY")
    result = run("--textsim-cache=none", "-k", "fixture or helper")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_app.py::test_helper_without_query: similarity: no cached similarity judgment "
            "for these inputs*--textsim-cache=none forbids calling the judge*",
        ]
    )
    assert fake_openai.requests == 1
    assert "Traceback" not in result.stdout.str()


def test_no_judge_configured_says_what_to_set(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        from pytest_textsim import JudgeConfigError, JudgeError, assert_fluent

        def test_a(coherence):
            coherence('An answer.', 'What?')

        def test_skips_without_a_judge(similarity):
            try:
                similarity('An answer.', 'The answer.')
            except JudgeError as exc:
                pytest.skip(f"no judge here: {exc}")

        def test_raises():
            with pytest.raises(JudgeConfigError, match="no LLM judge is configured"):
                assert_fluent('An answer.')
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rs")
    result.assert_outcomes(failed=1, skipped=1, passed=1)
    result.stdout.fnmatch_lines(
        [
            "test_no_judge_configured_says_what_to_set.py::test_a: coherence: no LLM judge is "
            "configured. Set the model with textsim_judge_model*",
            "SKIPPED *no judge here: test_no_judge_configured_says_what_to_set.py"
            "::test_skips_without_a_judge: similarity: no LLM judge is configured*",
        ]
    )
    out = result.stdout.str()
    assert "Traceback" not in out and "site-packages" not in out
    # Said once, not repeated under "During handling of the above exception".
    # Only the failure section counts: pytest's short summary repeats the
    # message, cut to the terminal width except on CI (where CI=true is set).
    failures = out.split("short test summary info")[0]
    assert "During handling" not in failures
    assert failures.count("coherence: no LLM judge is configured") == 1


def test_judge_errors_fail_the_test_cleanly(
    project: pytest.Pytester, fake_openai: FakeOpenAI
) -> None:
    fake_openai.api_key = "sk-another-key"
    result = project.runpytest_inprocess("-p", "no:cacheprovider", "-k", "fixture")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_app.py::test_fixture: similarity: judge at 127.0.0.1:* answered HTTP 401: "
            "the API key was refused; check OPENAI_API_KEY"
        ]  # fmt: skip
    )
    assert "_base_client.py" not in result.stdout.str()
    assert not leaked(project.path, result.stdout.str())


CATCHING = """
import pytest
from pytest_textsim import JudgeError, assert_similar

def test_skips_when_the_judge_is_down(similarity):
    try:
        similarity("Paris.", "Paris is the capital.")
    except JudgeError as exc:
        assert exc.status == 401 and exc.host.startswith("127.0.0.1:")
        pytest.skip(f"judge down: {exc}")

def test_raises():
    with pytest.raises(JudgeError, match="HTTP 401"):
        assert_similar("Paris.", "Paris is the capital.")

def test_uncaught(similarity):
    similarity("Paris.", "Paris is the capital.")
"""


@pytest.mark.xdist_matters  # judge errors pickled from the hub
def test_judge_errors_can_be_caught_and_fail_cleanly_when_not(
    project: pytest.Pytester, fake_openai: FakeOpenAI, run
) -> None:
    fake_openai.api_key = "sk-another-key"
    project.makepyfile(test_app=CATCHING)
    result = run("-rs")
    result.assert_outcomes(passed=1, skipped=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "test_app.py::test_uncaught: similarity: judge at 127.0.0.1:* answered HTTP 401*",
            "SKIPPED *judge down: test_app.py::test_skips_when_the_judge_is_down: similarity: "
            "judge at 127.0.0.1:* answered HTTP 401*",
        ]
    )
    failures = result.stdout.str().split("short test summary info")[0]
    assert "Traceback" not in failures and "judge_setup.py" not in failures
    assert failures.count("answered HTTP 401") == 1


def test_key_in_ini_is_refused(pytester: pytest.Pytester) -> None:
    pytester.makeini(f"[pytest]\ntextsim_judge_api_key = {SECRET}\n")
    pytester.makepyfile("def test_a():\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*textsim_judge_api_key in tox.ini: secrets are read only from the environment*"]
    )
    assert SECRET not in result.stdout.str() + result.stderr.str()


def test_key_variable_named_in_ini_and_flag_beats_ini(
    project: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("TEAM_JUDGE_KEY", "sk-team-key-0001")
    project.makeini(
        f"[pytest]\ntextsim_judge_model = gpt-judge\ntextsim_judge_api_key_env = TEAM_JUDGE_KEY\n"
        f"textsim_judge_base_url = {fake_openai.base_url}\ntextsim_cache = off\n"
    )
    result = project.runpytest_inprocess(
        "-p", "no:cacheprovider", "-k", "fixture", "--textsim-judge-model=gpt-other"
    )
    result.assert_outcomes(passed=1)
    (request,) = fake_openai.received
    assert request.model == "gpt-other"
    assert request.headers["authorization"] == "Bearer sk-team-key-0001"


def test_azure_from_the_usual_environment_variables(
    project: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Endpoint, API version and key from the variables the openai package reads too.
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", fake_openai.url)
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", SECRET)
    project.makeini(
        "[pytest]\ntextsim_judge_provider = azure\ntextsim_judge_model = judge-deploy\n"
        "textsim_cache = off\n"
    )
    result = project.runpytest_inprocess("-p", "no:cacheprovider", "-k", "fixture")
    result.assert_outcomes(passed=1)
    (request,) = fake_openai.received
    assert request.deployment == "judge-deploy" and request.query == {"api-version": "2024-10-21"}
    assert request.headers["api-key"] == SECRET and request.temperature == 0.0

    monkeypatch.delenv("OPENAI_API_VERSION")
    result = project.runpytest_inprocess("-p", "no:cacheprovider", "-k", "fixture")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*textsim_judge_provider is azure but the judge lacks textsim_judge_api_version "
            "(--textsim-judge-api-version, OPENAI_API_VERSION)*"
        ]  # fmt: skip
    )
    assert not leaked(project.path, result.stdout.str())


def test_base_url_from_openai_base_url(
    project: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("TEXTSIM_JUDGE_MODEL", "local-model")  # environment beats the ini
    project.makeini("[pytest]\ntextsim_judge_model = gpt-judge\ntextsim_cache = off\n")
    result = project.runpytest_inprocess("-p", "no:cacheprovider", "-k", "fixture")
    result.assert_outcomes(passed=1)
    assert [r.model for r in fake_openai.received] == ["local-model"]


def test_samples_spread_in_report(project: pytest.Pytester, fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = lambda request: Reply.score(3 + fake_openai.requests % 3)
    result = project.runpytest_inprocess(
        "-p", "no:cacheprovider", "-k", "helper", "--textsim-judge-samples=3"
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "judge: 3 calls*",
            "judge samples that disagree (1; the score is their median):",
            "  test_app.py::test_helper_without_query similarity: 4 from *",
        ]
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--textsim-cache=sometimes"], "--textsim-cache on the command line: expected one of"),
        (["--textsim-judge-timeout=soon"], "expected seconds"),
    ],
)
def test_bad_judge_settings_are_usage_errors(
    pytester: pytest.Pytester, args: list[str], message: str
) -> None:
    pytester.makepyfile("def test_a():\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}*"])


def test_cache_dir_from_ini_is_relative_to_the_ini_file(
    project: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makeini(
        f"[pytest]\ntextsim_judge_model = gpt-judge\ntextsim_cache_dir = judged\n"
        f"textsim_judge_base_url = {fake_openai.base_url}\n"
    )
    monkeypatch.chdir(project.mkdir("elsewhere"))
    result = project.runpytest_inprocess(
        "-p", "no:cacheprovider", "-k", "fixture", str(project.path)
    )
    result.assert_outcomes(passed=1)
    assert (project.path / "judged" / "judge.sqlite3").exists()
    assert not (project.path / "elsewhere" / "judged").exists()


def test_judges_outside_the_run_are_shared_by_settings(
    fake_openai: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Helpers in a script (or textsim score) build a Resolver per evaluator: equal
    # settings share one judge and cache connection, other settings get their own.
    from pytest_textsim.judge import wiring as judge_setup
    from pytest_textsim.settings.table import Resolver

    monkeypatch.chdir(tmp_path)
    env = {"TEXTSIM_JUDGE_MODEL": "m", "TEXTSIM_JUDGE_BASE_URL": fake_openai.base_url,
           "OPENAI_API_KEY": SECRET}  # fmt: skip
    first, second = Resolver(environ=dict(env)), Resolver(environ=dict(env))
    other = Resolver(environ={**env, "TEXTSIM_JUDGE_MODEL": "other"})
    judge = judge_setup.run_judge(first)
    try:
        assert judge_setup.run_judge(second) is judge
        assert judge_setup.run_judge(other) is not judge
    finally:
        for resolver in (first, other):
            judge_setup.release_judge(resolver)
    assert judge_setup.run_judge(second) is not judge  # released: built afresh
    judge_setup.release_judge(second)


URL_SECRET = "sk-URLSECRET-plugin-5a2e"


def test_credentials_in_the_base_url_stay_out_of_messages_and_cache(
    project: pytest.Pytester, fake_openai: FakeOpenAI
) -> None:
    url = f"http://u:{URL_SECRET}@127.0.0.1:{fake_openai.port}/v1"
    ok = project.runpytest_inprocess(
        "-p", "no:cacheprovider", "-k", "fixture", f"--textsim-judge-base-url={url}"
    )
    ok.assert_outcomes(passed=1)
    fake_openai.script(Reply.error(503))
    failed = project.runpytest_inprocess(
        "-p", "no:cacheprovider", "-k", "helper", f"--textsim-judge-base-url={url}",
        "--textsim-judge-max-retries=0", "--junitxml=junit.xml", "--textsim-json=scores.json",
    )  # fmt: skip
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(
        [f"*similarity: judge at 127.0.0.1:{fake_openai.port} failed after 1 attempt(s)*"]
    )
    texts = [r.stdout.str() + r.stderr.str() for r in (ok, failed)]
    found = [str(p) for p in project.path.rglob("*") if p.is_file()
             and URL_SECRET.encode() in p.read_bytes()]  # fmt: skip
    assert not found and not [t for t in texts if URL_SECRET in t or "u:sk-" in t]
    import sqlite3

    db = sqlite3.connect(project.path / ".textsim_cache" / "judge.sqlite3")
    assert db.execute("SELECT DISTINCT host FROM judgments").fetchall() == [
        ("127.0.0.1/v1",)  # host and path, no user info, no loopback port
    ]
    db.close()
    # The same judgments as for the plain URL: switching to it hits the cache.
    again = project.runpytest_inprocess("-p", "no:cacheprovider", "-k", "fixture")
    again.assert_outcomes(passed=1)
    again.stdout.fnmatch_lines(["judge: 0 calls, 1 cache hits*"])


def test_a_key_echoed_in_a_200_reply_is_stored_nowhere(
    project: pytest.Pytester, fake_openai: FakeOpenAI
) -> None:
    # The judge quotes its key back in the reason, the served model and the
    # fingerprint; the judgment itself is fine and is cached and reported.
    fake_openai.responder = lambda request: Reply.score(
        5, f"same facts (key {SECRET})", served_model=f"m-{SECRET}", fingerprint=SECRET
    )
    result = project.runpytest_inprocess(
        "-p", "no:cacheprovider", "-p", "no:xdist", "-k", "helper",
        "--textsim-json=scores.json", "--textsim-html=report.html",
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    exported = project.path / "export.jsonl"
    assert main(["cache", "--dir", str(project.path / ".textsim_cache"), "export",
                 "-o", str(exported)]) == 0  # fmt: skip
    assert '"reason": "same facts (key ***)"' in exported.read_text()
    (score,) = json.loads((project.path / "scores.json").read_text())["scores"]
    assert (score["reason"], score["served_model"], score["fingerprint"]) == (
        "same facts (key ***)", "m-***", "***"
    )  # fmt: skip
    assert "same facts (key ***)" in (project.path / "report.html").read_text()
    assert not leaked(project.path, result.stdout.str())


@pytest.mark.parametrize(
    ("args", "ini", "message"),
    [
        (["--textsim-judge-base-url=notaurl"], "",
         "--textsim-judge-base-url on the command line: expected an http:// or https:// URL"),
        ([], "textsim_judge_azure_endpoint = my-resource.openai.azure.com\n",
         "textsim_judge_azure_endpoint in tox.ini: expected an http:// or https:// URL"),
        (["--textsim-judge-base-url=http://:8080/v1"], "",
         "--textsim-judge-base-url on the command line: expected a URL with a host"),
    ],
)  # fmt: skip
def test_malformed_endpoint_is_a_usage_error(
    project: pytest.Pytester, fake_openai: FakeOpenAI, args: list[str], ini: str, message: str
) -> None:
    project.makeini(f"[pytest]\ntextsim_judge_model = gpt-judge\n{ini}")
    result = project.runpytest_inprocess("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}*"])
    assert fake_openai.requests == 0 and "Traceback" not in result.stderr.str()


def test_malformed_openai_base_url_fails_judge_tests_only(
    project: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # OPENAI_BASE_URL is shared with other tools: a run without judge tests is not
    # stopped by it, and a judge test says where the bad value came from.
    monkeypatch.setenv("OPENAI_BASE_URL", "localhost:11434")
    project.makeini("[pytest]\ntextsim_judge_model = gpt-judge\n")
    project.makepyfile(test_plain="def test_plain():\n    pass\n")
    result = project.runpytest_inprocess("-p", "no:cacheprovider", "-k", "plain or fixture")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*similarity: OPENAI_BASE_URL in the environment: expected an http:// or https:// URL*"]
    )
    assert fake_openai.requests == 0


@pytest.mark.parametrize("where", ["flag", "ini", "default"])
def test_cache_dir_that_is_a_file(
    project: pytest.Pytester, fake_openai: FakeOpenAI, where: str
) -> None:
    (project.path / "judged").write_text("not a folder")
    if where == "default":
        (project.path / ".textsim_cache").write_text("not a folder")
    args = ["--textsim-cache-dir=judged"] if where == "flag" else []
    if where == "ini":
        project.makeini(
            f"[pytest]\ntextsim_judge_model = gpt-judge\ntextsim_cache_dir = judged/sub\n"
            f"textsim_judge_base_url = {fake_openai.base_url}\n"
        )
    result = project.runpytest_inprocess("-p", "no:cacheprovider", *args)
    out = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in out and "FileExistsError" not in out and "NotADirectory" not in out
    assert fake_openai.requests == 0
    if where == "default":
        # Not set on purpose: judge tests fail with the reason, the others run.
        result.assert_outcomes(failed=4)
        result.stdout.fnmatch_lines(
            ["*similarity: the default judge cache folder .textsim_cache: */.textsim_cache is "
             "a file, not a directory*"]
        )  # fmt: skip
        return
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    expected = {
        "flag": "--textsim-cache-dir on the command line: */judged is a file, not a directory*",
        "ini": "textsim_cache_dir in tox.ini: */judged/sub is inside */judged, which is a file*",
    }[where]
    result.stderr.fnmatch_lines([f"*pytest-textsim: {expected}"])


def test_named_key_variable_that_is_unset(
    project: pytest.Pytester, fake_openai: FakeOpenAI
) -> None:
    # OPENAI_API_KEY is set (project fixture), but the ini names another variable.
    project.makeini(
        f"[pytest]\ntextsim_judge_model = gpt-judge\ntextsim_judge_api_key_env = MY_JUDGE_KEY\n"
        f"textsim_judge_base_url = {fake_openai.base_url}\n"
    )
    result = project.runpytest_inprocess("-p", "no:cacheprovider", "-k", "fixture")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*similarity: textsim_judge_api_key_env in tox.ini names MY_JUDGE_KEY as the judge's "
         "API key variable, but MY_JUDGE_KEY is not set in the environment*"]
    )  # fmt: skip
    assert fake_openai.requests == 0
    assert not leaked(project.path, result.stdout.str())


# -- the textsim command names its own flags ----------------------------------------------


@pytest.fixture
def rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"response": "Paris.", "ground_truth": "Paris is it."}) + "\n")
    return path


def test_textsim_score_messages_name_its_flags(
    rows: Path, fake_openai: FakeOpenAI, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    from pytest_textsim.cli import main

    assert main(["score", str(rows), "-m", "similarity"]) == 2
    err = capsys.readouterr().err
    assert "no LLM judge is configured" in err
    assert "(or --judge-model, or TEXTSIM_JUDGE_MODEL)" in err
    assert "--textsim-" not in err

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    fake_openai.script(Reply.error(503), Reply(content="no idea", finish_reason="length"),
                       Reply(content="still none", finish_reason="length"))  # fmt: skip
    judge = ["-m", "similarity", "--judge-model", "m", "--judge-base-url", fake_openai.base_url,
             "--judge-max-retries", "0", "--cache", "off"]  # fmt: skip
    assert main(["score", str(rows), *judge]) == 2
    err = capsys.readouterr().err
    assert "Raise --judge-max-retries if the service is overloaded" in err, err
    assert main(["score", str(rows), *judge]) == 2
    err = capsys.readouterr().err
    assert "raise textsim_judge_max_tokens or TEXTSIM_JUDGE_MAX_TOKENS" in err, err

    judge[-1] = "none"
    assert main(["score", str(rows), *judge]) == 2
    err = capsys.readouterr().err
    assert "--cache=none forbids calling the judge; record it with --cache=once" in err, err
    assert "--textsim-" not in err

    monkeypatch.delenv("OPENAI_API_KEY")
    azure = ["--judge-provider", "azure", "--judge-azure-endpoint", fake_openai.url]
    assert main(["score", str(rows), "-m", "similarity", "--judge-model", "m", *azure]) == 2
    err = capsys.readouterr().err
    assert "lacks textsim_judge_api_version (--judge-api-version, OPENAI_API_VERSION)" in err


def test_textsim_score_checks_urls_and_cache_dir(
    rows: Path, tmp_path: Path, fake_openai: FakeOpenAI, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    from pytest_textsim.cli import main

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    judge = ["score", str(rows), "-m", "similarity", "--judge-model", "m"]
    assert main([*judge, "--judge-base-url", "notaurl"]) == 2
    err = capsys.readouterr().err
    assert "--judge-base-url on the command line: expected an http:// or https:// URL" in err
    (tmp_path / "afile").write_text("x")
    assert main([*judge, "--judge-base-url", fake_openai.base_url, "--cache-dir", "afile"]) == 2
    err = capsys.readouterr().err
    assert "--cache-dir on the command line: " in err and "afile is a file, not a directory" in err
    assert "Traceback" not in err and fake_openai.requests == 0
    assert main(["cache", "--dir", "afile", "stats"]) == 2
    err = capsys.readouterr().err
    assert "textsim cache: error: --dir on the command line: afile is not a directory" in err
    help_text = subprocess_help()
    assert "fails the test" not in help_text and "a miss is an error" in help_text


def subprocess_help() -> str:
    """``textsim score --help`` as printed (argparse exits, so catch it)."""
    import contextlib
    import io

    from pytest_textsim.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main(["score", "--help"])
    return " ".join(out.getvalue().split())


def test_qa_f1_threshold_defaults_to_the_f1_setting(project: pytest.Pytester) -> None:
    # QA's F1 is a 0..1 score like the f1_score fixture's: textsim_threshold_f1
    # applies unless f1_score_threshold is given.
    ini = project.path / "tox.ini"
    ini.write_text(ini.read_text().rstrip("\n") + "\ntextsim_threshold_f1 = 0.9\n")
    project.makepyfile(
        test_qa_f1="""
        def test_default(qa):
            out = qa("Paris is the capital of France.", "Paris is the capital of France.",
                     "Paris is the capital.", "Capital?")
            assert (out["f1_threshold"], out["similarity_threshold"]) == (0.9, 3)

        def test_option(qa):
            out = qa("Paris.", "Paris.", "Paris.", "Capital?", f1_score_threshold=0.2)
            assert out["f1_threshold"] == 0.2
        """
    )
    result = project.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist",
                                         "test_qa_f1.py")  # fmt: skip
    result.assert_outcomes(passed=2)
