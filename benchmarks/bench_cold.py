"""The cold figure of issue 36: one judged test, cold, in a fresh process, against its floor.

One ``similarity.each`` test judging ``--rows`` cases (default 200) against the
local fake OpenAI server answering in ``--latency`` seconds (default 0.2),
``--concurrency`` calls in flight (default 16), as part 4 of ``bench_judge.py``
runs it cold; ``--repeat`` times (default 3), each in a fresh folder with an
empty cache. The floor is measured again beside each run, since the load of a
shared machine moves it too: pytest's start-up (one empty test, textsim on) and
openai's import (a fresh interpreter's ``import openai`` less a bare one), each
the quickest of three, plus rows x latency / concurrency. Per run: the load
average before it, the wall time, the CPU seconds of the pytest process (user
and system), the ratio of the wall time to the floor (target: at most 1.25x),
the CPU seconds of the floor's runs beside the run's (load moves them less),
and where the time went: when the first request arrived at the server, when
the last reply left it (its arrival plus the latency), the exit after that,
and the batch as timed inside the test.

Then the same requests sent by a bare client (``http.client``, a thread per
call in flight, no SDK, no judge): what the stand-in server and the HTTP
exchange cost over rows x latency / concurrency, whoever sends the requests.

Run: ``NLTK_DATA=../shared/nltk_data .venv/bin/python benchmarks/bench_cold.py``
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from bench_judge import KEY, children_cpu, each_run, openai_import, reply, rows, startup

from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply


def load_average() -> str:
    """The machine's load average over the last minute."""
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


def bare_batch(server: FakeOpenAI, count: int, width: int) -> float:
    """Wall seconds for ``count`` chat requests to ``server``, ``width`` at a time, sent
    by ``http.client`` from one thread per call in flight: no SDK, no judge."""
    import http.client
    import threading

    body = json.dumps({"model": "bench-judge", "max_tokens": 300, "messages": [
        {"role": "system", "content": "Rate the similarity."},
        {"role": "user", "content": rows(1)[0]["response"]}]}).encode()  # fmt: skip
    headers = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
    left = iter(range(count))
    lock = threading.Lock()

    def sender() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", server.port)
        while True:
            with lock:
                if next(left, None) is None:
                    break
            connection.request("POST", "/v1/chat/completions", body, headers)
            json.loads(connection.getresponse().read())
        connection.close()

    threads = [threading.Thread(target=sender) for _ in range(width)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started


def cold_part(args: argparse.Namespace) -> None:
    """The cold batch in one test, ``--repeat`` times, each beside its floor."""
    count, latency, width = args.rows, args.latency, args.concurrency
    batch_floor = count * latency / width
    print(f"one test judging {count} cases (similarity.each), {latency * 1000:.0f} ms per "
          f"reply, concurrency {width}, one process, no xdist, cold; floor = pytest start-up "
          f"+ openai's import + {batch_floor:.2f} s ({count} x {latency:g} / {width})")  # fmt: skip
    arrived: list[float] = []

    def answer(request: Received) -> Reply:
        arrived.append(time.perf_counter())
        return reply(request)

    ratios = []
    with FakeOpenAI(latency=latency, responder=answer) as server, \
            tempfile.TemporaryDirectory() as tmp:  # fmt: skip
        project = Path(tmp)
        (project / "rows.json").write_text(json.dumps(rows(count)))
        for run in range(args.repeat):
            load, cpu = load_average(), children_cpu()
            arrived.clear()
            server.max_in_flight = 0
            started = time.perf_counter()
            wall, batch, _ = each_run(project, f"cold{run}", server.base_url, width)
            cpu = children_cpu() - cpu
            first, last = min(arrived) - started, max(arrived) - started + latency
            spent = children_cpu()
            empty = min(startup(project) for _ in range(3))
            spent, empty_cpu = children_cpu(), (children_cpu() - spent) / 3
            sdk = openai_import()  # three imports and three bare starts
            sdk_cpu = (children_cpu() - spent) / 3
            floor = batch_floor + empty + sdk
            ratios.append(wall / floor)
            print(f"  run {run + 1}: load {load}, {wall:.2f} s wall, {cpu:.2f} CPU s; floor "
                  f"{floor:.2f} s ({empty:.2f} start-up + {sdk:.2f} import + {batch_floor:.2f}): "
                  f"{wall / floor:.2f}x (target <= 1.25x)")  # fmt: skip
            print(f"    CPU: {cpu:.2f} s against {empty_cpu:.2f} s for the start-up and "
                  f"{sdk_cpu:.2f} s for openai's import (with a bare interpreter): "
                  f"{cpu - empty_cpu - sdk_cpu:.2f} s for the rest")  # fmt: skip
            print(f"    first request at {first:.2f} s, last reply at {last:.2f} s (the "
                  f"requests took {last - first:.2f} s), exit {wall - last:.2f} s after it; "
                  f"batch in the test {batch:.2f} s; {len(arrived)} requests, max in flight "
                  f"{server.max_in_flight}")  # fmt: skip
        bare = bare_batch(server, count, width)
    print(f"  the same {count} requests from a bare client (http.client, {width} threads): "
          f"{bare:.2f} s against {batch_floor:.2f} s")  # fmt: skip
    print(f"  ratio to the floor: {', '.join(f'{r:.2f}x' for r in ratios)}; median "
          f"{statistics.median(ratios):.2f}x (target <= 1.25x)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per reply")
    parser.add_argument("--concurrency", type=int, default=16, help="judge calls in flight")
    parser.add_argument("--repeat", type=int, default=3, help="cold runs")
    cold_part(parser.parse_args())


if __name__ == "__main__":
    main()
