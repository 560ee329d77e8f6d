"""``textsim score`` on large generated inputs: rows per second, workers, peak memory.

For each row count (default 50,000 and 200,000) it generates rows in which no
text repeats (``gen_rows.py``), then runs the command a user runs::

    textsim score ROWS.jsonl -m f1_score -m bleu_score -m gleu_score -m meteor_score \\
        -m rouge_score:rouge1 ... -m rouge_score:rougeL -o OUT.jsonl --jobs N

with ``--jobs 1`` and ``--jobs 2``, and samples the resident memory of the
command and all its child processes (workers, the fork server) every 20 ms.
It prints rows/s, the peak of the summed RSS, the ``--jobs 2`` speed-up, how far
apart the peaks of the two row counts are, and checks that both outputs are the
same bytes.

``--azure-python PY`` (an interpreter with azure-ai-evaluation, see
``bench_nlp.py``) also scores the first ``--azure-rows`` rows of the same file
with azure-ai-evaluation's ten evaluators the parity benchmark's way (a fresh
process, import + first pass) and prints the throughput ratio.

    NLTK_DATA=../shared/nltk_data .venv/bin/python benchmarks/bench_stream.py
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
METRICS = ["f1_score", "bleu_score", "gleu_score", "meteor_score"] + [
    f"rouge_score:{t}" for t in ("rouge1", "rouge2", "rouge3", "rouge4", "rouge5", "rougeL")
]


def tree_rss(root: int) -> int:
    """Resident bytes of ``root`` and every descendant, from /proc."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        pid, ppid = int(entry), int(fields[1])
        children.setdefault(ppid, []).append(pid)
        rss[pid] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total


def run(rows: Path, out: Path, jobs: int) -> tuple[float, int]:
    """Seconds, and the peak of the summed RSS in bytes."""
    command = [str(Path(sys.executable).with_name("textsim")), "score", str(rows)]
    for metric in METRICS:
        command += ["-m", metric]
    command += ["-o", str(out), "--jobs", str(jobs), "--no-progress"]
    peak = 0
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_rss(proc.pid))
            done.wait(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    _, err = proc.communicate()
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    if proc.returncode != 0:
        sys.exit(f"textsim score failed ({proc.returncode}):\n{err.decode()[-2000:]}")
    return seconds, peak


def azure_rate(python: str, nltk_data: str | None, rows: Path, count: int) -> float:
    """azure-ai-evaluation's rows/s on the first ``count`` rows: import + first pass."""
    subset = Path(tempfile.mkdtemp()) / "azure.jsonl"
    with rows.open(encoding="utf-8") as src, subset.open("w", encoding="utf-8") as dst:
        for _, line in zip(range(count), src):
            dst.write(line)
    env = dict(os.environ, **({"NLTK_DATA": nltk_data} if nltk_data else {}))
    proc = subprocess.run(
        [python, str(HERE / "bench_nlp.py"), "--worker", "azure", "--corpus", str(subset)],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    result = json.loads(proc.stdout)
    return count / (result["import"] + result["cold"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[50_000, 200_000])
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--azure-python", help="interpreter with azure-ai-evaluation")
    parser.add_argument("--azure-nltk-data", help="NLTK_DATA for the azure-ai-evaluation run")
    parser.add_argument("--azure-rows", type=int, default=2000)
    parser.add_argument("--keep", type=Path, help="folder for the generated files (kept)")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="textsim-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"{len(METRICS)} metrics: {' '.join(METRICS)}")
    print(f"cores: {os.cpu_count()}, load average before: {os.getloadavg()}")
    peaks: dict[int, int] = {}
    rates: dict[tuple[int, int], float] = {}
    for count in args.rows:
        rows = folder / f"rows{count}.jsonl"
        if not rows.exists():
            subprocess.run(
                [sys.executable, str(HERE / "gen_rows.py"), str(count), "-o", str(rows)],
                check=True,
            )
        outputs = []
        for jobs in args.jobs:
            out = folder / f"out{count}-j{jobs}.jsonl"
            seconds, peak = run(rows, out, jobs)
            rates[(count, jobs)] = count / seconds
            peaks[count] = max(peaks.get(count, 0), peak)
            outputs.append(out)
            print(
                f"{count:>8} rows --jobs {jobs}: {seconds:7.1f} s  {count / seconds:7.0f} rows/s  "
                f"peak RSS (parent + workers) {peak / 2**20:6.1f} MB  "
                f"load average {os.getloadavg()[0]:.2f}"
            )
        same = len({out.read_bytes() for out in outputs}) == 1
        print(f"{count:>8} rows: outputs of --jobs {args.jobs} identical: {same}")
        if not same:
            return 1
        for out in outputs:
            out.unlink()
    for count in args.rows:
        if (count, 1) in rates and (count, 2) in rates:
            ratio = rates[(count, 2)] / rates[(count, 1)]
            print(f"{count:>8} rows: --jobs 2 / --jobs 1 = {ratio:.2f}x")
    if len(peaks) >= 2:
        low, high = min(peaks.values()), max(peaks.values())
        apart = 100 * (high - low) / low
        print(f"peak RSS: {low / 2**20:.1f} to {high / 2**20:.1f} MB, {apart:.1f}% apart")
    if args.azure_python:
        count = max(args.rows)
        theirs = azure_rate(
            args.azure_python, args.azure_nltk_data, folder / f"rows{count}.jsonl", args.azure_rows
        )
        best = max(rates.values())
        print(
            f"azure-ai-evaluation: {theirs:.1f} rows/s on the first {args.azure_rows} rows "
            f"(import + first pass); textsim score's best {best:.0f} rows/s is {best / theirs:.1f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
