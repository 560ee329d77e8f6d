"""What replay costs per call, and what it saves, against the local fake OpenAI server.

Makes ``--calls`` chat completions (default 300; half of them streamed) through
the real ``openai`` client three ways: live with no recorder, live while
recording (mode ``once``, cassette written at the end), and replayed (mode
``none``, the server stopped). Prints milliseconds per call for each, the
cassette size, and checks the replayed answers equal the recorded ones.

Then the ``llm_calls`` log: ``--logged`` replayed calls (default 100) with and
without the log the fixture keeps (every call read, priced and summed into the
test's figures, as at a test's teardown), best of ``--rounds``; prints the
difference per call (the target is under 1 ms) and, apart, the one-time import of
genai-prices' table.

Run: ``.venv/bin/python benchmarks/bench_replay.py [--calls 300] [--latency 0.0] [--logged 100]``
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import openai

from pytest_textsim.calls import LLMCalls, PriceTable, Usage, figures, read
from pytest_textsim.replay import Recorder, activate, deactivate, observe
from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply


def reply(request: Received) -> Reply:
    words = " ".join(f"word{i}" for i in range(20))
    return Reply(content=f"{request.messages[-1]['content']}: {words}")


def run(base_url: str, calls: int) -> list[str]:
    client = openai.OpenAI(base_url=base_url, api_key="sk-bench-not-a-real-key", max_retries=0)
    answers = []
    for number in range(calls):
        messages: Any = [{"role": "user", "content": f"question {number}"}]
        if number % 2:
            stream = client.chat.completions.create(model="m", messages=messages, stream=True)
            answers.append("".join(c.choices[0].delta.content or "" for c in stream if c.choices))
        else:
            out = client.chat.completions.create(model="m", messages=messages)
            answers.append(out.choices[0].message.content or "")
    return answers


def timed(label: str, calls: int, action: Any) -> Any:
    started = time.perf_counter()
    result = action()
    elapsed = time.perf_counter() - started
    print(f"{label:<34} {elapsed:7.2f} s  {1000 * elapsed / calls:7.2f} ms/call")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--latency", type=float, default=0.0, help="server seconds per reply")
    parser.add_argument("--logged", type=int, default=100, help="calls of the llm_calls part")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-replay-"))
    server = FakeOpenAI(responder=reply, latency=args.latency).start()
    base_url = server.base_url
    live = timed("live, no recorder", args.calls, lambda: run(base_url, args.calls))

    recorder = Recorder(folder, "bench::test", "once")
    activate(recorder)
    recorded = timed("live while recording (once)", args.calls, lambda: run(base_url, args.calls))
    deactivate()
    timed("  writing the cassette", args.calls, lambda: recorder.finish(passed=True))
    server.stop()

    replayer = Recorder(folder, "bench::test", "none")
    activate(replayer)
    replayed = timed("replayed, server stopped (none)", args.calls,
                     lambda: run(base_url, args.calls))  # fmt: skip
    deactivate()
    (cassette,) = folder.iterdir()
    same = replayed == recorded == live
    print(f"cassette: {cassette.stat().st_size / 1024:.0f} KiB for {args.calls} calls; "
          f"replayed {replayer.replayed}, answers equal: {same}")  # fmt: skip
    logged(folder, base_url, args.logged, args.rounds)


def logged(folder: Path, base_url: str, calls: int, rounds: int) -> None:
    """Replay ``calls`` calls with and without the llm_calls log; ms per call of each."""
    prices = PriceTable()
    started = time.perf_counter()
    prices.cost("gpt-4o-mini", "openai", Usage(input=1, output=1))  # genai-prices' table
    print(f"first price lookup (imports the price table, once per run): "
          f"{time.perf_counter() - started:.2f} s")  # fmt: skip

    def one(with_log: bool) -> float:
        replayer = Recorder(folder, "bench::test", "none")
        activate(replayer)
        log = LLMCalls(lambda raw: None if (c := read(raw)) is None else prices.price(c))
        if with_log:
            observe(log.add_raw)
        started = time.perf_counter()
        run(base_url, calls)
        if with_log:
            figures(log)  # what the teardown puts on the report
        elapsed = time.perf_counter() - started
        observe(None)
        deactivate()
        assert len(log) == (calls if with_log else 0)
        return elapsed

    # Interleaved rounds, so that a busy machine slows both alike.
    pairs = [(one(False), one(True)) for _ in range(rounds)]
    plain, with_log = min(p for p, _ in pairs), min(w for _, w in pairs)
    print(f"{calls} replayed calls, replay alone:     {1000 * plain / calls:7.3f} ms/call")
    print(f"{calls} replayed calls, with llm_calls:   {1000 * with_log / calls:7.3f} ms/call")
    print(f"llm_calls overhead: {1000 * (with_log - plain) / calls:.3f} ms/call "
          f"(best of {rounds} rounds each)")  # fmt: skip


if __name__ == "__main__":
    main()
