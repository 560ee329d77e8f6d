"""The streaming loop of ``textsim score``: read, score and write rows as they go.

Lines are read in chunks; each chunk is scored in this process or by a worker
(:mod:`.pool`), and written as soon as every earlier chunk is, so the output is
in input order and memory does not grow with the number of rows. Judge metrics
are called here, in the parent, through its one judge client and concurrency
limit, after the worker has scored the chunk's algorithmic metrics.

Writes are whole chunks of whole lines, flushed with Ctrl-C held back, so an
interrupted run leaves a file that ends at a line break.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import IO, Any, Callable

from ..evaluator import scoring_case
from .chunks import ChunkResult, Plan, Row, RowError, output_line, score_chunk, scorer
from .plan import Choice, RowOptions, UsageError
from .tally import CorpusPart, Globs, Tally

#: Input lines per chunk: large enough that a worker's round trip is noise,
#: small enough that 2 x jobs chunks in flight are a few hundred kilobytes.
CHUNK_LINES = 250
#: Below this many rows the workers would cost more to start than they save.
IN_PROCESS_BELOW = 1000


class Source:
    """The input's lines, decoded one by one; knows how far into a file it is."""

    def __init__(self, path: str, display: str, stream: IO[str] | None = None) -> None:
        self.display = display
        self.size = 0
        self.read = 0
        self.error: RowError | None = None  # set when a line cannot be decoded: reading stops
        self._text: IO[str] | None = None
        self._binary: IO[bytes] | None = None
        self._owned = False  # the file is ours to close (standard input is not)
        self._reader: Iterator[str] | None = None
        self._head: list[str] = []  # lines read ahead by peek(), given again by lines()
        if stream is None and path == "-":
            # Standard input is read as bytes and decoded strictly, as a file is: its
            # text layer may turn bad bytes into lone surrogates (surrogateescape)
            # that would then be scored as text.
            binary = getattr(sys.stdin, "buffer", None)
            if binary is None:
                stream = sys.stdin
            else:
                self._binary = binary
                return
        if stream is not None:
            self._text = stream
            return
        try:
            self._binary = open(path, "rb")  # noqa: SIM115 - closed by close()
            self._owned = True
        except FileNotFoundError:
            raise UsageError(f"{display}: no such file") from None
        except OSError as exc:
            raise UsageError(f"{display}: cannot read it ({exc.strerror})") from None
        try:
            self.size = os.fstat(self._binary.fileno()).st_size
        except OSError:
            self.size = 0

    @property
    def fraction(self) -> float | None:
        """How much of a regular file was read (None for a pipe)."""
        return min(1.0, self.read / self.size) if self.size else None

    def peek(self, count: int) -> list[str]:
        """The first ``count`` lines (fewer when the input is shorter), read now;
        :meth:`lines` still gives them."""
        if self._reader is None:
            self._reader = self._read()
        while len(self._head) < count:
            line = next(self._reader, None)
            if line is None:
                break
            self._head.append(line)
        return self._head[:count]

    def lines(self) -> Iterator[str]:
        if self._reader is None:
            self._reader = self._read()
        head, self._head = self._head, []
        yield from head
        yield from self._reader

    def _read(self) -> Iterator[str]:
        if self._text is not None:
            yield from self._text
            return
        assert self._binary is not None
        for number, raw in enumerate(self._binary, 1):
            self.read += len(raw)
            try:
                yield raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                # Decoded line by line, so a bad byte is reported on its own line.
                what = "the file" if self._owned else "the input"
                self.error = RowError(
                    self.display,
                    number,
                    f"not UTF-8 text ({exc.reason} at byte {exc.start + 1}); "
                    f"convert {what} to UTF-8",
                )
                return

    def close(self) -> None:
        if self._binary is not None and self._owned:
            self._binary.close()


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM (``kill``, a job scheduler's time limit) stops the run as Ctrl-C does.

    Left at its default, SIGTERM ends this process at once and its workers
    (children of the fork server) outlive it; as an exception it goes through
    the same clean-up: workers ended, output ending with a whole line.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def _interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C (and SIGTERM) back while a chunk is written, then raise it:
    no half-written line."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    previous = [signal.signal(s, lambda signum, frame: caught.append(signum)) for s in held]
    try:
        yield
    finally:
        for signum, handler in zip(held, previous):
            signal.signal(signum, handler)
    if caught:
        raise KeyboardInterrupt


class Sink:
    """Where output lines go: a file, standard output, or nowhere (no ``-o``)."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self._handle: IO[str] | None = None
        if path and path != "-":
            try:
                self._handle = open(path, "w", encoding="utf-8")  # noqa: SIM115 - close()
            except OSError as exc:
                raise UsageError(f"-o {path}: cannot write it ({exc.strerror})") from None
        elif path == "-":
            self._handle = sys.stdout

    def write(self, text: str) -> None:
        if self._handle is None or not text:
            return
        with _interrupts_held():
            self._handle.write(text)
            self._handle.flush()

    def close(self) -> None:
        if self._handle is not None and self._handle is not sys.stdout:
            self._handle.close()


class Progress:
    """A one-line progress display on a terminal: rows, rows per second, ETA."""

    def __init__(self, stream: IO[str], enabled: bool, source: Source | None = None) -> None:
        self.stream, self.enabled, self.source = stream, enabled, source
        self.done = 0
        self.start = time.monotonic()
        self._shown = 0.0
        self._lock = threading.Lock()  # judge rows finish on several threads

    @staticmethod
    def wanted(stream: IO[str], forced: bool | None) -> bool:
        """Shown when forced, else on a terminal that is not a CI log."""
        if forced is not None:
            return forced
        # CI systems set CI=true; their logs are not terminals but some fake one.
        interactive = getattr(stream, "isatty", lambda: False)()
        return bool(interactive) and not os.environ.get("CI") and os.environ.get("TERM") != "dumb"

    def advance(self, rows: int = 1) -> None:
        with self._lock:
            self.done += rows
            now = time.monotonic()
            if self.enabled and now - self._shown >= 0.1:
                self._shown = now
                self.stream.write("\r" + self.line(now) + "\x1b[K")
                self.stream.flush()

    def line(self, now: float) -> str:
        """``scoring [####------] 41% 12,000 rows 2,310 rows/s ETA 0:07``."""
        elapsed = max(now - self.start, 1e-9)
        rate = self.done / elapsed
        fraction = self.source.fraction if self.source is not None else None
        text = f"scoring {self.done:,} rows {rate:,.0f} rows/s"
        if fraction:
            width = 20
            bar = "#" * int(width * fraction) + "-" * (width - int(width * fraction))
            left = elapsed * (1 - fraction) / fraction
            minutes, seconds = divmod(int(left + 0.5), 60)
            text = f"scoring [{bar}] {fraction:.0%} " + text[len("scoring ") :]
            text += f" ETA {minutes}:{seconds:02d}"
        return text

    def clear(self) -> None:
        """Take the line away (before an error line or the summary)."""
        if self.enabled and self.done:
            with self._lock:
                self.stream.write("\r\x1b[K")
                self.stream.flush()
                self._shown = 0.0


class JudgeStep:
    """The judge metrics of a run, called in the parent on rows a chunk scored."""

    def __init__(
        self,
        choices: Sequence[Choice],
        evaluators: Sequence[Callable[..., dict[str, Any]] | None],
        concurrency: int,
        globs: Sequence[Globs],
        corpus: Sequence[tuple[str, str, Globs, tuple[int, ...]]] = (),
        sentence_keys: Sequence[str] = (),
        display: str = "<input>",
    ) -> None:
        """``corpus``: ``(key, name, globs, judge indexes)`` of corpus gates only judge
        metrics feed: a row counts when one of those judge calls succeeded.
        ``sentence_keys``: those whose per-pair statistics are kept for an interval.
        ``display``: how messages name the input."""
        self.display = display
        self.choices = choices
        self.judges = [(i, c, ev) for i, (c, ev) in enumerate(zip(choices, evaluators)) if ev]
        self.globs = globs
        self.corpus = corpus
        self.sentence_keys = frozenset(sentence_keys)
        self.threads = ThreadPoolExecutor(max_workers=max(1, concurrency))

    def close(self) -> None:
        self.threads.shutdown(wait=True, cancel_futures=True)

    def _judge(self, row: Row, failed: dict[int, Exception]) -> list[Any]:
        outputs: list[Any] = list(row.outputs)
        for index, choice, evaluator in self.judges:
            if index in failed:
                outputs[index] = failed[index]
                continue
            wanted = choice.inputs + choice.optional_inputs
            kwargs = {k: v for k, v in row.texts.items() if k in wanted}
            client = getattr(evaluator, "judge", None)
            if client is not None and hasattr(client, "reachability"):
                client.caller = row.where  # named if the judge is found down on this row
            if isinstance(evaluator, RowOptions):
                kwargs.update(row.options)
            try:
                with scoring_case(row.texts):
                    outputs[index] = evaluator(**kwargs)
            except Exception as exc:  # reported per row, the run goes on
                outputs[index] = exc
        return outputs

    def _prepare(self, rows: Sequence[Row]) -> dict[int, Exception]:
        """Embeddings: the chunk's texts in batches now (one request per batch), so each
        row's call is a cache hit. A failure is the same for every row: reported per row."""
        failed: dict[int, Exception] = {}
        for index, _, evaluator in self.judges:
            prepare = getattr(evaluator, "prepare", None)
            if callable(prepare) and rows:
                try:
                    prepare([row.texts for row in rows])
                except Exception as exc:
                    failed[index] = exc
        return failed

    def finish(
        self, result: ChunkResult, tally: Tally, errors: list[RowError], progress: Progress
    ) -> str:
        """Judge every row of ``result``, count the scores, and give the output lines;
        a failed judge call adds to ``errors``."""
        from ..judge.errors import JudgeUnreachable
        from ..nlp.sacre import CorpusStats

        base = tally.rows - result.tally.rows  # the chunk's tally is merged already
        lines: list[str] = []
        pairs: dict[str, tuple[list[str], list[str]]] = {c[0]: ([], []) for c in self.corpus}
        failed = self._prepare(result.rows)
        judged = self.threads.map(lambda row: self._judge(row, failed), result.rows)
        for local, (row, outputs) in enumerate(zip(result.rows, judged)):
            for index, choice, _ in self.judges:
                output = outputs[index]
                if isinstance(output, Exception):
                    text = f"{choice.shown}: {type(output).__name__}: {output}"
                    # Calls not made while the judge is down: one outage, though
                    # each message counts the calls not attempted so far.
                    same = (
                        (choice.shown, JudgeUnreachable, output.host)
                        if isinstance(output, JudgeUnreachable)
                        else None
                    )
                    errors.append(RowError(self.display, row.line, text, same))
                    continue
                tally.add(
                    index, output, base + local, row.name, self.globs, judge=True, test=row.test
                )
            for key, _, globs, indexes in self.corpus:
                if "ground_truth" not in row.texts or "response" not in row.texts:
                    continue
                if not any(isinstance(outputs[i], dict) for i in indexes):
                    continue
                if globs and not all(_match(row.name, g) for g in globs):
                    continue
                pairs[key][0].append(row.texts["response"])
                pairs[key][1].append(row.texts["ground_truth"])
            lines.append(output_line(row.data, self.choices, outputs))
            progress.advance()
        for key, name, _, _ in self.corpus:
            stats = CorpusStats(name, sentences=key in self.sentence_keys)
            stats.add(*pairs[key])
            tally.corpus.setdefault(key, CorpusPart()).add(
                stats.total, stats.pairs, stats.sentences, stats.num_refs
            )
        return "".join(lines)


def _match(name: str, pattern: str) -> bool:
    from fnmatch import fnmatchcase

    return fnmatchcase(name, pattern)


def _chunks(head: list[str], rest: Iterator[str], size: int) -> Iterator[tuple[int, list[str]]]:
    """``(first line number, lines)`` of the input, ``size`` lines at a time."""
    number = 1
    buffer = head
    while len(buffer) >= size:
        yield number, buffer[:size]
        number += size
        buffer = buffer[size:]
    for line in rest:
        buffer.append(line)
        if len(buffer) == size:
            yield number, buffer
            number += size
            buffer = []
    if buffer:
        yield number, buffer


def run(
    plan: Plan,
    source: Source,
    sink: Sink,
    *,
    jobs: int,
    errors: Callable[[RowError], None],
    progress: Progress,
    judge: JudgeStep | None = None,
    in_process_below: int = IN_PROCESS_BELOW,
    start_method: str | None = None,
    chunk_lines: int = CHUNK_LINES,
    on_workers: Callable[[list[int]], None] | None = None,
) -> Tally:
    """Score every line of ``source`` into ``sink``; report each bad line through ``errors``,
    in line order.

    ``jobs`` worker processes score the chunks (in this process when 1, or when
    the input has fewer than ``in_process_below`` lines).
    """
    tally = Tally(kept=[] if plan.keep_scores else None)
    lines = source.lines()
    head: list[str] = []
    if jobs > 1 and in_process_below:
        for line in lines:
            head.append(line)
            if len(head) >= in_process_below:
                break
        if len(head) < in_process_below:
            jobs = 1
    tasks = ((plan, start, chunk) for start, chunk in _chunks(head, lines, chunk_lines))

    def consume(results: Iterator[ChunkResult]) -> None:
        for result in results:
            found = list(result.errors)
            tally.merge(result.tally)
            if judge is not None:
                text = judge.finish(result, tally, found, progress)
                found.sort(key=lambda error: error.line)  # stable: a row's own order kept
            else:
                text = result.text
                progress.advance(result.tally.rows)
            for error in found:
                errors(error)
            sink.write(text)

    if jobs <= 1:
        scorer(plan)  # build the evaluators once, before the first chunk
        consume(score_chunk(*task) for task in tasks)
    else:
        from .pool import Workers

        with _terminate_as_interrupt(), Workers(jobs, start_method) as workers:
            results = workers.ordered_map(score_chunk, tasks)
            if on_workers is not None:
                first = next(results, None)
                on_workers(workers.pids())
                if first is not None:
                    consume(iter([first]))
            consume(results)
    if source.error:
        errors(source.error)
    return tally
