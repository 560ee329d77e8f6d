"""Usable cores: affinity mask, cgroup v1 and v2 CPU quotas, the cap."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_textsim.engine import cores


def _tree(tmp_path: Path, files: dict[str, str], proc: str) -> tuple[Path, Path]:
    root = tmp_path / "cgroup"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    root.mkdir(exist_ok=True)
    proc_file = tmp_path / "proc_cgroup"
    proc_file.write_text(proc)
    return root, proc_file


@pytest.mark.parametrize(
    ("files", "proc", "expected"),
    [
        # cgroup v2: "max" is no quota; 150000/100000 is 1.5 cores.
        ({"user.slice/app/cpu.max": "max 100000\n"}, "0::/user.slice/app\n", None),
        ({"user.slice/app/cpu.max": "150000 100000\n"}, "0::/user.slice/app\n", 1.5),
        # A parent group's quota limits its children too; the tightest wins.
        (
            {"a/cpu.max": "200000 100000", "a/b/cpu.max": "300000 100000"},
            "0::/a/b\n",
            2.0,
        ),
        # Inside a container the group is the mount root itself.
        ({"cpu.max": "50000 100000"}, "0::/\n", 0.5),
        # cgroup v1: cfs quota and period; -1 is no quota.
        (
            {"cpu,cpuacct/docker/x/cpu.cfs_quota_us": "300000",
             "cpu,cpuacct/docker/x/cpu.cfs_period_us": "100000"},
            "4:cpu,cpuacct:/docker/x\n2:memory:/docker/x\n",
            3.0,
        ),
        (
            {"cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000"},
            "1:cpu:/\n",
            None,
        ),
        ({}, "", None),  # no cgroup file system at all
    ],
)  # fmt: skip
def test_quota_cores(tmp_path: Path, files: dict[str, str], proc: str, expected) -> None:
    root, proc_file = _tree(tmp_path, files, proc)
    assert cores.quota_cores(root, proc_file) == expected


def test_usable_cores_takes_the_smallest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    monkeypatch.setattr(cores, "quota_cores", lambda: None)
    assert cores.usable_cores() == 8  # the default cap
    assert cores.usable_cores(limit=32) == 16
    monkeypatch.setattr(cores, "quota_cores", lambda: 1.5)
    assert cores.usable_cores() == 2  # a quota of 1.5 cores keeps 2 busy
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3}, raising=False)
    assert cores.usable_cores() == 1


def test_affinity_of_this_process() -> None:
    if hasattr(os, "sched_getaffinity"):
        assert cores.affinity_cores() == len(os.sched_getaffinity(0))
    assert 1 <= cores.usable_cores() <= cores.DEFAULT_LIMIT
