"""How many CPU cores this process may really use (no pytest, nothing heavy).

``os.cpu_count()`` counts the machine's cores. A process pinned to some of them
(``taskset``, a batch scheduler) or run in a container with a CPU quota
(``docker --cpus=2``, a Kubernetes limit) gets fewer: starting a worker per
machine core there only adds processes that wait for their turn. So the count
is the smallest of the affinity mask, the cgroup CPU quota (v2 ``cpu.max``, v1
``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``, rounded up) and ``limit``.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

#: ``textsim score`` never starts more workers than this by default: past it the
#: parent, which reads and writes every row, becomes the bottleneck.
DEFAULT_LIMIT = 8


def affinity_cores() -> int:
    """Cores in this process's affinity mask (``os.cpu_count()`` where there is none)."""
    getaffinity = getattr(os, "sched_getaffinity", None)
    if getaffinity is not None:
        try:
            return max(1, len(getaffinity(0)))
        except OSError:
            pass
    return max(1, os.cpu_count() or 1)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None


def _own_cgroup_dirs(root: Path, proc_cgroup: Path) -> list[Path]:
    """The cgroup folders of this process, innermost first, then the mount root.

    ``/proc/self/cgroup`` names them (``0::/user.slice/...`` for v2,
    ``4:cpu,cpuacct:/docker/abc`` for v1). Inside a container the mount root is
    the container's own group, so it is checked too.
    """
    dirs: list[Path] = []
    text = _read(proc_cgroup) or ""
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, group = parts
        names = controllers.split(",") if controllers else []
        if controllers and "cpu" not in names:
            continue
        base = root if not controllers else root / controllers
        if not base.is_dir() and controllers:
            # v1 mounts the cpu controller as cpu,cpuacct or cpu (with a link).
            base = root / "cpu"
        group_path = base / group.lstrip("/")
        # Walk up: a quota set on a parent group limits this one as well.
        here = group_path
        while True:
            dirs.append(here)
            if here == base or base not in here.parents:
                break
            here = here.parent
    dirs.append(root)
    dirs.append(root / "cpu")
    dirs.append(root / "cpu,cpuacct")
    return list(dict.fromkeys(dirs))  # each folder once, in order


def quota_cores(
    root: str | Path = "/sys/fs/cgroup", proc_cgroup: str | Path = "/proc/self/cgroup"
) -> float | None:
    """The tightest cgroup CPU quota over this process's groups, in cores; ``None``: no quota."""
    best: float | None = None
    for folder in _own_cgroup_dirs(Path(root), Path(proc_cgroup)):
        quota: float | None = None
        v2 = _read(folder / "cpu.max")
        if v2 is not None:
            fields = v2.split()
            if len(fields) == 2 and fields[0] != "max":
                try:
                    quota = int(fields[0]) / int(fields[1])
                except (ValueError, ZeroDivisionError):
                    quota = None
        else:
            raw_quota = _read(folder / "cpu.cfs_quota_us")
            raw_period = _read(folder / "cpu.cfs_period_us")
            if raw_quota is not None and raw_period is not None:
                try:
                    q, p = int(raw_quota), int(raw_period)
                except ValueError:
                    q, p = -1, 0
                if q > 0 and p > 0:
                    quota = q / p
        if quota is not None and quota > 0 and (best is None or quota < best):
            best = quota
    return best


def usable_cores(limit: int = DEFAULT_LIMIT) -> int:
    """Cores this process can use: affinity mask, cgroup quota (rounded up), at most ``limit``.

    >>> 1 <= usable_cores() <= DEFAULT_LIMIT
    True
    """
    cores = affinity_cores()
    quota = quota_cores()
    if quota is not None:
        cores = min(cores, max(1, math.ceil(quota)))
    return max(1, min(cores, limit))
