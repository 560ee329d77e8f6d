"""Judge throughput and cache speed against the local fake OpenAI server.

1. Score ``--rows`` rows (default 200) with a judge whose every reply takes
   ``--latency`` seconds (default 0.2), one call at a time and then with 8 in
   flight; prints both times and the speed-up (target: at least 6x).
2. Run a pytest suite of the same rows twice with the judge cache on: the
   first run fills the cache, the second must make zero HTTP requests and
   spend under 2 ms per cached judgment (from the per-score durations in
   ``--textsim-json``).
3. A cold run of the same suite with pytest-xdist, ``-n --workers`` (default
   8) and its default load scheduling, the judge cache shared by the workers:
   wall time including worker start-up (target: under 8 s for 200 tests at
   200 ms), the CPU seconds of all its processes, and every score and verdict
   equal to the sequential cold run's. Judge calls are I/O-bound, so more
   workers than cores pay off; the controller makes every worker's calls (its
   judge hub), so the workers never import openai. Then the same cold run with
   the other installed pytest plugins turned off, and the floor of the approach
   on this machine: the same number of tests with ``-n --workers`` that only
   sleep as long as a reply takes, with textsim and every other plugin off.
4. The same rows judged in one test (``similarity.each``), one process, no
   xdist, ``--concurrency`` (default 16) calls at once: cold wall time including
   pytest start-up (target: under 4 s; the floor rows x latency / concurrency
   beside it), warm (every judgment cached: the batch under 0.5 s), and the
   app's own calls gathered first (``gather``, ``--app-latency`` 0.3 s each)
   then judged (target: under 8 s). Scores, verdicts and request count equal
   those of the parametrized sequential cold run of part 2. Beside them: the
   same batch cold in an async test (``await similarity.aeach(...)``, every
   judge call awaited on the SDK's async client, no thread per call),
   pytest's start-up alone (one empty test, textsim on), the openai SDK's
   import alone (a fresh interpreter's ``import openai`` less a bare one), and
   the floor with both added: no cold run in one fresh process on this
   machine can be faster.

``bench_cold.py`` runs only part 4's cold batch, three times, each beside its floor.

``--slow-stream`` runs only this instead: a slow local judge. Four judged
tests (two ``coherence``, two ``rubric``) against a server generating
``--token-rate`` tokens a second (default 30, a small model on a CPU) whose
every reply is the verdict followed by a ``--ramble`` of words (default 800),
streamed when asked to stream, else sent once generated; the request's
``max_tokens`` stops it, as a real server's does. The same suite four times,
each cold: the default settings and ``textsim_judge_max_tokens = 800`` (the
old fixed cap), each against that server and against one that does not stream
(it answers a request to stream with one body); the last is the behaviour
before replies were capped by their format and streamed. Prints each run's
wall time, the output tokens the judge counted (from the usage the replies
carried; a reply left at its verdict carries none) and every test's verdict;
every run must decide the same (target: the default run of the 4 tests within
2 minutes).

Run: ``NLTK_DATA=../shared/nltk_data .venv/bin/python benchmarks/bench_judge.py``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from pytest_textsim import JudgeOptions, SimilarityEvaluator
from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply, Responder

KEY = "sk-bench-not-a-real-key"


def reply(request: Received) -> Reply:
    # A score that depends on the inputs, so rows differ as real ones would.
    return Reply.score(1 + len(request.messages[1]["content"]) % 5, "benchmark reply")


def rows(count: int) -> list[dict[str, str]]:
    return [
        {
            "query": f"Question {i}: what is the capital of country {i}?",
            "response": f"The capital of country {i} is City {i}.",
            "ground_truth": f"City {i} is the capital of country {i}.",
        }
        for i in range(count)
    ]


def throughput(server: FakeOpenAI, count: int, concurrency: int) -> float:
    config = {"model": "bench-judge", "base_url": server.base_url, "api_key": KEY}
    evaluator = SimilarityEvaluator(config, options=JudgeOptions(concurrency=concurrency))
    started = time.perf_counter()
    outputs = evaluator.map(rows(count))
    elapsed = time.perf_counter() - started
    assert len(outputs) == count and all(1 <= o["similarity"] <= 5 for o in outputs)
    return elapsed


SUITE = """
import json, pathlib, pytest

ROWS = json.loads(pathlib.Path(__file__).with_name("rows.json").read_text())

@pytest.mark.parametrize("row", ROWS)
def test_row(row, similarity):
    similarity(row["response"], row["ground_truth"], query=row["query"])
"""


def children_cpu() -> float:
    """CPU seconds (user and system) of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def pytest_run(
    project: Path,
    name: str,
    workers: int = 0,
    cache_dir: str = ".textsim_cache",
    off: tuple[str, ...] = (),
) -> tuple[float, dict, list[dict], float]:
    """One pytest run of the suite (plugins ``off`` turned off): wall seconds,
    counters, score records and the CPU seconds of all its processes."""
    report = project / f"{name}.json"
    env = dict(os.environ, OPENAI_API_KEY=KEY, TEXTSIM_CACHE_DIR=str(project / cache_dir))
    xdist = ["-n", str(workers)] if workers else ["-p", "no:xdist"]
    plugins = disabled(off)
    cpu, started = children_cpu(), time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *xdist, *plugins,
         "--textsim-report=none", f"--textsim-json={report}", str(project)],
        cwd=project, env=env, capture_output=True, text=True,
    )  # fmt: skip
    elapsed, cpu = time.perf_counter() - started, children_cpu() - cpu
    if proc.returncode != 0:
        sys.exit(f"pytest run {name} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}")
    data = json.loads(report.read_text())
    return elapsed, data["header"]["counters"], data["scores"], cpu


def disabled(plugins: tuple[str, ...]) -> list[str]:
    """pytest arguments that turn ``plugins`` off: ``-p no:NAME`` each."""
    return [arg for name in plugins for arg in ("-p", f"no:{name}")]


def other_plugins() -> tuple[str, ...]:
    """The installed pytest plugins other than textsim and xdist (entry point names)."""
    from importlib.metadata import entry_points

    names = {ep.name for ep in entry_points(group="pytest11")}
    return tuple(sorted(names - {"textsim", "xdist", "xdist.looponfail"}))


SLEEPS = """
import time, pytest

@pytest.mark.parametrize("row", range({rows}))
def test_row(row):
    time.sleep({latency})
"""


def xdist_floor(project: Path, rows: int, latency: float, workers: int) -> float:
    """Wall seconds of pytest-xdist alone: the tests wait as long as a judge call
    would, with every plugin that can be turned off turned off."""
    folder = project / "floor"
    folder.mkdir()
    suite = SLEEPS.format(rows=rows, latency=latency)
    (folder / "test_sleeps.py").write_text(textwrap.dedent(suite))
    (folder / "pytest.ini").write_text("[pytest]\n")
    off = disabled(("textsim", "cacheprovider", *other_plugins()))
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", str(workers), *off, str(folder)],
        cwd=folder, capture_output=True, text=True,
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"the floor run failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}")
    return elapsed


EACH_SUITE = """
import json, pathlib, time
import openai
from pytest_textsim import gather

HERE = pathlib.Path(__file__).parent
ROWS = json.loads((HERE / "rows.json").read_text())
APP = {app!r}

def ask(row):
    # The app under test: its own model call (a chat completion) per question.
    reply = CLIENT.chat.completions.create(
        model="bench-app", messages=[{{"role": "user", "content": row["query"]}}])
    return reply.choices[0].message.content and row["response"]

def test_row(similarity):
    global CLIENT
    started = time.perf_counter()
    responses = [row["response"] for row in ROWS]
    if APP:
        CLIENT = openai.OpenAI(base_url=APP, api_key="sk-bench-app", max_retries=0)
        responses = gather(ask, ROWS, concurrency={concurrency})
    ids = [f"row{{i}}" for i in range(len(ROWS))]
    similarity.each(responses, [row["ground_truth"] for row in ROWS],
                    query=[row["query"] for row in ROWS], ids=ids)
    (HERE / "batch_seconds.txt").write_text(str(time.perf_counter() - started))
"""


AWAITED_SUITE = """
import json, pathlib, time
import pytest

HERE = pathlib.Path(__file__).parent
ROWS = json.loads((HERE / "rows.json").read_text())

@pytest.fixture
def anyio_backend():
    return "asyncio"

@pytest.mark.anyio
async def test_row(similarity):
    started = time.perf_counter()
    ids = [f"row{{i}}" for i in range(len(ROWS))]
    await similarity.aeach([row["response"] for row in ROWS],
                           [row["ground_truth"] for row in ROWS],
                           query=[row["query"] for row in ROWS], ids=ids)
    (HERE / "batch_seconds.txt").write_text(str(time.perf_counter() - started))
"""

EMPTY_SUITE = """
def test_nothing():
    pass
"""


def startup(project: Path) -> float:
    """Wall seconds of a pytest run of one empty test, textsim on: pytest's start-up."""
    folder = project / "empty"
    folder.mkdir(exist_ok=True)
    (folder / "test_empty.py").write_text(EMPTY_SUITE)
    (folder / "pytest.ini").write_text("[pytest]\n")
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         str(folder)], cwd=folder, capture_output=True, check=True,
    )  # fmt: skip
    return time.perf_counter() - started


def openai_import() -> float:
    """Wall seconds of ``import openai`` in a fresh interpreter, less the
    interpreter's own start: what a cold run pays before its first judge call."""

    def run(code: str) -> float:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        return time.perf_counter() - started

    return min(run("import openai") - run("pass") for _ in range(3))


def each_run(
    project: Path,
    name: str,
    server_url: str,
    concurrency: int,
    app: str = "",
    awaited: bool = False,
) -> tuple[float, float, list[dict]]:
    """One pytest run of the batch suite in a folder of its own: wall seconds, the
    batch's own seconds (inside the test) and the score records."""
    folder = project / name
    folder.mkdir(exist_ok=True)
    (folder / "rows.json").write_text((project / "rows.json").read_text())
    suite = AWAITED_SUITE.format() if awaited else EACH_SUITE.format(
        app=app, concurrency=concurrency
    )
    (folder / "test_judged.py").write_text(textwrap.dedent(suite))
    (folder / "pytest.ini").write_text(
        f"[pytest]\ntextsim_judge_model = bench-judge\ntextsim_judge_base_url = {server_url}\n"
        f"textsim_judge_concurrency = {concurrency}\n"
    )
    wall, _, scores, _ = pytest_run(folder, "run")
    return wall, float((folder / "batch_seconds.txt").read_text()), scores


def each_part(
    server: FakeOpenAI, project: Path, args: argparse.Namespace, cold_scores: list[dict],
    cold_requests: int,
) -> None:
    """Part 4: the batch cold, warm, and gathered then judged, beside targets and floors."""
    count, latency, width = args.rows, args.latency, args.concurrency
    print(f"one test judging {count} cases (similarity.each), {latency * 1000:.0f} ms per "
          f"reply, concurrency {width}, one process, no xdist")  # fmt: skip
    before, server.max_in_flight = server.requests, 0
    cold, cold_batch, cold_each = each_run(project, "each", server.base_url, width)
    requests = server.requests - before
    before = server.requests
    warm_wall, warm, warm_each = each_run(project, "each", server.base_url, width)
    warm_requests = server.requests - before
    with FakeOpenAI(latency=args.app_latency) as app:
        both, both_batch, both_each = each_run(
            project, "gathered", server.base_url, width, app=app.base_url
        )
        app_requests = app.requests
    before = server.requests
    awaited, awaited_batch, awaited_each = each_run(
        project, "awaited", server.base_url, width, awaited=True
    )
    awaited_requests = server.requests - before
    empty = startup(project)
    sdk = openai_import()
    floor = count * latency / width
    both_floor = floor + count * args.app_latency / width
    rows = [
        ("", "measured", "target", "floor"),
        ("cold (wall, pytest start-up included)", f"{cold:.2f} s", "< 4 s",
         f"{floor:.2f} s ({count} x {latency:g} / {width})"),
        ("cold (the batch alone, inside the test)", f"{cold_batch:.2f} s", "-", f"{floor:.2f} s"),
        ("warm (the batch, every judgment cached)", f"{warm:.2f} s", "< 0.5 s", "-"),
        ("warm (wall)", f"{warm_wall:.2f} s", "-", "-"),
        (f"{count} app calls at {args.app_latency * 1000:.0f} ms gathered, then judged (wall)",
         f"{both:.2f} s", "< 8 s", f"{both_floor:.2f} s"),
        ("gathered, then judged (the batch alone)", f"{both_batch:.2f} s", "-",
         f"{both_floor:.2f} s"),
        ("cold, awaited (aeach, async client; wall)", f"{awaited:.2f} s", "-", f"{floor:.2f} s"),
        ("cold, awaited (the batch alone)", f"{awaited_batch:.2f} s", "-", f"{floor:.2f} s"),
        ("pytest start-up alone (one empty test)", f"{empty:.2f} s", "-", "-"),
        ("openai's import alone (fresh interpreter)", f"{sdk:.2f} s", "-", "-"),
        ("cold floor, start-up and import added", f"{floor + empty + sdk:.2f} s", "< 4 s",
         f"{floor:.2f} + {empty:.2f} + {sdk:.2f}"),
        ("gathered floor, start-up and import added", f"{both_floor + empty + sdk:.2f} s",
         "< 8 s", f"{both_floor:.2f} + {empty:.2f} + {sdk:.2f}"),
    ]  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        print("  " + "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
    same = verdicts(cold_each) == verdicts(cold_scores) == verdicts(warm_each)
    print(f"  cold: {requests} HTTP requests (the parametrized sequential run: {cold_requests}), "
          f"max in flight {server.max_in_flight}; warm: {warm_requests}; gathered: "
          f"{app_requests} app calls; awaited: {awaited_requests}")  # fmt: skip
    print(f"  scores and verdicts equal to the parametrized sequential run's: {same} "
          f"({len(cold_each)} scores)")  # fmt: skip
    if not same or requests != cold_requests or warm_requests:
        sys.exit("the batch differs from the parametrized sequential run")
    if [s["score"] for s in both_each] != [s["score"] for s in cold_each]:
        sys.exit("the gathered run's scores differ")
    if verdicts(awaited_each) != verdicts(cold_each) or awaited_requests != cold_requests:
        sys.exit("the awaited batch differs from the parametrized sequential run")


def verdicts(scores: list[dict]) -> dict[str, tuple]:
    """What a run decided per test: score, threshold and verdict of each record."""
    return {
        s["test_id"]: (s["metric"], s["score"], s.get("threshold"), s.get("passed"))
        for s in scores
    }


SLOW_SUITE = """
import pytest

CASES = [
    ("Paris is the capital of France.", "What is the capital of France?"),
    ("Water boils at 100 degrees Celsius at sea level.", "When does water boil?"),
]

@pytest.mark.parametrize("case", CASES)
def test_coherent(case, coherence):
    coherence(*case, threshold=4)

@pytest.mark.parametrize("case", CASES)
def test_rubric(case, rubric):
    rubric(case[0], criteria="Answers the question in one sentence.", query=case[1],
           threshold=4)
"""

RAMBLE_WORDS = (
    "Furthermore, it is worth noting that the response could also be read as a broader "
    "remark on the topic, and one might add several further considerations here"
).split()


def slow_reply(rate: float, ramble: int) -> Responder:
    """Each judge reply: a verdict depending on the test, then ``ramble`` words, at ``rate``."""
    words = " ".join(RAMBLE_WORDS[i % len(RAMBLE_WORDS)] for i in range(ramble))

    def answer(request: Received) -> Reply:
        score = 3 if "Water" in request.messages[-1]["content"] else 5
        verdict = json.dumps({"score": score, "reason": "A scripted verdict."})
        return Reply(content=f"{verdict} {words}", tokens_per_second=rate)

    return answer


def slow_part(args: argparse.Namespace) -> None:
    """``--slow-stream``: four judged tests against a slow, rambling local judge."""
    rate, ramble = args.token_rate, args.ramble
    print(f"4 judged tests (2 coherence, 2 rubric), a local judge generating {rate:g} "
          f"tokens/s, each reply its verdict then {ramble} words")  # fmt: skip
    runs = [
        ("default settings", "", True),
        ("textsim_judge_max_tokens = 800", "800", True),
        ("default settings, a server that does not stream", "", False),
        ("textsim_judge_max_tokens = 800, a server that does not stream", "800", False),
    ]
    decided = []
    answer = slow_reply(rate, ramble)
    with FakeOpenAI(responder=answer) as streaming, \
            FakeOpenAI(responder=answer, streaming=False) as whole, \
            tempfile.TemporaryDirectory() as tmp:  # fmt: skip
        for number, (name, cap, streams) in enumerate(runs):
            server = streaming if streams else whole
            folder = Path(tmp) / str(number)
            folder.mkdir()
            (folder / "test_slow.py").write_text(textwrap.dedent(SLOW_SUITE))
            (folder / "pytest.ini").write_text(
                f"[pytest]\ntextsim_judge_model = bench-judge\n"
                f"textsim_judge_base_url = {server.base_url}\n"
                + (f"textsim_judge_max_tokens = {cap}\n" if cap else "")
            )
            before = server.requests
            wall, counters, scores, _ = pytest_run(folder, "run")
            requests = server.requests - before
            print(f"  {name}: {wall:6.2f} s wall for the 4 tests, {requests} HTTP requests, "
                  f"{int(counters.get('judge_tokens_out', 0))} tokens counted out")  # fmt: skip
            for record in sorted(scores, key=lambda r: r["test_id"]):
                print(f"    {record['test_id'].split('::')[-1]}: {record['metric']} "
                      f"{record['score']:g} passed={record.get('passed')}")  # fmt: skip
            decided.append(verdicts(scores))
    same = all(d == decided[0] for d in decided) and len(decided[0]) == 4
    print(f"  verdicts equal in every run: {same}")
    if not same:
        sys.exit("the slow judge's verdicts differ between the runs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per reply")
    parser.add_argument("--workers", type=int, default=8, help="xdist workers for the cold run")
    parser.add_argument("--concurrency", type=int, default=16, help="judge calls of a batch")
    parser.add_argument("--app-latency", type=float, default=0.3, help="seconds per app call")
    parser.add_argument(
        "--skip-throughput", action="store_true", help="only the pytest runs (parts 2 to 4)"
    )
    parser.add_argument("--skip-xdist", action="store_true", help="leave out part 3")
    parser.add_argument(
        "--slow-stream", action="store_true", help="only the slow local judge (4 tests)"
    )
    parser.add_argument("--token-rate", type=float, default=30.0, help="the slow judge's tokens/s")
    parser.add_argument("--ramble", type=int, default=800, help="words after each verdict")
    args = parser.parse_args()
    if args.slow_stream:
        slow_part(args)
        return

    with FakeOpenAI(latency=args.latency, responder=reply) as server:
        if not args.skip_throughput:
            print(f"judge throughput: {args.rows} rows, {args.latency * 1000:.0f} ms per reply")
            one = throughput(server, args.rows, concurrency=1)
            eight = throughput(server, args.rows, concurrency=8)
            print(f"  concurrency 1: {one:6.2f} s  ({args.rows / one:5.1f} rows/s)")
            print(f"  concurrency 8: {eight:6.2f} s  ({args.rows / eight:5.1f} rows/s)")
            print(f"  speed-up: {one / eight:.1f}x (target >= 6x), max in flight "
                  f"{server.max_in_flight}")  # fmt: skip

        with tempfile.TemporaryDirectory() as tmp:
            project = Path(tmp)
            (project / "rows.json").write_text(json.dumps(rows(args.rows)))
            (project / "test_judged.py").write_text(textwrap.dedent(SUITE))
            (project / "pytest.ini").write_text(
                f"[pytest]\ntextsim_judge_model = bench-judge\n"
                f"textsim_judge_base_url = {server.base_url}\n"
            )
            print(f"pytest suite of {args.rows} judged tests, cache in {project}/.textsim_cache")
            before = server.requests
            cold, cold_counters, cold_scores, _ = pytest_run(project, "cold")
            cold_requests = server.requests - before
            before = server.requests
            warm, warm_counters, warm_scores, _ = pytest_run(project, "warm")
            warm_requests = server.requests - before
            durations = [s["duration"] for s in warm_scores]
            per = statistics.fmean(durations) * 1000
            print(f"  cold run: {cold:6.2f} s, {cold_requests} HTTP requests, "
                  f"{cold_counters.get('judge_cache_hits', 0):g} cache hits")  # fmt: skip
            print(f"  warm run: {warm:6.2f} s, {warm_requests} HTTP requests (target 0), "
                  f"{warm_counters.get('judge_cache_hits', 0):g} cache hits")  # fmt: skip
            print(f"  per cached judgment: mean {per:.3f} ms, max {max(durations) * 1000:.3f} ms "
                  f"(target < 2 ms)")  # fmt: skip
            if args.skip_xdist:
                each_part(server, project, args, cold_scores, cold_requests)
                return
            # A cold cache of its own: every judgment is asked again.
            before, server.max_in_flight = server.requests, 0
            fast, _, fast_scores, cpu = pytest_run(
                project, "xdist", workers=args.workers, cache_dir="xdist_cache"
            )
            fast_requests = server.requests - before
            same = verdicts(fast_scores) == verdicts(cold_scores)
            print(f"  cold run with -n {args.workers}: {fast:6.2f} s wall (target < 8 s for 200 "
                  f"tests at 200 ms), {cpu:.2f} CPU s, {fast_requests} HTTP requests, max in "
                  f"flight {server.max_in_flight}; {cold / fast:.1f}x the sequential cold run",
                  )  # fmt: skip
            print(f"  scores and verdicts equal to the sequential run's: {same} "
                  f"({len(fast_scores)} scores)")  # fmt: skip
            if not same:
                sys.exit("xdist run differs from the sequential run")
            off = other_plugins()
            if off:
                lean, _, lean_scores, cpu = pytest_run(
                    project, "lean", workers=args.workers, cache_dir="lean_cache", off=off
                )
                print(f"  the same with the other installed plugins off ({', '.join(off)}): "
                      f"{lean:6.2f} s wall, {cpu:.2f} CPU s")  # fmt: skip
                if verdicts(lean_scores) != verdicts(cold_scores):
                    sys.exit("xdist run without the other plugins differs from the sequential run")
            floor = xdist_floor(project, args.rows, args.latency, args.workers)
            print(f"  floor: {args.rows} tests that only sleep {args.latency * 1000:.0f} ms, "
                  f"-n {args.workers}, no textsim, no judge, no other plugin: {floor:6.2f} s "
                  "wall")  # fmt: skip
            each_part(server, project, args, cold_scores, cold_requests)


if __name__ == "__main__":
    main()
