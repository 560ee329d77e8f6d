"""``textsim_require_calibration = 0.6``: trust judge scores only from a calibrated judge.

At the end of the run (on the controller) each judge score's metric, model,
endpoint (host and path) and prompt version are looked up among the calibrations that
``textsim calibrate`` stored in the judge cache. A score without one, or whose
weighted kappa is below the requirement, is marked ``uncalibrated`` (the JSON
report says why) and listed in ``textsim calibration``; with
``textsim_require_calibration_strict = true`` the run fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..formatting import plural

if TYPE_CHECKING:
    from ..records import ScoreRecord
    from ..summary import Line
    from .session import TextsimSession


class CalibrationPlugin:
    """Registered in ``pytest_configure``: when a calibration is required, the
    controller checks the judge scores once all are in (``session.on_finish``)."""

    name = "textsim-calibration"

    def __init__(self, session: TextsimSession) -> None:
        self.found: list[str] = []  # the lines of ``textsim calibration``
        if session.is_worker or session.resolver.get("require_calibration") is None:
            return
        session.on_finish(lambda s: self.found.extend(_check(s)))
        session.add_section("textsim calibration", lambda: _lines(self.found))


def _check(session: TextsimSession) -> Iterator[str]:
    from ..errors import ConfigError
    from ..judge.errors import JudgeError
    from ..judge.wiring import run_judge

    needed = float(session.resolver.get("require_calibration"))
    judged = [r for r in session.records if "prompt_version" in r.params and "model" in r.params]
    if not judged:
        return
    try:
        client = run_judge(session.resolver).client
    except (JudgeError, ConfigError) as exc:
        why = f"the judge's calibration cannot be looked up: {exc}"
        for record in judged:
            record.uncalibrated = why
        yield why
        return
    groups: dict[tuple[str, str, str], list[ScoreRecord]] = {}
    for record in judged:
        params = record.params
        key = (record.metric_name, str(params["model"]), str(params["prompt_version"]))
        groups.setdefault(key, []).append(record)
    for (metric, model, prompt), records in groups.items():
        from ..judge.cache.stores import calibrations_of

        stored, store = None, calibrations_of(client.cache)
        if store is not None:
            stored = store.calibration(metric, client.spec.endpoint_key, model, prompt)
        where = f"{metric} (judge {model} at {client.spec.endpoint_key}, prompt {prompt})"
        kappa = None if stored is None else stored.get("kappa")
        if stored is None:
            why = "no stored calibration"
        elif kappa is None:
            why = f"its calibration gave no kappa ({stored.get('kappa_why', '')})"
        elif kappa < needed:
            why = f"calibrated kappa {kappa:.3f} is below {needed:g}"
        else:
            continue
        for record in records:
            record.uncalibrated = why
        count = plural(len(records), "score")
        yield (
            f"{where}: {count} uncalibrated, {why}; measure it with "
            f"textsim calibrate LABELS.jsonl --metric {metric}"
        )
    if session.resolver.get("require_calibration_strict"):
        bad = sum(1 for r in judged if r.uncalibrated)
        if bad:
            source = session.resolver.resolve("require_calibration").source
            session.fail(
                f"{plural(bad, 'judge score')} uncalibrated (textsim_require_calibration "
                f"{needed:g} from {source}, textsim_require_calibration_strict)"
            )


def _lines(found: list[str]) -> Iterator[Line]:
    for line in found:
        yield line, {"yellow": True}
