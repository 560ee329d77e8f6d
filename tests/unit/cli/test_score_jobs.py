"""``textsim score --jobs``: worker processes end with the command, whether it
finishes, its reader goes away (``| head``) or it gets Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

PARITY = (
    Path(
        os.environ.get(
            "TEXTSIM_PARITY_DIR", Path(__file__).resolve().parents[4] / "shared" / "parity"
        )
    )
    / "corpus.jsonl"
)
TEXTSIM = str(Path(sys.executable).with_name("textsim"))


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The parity corpus a hundred times: 59,000 rows, ten seconds of two workers'
    METEOR. The tests stop it after its first lines; ten times (two seconds) could
    end on its own, on a loaded machine, before the signal came."""
    path = tmp_path_factory.mktemp("big") / "big.jsonl"
    path.write_text(PARITY.read_text(encoding="utf-8") * 100, encoding="utf-8")
    return path


def _marked() -> dict[str, str]:
    """An environment whose processes (the command and its workers) can be found."""
    return {**os.environ, "CI": "", "TEXTSIM_TEST_RUN": uuid.uuid4().hex}


def _alive(env: dict[str, str]) -> list[int]:
    """Processes still running with this environment's marker."""
    marker = f"TEXTSIM_TEST_RUN={env['TEXTSIM_TEST_RUN']}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path("/proc", entry, "environ").read_bytes()
            state = Path("/proc", entry, "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in environ.split(b"\0") and state != "Z":
            found.append(int(entry))
    return found


def _gone(env: dict[str, str]) -> bool:
    deadline = time.monotonic() + 10
    while _alive(env) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not _alive(env)


def test_head_stops_the_command_and_its_workers(big: Path) -> None:
    env = _marked()
    command = f"{TEXTSIM} score {big} -m meteor_score -m bleu_score -o - --jobs 2 | head -n 3"
    proc = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True, env=env,
        timeout=120,
    )  # fmt: skip
    lines = proc.stdout.splitlines()
    assert len(lines) == 3 and all("meteor_score" in json.loads(line) for line in lines)
    assert "Traceback" not in proc.stderr and "Error" not in proc.stderr, proc.stderr
    assert _gone(env)


@pytest.mark.parametrize("how", ["ctrl-c", "kill"])
def test_ctrl_c_leaves_whole_lines_and_no_worker(big: Path, tmp_path: Path, how: str) -> None:
    env = _marked()
    out = tmp_path / "out.jsonl"
    proc = subprocess.Popen(
        [TEXTSIM, "score", str(big), "-m", "meteor_score", "-m", "rouge_score:rougeL",
         "-o", str(out), "--jobs", "2"],
        env=env, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while (not out.exists() or out.stat().st_size < 2000) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    assert len(_alive(env)) >= 3  # the command and two workers
    if how == "ctrl-c":
        os.killpg(proc.pid, signal.SIGINT)  # a terminal signals the whole process group
    else:
        os.kill(proc.pid, signal.SIGTERM)  # kill, or a scheduler's time limit: the command only
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "textsim: interrupted" in err and "Traceback" not in err
    text = out.read_text(encoding="utf-8")
    assert text.endswith("\n")
    rows = [json.loads(line) for line in text.splitlines()]
    assert 0 < len(rows) < 5900
    assert _gone(env)


def test_jobs_must_be_a_whole_number(capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_textsim.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["score", str(PARITY), "-m", "bleu", "--jobs", "0"])
    assert exit_info.value.code == 2
    assert "--jobs: expected a whole number >= 1, got '0'" in capsys.readouterr().err


def test_judge_metrics_stay_in_the_parent_and_a_warm_cache_gives_the_same_bytes(
    tmp_path: Path, fake_openai
) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(PARITY.read_text(encoding="utf-8").splitlines(True)[:40]))
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "CI": "true"}

    def run(jobs: int) -> bytes:
        out = tmp_path / f"out{jobs}.jsonl"
        command = [
            TEXTSIM, "score", str(data), "-m", "bleu_score", "-m", "similarity",
            "-m", "meteor_score", "--judge-model", "judge-test", "--judge-concurrency", "3",
            "--judge-base-url", fake_openai.base_url, "-o", str(out), "--jobs", str(jobs),
        ]  # fmt: skip
        proc = subprocess.run(
            command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
        )
        assert proc.returncode == 0, proc.stderr
        return out.read_bytes()

    cold = run(1)
    assert fake_openai.requests == 40
    assert fake_openai.max_in_flight <= 3  # the command's one concurrency limit
    warm_one, warm_two = run(1), run(2)
    assert fake_openai.requests == 40  # both replayed from the cache
    assert cold == warm_one == warm_two
    rows = [json.loads(line) for line in warm_two.splitlines()]
    assert list(rows[0])[-3:] == ["meteor_score", "meteor_result", "meteor_threshold"]
    assert all("similarity" in row and "bleu_score" in row for row in rows)
