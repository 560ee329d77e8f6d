"""An inline comment in a pytest ini file is part of the value: refused, naming the key.

pytest's ini files have comments on lines of their own only, so
``textsim_judge_model = gpt-4o-mini  # cheap model`` would send the comment to
the judge as part of the model name. Values from flags, ``-o``, the environment
and TOML files (whose comments TOML strips) may hold ``#``.
Settings are resolved the same way on every xdist worker, so these run in-process
without xdist.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pytest_textsim.testing.fake_openai import FakeOpenAI

JUDGED = """
def test_judged(similarity):
    similarity("Paris is in France.", "Paris is the capital of France.", query="Where?")
"""

FIX = "pytest ini files have none: put the comment on its own line"


def _ini(pytester: pytest.Pytester, text: str) -> None:
    pytester.path.joinpath("pytest.ini").write_text(text)


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist", *args)


def test_a_commented_model_name_is_a_usage_error_before_any_judge_call(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    _ini(pytester, "[pytest]\ntextsim_judge_model = gpt-4o-mini  # cheap model\n")
    pytester.makepyfile(test_judge=JUDGED)
    result = _run(pytester, "--textsim-cache=off")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            'ERROR: pytest-textsim: textsim_judge_model in pytest.ini: "gpt-4o-mini  # cheap '
            f'model" contains an inline comment (" #"); {FIX}'
        ]
    )
    assert fake_openai.requests == 0  # the judge never saw the comment
    # The same line without the comment runs, and the server gets the model as written.
    _ini(pytester, "[pytest]\n# cheap model\ntextsim_judge_model = gpt-4o-mini\n")
    _run(pytester, "--textsim-cache=off").assert_outcomes(passed=1)
    assert {r.body["model"] for r in fake_openai.chat_requests} == {"gpt-4o-mini"}


@pytest.mark.parametrize(
    ("ini_file", "lines", "key", "shown", "mark"),
    [
        # A path: the report would go to a file named "out.json ; the report".
        ("pytest.ini", ["[pytest]", "textsim_json = out.json ; the report"],
         "textsim_json in pytest.ini", "out.json ; the report", " ;"),
        ("tox.ini", ["[pytest]", "textsim_judge_base_url = http://127.0.0.1:1/v1  # local"],
         "textsim_judge_base_url in tox.ini", "http://127.0.0.1:1/v1  # local", " #"),
        ("setup.cfg", ["[tool:pytest]", "textsim_threshold_bleu = 0.3\t# strict"],
         "textsim_threshold_bleu in setup.cfg", "0.3\t# strict", "\\t#"),
        ("pytest.ini", ["[pytest]", "textsim_report = summary  # short"],
         "textsim_report in pytest.ini", "summary  # short", " #"),
        ("pytest.ini", ["[pytest]", "textsim_judge_reasoning = true  # an o3 judge"],
         "textsim_judge_reasoning in pytest.ini", "true  # an o3 judge", " #"),
        # One line of a list: the line is named.
        ("pytest.ini", ["[pytest]", "textsim_gates =", "    bleu_score.count >= 1",
                        "    bleu_score.mean >= 0.1  # the floor"],
         "textsim_gates in pytest.ini", "bleu_score.mean >= 0.1  # the floor", " #"),
    ],
)  # fmt: skip
def test_every_kind_of_setting_in_each_ini_file(
    pytester: pytest.Pytester, ini_file: str, lines: list[str], key: str, shown: str, mark: str
) -> None:
    pytester.path.joinpath(ini_file).write_text("\n".join(lines) + "\n")
    pytester.makepyfile(test_it="def test_it(bleu):\n    bleu('a b c d', 'a b c d')\n")
    result = _run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    said = f'"{shown}" contains an inline comment ("{mark}"); {FIX}'
    expected = f"ERROR: pytest-textsim: {key}: {said}"
    assert expected in result.stderr.str().splitlines()
    assert not (pytester.path / "out.json ; the report").exists()


def test_every_commented_value_is_named_at_once(pytester: pytest.Pytester) -> None:
    _ini(
        pytester,
        "[pytest]\ntextsim_judge_model = m  # cheap\ntextsim_cache_dir = .cache ; shared\n"
    )
    pytester.makepyfile(test_it="def test_it():\n    pass\n")
    result = _run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            'ERROR: pytest-textsim: textsim_judge_model in pytest.ini: "m  # cheap" *',
            'pytest-textsim: textsim_cache_dir in pytest.ini: ".cache ; shared" *',
        ]
    )


def test_hash_is_text_outside_the_ini_file(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_it="def test_it(bleu):\n    bleu('a b c d', 'a b c d')\n")
    # -o, flags and the environment pass the value as it is: "#" may be meant.
    _ini(pytester, "[pytest]\n")
    _run(pytester, "-o", "textsim_json=a #1.json").assert_outcomes(passed=1)
    _run(pytester, "--textsim-json=b #2.json").assert_outcomes(passed=1)
    monkeypatch.setenv("TEXTSIM_JSON", "c ;3.json")
    _run(pytester).assert_outcomes(passed=1)
    monkeypatch.delenv("TEXTSIM_JSON")
    assert {"a #1.json", "b #2.json", "c ;3.json"} <= {p.name for p in pytester.path.iterdir()}
    # A regular expression may hold " #": replay_redact takes it as written.
    _ini(pytester, "[pytest]\ntextsim_replay_redact =\n    ticket #\\d+\n")
    _run(pytester).assert_outcomes(passed=1)
    # TOML has comments, and strips them; a "#" inside the quotes is meant.
    (pytester.path / "pytest.ini").unlink()
    pytester.makepyprojecttoml(
        '[tool.pytest.ini_options]\ntextsim_json = "d #4.json"  # the report\n'
    )
    _run(pytester).assert_outcomes(passed=1)
    assert (pytester.path / "d #4.json").is_file()


def test_the_command_line_refuses_it_in_the_ini_file_it_reads(
    pytester: pytest.Pytester,
) -> None:
    _ini(pytester, "[pytest]\ntextsim_judge_model = gpt-4o-mini  # cheap model\n")
    rows = pytester.path / "rows.jsonl"
    rows.write_text('{"response": "a", "ground_truth": "a", "query": "q"}\n')
    result = subprocess.run(
        [str(Path(sys.executable).with_name("textsim")), "score", str(rows), "-m", "similarity"],
        cwd=pytester.path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    assert (
        'textsim: error: textsim_judge_model in pytest.ini: "gpt-4o-mini  # cheap model" '
        f'contains an inline comment (" #"); {FIX}'
    ) in result.stderr.splitlines()
