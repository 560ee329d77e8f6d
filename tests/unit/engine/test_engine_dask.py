"""The batch function under a real dask.distributed cluster of two worker processes
gives what ``textsim score`` writes, with one worker and with two."""

from __future__ import annotations

import json
import os
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
METRICS = [
    "f1_score", "bleu_score", "gleu_score", "meteor_score", "rouge_score:rouge1",
    "rouge_score:rougeL", "chrf_score", "ter_score",
]  # fmt: skip


@pytest.fixture(scope="module")
def client():
    from dask.distributed import Client, LocalCluster

    # Worker processes, as on a real cluster: each builds its own evaluators.
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as dask_client,
    ):
        yield dask_client


def _cli(tmp_path: Path, jobs: int) -> bytes:
    from pytest_textsim.cli import main

    out = tmp_path / f"jobs{jobs}.jsonl"
    args = [a for m in METRICS for a in ("-m", m)]
    assert main(["score", str(PARITY), *args, "-o", str(out), "--jobs", str(jobs)]) in (0, 1)
    return out.read_bytes()


def test_textsim_score_and_dask_write_the_same_rows(client, tmp_path: Path) -> None:
    import dask.bag

    from pytest_textsim import score_batch

    one, two = _cli(tmp_path, 1), _cli(tmp_path, 2)
    assert one == two
    bag = dask.bag.read_text(str(PARITY), blocksize=20_000).map(json.loads)
    assert bag.npartitions > 1
    scored = bag.map_partitions(score_batch, metrics=METRICS)
    lines = scored.map(lambda row: json.dumps(row, ensure_ascii=False) + "\n").compute()
    assert "".join(lines).encode("utf-8") == one
    # Both workers scored partitions, each with evaluators it built itself.
    built = client.run(
        lambda: __import__(
            "pytest_textsim.engine.chunks", fromlist=["_"]
        ).scorer.cache_info().currsize
    )
    assert set(built.values()) <= {0, 1} and sum(built.values()) >= 1


def test_dask_dataframe(client) -> None:
    import dask.dataframe
    import pandas

    from pytest_textsim import score_batch

    frame = pandas.read_json(PARITY, lines=True, dtype=False).iloc[:120]
    parts = dask.dataframe.from_pandas(frame, npartitions=4)
    meta = score_batch(parts._meta, METRICS)
    scored = parts.map_partitions(score_batch, metrics=METRICS, meta=meta).compute()
    assert list(scored.index) == list(frame.index)
    expected = score_batch(frame, METRICS)
    # Dask may store the text columns as Arrow strings; the scores are what matter.
    added = [c for c in expected.columns if c not in frame.columns]
    assert list(scored.columns) == list(expected.columns)
    assert scored[added].to_dict("list") == expected[added].to_dict("list")
