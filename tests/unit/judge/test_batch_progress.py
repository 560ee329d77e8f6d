"""The pure parts of the batch path: the expected completion on the progress line,
and the lines of a streamed output file."""

from __future__ import annotations

import calendar

import pytest

from pytest_textsim.judge.batch import _lines, expected_completion

# 4 December 2026, 18:40:00 UTC.
CLOCK = float(calendar.timegm((2026, 12, 4, 18, 40, 0)))


@pytest.mark.parametrize(
    ("since", "now", "processed", "total", "said"),
    [
        # 20 lines in the minute since progress was first seen: 40 left take 2 minutes.
        ((100.0, 10), 160.0, 30, 70, "about 2m left, expected 18:42 UTC"),
        # 100 lines an hour, 800 left: past midnight.
        ((0.0, 100), 3600.0, 200, 1000, "about 8h 00m left, expected 02:40 UTC"),
        ((0.0, 1), 90.0, 4, 100, "about 48m left, expected 19:28 UTC"),
        ((0.0, 1), 1.0, 9, 10, "less than a minute left"),
        ((0.0, 1), 3600.0, 2, 10**6, "more than 24h left"),
        # No rate yet, or nothing left: nothing said.
        (None, 50.0, 5, 10, ""),
        ((50.0, 5), 50.0, 5, 10, ""),
        ((10.0, 5), 70.0, 5, 10, ""),
        ((10.0, 5), 5.0, 7, 10, ""),  # a clock that went backwards
        ((10.0, 8), 70.0, 6, 10, ""),  # counts that went backwards
        ((10.0, 5), 70.0, 10, 10, ""),
        ((10.0, 5), 70.0, 12, 10, ""),
        ((10.0, 5), 70.0, 6, 0, ""),
    ],
)
def test_the_expected_completion_comes_from_the_rate_seen_since_progress_began(
    since: tuple[float, int] | None, now: float, processed: int, total: int, said: str
) -> None:
    assert expected_completion(since, now, processed, total, CLOCK) == said


def test_a_streamed_file_splits_at_newlines_only_across_any_chunks() -> None:
    data = '{"a": "x\u2028y"}\r\n\n{"b": "é"}\n{"c"'.encode()
    for size in (1, 2, 5, len(data)):
        chunks = [data[i : i + size] for i in range(0, len(data), size)]
        assert list(_lines(chunks)) == ['{"a": "x\u2028y"}\r', "", '{"b": "é"}', '{"c"']


def test_ctrl_c_held_during_a_block_reaches_the_handler_set_before_once_it_ends() -> None:
    import os
    import signal
    import threading

    from pytest_textsim.judge.batch_guard import sigint_held

    seen: list[str] = []
    previous = signal.signal(signal.SIGINT, lambda number, frame: seen.append("handled"))
    try:
        with sigint_held():
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)
            seen.append("block ended")
        assert seen == ["block ended", "handled"]  # delivered once, after the block
        handler = signal.getsignal(signal.SIGINT)

        # Outside the main thread (where Python runs no handler) nothing is changed.
        def in_a_thread() -> None:
            try:
                with sigint_held():
                    seen.append(str(signal.getsignal(signal.SIGINT) is handler))
            except ValueError as exc:  # signal.signal outside the main thread
                seen.append(str(exc))

        thread = threading.Thread(target=in_a_thread)
        thread.start()
        thread.join()
        assert seen[-1] == "True" and signal.getsignal(signal.SIGINT) is handler
    finally:
        signal.signal(signal.SIGINT, previous)
