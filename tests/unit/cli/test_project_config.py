"""The ``textsim`` command reads the project's pytest configuration file.

``pytest_textsim.cli.project`` must find the same file pytest finds (checked
against pytest itself), and ``textsim score``/``compare``/``cache`` must use
its ``textsim_*`` keys with the usual precedence: flag > environment > file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_textsim.cli import main
from pytest_textsim.cli.project import locate
from pytest_textsim.settings.table import Resolver
from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply

PAIR = {
    "response": "According to wikipedia, Marie Curie was not born in Paris but in Warsaw.",
    "ground_truth": "Marie Curie was born in Warsaw.",
}  # BLEU 0.155


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# Layouts, each with the folder pytest is started in; the files are written
# under a fresh tmp_path, which pytest would otherwise search above.
LAYOUTS = {
    "pytest.ini beats pyproject.toml in one folder": (
        {"pytest.ini": "[pytest]\ntextsim_report = none\n",
         "pyproject.toml": "[tool.pytest.ini_options]\ntextsim_report = 'failed'\n"}, "."),
    "a pyproject.toml without a pytest table is passed over": (
        {"pyproject.toml": "[project]\nname = 'x'\n",
         "sub/pyproject.toml": "[project]\nname = 'y'\n",
         "tox.ini": "[tox]\n[pytest]\ntextsim_report = summary\n"}, "sub"),
    "tox.ini needs a [pytest] section, setup.cfg [tool:pytest]": (
        {"tox.ini": "[tox]\nenvlist = py\n",
         "setup.cfg": "[tool:pytest]\ntextsim_report = failed\n"}, "a/b"),
    "an empty pytest.ini still counts": (
        {"pytest.ini": "", "setup.cfg": "[tool:pytest]\ntextsim_report = failed\n"}, "."),
    "pytest.toml with native types": (
        {"pytest.toml": "[pytest]\ntextsim_report = 'summary'\ntextsim_json_texts = true\n",
         "pytest.ini": "[pytest]\n"}, "."),
    "only a bare pyproject.toml: it marks the rootdir": (
        {"pyproject.toml": "[project]\nname = 'x'\n"}, "deep/er"),
}  # fmt: skip


@pytest.mark.parametrize("layout", LAYOUTS)
def test_finds_the_file_pytest_finds(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, layout: str
) -> None:
    files, start = LAYOUTS[layout]
    for name, text in files.items():
        write(pytester.path / name, text)
    here = pytester.path / start
    here.mkdir(parents=True, exist_ok=True)
    monkeypatch.chdir(here)
    theirs = pytester.parseconfig()  # pytest's own discovery, started in ``here``
    ours = locate()
    assert ours.inipath == theirs.inipath
    assert ours.rootpath == theirs.rootpath
    # Unset reads as "" or None depending on the pytest version; the resolver takes both.
    assert (ours.getini("textsim_report") or None) == (theirs.getini("textsim_report") or None)


def test_values_read_like_pytest_getini(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", """\
[tool.pytest.ini_options]
textsim_threshold_bleu = 0.3
textsim_json_texts = true
textsim_max_drop = ["0.05", "similarity=1"]
textsim_gates = '''
    bleu_score.mean >= 0.35
    rouge_f1_score.min >= 0.2
'''
""")  # fmt: skip
    project = locate(tmp_path)
    resolver = Resolver(project, environ={})
    assert resolver.resolve("threshold_bleu").value == 0.3
    assert resolver.resolve("threshold_bleu").source == "textsim_threshold_bleu in pyproject.toml"
    assert resolver.get("json_texts") is True
    assert resolver.get("gates") == ["bleu_score.mean >= 0.35", "rouge_f1_score.min >= 0.2"]
    tolerances = resolver.get("max_drop")
    assert tolerances.for_metric("bleu_score") == 0.05
    assert tolerances.for_metric("similarity") == 1
    # The environment still beats the file.
    assert Resolver(project, environ={"TEXTSIM_THRESHOLD_BLEU": "0.1"}).get("threshold_bleu") == 0.1


def test_score_uses_thresholds_from_the_file_and_names_it_in_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write(tmp_path / "data" / "rows.jsonl", json.dumps(PAIR) + "\n")
    write(tmp_path / "tox.ini", "[pytest]\ntextsim_threshold_bleu = 0.1\n")
    monkeypatch.chdir(tmp_path / "data")  # the file is found from a subfolder
    assert main(["score", str(data), "-m", "bleu", "-o", "-"]) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith(f"textsim score: 1 row from {data}\n")
    row = json.loads(captured.out.splitlines()[0])
    assert (row["bleu_threshold"], row["bleu_result"]) == (0.1, "pass")
    # The command line still wins over the file.
    assert main(["score", str(data), "-m", "bleu", "--threshold", "bleu_score=0.3", "-o", "-"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[0])["bleu_result"] == "fail"

    write(tmp_path / "tox.ini", "[pytest]\ntextsim_threshold_bleu = lots\n")
    assert main(["score", str(data), "-m", "bleu"]) == 2
    assert "textsim_threshold_bleu in tox.ini: expected a number, got 'lots'" in (
        capsys.readouterr().err
    )


def test_config_file_option_and_unreadable_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write(tmp_path / "rows.jsonl", json.dumps(PAIR) + "\n")
    monkeypatch.chdir(tmp_path)
    other = write(tmp_path / "ci" / "gates.ini", "[pytest]\ntextsim_threshold_bleu = 0.1\n")
    assert main(["score", str(data), "-m", "bleu", "-c", str(other), "-o", "-"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[0])["bleu_threshold"] == 0.1

    assert main(["score", str(data), "-m", "bleu", "-c", "nowhere.ini"]) == 2
    assert "nowhere.ini: no such configuration file" in capsys.readouterr().err
    write(tmp_path / "pyproject.toml", "[tool.pytest.ini_options\n")
    assert main(["score", str(data), "-m", "bleu"]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'pyproject.toml'}: cannot read it as TOML" in err
    assert "Traceback" not in err


def test_compare_reads_max_drop_from_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_textsim.gating import baseline
    from pytest_textsim.records import ScoreRecord

    def save(path: Path, score: float) -> Path:
        record = ScoreRecord("bleu", "bleu_score", score, 0.5, score >= 0.5, nodeid="t.py::a")
        baseline.save(path, [record])
        return path

    old, new = save(tmp_path / "old.json", 0.60), save(tmp_path / "new.json", 0.55)
    monkeypatch.chdir(tmp_path)
    assert main(["compare", str(old), str(new)]) == 1  # default tolerance 0.02
    write(tmp_path / "pytest.ini", "[pytest]\ntextsim_max_drop = bleu_score=0.1\n")
    assert main(["compare", str(old), str(new)]) == 0
    assert main(["compare", str(old), str(new), "--max-drop", "0.01"]) == 1
    capsys.readouterr()


def test_judge_settings_and_cache_are_the_projects(
    tmp_path: Path, fake_openai: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    # The judge model, endpoint and cache folder come from pyproject.toml, so the
    # command run in a subfolder shares the cache pytest uses for the project.
    write(tmp_path / "pyproject.toml", f"""\
[tool.pytest.ini_options]
textsim_judge_model = "project-judge"
textsim_judge_base_url = "{fake_openai.base_url}"
textsim_judge_max_retries = "0"
textsim_cache_dir = "judge_cache"
""")  # fmt: skip
    data = write(tmp_path / "cases" / "qa.jsonl", json.dumps(PAIR) + "\n")
    fake_openai.script(Reply.score(4))
    env = {**os.environ, "OPENAI_API_KEY": "sk-secret-test", "CI": "true"}
    textsim = str(Path(sys.executable).with_name("textsim"))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([textsim, *args], capture_output=True, text=True, env=env,
                              cwd=tmp_path / "cases", timeout=120)  # fmt: skip

    first = run("score", str(data), "-m", "similarity")
    assert first.returncode == 0, first.stderr
    assert [r.model for r in fake_openai.received] == ["project-judge"]
    assert (tmp_path / "judge_cache" / "judge.sqlite3").is_file()
    assert not (tmp_path / "cases" / ".textsim_cache").exists()

    second = run("score", str(data), "-m", "similarity")
    assert "judge: 0 calls, 1 cache hits" in second.stdout
    stats = run("cache", "stats", "--json")
    assert stats.returncode == 0, stats.stderr
    figures = json.loads(stats.stdout)
    assert figures["entries"] == 1 and Path(figures["path"]).parent == tmp_path / "judge_cache"
    for proc in (first, second, stats):
        assert "sk-secret-test" not in proc.stdout + proc.stderr
    assert fake_openai.requests == 1


def test_a_key_in_the_file_is_refused_without_echoing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write(tmp_path / "rows.jsonl", json.dumps(PAIR) + "\n")
    write(tmp_path / "pytest.ini", "[pytest]\ntextsim_judge_model = m\n"
          "textsim_judge_api_key = sk-in-the-file-1234\n")  # fmt: skip
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    assert main(["score", str(data), "-m", "similarity"]) == 2
    err = capsys.readouterr().err
    assert "textsim_judge_api_key in pytest.ini: secrets are read only from the environment" in err
    assert "sk-in-the-file" not in err and "sk-from-env" not in err
